#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/ingest - sensor ingest under load, next to its floor and to
# InfluxDB, in one run on loopback (this machine is shared and noisy: the
# ratios mean more than the figures).
#
# - FastCGI sink: bench/fcgi-sink reads the body and answers 200 (the
#   floor of a POST through lighttpd).
# - HTTP: wrk POSTs the cellular batch (4 streams x 250 f32 samples with
#   device_id, 12,034 bytes) to /api/v1/ingest/sessions/{id}/data of
#   sessions in turn, at 8, 32 and 128 connections, as many sessions as
#   connections but at least 64 (a device sends one batch at a time), and
#   2 sessions each written by 4 connections at once (a gateway
#   pipelining for its devices); each answer a committed transaction
#   (group commit: doc/ingest.md).  A
#   session's batches go on in time as a device's do (each 2.5 s after the
#   one before, back to the start after 64) and every request has bytes
#   of its own (its batch_seq), so none is a retry.
# - WebSocket: one connection with 1, 8 and 32 batches in flight, one
#   4-byte ack per batch, the batches going on in time the same way.
# - xmhub sim as the client (doc/sender.md): HTTP with 8, 32 and 128
#   devices (a connection each, one batch in flight), and one device over
#   the WebSocket (through lighttpd) with 1, 8 and 32 in flight, unpaced
#   (--rate 0), batches of 2 f32 streams x 500 samples (1,000 values,
#   12,010 bytes: the cellular batch's size). "vs raw client" is its rate
#   over the wrk or Perl row with as many connections and batches in
#   flight: near 1 means the simulator is not the bottleneck.
# - InfluxDB 1.6.7 (Debian's influxdb, started here on a temporary
#   directory, its WAL fsynced on every write, and stopped by PID): wrk
#   POSTs the same 1,000 values per request as line protocol (250 lines
#   of 4 fields) to /write, right after each HTTP shape with as many
#   connections and as many series (devices) as it has sessions, the
#   series written in turn and going on in time as the sessions do.
#   Every row's "vs InfluxDB" is against InfluxDB with as many
#   connections (or batches in flight) and the fewest series not fewer
#   than its sessions (none for one batch in flight).
# - Storage: a session of realistic samples (a 100 Hz signal) sent,
#   closed and compacted; stored bytes per sample.
#
# For each case: batches/s, values/s, p50/p99 ack latency, the mean
# batches per commit (chunk rows per distinct inserting transaction,
# xmin), the largest RSS of an ingest FastCGI process seen, and the
# server's CPU per batch: xmhub's lighttpd with its programs, its
# PostgreSQL, websocketd and the WebSocket front (Xmhub::Cpu; the load
# generator left out), InfluxDB's influxd.  Then each HTTP shape's
# ceiling: the rate the machine's cores allow at that CPU per batch if
# the server had them all, over InfluxDB's rate: an aim above it can not
# be met on this machine at that cost, whatever the waits.
#
# Runs from a build tree (make bench): a throwaway stack through
# t/lib/Xmhub/Stack.pm.  BENCH_SECONDS (10) per case.
use strict;
use warnings;
use File::Temp qw(tempdir);
use HTTP::Tiny;
use JSON::PP;
use POSIX qw(floor);
use Time::HiRes qw(time sleep);
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Cpu qw(tree_cpu);
use Xmhub::Stack;
use Xmhub::Test qw(run xmhub_json);
use Xmhub::WS;
use Xmhub::Wrk qw(wrk_program wrk_turns);

my $seconds = $ENV{BENCH_SECONDS} || 10;
# The machine's load average over the last minute, now.
sub loadavg {
	open(my $f, '<', '/proc/loadavg') or die "/proc/loadavg: $!";
	return (split ' ', scalar <$f>)[0];
}
my ($started, $load0) = (time, loadavg());
wrk_program();
my $build = $ENV{XMHUB_BUILDDIR};

my $s = Xmhub::Stack->start(env => {XMHUB_COMPACT_INTERVAL => 86400,
	XMHUB_COMPACT_MIN_AGE => 0});
$ENV{XMHUB_ENV_FILE} = $s->env_file;
delete $ENV{XMHUB_DATABASE_URL};
# The processes whose CPU a batch costs the server.
my @server = map { $s->running($_) // die "$_ is not running\n" }
    'lighttpd', 'PostgreSQL', 'websocketd', 'ws-guard';
my (undef, $cores) = run(['nproc']);
chomp $cores;

# cpu_of($pids, $work): $work->() returns a case's figures with n, the
# requests it made; they come back with cpu, the CPU µs per request of
# the trees of @$pids meanwhile.
sub cpu_of {
	my ($pids, $work) = @_;
	my $c0 = tree_cpu(@$pids);
	my $r = $work->();
	$r->{cpu} = (tree_cpu(@$pids) - $c0) * 1e6 / $r->{n} if $r->{n};
	return $r;
}

sub cli { return xmhub_json([@_]) }
my $fac = cli(qw(facility create --name Bench --slug bench))->{id};
my $key = cli('api-key', 'create', '--facility', $fac, '--name', 'bench',
	'--scopes', 'ingest')->{key};

sub psql {
	my ($sql) = @_;
	my ($st, $out, $err) = $s->psql($sql);
	die "psql: $err" if $st != 0;
	chomp $out;
	return $out;
}

# No keep-alive: a connection left idle during a case would be closed
# by lighttpd under the next request.
my $http = HTTP::Tiny->new(timeout => 30, keep_alive => 0);
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
# A device's next 64 batches, 2.5 s apart.
my @batches = map { cellular(1, 7, 1_700_000_000_000_000 + $_ * 2_500_000,
	sub { $_[1] * 0.5 }) } 0 .. 63;

# batch_seq is bytes 6 and 7 of a batch.
sub with_seq { my ($b, $q) = @_; substr($b, 6, 2, pack('n', $q)); return $b }

sub write_file {
	my ($path, $text) = @_;
	open(my $f, '>:raw', $path) or die "$path: $!";
	print $f $text;
	close $f or die "$path: $!";
}
my $tmp = $s->var . '/tmp';
write_file("$tmp/batch.bin", $batch);
write_file("$tmp/batches.bin", join '', @batches);

# wrk(url, conns, script): the case's figures from wrk's --latency
# report: requests/s, how many, p50 and p99 in ms.
sub ms {
	my ($out, $pct) = @_;
	my ($v, $unit) = $out =~ /^\s+\Q$pct\E%\s+([\d.]+)(us|ms|s)\s*$/m
	    or die "wrk: no $pct% latency\n$out";
	return $v * {us => 0.001, ms => 1, s => 1000}->{$unit};
}
sub wrk {
	my ($url, $conns, $script) = @_;
	my ($st, $out, $err) = run([wrk_program(), '-t2', "-c$conns",
		"-d${seconds}s", '--latency', '-s', $script, $url]);
	die "wrk: $err" if $st != 0;
	my ($rps) = $out =~ /Requests\/sec:\s+([\d.]+)/;
	my ($n) = $out =~ /(\d+) requests in /;
	my ($bad) = $out =~ /Non-2xx or 3xx responses: (\d+)/;
	die "wrk $url: $bad failed answers\n$out" if $bad;
	return {rate => $rps, n => $n, p50 => ms($out, 50),
		p99 => ms($out, 99)};
}

# The largest RSS (KiB) of the stack's ingest FastCGI processes now.
sub ingest_rss {
	my $max = 0;
	for my $dir (glob '/proc/[0-9]*') {
		open(my $c, '<', "$dir/cmdline") or next;
		my $cmd = <$c> // '';
		next unless $cmd =~ m{^\Q$build\E/cgi-bin/ingest\0};
		open(my $f, '<', "$dir/status") or next;
		while (<$f>) {
			$max = $1 if /^VmRSS:\s+(\d+)/ && $1 > $max;
		}
	}
	return $max;
}

# Mean batches per commit of the sessions @ids: the batches stored
# (their samples over $values a batch) per distinct transaction that
# inserted their chunks (xmin).
sub per_commit {
	my ($values, @ids) = @_;
	my $list = join ',', map { "'$_'" } @ids;
	my $samples = psql('SELECT sum(total_samples) FROM ingest_sessions '
		. "WHERE id IN ($list)");
	my $tx = psql('SELECT count(DISTINCT c.xmin::text) FROM stored_chunks c '
		. 'JOIN ingest_streams t ON t.id = c.stream_id WHERE t.session_id '
		. "IN ($list)");
	return $tx ? $samples / $values / $tx : 0;
}

my $lua_headers = <<"LUA";
local f = assert(io.open("$tmp/batch.bin", "rb"))
local body = f:read("*a")
f:close()
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/octet-stream"
wrk.headers["X-Api-Key"] = "$key"
LUA

# FastCGI sink.
write_file("$tmp/sink.lua", "$lua_headers\nwrk.body = body\n");
my %res;
$res{sink} = {%{cpu_of(\@server,
	sub { wrk($s->url('/bench/sink'), 32, "$tmp/sink.lua") })},
	conns => 32, sessions => 0};

# Which request of a wrk thread goes where (turn(), Xmhub::Wrk).
my $lua_turns = wrk_turns();

# InfluxDB 1.6.7 (when installed), running from here to the end of the
# HTTP shapes so that each is measured right after xmhub's.
my $influxd = '/usr/bin/influxd';
my ($influx_pid, $influx_url, @influx_templates);
# A case that dies stops it too (the child execs: it runs no END).
END { kill 'TERM', $influx_pid if $influx_pid }
if (-x $influxd) {
	my $dir = tempdir('xmhub-influx-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my ($port, $rpc) = (Xmhub::Stack::free_port(), Xmhub::Stack::free_port());
	write_file("$dir/influxdb.conf", <<"CONF");
reporting-disabled = true
bind-address = "127.0.0.1:$rpc"
[meta]
  dir = "$dir/meta"
[data]
  dir = "$dir/data"
  wal-dir = "$dir/wal"
  wal-fsync-delay = "0s"
  query-log-enabled = false
[http]
  bind-address = "127.0.0.1:$port"
  log-enabled = false
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
CONF
	$influx_pid = fork() // die "fork: $!";
	if ($influx_pid == 0) {
		open(STDOUT, '>', "$dir/influxd.log");
		open(STDERR, '>&', \*STDOUT);
		exec($influxd, '-config', "$dir/influxdb.conf") or POSIX::_exit(127);
	}
	$influx_url = "http://127.0.0.1:$port";
	my $up;
	for (1 .. 100) {
		last if ($up = $http->get("$influx_url/ping")->{status} == 204);
		sleep 0.1;
	}
	$up or die "influxd did not start\n";
	$http->post_form("$influx_url/query", {q => 'CREATE DATABASE bench'})
	    ->{status} == 200 or die "influx: CREATE DATABASE failed\n";
	# A device's 64 batches as line protocol (250 lines of 4 fields, at
	# the times of @batches), its tag "@" set per request.
	for my $b (0 .. 63) {
		my $t0 = 1_700_000_000_000_000 + $b * 2_500_000;
		push @influx_templates, join '', map {
			my $i = $_;
			sprintf("cellular,device=@ %s %d\n", join(',',
			    map { sprintf 'ch%d=%.1f', $_, $i * 0.5 } 0 .. 3),
			    $t0 + $i * 10_000) } 0 .. 249;
	}
}

# influx($conns, $series): InfluxDB's figures with $series devices
# (series) written in turn as xmhub's sessions are.
sub influx {
	my ($conns, $series) = @_;
	write_file("$tmp/influx$conns-$series.lua", "local templates = {\n"
	    . join('', map { "[[$_]],\n" } @influx_templates)
	    . "}\nlocal nses = $series\n$lua_turns" . <<'LUA');
wrk.method = "POST"
wrk.headers["Content-Type"] = "text/plain"
function request()
	local s, b = turn()
	return wrk.format(nil, nil, nil,
		(templates[b % 64 + 1]:gsub("@", tostring(s + 1))))
end
LUA
	return {%{cpu_of([$influx_pid], sub {
		wrk("$influx_url/write?db=bench&precision=u", $conns,
		    "$tmp/influx$conns-$series.lua") })},
		conns => $conns, sessions => $series};
}

# xmhub over HTTP, each shape [name, connections, sessions] on fresh
# sessions and then InfluxDB with as many connections and series: a
# device per connection (64 sessions at least), and a gateway writing
# 2 sessions from 4 connections each (wrk's threads have 4 connections
# each, so a session's batches are 4 in flight).  A session's n-th batch
# is the n-th of @batches (mod 64) with batch_seq n.
my @shapes = ((map { ["http$_", $_, $_ < 64 ? 64 : $_] } 8, 32, 128),
	['http2x4', 8, 2]);
for my $shape (@shapes) {
	my ($name, $conns, $nses) = @$shape;
	my @sids = map { session(7) } 1 .. $nses;
	my $size = length $batch;
	write_file("$tmp/$name.lua", $lua_headers . "local paths = {\n"
	    . join('', map { "\"/api/v1/ingest/sessions/$_/data\",\n" } @sids)
	    . "}\nlocal nses, size = $nses, $size\n$lua_turns"
	    . "local g = assert(io.open(\"$tmp/batches.bin\", \"rb\"))\n"
	    . <<'LUA');
local all = g:read("*a")
g:close()
local bodies = {}
for j = 0, 63 do
	bodies[j + 1] = all:sub(j * size + 1, (j + 1) * size)
end
function request()
	local s, b = turn()
	local seq = b % 65536
	local one = bodies[b % 64 + 1]
	return wrk.format(nil, paths[s + 1], nil, one:sub(1, 6)
		.. string.char(math.floor(seq / 256), seq % 256) .. one:sub(9))
end
LUA
	my $r = cpu_of(\@server,
	    sub { wrk($s->url('/'), $conns, "$tmp/$name.lua") });
	$r->{rss} = ingest_rss();
	$r->{per_commit} = per_commit(1000, @sids);
	$res{$name} = {%$r, conns => $conns, sessions => $nses};
	$res{"influx$conns-$nses"} = influx($conns, $nses) if $influx_pid;
}
if ($influx_pid) {
	kill 'TERM', $influx_pid;
	waitpid($influx_pid, 0);
	$influx_pid = 0;
}

# WebSocket: one connection, a window of batches in flight.
for my $window (1, 8, 32) {
	my $sid = session(7);
	# The WebSocket front's port: lighttpd ends an upgraded connection
	# once its route's request size limit (1 MiB) has passed through.
	my ($ws, $wst) = Xmhub::WS->connect($s->ws_port,
		"/api/v1/ingest/ws?session_id=$sid", {'X-Api-Key' => $key});
	die "websocket upgrade: $wst\n" unless $ws;
	my $r = cpu_of(\@server, sub {
		my ($rate, $lat) = $ws->pipeline($window, $seconds,
		    sub { with_seq($batches[$_[0] % 64], $_[0] % 65536) });
		return {rate => $rate, n => scalar @$lat,
		    p50 => $lat->[int(@$lat * 0.5)],
		    p99 => $lat->[int(@$lat * 0.99)]};
	});
	$ws->close;
	$res{"ws$window"} = {%$r, per_commit => per_commit(1000, $sid),
		conns => $window, sessions => 1};
}

# xmhub sim as the client, same batch size, same run.
my $sim_uid = 2_000_000;
for my $case ((map { ["simhttp$_", "http$_", $_, '--devices', $_] } 8, 32,
	128), (map { ["simws$_", "ws$_", $_, '--devices', 1, '--ws',
	'--in-flight', $_] } 1, 8, 32)) {
	my ($name, $raw, $conns, @opt) = @$case;
	my $j;
	my $r = cpu_of(\@server, sub {
		my ($st, $out, $err) = run(["$build/cli/xmhub", 'sim', '--url',
		    $s->url(''), '--key', $key, '--streams', 2, '--rate', 0,
		    '--batch', 500, '--duration', $seconds, '--device-uid',
		    $sim_uid, '--json', @opt]);
		die "xmhub sim: $err" if $st != 0;
		$j = decode_json($out);
		return {n => $j->{batches}};
	});
	$sim_uid += $j->{devices};
	$res{$name} = {cpu => $r->{cpu}, rate => $j->{batches_per_s},
		p50 => $j->{ack_p50_ms},
		p99 => $j->{ack_p99_ms}, raw => $res{$raw}{rate},
		conns => $conns, sessions => $j->{devices},
		per_commit => per_commit(1000, map { $_->{id} } @{$j->{sessions}}),
		$name =~ /http/ ? (rss => ingest_rss()) : ()};
}

# Storage: 1,000 batches of a 100 Hz signal (250,000 samples per
# stream), closed and compacted.
my $ssid = session(8);
my $t = 1_700_000_000_000_000;
$http = HTTP::Tiny->new(timeout => 30, keep_alive => 1);
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
	return split /\|/, psql('SELECT sum(c.byte_size), '
		. 'sum(c.sample_count), count(*), '
		. 'sum(pg_column_size(c.data)) FROM stored_chunks c JOIN '
		. "ingest_streams t ON t.id = c.stream_id WHERE t.session_id = "
		. "'$ssid'");
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

# The InfluxDB case a row is compared with: as many connections (or
# batches in flight), the fewest series not fewer than its sessions.
sub influx_for {
	my ($c) = @_;
	my ($best) = sort { $a->{sessions} <=> $b->{sessions} }
	    grep { $_->{conns} == $c->{conns} && $_->{sessions} >= $c->{sessions} }
	    map { $res{$_} } grep { /^influx/ } keys %res;
	return $best;
}

printf "%s; wrk: 2 threads, %d s per case, loopback; the cellular batch: %d "
    . "bytes, 1,000 f32 values; load average %s at the start, %s at the "
    . "end\n\n", POSIX::strftime('%Y-%m-%d %H:%M UTC', gmtime $started),
    $seconds, length $batch, $load0, loadavg();
print "| case | batches/s | values/s | p50 ms | p99 ms | batches per commit "
    . "| ingest RSS MiB | server CPU µs a batch | vs FastCGI sink "
    . "| vs InfluxDB (same connections) | vs raw client |\n"
    . "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
for my $row (['sink', 'POST to the FastCGI sink, 32 connections'],
	(map { my ($name, $conns, $nses) = @$_;
	    ([$name, $name eq 'http2x4'
		? 'xmhub HTTP, 2 sessions x 4 connections (8)'
		: "xmhub HTTP, $nses sessions, $conns connections"],
	    ["influx$conns-$nses", "InfluxDB 1.6.7 /write, $conns connections, "
		. "$nses series"]) } @shapes),
	(map { ["ws$_", "xmhub WebSocket, one connection, $_ in flight"] }
	    1, 8, 32),
	(map { ["simhttp$_", "xmhub sim HTTP, $_ devices (connections)"] }
	    8, 32, 128),
	(map { ["simws$_", "xmhub sim WebSocket, one device, $_ in flight"] }
	    1, 8, 32)) {
	my $c = $res{$row->[0]} or next;
	my $influx = influx_for($c);
	printf "| %s | %.0f | %.0f | %.2f | %.2f | %s | %s | %s | %.2fx | %s "
	    . "| %s |\n",
	    $row->[1], $c->{rate}, $c->{rate} * 1000, $c->{p50}, $c->{p99},
	    defined $c->{per_commit} ? sprintf('%.1f', $c->{per_commit}) : '-',
	    $c->{rss} ? sprintf('%.1f', $c->{rss} / 1024) : '-',
	    $c->{cpu} ? sprintf('%.0f', $c->{cpu}) : '-',
	    $c->{rate} / $res{sink}{rate},
	    $influx ? sprintf('%.2fx', $c->{rate} / $influx->{rate}) : '-',
	    $c->{raw} ? sprintf('%.2fx', $c->{rate} / $c->{raw}) : '-';
}
print "\nInfluxDB was not run: apt-get install influxdb\n" unless $influx_url;
if ($influx_url) {
	printf "\nThe HTTP shapes' ceiling on this machine's %d cores (the "
	    . "server alone on all of them, at its CPU per batch of this "
	    . "run; the load generator's CPU not counted) over InfluxDB's "
	    . "rate at the same connections:\n\n| shape | server CPU µs a "
	    . "batch | ceiling batches/s | ceiling vs InfluxDB | issue 32's "
	    . "aim |\n|---|---:|---:|---:|---:|\n", $cores;
	for my $shape (@shapes) {
		my $c = $res{$shape->[0]};
		my $influx = influx_for($c) or next;
		my $ceiling = $cores * 1e6 / $c->{cpu};
		printf "| %s | %.0f | %.0f | %.2fx | %s |\n",
		    $shape->[0] eq 'http2x4' ? '2 sessions x 4 connections'
		    : "$shape->[1] connections", $c->{cpu}, $ceiling,
		    $ceiling / $influx->{rate},
		    $shape->[0] eq 'http2x4' ? '3x' : '4x';
	}
}
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
