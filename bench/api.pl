#!/usr/bin/perl
# bench/api - the platform's authenticated reads under load, next to
# lighttpd serving a small static file from the same server in the same
# run (this machine is shared and noisy: only the ratios mean much).
#
# Runs from a build tree (make bench): a throwaway stack through
# t/lib/Xmhub/Stack.pm, wrk on loopback, then the resident memory of
# each FastCGI process and the latency of a login (Argon2id).
use strict;
use warnings;
use HTTP::Tiny;
use JSON::PP;
use Time::HiRes qw(time);
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Stack;
use Xmhub::Test qw(run bin);
use Xmhub::Wrk qw(wrk wrk_program);

my $seconds = $ENV{BENCH_SECONDS} || 10;
my $conns = $ENV{BENCH_CONNECTIONS} || 16;
wrk_program();

my $s = Xmhub::Stack->start;
$ENV{XMHUB_ENV_FILE} = $s->env_file;
delete $ENV{XMHUB_DATABASE_URL};

sub cli {
	my ($stdin, @args) = @_;
	my ($st, $out, $err) = run([bin('xmhub'), @args], $stdin);
	die "xmhub @args: $err" if $st != 0;
	return decode_json($out);
}
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
printf "| %s | %.0f | %.2f | %.2fx |\n", $_->[0], $_->[1], $_->[2],
	$_->[1] / $base for @rows;
print "\nResident memory per FastCGI process (MB):";
printf " %s %s;", $_, join('/', map { sprintf '%.1f', $_ } @{$rss{$_}})
	for sort keys %rss;
printf "\nLogin (Argon2id t=2, m=19456 KiB, p=1), %d in a row: %.1f ms each\n",
	$n, $login_ms;
