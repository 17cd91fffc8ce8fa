#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# `xmhub sim` against a real stack (doc/sender.md "xmhub sim"): 50
# devices over WebSocket for 20 s with zero errors and no missed batch,
# every stream's read-back count equal to what the report says was sent,
# the generated values as documented (the counter counts, audio samples
# are raw PCM frames); a short run over HTTP with --samples; the status
# line on a terminal; a refused key.
use strict;
use warnings;
use Test::More;
use JSON::PP;
use MIME::Base64 qw(decode_base64);
use Xmhub::Ingest;
use Xmhub::Platform;
use Xmhub::Pty qw(stderr_on_tty);
use Xmhub::Test qw(xmhub);

# 50 WebSocket devices on one key: over the shares of a facility and of
# a key (16 and 8 by default; doc/security.md "Fair shares").
my $p = Xmhub::Platform->start(env => {XMHUB_WS_PER_FACILITY => 56,
	XMHUB_WS_PER_KEY => 56});
my $stack = $p->stack;
my $fac = $p->facility('Sim');
my $token = $p->token($p->user('facility_admin', $fac));
my $key = $p->api_key($token, 'ingest');
my $in = Xmhub::Ingest->new($p, $key);
my $url = $stack->url('');

sub sim {
	my ($st, $out, $err) = xmhub(['sim', '--url', $url, '--key', $key,
		'--json', @_]);
	my $r = eval { JSON::PP->new->utf8->decode($out) };
	return ($st, $r, $err);
}

sub meta {
	my ($sid) = @_;
	my ($st, $b) = $p->req(GET => "/api/v1/metadata/sessions/$sid",
		token => $token);
	die "metadata: $st\n" if $st != 200;
	return $b;
}

# 50 devices over WebSocket for 20 s.
{
	my ($st, $r, $err) = sim('--ws', '--devices', 50, '--streams', 5,
		'--rate', 50, '--batch', 25, '--duration', 20);
	is($st, 0, '50 devices over WebSocket for 20 s: exit 0') or diag $err;
	is($r->{errors}, 0, 'zero errors');
	is($err, '', 'nothing on standard error (not a terminal, no error)');
	is($r->{missed_batches}, 0, 'no missed batch');
	is(scalar @{$r->{sessions}}, 50, '50 sessions');
	# 20 s at 50 Hz: 1000 samples a stream, in 40 batches of 25.
	is($r->{batches}, 50 * 40, '40 batches a device');
	is($r->{values}, 50 * 5 * 1000, '1000 values a stream');
	ok($r->{batches_per_s} > 0 && $r->{ack_p50_ms} > 0 &&
		$r->{ack_p99_ms} >= $r->{ack_p50_ms}, 'rates and latencies reported')
		or diag explain $r;
	diag sprintf 'ack p50 %.1f ms, p99 %.1f ms, %.0f batches/s',
		@$r{qw(ack_p50_ms ack_p99_ms batches_per_s)};
	my ($bad, $total) = (0, 0);
	for my $s (@{$r->{sessions}}) {
		my $m = meta($s->{id});
		$bad++ unless $m->{status} eq 'closed' &&
			$m->{total_samples} == $s->{values} &&
			$s->{stored_samples} == $s->{values} &&
			$m->{missed_batches} == 0;
		$total += $m->{total_samples};
	}
	is($bad, 0, 'every session closed, its total_samples what was sent');
	is($total, $r->{values}, 'the stored total is the reported one');
	# Read back the streams of three devices, sample by sample.
	my $counts_ok = 1;
	for my $s (@{$r->{sessions}}[0, 24, 49]) {
		for my $i (0 .. 4) {
			my @all = $in->read_all($token, $s->{id}, $i, limit => 100000);
			$counts_ok = 0 unless @all == 1000;
		}
	}
	ok($counts_ok, 'three devices: 1000 samples read back per stream');
	my $sid = $r->{sessions}[0]{id};
	my @counter = $in->read_all($token, $sid, 3);
	is_deeply([map { $_->[1] } @counter], [0 .. 999],
		'the counter stream counts 0 to 999');
	my @ts = map { $_->[0] } @counter;
	is($ts[-1] - $ts[0], 999 * 20000, '50 Hz: timestamps 20 ms apart');
	my @audio = $in->read_all($token, $sid, 4);
	my $frame = decode_base64($audio[0][1]);
	is(length $frame, 1 + 2 * 160, 'an audio sample: codec id and 160 PCM '
		. 'samples (8 kHz at 50 Hz)');
	is(ord $frame, 1, 'codec id 0x01 (raw PCM)');
	is_deeply(meta($sid)->{streams}[4]{audio},
		{codec => 'pcm_s16le', sample_rate_hz => 8000, channels => 1},
		'the audio stream is declared as such (doc/xmbp-audio.md)');
	my @pcm = unpack 's<*', substr $frame, 1;
	ok((grep { $_ > 4000 } @pcm) && (grep { $_ < -4000 } @pcm),
		'the PCM holds a tone');
}

# HTTP, a sample count.
{
	my ($st, $r, $err) = sim('--devices', 3, '--streams', 7, '--rate', 0,
		'--samples', 1234, '--batch', 100);
	is($st, 0, 'HTTP, --samples 1234 unpaced: exit 0') or diag $err;
	is($r->{values}, 3 * 7 * 1234, 'every stream sent 1234 values');
	is($r->{batches}, 3 * 13, '13 batches a device (the last one short)');
	my @all = $in->read_all($token, $r->{sessions}[2]{id}, 6);
	is(scalar @all, 1234, 'stream 6 (a second sine) read back whole');
	is($r->{errors} + $r->{missed_batches}, 0, 'no error, no missed batch');
}

# WebSocket with 16 batches in flight, unpaced, a sample count.
{
	my ($st, $r, $err) = sim('--ws', '--in-flight', 16, '--devices', 2,
		'--streams', 4, '--rate', 0, '--samples', 5000, '--batch', 50);
	is($st, 0, 'WebSocket, --in-flight 16: exit 0') or diag $err;
	is($r->{batches}, 2 * 100, '100 batches a device, every one acked');
	is($r->{errors} + $r->{missed_batches}, 0, 'no error, no missed batch');
	my @counter = $in->read_all($token, $r->{sessions}[1]{id}, 3,
		limit => 100000);
	is_deeply([map { $_->[1] } @counter], [0 .. 4999],
		'the counter read back: every batch once, in order');
}

# On a terminal: the status line, redrawn while it runs.
{
	my ($st, $text) = stderr_on_tty([$ENV{XMHUB_BIN}, 'sim', '--url', $url,
		'--key', $key, '--devices', 2, '--duration', 2.5], 60);
	is($st, 0, 'on a terminal: exit 0');
	my @lines = $text =~ /\rxmhub sim: \d+ s, \d+ batches, \d+ values, 0 errors/g;
	ok(@lines >= 3, 'the status line was redrawn (' . scalar(@lines)
		. ' times in 2.5 s)') or diag $text;
}

# A refused key (bad options: t/e2e/cli-usage.t).
{
	my ($st, $out, $err) = xmhub(['sim', '--url', $url, '--key', 'xmk_nope',
		'--samples', 1]);
	is($st, 1, 'a bad key: exit 1');
	like($err, qr/401/, 'it says 401');
}

done_testing;
