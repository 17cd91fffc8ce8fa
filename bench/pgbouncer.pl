#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/pgbouncer - PgBouncer in transaction mode against a direct
# connection, same run (doc/scaling.md "PgBouncer", doc/benchmarks.md):
#
# 1. the statements alone (pgbench, 16 clients): the authn check (the
#    change counter and the user's row), the user's row alone and the
#    device list, these two also as calls of plpgsql functions, each
#    named and prepared once per connection as lib/core/db.c does
#    directly (the baseline), unnamed (parsed and planned every time, as
#    XMHUB_DATABASE_POOLED does), and unnamed through PgBouncer, with
#    PostgreSQL's and PgBouncer's CPU per transaction;
# 2. the API through three web hosts on one PostgreSQL: connected
#    directly with named statements (XMHUB_MULTI_HOST=1, as several hosts
#    run: the baseline), directly with unnamed ones
#    (XMHUB_DATABASE_POOLED, no pooler: the statements' share), and
#    through PgBouncer (XMHUB_DATABASE_POOLED): /api/health (FastCGI, no
#    work), /api/auth/me, the device list (JWT, 20 rows) and ingest
#    batches (the group commit's statements, which a pooled writer plans
#    on every round), each case on one host after the other; and a
#    fourth host alone on the database as most deployments run (named
#    statements, LISTEN: no change counter read); the CPU each part
#    spent per request (the host's lighttpd and programs, PgBouncer,
#    PostgreSQL, wrk); the server and client connections PgBouncer held.
#
# Runs from a build tree (make bench-pgbouncer).  BENCH_SECONDS (10),
# BENCH_CONNECTIONS (16), BENCH_ROUNDS (3): each figure is the median of
# that many runs, the three hosts' taking turns within each round (the
# machine's load moves between rounds, less within one).
use strict;
use warnings;
use HTTP::Tiny;
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Cpu qw(tree_cpu);
use Xmhub::Pg;
use Xmhub::PgBouncer;
use Xmhub::Platform;
use Xmhub::Stack;
use Xmhub::Test qw(run);
use Xmhub::Wrk qw(wrk wrk_program ingest_setup);

my $seconds = $ENV{BENCH_SECONDS} || 10;
my $conns = $ENV{BENCH_CONNECTIONS} || 16;
my $rounds = $ENV{BENCH_ROUNDS} || 3;
wrk_program();

my $pg = Xmhub::Pg->start(max_connections => 300);
# What the PgBouncer's database entry sets, for the unnamed host that
# reaches PostgreSQL without it.
my ($st, $o, $e) = $pg->psql("ALTER DATABASE xmhub SET timezone = 'UTC'; "
	. "ALTER DATABASE xmhub SET datestyle = 'ISO'", 'postgres');
die "ALTER DATABASE: $e" if $st;
my $bouncer = Xmhub::PgBouncer->start($pg, pool => 20);
open(my $pm, '<', $pg->dir . '/data/postmaster.pid') or die "postmaster.pid: $!";
chomp(my $postmaster = <$pm>);
close $pm;
my $secret = join '', map { sprintf '%02x', int rand 256 } 1 .. 32;
my @hosts = (
	Xmhub::Stack->start(addr => '127.0.0.1', database_url => $pg->url,
		env => {XMHUB_JWT_SECRET => $secret, XMHUB_MULTI_HOST => 1}),
	map { Xmhub::Stack->start(addr => $_->[0], database_url => $_->[1],
		env => {XMHUB_JWT_SECRET => $secret,
			XMHUB_DATABASE_POOLED => 'true'}) }
	    ['127.0.0.2', $pg->url], ['127.0.0.3', $bouncer->url]);
push @hosts, Xmhub::Stack->start(addr => '127.0.0.4',
	database_url => $pg->url, env => {XMHUB_JWT_SECRET => $secret});
END {
	my $st = $?;
	$_->stop for @hosts;
	$bouncer->stop if $bouncer;
	$pg->stop if $pg;
	$? = $st;
}

my $p = bless {stack => $hosts[0], secret => $secret, n => 0,
	http => HTTP::Tiny->new(timeout => 30)}, 'Xmhub::Platform';
my $fac = $p->facility('pgbouncer bench');
my $user = $p->user('facility_admin', $fac);
my $token = $p->token($user);
my $key = $p->api_key($token, 'ingest');
for my $uid (1 .. 20) {
	my ($st) = $p->req(POST => '/api/v1/devices', token => $token,
		json => {device_uid => $uid, name => "dev-$uid"});
	die "device: $st\n" if $st != 201;
}
my $dir = $hosts[0]->var;

# --- 1. the statements ---
# lib/web/authn.c's two reads (the change counter, and the user's row
# read when the cache misses) and lib/api/devices.c's list, the caller's
# ids as constants (pgbench's variables are numbers); the user's row and
# the list also as calls of LANGUAGE plpgsql functions, which keep their
# plans per server connection (PgBouncer keeps those across
# transactions), so that only the trivial outer call is planned each time.
my $user_sql = "SELECT u.role, coalesce(u.facility_id::text, ''), "
    . "u.is_active AND coalesce(f.is_active, true), u.token_version, "
    . "u.email, u.display_name FROM users u LEFT JOIN facilities f "
    . "ON f.id = u.facility_id";
my $columns = "id, facility_id, device_uid, name, hardware_version, "
    . "firmware_version, is_active, last_seen_at, created_at";
my $d_columns = join ', ', map { "d.$_" } split /, /, $columns;
($st, $o, $e) = $pg->psql(<<"SQL");
CREATE FUNCTION bench_user(uid uuid) RETURNS TABLE (role text,
	facility_id text, active boolean, token_version integer, email text,
	display_name text)
LANGUAGE plpgsql STABLE SECURITY INVOKER SET search_path = public, pg_temp
AS \$\$ BEGIN RETURN QUERY $user_sql WHERE u.id = uid; END \$\$;
CREATE FUNCTION bench_devices(fac uuid) RETURNS TABLE (id uuid,
	facility_id uuid, device_uid bigint, name text, hardware_version text,
	firmware_version text, is_active boolean, last_seen_at timestamptz,
	created_at timestamptz)
LANGUAGE plpgsql STABLE SECURITY INVOKER SET search_path = public, pg_temp
AS \$\$ BEGIN RETURN QUERY SELECT $d_columns
FROM devices d WHERE d.facility_id = fac ORDER BY d.created_at, d.id;
END \$\$;
SQL
die "bench functions: $e" if $st;
my %sql = (
	authn => "SELECT n FROM authn_epoch;\n$user_sql "
	    . "WHERE u.id = '$user->{id}'::uuid;",
	user => "$user_sql WHERE u.id = '$user->{id}'::uuid;",
	'user fn' => "SELECT * FROM bench_user('$user->{id}'::uuid);",
	devices => "SELECT $columns FROM devices WHERE '$fac'::uuid IS NULL "
	    . "OR facility_id = '$fac'::uuid ORDER BY created_at, id;",
	'devices fn' => "SELECT * FROM bench_devices('$fac'::uuid);",
);
my @statements = ('authn', 'user', 'user fn', 'devices', 'devices fn');
my %script;
for my $s (@statements) {
	($script{$s} = "$dir/$s.pgbench") =~ tr/ /_/;
	open(my $f, '>', $script{$s}) or die "$script{$s}: $!";
	print $f "$sql{$s}\n";
	close $f;
}

# pgbench($script, $mode, $port): (transactions per second, CPU µs per
# transaction of PostgreSQL, of PgBouncer).
sub pgbench {
	my ($script, $mode, $port) = @_;
	my @c0 = map { tree_cpu($_) } $postmaster, $bouncer->{bouncer};
	my ($st, $out, $err) = run([$pg->bin('pgbench'), '-n',
		'-M', $mode, '-c', $conns, '-j', 2, '-T', $seconds, '-f', $script,
		'-h', '127.0.0.1', '-p', $port, '-U', 'xmhub', 'xmhub']);
	die "pgbench $script: $out$err" if $st;
	my ($tps) = $out =~ /tps = ([\d.]+)/;
	my @c1 = map { tree_cpu($_) } $postmaster, $bouncer->{bouncer};
	return ($tps, map { ($c1[$_] - $c0[$_]) * 1e6 / ($tps * $seconds) } 0, 1);
}

# median(@runs): each column's median over rounds of rows.
sub median {
	my @runs = @_;
	return [map { my $i = $_;
		(sort { $a <=> $b } map { $_->[$i] } @runs)[$#runs / 2] }
	    0 .. $#{$runs[0]}];
}

my %stmt;
for my $s (@statements) {
	$stmt{$s} = median(map { [
		(pgbench($script{$s}, 'prepared', $pg->port))[0, 1],
		(pgbench($script{$s}, 'extended', $pg->port))[0, 1],
		pgbench($script{$s}, 'extended', $bouncer->port)] } 1 .. $rounds);
}

# --- 2. the API ---
# The sessions now: one idle for XMHUB_SESSION_TIMEOUT (300 s) is reaped.
ingest_setup($p, $key, $dir);
my @cases = (
	['/api/health', '/api/health'],
	['/api/auth/me', '/api/auth/me', '-H', "Authorization: Bearer $token"],
	['device list', '/api/v1/devices', '-H', "Authorization: Bearer $token"],
	['ingest', '/', '-s', "$dir/ingest.lua"],
);
# The processes whose CPU each case reads: the host's lighttpd with its
# FastCGI programs, PgBouncer and PostgreSQL ($postmaster and its
# backends); wrk's is this process's reaped children's.
my @web = map { $_->running('lighttpd') // die "lighttpd is not running\n" }
    @hosts;

# api_case($i, $name, $path, @args): wrk on host $i; [requests/s, then CPU
# µs per request of: its web server and programs, PgBouncer, PostgreSQL,
# wrk].
my $runs = 0;
sub api_case {
	my ($i, $name, $path, @args) = @_;
	my @parts = ($web[$i], $bouncer->{bouncer}, $postmaster);
	my @c0 = ((map { tree_cpu($_) } @parts), (times)[2] + (times)[3]);
	# Each ingest run's batches new (Xmhub::Wrk::ingest_setup).
	local $ENV{XMHUB_BENCH_SEQ} = 4096 * $runs++;
	my ($rps) = wrk($hosts[$i]->url($path), conns => $conns,
		seconds => $seconds, name => $name, args => \@args);
	my @c1 = ((map { tree_cpu($_) } @parts), (times)[2] + (times)[3]);
	my $n = $rps * $seconds;
	return [$rps, map { ($c1[$_] - $c0[$_]) * 1e6 / $n } 0 .. $#c0];
}

# %api: case => [per host: [requests/s, CPU µs per request of each part]].
my %api;
for my $c (@cases) {
	my @runs = map { [map { api_case($_, @$c) } 0 .. $#hosts] } 1 .. $rounds;
	$api{$c->[0]} = [map { my $h = $_;
		median(map { $_->[$h] } @runs) } 0 .. $#hosts];
}
my ($servers, $clients) = (0, 0);
$servers += $_->{database} eq 'xmhub' for @{$bouncer->show('SERVERS')};
$clients += $_->{database} eq 'xmhub' for @{$bouncer->show('CLIENTS')};

printf "bench/pgbouncer: %ds per case, %d connections, median of %d "
    . "rounds, PgBouncer 1.18 in transaction mode (pool 20), PostgreSQL "
    . "fsync on\n\n", $seconds, $conns, $rounds;
print "statements (pgbench tps; ratios to named, direct; CPU µs per "
    . "transaction of PostgreSQL, and of PgBouncer through it):\n";
printf "%-10s %12s %12s %7s %12s %7s %7s %7s %7s %7s\n", 'case', 'named',
    'unnamed', 'ratio', 'PgBouncer', 'ratio', 'pg n', 'pg u', 'pg P',
    'pgb P';
for my $s (@statements) {
	my ($n, $pn, $u, $pu, $b, $pb, $bb) = @{$stmt{$s}};
	printf "%-10s %12.0f %12.0f %7.2f %12.0f %7.2f %7.0f %7.0f %7.0f "
	    . "%7.0f\n", $s, $n, $u, $u / $n, $b, $b / $n, $pn, $pu, $pb, $bb;
}
print "\nAPI (wrk r/s; named: direct, XMHUB_MULTI_HOST=1; unnamed: "
    . "direct, XMHUB_DATABASE_POOLED; PgBouncer: XMHUB_DATABASE_POOLED "
    . "through it; single: direct, named, one host (LISTEN); ratios to "
    . "named, and to /api/health of the same host):\n";
printf "%-13s %8s %8s %6s %9s %6s %8s %8s %8s %8s %8s\n", 'case', 'named',
    'unnamed', 'ratio', 'PgBouncer', 'ratio', 'single', 'n/health',
    'u/health', 'P/health', 's/health';
my @health = map { $_->[0] } @{$api{'/api/health'}};
for my $c (map { $_->[0] } @cases) {
	my ($n, $u, $b, $one) = map { $_->[0] } @{$api{$c}};
	printf "%-13s %8.0f %8.0f %6.2f %9.0f %6.2f %8.0f %8.2f %8.2f %8.2f "
	    . "%8.2f\n", $c, $n, $u, $u / $n, $b, $b / $n, $one,
	    $n / $health[0], $u / $health[1], $b / $health[2],
	    $one / $health[3];
}
print "\nCPU µs per request (medians; web: the host's lighttpd and its "
    . "FastCGI programs; postgres: the postmaster and its backends):\n";
printf "%-13s %-9s %8s %8s %8s %8s %8s\n", 'case', 'host', 'web',
    'pgbouncer', 'postgres', 'wrk', 'total';
for my $c (map { $_->[0] } @cases) {
	for my $h (0 .. $#hosts) {
		my ($rps, @cpu) = @{$api{$c}[$h]};
		my $total = 0;
		$total += $_ for @cpu;
		printf "%-13s %-9s %8.0f %8.0f %8.0f %8.0f %8.0f\n", $c,
		    (qw(named unnamed PgBouncer single))[$h], @cpu, $total;
	}
}
print "\nPgBouncer after the run: $servers server connections, $clients "
    . "client connections (the pooled host's processes)\n";
