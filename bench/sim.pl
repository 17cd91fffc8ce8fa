#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/sim - is `xmhub sim` the bottleneck of an ingest benchmark?  One
# device over one connection, batches of 4 streams x 250 samples (sim's
# first four kinds: sine f32, noise f32, random walk f64, counter i64;
# 10,030 bytes), one batch in flight, sent as fast as acks come:
#
# - `xmhub sim --devices 1 --rate 0` over HTTP and over a WebSocket;
# - a raw-socket sender of the same batches (encoded before the clock
#   starts, sent on a kept socket with the fewest bytes of HTTP or
#   WebSocket framing, the answer read and dropped): the floor the server
#   allows.
#
# Reported: batches/s of each and the ratio sim/raw (1.00 means the
# simulator costs nothing the server notices), and the CPU time sim
# spends per batch (its own process, from times()) next to the raw
# sender's.  Runs from a build tree (make bench-sim) on a throwaway stack;
# BENCH_BATCHES (2000) per run, BENCH_ROUNDS (2) rounds alternating the
# order.
use strict;
use warnings;
use IO::Socket::INET;
use Socket qw(IPPROTO_TCP TCP_NODELAY);
use JSON::PP;
use Time::HiRes qw(time);
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Stack;
use Xmhub::Test qw(run xmhub_json);
use Xmhub::WS;

my $n = $ENV{BENCH_BATCHES} || 2000;
my $rounds = $ENV{BENCH_ROUNDS} || 2;
my $s = Xmhub::Stack->start;
$ENV{XMHUB_ENV_FILE} = $s->env_file;
delete $ENV{XMHUB_DATABASE_URL};

my $fac = xmhub_json([qw(facility create --name Bench --slug bench)])->{id};
my $key = xmhub_json(['api-key', 'create', '--facility', $fac, '--name',
	'bench', '--scopes', 'ingest'])->{key};
my $url = $s->url('');

sub session {
	my ($uid) = @_;
	my $sock = IO::Socket::INET->new("127.0.0.1:" . $s->port) or die $!;
	my @types = qw(f32 f32 f64 i64);
	my $body = encode_json({device_uid => $uid, streams => [map {
		{stream_index => $_, name => "s$_", value_type => $types[$_]} }
		0 .. 3]});
	my ($st, $b) = exchange($sock, 'POST', '/api/v1/ingest/sessions',
		'application/json', $body);
	die "session: $st $b\n" if $st != 201;
	return decode_json($b)->{id};
}

# exchange($sock, $method, $path, $type, $body): (status, body) of one
# request on a kept connection (Content-Length or chunked answers).
sub exchange {
	my ($sock, $m, $path, $type, $body) = @_;
	my $req = "$m $path HTTP/1.1\r\nHost: x\r\nX-Api-Key: $key\r\n"
	    . "Content-Type: $type\r\nContent-Length: " . length($body)
	    . "\r\n\r\n$body";
	# One write (print would cut it at PerlIO's buffer size).
	syswrite($sock, $req) == length $req or die "write: $!\n";
	local $/ = "\r\n\r\n";
	my $head = <$sock> // die "no answer\n";
	my ($st) = $head =~ m{^HTTP/1\.\d (\d+)};
	my $out = '';
	if ($head =~ /^Content-Length: *(\d+)/mi) {
		read($sock, $out, $1) if $1 > 0;
	} elsif ($head =~ /^Transfer-Encoding: *chunked/mi) {
		local $/ = "\r\n";
		while (defined(my $line = <$sock>)) {
			my $len = hex $line;
			last if $len == 0;
			read($sock, my $part, $len);
			$out .= $part;
			<$sock>;
		}
		<$sock>;
	}
	return ($st, $out);
}

# The batches sim sends, encoded here (values need not match sim's, the
# sizes and types do).
sub batches {
	my @b;
	for my $k (0 .. $n - 1) {
		my $x = pack('a4 C C n n', 'XMBP', 1, 0, $k & 0xffff, 4);
		for my $m (0 .. 3) {
			my $t = (1, 1, 0, 2)[$m];
			$x .= pack('n C n', $m, $t, 250);
			for my $j (0 .. 249) {
				my $ts = 1_700_000_000_000_000 + ($k * 250 + $j) * 1000;
				$x .= $m < 2 ? pack('Q> f>', $ts, sin($j))
				    : $m == 2 ? pack('Q> d>', $ts, $j / 3)
				    : pack('Q> q>', $ts, $k * 250 + $j);
			}
		}
		push @b, $x;
	}
	return \@b;
}
my $batches = batches();

# cpu(): this process's and its children's CPU seconds so far.
sub cpu { my @t = times; return ($t[0] + $t[1], $t[2] + $t[3]) }

sub raw_http {
	my $sid = session(100 + int rand 1_000_000);
	my $sock = IO::Socket::INET->new("127.0.0.1:" . $s->port) or die $!;
	setsockopt($sock, IPPROTO_TCP, TCP_NODELAY, 1);
	my ($c0) = cpu();
	my $t0 = time;
	for my $b (@$batches) {
		my ($st) = exchange($sock, 'POST',
			"/api/v1/ingest/sessions/$sid/data",
			'application/octet-stream', $b);
		die "raw http: $st\n" if $st != 200;
	}
	my $secs = time - $t0;
	my ($c1) = cpu();
	return ($n / $secs, ($c1 - $c0) / $n);
}

# A lost connection is made again and the batch sent again, as sim does
# (doc/sender.md: the server's WebSocket program ends connections after
# about 1 MB).
sub raw_ws {
	my $sid = session(100 + int rand 1_000_000);
	my $ws;
	my $connect = sub {
		($ws, my $st) = Xmhub::WS->connect($s->port,
			"/api/v1/ingest/ws?session_id=$sid", {'X-Api-Key' => $key});
		die "raw ws: $st\n" unless $ws;
	};
	my ($c0) = cpu();
	my $t0 = time;
	$connect->();
	for my $b (@$batches) {
		for my $try (1, 2) {
			$ws->send_binary($b);
			my ($type, $p) = $ws->read_message(30);
			last if $type eq 'binary' && length $p == 4;
			die "raw ws: $type\n" if $try == 2;
			$connect->();
		}
	}
	my $secs = time - $t0;
	my ($c1) = cpu();
	$ws->close;
	return ($n / $secs, ($c1 - $c0) / $n);
}

sub sim {
	my (@ws) = @_;
	my (undef, $c0) = cpu();
	my ($st, $out, $err) = run([$ENV{XMHUB_BIN}, 'sim', '--url', $url,
		'--key', $key, '--devices', 1, '--streams', 4, '--rate', 0,
		'--batch', 250, '--samples', 250 * $n, '--json',
		'--device-uid', 100 + int rand 1_000_000, @ws]);
	die "sim: exit $st: $err$out" if $st != 0;
	my (undef, $c1) = cpu();
	my $r = decode_json($out);
	die "sim: $r->{errors} errors\n" if $r->{errors};
	return ($r->{batches_per_s}, ($c1 - $c0) / $n);
}

my %sum;
for my $round (1 .. $rounds) {
	my @order = $round % 2 ? qw(sim raw) : qw(raw sim);
	for my $tr (qw(http ws)) {
		for my $who (@order) {
			my ($rate, $cpu) = $who eq 'sim'
			    ? sim($tr eq 'ws' ? ('--ws') : ())
			    : $tr eq 'ws' ? raw_ws() : raw_http();
			push @{$sum{"$who $tr"}}, [$rate, $cpu];
		}
	}
}

sub mean {
	my ($k, $i) = @_;
	my $t = 0;
	$t += $_->[$i] for @{$sum{$k}};
	return $t / @{$sum{$k}};
}

printf "bench/sim: %d batches of 4 x 250 samples per run, %d rounds, "
    . "one connection, one batch in flight\n\n", $n, $rounds;
printf "| %-28s | %10s | %13s | %9s |\n", 'sender', 'batches/s',
    'CPU/batch µs', 'vs raw';
printf "|%s|%s|%s|%s|\n", '-' x 30, '-' x 12, '-' x 15, '-' x 11;
for my $tr (qw(http ws)) {
	my $raw = mean("raw $tr", 0);
	for my $who (qw(raw sim)) {
		my $k = "$who $tr";
		printf "| %-28s | %10.0f | %13.0f | %8.2fx |\n",
		    ($who eq 'raw' ? 'raw socket (Perl)' : 'xmhub sim')
		    . ($tr eq 'ws' ? ', WebSocket' : ', HTTP'),
		    mean($k, 0), mean($k, 1) * 1e6, mean($k, 0) / $raw;
	}
}
