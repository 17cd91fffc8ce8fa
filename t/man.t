#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# The manual pages (man/ and the generated xmhub.env(5)) pass mandoc
# -Tlint at level warning, and xmhub(1) has an item for every command
# of `xmhub --help` that names every option of the command's usage line.
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
my (@missing, @flags);
for (split /\n/, `'$bin' --help`) {
	next unless /^  xmhub ([a-z-]+)(?: ([a-z][a-z-]*))?(.*)/;
	my ($cmd, $args) = (defined $2 ? "$1 $2" : $1, $3);
	# The item: its .It line up to the next command's, or the section's
	# end (an option list inside it has .It Fl lines).
	my ($item) = $page =~ /^(\.It Cm \Q$cmd\E\b.*?)(?=^\.It Cm |^\.S[hs] )/ms;
	if (!defined $item) {
		push @missing, $cmd;
		next;
	}
	push @flags, map { "$cmd --$_" }
	    grep { $item !~ /\bFl \\-\Q$_\E(?![\w-])/ } $args =~ /--([a-z][\w-]*)/g;
}
is(join(', ', @missing), '', 'xmhub(1) has an item for every command');
is(join(', ', @flags), '',
    'each names every option of its usage line');

done_testing();
