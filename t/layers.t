#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# The layers of lib/ (doc/development.md "Layers"): every #include of a
# lib/ header names its layer ("codec/xmbp.h"), a file includes only its
# own layer and the ones its layer may use, the lower layers use no
# library of a higher one, and no module includes itself through others.
# A module is NAME.c with NAME.h (and NAME.def, a table it includes);
# NAME_be.h is NAME's private header (its back ends',
# lib/store/storage_be.h).
use strict;
use warnings;
use File::Find;
use Test::More;

my $lib = "$ENV{XMHUB_SRCDIR}/lib";

# What each layer may include besides itself.
my %may = (
	codec => [],
	core => [qw(codec)],
	store => [qw(codec core)],
	domain => [qw(codec core store)],
	web => [qw(codec core store)],
	api => [qw(codec core store domain web)],
	face => [qw(codec)],
	'face/service' => [qw(codec core store web face)],
);
# System headers a layer must not include (its libraries are above it).
my %not = (
	codec => qr/^(libpq-fe|fcgiapp|fcgi_stdio|curl\/curl|jwt|argon2)\.h$/,
	core => qr/^(fcgiapp|fcgi_stdio)\.h$/,
	store => qr/^(fcgiapp|fcgi_stdio)\.h$/,
	domain => qr/^(fcgiapp|fcgi_stdio)\.h$/,
);

my (%layer_of, %deps, @bad);
sub module { my $m = shift; $m =~ s/(_be)?\.(c|h|cpp|def)$//; return $m }
find({ no_chdir => 1, wanted => sub {
	return unless /\.(c|h|cpp|def)$/;
	(my $rel = $File::Find::name) =~ s{^\Q$lib\E/}{};
	my ($layer) = $rel =~ m{^(face/service|[^/]+)/[^/]+$}
	    or return fail("$rel is in no layer directory");
	my $mod = module($rel);
	$layer_of{$mod} = $layer;
	open my $fh, '<', $File::Find::name or die "$rel: $!\n";
	while (my $line = <$fh>) {
		if ($line =~ /^#\s*include\s+"([^"]+)"/) {
			next if $1 eq 'config.h';
			push @{$deps{$rel}}, $1;
		} elsif ($line =~ /^#\s*include\s+<([^>]+)>/ && $not{$layer}) {
			push @bad, "$rel: <$1> is not for $layer" if $1 =~ $not{$layer};
		}
	}
}}, $lib);
ok(scalar keys %layer_of > 50, 'lib/ holds the modules') or BAIL_OUT('no lib/');

my %graph; # module -> modules it includes
for my $file (sort keys %deps) {
	my $mod = module($file);
	my $layer = $layer_of{$mod};
	my %ok = map { $_ => 1 } $layer, @{$may{$layer} // []};
	for my $inc (@{$deps{$file}}) {
		my $target = module($inc);
		my $tl = $layer_of{$target};
		if (!defined $tl) {
			push @bad, "$file: \"$inc\" names no lib/ header by its layer";
			next;
		}
		push @bad, "$file ($layer) includes $inc ($tl)" unless $ok{$tl};
		$graph{$mod}{$target} = 1 if $target ne $mod;
	}
}

is_deeply(\@bad, [], 'every include follows the layers')
    or diag(join("\n", @bad));

# No cycle between modules (a .c and its .h are one module).
my (%state, @cycles);
sub visit {
	my ($m, @path) = @_;
	return if ($state{$m} // 0) == 2;
	if (($state{$m} // 0) == 1) {
		my @c = @path;
		shift @c while @c && $c[0] ne $m;
		push @cycles, join(' -> ', @c, $m);
		return;
	}
	$state{$m} = 1;
	visit($_, @path, $m) for sort keys %{$graph{$m} // {}};
	$state{$m} = 2;
}
visit($_) for sort keys %layer_of;
is_deeply(\@cycles, [], 'no include cycle between modules')
    or diag(join("\n", map { "cycle: $_" } @cycles));

# doc/development.md's layer table names every module of its layer and
# nothing else: a module is NAME (NAME.c), NAME.cpp, or a file of its own
# (a header without NAME.c, a .def table).
my $doc = do {
	local (@ARGV, $/) = "$ENV{XMHUB_SRCDIR}/doc/development.md";
	<>;
} // '';
for my $layer (sort keys %may) {
	my ($holds) = $doc =~ /^\| `\Q$layer\E\/` \| ([^|]*) \|/m;
	ok(defined $holds, "doc/development.md: a row for $layer/") or next;
	my %named = map { $_ => 1 } $holds =~ /`([^`]+)`/g;
	my %tree;
	opendir my $dh, "$lib/$layer" or die "$lib/$layer: $!\n";
	my @files = grep { -f "$lib/$layer/$_" } readdir $dh;
	closedir $dh;
	my %file = map { $_ => 1 } @files;
	for (@files) {
		if (/^(.+)\.c$/) { $tree{$1} = 1 }
		elsif (/\.(cpp|def)$/) { $tree{$_} = 1 }
		elsif (/^(.+)\.h$/ && !$file{"$1.c"} && !$file{"$1.cpp"}) {
			$tree{$_} = 1;
		}
	}
	is_deeply([grep { !$named{$_} } sort keys %tree], [],
	    "$layer/: every module is in doc/development.md's table");
	is_deeply([grep { !$tree{$_} } sort keys %named], [],
	    "$layer/: every name in its row is a module");
}

done_testing();
