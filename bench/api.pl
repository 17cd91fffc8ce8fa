#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/api - the platform's authenticated reads under load, next to
# lighttpd serving a small static file from the same server in the same
# run (this machine is shared and noisy: only the ratios mean much).
#
# Runs from a build tree (make bench): a throwaway stack through
# t/lib/Xmhub/Stack.pm, wrk on loopback, logins with throttling on (and
# refused by it), then the resident memory of each FastCGI process, the
# latency of a login (Argon2id) and the throttle's cost in PostgreSQL.
use strict;
use warnings;
use HTTP::Tiny;
use JSON::PP;
use Time::HiRes qw(time);
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Stack;
use Xmhub::Test qw(run xmhub_json);
use Xmhub::Wrk qw(wrk wrk_program);

my $seconds = $ENV{BENCH_SECONDS} || 10;
my $conns = $ENV{BENCH_CONNECTIONS} || 16;
wrk_program();

my $s = Xmhub::Stack->start;
$ENV{XMHUB_ENV_FILE} = $s->env_file;
delete $ENV{XMHUB_DATABASE_URL};

sub cli { my ($stdin, @args) = @_; return xmhub_json(\@args, $stdin) }
my $fac = cli(undef, qw(facility create --name Bench --slug bench))->{id};
cli("bench-password\n", 'user', 'create', '--email', 'bench@example.org',
	'--password', '-', '--role', 'facility_admin', '--facility', $fac);
my $key = cli(undef, 'api-key', 'create', '--facility', $fac, '--name',
	'bench')->{key};

my $http = HTTP::Tiny->new(timeout => 30);
sub login {
	my $r = $http->post($s->url('/api/auth/login'), {
		headers => {'content-type' => 'application/json'},
		content => encode_json({email => 'bench@example.org',
			password => 'bench-password'})});
	die "login: $r->{status} $r->{content}\n" if $r->{status} != 200;
	return decode_json($r->{content});
}
my $token = login()->{access_token};
for my $uid (1 .. 20) {
	my $r = $http->post($s->url('/api/v1/devices'), {
		headers => {'content-type' => 'application/json',
			authorization => "Bearer $token"},
		content => encode_json({device_uid => $uid, name => "dev-$uid"})});
	die "device: $r->{status} $r->{content}\n" if $r->{status} != 201;
}

# The static baseline: a file of about the size of a small JSON answer.
my $www = $s->var . '/www';
mkdir $www;
open(my $f, '>', "$www/static.json") or die "$www/static.json: $!";
print $f encode_json({id => $fac, email => 'bench@example.org',
	display_name => 'bench', role => 'facility_admin',
	facility_id => $fac}), "\n";
close $f;
chmod 0644, "$www/static.json";
chmod 0755, $www;

my @cases = (
	['static file (lighttpd)', '/static.json'],
	['GET /api/health (FastCGI, no auth, no database)', '/api/health'],
	['GET /api/auth/me (JWT)', '/api/auth/me', "Authorization: Bearer $token"],
	['GET /api/v1/devices (JWT, 20 rows)', '/api/v1/devices',
		"Authorization: Bearer $token"],
	['GET /api/v1/ping (API key)', '/api/v1/ping', "X-Api-Key: $key"],
);
my @rows;
for my $c (@cases) {
	my ($name, $path, @h) = @$c;
	push @rows, [$name, wrk($s->url($path), conns => $conns,
		seconds => $seconds, name => $path,
		args => [map { ('-H', $_) } @h])];
}

# Logins with throttling on (doc/auth.md "Login throttling"): every one
# costs the throttle's function call and, on success, its reset, next to
# the lookup and Argon2id.  Then the refusals an attacker gets once an
# address is throttled: the throttle's call only, no password check.
sub login_lua {
	my ($name, $password) = @_;
	my $lua = $s->var . "/$name.lua";
	open(my $l, '>', $lua) or die "$lua: $!";
	print $l "wrk.method = \"POST\"\n",
	    "wrk.headers[\"Content-Type\"] = \"application/json\"\n",
	    "wrk.body = '", encode_json({email => 'bench@example.org',
		password => $password}), "'\n";
	close $l;
	return $lua;
}
push @rows, ['POST /api/auth/login (Argon2id, throttling on)',
	wrk($s->url('/api/auth/login'), conns => $conns, seconds => $seconds,
		name => 'login', args => ['-s', login_lua('login',
		'bench-password')])];
# A wait of 2^10 s on bench@example.org from 127.0.0.1: 15 failures.
my $wrong = login_lua('wrong', 'wrong-password');
for (1 .. 5) {
	my $r = $http->post($s->url('/api/auth/login'), {
		headers => {'content-type' => 'application/json'},
		content => encode_json({email => 'bench@example.org',
			password => 'wrong-password'})});
	die "wrong login: $r->{status}\n" if $r->{status} != 401;
}
my ($pst, undef, $perr) = $s->psql("UPDATE login_throttle SET failures = "
	. "15, last_at = now() WHERE addr = '127.0.0.1' AND email = "
	. "login_throttle_key('bench\@example.org')");
die "psql: $perr" if $pst != 0;
{
	my ($st, $out, $err) = run([wrk_program(), '-t2', "-c$conns",
		"-d${seconds}s", '--latency', '-s', $wrong,
		$s->url('/api/auth/login')]);
	die "wrk: $err" if $st != 0;
	my ($rps) = $out =~ /Requests\/sec:\s+([\d.]+)/;
	my ($p99, $unit) = $out =~ /^\s+99%\s+([\d.]+)(us|ms|s)\s*$/m;
	my ($non2xx) = $out =~ /Non-2xx or 3xx responses: (\d+)/;
	my ($total) = $out =~ /(\d+) requests in/;
	die "wrk: not every answer refused\n$out"
	    unless $non2xx && $total && $non2xx == $total;
	push @rows, ['POST /api/auth/login, throttled (429, no password check)',
		$rps, $p99 * {us => 0.001, ms => 1, s => 1000}->{$unit}];
}
$s->psql("SELECT login_throttle_clear('bench\@example.org', NULL)");

# The throttle's own cost in PostgreSQL (its two statements of a
# successful login) next to the login's user lookup: pgbench, one
# client, prepared statements, as lib/core/db.c runs them.
my ($pgbench) = grep { -x } map { "$_/pgbench" } split(/:/, $ENV{PATH}),
	sort { $b cmp $a } glob('/usr/lib/postgresql/*/bin');
$pgbench or die "pgbench not found (postgresql's binaries)\n";
sub pgbench_tps {
	my ($name, $script) = @_;
	my $f = $s->var . "/$name.sql";
	open(my $fh, '>', $f) or die "$f: $!";
	print $fh $script;
	close $fh;
	my ($st, $out, $err) = run([$pgbench, '-n', '-M', 'prepared', '-c1',
		'-T' . ($seconds < 5 ? $seconds : 5), '-f', $f,
		$s->setting('XMHUB_DATABASE_URL')]);
	die "pgbench $name: $err$out" if $st != 0;
	my ($tps) = $out =~ /tps = ([\d.]+)/ or die "pgbench $name: $out";
	return $tps;
}
my $pg_find = pgbench_tps('find', "SELECT 1 FROM users WHERE "
	. "lower(email) = lower('bench\@example.org');\n");
my $pg_throttle = pgbench_tps('throttle', "\\set i random(1, 200)\n"
	. "SELECT wait FROM login_throttle_attempt('bench\@example.org', "
	. "'192.0.2.' || :i, 5, 900, 100, 900, 20, 60, 86400, 2592000);\n"
	. "SELECT login_throttle_success(login_throttle_key("
	. "'bench\@example.org'), '192.0.2.' || :i, 2592000);\n");

# Resident memory of each FastCGI program after the load.
my $build = $ENV{XMHUB_BUILDDIR};
my %rss;
for my $pid (grep { /^\d+$/ } map { s{^/proc/}{}r } glob('/proc/[0-9]*')) {
	my $exe = readlink("/proc/$pid/exe") // next;
	next unless $exe =~ m{^\Q$build\E/cgi-bin/(.+)$};
	my $prog = $1;
	open(my $st, '<', "/proc/$pid/status") or next;
	while (<$st>) {
		push @{$rss{$prog}}, $1 / 1024 if /^VmRSS:\s+(\d+) kB/;
	}
}

my $n = 20;
my $t0 = time;
login() for 1 .. $n;
my $login_ms = (time - $t0) / $n * 1000;

my $base = $rows[0][1];
printf "wrk: 2 threads, %d connections, %d s per case, loopback\n\n",
	$conns, $seconds;
print "| case | requests/s | p99 ms | vs static file |\n";
print "|---|---:|---:|---:|\n";
# Logins are thousands of times slower than the reads: more digits.
printf "| %s | %.0f | %.2f | %.*fx |\n", $_->[0], $_->[1], $_->[2],
	$_->[1] / $base < 0.01 ? 4 : 2, $_->[1] / $base for @rows;
print "\nResident memory per FastCGI process (MB):";
printf " %s %s;", $_, join('/', map { sprintf '%.1f', $_ } @{$rss{$_}})
	for sort keys %rss;
printf "\nLogin (Argon2id t=2, m=19456 KiB, p=1), %d in a row: %.1f ms each\n",
	$n, $login_ms;
printf "Login throttling in PostgreSQL (pgbench, 1 client): attempt + "
	. "success %.3f ms per login, the login's user lookup %.3f ms "
	. "(%.1fx); %.1f%% of one login through the API\n",
	1000 / $pg_throttle, 1000 / $pg_find, $pg_find / $pg_throttle,
	1000 / $pg_throttle / $login_ms * 100;
