#!/usr/bin/env perl
# The encoder side of libxmbp is freestanding (doc/device.md): each .c of
# XMBP_FREESTANDING in Makefile.am compiles as C99 with -ffreestanding,
# from the source tree alone (no config.h, no build tree), every warning
# an error, at -O0, -O2 and -Os; linked together (-nostdlib -r) the
# objects need nothing but memcpy and memset and define every function
# of codec/xmbpenc.h.  Each header compiles on its own the same way.  A
# control file calling malloc shows that the check sees a libc call.
use strict;
use warnings;
use File::Temp qw(tempdir);
use Test::More;
use Xmhub::Test qw(run);

my $src = $ENV{XMHUB_SRCDIR} or BAIL_OUT('XMHUB_SRCDIR is not set');
my @FLAGS = (qw(-std=c99 -pedantic-errors -ffreestanding -Wall -Wextra
    -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror),
    "-I$src/lib");
my %ALLOWED = (memcpy => 1, memset => 1);
my $tmp = tempdir(CLEANUP => 1);

# The files of XMBP_FREESTANDING, continuation lines joined.
open my $fh, '<', "$src/Makefile.am" or BAIL_OUT("Makefile.am: $!");
my $am = do { local $/; <$fh> };
close $fh;
$am =~ s/\\\n/ /g;
my ($list) = $am =~ /^XMBP_FREESTANDING\s*=\s*(.*)$/m
    or BAIL_OUT('no XMBP_FREESTANDING in Makefile.am');
my @files = split ' ', $list;
my @c = grep { /\.c$/ } @files;
my @h = grep { /\.h$/ } @files;
ok((grep { $_ eq 'lib/codec/xmbpenc.c' } @c), 'the encoder is in the list')
    or diag "XMBP_FREESTANDING: @files";

# compile($opt, $file, $out): ($status, $stderr) of one freestanding -c.
sub compile {
	my ($opt, $file, $out) = @_;
	my ($st, undef, $err) = run(['gcc', @FLAGS, $opt, '-c', $file,
	    '-o', $out]);
	return ($st, $err);
}

# symbols($object, @nm_flags): the names nm lists.
sub symbols {
	my ($obj, @flags) = @_;
	my ($st, $out, $err) = run(['nm', @flags, $obj]);
	die "nm $obj: $err" if $st != 0;
	return map { (split ' ')[-1] } split /\n/, $out;
}

my @api = do {
	open my $h, '<', "$src/lib/codec/xmbpenc.h" or die "xmbpenc.h: $!";
	my $text = do { local $/; <$h> };
	my %seen;
	grep { !$seen{$_}++ } $text =~ /^[a-z].*?\b(xmbp_enc_\w+)\(/mg;
};
cmp_ok(scalar @api, '>=', 19, 'codec/xmbpenc.h declares the encoder')
    or diag "@api";

for my $opt (qw(-O0 -O2 -Os)) {
	my @objs;
	for my $file (@c) {
		(my $o = "$tmp/$file$opt.o") =~ s{/}{_}g;
		$o = "$tmp/$o";
		my ($st, $err) = compile($opt, "$src/$file", $o);
		is($st, 0, "$file compiles freestanding C99 at $opt")
		    or diag $err;
		push @objs, $o;
	}
	my $all = "$tmp/all$opt.o";
	my ($st, undef, $err) = run(['gcc', '-nostdlib', '-r', '-o', $all,
	    @objs]);
	is($st, 0, "$opt: the objects link into one (-nostdlib -r)")
	    or diag $err;
	my @undef = symbols($all, '-u');
	is_deeply([grep { !$ALLOWED{$_} } @undef], [],
	    "$opt: nothing undefined but memcpy and memset (nm -u: @undef)");
	my %def = map { $_ => 1 } symbols($all, '--defined-only');
	is_deeply([grep { !$def{$_} } @api], [],
	    "$opt: every function of codec/xmbpenc.h is defined");
}

for my $file (@h) {
	my $t = "$tmp/h.c";
	(my $inc = $file) =~ s{^lib/}{};
	open my $out, '>', $t or die "$t: $!";
	print {$out} "#include \"$inc\"\n";
	close $out;
	my ($st, $err) = compile('-O2', $t, "$tmp/h.o");
	is($st, 0, "$file compiles on its own, freestanding") or diag $err;
}

# The control: a libc call is seen.
open my $ctl, '>', "$tmp/control.c" or die "control.c: $!";
print {$ctl} "#include <stdlib.h>\nvoid *control(void);\n"
    . "void *control(void) { return malloc(1); }\n";
close $ctl;
my ($st, $err) = compile('-O2', "$tmp/control.c", "$tmp/control.o");
is($st, 0, 'the control compiles') or diag $err;
is_deeply([symbols("$tmp/control.o", '-u')], ['malloc'],
    'the control: nm -u names the libc call');

done_testing;
