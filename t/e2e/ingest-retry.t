#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Idempotent retries of ingest batches (doc/ingest.md "Retries"): a batch
# whose bytes are those of one of the session's last 64 stored batches is
# acknowledged again with the current counters and not stored twice, over
# HTTP and over the WebSocket; the same batch_seq with other bytes is
# stored and counted as a repeat; a batch older than the last 64 is stored
# again.
use strict;
use warnings;
use Test::More;
use Xmhub::Ingest;
use Xmhub::Platform;
use Xmhub::WS;
use Xmhub::XMBP qw(batch stored);

my $p = Xmhub::Platform->start;
my $fac = $p->facility('Retry A');
my $ta = $p->token($p->user('facility_admin', $fac));
my $key = $p->api_key($ta, 'ingest');
my $in = Xmhub::Ingest->new($p, $key);

sub send_batch {
	my ($sid, $bytes) = @_;
	return $p->req(POST => "/api/v1/ingest/sessions/$sid/data",
		key => $key, body => $bytes,
		headers => {'Content-Type' => 'application/octet-stream'});
}

# The session's counters and its number of stored chunk rows.
sub counters {
	my ($sid) = @_;
	return $p->sql("SELECT s.total_samples || ' ' || s.missed_batches || "
		. "' ' || s.total_bytes || ' ' || (SELECT count(*) FROM "
		. "stored_chunks c JOIN ingest_streams t ON t.id = c.stream_id "
		. "WHERE t.session_id = s.id) FROM ingest_sessions s "
		. "WHERE s.id = '$sid'");
}

# counters() without total_bytes.
sub counts {
	my @f = split / /, counters($_[0]);
	return "@f[0, 1, 3]";
}

# --- HTTP ---
my $s = $in->session(11, [0, 'i32']);
my $b0 = batch(0, 11, [0, 'i32', [[1, 10], [2, 20]]]);
my $b2 = batch(2, 11, [0, 'i32', [[3, 30]]]);
my ($st, $ack) = send_batch($s->{id}, $b0);
is($st, 200, 'http: first batch 200');
($st, $ack) = send_batch($s->{id}, $b2);
is_deeply([$st, $ack], [200, {accepted_samples => 3, missed_batches => 1}],
    'http: second batch, one missed');
my $before = counters($s->{id});
is($before, '3 1 ' . (length($b0) + length $b2) . ' 2',
    'http: counters and chunks before the retries');
($st, $ack) = send_batch($s->{id}, $b2);
is_deeply([$st, $ack], [200, {accepted_samples => 3, missed_batches => 1}],
    'http: the last batch again: 200 with the current counters');
($st, $ack) = send_batch($s->{id}, $b0);
is_deeply([$st, $ack], [200, {accepted_samples => 3, missed_batches => 1}],
    'http: an older stored batch again: 200, counters unchanged');
is(counters($s->{id}), $before, 'http: nothing stored twice');
is(stored($p, $s->{id}, 0), '[[1,10],[2,20],[3,30]]',
    'http: the samples read back once');

# Same batch_seq, other bytes: stored, counted as a repeat.
my $b2x = batch(2, 11, [0, 'i32', [[4, 40]]]);
($st, $ack) = send_batch($s->{id}, $b2x);
is_deeply([$st, $ack], [200, {accepted_samples => 4, missed_batches => 1}],
    'http: same seq, other bytes: stored, no gap counted');
is(counters($s->{id}), '4 1 ' . (length($b0) + length($b2) + length $b2x)
    . ' 3', 'http: its chunk stored');
($st, $ack) = send_batch($s->{id}, $b2x);
is($ack->{accepted_samples}, 4, 'http: and its retry is not stored again');

# The ring holds the last 64 stored batches: the 65th back is stored again.
my $r = $in->session(12, [0, 'i8']);
my @rb = map { batch($_, undef, [0, 'i8', [[$_, 1]]]) } 0 .. 64;
send_batch($r->{id}, $_) for @rb;
is(counts($r->{id}), '65 0 65', 'ring: 65 batches stored');
($st, $ack) = send_batch($r->{id}, $rb[1]);
is_deeply([$st, $ack->{accepted_samples}], [200, 65],
    'ring: the 64th back is a retry');
($st, $ack) = send_batch($r->{id}, $rb[0]);
is_deeply([$st, $ack->{accepted_samples}], [200, 66],
    'ring: the 65th back is stored again (a late repeat)');
is($p->sql("SELECT octet_length(recent_digests) / 16 FROM ingest_sessions "
	. "WHERE id = '$r->{id}'"), 64, 'ring: 64 digests kept');

# A retry for a closed session is still a 409.
$in->close($s->{id});
($st) = send_batch($s->{id}, $b2);
is($st, 409, 'http: retry for a closed session: 409');

# --- WebSocket ---
sub ack {
	my ($type, $payload) = $_[0]->read_message(30);
	return undef unless $type eq 'binary' && length $payload == 4;
	return unpack 'N', $payload;
}
my $w = $in->session(13, [0, 'f32']);
my ($c, $wst) = Xmhub::WS->connect($p->stack->port,
	"/api/v1/ingest/ws?session_id=$w->{id}", {'X-Api-Key' => $key});
is($wst, 101, 'ws: upgrade');
my @wb = map { batch($_, 13, [0, 'f32', [map { [$_ * 10 + $_, 0.5] } 1 .. 3]]) }
    0 .. 2;
$c->send_binary($_) for @wb;
is_deeply([map { ack($c) } 1 .. 3], [3, 6, 9], 'ws: three batches acked');
$c->send_binary($wb[2]);
$c->send_binary($wb[0]);
is_deeply([map { ack($c) } 1 .. 2], [9, 9],
    'ws: resent batches acked with the current counters');
my $wx = batch(1, 13, [0, 'f32', [[99, 1.5]]]);
$c->send_binary($wx);
is(ack($c), 10, 'ws: same seq, other bytes: stored');
$c->close;
is(counts($w->{id}), '10 0 4', 'ws: nothing stored twice');

done_testing;
