#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/metrics - the cost of metrics and request logs (doc/metrics.md):
# an authenticated read (GET /api/auth/me) and HTTP ingest with
# XMHUB_METRICS and XMHUB_LOG_REQUESTS on, against both off, in the same
# run.  Rounds alternate off and on (the stack restarted with the
# settings each time); each round's on/off ratio compares two runs a few
# seconds apart, so that the drift of this shared machine falls on both,
# and the median of the rounds' ratios is the result.  Aim: under 3 %
# apart.  This machine is shared, so requests/s swing with the others'
# load; the CPU time the program's processes spent per request (from
# /proc, before and after each case) is what the ratio is taken of, and
# requests/s are shown beside it.
use strict;
use warnings;
use HTTP::Tiny;
use JSON::PP;
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Stack;
use Xmhub::Test qw(xmhub_json);
use Xmhub::Wrk qw(wrk_program);

my $seconds = $ENV{BENCH_SECONDS} || 5;
my $conns = $ENV{BENCH_CONNECTIONS} || 16;
my $rounds = $ENV{BENCH_ROUNDS} || 5;
wrk_program();

my $s = Xmhub::Stack->start;
$ENV{XMHUB_ENV_FILE} = $s->env_file;
delete $ENV{XMHUB_DATABASE_URL};

sub cli { my ($stdin, @args) = @_; return xmhub_json(\@args, $stdin) }
my $fac = cli(undef, qw(facility create --name Bench --slug bench))->{id};
cli("bench-password\n", 'user', 'create', '--email', 'bench@example.org',
	'--password', '-', '--role', 'facility_admin', '--facility', $fac);
my $key = cli(undef, 'api-key', 'create', '--facility', $fac, '--name',
	'bench', '--scopes', 'ingest')->{key};

my $http = HTTP::Tiny->new(timeout => 30);
my $r = $http->post($s->url('/api/auth/login'), {
	headers => {'content-type' => 'application/json'},
	content => encode_json({email => 'bench@example.org',
		password => 'bench-password'})});
die "login: $r->{status} $r->{content}\n" if $r->{status} != 200;
my $token = decode_json($r->{content})->{access_token};

# Ingest: a 4 x 250 f32 batch to 64 sessions in turn (bench/ingest.pl's
# "many sessions" case).
sub session {
	my $res = $http->post($s->url('/api/v1/ingest/sessions'), {
		headers => {'content-type' => 'application/json',
			'x-api-key' => $key},
		content => encode_json({device_uid => 7, streams => [map {
			{stream_index => $_, name => "ch$_",
			    value_type => 'f32'} } 0 .. 3]})});
	die "session: $res->{status}\n" if $res->{status} != 201;
	return decode_json($res->{content})->{id};
}
my $batch = pack('a4 C C n N n', 'XMBP', 1, 1, 1, 7, 4);
for my $ch (0 .. 3) {
	$batch .= pack('n C n', $ch, 1, 250);
	$batch .= pack('Q> f>', 1_700_000_000_000_000 + $_ * 10_000, $_ / 2)
	    for 0 .. 249;
}
my $body = $s->var . '/tmp/batch.bin';
open(my $bf, '>:raw', $body) or die "$body: $!";
print $bf $batch;
close $bf;
my @sids = map { session() } 1 .. 64;
my $lua = $s->var . '/tmp/ingest.lua';
open(my $lf, '>', $lua) or die "$lua: $!";
print $lf <<"LUA", map({ "\"/api/v1/ingest/sessions/$_/data\",\n" } @sids),
local f = assert(io.open("$body", "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/octet-stream"
wrk.headers["X-Api-Key"] = "$key"
local paths = {
LUA
    <<'LUA';
}
local n = 0
request = function()
	n = n + 1
	return wrk.format(nil, paths[n % #paths + 1])
end
LUA
close $lf;

my @cases = (
	['GET /api/auth/me (JWT)', '/api/auth/me',
		['-H', "Authorization: Bearer $token"], 'auth'],
	['POST ingest data (4 x 250 f32)', '/', ['-s', $lua], 'ingest'],
);

# The CPU seconds so far of the stack's FastCGI processes named $name
# (lighttpd's children), live ones only: read right before and after a
# case, whose processes live through it.
sub cpu_of {
	my ($name) = @_;
	open my $f, '<', $s->var . '/run/lighttpd.pid' or die "lighttpd.pid: $!";
	chomp(my $lpid = <$f> // '');
	my $ticks = 0;
	for my $stat (glob '/proc/[0-9]*/stat') {
		open my $sf, '<', $stat or next;
		my $line = <$sf> // '';
		next unless $line =~ /^\d+ \(\Q$name\E\) (.*)/;
		my @f = split ' ', $1;
		# After the name: state ppid ... utime (12th) stime (13th).
		$ticks += $f[11] + $f[12] if $f[1] == $lpid;
	}
	return $ticks / 100;	# USER_HZ
}
my (%rps, %cpu);	# {case}{on|off} = [per round]
for my $round (1 .. $rounds) {
	for my $mode (qw(off on)) {
		my $v = $mode eq 'off' ? 'off' : undef;
		$s->restart(env => {XMHUB_METRICS => $v,
			XMHUB_LOG_REQUESTS => $v});
		for my $c (@cases) {
			my ($name, $path, $args, $prog) = @$c;
			my $c0 = cpu_of($prog);
			my ($rps) = Xmhub::Wrk::wrk($s->url($path),
				conns => $conns, seconds => $seconds,
				name => $name, args => $args);
			my $c1 = cpu_of($prog);
			push @{$rps{$name}{$mode}}, $rps;
			# CPU microseconds per request.
			push @{$cpu{$name}{$mode}},
			    ($c1 - $c0) * 1e6 / ($rps * $seconds);
		}
	}
}

sub median {
	my @v = sort { $a <=> $b } @_;
	return @v % 2 ? $v[$#v / 2] : ($v[@v / 2 - 1] + $v[@v / 2]) / 2;
}
printf "wrk: 2 threads, %d connections, %d s per case, %d rounds "
    . "alternating off/on, loopback\n", $conns, $seconds, $rounds;
printf "%-34s %10s %10s %8s %8s %7s\n", 'case', 'off req/s', 'on req/s',
    'off us', 'on us', 'on/off';
for my $c (@cases) {
	my $n = $c->[0];
	my ($off, $on) = @{$cpu{$n}}{qw(off on)};
	my @ratio = map { $on->[$_] / $off->[$_] } 0 .. $#$off;
	printf "%-34s %10.0f %10.0f %8.1f %8.1f %7.3f\n", $n,
	    median(@{$rps{$n}{off}}), median(@{$rps{$n}{on}}), median(@$off),
	    median(@$on), median(@ratio);
	printf "  CPU us/request off: %s\n  on: %s\n  ratios: %s\n",
	    (map { join(' ', map { sprintf '%.1f', $_ } @$_) } $off, $on),
	    join(' ', map { sprintf '%.3f', $_ } @ratio);
}
print "us: CPU time of the program's processes per request (lighttpd, "
    . "PostgreSQL and wrk not included); on/off: the median of the rounds' "
    . "ratios of it\n";
my $log = -s ($s->var . '/log/programs.log') // 0;
printf "programs.log after the run: %.1f MB\n", $log / 1048576;
$s->stop;
