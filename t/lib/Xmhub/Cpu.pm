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
use Xmhub::Stack;

our @EXPORT_OK = qw(tree_cpu);

# tree_cpu(@pids): CPU seconds (user and system) used so far by @pids
# and every process now under them (Xmhub::Stack::descendants), each
# with its reaped children's (a FastCGI program or backend that ended
# counts through its parent).  A process that ended between two calls
# and was reaped by a process outside the trees is lost: read the trees
# of long-lived servers.
sub tree_cpu {
	my $ticks = 0;
	for my $pid (map { ($_, Xmhub::Stack::descendants($_)) } @_) {
		open my $f, '<', "/proc/$pid/stat" or next;
		# The command's name may hold ") ": the last one ends it.
		my ($rest) = (<$f> // '') =~ /^\d+ \(.*\) (.*)$/s or next;
		my @f = split ' ', $rest;
		$ticks += $f[11] + $f[12] + $f[13] + $f[14];
	}
	return $ticks / POSIX::sysconf(POSIX::_SC_CLK_TCK());
}

1;
