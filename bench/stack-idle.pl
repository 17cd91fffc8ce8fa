#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/stack-idle - what a stack started by httpd-conf/stack costs while
# nobody uses it, part by part, in one run (make bench-stack-idle).
#
# CPU time (user + system, from /proc/PID/stat, with the children each
# part has reaped) of: the supervisor (`stack supervise`, which looks at
# lighttpd and every daemon once a second), lighttpd with its FastCGI
# programs, PostgreSQL, and each daemon, over BENCH_SECONDS (30) after a
# settling pause.  Baseline, measured over the same seconds: a bare bash
# loop that only sleeps a second per pass, the floor of any once-a-second
# shell checker.  The supervisor's line is a ratio to it.
use strict;
use warnings;
use POSIX qw(sysconf _SC_CLK_TCK);
use Time::HiRes qw(time sleep);
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Stack;

my $seconds = $ENV{BENCH_SECONDS} || 30;
my $hz = sysconf(_SC_CLK_TCK);

sub first_line {
	open my $f, '<', $_[0] or return '';
	my $l = <$f> // '';
	chomp $l;
	return $l;
}

# Ticks of pid itself (with the children it reaped) and of its live
# descendants.
sub ticks {
	my ($pid) = @_;
	my $sum = 0;
	for my $p ($pid, Xmhub::Stack::descendants($pid)) {
		my $stat = first_line("/proc/$p/stat");
		next unless $stat =~ /\) (.*)$/;
		my @f = split / /, $1;
		# utime stime cutime cstime: fields 14 to 17, 12 to 15 past ")".
		$sum += $f[11] + $f[12] + $f[13] + $f[14];
	}
	return $sum;
}

my $s = Xmhub::Stack->start;
my $var = $s->var;
my %parts = (
	'supervisor' => first_line("$var/run/supervisor.pid"),
	'lighttpd and its FastCGI programs' =>
	    first_line("$var/run/lighttpd.pid"),
	'PostgreSQL' => first_line("$var/pg/postmaster.pid"),
);
for my $f (glob "$var/run/*.pid") {
	my ($name) = $f =~ m{/([^/]+)\.pid$};
	next if $name =~ /^(supervisor|lighttpd)$/;
	$parts{$name} = first_line($f);
}
for (sort keys %parts) {
	die "$_: no pid\n" unless $parts{$_} =~ /^\d+$/;
}

my $loop = fork // die "fork: $!\n";
if ($loop == 0) {
	exec 'bash', '-c', 'while :; do sleep 1 & wait $!; done' or exit 127;
}

sleep 5;
my %t0 = map { $_ => ticks($parts{$_}) } keys %parts;
my $b0 = ticks($loop);
my $w0 = time;
sleep $seconds;
my %t1 = map { $_ => ticks($parts{$_}) } keys %parts;
my $b1 = ticks($loop);
my $wall = time - $w0;
kill 'TERM', $loop;
waitpid $loop, 0;
$s->stop;

my $base = ($b1 - $b0) / $hz / $wall * 1000;
printf "## idle stack, %.0f s, %s\n\n", $wall, scalar gmtime;
print "| part | CPU ms per second | % of one core | vs bare loop |\n";
print "|---|---:|---:|---:|\n";
printf "| baseline: bash loop sleeping 1 s a pass | %.2f | %.2f | 1.00x |\n",
    $base, $base / 10;
my $total = 0;
for my $name (sort keys %parts) {
	my $ms = ($t1{$name} - $t0{$name}) / $hz / $wall * 1000;
	$total += $ms;
	printf "| %s | %.2f | %.2f | %s |\n", $name, $ms, $ms / 10,
	    $name eq 'supervisor' && $base > 0
	    ? sprintf('%.2fx', $ms / $base) : '-';
}
printf "| the whole stack | %.2f | %.2f | - |\n", $total, $total / 10;
