#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# lib/domain/ingest.c's rounds while another transaction holds a
# session's row, each case forced (doc/ingest.md "Group commit"): runs
# the C program t/e2e/ingest-defer (from t/e2e/ingest-defer.c) on a
# stack of t/lib/Xmhub/Platform.pm with two sessions made through the
# API; its TAP is this script's.  Then the samples are read back through
# the API: each batch once.
use strict;
use warnings;
use Xmhub::Ingest;
use Xmhub::Platform;

my $p = Xmhub::Platform->start;
my $fac = $p->facility('Defer');
my $token = $p->token($p->user('facility_admin', $fac));
my $in = Xmhub::Ingest->new($p, $p->api_key($token, 'ingest'));
my @s = map { $in->session($_, [0, 'f32']) } 301, 302;
$ENV{XMHUB_TEST_DATABASE_URL} = $p->stack->database_url;
# Through PgBouncer (t/e2e/pooled-ingest-defer.t): as the stack's programs.
$ENV{XMHUB_DATABASE_POOLED} = $p->stack->setting('XMHUB_DATABASE_POOLED')
    // 'false';
$ENV{XMHUB_TEST_FACILITY} = $fac;
$ENV{XMHUB_TEST_SESSIONS} = join ',', map { $_->{id} } @s;
# The program's TAP goes straight to prove; this script adds the last
# test, so the program's plan line must not end the stream: it prints
# its own and this script none.
my $out = `$ENV{XMHUB_BUILDDIR}/t/e2e/ingest-defer`;
my $status = $? >> 8 || ($? & 127 ? 1 : 0);
$out =~ s/^1\.\.(\d+)\n//m or die "no plan from t/e2e/ingest-defer\n";
my $n = $1;
print $out;
my @back = map { scalar $in->read_all($token, $_->{id}, 0) } @s;
my $ok = "@back" eq '50 50';
print(($ok ? 'ok' : 'not ok') . ' ' . ($n + 1)
    . " - read back through the API: 50 samples in each session\n");
print "# read back: @back\n" unless $ok;
print '1..' . ($n + 1) . "\n";
exit($status || !$ok);
