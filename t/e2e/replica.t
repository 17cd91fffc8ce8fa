#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# A read replica (doc/scaling.md "Read replica"): a stack on a primary
# with XMHUB_DATABASE_REPLICA_URL naming its streaming replica.  Sample
# reads and lists are served by the replica while it has replayed what
# the primary had written when the read began: a read right after an
# acknowledged batch sees it, also while the replica's replay is paused
# (the primary serves it then); the replica killed, reads go to the
# primary without an error.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep);
use Xmhub::Ingest;
use Xmhub::Pg;
use Xmhub::Platform;

my $pg = Xmhub::Pg->start(fsync => 0);
my $rep = $pg->replica;
my $p = Xmhub::Platform->start(database_url => $pg->url,
	env => {XMHUB_DATABASE_REPLICA_URL => $rep->url});
END {
	my $status = $?;
	$p->stack->stop if $p;
	$_->stop for grep { defined } $rep, $pg;
	$? = $status;
}

my $fac = $p->facility('replica');
my $token = $p->token($p->user('facility_admin', $fac));
my $key = $p->api_key($token, 'ingest');
my $in = Xmhub::Ingest->new($p, $key);
my $s = $in->session(5, [0, 'i32']);

# The read transactions the replica served so far (a sample read ends
# with ROLLBACK; the checks of db_reader() commit).
sub replica_reads {
	my ($st, $out, $err) = $rep->psql("SELECT xact_rollback FROM "
		. "pg_stat_database WHERE datname = 'xmhub'");
	die "replica: $err" if $st;
	return $out + 0;
}
my $before = replica_reads();

# Each batch read back at once by the same client.
my $seen = 0;
for my $q (1 .. 20) {
	$in->send($s->{id}, $q, [0, 'i32', [[$q, $q]]]);
	my @got = $in->read_all($token, $s->{id}, 0);
	$seen++ if @got == $q && $got[-1][0] == $q;
}
is($seen, 20, 'each of 20 batches is read back right after its ack');
# Read at once, a batch may be ahead of the replica (a loaded machine
# delays its replay): then the primary serves it, as it must.  Read
# again at rest, the replica serves once it has caught up.
my $served = 0;
for (1 .. 50) {
	last if ($served = replica_reads() - $before) > 0;
	$in->read_all($token, $s->{id}, 0);
	sleep 0.2;
}
ok($served > 0, "the replica served reads ($served)");
my ($st) = $p->req(GET => '/api/v1/devices', token => $token);
is($st, 200, 'the device list');

# The replica behind: its replay paused, a batch acked, read at once.
($st, my $out, my $err) = $rep->psql('SELECT pg_wal_replay_pause()');
is($st, 0, 'the replica\'s replay paused') or diag $err;
$in->send($s->{id}, 21, [0, 'i32', [[21, 21]]]);
my @got = $in->read_all($token, $s->{id}, 0);
is(scalar @got, 21, 'a batch the replica has not replayed is read back '
    . '(from the primary)');
(undef, $out) = $rep->psql("SELECT total_samples FROM ingest_sessions "
	. "WHERE id = '$s->{id}'");
chomp $out;
ok($out < 21, "the replica had not replayed it ($out samples)");
$rep->psql('SELECT pg_wal_replay_resume()');

# The replica killed: reads go on from the primary.
$rep->stop;
my @st;
for my $q (22 .. 25) {
	$in->send($s->{id}, $q, [0, 'i32', [[$q, $q]]]);
	my ($rst, $b) = $in->samples($token, $s->{id}, 0);
	push @st, $rst == 200 ? scalar @{$b->{samples}} : "status $rst";
	push @st, ($p->req(GET => '/api/v1/devices', token => $token))[0];
}
is("@st", '22 200 23 200 24 200 25 200',
    'the replica gone: every read answered, from the primary');

done_testing;
