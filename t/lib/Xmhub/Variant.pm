# SPDX-License-Identifier: MIT
package Xmhub::Variant;

# A source tree for a stack whose lighttpd configuration differs from
# this tree's for a benchmark's measure only (bench/bounds.pl,
# bench/upload-body.pl): httpd-conf/stack reads httpd-conf/ and sql/ of
# XMHUB_SRCDIR, so a stack restarted with XMHUB_SRCDIR set to the
# variant runs the changed configuration.
#
#   use Xmhub::Variant qw(variant);
#   my $src = variant("$tmp/spooled", 'programs',
#       sub { $_[0] =~ s/^(size upload \d+) stream$/$1/m });
#
# Core modules only.

use strict;
use warnings;
use Exporter 'import';
use Xmhub::Test qw(run);

our @EXPORT_OK = qw(variant);

# variant($src, FILE => $edit, ...): the directory $src (made) with this
# tree's httpd-conf/ copied, each httpd-conf/FILE changed by its $edit
# (called with the file's text as $_[0], to change in place; it returns
# true when it changed it: a pattern that no longer matches dies rather
# than measure the default twice) and this tree's sql/ linked.
sub variant {
	my ($src, %edits) = @_;
	mkdir $src or die "$src: $!\n";
	chmod 0755, $src;
	run(['cp', '-a', "$ENV{XMHUB_SRCDIR}/httpd-conf", "$src/"]);
	symlink "$ENV{XMHUB_SRCDIR}/sql", "$src/sql" or die "$src/sql: $!\n";
	for my $name (sort keys %edits) {
		my $file = "$src/httpd-conf/$name";
		open my $in, '<', $file or die "$file: $!\n";
		my $text = do { local $/; <$in> };
		close $in;
		$edits{$name}->($text) or die "$src: $name did not change\n";
		open my $out, '>', $file or die "$file: $!\n";
		print $out $text;
		close $out or die "$file: $!\n";
	}
	return $src;
}

1;
