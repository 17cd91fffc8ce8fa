#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Ingest over HTTP end to end (doc/ingest.md, doc/xmbp.md): sessions, every
# value type stored and read back identical from the stored chunks, gap
# accounting, every decode error, the checks against the session, auth and
# facilities, durability across a PostgreSQL restart and a kill -9 of the
# FastCGI processes, the reaper.  Batches are built with pack() from the
# formats of doc/xmbp.md and stored chunks read with psql and printed by
# `xmhub xmch dump` (Xmhub::XMBP).
use strict;
use warnings;
use Test::More;
use Xmhub::Ingest;
use Xmhub::Platform qw(keys_of is_error);
use Xmhub::Test qw(run);
use Xmhub::XMBP qw(batch stored sent);

my $p = Xmhub::Platform->start(own_db => 1); # stops PostgreSQL
my $stack = $p->stack;
my $fac = $p->facility('Ingest A');
my $other = $p->facility('Ingest B');
my $ta = $p->token($p->user('facility_admin', $fac));
my $tb = $p->token($p->user('facility_admin', $other));

my $SESSION = 'device_id,facility_id,id,metadata,missed_batches,name,'
    . 'started_at,status,streams,total_bytes,total_samples';
my $NOBODY = '00000000-0000-4000-8000-000000000000';

my $key = $p->api_key($ta, 'ingest');
my $key_b = $p->api_key($tb, 'ingest');
my $upload_key = $p->api_key($ta, 'upload');
my $in = Xmhub::Ingest->new($p, $key);

# --- helpers ---
sub create {
	my ($body, %o) = @_;
	return $p->req(POST => '/api/v1/ingest/sessions',
		key => $o{key} // $key, json => $body);
}

sub send_batch {
	my ($sid, $bytes, %o) = @_;
	return $p->req(POST => "/api/v1/ingest/sessions/$sid/data",
		key => $o{key} // $key, body => $bytes,
		headers => {'Content-Type' => 'application/octet-stream'});
}

sub close_session {
	my ($sid, %o) = @_;
	return $p->req(POST => "/api/v1/ingest/sessions/$sid/close",
		key => $o{key} // $key);
}

# --- session creation ---
my ($st, $s) = create({device_uid => 4242, name => 'walk 1',
	metadata => {site => 'north'}, streams => [
		{stream_index => 0, name => 'temp', value_type => 'f32',
		    unit => 'degC', sample_rate_hz => 100},
		{stream_index => 65535, name => 'log', value_type => 'string',
		    description => 'free text'}]});
is($st, 201, 'create: 201') or diag explain $s;
is(keys_of($s), $SESSION, 'create: the session fields');
is($s->{status}, 'active', 'create: active');
is($s->{$_}, 0, "create: $_ 0") for qw(total_samples total_bytes missed_batches);
is($s->{facility_id}, $fac, "create: the key's facility");
is($s->{name}, 'walk 1', 'create: name');
is_deeply($s->{metadata}, {site => 'north'}, 'create: metadata');
is(scalar @{$s->{streams}}, 2, 'create: two streams');
is(keys_of($s->{streams}[0]), 'id,name,sample_rate_hz,stream_index,unit,value_type',
    'create: the stream fields');
is_deeply([map { [@$_{qw(stream_index name value_type unit sample_rate_hz)}] }
	@{$s->{streams}}],
    [[0, 'temp', 'f32', 'degC', 100], [65535, 'log', 'string', undef, undef]],
    'create: streams as declared, by stream_index');
my $first = $s;

my ($dst, $devs) = $p->req(GET => '/api/v1/devices', token => $ta);
my ($dev) = grep { $_->{device_uid} == 4242 } @{$devs // []};
ok($dev, 'an unknown device_uid creates the device in the facility');
is($dev->{id}, $s->{device_id}, 'the session names that device');
is($dev->{last_seen_at}, undef, 'not seen before any data');
(undef, $s) = create({device_uid => 4242, streams => [{stream_index => 1,
	name => 'x', value_type => 'i8'}]});
is($s->{device_id}, $dev->{id}, 'a second session reuses the device');
is_deeply($s->{metadata}, {}, 'metadata defaults to {}');

# Sessions created at once for a new device_uid share one device.
my @kids;
for my $i (1 .. 4) {
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		my ($cst, $cs) = create({device_uid => 99001, streams => [
			{stream_index => 0, name => 'a', value_type => 'f32'}]});
		print STDOUT "$cst " . ($cs->{device_id} // '') . "\n";
		exit 0;
	}
	push @kids, $pid;
}
waitpid($_, 0) for @kids;
is($p->sql("SELECT count(*) FROM devices WHERE facility_id = '$fac' "
	. "AND device_uid = 99001"), 1, 'concurrent creations: one device');
is($p->sql("SELECT count(*) FROM ingest_sessions s JOIN devices d ON "
	. "d.id = s.device_id WHERE d.device_uid = 99001"), 4,
    'concurrent creations: four sessions');

my @bad = (
	[{streams => [{stream_index => 0, name => 'a', value_type => 'f32'}]},
	    'no device_uid'],
	[{device_uid => -1, streams => [{stream_index => 0, name => 'a',
	    value_type => 'f32'}]}, 'device_uid -1'],
	[{device_uid => 4294967296, streams => [{stream_index => 0,
	    name => 'a', value_type => 'f32'}]}, 'device_uid 2^32'],
	[{device_uid => 1}, 'no streams'],
	[{device_uid => 1, streams => []}, 'empty streams'],
	[{device_uid => 1, streams => {}}, 'streams not an array'],
	[{device_uid => 1, streams => ['x']}, 'a stream not an object'],
	[{device_uid => 1, streams => [{name => 'a', value_type => 'f32'}]},
	    'no stream_index'],
	[{device_uid => 1, streams => [{stream_index => 65536, name => 'a',
	    value_type => 'f32'}]}, 'stream_index 65536'],
	[{device_uid => 1, streams => [{stream_index => -1, name => 'a',
	    value_type => 'f32'}]}, 'stream_index -1'],
	[{device_uid => 1, streams => [{stream_index => 0,
	    value_type => 'f32'}]}, 'no name'],
	[{device_uid => 1, streams => [{stream_index => 0, name => '',
	    value_type => 'f32'}]}, 'empty name'],
	[{device_uid => 1, streams => [{stream_index => 0, name => 'a'}]},
	    'no value_type'],
	[{device_uid => 1, streams => [{stream_index => 0, name => 'a',
	    value_type => 'u8'}]}, 'unknown value_type'],
	[{device_uid => 1, streams => [{stream_index => 0, name => 'a',
	    value_type => 'f32', sample_rate_hz => 0}]}, 'sample_rate_hz 0'],
	[{device_uid => 1, streams => [{stream_index => 0, name => 'a',
	    value_type => 'f32', sample_rate_hz => '100'}]},
	    'sample_rate_hz a string'],
	[{device_uid => 1, streams => [{stream_index => 0, name => 'a',
	    value_type => 'f32', sample_rate_hz => 1e39}]},
	    'sample_rate_hz beyond f32'],
	[{device_uid => 1, streams => [{stream_index => 3, name => 'a',
	    value_type => 'f32'}, {stream_index => 3, name => 'b',
	    value_type => 'i8'}]}, 'stream_index twice'],
	[{device_uid => 1, streams => [map { {stream_index => $_,
	    name => 'a', value_type => 'i8'} } 0 .. 256]}, '257 streams'],
	[{device_uid => 1, metadata => [1], streams => [{stream_index => 0,
	    name => 'a', value_type => 'f32'}]}, 'metadata not an object'],
);
for my $b (@bad) {
	my ($bst, $body) = create($b->[0]);
	is_error($bst, $body, 400, "create, $b->[1]");
}
# \u0000 in a key would cut it ("k\u0000x" sets "k", over "k": 1): every
# JSON body refuses it, keys and strings alike (lib/codec/jsonin).
for my $nul (['{"k":1,"k\\u0000x":3}', qr/\\u0000 \(NUL\) in an object key/,
	'a metadata key'], ['{"k":"a\\u0000b"}',
	qr/\\u0000 \(NUL\) in a string/, 'a metadata value']) {
	my ($bst, $body) = $p->req(POST => '/api/v1/ingest/sessions',
		key => $key, body => '{"device_uid":1,"metadata":' . $nul->[0]
		. ',"streams":[{"stream_index":0,"name":"a",'
		. '"value_type":"f32"}]}');
	is_error($bst, $body, 400, "create, \\u0000 in $nul->[2]");
	like($body->{detail} // '', $nul->[1], "... and the detail says so");
}
($st, $s) = create({device_uid => 1, streams => [map { {stream_index => $_,
	name => "n$_", value_type => 'i8'} } 0 .. 255]});
is($st, 201, '256 streams: 201');
is_error(create({device_uid => 1, streams => [{stream_index => 0,
	name => 'a', value_type => 'f32'}]}, key => ''), 401,
    'create without a key');
is_error(create({device_uid => 1, streams => [{stream_index => 0,
	name => 'a', value_type => 'f32'}]}, key => $upload_key), 403,
    'create with an upload-only key');
$p->sql("UPDATE devices SET is_active = false WHERE facility_id = '$fac' "
	. "AND device_uid = 99001");
is_error(create({device_uid => 99001, streams => [{stream_index => 0,
	name => 'a', value_type => 'f32'}]}), 403, 'a deactivated device');

# --- every value type, stored and read back identical ---
my $utf8 = "caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac";
my $nan = unpack('d>', pack('H16', '7ff8000000000000'));
my $nanf = unpack('f>', pack('H8', '7fc00000'));
my @values = (
	[f64 => [[1, 1.5], [2, -0.0], [3, $nan], [4, 9**9**9], [5, -9**9**9],
	    [6, 2.2250738585072014e-308], [7, 0.1]]],
	[f32 => [[1, 1.5], [2, $nanf], [3, 0.1], [4, -9**9**9],
	    [5, 3.4028234663852886e38]]],
	[i64 => [[1, '-9223372036854775808'], [2, '9223372036854775807'],
	    [3, 0], [4, -1]]],
	[i32 => [[1, -2147483648], [2, 2147483647], [3, 0]]],
	[i16 => [[1, -32768], [2, 32767]]],
	[i8 => [[1, -128], [2, 127], [3, 0]]],
	[bool => [[1, 1], [2, 0]]],
	[string => [[1, $utf8], [2, ''], [3, 'x' x 65535]]],
	[bytes => [[1, join('', map { chr } 0 .. 255)], [2, ''],
	    [3, "\x00\xff" x 1000]]],
	[json => [[1, '{"a":[1,2,{"b":null}],"s":"' . $utf8 . '"}'],
	    [2, '[]']]],
	[f64_array => [[1, map { $_ / 3 } 1 .. 4096], [2], [3, $nan, -0.0]]],
	[f32_array => [[1, map { $_ * 0.5 } 1 .. 4096], [2, $nanf]]],
	[i32_array => [[1, map { $_ - 2048 } 1 .. 4096], [2],
	    [3, -2147483648, 2147483647]]],
);
my @decl = map { [$_, $values[$_][0]] } 0 .. $#values;
my $all = $in->session(7, @decl);
my ($seq, $total, $bytes) = (0, 0, 0);
for my $i (0 .. $#values) {
	my ($type, $samples) = @{$values[$i]};
	# Timestamps near the top of u64 for one type, to cover them too.
	my @smp = map { [$type eq 'i8' ? "1844674407370955160$_->[0]"
		: 1000 + $_->[0], @$_[1 .. $#$_]] } @$samples;
	my $b = batch($seq++, 7, [$i, $type, \@smp]);
	my ($bst, $ack) = send_batch($all->{id}, $b);
	$total += @smp;
	$bytes += length $b;
	is($bst, 200, "$type: 200") or diag explain $ack;
	is($ack->{accepted_samples}, $total, "$type: accepted_samples so far");
	is(stored($p, $all->{id}, $i), sent($b), "$type: stored samples identical");
}
is(keys_of((send_batch($all->{id}, batch($seq++, 7)))[1]),
    'accepted_samples,missed_batches', 'the ack has exactly two fields');
$bytes += length batch(0, 7);

# Timestamps out of order are stored in order, equal ones as they came.
my $ooo = batch($seq++, undef, [0, 'f64', [[30, 1], [10, 2], [20, 3],
	[10, 4], [5, 5]]]);
($st) = send_batch($all->{id}, $ooo);
is($st, 200, 'unordered timestamps: 200');
$total += 5;
$bytes += length $ooo;
my $f64 = stored($p, $all->{id}, 0);
like($f64, qr/^\[\[5,5\],\[10,2\],\[10,4\],\[20,3\],\[30,1\],\[1001,/,
    'unordered timestamps stored in order, ties in arrival order');
# Several blocks of one batch, and an empty block (no chunk).
my $multi = batch($seq++, 7, [3, 'i32', [[50, 1]]], [5, 'i8', []],
	[3, 'i32', [[40, 2]]]);
($st, my $ack) = send_batch($all->{id}, $multi);
is($st, 200, 'two blocks of one stream and an empty block: 200');
$total += 2;
$bytes += length $multi;
is($ack->{accepted_samples}, $total, 'accepted_samples counts them');
like(stored($p, $all->{id}, 3), qr/^\[\[40,2\],\[50,1\],\[1001,/,
    'both blocks stored, read in time order');

# --- checks against the session (400, nothing stored) ---
my $before = $p->sql("SELECT count(*) FROM stored_chunks");
my @reject = (
	[batch($seq, 7, [100, 'f32', [[1, 1]]]), qr/stream 100 is not declared/,
	    'undeclared stream'],
	[batch($seq, 7, [0, 'f32', [[1, 1]]]), qr/declared f64.*f32/,
	    'wrong value type'],
	[batch($seq, 8, [0, 'f64', [[1, 1]]]), qr/device_id 8.*device_uid 7/,
	    'device_id of another device'],
	[batch($seq, 7, [0, 'f64', [[1, 1]]], [100, 'i8', [[1, 1]]]),
	    qr/stream 100/, 'one bad block rejects the whole batch'],
);
for my $r (@reject) {
	my ($rst, $body) = send_batch($all->{id}, $r->[0]);
	is_error($rst, $body, 400, $r->[2]);
	like($body->{detail} // '', $r->[1], "$r->[2]: detail");
}
is($p->sql("SELECT count(*) FROM stored_chunks"), $before,
    'rejected batches store nothing');
($st, $ack) = send_batch($all->{id}, batch($seq++, undef, [0, 'f64', [[1, 1]]]));
is($st, 200, 'a batch without device_id: 200');
$total += 1;
$bytes += length batch(0, undef, [0, 'f64', [[1, 1]]]);

# --- every decode error kind: 400 naming it ---
my $good = batch(1, undef, [0, 'f64', [[1, 2]]]);
my @decode = (
	['InvalidMagic', 'XMBQ' . substr($good, 4)],
	['UnsupportedVersion', substr($good, 0, 4) . "\x02" . substr($good, 5)],
	['UnsupportedVersion', substr($good, 0, 5) . "\x02" . substr($good, 6),
	    qr/zstd/],
	['InvalidValueType', batch(1, undef, [0, 'f64', []]) =~
	    s/\x00\x00\x00\x00\x00$/\x00\x00\x0d\x00\x00/r],
	['UnexpectedEof', substr($good, 0, -1)],
	['UnexpectedEof', ''],
	['InvalidUtf8', batch(1, undef, [65535, 'string', [[1, "\xff"]]])],
	['InvalidUtf8', batch(1, undef, [65535, 'string',
	    [[1, "\xed\xa0\x80"]]])],
	['BufferOverflow', pack('a4 C C n n', 'XMBP', 1, 0, 1, 257)
	    . (pack('n C n', 0, 0, 0) x 257)],
	['BufferOverflow', batch(1, undef, [0, 'f64_array',
	    [[1, (0) x 4097]]])],
	['TrailingData', $good . "\x00"],
);
for my $d (@decode) {
	my ($kind, $b, $re) = @$d;
	my ($dst2, $body) = send_batch($all->{id}, $b);
	is_error($dst2, $body, 400, "decode error $kind");
	like($body->{detail} // '', qr/\b$kind\b/, "$kind named in the detail");
	like($body->{detail} // '', $re, "$kind: $re") if $re;
}
is_error(send_batch($all->{id}, 'x' x (1024 * 1024 + 1)), 413,
    'a body over 1 MiB');

# --- counters, device, close ---
($st, $s) = close_session($all->{id});
is($st, 200, 'close: 200') or diag explain $s;
is(keys_of($s), $SESSION, 'close: the session fields');
is($s->{status}, 'closed', 'close: closed');
is($s->{total_samples}, $total, 'total_samples: every sample stored');
is($s->{total_bytes}, $bytes, 'total_bytes: the batches as received');
is($s->{missed_batches}, 0, 'missed_batches 0');
is($p->sql("SELECT sum(sample_count) FROM stored_chunks c JOIN "
	. "ingest_streams t ON t.id = c.stream_id "
	. "WHERE t.session_id = '$all->{id}'"), $total,
    'the chunks hold total_samples samples');
is($p->sql("SELECT count(*) FROM stored_chunks WHERE data IS NULL "
	. "OR object_key IS NOT NULL"), 0, 'every chunk is inline');
ok($p->sql("SELECT closed_at IS NOT NULL FROM ingest_sessions "
	. "WHERE id = '$all->{id}'") eq 't', 'closed_at set');
(undef, $devs) = $p->req(GET => '/api/v1/devices', token => $ta);
($dev) = grep { $_->{device_uid} == 7 } @{$devs // []};
ok(defined $dev->{last_seen_at}, "data sets the device's last_seen_at");
my ($st2, $again) = close_session($all->{id});
is($st2, 200, 'close again: 200');
is_deeply($again, $s, 'close again: the same final session');
my ($cst, $body) = send_batch($all->{id}, batch($seq, 7));
is_error($cst, $body, 409, 'data for a closed session');

# --- auth and facilities ---
my $open = $in->session(11, [0, 'f32']);
my $b1 = batch(0, 11, [0, 'f32', [[1, 1]]]);
is_error(send_batch($open->{id}, $b1, key => $key_b), 404,
    "data for another facility's session");
is_error(close_session($open->{id}, key => $key_b), 403,
    "close of another facility's session");
is_error(send_batch($NOBODY, $b1), 404, 'data for no session');
is_error(close_session($NOBODY), 404, 'close of no session');
is_error(send_batch($open->{id}, $b1, key => ''), 401, 'data without a key');
is_error(send_batch($open->{id}, $b1, key => 'xmk_nothing'), 401,
    'data with an unknown key');
is_error(send_batch($open->{id}, $b1, key => $upload_key), 403,
    'data with an upload-only key');
is_error(close_session($open->{id}, key => $upload_key), 403,
    'close with an upload-only key');
is($p->sql("SELECT total_samples FROM ingest_sessions WHERE id = "
	. "'$open->{id}'"), 0, 'refused batches count nothing');
$p->sql("UPDATE ingest_sessions SET status = 'error' WHERE id = '$open->{id}'");
is_error(send_batch($open->{id}, $b1), 409, 'data for an errored session');
is_error(close_session($open->{id}), 409, 'close of an errored session');

# --- gap accounting over HTTP ---
my @vectors = (
	['sequential', [0, 1, 2, 3], [0, 0, 0, 0]],
	['gaps', [10, 11, 14, 15, 20], [0, 0, 2, 2, 6]],
	['wrap', [65534, 65535, 0, 1, 3], [0, 0, 0, 0, 1]],
	['repeats', [5, 6, 6, 6, 7], [0, 0, 0, 0, 0]],
	['late', [0, 1, 4, 2, 3, 5], [0, 0, 2, 2, 2, 2]],
	['d = 32767 / 32768', [0, 32768, 32768 + 32769], [0, 32767, 32767]],
);
for my $v (@vectors) {
	my ($name, $seqs, $want) = @$v;
	my $g = $in->session(21, [0, 'i8']);
	my @got;
	# A value per batch: a repeat of a seq has other bytes (a resent
	# batch with the same bytes is a retry, t/e2e/ingest-retry.t).
	for my $i (0 .. $#$seqs) {
		my $q = $seqs->[$i];
		my ($gst, $gack) = send_batch($g->{id},
			batch($q, 21, [0, 'i8', [[$q, $i]]]));
		push @got, $gst == 200 ? $gack->{missed_batches} : "status $gst";
	}
	is_deeply(\@got, $want, "gaps, $name: missed_batches after each");
	my ($fst, $fin) = close_session($g->{id});
	is($fin->{total_samples}, scalar @$seqs,
	    "gaps, $name: late and repeated batches are stored");
}

# --- durability: PostgreSQL restart, kill -9 of the FastCGI programs ---
my $dur = $in->session(31, [0, 'i32']);
my ($acked, $dseq) = (0, 0);
sub put {
	my ($n) = @_;
	my ($pst, $pack) = send_batch($dur->{id}, batch($dseq, 31,
		[0, 'i32', [map { [$dseq * 1000 + $_, $_] } 1 .. $n]]));
	$dseq++;
	$acked = $pack->{accepted_samples} if $pst == 200;
	return $pst;
}
is(put(100), 200, 'durability: a batch committed');
$stack->stop_db;
my ($down, $dbody) = send_batch($dur->{id}, batch($dseq, 31));
is_error($down, $dbody, 503, 'database down: 503');
$stack->start_db;
my $up = 0;
for (1 .. 20) {	# the first request after the restart may find a dead connection
	last if ($up = put(50)) == 200;
}
is($up, 200, 'after the restart batches are committed again');
is($p->sql("SELECT sum(sample_count) FROM stored_chunks c JOIN "
	. "ingest_streams t ON t.id = c.stream_id WHERE t.session_id = "
	. "'$dur->{id}'"), $acked, 'acknowledged samples survived the restart');

# The FastCGI children of this stack's lighttpd named ingest.
sub ingest_pids {
	open my $f, '<', $stack->var . '/run/lighttpd.pid' or return ();
	chomp(my $lpid = <$f> // '');
	my @pids;
	for my $stat (glob '/proc/[0-9]*/stat') {
		open my $s, '<', $stat or next;
		my $line = <$s> // '';
		push @pids, $1 if $line =~ /^(\d+) \(ingest\) \S+ (\d+)/
		    && $2 == $lpid;
	}
	return @pids;
}
my @pids = ingest_pids();
ok(@pids > 0, 'the ingest FastCGI processes found');
is(put(70), 200, 'one more batch committed');
kill 'KILL', @pids;
my $after = 0;
for (1 .. 80) {	# lighttpd starts them again
	last if ($after = put(30)) == 200;
	select(undef, undef, undef, 0.25);
}
is($after, 200, 'after kill -9 batches are committed again');
is($p->sql("SELECT sum(sample_count) FROM stored_chunks c JOIN "
	. "ingest_streams t ON t.id = c.stream_id WHERE t.session_id = "
	. "'$dur->{id}'"), $acked, 'every acknowledged sample is stored, once');
is($p->sql("SELECT total_samples FROM ingest_sessions WHERE id = "
	. "'$dur->{id}'"), $acked, 'total_samples agrees');

# --- the reaper ---
my $reaper = "$ENV{XMHUB_BUILDDIR}/jobs/xmhub-ingest-reaper";
my $silent = $in->session(41, [0, 'i8']);
my $talking = $in->session(42, [0, 'i8']);
my $fresh = $in->session(43, [0, 'i8']);
$p->sql("UPDATE ingest_sessions SET started_at = now() - interval '1 hour' "
	. "WHERE id IN ('$silent->{id}', '$talking->{id}')");
is((send_batch($talking->{id}, batch(0, 42, [0, 'i8', [[1, 1]]])))[0], 200,
    'reaper: an old session with fresh data');
{
	local $ENV{XMHUB_ENV_FILE} = $stack->env_file;
	my ($rst, $out, $err) = run([$reaper, '--once']);
	is($rst, 0, 'reaper --once: exit 0') or diag $err;
	($rst, undef, $err) = run([$reaper]);
	is($rst, 2, 'reaper without --once or --loop: usage');
}
my %state;
for my $x (['silent', $silent], ['talking', $talking], ['fresh', $fresh]) {
	$state{$x->[0]} = $p->sql("SELECT status FROM ingest_sessions "
		. "WHERE id = '$x->[1]{id}'");
}
is_deeply(\%state, {silent => 'error', talking => 'active',
	fresh => 'active'}, 'reaper: only the silent session is moved to error');
is_error(send_batch($silent->{id}, batch(0, 41)), 409,
    'data for a reaped session');

# The daemon of the stack, with a short timeout.
$stack->restart(env => {XMHUB_SESSION_TIMEOUT => 1});
my $quiet = $in->session(44, [0, 'i8']);
my $status = 'active';
for (1 .. 120) {	# a pass every second; give it a generous while
	$status = $p->sql("SELECT status FROM ingest_sessions WHERE id = "
		. "'$quiet->{id}'");
	last if $status ne 'active';
	select(undef, undef, undef, 0.25);
}
is($status, 'error', 'the reaper daemon moves a silent session to error');

done_testing;
