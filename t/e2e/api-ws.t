#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# WebSocket ingest end to end through lighttpd, the WebSocket front
# (ws/xmhub-ws-guard) and websocketd (doc/websocket.md): every value type
# acknowledged and read back identical, one 4-byte ack message per batch however
# batches are cut into messages and frames, the error message then a Close 1008,
# refused upgrades as plain HTTP answers (websocketd never reached), ping/pong,
# the 256 KB limit, the front's message limit (Close 1009 before websocketd
# holds the message, other connections unharmed) and connection cap, the idle
# timeout, the checks the ws binary makes itself.
use strict;
use warnings;
use Test::More;
use JSON::PP;
use HTTP::Tiny;
use Time::HiRes qw(sleep time);
use Xmhub::Ingest;
use Xmhub::Platform qw(is_error);
use Xmhub::WS;
use Xmhub::XMBP qw(batch stored sent);

my $p = Xmhub::Platform->start;
my $stack = $p->stack;
my $fac = $p->facility('WS A');
my $other = $p->facility('WS B');
my $ta = $p->token($p->user('facility_admin', $fac));
my $tb = $p->token($p->user('facility_admin', $other));
my $NOBODY = '00000000-0000-4000-8000-000000000000';

my $key = $p->api_key($ta, 'ingest');
my $key_b = $p->api_key($tb, 'ingest');
my $upload_key = $p->api_key($ta, 'upload');
my $in = Xmhub::Ingest->new($p, $key);

# ws($sid, %opt): (client, status, head, body) of an upgrade through
# lighttpd; options key (default $key, undef for none), query (the whole
# query string), port (default lighttpd's).
sub ws {
	my ($sid, %o) = @_;
	my $k = exists $o{key} ? $o{key} : $key;
	my $q = $o{query} // "session_id=$sid";
	return Xmhub::WS->connect($o{port} // $stack->port,
		"/api/v1/ingest/ws?$q", defined $k ? {'X-Api-Key' => $k} : {});
}

# ack($ws): the next message as an ack (undef unless exactly 4 bytes).
sub ack {
	my ($type, $payload) = $_[0]->read_message(30);
	return undef unless $type eq 'binary' && length $payload == 4;
	return unpack 'N', $payload;
}

# error_of($ws): the detail of the next message, when it is the error
# message (binary, more than 4 bytes, UTF-8 JSON {"detail": ...}).
sub error_of {
	my ($type, $payload) = $_[0]->read_message(30);
	return "($type)" unless $type eq 'binary' && length $payload > 4;
	my $o = eval { JSON::PP->new->utf8->decode($payload) };
	return ref $o eq 'HASH' ? $o->{detail} : "(not JSON: $payload)";
}

# close_of($ws): the status code of the next message when it is a Close
# frame (with its reason after a blank when it has one).
sub close_of {
	my ($type, $payload) = $_[0]->read_message(30);
	return "($type)" unless $type eq 'close' && length $payload >= 2;
	my $reason = substr $payload, 2;
	return unpack('n', $payload) . (length $reason ? " $reason" : '');
}

# gone($ws): the server has dropped the connection (nothing more comes).
sub gone {
	my ($type) = $_[0]->read_message(30);
	return $type eq 'eof';
}

# The text of a log of the stack.
sub log_text {
	open my $f, '<', $stack->var . "/log/$_[0]" or return '';
	local $/;
	return <$f>;
}

# Connections that reached websocketd: the CONNECT lines of its log.
sub ws_connects {
	open my $f, '<', $stack->var . '/log/websocketd.log' or return 0;
	return scalar grep { /\| CONNECT$/ } <$f>;
}

# --- every value type, acknowledged and read back identical ---
my $utf8 = "caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac";
my $nan = unpack('d>', pack('H16', '7ff8000000000000'));
my $nanf = unpack('f>', pack('H8', '7fc00000'));
my @values = (
	[f64 => [[1, 1.5], [2, -0.0], [3, $nan], [4, 9**9**9], [5, 0.1]]],
	[f32 => [[1, 1.5], [2, $nanf], [3, -9**9**9]]],
	[i64 => [[1, '-9223372036854775808'], [2, '9223372036854775807']]],
	[i32 => [[1, -2147483648], [2, 2147483647]]],
	[i16 => [[1, -32768], [2, 32767]]],
	[i8 => [[1, -128], [2, 127]]],
	[bool => [[1, 1], [2, 0]]],
	[string => [[1, $utf8], [2, ''], [3, 'x' x 65535]]],
	[bytes => [[1, join('', map { chr } 0 .. 255)], [2, '']]],
	[json => [[1, '{"a":[1,{"b":null}],"s":"' . $utf8 . '"}']]],
	[f64_array => [[1, map { $_ / 3 } 1 .. 4096], [2]]],
	[f32_array => [[1, map { $_ * 0.5 } 1 .. 4096], [2, $nanf]]],
	[i32_array => [[1, map { $_ - 2048 } 1 .. 4096], [2]]],
);
my $all = $in->session(7, map { [$_, $values[$_][0]] } 0 .. $#values);
my ($c, $st) = ws($all->{id});
is($st, 101, 'upgrade: 101') or BAIL_OUT('no WebSocket');
my ($seq, $total) = (0, 0);
for my $i (0 .. $#values) {
	my ($type, $samples) = @{$values[$i]};
	my $b = batch($seq++, 7, [$i, $type, $samples]);
	$c->send_binary($b);
	$total += @$samples;
	is(ack($c), $total, "$type: one 4-byte ack, accepted_samples so far");
	is(stored($p, $all->{id}, $i), sent($b),
	    "$type: stored samples identical");
}

# --- one ack message per batch, however the batches are cut ---
my $s = $in->session(8, [0, 'f32']);
($c) = ws($s->{id});
my @b = map { batch($_, undef, [0, 'f32', [map { [$_, $_] } 1 .. 1 + $_ % 7]]) }
    0 .. 199;
$c->write_raw(join '', map { Xmhub::WS::frame(2, $_) } @b);
my ($want, @got) = (0);
my @want = map { $want += 1 + $_ % 7 } 0 .. 199;
push @got, ack($c) for 0 .. 199;
is_deeply(\@got, \@want,
    '200 batches pipelined in one write: 200 ack messages, in order');
is($p->sql("SELECT total_samples FROM ingest_sessions WHERE id = "
	. "'$s->{id}'"), $want, 'and counted');

# A connection lives past the web server's body limits: 3 MiB of
# batches of 12 KB through lighttpd, every one acknowledged on the one
# connection (lighttpd counts an upgraded stream as the request's body).
{
	my $big = $in->session(9, [0, 'f32']);
	my ($bc, $bst) = ws($big->{id});
	is($bst, 101, 'long connection: upgrade 101');
	my ($n, $acked, $ok) = (0, 0, 1);
	for my $k (0 .. 255) {
		my $bb = batch($k, undef,
		    [0, 'f32', [map { [$k * 1000 + $_, $_] } 1 .. 1000]]);
		$n += 1000;
		$bc->send_binary($bb);
		my $a = ack($bc);
		if (!defined $a || $a != $n) {
			$ok = 0;
			diag "batch $k: ack " . ($a // 'none') . ", want $n";
			last;
		}
		$acked++;
	}
	ok($ok && $acked == 256,
	    "long connection: 256 batches (3 MiB) acknowledged ($acked)");
}

# Several batches in one message, a batch over several messages.  Each
# batch has a seq of its own: a batch identical to one of the last 64 is
# a retry, acknowledged but not stored again (t/e2e/ingest-retry.t).
my $nseq = 200;
@b = map { batch($nseq++, undef, [0, 'f32', [map { [$_, $_] } 1 .. 1 + $_ % 7]]) }
    0 .. 4;
my $blob = join '', @b[0 .. 4];
$c->send_binary($blob);
$want += 1 + $_ % 7 for 0 .. 4;
my @acks = map { ack($c) } 1 .. 5;
is($acks[4], $want, 'five batches in one message: five acks');
my $one = batch(500, undef, [0, 'f32', [map { [$_, $_] } 1 .. 100]]);
my $after = batch($nseq++, undef, [0, 'f32', [[1, 1]]]);
$c->send_binary(substr $one, 0, 7);
$c->send_binary(substr $one, 7, 300);
$c->send_binary(substr($one, 307) . substr($after, 0, 5));
$c->send_binary(substr $after, 5);
is(ack($c), $want += 100, 'a batch over three messages: one ack');
is(ack($c), $want += 1, 'the next batch, begun in the same message');
$c->ping('still there?');
my ($type, $payload) = $c->read_message(30);
is("$type $payload", 'pong still there?',
    'no ack more than batches: the next message is the pong');

# One message in several frames.
$one = batch(501, undef, [0, 'f32', [map { [$_, $_] } 1 .. 100]]);
$c->send_binary($one, frames => 5);
@b = map { batch($nseq++, undef, [0, 'f32', [map { [$_, $_] } 1 .. 1 + $_ % 7]]) }
    0 .. 2;
is(ack($c), $want += 100, 'a batch in five frames: one ack');
$c->write_raw(Xmhub::WS::frames(2, join('', @b[0 .. 2]), 4)
    . Xmhub::WS::frame(9, 'p'));
# The pong comes from websocketd at once, the acks after the commits.
my (@msgs, @pongs);
for (1 .. 4) {
	($type, $payload) = $c->read_message(30);
	if ($type eq 'pong') {
		push @pongs, $payload;
	} else {
		push @msgs, $type eq 'binary' && length $payload == 4
		    ? unpack('N', $payload) : "$type $payload";
	}
}
is_deeply(\@msgs, [map { $want += 1 + $_ % 7 } 0 .. 2],
    'three batches in one message of four frames, then a ping: three acks');
is_deeply(\@pongs, ['p'], 'and the pong');
$c->close;

# --- data survive: acked means stored, whatever happens next ---
$s = $in->session(9, [0, 'i32']);
($c) = ws($s->{id});
$c->send_binary(batch(0, undef, [0, 'i32', [[10, 42]]]));
is(ack($c), 1, 'acked');
$c->close; # gone without a Close frame
is(stored($p, $s->{id}, 0), '[[10,42]]', 'the acked batch is stored');

# --- errors: one message of UTF-8 JSON, then the end ---
$s = $in->session(10, [0, 'f32']);
($c) = ws($s->{id});
$c->send_binary(batch(0, undef, [0, 'f32', [[1, 1]]]));
$c->send_binary('XMBQ' . "\x01\x00\x00\x00\x00\x00");
is(ack($c), 1, 'error after a good batch: its ack first');
like(error_of($c), qr/InvalidMagic/, 'a decode error: the message names it');
is(close_of($c), '1008 the server ended the session',
    'then a Close 1008 from the front');
ok(gone($c), 'then the connection ends');

my @errors = (
	['XMBP' . "\x02\x00\x00\x00\x00\x00", qr/UnsupportedVersion/,
	    'unsupported version'],
	[pack('a4 C C n n n C n', 'XMBP', 1, 0, 0, 1, 0, 13, 0),
	    qr/InvalidValueType/, 'unknown value type'],
	[batch(0, undef, [0, 'string', [[1, "\xff"]]]), qr/InvalidUtf8/,
	    'invalid UTF-8'],
	[batch(0, undef, [3, 'f32', [[1, 1]]]), qr/stream 3 is not declared/,
	    'undeclared stream'],
	[batch(0, undef, [0, 'i8', [[1, 1]]]), qr/declared f32/,
	    'wrong value type'],
	[batch(0, 11, [0, 'f32', [[1, 1]]]), qr/device_id 11/,
	    'device_id of another device'],
);
for my $e (@errors) {
	($c) = ws($s->{id});
	$c->send_binary($e->[0]);
	like(error_of($c), $e->[1], "$e->[2]: the error message");
	like(close_of($c), qr/^1008 /, "$e->[2]: then a Close 1008");
	ok(gone($c), "$e->[2]: then the end");
}
# The session was closed meanwhile: 409 from the ws binary.
($c) = ws($s->{id});
$p->req(POST => "/api/v1/ingest/sessions/$s->{id}/close", key => $key);
$c->send_binary(batch(1, undef, [0, 'f32', [[2, 2]]]));
like(error_of($c), qr/clos/,
    'session closed after the upgrade: the error message');
like(close_of($c), qr/^1008 /,
    'session closed after the upgrade: then a Close 1008');
ok(gone($c), 'session closed after the upgrade: then the end');
is(stored($p, $s->{id}, 0), '[[1,1]]', 'nothing stored from the errors');

# --- over 256 KB: refused ---
$s = $in->session(12, [0, 'bytes']);
($c) = ws($s->{id});
my $big = batch(0, undef, [0, 'bytes', [map { [$_, 'b' x 65535] } 1 .. 4]]);
ok(length $big > 262144, 'a batch over 256 KB (' . length($big) . ')');
$c->send_binary($big);
like(error_of($c), qr/larger than 262144/,
    'over 256 KB (within the front\'s 4 KiB headroom): the program\'s '
    . 'error message');
like(close_of($c), qr/^1008 /, 'over 256 KB: then a Close 1008');
ok(gone($c), 'over 256 KB: then the end');
my $max = batch(0, undef, [0, 'bytes', [map { [$_, 'b' x 65535] } 1 .. 3]]);
my $fill = 262144 - length($max) - 10;
$max = batch(0, undef, [0, 'bytes', [(map { [$_, 'b' x 65535] } 1 .. 3),
	[4, 'c' x $fill]]]);
is(length $max, 262144, 'a batch of exactly 256 KB');
($c) = ws($s->{id});
$c->send_binary($max, frames => 5);
is(ack($c), 4, 'exactly 256 KB: taken');
$c->close;

# --- the front: messages over XMHUB_WS_MAX_MESSAGE (default 256 KiB + 4
# KiB) get a Close 1009 before websocketd holds them ---
my $LIMIT = 262144 + 4096;
my $var = $stack->var;
my $wsd = do {
	open my $f, '<', "$var/run/websocketd.pid" or die "websocketd.pid: $!";
	my $pid = <$f>;
	chomp $pid;
	$pid;
};
# The resident memory of a process, in kB.
sub rss_kb {
	open my $f, '<', "/proc/$_[0]/status" or return 0;
	while (<$f>) {
		return $1 if /^VmRSS:\s+(\d+) kB/;
	}
	return 0;
}
is(do { open my $f, '<', "/proc/$wsd/comm"; scalar <$f> }, "websocketd\n",
    'websocketd is the daemon of VAR/run/websocketd.pid');

# A second connection, opened before, must work during and after.
my $ks = $in->session(16, [0, 'f32']);
my ($kc) = ws($ks->{id});
my $kn = 0;
my $keep = sub {
	$kc->send_binary(batch($kn, undef, [0, 'f32', [[$kn, $kn]]]));
	$kn++;
	return ack($kc) // -1;
};
is($keep->(), 1, 'a second connection: acked');

# A 150 MB frame announced, then its payload streamed slowly: without the
# front, websocketd would buffer all of it (it went from 95 to 754 MB).
my $idle = rss_kb($wsd);
ok($idle > 0, "websocketd's memory before: $idle kB");
$s = $in->session(17, [0, 'bytes']);
($c) = ws($s->{id});
$c->write_raw(Xmhub::WS::head(2, 150 * 1024 * 1024));
my ($sent, $peak, @during, $seen, $dropped) = (0, $idle);
my $t0 = time;
# Up to 40 MB: enough to show in websocketd's memory, had it got them.
while ($sent < 40 << 20 && time - $t0 < 60) {
	if (!$c->write_raw('y' x 65536)) {
		$dropped = 'writes fail';
		last;
	}
	$sent += 65536;
	my $r = rss_kb($wsd);
	$peak = $r if $r > $peak;
	push @during, $keep->() if $sent % (1 << 20) == 0 || $sent == 65536;
	my ($t, $pl) = $c->read_frame(0.02);
	if ($t eq 'close') {
		$seen = length $pl >= 2 ? unpack('n', $pl) . ' ' . substr($pl, 2)
		    : '(no code)';
	} elsif ($t eq 'eof') {
		$dropped = 'the server closed';
		last;
	}
}
note("streamed $sent bytes of the 150 MB frame in "
    . sprintf('%.2f', time - $t0) . ' s; ' . ($dropped // 'not dropped'));
is($seen, "1009 a message is limited to $LIMIT bytes",
    'a 150 MB frame: Close 1009 with the limit');
ok($dropped, 'and the connection is dropped');
ok($sent < 8 << 20, 'long before its payload could pile up anywhere');
ok($peak - $idle < 20 * 1024,
    "websocketd's memory stayed under 20 MB over its idle size "
    . "($idle kB, at most $peak kB)");
ok(@during && !grep({ $_ < 0 } @during),
    'the second connection got its acks meanwhile (' . @during . ')');
like(log_text('ws-guard.log'),
    qr/a frame of 157286400 bytes makes a message of 157286400: over the limit of $LIMIT, Close 1009/,
    "the front's log says so");
is($p->sql("SELECT total_samples FROM ingest_sessions WHERE id = "
	. "'$s->{id}'"), 0, 'nothing stored');
is($keep->(), $kn, 'the second connection works after it');
ok(rss_kb($wsd) - $idle < 20 * 1024, "websocketd's memory after: "
    . rss_kb($wsd) . ' kB');

# Fragmented: the frames of a message add up.
($c) = ws($s->{id});
$c->write_raw(Xmhub::WS::frames(2, 'z' x ($LIMIT + 1), 3));
is(close_of($c), "1009 a message is limited to $LIMIT bytes",
    'three frames of a message of the limit + 1 byte: Close 1009');
ok(gone($c), 'then the end');
# Exactly the limit passes: one 256 KB batch and 4 KiB of the next.
my $next = batch(1, undef, [0, 'bytes', [[9, 'n' x 5000]]]);
($c) = ws($s->{id});
$c->send_binary($max . substr($next, 0, 4096), frames => 4);
is(ack($c), 4, 'a message of exactly the limit in four frames: passes');
$c->send_binary(substr $next, 4096);
is(ack($c), 5, 'and the batch it began is taken');
$c->close;
# Against RFC 6455: Close 1002.
($c) = ws($s->{id});
$c->write_raw(Xmhub::WS::head(2, 4, 1, '') . 'abcd');
is(close_of($c), '1002 a client frame must be masked',
    'an unmasked frame: Close 1002');
ok(gone($c), 'then the end');

is($keep->(), $kn, 'the second connection still works after all that');
$kc->close_frame(1000);
is(close_of($kc), '1000', 'a Close from the client: echoed');
ok(gone($kc), 'then the end, no Close of the front');

# --- ping/pong on a quiet connection ---
($c) = ws($s->{id});
$c->ping('abc');
($type, $payload) = $c->read_message(30);
is("$type $payload", 'pong abc', 'ping: pong with its payload');
$c->close_frame(1000);
is(close_of($c), '1000', 'Close from the client: echoed');
ok(gone($c), 'Close from the client: then the end');

# --- refused upgrades: plain HTTP, websocketd not reached ---
my $closed = $in->session(13, [0, 'f32']);
$p->req(POST => "/api/v1/ingest/sessions/$closed->{id}/close", key => $key);
my $theirs = do {
	my ($sst, $o) = $p->req(POST => '/api/v1/ingest/sessions',
		key => $key_b, json => {device_uid => 1, streams => [
		    {stream_index => 0, name => 'a', value_type => 'f32'}]});
	$o;
};
my $live = $in->session(14, [0, 'f32']);
my $connects = ws_connects();
ok($connects > 0, 'websocketd logs the connections it gets');
my @refused = (
	[[$live->{id}, key => undef], 401, 'no key'],
	[[$live->{id}, key => 'xk_nonsense'], 401, 'an invalid key'],
	[[$live->{id}, key => undef, query => "session_id=$live->{id}&api_key=$key"],
	    400, 'the key in the query string'],
	[[$live->{id}, query => "session_id=$live->{id}&x-api-key=$key"], 400,
	    'the key in the query string, besides the header'],
	[[$live->{id}, key => $upload_key], 403, 'a key without the ingest scope'],
	[[$live->{id}, query => ''], 400, 'no session_id'],
	[[$live->{id}, query => 'session_id=42'], 400, 'session_id not a UUID'],
	[[$NOBODY], 404, 'an unknown session'],
	[[$theirs->{id}], 404, "another facility's session"],
	[[$closed->{id}], 409, 'a closed session'],
);
for my $r (@refused) {
	my ($rc, $rst, $head, $body) = ws(@{$r->[0]});
	ok(!$rc, "$r->[2]: no upgrade");
	is_error($rst, eval { decode_json($body) }, $r->[1], $r->[2]);
	like($head, qr{^Content-Type: application/json}mi, "$r->[2]: JSON");
}
my ($gst, $gbody) = $p->req(GET => "/api/v1/ingest/ws?session_id=$live->{id}",
	key => $key);
is_error($gst, $gbody, 400, 'a plain GET, no upgrade asked for');
like($gbody->{detail} // '', qr/WebSocket upgrade/, 'a plain GET: detail');
is(ws_connects(), $connects, 'websocketd saw none of the refused requests');
($c, $st) = ws($live->{id});
is($st, 101, 'the same session with its key: 101');
$c->ping('x');
$c->read_message(30);
is(ws_connects(), $connects + 1, 'and that one reached websocketd');
$c->close;

# --- the ws binary checks for itself (websocketd reached directly) ---
for my $d ([[$live->{id}, port => $stack->wsd_port, key => undef],
	    qr/X-Api-Key/, 'no key'],
	[[$live->{id}, port => $stack->wsd_port, key => $upload_key],
	    qr/ingest scope/, 'no ingest scope'],
	[[$closed->{id}, port => $stack->wsd_port], qr/closed|not active/,
	    'a closed session']) {
	my ($dc, $dst) = ws(@{$d->[0]});
	is($dst, 101, "direct, $d->[2]: websocketd upgrades");
	like(error_of($dc), $d->[1], "direct, $d->[2]: the binary refuses");
	ok(gone($dc), "direct, $d->[2]: then the end, no Close (websocketd)");
}

# --- the front's own answers before an upgrade ---
my ($rc, $rst, $rhead, $rbody) = Xmhub::WS->connect($stack->ws_port,
	"/api/v1/ingest/ws?session_id=$live->{id}",
	{'X-Api-Key' => $key, 'X-Pad' => 'p' x 9000});
is_error($rst, eval { decode_json($rbody) }, 431,
    'a request head over 8 KiB, straight to the front');
my $plain = HTTP::Tiny->new(timeout => 30, keep_alive => 0)->get(
	'http://127.0.0.1:' . $stack->ws_port . '/api/v1/ingest/ws');
is("$plain->{status} $plain->{content}", "404 404 page not found\n",
    "not an upgrade, straight to the front: websocketd's answer, relayed");
ok($stack->stop_daemon('websocketd'), 'websocketd stopped');
($rc, $rst, $rhead, $rbody) = ws($live->{id});
is_error($rst, eval { decode_json($rbody) }, 502, 'websocketd down');
like($rbody, qr/not reachable/, 'websocketd down: the detail says so');
like($rhead, qr/^Retry-After: \d+\r?$/mi,
    'websocketd down: a Retry-After, as every refusal');

# --- the front's connection cap: a 503 over it ---
$stack->restart(env => {XMHUB_WS_MAX_CONNECTIONS => 2});
my @open = map { (ws($in->session($_, [0, 'f32'])->{id}))[0] } 18, 19;
ok($open[0] && $open[1], 'two connections at the cap of 2');
my $third = $in->session(20, [0, 'f32']);
($rc, $rst, $rhead, $rbody) = ws($third->{id});
ok(!$rc, 'a third: no upgrade');
is_error($rst, eval { decode_json($rbody) }, 503, 'a third');
like($rhead, qr/^Retry-After: \d+\r?$/mi, 'a third: Retry-After');
like(log_text('ws-guard.log'), qr/2 connections: 503/, "the front's log");
$open[0]->close_frame(1000);
is(close_of($open[0]), '1000', 'one of the two leaves');
my $again;
for (1 .. 100) {
	($again) = ws($third->{id});
	last if $again;
	sleep 0.1;
}
ok($again, 'then the third is taken');
$_->close for grep { $_ } $again, @open;

# --- the idle timeout ---
$stack->restart(env => {XMHUB_WS_IDLE_TIMEOUT => 1,
	XMHUB_WS_MAX_CONNECTIONS => undef});
$s = $in->session(15, [0, 'f32']);
($c) = ws($s->{id});
$c->send_binary(batch(0, undef, [0, 'f32', [[1, 1]]]));
is(ack($c), 1, 'idle: a batch acked');
like(error_of($c), qr/no message for 1 s/,
    'idle: after the timeout a message says so');
like(close_of($c), qr/^1008 /, 'idle: then a Close 1008');
ok(gone($c), 'idle: then the server ends the connection');

# Under the sanitizers (an ASan build) every ws process reported at its
# exit, into websocketd's log; the front at its stop (each restart and
# this one) into its own; the authorizer into lighttpd's.
ok($stack->stop_daemon('ws-guard'), 'the front stops on SIGTERM');
like(log_text('ws-guard.log'), qr/relaying to websocketd/, 'it had started');
for my $log (qw(websocketd.log ws-guard.log programs.log)) {
	open my $f, '<', $stack->var . "/log/$log" or next;
	my @bad = grep { /Sanitizer|runtime error/ } <$f>;
	is_deeply(\@bad, [], "$log: no sanitizer reports");
}

done_testing;
