# SPDX-License-Identifier: MIT
package Xmhub::Pty;
# A pseudo-terminal for the tests of what a program shows only on a
# terminal (xmhub send's progress line, xmhub sim's status line): the
# program's standard error is the terminal, what it writes there is read
# back.  Through /dev/ptmx and the Linux ioctls: core Perl has no openpty.
#
#   my ($status, $text) = Xmhub::Pty::stderr_on_tty([$prog, @args], 60);
#
# Core modules only.
use strict;
use warnings;
use Exporter 'import';
use POSIX qw(WNOHANG);
use Time::HiRes qw(sleep time);

our @EXPORT_OK = qw(stderr_on_tty);

# (master, slave) of a new pseudo-terminal; dies when there is none.
sub pty {
	my ($TIOCGPTN, $TIOCSPTLCK) = (0x80045430, 0x40045431);
	open my $m, '+<', '/dev/ptmx' or die "/dev/ptmx: $!\n";
	my $n = pack 'L', 0;
	ioctl($m, $TIOCSPTLCK, $n) or die "TIOCSPTLCK: $!\n";
	ioctl($m, $TIOCGPTN, $n) or die "TIOCGPTN: $!\n";
	my $name = '/dev/pts/' . unpack('L', $n);
	open my $s, '+<', $name or die "$name: $!\n";
	return ($m, $s);
}

# stderr_on_tty(\@argv, $secs): runs argv with standard error on a
# terminal (standard output to /dev/null) for at most $secs; (exit
# status or -1 when it had to be killed, what it wrote to the terminal).
sub stderr_on_tty {
	my ($argv, $secs) = @_;
	my ($m, $s) = pty();
	my $pid = fork() // die "fork: $!";
	if ($pid == 0) {
		open STDERR, '>&', $s or die;
		open STDOUT, '>', '/dev/null' or die;
		exec { $argv->[0] } @$argv or die "exec: $!";
	}
	close $s;
	my ($text, $st, $end) = ('', undef, time + $secs);
	my $rin = '';
	vec($rin, fileno $m, 1) = 1;
	# Read while it runs (a full terminal buffer would block it).
	while (!defined $st) {
		if (select(my $r = $rin, undef, undef, 0.1) > 0) {
			sysread($m, my $chunk, 65536) or last;
			$text .= $chunk;
		}
		$st = $? >> 8 if waitpid($pid, WNOHANG) == $pid;
		if (!defined $st && time > $end) {
			kill 'KILL', $pid;
			waitpid($pid, 0);
			$st = -1;
		}
	}
	while (select(my $r = $rin, undef, undef, 0.2) > 0) {
		sysread($m, my $chunk, 65536) or last;
		$text .= $chunk;
	}
	$st = $? >> 8 if !defined $st && waitpid($pid, 0) == $pid;
	return ($st, $text);
}

1;
