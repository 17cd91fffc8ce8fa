#!/usr/bin/env perl
# The manual pages (man/ and the generated xmhub.env(5)) pass mandoc
# -Tlint at level warning, and xmhub(1) has a section for every command
# of `xmhub --help`.
use strict;
use warnings;
use Test::More;

my $src = $ENV{XMHUB_SRCDIR} or die "XMHUB_SRCDIR is not set\n";
my $build = $ENV{XMHUB_BUILDDIR} or die "XMHUB_BUILDDIR is not set\n";
my $bin = $ENV{XMHUB_BIN} or die "XMHUB_BIN is not set\n";

my @pages = (glob("$src/man/*.[1-8]"), "$build/man/xmhub.env.5");
cmp_ok(scalar @pages, '>=', 4, 'the pages are there');
for my $p (@pages) {
	my $out = `mandoc -Tlint -W warning '$p' 2>&1`;
	is($? >> 8, 0, "mandoc -Tlint $p") or diag($out);
}

my $page = do { local $/; open my $f, '<', "$src/man/xmhub.1" or die; <$f> };
my @missing;
for (split /\n/, `'$bin' --help`) {
	next unless /^  xmhub ([a-z-]+)(?: ([a-z][a-z-]*))?/;
	my $it = defined $2 ? qr/^\.It Cm $1 $2\b/m : qr/^\.It Cm $1\b/m;
	push @missing, defined $2 ? "$1 $2" : $1 unless $page =~ $it;
}
is(join(', ', @missing), '', 'xmhub(1) has an item for every command');

done_testing();
