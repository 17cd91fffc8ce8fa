#!/usr/bin/perl
# bench/ingest - sensor ingest under load, next to its floors, in one run
# on loopback (this machine is shared and noisy: the ratios mean more
# than the figures).
#
# - HTTP: wrk POSTs the cellular batch (4 streams x 250 f32 samples with
#   device_id, 12,066 bytes) to /api/v1/ingest/sessions/{id}/data, each
#   answer a committed transaction; next to the same POST to
#   bench/fcgi-sink (a FastCGI program that reads the body and answers
#   200) and to bench/xmbp's decode rate of that batch.
# - WebSocket: one connection, a window of WS_WINDOW batches in flight,
#   one 4-byte ack per batch.
# - Storage: a session of realistic samples (a 100 Hz signal) sent,
#   closed and compacted; stored bytes per sample (chunk bytes as
#   stored, timestamps included, over samples) against raw f32 (4 bytes
#   of value + 8 of timestamp).
#
# Runs from a build tree (make bench): a throwaway stack through
# t/lib/Xmhub/Stack.pm.  BENCH_SECONDS (10), BENCH_CONNECTIONS (16).
use strict;
use warnings;
use HTTP::Tiny;
use JSON::PP;
use Time::HiRes qw(time);
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Stack;
use Xmhub::Test qw(run xmhub_json);
use Xmhub::WS;
use Xmhub::Wrk qw(wrk_program);

my $seconds = $ENV{BENCH_SECONDS} || 10;
my $conns = $ENV{BENCH_CONNECTIONS} || 16;
my $window = $ENV{WS_WINDOW} || 8;
wrk_program();
my $build = $ENV{XMHUB_BUILDDIR};

my $s = Xmhub::Stack->start(env => {XMHUB_COMPACT_INTERVAL => 86400,
	XMHUB_COMPACT_MIN_AGE => 0});
$ENV{XMHUB_ENV_FILE} = $s->env_file;
delete $ENV{XMHUB_DATABASE_URL};

sub cli { return xmhub_json([@_]) }
my $fac = cli(qw(facility create --name Bench --slug bench))->{id};
my $key = cli('api-key', 'create', '--facility', $fac, '--name', 'bench',
	'--scopes', 'ingest')->{key};

my $http = HTTP::Tiny->new(timeout => 30, keep_alive => 1);
sub session {
	my ($uid) = @_;
	my $r = $http->post($s->url('/api/v1/ingest/sessions'), {
		headers => {'content-type' => 'application/json',
			'x-api-key' => $key},
		content => encode_json({device_uid => $uid, streams => [map {
			{stream_index => $_, name => "ch$_",
			    value_type => 'f32', sample_rate_hz => 100} } 0 .. 3]})});
	die "session: $r->{status} $r->{content}\n" if $r->{status} != 201;
	return decode_json($r->{content})->{id};
}

# The cellular batch: device_id, 4 streams of 250 f32 at 100 Hz from t0.
sub cellular {
	my ($seq, $uid, $t0, $value) = @_;
	my $b = pack('a4 C C n N n', 'XMBP', 1, 1, $seq, $uid, 4);
	for my $ch (0 .. 3) {
		$b .= pack('n C n', $ch, 1, 250);
		$b .= pack('Q> f>', $t0 + $_ * 10_000, $value->($ch, $_))
		    for 0 .. 249;
	}
	return $b;
}
my $batch = cellular(1, 7, 1_700_000_000_000_000, sub { $_[1] * 0.5 });
my $sid = session(7);

# wrk(path, body file): (requests/s, p99 ms)
my $lua = $s->var . '/tmp/post.lua';
my $body = $s->var . '/tmp/batch.bin';
open(my $bf, '>:raw', $body) or die "$body: $!";
print $bf $batch;
close $bf;
open(my $lf, '>', $lua) or die "$lua: $!";
print $lf <<"LUA";
local f = assert(io.open("$body", "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/octet-stream"
wrk.headers["X-Api-Key"] = "$key"
LUA
close $lf;

# The same batch spread over 64 sessions in turn (of one device, as the
# batch names its device_id): a session's batches serialize on its row
# lock (gap accounting); sessions, like devices, do not.
my @sids = map { session(7) } 1 .. 64;
my $lua_many = $s->var . '/tmp/post-many.lua';
open($lf, '>', $lua_many) or die "$lua_many: $!";
print $lf "dofile(\"$lua\")\nlocal paths = {\n",
    map({ "\"/api/v1/ingest/sessions/$_/data\",\n" } @sids), "}\n", <<'LUA';
local n = 0
request = function()
	n = n + 1
	return wrk.format(nil, paths[n % #paths + 1])
end
LUA
close $lf;

sub wrk {
	my ($path, $script) = @_;
	return Xmhub::Wrk::wrk($s->url($path), conns => $conns,
		seconds => $seconds, name => $path,
		args => ['-s', $script // $lua]);
}

my @sink = wrk('/bench/sink');
my @ingest = wrk("/api/v1/ingest/sessions/$sid/data");
my @many = wrk('/', $lua_many);

# Diagnostic, at the end of the HTTP cases: the same with
# synchronous_commit off (an acknowledgement then no longer means
# durable), to show what waiting for the WAL flush costs.
sub sync_commit {
	my ($v) = @_;
	my ($st, $out, $err) = $s->psql("ALTER DATABASE xmhub SET "
		. "synchronous_commit = $v");
	die "psql: $err" if $st != 0;
	$s->restart; # new connections take the setting
}

# WebSocket: one connection, $window batches in flight.
my ($ws, $wst) = Xmhub::WS->connect($s->port,
	"/api/v1/ingest/ws?session_id=$sid", {'X-Api-Key' => $key});
die "websocket upgrade: $wst\n" unless $ws;
my ($sent, $acked, $t0) = (0, 0, time);
my $frame = Xmhub::WS::frame(2, $batch);
while (time - $t0 < $seconds || $acked < $sent) {
	while ($sent - $acked < $window && time - $t0 < $seconds) {
		$ws->write_raw($frame) or die "websocket: write failed\n";
		$sent++;
	}
	my ($type, $payload) = $ws->read_message(30);
	die "websocket: $type " . ($payload // '') . "\n"
	    if $type ne 'binary' || length $payload != 4;
	$acked++;
}
my $ws_rate = $acked / (time - $t0);
$ws->close;

sync_commit('off');
my @nosync = wrk("/api/v1/ingest/sessions/$sid/data");
sync_commit('on');

# bench/xmbp's decode of the cellular batch, in samples/s.
my ($xst, $xout, $xerr) = run(["$build/bench/xmbp"]);
die "bench/xmbp: $xerr" if $xst != 0;
my ($decode_msps) = $xout =~ /^\| cellular[^|]*\| decode \| [\d.]+ \| ([\d.]+) \|/m
    or die "bench/xmbp: no cellular decode row\n$xout";
my $decode_rate = $decode_msps * 1e6 / 1000;

# Storage: 1,000 batches of a 100 Hz signal (250,000 samples per
# stream), closed and compacted.
my $ssid = session(8);
my $t = 1_700_000_000_000_000;
for my $n (0 .. 999) {
	my $b = cellular($n, 8, $t + $n * 2_500_000, sub {
		my ($ch, $i) = @_;
		my $k = $n * 250 + $i;
		return 20 + 5 * sin($k / 100 + $ch) + ($k * 7919 % 13) * 0.01;
	});
	my $r = $http->post($s->url("/api/v1/ingest/sessions/$ssid/data"), {
		headers => {'content-type' => 'application/octet-stream',
			'x-api-key' => $key}, content => $b});
	die "data: $r->{status} $r->{content}\n" if $r->{status} != 200;
}
my $r = $http->post($s->url("/api/v1/ingest/sessions/$ssid/close"),
	{headers => {'x-api-key' => $key}});
die "close: $r->{status}\n" if $r->{status} != 200;

sub sizes {
	my ($st, $out, $err) = $s->psql('SELECT sum(c.byte_size), '
		. 'sum(c.sample_count), count(*), '
		. 'sum(pg_column_size(c.data)) FROM stored_chunks c JOIN '
		. "ingest_streams t ON t.id = c.stream_id WHERE t.session_id = "
		. "'$ssid'");
	die "psql: $err" if $st != 0;
	chomp $out;
	return split /\|/, $out;
}
my @inline = sizes();
my @compact = ('env', 'XMHUB_ENV_FILE=' . $s->env_file,
	"$build/jobs/xmhub-ingest-compact", '--once');
unshift @compact, 'runuser', '-u', 'xmhub', '--' if $> == 0;
my $c0 = time;
my ($cst, $cout, $cerr) = run(\@compact);
die "compact: $cout$cerr" if $cst != 0;
my $compact_s = time - $c0;
my @packed = sizes();

my $floor = $sink[0];
printf "wrk: 2 threads, %d connections, %d s per case, loopback; "
    . "the cellular batch: %d bytes, 1,000 f32 samples\n\n", $conns,
    $seconds, length $batch;
print "| case | batches/s | samples/s | p99 ms | vs FastCGI sink | "
    . "vs decode |\n|---|---:|---:|---:|---:|---:|\n";
printf "| %s | %.0f | %.0f | %s | %.2fx | %.3fx |\n", @$_
    for (['POST to a FastCGI sink (reads the body, answers 200)', $floor,
	    $floor * 1000, sprintf('%.2f', $sink[1]), 1, $floor / $decode_rate],
	['POST /api/v1/ingest/sessions/{id}/data, one session (committed)',
	    $ingest[0],
	    $ingest[0] * 1000, sprintf('%.2f', $ingest[1]),
	    $ingest[0] / $floor, $ingest[0] / $decode_rate],
	['the same over 64 sessions in turn', $many[0],
	    $many[0] * 1000, sprintf('%.2f', $many[1]), $many[0] / $floor,
	    $many[0] / $decode_rate],
	['one session, synchronous_commit off (diagnostic: not durable)',
	    $nosync[0], $nosync[0] * 1000, sprintf('%.2f', $nosync[1]),
	    $nosync[0] / $floor, $nosync[0] / $decode_rate],
	["WebSocket, one connection, $window in flight", $ws_rate,
	    $ws_rate * 1000, '-', $ws_rate / $floor, $ws_rate / $decode_rate],
	['bench/xmbp decode + walk (one core, no I/O)', $decode_rate,
	    $decode_rate * 1000, '-', $decode_rate / $floor, 1]);
printf "\nStored bytes per f32 sample (timestamp included; raw: 4 + 8 = "
    . "12 bytes), %d samples:\n", $packed[1];
printf "- inline (one XMCH chunk per batch block, in PostgreSQL): %.2f B "
    . "as chunks (%.2fx raw), %.2f B in the column after TOAST\n",
    $inline[0] / $inline[1], $inline[0] / $inline[1] / 12,
    $inline[3] / $inline[1];
printf "- compacted (%d chunks in the object store, zstd): %.2f B "
    . "(%.2fx raw); compaction took %.1f s for %d inline chunks\n",
    $packed[2], $packed[0] / $packed[1], $packed[0] / $packed[1] / 12,
    $compact_s, $inline[2];
