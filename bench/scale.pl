#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/scale - one web host against two and four on one shared PostgreSQL, in the
# same run (doc/scaling.md "Measured"): ingest and API reads through a
# round-robin balancer (t/lib/Xmhub/LB.pm) with one backend, then with
# two, then four; where the CPU time goes (balancer, web hosts' lighttpd, FastCGI
# programs, PostgreSQL, wrk) per request; pgbench running the ingest
# write statement on the same database, for PostgreSQL's own limit; and
# what N hosts would give from those figures.  On this machine every part
# shares the same cores: the two-host gain is bounded by CPU, which is
# why the per-request CPU split is the figure to extrapolate from.
#
# Runs from a build tree (make bench-scale).  BENCH_SECONDS (10),
# BENCH_CONNECTIONS (16).
use strict;
use warnings;
use HTTP::Tiny;
use JSON::PP;
use POSIX ();
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::LB;
use Xmhub::Pg;
use Xmhub::Platform;
use Xmhub::Stack;
use Xmhub::Test qw(run);
use Xmhub::Wrk qw(wrk_program wrk_report ingest_setup);

my $seconds = $ENV{BENCH_SECONDS} || 10;
my $conns = $ENV{BENCH_CONNECTIONS} || 16;
wrk_program();
my $tick = POSIX::sysconf(POSIX::_SC_CLK_TCK()) || 100;
my $cores = () = (do { local (@ARGV, $/) = '/proc/cpuinfo'; <> }) =~
    /^processor\s*:/mg;

# Four hosts of up to 93 connections each (doc/scaling.md).
my $pg = Xmhub::Pg->start(max_connections => 500);
my $secret = join '', map { sprintf '%02x', int rand 256 } 1 .. 32;
my %env = (XMHUB_JWT_SECRET => $secret, XMHUB_MULTI_HOST => 1);
my @N = (1, 2, 4);
my @hosts = map { Xmhub::Stack->start(addr => "127.0.0.$_",
	database_url => $pg->url, env => \%env) } 1 .. 4;
my %lb = map { $_ => Xmhub::LB->start(@hosts[0 .. $_ - 1]) } @N;
END {
	my $st = $?;
	$_->stop for values %lb;
	$_->stop for @hosts;
	$pg->stop if $pg;
	$? = $st;
}

my $p = bless {stack => $hosts[0], secret => $secret, n => 0,
	http => HTTP::Tiny->new(timeout => 30)}, 'Xmhub::Platform';
my $fac = $p->facility('scale bench');
my $token = $p->token($p->user('facility_admin', $fac));
my $key = $p->api_key($token, 'ingest');
for my $uid (1 .. 20) {
	my ($st) = $p->req(POST => '/api/v1/devices', token => $token,
		json => {device_uid => $uid, name => "dev-$uid"});
	die "device: $st\n" if $st != 201;
}
# 64 sessions of 4 f32 streams, each request a new batch on one of them.
my $dir = $lb{1}->dir;
ingest_setup($p, $key, $dir);

# CPU ticks so far of this run's processes, by pid and part: the
# balancers, the hosts' lighttpd, their FastCGI programs (lighttpd's
# children), PostgreSQL (the postmaster's children); other processes of
# the machine (other stacks, other clusters) are not counted.  wrk's are
# this process's children's (times()).
my %lb_pid = map { $_->{lighttpd} => 1 } values %lb;
my ($pm_pid) = slurp("$pg->{dir}/data/postmaster.pid") =~ /(\d+)/;

sub slurp {
	open my $f, '<', $_[0] or die "$_[0]: $!\n";
	local $/;
	return <$f>;
}

sub cpu {
	my %t;
	# Read each time: a restart makes a new lighttpd.
	my %lt_pid = map {
		(slurp($_->var . '/run/lighttpd.pid') =~ /(\d+)/)[0] => 1 } @hosts;
	for my $stat (glob '/proc/[0-9]*/stat') {
		my $line = eval { slurp($stat) } // next;
		my ($pid, $rest) = $line =~ /^(\d+) \(.*\) (.*)$/s or next;
		my @f = split ' ', $rest;
		my $part = $lb_pid{$pid} ? 'balancer'
		    : $lt_pid{$pid} ? 'lighttpd'
		    : $lt_pid{$f[1]} ? 'fastcgi'
		    : $pid == $pm_pid || $f[1] == $pm_pid ? 'postgres'
		    : next;
		$t{"$part $pid"} = $f[11] + $f[12]; # utime, stime
	}
	my @c = POSIX::times();
	$t{'wrk 0'} = $c[3] + $c[4];
	return \%t;
}

# The CPU milliseconds of each part between two cpu() snapshots, per
# request of $n (a process gone in between is not counted).
sub cpu_ms {
	my ($before, $after, $n) = @_;
	my %ms;
	for my $k (keys %$after) {
		my ($part) = split ' ', $k;
		$ms{$part} += 1000 * ($after->{$k} - ($before->{$k} // 0)) / $tick
		    / ($n || 1);
	}
	return \%ms;
}

# run($lb, $name, @wrk args): requests/s, p99 and the CPU milliseconds
# per request of each part.
sub case {
	my ($lb, $name, $path, @args) = @_;
	my $before = cpu();
	my ($st, $out, $err) = run([wrk_program(), '-t2', "-c$conns",
		"-d${seconds}s", '--latency', @args, $lb->url($path)]);
	die "wrk: $err" if $st != 0;
	my $after = cpu();
	my ($rps, $p99) = wrk_report($out, $name);
	my ($total) = $out =~ /(\d+) requests in/;
	return {rps => $rps, p99 => $p99, ms => cpu_ms($before, $after, $total)};
}

my %r;
for my $n (@N) {
	my $lb = $lb{$n};
	local $ENV{XMHUB_BENCH_SEQ} = 4096 * $n; # new batches each run
	$r{ingest}{$n} = case($lb, 'ingest', '/', '-s', "$dir/ingest.lua");
	$r{reads}{$n} = case($lb, 'reads', '/api/v1/devices', '-H',
		"Authorization: Bearer $token");
}
# The cost of XMHUB_MULTI_HOST (a counter read per check): the reads
# through host A alone again, the setting off.
$hosts[0]->restart(env => {XMHUB_MULTI_HOST => 0});
$r{reads}{off} = case($lb{1}, 'reads', '/api/v1/devices', '-H',
	"Authorization: Bearer $token");
my ($st, $stored) = $pg->psql('SELECT count(*) FROM stored_chunks');
die "count: $stored" if $st;

# pgbench: the ingest's two statements (read_sql and write_sql of
# lib/domain/ingest.c, a 3,000-byte chunk per stream) on these sessions.
($st, my $o, my $e) = $pg->psql(
	'CREATE TABLE bench_sessions AS SELECT row_number() OVER () AS n, id '
	. "FROM ingest_sessions WHERE facility_id = '$fac'; "
	. "CREATE TABLE bench_blob AS SELECT decode(repeat('ab', 3000), 'hex') AS b");
die "pgbench tables: $e" if $st;
open(my $sf, '>', "$dir/ingest.sql") or die "$dir/ingest.sql: $!";
print $sf <<'SQL';
\set n random(1, 64)
SELECT s.status, s.last_batch_seq, s.missed_batches, d.device_uid, s.device_id, t.stream_index, t.value_type, t.id, s.total_samples, position(substring(sha256(random()::text::bytea) for 16) in s.recent_digests) > 0 FROM ingest_sessions s JOIN devices d ON d.id = s.device_id JOIN ingest_streams t ON t.session_id = s.id WHERE s.id = (SELECT id FROM bench_sessions WHERE n = :n) ORDER BY t.stream_index;
WITH s AS (UPDATE ingest_sessions SET total_samples = total_samples + 1000, total_bytes = total_bytes + 12066, last_batch_seq = (coalesce(last_batch_seq, 0) + 1) % 65536, last_data_at = now(), recent_digests = substring(recent_digests || substring(sha256(random()::text::bytea) for 16) from greatest(length(recent_digests) - 1007, 1)) WHERE id = (SELECT id FROM bench_sessions WHERE n = :n) AND status = 'active' RETURNING id, device_id), c AS (INSERT INTO stored_chunks (stream_id, start_ts_us, end_ts_us, sample_count, byte_size, data) SELECT t.id, 0, 2490000, 250, 3000, (SELECT b FROM bench_blob) FROM s JOIN ingest_streams t ON t.session_id = s.id), d AS (UPDATE devices SET last_seen_at = now() WHERE id = (SELECT device_id FROM s) AND last_seen_at < now() - interval '1 second') SELECT count(*) FROM s;
SQL
close $sf;
my $before = cpu();
($st, $o, $e) = run([$pg->bin('pgbench'), '-n', '-M', 'prepared', '-c',
	$conns, '-j', 2, '-T', $seconds, '-f', "$dir/ingest.sql", '-h',
	'127.0.0.1', '-p', $pg->port, '-U', 'xmhub', 'xmhub']);
die "pgbench: $o$e" if $st;
my $after = cpu();
my ($tps) = $o =~ /tps = ([\d.]+)/;
my ($tx) = $o =~ /number of transactions actually processed: (\d+)/;
my $pg_ms = cpu_ms($before, $after, $tx)->{postgres};

printf "bench/scale: %d cores, %ds per case, %d connections, one "
    . "PostgreSQL (fsync on) over TCP\n\n", $cores, $seconds, $conns;
printf "%-8s %10s %10s %6s %10s %6s %9s %9s %9s %s\n", 'case',
    '1 host r/s', '2 hosts', 'ratio', '4 hosts', 'ratio', 'p99 1 ms',
    'p99 2 ms', 'p99 4 ms', 'PostgreSQL CPU ms per request 1/2/4';
for my $c (qw(ingest reads)) {
	my ($a, $b, $d) = @{$r{$c}}{@N};
	printf "%-8s %10.0f %10.0f %6.2f %10.0f %6.2f %9.1f %9.1f %9.1f %s\n",
	    $c, $a->{rps}, $b->{rps}, $b->{rps} / $a->{rps}, $d->{rps},
	    $d->{rps} / $a->{rps}, $a->{p99}, $b->{p99}, $d->{p99},
	    join('/', map { sprintf '%.2f', $_->{ms}{postgres} // 0 } $a, $b, $d);
}
printf "reads through 1 host, XMHUB_MULTI_HOST=0: %.0f r/s (ratio to =1: "
    . "%.2f); PostgreSQL CPU %.2f ms per request (=1: %.2f)\n",
    $r{reads}{off}{rps}, $r{reads}{off}{rps} / $r{reads}{1}{rps},
    $r{reads}{off}{ms}{postgres} // 0, $r{reads}{1}{ms}{postgres} // 0;
my @parts = qw(balancer lighttpd fastcgi postgres wrk);
print "\nCPU ms per request (4 hosts):\n";
printf "%-8s %s %8s\n", 'case', join(' ', map { sprintf '%9s', $_ } @parts),
    'total';
for my $c (qw(ingest reads)) {
	my $ms = $r{$c}{4}{ms};
	my $sum = 0;
	$sum += $ms->{$_} // 0 for @parts;
	printf "%-8s %s %8.2f  (%.0f%% of the machine)\n", $c,
	    join(' ', map { sprintf '%9.2f', $ms->{$_} // 0 } @parts), $sum,
	    100 * $sum * $r{$c}{4}{rps} / 1000 / $cores;
}
printf "\npgbench, the ingest's statements (%d clients): %.0f tps, "
    . "%.2f ms of PostgreSQL CPU each; ratio to the API's ingest through "
    . "4 hosts: %.2f\n", $conns, $tps, $pg_ms, $tps / $r{ingest}{4}{rps};
print "stored chunks after the run: $stored\n";

# Extrapolation: a web host of $cores cores serves $cores*1000/web_ms
# requests a second; PostgreSQL on $cores cores at most
# $cores*1000/pg_ms; N hosts stop adding when N * host > PostgreSQL.
print "\nextrapolation (each part on $cores cores of its own):\n";
for my $c (qw(ingest reads)) {
	my $ms = $r{$c}{4}{ms};
	my $web = ($ms->{lighttpd} // 0) + ($ms->{fastcgi} // 0);
	my $db = $ms->{postgres} || 1e-9;
	my $host = $cores * 1000 / ($web || 1e-9);
	my $dbmax = $cores * 1000 / $db;
	printf "%-8s one host %.0f r/s; PostgreSQL %.0f r/s; "
	    . "hosts until PostgreSQL is the limit: %.1f\n", $c, $host,
	    $dbmax, $dbmax / $host;
}
