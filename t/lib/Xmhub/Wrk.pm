# SPDX-License-Identifier: MIT
package Xmhub::Wrk;

# wrk for the benchmarks (bench/*.pl): one case run with wrk on loopback
# and its report read back.
#
#   use Xmhub::Wrk qw(wrk wrk_program);
#   wrk_program();      # dies at once without wrk
#   my ($rps, $p99_ms) = wrk($url, conns => 16, seconds => 10,
#       name => '/api/health', args => ['-H', "X-Api-Key: $key"]);
#
# Core modules only.

use strict;
use warnings;
use Exporter 'import';
use Xmhub::Test qw(run);

our @EXPORT_OK = qw(wrk wrk_program wrk_report wrk_turns ingest_setup);

# The wrk program on PATH; dies when it is not installed.
sub wrk_program {
	my ($wrk) = grep { -x } map { "$_/wrk" } split(/:/, $ENV{PATH});
	$wrk or die "wrk not found: apt-get install wrk\n";
	return $wrk;
}

# wrk_report($out, $name): (requests/s, p99 in ms) of wrk's --latency
# report $out; dies when an answer was not 2xx or 3xx ($name says which
# case).
sub wrk_report {
	my ($out, $name) = @_;
	my ($rps) = $out =~ /Requests\/sec:\s+([\d.]+)/;
	my ($p99, $unit) = $out =~ /^\s+99%\s+([\d.]+)(us|ms|s)\s*$/m;
	my ($non2xx) = $out =~ /Non-2xx or 3xx responses: (\d+)/;
	die "wrk $name: $non2xx failed answers\n$out" if $non2xx;
	$p99 *= {us => 0.001, ms => 1, s => 1000}->{$unit};
	return ($rps, $p99);
}

# wrk($url, %opt): one case, 2 threads, conns connections (16) for
# seconds (10), with the extra wrk arguments args (headers, a script);
# (requests/s, p99 in ms) as wrk_report() with name (default $url).
sub wrk {
	my ($url, %o) = @_;
	my ($st, $out, $err) = run([wrk_program(), '-t2', '-c' . ($o{conns} // 16),
		'-d' . ($o{seconds} // 10) . 's', '--latency',
		@{$o{args} // []}, $url]);
	die "wrk: $err" if $st != 0;
	return wrk_report($out, $o{name} // $url);
}

# wrk_turns(): Lua for a script of wrk's 2 threads writing nses sessions
# (a variable the script sets before it): setup() numbers the threads
# and turn() gives a thread's next request's session (0 .. nses - 1)
# and batch number: the threads on sessions of their own (k and the
# session's number have the thread's parity), a session's n-th request
# its n-th batch.
sub wrk_turns {
	return <<'LUA';
-- tid: a global, which thread:set() sets in the thread's state (a local
-- would hide it: every thread 0).
local n, threads = 0, 0
function setup(thread)
	thread:set("tid", threads)
	threads = threads + 1
end
local function turn()
	local k = n * 2 + tid
	n = n + 1
	return k % nses, math.floor(k / nses)
end
LUA
}

# ingest_setup($platform, $api_key, $dir): 64 ingest sessions of device
# 7 (which must exist) of 4 f32 streams, and $dir/ingest.lua, a wrk
# script sending the cellular batch (4 streams x 250 f32, 12 KB) to them
# in turn, every request a new batch (its batch_seq set per request);
# for bench/scale.pl and bench/pgbouncer.pl, which set XMHUB_BENCH_SEQ
# to a new multiple of 4096 for each run.  Its sessions' ids.
sub ingest_setup {
	my ($p, $key, $dir) = @_;
	# A session's batches serialize on its row (gap accounting), sessions
	# do not.
	my @sids = map {
		my ($st, $s) = $p->req(POST => '/api/v1/ingest/sessions', key => $key,
			json => {device_uid => 7, streams => [map { {stream_index => $_,
				name => "ch$_", value_type => 'f32'} } 0 .. 3]});
		die "session: $st\n" if $st != 201;
		$s->{id};
	} 1 .. 64;

	# The cellular batch (4 streams x 250 f32, device_id 7), its batch_seq
	# (bytes 6-7) set per request: every request is a new batch, stored.
	my $batch = pack('a4 C C n N n', 'XMBP', 1, 1, 0, 7, 4);
	for my $ch (0 .. 3) {
		$batch .= pack('n C n', $ch, 1, 250);
		$batch .= pack('Q> f>', 1_700_000_000_000_000 + $_ * 10_000, $_ * 0.5)
		    for 0 .. 249;
	}
	open(my $bf, '>:raw', "$dir/batch.bin") or die "$dir/batch.bin: $!";
	print $bf $batch;
	close $bf;
	open(my $lf, '>', "$dir/ingest.lua") or die "$dir/ingest.lua: $!";
	print $lf "local paths = {\n",
	    map({ "\"/api/v1/ingest/sessions/$_/data\",\n" } @sids), "}\n", <<~"LUA";
	local f = assert(io.open("$dir/batch.bin", "rb"))
	local batch = f:read("*a")
	f:close()
	local head, tail = batch:sub(1, 6), batch:sub(9)
	local threads = 0
	function setup(thread)
		thread:set("tid", threads)
		threads = threads + 1
	end
	local n = 0
	-- Where this run's sequence numbers start (XMHUB_BENCH_SEQ): a run
	-- after another sends new batches, not the last run's again.
	local base = tonumber(os.getenv("XMHUB_BENCH_SEQ") or "0")
	request = function()
		n = n + 1
		-- Two wrk threads: odd and even sequence numbers, never the same
		-- bytes twice (an identical batch would be a retry, not stored).
		local seq = (base + math.floor(n / #paths) * 2 + tid) % 65536
		return wrk.format("POST", paths[n % #paths + 1],
			{["Content-Type"] = "application/octet-stream",
			 ["X-Api-Key"] = "$key"},
			head .. string.char(math.floor(seq / 256), seq % 256) .. tail)
	end
	LUA
	close $lf;
	return @sids;
}

1;
