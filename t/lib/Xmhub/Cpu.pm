# SPDX-License-Identifier: MIT
package Xmhub::Cpu;

# CPU time of process trees, for the benchmarks' "CPU µs per request of
# each part" (bench/pgbouncer.pl).
#
#   use Xmhub::Cpu qw(tree_cpu);
#   my $before = tree_cpu($lighttpd);   # seconds
#   ...
#   my $used = tree_cpu($lighttpd) - $before;
#
# Core modules only.

use strict;
use warnings;
use Exporter 'import';
use POSIX ();

our @EXPORT_OK = qw(tree_cpu);

# tree_cpu(@pids): CPU seconds (user and system) used so far by @pids
# and every process now under them, each with its reaped children's (a
# FastCGI program or backend that ended counts through its parent).  A
# process that ended between two calls and was reaped by a process
# outside the trees is lost: read the trees of long-lived servers.
sub tree_cpu {
	my %top = map { $_ => 1 } @_;
	my (%parent, %ticks);
	for my $stat (glob '/proc/[0-9]*/stat') {
		open my $f, '<', $stat or next;
		my $line = <$f> // next;
		# The command's name may hold ") ": the last one ends it.
		my ($pid, $rest) = $line =~ /^(\d+) \(.*\) (.*)$/s or next;
		my @f = split ' ', $rest;
		$parent{$pid} = $f[1];
		$ticks{$pid} = $f[11] + $f[12] + $f[13] + $f[14];
	}
	my $sum = 0;
	PID: for my $pid (keys %ticks) {
		for (my ($p, $n) = ($pid, 0); $p > 1 && $n < 64; $n++) {
			if ($top{$p}) {
				$sum += $ticks{$pid};
				next PID;
			}
			$p = $parent{$p} // 0;
		}
	}
	return $sum / POSIX::sysconf(POSIX::_SC_CLK_TCK());
}

1;
