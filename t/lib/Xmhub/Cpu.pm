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

our @EXPORT_OK = qw(tree_cpu own_cpu);

# tree_cpu(@pids): CPU seconds (user and system) used so far by @pids
# and every process now under them (Xmhub::Stack::descendants), each
# with its reaped children's (a FastCGI program or backend that ended
# counts through its parent).  A process that ended between two calls
# and was reaped by a process outside the trees is lost: read the trees
# of long-lived servers.
sub tree_cpu {
	my $ticks = 0;
	$ticks += ticks($_, 1) for map { ($_, Xmhub::Stack::descendants($_)) } @_;
	return $ticks / POSIX::sysconf(POSIX::_SC_CLK_TCK());
}

# own_cpu($pid): CPU seconds used so far by $pid itself, without the
# processes under it (lighttpd's own part next to its FastCGI programs').
sub own_cpu {
	return ticks($_[0], 0) / POSIX::sysconf(POSIX::_SC_CLK_TCK());
}

# The clock ticks of $pid's user and system time, with its reaped
# children's when $reaped; 0 when it is gone.
sub ticks {
	my ($pid, $reaped) = @_;
	open my $f, '<', "/proc/$pid/stat" or return 0;
	# The command's name may hold ") ": the last one ends it.
	my ($rest) = (<$f> // '') =~ /^\d+ \(.*\) (.*)$/s or return 0;
	my @f = split ' ', $rest;
	return $f[11] + $f[12] + ($reaped ? $f[13] + $f[14] : 0);
}

1;
