#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Per-facility storage quotas end to end (doc/storage.md "Quotas and
# retention"): the usage counts against the rows as stored, who may read
# and set a quota, an upload past the quota refused (by its Content-Length
# before it is read, and at its insert: streamed, or the quota lowered
# while it was spooled) with nothing of it stored, the check at the insert
# with and without a quota and two uploads at once against its last
# bytes, ingest
# batches past the quota refused whole over HTTP and WebSocket while the
# earlier ones stay readable, usage going down on delete, the samples'
# bytes counted in their session's row while it is active (sql/023:
# closed, reaped, deleted, two sessions at once against one quota, a
# facility deleted), and the migration's backfill of what a database held
# before it.
use strict;
use warnings;
use File::Basename qw(basename);
use File::Copy qw(copy);
use File::Temp qw(tempdir);
use HTTP::Tiny;
use Test::More;
use IO::Socket::INET;
use POSIX ();
use Time::HiRes qw(sleep);
use Xmhub::Ingest;
use Xmhub::Objects;
use Xmhub::Platform qw(keys_of is_error);
use Xmhub::Test qw(xmhub);
use Xmhub::WS;
use Xmhub::XMBP qw(batch);

$ENV{XMHUB_OPENAPI_CHECK} = 1;
my $p = Xmhub::Platform->start;
my $stack = $p->stack;
# Uploads stay as made: transcode outputs are counted by their own test.
ok($stack->stop_daemon('transcode'), 'the transcode runner is stopped');

my $fac = $p->facility('Quota A');
my $other = $p->facility('Quota B');
my $ta = $p->token($p->user('facility_admin', $fac));
my $tu = $p->token($p->user('user', $fac));
my $tb = $p->token($p->user('facility_admin', $other));
my $ts = $p->token($p->user('super_admin', undef));
my $key = $p->api_key($ta, 'upload', 'ingest');
my $key_b = $p->api_key($tb, 'upload', 'ingest');
my $STORAGE = 'facility_id,keep_samples_days,keep_uploads_days,quota_bytes,'
    . 'sample_bytes,updated_at,upload_bytes,used_bytes';

sub storage {
	my ($f, $token) = @_;
	my ($st, $b) = $p->req(GET => "/api/v1/facilities/$f/storage",
		token => $token // $ts);
	die "storage: $st\n" if $st != 200;
	return $b;
}

sub set_quota {
	my ($f, %v) = @_;
	my ($st, $b) = $p->req(PATCH => "/api/v1/facilities/$f/storage",
		token => $ts, json => \%v);
	die "set quota: $st\n" if $st != 200;
	return $b;
}

# What the rows say a facility stores (the counts must equal it).
sub rows_bytes {
	my ($f) = @_;
	return $p->sql('SELECT coalesce((SELECT sum(original_size_bytes) FROM '
	    . "uploads WHERE facility_id = '$f'), 0) + coalesce((SELECT "
	    . 'sum(output_size_bytes) FROM transcode_jobs WHERE facility_id = '
	    . "'$f'), 0), coalesce((SELECT sum(c.byte_size) FROM stored_chunks "
	    . 'c JOIN ingest_streams t ON t.id = c.stream_id JOIN '
	    . "ingest_sessions s ON s.id = t.session_id WHERE s.facility_id = "
	    . "'$f'), 0)");
}

sub counts_exact {
	my ($f, $name) = @_;
	my $s = storage($f);
	is("$s->{upload_bytes}|$s->{sample_bytes}", rows_bytes($f),
		"$name: the counts are what the rows hold");
	is($s->{used_bytes}, $s->{upload_bytes} + $s->{sample_bytes},
		"$name: used_bytes is their sum");
	return $s;
}


# --- reading and setting -------------------------------------------------
my $s = storage($fac, $tu);
is(keys_of($s), $STORAGE, 'a user reads its facility\'s storage');
is($s->{quota_bytes}, undef, 'no quota at first');
is($s->{used_bytes}, 0, 'nothing stored at first');
my ($st, $b) = $p->req(GET => "/api/v1/facilities/$other/storage",
	token => $tu);
is_error($st, $b, 403, 'another facility\'s storage');
($st, $b) = $p->req(PATCH => "/api/v1/facilities/$fac/storage", token => $ta,
	json => {quota_bytes => 1});
is_error($st, $b, 403, 'a facility admin sets no quota');
($st, $b) = $p->req(GET => '/api/v1/facilities/00000000-0000-4000-8000-'
	. '000000000000/storage', token => $ts);
is_error($st, $b, 404, 'no such facility');
for my $bad ({quota_bytes => -1}, {quota_bytes => 'x'},
    {keep_uploads_days => 0}, {keep_samples_days => 36501}) {
	($st, $b) = $p->req(PATCH => "/api/v1/facilities/$fac/storage",
		token => $ts, json => $bad);
	is_error($st, $b, 400, 'refused: ' . join(',', %$bad));
}
$s = set_quota($fac, quota_bytes => 3000, keep_uploads_days => 30);
is($s->{quota_bytes}, 3000, 'a super admin sets the quota');
is($s->{keep_uploads_days}, 30, 'and a retention');
is(storage($fac, $ta)->{quota_bytes}, 3000, 'the facility admin reads it');
$s = set_quota($fac, keep_uploads_days => undef);
ok(!defined $s->{keep_uploads_days} && $s->{quota_bytes} == 3000,
	'null clears one limit, the others stay');

# --- uploads -----------------------------------------------------------
my $wav = Xmhub::Objects::wav(500); # 1044 bytes
($st, $b) = Xmhub::Objects::upload($p, $key, 'a.wav', $wav);
is($st, 200, 'an upload within the quota');
my $kept = $b->{id};
$s = counts_exact($fac, 'after an upload');
is($s->{upload_bytes}, length $wav, 'it counts the bytes stored');

# 1044 stored, 1956 left: a 2044-byte file's body is refused by its
# Content-Length, before it is read.
my $big = Xmhub::Objects::wav(1000);
my $before = $p->objects($fac);
($st, $b) = Xmhub::Objects::upload($p, $key, 'big.wav', $big);
is_error($st, $b, 413, 'an upload past the quota');
like($b->{detail}, qr/storage quota is used up: 1956 bytes are left/,
	'the detail says what is left');
# File $data uploaded with API key $key streamed (chunked, no
# Content-Length: the gate lets it in, the insert checks it): the
# HTTP::Tiny response.
sub chunked {
	my ($key, $data) = @_;
	my $bd = 'quota-chunked';
	my $body = "--$bd\r\nContent-Disposition: form-data; name=\"file\"; "
	    . "filename=\"f.wav\"\r\nContent-Type: audio/wav\r\n\r\n"
	    . "$data\r\n--$bd--\r\n";
	my @pieces = map { substr($body, $_ * 700, 700) }
	    0 .. int(length($body) / 700);
	return HTTP::Tiny->new(timeout => 30)->request(POST =>
		$stack->url('/api/v1/uploads'), {headers => {'X-Api-Key' => $key,
		'Content-Type' => "multipart/form-data; boundary=$bd"},
		content => sub { shift @pieces }});
}
# The same body streamed: stored, refused at its insert, deleted.
my $res = chunked($key, $big);
is($res->{status}, 413, 'a streamed upload past the quota: 413');
like($res->{content}, qr/"detail":"the facility's storage quota is used up: 1956 bytes are left, the file is larger"/,
	'with the detail, of the check at the insert');
is($p->sql("SELECT count(*) FROM uploads WHERE facility_id = '$fac'"), 1,
	'no row of the refused uploads');
is($p->objects($fac), $before, 'no object of them either');
counts_exact($fac, 'after the refusals');
is(storage($fac)->{upload_bytes}, length $wav, 'the usage did not move');
# A quota lowered while a body arrives: the body was within the quota
# when the authorizer let it in (lighttpd then spools it whole, httpd-conf/
# programs spool); the program stores it and checks at its insert, under
# the facility's locked row, then deletes it.
{
	my $mid = Xmhub::Objects::wav(500_000); # 1,000,044 bytes
	set_quota($fac, quota_bytes => length($wav) + 2_000_000);
	my $bd = 'quota-mid';
	my $body = "--$bd\r\nContent-Disposition: form-data; name=\"file\"; "
	    . "filename=\"mid.wav\"\r\nContent-Type: audio/wav\r\n\r\n$mid\r\n"
	    . "--$bd--\r\n";
	my $sock = IO::Socket::INET->new(PeerAddr => $stack->addr,
		PeerPort => $stack->port) or die "connect: $!\n";
	my $part = 300_000;
	print $sock "POST /api/v1/uploads HTTP/1.1\r\nHost: x\r\n"
	    . "X-Api-Key: $key\r\nConnection: close\r\nContent-Type: "
	    . "multipart/form-data; boundary=$bd\r\nContent-Length: "
	    . length($body) . "\r\n\r\n" . substr($body, 0, $part);
	$sock->flush;
	# The key and the quota passed: lighttpd is spooling the body.
	my $spool = $stack->var . '/tmp';
	my $writing;
	for (1 .. 300) {
		last if $writing = grep { -s $_ } glob "$spool/*";
		sleep 0.1;
	}
	ok($writing, 'the body is being received') or diag("nothing in $spool");
	set_quota($fac, quota_bytes => length($wav) + 100);
	print $sock substr($body, $part);
	$sock->flush;
	my $answer = do { local $/; <$sock> } // '';
	close $sock;
	like($answer, qr{^HTTP/1\.1 413 }, 'a quota lowered mid-body: 413');
	like($answer, qr/"detail":"the facility's storage quota is used up: 100 bytes are left, the file is larger"/,
		'the detail says what is left now, at the insert');
	is($p->objects($fac), $before, 'no object of it');
	is(storage($fac)->{upload_bytes}, length $wav, 'the usage still did not move');
	set_quota($fac, quota_bytes => 3000);
}
# Another facility is not limited by this one's quota.
($st) = Xmhub::Objects::upload($p, $key_b, 'big.wav', $big);
is($st, 200, 'another facility uploads the same file');

# --- ingest over HTTP ----------------------------------------------------
# 1956 left: each batch of 100 f32 samples needs up to 32 + 1200 + 200.
my $in = Xmhub::Ingest->new($p, $key);
my $sess = $in->session(7, [0, 'f32']);
my @sent;
sub f32s { my ($from) = @_; return [map { [$from + $_, $_ / 2] } 0 .. 99] }
push @sent, f32s(1000);
$in->send($sess->{id}, 1, [0, 'f32', $sent[0]]);
($st, $b) = $p->req(POST => "/api/v1/ingest/sessions/$sess->{id}/data",
	key => $key, body => $in->encode(2, [0, 'f32', f32s(2000)]),
	headers => {'Content-Type' => 'application/octet-stream'});
is_error($st, $b, 413, 'the batch past the quota');
like($b->{detail}, qr/storage quota is used up: this batch needs up to 1432 bytes/,
	'the detail says what it needs');
is(scalar $in->read_all($ta, $sess->{id}, 0), 100,
	'the batch before it is readable, nothing of the refused one');
$s = counts_exact($fac, 'after the refused batch');
ok($s->{sample_bytes} > 1200 && $s->{used_bytes} <= 3000,
	"the stored batch counts ($s->{sample_bytes} bytes), within the quota");
my ($sess_row) = $p->sql('SELECT total_samples, missed_batches FROM '
	. "ingest_sessions WHERE id = '$sess->{id}'");
is($sess_row, '100|0', 'the refused batch is not in the session\'s counters');

# --- ingest over WebSocket -------------------------------------------------
set_quota($fac, quota_bytes => storage($fac)->{used_bytes} + 1500);
my $ws_sess = $in->session(8, [0, 'f32']);
my ($c, $wst) = Xmhub::WS->connect($stack->port,
	"/api/v1/ingest/ws?session_id=$ws_sess->{id}", {'X-Api-Key' => $key});
is($wst, 101, 'WebSocket upgrade');
$c->send_binary(batch(1, undef, [0, 'f32', f32s(1000)]));
my ($type, $payload) = $c->read_message(30);
is(length($payload // ''), 4, 'the first batch acknowledged')
    or diag("the answer: $type: " . ($payload // 'none'));
is(unpack('N', $payload), 100, 'with its samples');
$c->send_binary(batch(2, undef, [0, 'f32', f32s(2000)]));
($type, $payload) = $c->read_message(30);
like($payload // '', qr/"detail":"the facility's storage quota is used up/,
	'the batch past the quota: the error message, no ack')
    or diag("the answer: $type");
$c->close;
is(scalar $in->read_all($ta, $ws_sess->{id}, 0), 100,
	'the acknowledged batch is readable');
counts_exact($fac, 'after the WebSocket session');

# --- deleting, raising ----------------------------------------------------
my $used = storage($fac)->{used_bytes};
($st) = $p->req(DELETE => "/api/v1/uploads/$kept", token => $ta);
is($st, 204, 'the upload deleted');
$s = counts_exact($fac, 'after the delete');
is($s->{used_bytes}, $used - length $wav, 'the usage went down by its size');
set_quota($fac, quota_bytes => undef);
($st) = Xmhub::Objects::upload($p, $key, 'big.wav', $big);
is($st, 200, 'without a quota the big file is taken');

# --- transcode outputs and compaction move the counts -------------------------
$p->job('xmhub-transcode', '--drain');
ok($p->sql("SELECT count(*) FROM transcode_jobs WHERE facility_id = '$fac' "
	. "AND status = 'completed'") >= 1, 'a transcode completed');
$s = counts_exact($fac, 'after the transcodes');
ok($s->{upload_bytes} > length $big, 'the outputs count with the original');
$in->close($sess->{id});
$in->close($ws_sess->{id});
$p->job('xmhub-ingest-compact', '--once', 'XMHUB_COMPACT_MIN_AGE=0');
is($p->sql("SELECT count(*) FROM stored_chunks c JOIN ingest_streams t ON "
	. "t.id = c.stream_id WHERE t.session_id = '$sess->{id}' AND "
	. "c.data IS NULL"), 1, 'the session compacted');
counts_exact($fac, 'after compaction');

# --- counting in the session row (sql/023) -----------------------------------
# A round adds its chunks' bytes to its session's pending_bytes; they go
# to a delta row when the session ends (closed, reaped) or is deleted.
my $fc = $p->facility('Quota C');
my $key_c = $p->api_key($p->token($p->user('facility_admin', $fc)),
	'upload', 'ingest');
my $inc = Xmhub::Ingest->new($p, $key_c);
sub pending {
	return $p->sql('SELECT pending_bytes FROM ingest_sessions '
	    . "WHERE id = '$_[0]'");
}
sub chunk_bytes {
	return $p->sql('SELECT coalesce(sum(c.byte_size), 0) FROM stored_chunks '
	    . 'c JOIN ingest_streams t ON t.id = c.stream_id '
	    . "WHERE t.session_id = '$_[0]'");
}
sub deltas {
	return $p->sql('SELECT count(*) FROM facility_storage_delta '
	    . "WHERE facility_id = '$_[0]'");
}
# What a batch of 100 f32 samples is charged (see above).
my $bound = 1432;
my ($c1, $c2) = ($inc->session(21, [0, 'f32']), $inc->session(22, [0, 'f32']));
$inc->send($c1->{id}, 1, [0, 'f32', f32s(1000)]);
$inc->send($c1->{id}, 2, [0, 'f32', f32s(2000)]);
$inc->send($c2->{id}, 1, [0, 'f32', f32s(1000)]);
is(deltas($fc), 0, 'ingest rounds write no delta row');
ok(chunk_bytes($c1->{id}) > 0, 'the session stored chunks');
is(pending($c1->{id}), chunk_bytes($c1->{id}),
	"an active session's pending_bytes are its chunks' bytes");
is(pending($c2->{id}), chunk_bytes($c2->{id}), 'and the other\'s');
$s = counts_exact($fc, 'two active sessions');

# Room for one more batch: each session sends one at once, one is taken.
set_quota($fc, quota_bytes => $s->{used_bytes} + $bound + 100);
my @pids;
for my $x ([$c1, 3], [$c2, 2]) {
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		# Not through the parent's OpenAPI checker: both children
		# would share its pipe, and one could read the other's answer
		# and leave it waiting for ever.
		$ENV{XMHUB_OPENAPI_CHECK} = 0;
		my ($cst) = $p->req(POST => "/api/v1/ingest/sessions/$x->[0]{id}/data",
			key => $key_c, body => $inc->encode($x->[1],
			[0, 'f32', f32s(3000)]),
			headers => {'Content-Type' => 'application/octet-stream'});
		POSIX::_exit($cst == 200 ? 0 : $cst == 413 ? 1 : 2);
	}
	push @pids, $pid;
}
my @codes = sort map { waitpid($_, 0); $? >> 8 } @pids;
is("@codes", '0 1', 'two sessions at once, room for one batch: one taken, '
    . 'one refused with 413');
$s = counts_exact($fc, 'after the two batches');
ok($s->{used_bytes} <= $s->{quota_bytes}, 'within the quota');
($st) = Xmhub::Objects::upload($p, $key_c, 'x.wav', $wav);
is($st, 413, 'an upload past what the sessions left is refused');

$inc->close($c1->{id});
is(pending($c1->{id}), 0, 'a closed session has no pending bytes');
is(deltas($fc), 1, 'they went to one delta row');
counts_exact($fc, 'after the close');

$p->sql('UPDATE ingest_sessions SET started_at = now() - interval \'1 day\', '
    . "last_data_at = now() - interval '1 day' WHERE id = '$c2->{id}'");
$p->job('xmhub-ingest-reaper', '--once');
is($p->sql("SELECT status, pending_bytes FROM ingest_sessions WHERE id = "
    . "'$c2->{id}'"), 'error|0', 'a reaped session has no pending bytes');
counts_exact($fc, 'after the reaper');

set_quota($fc, quota_bytes => undef);
my $c3 = $inc->session(23, [0, 'f32']);
$inc->send($c3->{id}, 1, [0, 'f32', f32s(1000)]);
($st) = Xmhub::Objects::upload($p, $key_c, 'x.wav', $wav);
is($st, 200, 'an upload without a quota');
is(deltas($fc), 2, 'it locked and folded nothing: no quota at its insert');
$p->job('xmhub-retention', '--once');
is(deltas($fc), 0, 'the retention runner folded the deltas');
is(pending($c3->{id}), chunk_bytes($c3->{id}),
	'and left the active session\'s pending bytes');
counts_exact($fc, 'after the upload');
# A session deleted while active (no path does it now: sql/023's
# trigger), its chunks first as 019 asks.
$p->sql('DELETE FROM stored_chunks WHERE stream_id IN (SELECT id FROM '
    . "ingest_streams WHERE session_id = '$c3->{id}'); DELETE FROM "
    . "ingest_sessions WHERE id = '$c3->{id}'");
is(chunk_bytes($c3->{id}), 0, 'an active session deleted');
counts_exact($fc, 'after the active session\'s delete');

my $c4 = $inc->session(24, [0, 'f32']);
$inc->send($c4->{id}, 1, [0, 'f32', f32s(1000)]);
ok(pending($c4->{id}) > 0, 'an active session with pending bytes');
($st) = $p->req(DELETE => "/api/v1/facilities/$fc", token => $ts);
is($st, 204, 'its facility deleted');
is(deltas($fc), 0, 'nothing of its counts left');

# --- the check at the insert ------------------------------------------------
# An upload's one quota check is made at its insert (lib/domain/upload.c):
# a facility without a quota stores with the INSERT alone, its delta rows
# left; one with a quota folds them under its locked row first.
my $fq = $p->facility('Quota D');
my $key_q = $p->api_key($p->token($p->user('facility_admin', $fq)), 'upload');
my $ff = $p->facility('Quota E');
my $key_f = $p->api_key($p->token($p->user('facility_admin', $ff)), 'upload');
set_quota($fq, quota_bytes => 1_000_000);
for my $x ([$ff, $key_f, 'without a quota', 1], [$fq, $key_q, 'with a quota', 0])
{
	my ($f, $k, $what, $left) = @$x;
	$p->sql('INSERT INTO facility_storage_delta (facility_id, sample_bytes) '
	    . "VALUES ('$f', 0)");
	($st) = Xmhub::Objects::upload($p, $k, 's.wav', Xmhub::Objects::wav(10));
	is($st, 200, "a facility $what stores");
	is(deltas($f), $left, $left ? "$what: its delta row left, nothing folded"
	    : "$what: its delta row folded under the locked row");
	counts_exact($f, "after an upload $what");
}
# Two streamed uploads at once against the last bytes of a quota: both
# stored by the program, one taken at its insert, the other refused there
# (the row locked by the first until it commits) and its object deleted.
set_quota($fq, quota_bytes => storage($fq)->{used_bytes} + length($wav) + 100);
my $objs = $p->objects($fq);
my @ups;
for (1, 2) {
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		my $ust = chunked($key_q, $wav)->{status};
		POSIX::_exit($ust == 200 ? 0 : $ust == 413 ? 1 : 2);
	}
	push @ups, $pid;
}
my @ucodes = sort map { waitpid($_, 0); $? >> 8 } @ups;
is("@ucodes", '0 1', 'two uploads at once, room for one: one stored, one '
    . 'refused with 413');
is($p->objects($fq), $objs + 1, 'the object of the stored one only');
$s = counts_exact($fq, 'after the two uploads');
ok($s->{used_bytes} <= $s->{quota_bytes}, 'within the quota');

# --- the migration's backfill ------------------------------------------------
my $sqldir = "$ENV{XMHUB_SRCDIR}/sql";
my $old = tempdir(CLEANUP => 1);
copy($_, $old) or die "copy $_: $!"
    for grep { basename($_) lt '019' } glob("$sqldir/*.sql");
my $url = $stack->create_database('quota_backfill');
my $db = $url =~ m{^postgresql:///([^?]+)} ? $1 : die "url $url";
{
	local $ENV{XMHUB_ENV_FILE} = '/dev/null';
	local $ENV{XMHUB_DATABASE_URL} = $url;
	my ($mst, $out, $err) = xmhub(['migrate', '--dir', $old]);
	is($mst, 0, 'a database as it was before 019') or diag($err);
	($mst, $out, $err) = $stack->psql(<<'SQL', $db);
INSERT INTO facilities (id, name, slug) VALUES
	('11111111-1111-4111-8111-111111111111', 'Old', 'old'),
	('22222222-2222-4222-8222-222222222222', 'Empty', 'empty');
INSERT INTO api_keys (id, facility_id, key_prefix, key_hash, name, scopes)
	VALUES ('33333333-3333-4333-8333-333333333333',
	'11111111-1111-4111-8111-111111111111', 'xmk_00000000', repeat('a', 64), 'k',
	'{upload}');
INSERT INTO uploads (id, facility_id, api_key_id, original_filename,
	original_format, original_size_bytes) VALUES
	('44444444-4444-4444-8444-444444444444',
	'11111111-1111-4111-8111-111111111111',
	'33333333-3333-4333-8333-333333333333', 'a.wav', 'wav', 1000);
INSERT INTO transcode_jobs (upload_id, facility_id, target_format,
	target_codec, target_container, target_bitrate, status,
	output_size_bytes) VALUES ('44444444-4444-4444-8444-444444444444',
	'11111111-1111-4111-8111-111111111111', 'webm', 'opus', 'webm',
	'128k', 'completed', 234);
INSERT INTO devices (id, facility_id, device_uid, name) VALUES
	('55555555-5555-4555-8555-555555555555',
	'11111111-1111-4111-8111-111111111111', 1, 'd');
INSERT INTO ingest_sessions (id, facility_id, device_id) VALUES
	('66666666-6666-4666-8666-666666666666',
	'11111111-1111-4111-8111-111111111111',
	'55555555-5555-4555-8555-555555555555');
INSERT INTO ingest_streams (id, session_id, stream_index, name, value_type)
	VALUES ('77777777-7777-4777-8777-777777777777',
	'66666666-6666-4666-8666-666666666666', 0, 's', 'f32');
INSERT INTO stored_chunks (stream_id, start_ts_us, end_ts_us, sample_count,
	byte_size, data) VALUES
	('77777777-7777-4777-8777-777777777777', 1, 2, 2, 56, '\x00'),
	('77777777-7777-4777-8777-777777777777', 3, 4, 2, 44, '\x00');
SQL
	is($mst, 0, 'with an upload, a transcode output and chunks') or diag($err);
	($mst, $out, $err) = xmhub(['migrate', '--dir', $sqldir]);
	is($mst, 0, '019 applied to it') or diag($err);
	($mst, $out, $err) = $stack->psql('SELECT slug, upload_bytes, '
	    . 'sample_bytes, quota_bytes IS NULL FROM facility_storage JOIN '
	    . 'facilities f ON f.id = facility_id ORDER BY slug', $db);
	is($out, "empty|0|0|t\nold|1234|100|t\n",
		'the backfill counts what was stored, no quota');
}

ok(!$stack->sanitizer_reports, 'no sanitizer reports');
done_testing;
