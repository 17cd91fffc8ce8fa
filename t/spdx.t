#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# spdx.t - every file of the project's own (git ls-files) names its
# licence in its first lines, "SPDX-License-Identifier: MIT" (LICENSE).
# Not the third-party files (vendor/, models/: their own licences,
# debian/copyright), test data and corpora, images, JSON, the documents,
# the migrations (sql/: an applied file is never edited; LICENSE covers
# them) and debian/'s data files.  It reads the git checkout (not in a
# dist tree's DIST_TESTS).
use strict;
use warnings;
use Test::More;

my $src = $ENV{XMHUB_SRCDIR} // '.';
my @files = split /\0/, qx(git -C "$src" ls-files -z);
ok(@files > 100, 'git ls-files: ' . scalar @files . ' files');
my $skip = qr{^(?:vendor/|models/|t/data/|fuzz/corpus/|doc/console/|sql/
    |LICENSE$|debian/(?:changelog|copyright|source/format|control
    |.*\.(?:install|docs|examples))$
    |.*\.(?:md|png|jpg|jpeg|webp|tif|bmp|json|txt|gitignore|onnx)$)}x;
my @missing;
for my $f (grep { !/$skip/ } @files) {
	open my $fh, '<', "$src/$f" or next;
	my $head = join '', map { scalar(<$fh>) // '' } 1 .. 5;
	push @missing, $f unless $head =~ /SPDX-License-Identifier: MIT\b/;
}
is_deeply(\@missing, [], 'every source file names its licence (SPDX)')
    or diag 'missing: ' . join(' ', @missing);
done_testing;
