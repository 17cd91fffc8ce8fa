#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# lib/api/apikeys.c against a real PostgreSQL: runs the C program t/apikeys-db
# (from t/e2e/apikeys-db.c) on a migrated database of its own (no stack:
# Xmhub::Pg->test_database); its TAP is this script's.  What lib/core/db logs on the way (the refusals the test
# provokes) is shown only when the program fails.
use strict;
use warnings;
use File::Temp qw(tempfile);
use Xmhub::Pg;

my ($logf, $log) = tempfile(UNLINK => 1);
$ENV{XMHUB_TEST_DATABASE_URL} = Xmhub::Pg->test_database;
open my $stderr, '>&', \*STDERR or die "dup: $!";
open STDERR, '>', $log or die "$log: $!";
system("$ENV{XMHUB_BUILDDIR}/t/e2e/apikeys-db");
my $status = $? == -1 ? 1 : ($? >> 8) || ($? & 127 ? 1 : 0);
open STDERR, '>&', $stderr or die "dup: $!";
if ($status != 0) {
	seek $logf, 0, 0;
	print "# $_" while <$logf>;
}
exit $status;
