#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/wsguard - what the WebSocket front (ws/xmhub-ws-guard) costs, in
# one run on loopback (this machine is shared and noisy: the ratios mean
# more than the figures).
#
# - Latency: the round trip of one small batch and its ack (send, wait
#   for the 4-byte ack, send the next), straight to websocketd and
#   through the front, and through lighttpd as clients reach it; the
#   paths take turns, round trip by round trip.  Then the
#   same for a 4-byte message echoed by websocketd running cat, which
#   leaves the relay as the only difference.
# - Memory: the front's resident size (VmRSS) before and with 100 idle
#   upgraded connections (each has sent one message and got its echo),
#   then after 16 KiB each way on each (both buffers used); websocketd's
#   for comparison.
#
# Runs from a build tree (make bench-wsguard): a throwaway stack through
# t/lib/Xmhub/Stack.pm, plus a second front and websocketd of its own.
# BENCH_TRIPS (1500 round trips per path), BENCH_IDLE (100
# connections).
use strict;
use warnings;
use HTTP::Tiny;
use JSON::PP;
use IO::Socket::INET;
use POSIX qw(setsid);
use Time::HiRes qw(time sleep);
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Stack;
use Xmhub::Test qw(xmhub_json);
use Xmhub::WS;
use Xmhub::XMBP qw(batch);

my $trips = $ENV{BENCH_TRIPS} || 1500;
my $idle_n = $ENV{BENCH_IDLE} || 100;
my $build = $ENV{XMHUB_BUILDDIR};

my $s = Xmhub::Stack->start;
$ENV{XMHUB_ENV_FILE} = $s->env_file;
delete $ENV{XMHUB_DATABASE_URL};

sub cli { return xmhub_json([@_]) }
my $fac = cli(qw(facility create --name Bench --slug bench))->{id};
my $key = cli('api-key', 'create', '--facility', $fac, '--name', 'bench',
	'--scopes', 'ingest')->{key};
my $http = HTTP::Tiny->new(timeout => 30);
my $uid = 0;
sub session {
	my $r = $http->post($s->url('/api/v1/ingest/sessions'), {
		headers => {'content-type' => 'application/json',
			'x-api-key' => $key},
		content => encode_json({device_uid => ++$uid, streams => [
		    {stream_index => 0, name => 'a', value_type => 'f32'}]})});
	die "session: $r->{status} $r->{content}\n" unless $r->{success};
	return decode_json($r->{content})->{id};
}

sub median {
	my @v = sort { $a <=> $b } @_;
	return $v[$#v / 2];
}

sub rss_kb {
	open my $f, '<', "/proc/$_[0]/status" or return 0;
	while (<$f>) {
		return $1 if /^VmRSS:\s+(\d+) kB/;
	}
	return 0;
}

# rtt($ws, $message, $check): one round trip on $ws, in seconds.
sub rtt {
	my ($ws, $message, $check) = @_;
	my $frame = Xmhub::WS::frame(2, $message);
	my $t0 = time;
	$ws->write_raw($frame) or die "write failed\n";
	my ($type, $payload) = $ws->read_message(30);
	my $t = time - $t0;
	die "round trip: $type\n" unless $check->($type, $payload);
	return $t;
}

# Round trips taking turns over the paths (the first of each turn
# rotates), so that the machine's drift hits all of them alike; per
# path its times.
sub compare {
	my ($paths, $make, $check) = @_;
	my %t;
	for my $i (0 .. $trips - 1) {
		my $k = $i % @$paths;
		for my $p (@$paths[$k .. $#$paths], @$paths[0 .. $k - 1]) {
			push @{$t{$p->[0]}}, rtt($p->[1], $make->($i), $check);
		}
	}
	return \%t;
}

# --- ingest: a batch and its ack ---
my $q = '/api/v1/ingest/ws?session_id=';
my @ingest;
for my $p (['websocketd', $s->wsd_port], ['front', $s->ws_port],
	['lighttpd, front', $s->port]) {
	my ($ws, $st) = Xmhub::WS->connect($p->[1], $q . session(),
		{'X-Api-Key' => $key});
	die "$p->[0]: upgrade $st\n" unless $ws;
	push @ingest, [$p->[0], $ws, 0];
}
my $seq = 0;
my $t_ingest = compare(\@ingest,
	sub { batch($seq++ % 65536, undef, [0, 'f32', [map { [$_, $_] } 1 .. 10]]) },
	sub { $_[0] eq 'binary' && length $_[1] == 4 });
$_->[1]->close for @ingest;

# --- a front and websocketd of our own, running cat ---
sub daemon {
	my ($log, @argv) = @_;
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		setsid();
		open STDIN, '<', '/dev/null';
		open STDOUT, '>>', $log or die "$log: $!";
		open STDERR, '>&', \*STDOUT;
		exec @argv or die "exec $argv[0]: $!";
	}
	return $pid;
}
my $echo_port = Xmhub::Stack::free_port();
my $front_port = Xmhub::Stack::free_port();
my $dir = $s->var . '/log';
my $wsd = daemon("$dir/bench-websocketd.log", 'websocketd',
	'--address=127.0.0.1', "--port=$echo_port", '--binary', 'cat');
my $front = daemon("$dir/bench-front.log", "$build/ws/xmhub-ws-guard",
	"--listen=127.0.0.1:$front_port", "--backend=127.0.0.1:$echo_port");
END { kill 'TERM', -$_ for grep { $_ } $front, $wsd }
for my $port ($echo_port, $front_port) {
	for (1 .. 100) {
		last if IO::Socket::INET->new("127.0.0.1:$port");
		sleep 0.05;
	}
}

my @echo = map {
	my ($ws, $st) = Xmhub::WS->connect($_->[1], '/', {});
	die "$_->[0]: upgrade $st\n" unless $ws;
	[$_->[0], $ws];
} ['websocketd', $echo_port], ['front', $front_port];
my $t_echo = compare(\@echo, sub { pack 'N', $_[0] },
	sub { $_[0] eq 'binary' && length $_[1] == 4 });
$_->[1]->close for @echo;

# --- memory ---
sleep 0.5;
my %rss = (front0 => rss_kb($front), wsd0 => rss_kb($wsd));
my @idle;
for my $i (1 .. $idle_n) {
	my ($ws, $st) = Xmhub::WS->connect($front_port, '/', {});
	die "idle $i: upgrade $st\n" unless $ws;
	$ws->send_binary("idle $i");
	my ($type) = $ws->read_message(30);
	die "idle $i: $type\n" unless $type eq 'binary';
	push @idle, $ws;
}
sleep 0.5;
@rss{qw(front1 wsd1)} = (rss_kb($front), rss_kb($wsd));
for my $ws (@idle) {
	$ws->send_binary('f' x 16384);
	my $got = 0;
	while ($got < 16384) {
		my ($type, $payload) = $ws->read_message(30);
		die "full: $type\n" unless $type eq 'binary';
		$got += length $payload;
	}
}
sleep 0.5;
@rss{qw(front2 wsd2)} = (rss_kb($front), rss_kb($wsd));
$_->close for @idle;

# --- report ---
sub us { sprintf '%.0f', $_[0] * 1e6 }
printf "%d round trips per path, taking turns; medians\n\n", $trips;
print "| path | round trip µs (median) | mean µs | vs websocketd | added µs |\n"
    . "|---|---:|---:|---:|---:|\n";
for my $set (['ingest batch + ack', $t_ingest, \@ingest],
	['4-byte echo (cat)', $t_echo, \@echo]) {
	my ($name, $t, $paths) = @$set;
	my $base = median(@{$t->{websocketd}});
	for my $p (@$paths) {
		my @v = @{$t->{$p->[0]}};
		my $m = median(@v);
		my $mean = 0;
		$mean += $_ / @v for @v;
		printf "| %s: %s | %s | %s | %.2fx | %s |\n", $name, $p->[0],
		    us($m), us($mean), $m / $base, us($m - $base);
	}
}
printf "\nMemory (VmRSS, kB) of the front and of websocketd (cat):\n\n"
    . "| | front | websocketd |\n|---|---:|---:|\n"
    . "| no connection | %d | %d |\n"
    . "| %d idle connections (one small message each) | %d | %d |\n"
    . "| the same after 16 KiB each way on each | %d | %d |\n"
    . "\nper connection: front %.1f kB idle, %.1f kB with both buffers "
    . "used; websocketd %.1f kB idle\n",
    @rss{qw(front0 wsd0)}, $idle_n, @rss{qw(front1 wsd1 front2 wsd2)},
    ($rss{front1} - $rss{front0}) / $idle_n,
    ($rss{front2} - $rss{front0}) / $idle_n,
    ($rss{wsd1} - $rss{wsd0}) / $idle_n;
