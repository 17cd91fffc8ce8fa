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

our @EXPORT_OK = qw(wrk wrk_program wrk_report);

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

1;
