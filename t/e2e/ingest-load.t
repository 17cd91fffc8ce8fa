#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Ingest under concurrency (doc/ingest.md "Group commit"): 64 posters at
# once on one session and on 16 sessions, each leaving gaps on purpose;
# every acknowledged batch read back exactly once, the counters equal to
# what is stored, missed_batches equal to the gap accounting replayed in
# commit order; the samples of the one session read back through the
# API; rounds of more than one batch did happen, over HTTP and over a
# WebSocket connection.
use strict;
use warnings;
use Test::More;
use Xmhub::Ingest;
use Xmhub::Platform;
use Xmhub::Posters;
use Xmhub::WS;

my $p = Xmhub::Platform->start;
my $fac = $p->facility('Load A');
my $ta = $p->token($p->user('facility_admin', $fac));
my $key = $p->api_key($ta, 'ingest');
my $in = Xmhub::Ingest->new($p, $key);
my $N = 12; # batches per poster

# Poster $k's sequence: $first, then one more each batch, skipping one
# now and then (on purpose: a gap of 1 or 2).
sub seqs {
	my ($k, $first, $step) = @_;
	my ($q, @s) = ($first);
	for my $i (0 .. $N - 1) {
		$q += $step * (1 + ($i % 5 == 2) + ($k % 3 == 0 && $i == 7));
		push @s, $q % 65536;
	}
	return \@s;
}

# --- 64 posters, one session ---
my $one = $in->session(31, [0, 'i32']);
my @log = Xmhub::Posters::http($p, $key,
	[map { [$one->{id}, $_, seqs($_, $_, 64)] } 0 .. 63]);
my $n = Xmhub::Posters::check($p, $one->{id}, \@log, 'one session');
is($n, 64 * $N, 'one session: all batches stored');
my @tries = grep { $_->[0] eq 'try' } @log;
is(scalar(grep { $_->[5] != 200 } @tries), 0, 'one session: every answer 200');
my @all = $in->read_all($ta, $one->{id}, 0, limit => 1000);
my @want = sort { $a->[0] <=> $b->[0] } map {
	my ($k, $i) = ($_->[2], $_->[3]);
	map { [Xmhub::Posters::ts_of($k, $i) + $_, $k * 1000 + $i] } 0 .. 2
} grep { $_->[0] eq 'ack' } @log;
is_deeply(\@all, \@want, 'one session: the samples read back through the API')
    or diag scalar(@all) . ' samples read, ' . scalar(@want) . ' sent';
my $rounds = $p->sql('SELECT count(DISTINCT c.xmin::text) FROM stored_chunks c '
	. "JOIN ingest_streams t ON t.id = c.stream_id WHERE t.session_id = "
	. "'$one->{id}'");
cmp_ok($rounds, '<', 64 * $N,
    "one session: committed in $rounds transactions (group commit)");

# --- 64 posters, 16 sessions (4 each) ---
my @sids = map { $in->session(40 + $_, [0, 'i32'])->{id} } 0 .. 15;
@log = Xmhub::Posters::http($p, $key,
	[map { [$sids[$_ % 16], $_, seqs($_, int($_ / 16), 4)] } 0 .. 63]);
my $stored = 0;
$stored += Xmhub::Posters::check($p, $sids[$_], \@log, "session $_ of 16")
    for 0 .. 15;
is($stored, 64 * $N, '16 sessions: all batches stored');

# --- one WebSocket connection, 48 batches in one write ---
my $w = $in->session(60, [0, 'i32']);
my ($c, $st) = Xmhub::WS->connect($p->stack->ws_port,
	"/api/v1/ingest/ws?session_id=$w->{id}", {'X-Api-Key' => $key});
is($st, 101, 'ws: upgraded');
$c->write_raw(join '', map {
	Xmhub::WS::frame(2, Xmhub::Posters::bytes_of(1, $_, $_)) } 0 .. 47);
my @acks;
for (0 .. 47) {
	my ($type, $payload) = $c->read_message(30);
	push @acks, $type eq 'binary' && length $payload == 4
	    ? unpack('N', $payload) : "$type";
}
$c->close;
is_deeply(\@acks, [map { 3 * $_ } 1 .. 48], 'ws: 48 acks, in order');
$rounds = $p->sql('SELECT count(DISTINCT c.xmin::text) FROM stored_chunks c '
	. "JOIN ingest_streams t ON t.id = c.stream_id WHERE t.session_id = "
	. "'$w->{id}'");
cmp_ok($rounds, '<', 48, "ws: committed in $rounds transactions (rounds)");
my $chunks = $p->sql('SELECT count(*) FROM stored_chunks c JOIN '
	. "ingest_streams t ON t.id = c.stream_id WHERE t.session_id = "
	. "'$w->{id}'");
cmp_ok($chunks, '<', 48,
    "ws: a round's blocks stored as one chunk while in time order ($chunks)");
is(Xmhub::Posters::check($p, $w->{id},
	[map { ['ack', $w->{id}, 1, $_, $_, 3 * ($_ + 1)] } 0 .. 47], 'ws'),
    48, 'ws: all batches stored');
is_deeply([$in->read_all($ta, $w->{id}, 0, limit => 1000)],
    [map { my $i = $_; map { [Xmhub::Posters::ts_of(1, $i) + $_, 1000 + $i] }
	0 .. 2 } 0 .. 47], 'ws: the samples read back through the API');

done_testing;
