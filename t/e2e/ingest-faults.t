#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Ingest under faults, with clients that resend the same bytes after any
# failure (doc/ingest.md "Retries", "Group commit"): kill -9 of ingest
# FastCGI processes and of WebSocket processes under load, PostgreSQL
# restarted under load (503 with Retry-After, then recovery with the
# same lighttpd), a full queue (503 with Retry-After); every time no
# acknowledged batch missing, none stored twice, counters and gaps exact.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep);
use Xmhub::Ingest;
use Xmhub::Platform;
use Xmhub::Posters;
use Xmhub::WS;
use Xmhub::XMBP qw(batch);

my $p = Xmhub::Platform->start(own_db => 1); # stops PostgreSQL
my $stack = $p->stack;
my $fac = $p->facility('Faults A');
my $ta = $p->token($p->user('facility_admin', $fac));
my $key = $p->api_key($ta, 'ingest');
my $in = Xmhub::Ingest->new($p, $key);
my $build = $ENV{XMHUB_BUILDDIR};

# PIDs of the stack's processes running $build/$prog.
sub pids_of {
	my ($prog) = @_;
	my @pids;
	for my $dir (glob '/proc/[0-9]*') {
		open(my $c, '<', "$dir/cmdline") or next;
		my $cmd = <$c> // '';
		push @pids, $dir =~ m{(\d+)$} if $cmd =~ m{^\Q$build/$prog\E\0};
	}
	return @pids;
}

# $n posters of $per batches each on session $sid, sequential seqs.
sub posters {
	my ($sid, $n, $per, $from) = @_;
	return [map { my $k = $_; [$sid, $from + $k,
		[map { ($k * $per + $_) % 65536 } 0 .. $per - 1]] } 0 .. $n - 1];
}

# $n devices, each a session of its own with one poster of $per
# batches: a device resends within its session's last 64 batches, which
# many posters on one session would not (doc/ingest.md "Retries").
sub devices {
	my ($n, $per, $from) = @_;
	my @sids = map { $in->session($from + $_, [0, 'i32'])->{id} } 1 .. $n;
	return (\@sids, [map { @{posters($sids[$_], 1, $per, $from + $_)} }
		0 .. $n - 1]);
}

# check() of every session in @$sids.
sub check_all {
	my ($sids, $log, $name) = @_;
	Xmhub::Posters::check($p, $sids->[$_], $log, "$name, session $_")
	    for 0 .. $#$sids;
}

# --- kill -9 of the ingest FastCGI processes under load ---
# Enough batches that the kills land while they are posted, also on a
# quiet machine (a group commit takes 16 devices' batches at a time).
my ($sids, $plan) = devices(16, 150, 100);
my $h = Xmhub::Posters::start_http($p, $key, $plan);
my $killed = 0;
for (1 .. 3) {
	sleep 0.5;
	my @pids = pids_of('cgi-bin/ingest');
	$killed += kill 'KILL', @pids[0 .. ($#pids < 3 ? $#pids : 3)];
}
my @log = Xmhub::Posters::finish($h);
cmp_ok($killed, '>', 0, "http: $killed ingest processes killed under load");
ok((grep { $_->[0] eq 'try' && $_->[5] != 200 } @log) > 0,
    'http: some requests failed meanwhile');
check_all($sids, \@log, 'http kill -9');

# --- kill -9 of WebSocket processes under load ---
($sids, $plan) = devices(4, 400, 200);
$h = Xmhub::Posters::start_ws($p, $key, $plan, window => 8);
$killed = 0;
# The first kill as soon as the connections' processes run: a plain
# build posts all of it in well under a second.
my $until = time + 30;
sleep 0.01 until pids_of('ws/xmhub-ingest-ws') || time > $until;
for (1 .. 6) {
	$killed += kill 'KILL', pids_of('ws/xmhub-ingest-ws');
	sleep 0.3;
}
@log = Xmhub::Posters::finish($h);
cmp_ok($killed, '>', 0, "ws: $killed WebSocket processes killed under load");
ok((grep { $_->[0] eq 'conn' } @log) > 4, 'ws: clients connected again');
check_all($sids, \@log, 'ws kill -9');

# --- PostgreSQL restarted under load ---
sub lighttpd_pid {
	open(my $f, '<', $stack->var . '/run/lighttpd.pid') or return '';
	return scalar <$f>;
}
my $lt = lighttpd_pid();
($sids, $plan) = devices(8, 40, 300);
$h = Xmhub::Posters::start_http($p, $key, $plan);
sleep 1;
$stack->stop_db;
sleep 2;
$stack->start_db;
@log = Xmhub::Posters::finish($h);
my @down = grep { $_->[0] eq 'try' && $_->[5] == 503 } @log;
cmp_ok(scalar @down, '>', 0, 'db restart: 503s while it was down');
is(scalar(grep { $_->[6] eq '-' } @down), 0, 'db restart: every 503 has Retry-After');
is(scalar(grep { $_->[0] eq 'try' && $_->[5] != 200 && $_->[5] != 503 } @log),
    0, 'db restart: no other failure');
is(lighttpd_pid(), $lt, 'db restart: recovered with the same lighttpd');
check_all($sids, \@log, 'db restart');

# A WebSocket open when the database goes away: the error message names
# it, then a Close with a code and reason.
my $s = $in->session(54, [0, 'i32']);
my ($c) = Xmhub::WS->connect($stack->ws_port,
	"/api/v1/ingest/ws?session_id=$s->{id}", {'X-Api-Key' => $key});
$c->send_binary(batch(0, undef, [0, 'i32', [[1, 1]]]));
my ($type, $payload) = $c->read_message(30);
is(length($payload // ''), 4, 'ws db down: acked before');
$stack->stop_db;
$c->send_binary(batch(1, undef, [0, 'i32', [[2, 1]]]));
($type, $payload) = $c->read_message(30);
like($payload // '', qr/"detail":"the database is unavailable"/,
    'ws db down: the error message names the database');
($type, $payload) = $c->read_message(30);
is($type, 'close', 'ws db down: then a Close frame');
is(unpack('n', $payload // "\0\0"), 1008, 'ws db down: code 1008, with a reason')
    and like(substr($payload, 2), qr/\S/, 'ws db down: reason given');
$stack->start_db;

# --- a full queue: 503 with Retry-After ---
$stack->restart(env => {XMHUB_INGEST_QUEUE => 1});
$s = $in->session(55, [0, 'i32']);
# The session's row held by another transaction for 3 s: each process's
# writer waits in its round, one batch waits in its queue, more are 503.
my $locker = fork // die "fork: $!";
if ($locker == 0) {
	$stack->psql("BEGIN; SELECT 1 FROM ingest_sessions WHERE id = "
		. "'$s->{id}' FOR UPDATE; SELECT pg_sleep(3); COMMIT");
	POSIX::_exit(0);
}
sleep 0.5;
@log = Xmhub::Posters::http($p, $key, posters($s->{id}, 40, 2, 300));
waitpid($locker, 0);
my @full = grep { $_->[0] eq 'try' && $_->[5] == 503 } @log;
cmp_ok(scalar @full, '>', 0, 'queue full: 503s (' . scalar(@full) . ')');
is(scalar(grep { $_->[6] ne '1' } @full), 0, 'queue full: each with Retry-After: 1');
Xmhub::Posters::check($p, $s->{id}, \@log, 'queue full');

done_testing;
