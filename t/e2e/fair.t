#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Fair shares between facilities (doc/security.md "Fair shares"): two
# facilities competing on one stack.  Facility A holds its one render
# (XMHUB_RENDERS_PER_FACILITY, 1) with a WAV of a sparse audio stream
# that its client does not read: one more render of A is a 429 with
# Retry-After, while B's render and B's upload list are answered at once
# and lighttpd's temp folder stays small (the answer is streamed as the
# client reads, not spooled whole); killing the process that holds A's
# slot (SIGKILL) frees it.  WebSocket: A's key and A at their limits
# (XMHUB_WS_PER_KEY 1, XMHUB_WS_PER_FACILITY 2) get 429 before the
# upgrade, B connects.
use strict;
use warnings;
use Test::More;
use File::Find qw(find);
use IO::Socket::IP;
use MIME::Base64 qw(encode_base64);
use Socket qw(SOL_SOCKET SO_RCVBUF);
use Time::HiRes qw(time sleep);
use Xmhub::Ingest;
use Xmhub::Platform qw(is_error);
use Xmhub::WS;

my $p = Xmhub::Platform->start(env => {XMHUB_WS_PER_FACILITY => 2,
	XMHUB_WS_PER_KEY => 1});
my $stack = $p->stack;
my ($fa, $fb) = ($p->facility('Fair A'), $p->facility('Fair B'));
my $ta = $p->token($p->user('facility_admin', $fa));
my $tb = $p->token($p->user('facility_admin', $fb));
my ($ka, $ka2, $kb) = ($p->api_key($ta, 'ingest'), $p->api_key($ta, 'ingest'),
	$p->api_key($tb, 'ingest'));
my ($ina, $inb) = (Xmhub::Ingest->new($p, $ka), Xmhub::Ingest->new($p, $kb));

# audio($key, $rate, $channels, @frames as [t_us, bytes]): a session with
# one PCM audio stream holding those frames; its id.
sub audio {
	my ($in, $key, $rate, $ch, @frames) = @_;
	my ($st, $s) = $p->req(POST => '/api/v1/ingest/sessions', key => $key,
		json => {device_uid => 5, streams => [{stream_index => 0,
			name => 'mic', value_type => 'bytes',
			audio => {codec => 'pcm_s16le', sample_rate_hz => $rate,
				channels => $ch}}]});
	die "session: $st\n" if $st != 201;
	$in->send($s->{id}, 1, [0, 'bytes',
		[map { [$_->[0], encode_base64($_->[1], '')] } @frames]]);
	return $s->{id};
}

sub wav_path {
	my ($sid, $q) = @_;
	return "/api/v1/metadata/sessions/$sid/streams/0/samples?format=wav"
	    . ($q // '');
}

# (status, seconds) of a GET.
sub timed {
	my ($path, $token) = @_;
	my $t0 = time;
	my ($st) = $p->req(GET => $path, token => $token);
	return ($st, time - $t0);
}

# Bytes of the files under $dir.
sub du {
	my ($dir) = @_;
	my $n = 0;
	find(sub { $n += -s $_ if -f $_ }, $dir);
	return $n;
}

# The pid of a process holding $file open (a slot's lock), else undef.
sub holder {
	my ($file) = @_;
	for my $fd (glob '/proc/[0-9]*/fd/*') {
		my $to = readlink $fd // next;
		return $1 if $to eq $file && $fd =~ m{^/proc/(\d+)/};
	}
	return undef;
}

# A's sparse stream: 192 kHz, 8 channels, two tiny frames 100 s apart;
# its first 60 s are a 184 MB WAV, nearly all silence.
my $frame = pack('C s<*', 1, (100) x (8 * 4));
my $sparse = audio($ina, $ka, 192000, 8, [1_000_000, $frame],
	[101_000_000, $frame]);
my $tone = pack('C s<*', 1, map { $_ * 10 } 0 .. 799);
my $small_a = audio($ina, $ka, 8000, 1, [1_000_000, $tone]);
my $small_b = audio($inb, $kb, 8000, 1, [1_000_000, $tone]);
is(($p->req(GET => wav_path($small_a), token => $ta))[0], 200,
    'A renders while it holds nothing');

# --- A holds its render with a client that reads nothing ---
my $hold = IO::Socket::IP->new(PeerHost => '127.0.0.1',
	PeerPort => $stack->port, Proto => 'tcp')
    or die "connect: $@\n";
setsockopt($hold, SOL_SOCKET, SO_RCVBUF, 16384);
print $hold 'GET ' . wav_path($sparse, '&from_us=1000000&to_us=61000000')
    . " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer $ta\r\n"
    . "Connection: close\r\n\r\n";
my ($st, $body, $res);
for (1 .. 50) {
	($st, $body, $res) = $p->req(GET => wav_path($small_a), token => $ta);
	last if $st == 429;
	sleep 0.1;
}
is_error($st, $body, 429, 'A at its render limit: one more is a 429');
is($res->{headers}{'retry-after'}, 5, '... with Retry-After');
like($body->{detail} // '', qr/XMHUB_RENDERS_PER_FACILITY/,
    '... naming the setting');
is_error((($p->req(GET => "/api/v1/metadata/sessions/$small_a/streams/0/"
		. 'spectrogram.png', token => $ta))[0, 1]), 429,
    'a spectrogram of A is a render too');

my ($bst, $bt) = timed(wav_path($small_b), $tb);
is($bst, 200, 'B renders meanwhile');
cmp_ok($bt, '<', 2, "... at once ($bt s)");
my ($lst, $lt) = timed('/api/v1/uploads', $tb);
is($lst, 200, 'B lists its uploads meanwhile');
cmp_ok($lt, '<', 2, "... at once ($lt s)");

# The held answer is 184 MB: spooled whole, the temp folder would grow
# by it as fast as the program writes; streamed, lighttpd holds a few
# hundred KiB while the client reads nothing.
sleep 2;
my $tmp = du($stack->var . '/tmp');
cmp_ok($tmp, '<', 4 << 20,
    "lighttpd's temp folder while the answer is pending: $tmp bytes");
is(($p->req(GET => wav_path($small_a), token => $ta))[0], 429,
    'the answer is still pending: A still at its limit');

# --- kill -9 of the holder frees its slot ---
my $slot = $stack->var . "/run/slots/render/$fa.0";
my $pid = holder($slot);
ok($pid, "a metadata process holds A's slot ($slot)");
kill 'KILL', $pid if $pid;
for (1 .. 50) {
	($st) = $p->req(GET => wav_path($small_a), token => $ta);
	last if $st == 200;
	sleep 0.1;
}
is($st, 200, 'the holder killed (SIGKILL): A renders again');
close $hold;

# --- WebSocket connections ---
# ws($key, $in, $fac, $n): (client, status, head, body) of an upgrade;
# once upgraded, waits until $fac's connections' programs hold $n
# shares (websocketd answers the upgrade before its child has started).
sub ws {
	my ($key, $in, $fac, $n) = @_;
	my $sid = $in->session(7, [0, 'f32'])->{id};
	my @r = Xmhub::WS->connect($stack->port,
		"/api/v1/ingest/ws?session_id=$sid", {'X-Api-Key' => $key});
	for (1 .. 50) {
		last if !$r[0] || grep({ holder($_) }
			glob $stack->var . "/run/slots/ws/$fac.*") == $n;
		sleep 0.1;
	}
	return @r;
}
my ($w1, $s1) = ws($ka, $ina, $fa, 1);
is($s1, 101, "A's key connects");
my (undef, $s2, $h2, $b2) = ws($ka, $ina, $fa, 1);
is($s2, 429, "A's key at its limit (1): 429 before the upgrade");
like($h2, qr/^Retry-After: 5\r$/mi, '... with Retry-After');
like($b2, qr/"detail":".*XMHUB_WS_PER_KEY/, '... naming the setting');
my ($w3, $s3) = ws($ka2, $ina, $fa, 2);
is($s3, 101, "A's other key connects (A holds 2)");
my (undef, $s4, undef, $b4) = ws($ka2, $ina, $fa, 2);
is($s4, 429, 'A at its limit (2): 429');
like($b4, qr/XMHUB_WS_PER_FACILITY/, '... naming the facility setting');
my ($w5, $s5) = ws($kb, $inb, $fb, 1);
is($s5, 101, 'B connects meanwhile');
$_->close for grep { defined } $w1, $w3, $w5;

done_testing;
