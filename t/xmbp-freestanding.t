#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# The encoder side of libxmbp is freestanding (doc/device.md): each .c of
# XMBP_FREESTANDING in Makefile.am compiles as C99 with -ffreestanding,
# from the source tree alone (no config.h, no build tree), every warning
# an error, at -O0, -O2 and -Os; linked together (-nostdlib -r) the
# objects need nothing but memcpy and memset and define every function
# of codec/xmbpenc.h, and a hosted program linked with them writes a
# batch of every value type byte for byte as `xmhub xmbp encode` does
# from its JSON form.  Each header compiles on its own the same way.  A
# control file calling malloc shows that the check sees a libc call.
use strict;
use warnings;
use File::Temp qw(tempdir);
use Test::More;
use Xmhub::Test qw(run xmhub hexstr);

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

# A batch of every value type written with the encoder's calls, and its
# JSON form for `xmhub xmbp encode`.
my $DRIVER = <<'END';
#include <stdio.h>
#include "codec/xmbpenc.h"

int
main(void)
{
	static uint8_t buf[1024];
	const double d[2] = {0.5, -2};
	const float f[2] = {1.5f, -0.25f};
	const int32_t i[3] = {1, -2, 2147483647};
	const uint8_t raw[3] = {0, 1, 255};
	struct xmbp_enc e;
	uint32_t dev = 4242;
	size_t len;

	xmbp_enc_init(&e, buf, sizeof(buf));
	xmbp_enc_begin(&e, 65535, &dev);
	xmbp_enc_stream(&e, 0, SAMPLE_F64);
	xmbp_enc_f64(&e, 1, 0.1);
	xmbp_enc_f64(&e, 2, -1e300);
	xmbp_enc_stream(&e, 1, SAMPLE_F32);
	xmbp_enc_f32(&e, 3, 21.5f);
	xmbp_enc_stream(&e, 2, SAMPLE_I64);
	xmbp_enc_i64(&e, 4, -5);
	xmbp_enc_stream(&e, 3, SAMPLE_I32);
	xmbp_enc_i32(&e, 5, -100000);
	xmbp_enc_stream(&e, 4, SAMPLE_I16);
	xmbp_enc_i16(&e, 6, -300);
	xmbp_enc_stream(&e, 5, SAMPLE_I8);
	xmbp_enc_i8(&e, 7, -7);
	xmbp_enc_stream(&e, 6, SAMPLE_BOOL);
	xmbp_enc_bool(&e, 8, true);
	xmbp_enc_stream(&e, 7, SAMPLE_STRING);
	xmbp_enc_string(&e, 9, "h\xc3\xa9llo", 6);
	xmbp_enc_stream(&e, 8, SAMPLE_BYTES);
	xmbp_enc_bytes(&e, 10, raw, 3);
	xmbp_enc_stream(&e, 9, SAMPLE_JSON);
	xmbp_enc_json(&e, 11, "{\"a\":1}", 7);
	xmbp_enc_stream(&e, 10, SAMPLE_F64_ARRAY);
	xmbp_enc_f64_array(&e, 12, d, 2);
	xmbp_enc_stream(&e, 11, SAMPLE_F32_ARRAY);
	xmbp_enc_f32_array(&e, 13, f, 2);
	xmbp_enc_stream(&e, 12, SAMPLE_I32_ARRAY);
	xmbp_enc_i32_array(&e, 14, i, 3);
	if (xmbp_enc_finish(&e, &len) != XMBP_ENC_OK) {
		fprintf(stderr, "%s\n", xmbp_enc_detail(&e));
		return 1;
	}
	fwrite(buf, 1, len, stdout);
	return 0;
}
END
my $JSON = <<'END';
{"version":1,"flags":1,"batch_seq":65535,"device_id":4242,"streams":[
{"stream_id":0,"value_type":"f64","samples":[[1,0.1],[2,-1e300]]},
{"stream_id":1,"value_type":"f32","samples":[[3,21.5]]},
{"stream_id":2,"value_type":"i64","samples":[[4,-5]]},
{"stream_id":3,"value_type":"i32","samples":[[5,-100000]]},
{"stream_id":4,"value_type":"i16","samples":[[6,-300]]},
{"stream_id":5,"value_type":"i8","samples":[[7,-7]]},
{"stream_id":6,"value_type":"bool","samples":[[8,true]]},
{"stream_id":7,"value_type":"string","samples":[[9,"h\u00e9llo"]]},
{"stream_id":8,"value_type":"bytes","samples":[[10,"AAH/"]]},
{"stream_id":9,"value_type":"json","samples":[[11,"{\"a\":1}"]]},
{"stream_id":10,"value_type":"f64_array","samples":[[12,[0.5,-2]]]},
{"stream_id":11,"value_type":"f32_array","samples":[[13,[1.5,-0.25]]]},
{"stream_id":12,"value_type":"i32_array","samples":[[14,[1,-2,2147483647]]]}
]}
END
my ($est, $want, $eerr) = xmhub(['xmbp', 'encode', '-'], $JSON);
is($est, 0, 'xmhub xmbp encode takes the JSON form') or diag $eerr;
open my $drv, '>', "$tmp/driver.c" or die "driver.c: $!";
print {$drv} $DRIVER;
close $drv;

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
	($st, undef, $err) = run(['gcc', '-std=c99', "-I$src/lib", '-o',
	    "$tmp/driver$opt", "$tmp/driver.c", $all]);
	is($st, 0, "$opt: a hosted program links with them") or diag $err;
	my ($dst, $got, $derr) = run(["$tmp/driver$opt"]);
	is($dst, 0, "$opt: it encodes") or diag $derr;
	is(hexstr($got), hexstr($want),
	    "$opt: a batch of every type, as xmhub xmbp encode writes it");
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
