#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# vendor.t - the third-party files of vendor/ are the ones vendor/MANIFEST
# names, with the checksums of vendor/SHA256SUMS (as vendor/refresh
# fetched them from npm), each package's licence beside them, and each
# folder covered by debian/copyright: a build needs no network and
# ships what it says it ships.
use strict;
use warnings;
use Digest::SHA;
use File::Find;
use Test::More;

my $src = $ENV{XMHUB_SRCDIR} // '.';
my $v = "$src/vendor";

my (%want, %pkg);
open my $m, '<', "$v/MANIFEST" or die "$v/MANIFEST: $!\n";
while (<$m>) {
	next if /^#/ || !/\S/;
	my ($spec, $from, $to) = split;
	like($spec, qr/^[a-z@][\w.\/-]*@\d+\.\d+\.\d+$/,
	    "$to: from a package at an exact version ($spec)");
	ok(!$want{$to}++, "$to: named once");
	my ($dir) = $to =~ m{^([^/]+)/} or fail("$to: in a package's folder");
	$pkg{$dir}{$spec} = 1 if defined $dir;
}
close $m;
ok(keys %want >= 10, 'MANIFEST names the served files');

my %sum;
open my $s, '<', "$v/SHA256SUMS" or die "$v/SHA256SUMS: $!\n";
while (<$s>) {
	my ($hex, $file) = /^([0-9a-f]{64})  (\S+)$/
	    or fail("SHA256SUMS line $.: a checksum and a file"), next;
	$sum{$file} = $hex;
}
close $s;
is_deeply([sort keys %sum], [sort keys %want],
    'SHA256SUMS lists exactly the files of MANIFEST');
for my $f (sort keys %want) {
	ok(-f "$v/$f", "$f is in the tree") or next;
	is(Digest::SHA->new(256)->addfile("$v/$f")->hexdigest, $sum{$f} // '',
	    "$f: as fetched (its checksum)");
}

# Nothing else in vendor/ but the folder's own files.
my %own = map { $_ => 1 } qw(MANIFEST SHA256SUMS README.md refresh);
my @extra;
find({no_chdir => 1, wanted => sub {
	return unless -f;
	(my $rel = $File::Find::name) =~ s{^\Q$v\E/}{};
	push @extra, $rel unless $want{$rel} || $own{$rel};
}}, $v);
is_deeply(\@extra, [], 'vendor/ holds nothing MANIFEST does not name');

my $copyright = do {
	local $/;
	open my $c, '<', "$src/debian/copyright" or die "debian/copyright: $!\n";
	<$c>;
};
for my $dir (sort keys %pkg) {
	is(scalar keys %{$pkg{$dir}}, 1, "$dir/: one package, one version");
	ok($want{"$dir/LICENSE"}, "$dir/: its licence beside it");
	like($copyright, qr{^Files: vendor/\Q$dir\E/\*$}m,
	    "$dir/: a Files stanza of its own in debian/copyright");
}
done_testing;
