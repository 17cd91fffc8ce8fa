#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/ws-chain - one WebSocket connection through the whole chain
# (lighttpd with its authorizer -> ws/xmhub-ws-guard -> websocketd) to
# the real program, ws/xmhub-ingest-ws, and to its limit, bench/ws-sink
# (the same loop, framing and paced acks, storing nothing), in one run on
# loopback (this machine is shared and noisy: the ratios mean more than
# the figures).
#
# The sink takes the real program's place behind the same chain: the
# stack's websocketd daemon is stopped, and websocketd is run here, for
# each case, with the command line of its line in httpd-conf/programs
# (`httpd-conf/gen daemons`: the same options, environment and port),
# the program alone replaced by bench/ws-sink for the sink's cases.
# Nothing in the stack or its programs changes.
#
# Each case: one connection through lighttpd's port, 1, 8 or 32 batches
# in flight (the cellular batch of bench/ingest: 4 streams x 250 f32,
# 12,034 bytes; a fresh session per case, its batches going on in time),
# one 4-byte ack per batch.  BENCH_ROUNDS (3) rounds, the programs taking
# turns (which goes first alternates); BENCH_SECONDS (5) per case.  Per
# shape: the medians of batches/s and p99 ack latency, the ratio real /
# sink of the median rates (and the range of the rounds' ratios), and the
# CPU each part spent per batch (median over the rounds): the program
# (websocketd's reaped children), websocketd, the front, lighttpd (its
# own and its reaped children's) and this client.
#
# Runs from a build tree (make bench-ws-chain): a throwaway stack
# through t/lib/Xmhub/Platform.pm.
use strict;
use warnings;
use IO::Socket::INET;
use POSIX qw(setsid);
use Time::HiRes qw(sleep);
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Ingest;
use Xmhub::Platform;
use Xmhub::Stack;
use Xmhub::Test qw(run);
use Xmhub::WS;
use Xmhub::XMBP qw(batch);

my $seconds = $ENV{BENCH_SECONDS} || 5;
my $rounds = $ENV{BENCH_ROUNDS} || 3;
my $build = $ENV{XMHUB_BUILDDIR};
my %program = (real => "$build/ws/xmhub-ingest-ws",
	sink => "$build/bench/ws-sink");
-x $_ or die "$_ is not built\n" for values %program;

my $p = Xmhub::Platform->start;
my $s = $p->stack;
$ENV{XMHUB_ENV_FILE} = $s->env_file;
delete $ENV{XMHUB_DATABASE_URL};
my $fac = $p->facility('bench');
my $key = $p->api_key($p->token($p->user('facility_admin', $fac)),
	'ingest');
my $in = Xmhub::Ingest->new($p, $key);
sub session { return $in->session(7, map { [$_, 'f32'] } 0 .. 3)->{id} }

# A device's 64 batches, 2.5 s apart; the n-th sent is the (n mod 64)-th
# with batch_seq n.
my @batches = map {
	my $t0 = 1_700_000_000_000_000 + $_ * 2_500_000;
	batch(1, 7, map { my $ch = $_;
	    [$ch, 'f32', [map { [$t0 + $_ * 10_000, $_ * 0.5] } 0 .. 249]] }
	    0 .. 3);
} 0 .. 63;
sub nth {
	my ($n) = @_;
	my $b = $batches[$n % 64];
	substr($b, 6, 2, pack('n', $n % 65536));
	return $b;
}

# websocketd's command line, as the stack runs it.
my ($wsd_line) = grep { /^websocketd\t/ } split /\n/, run_ok(
	"$ENV{XMHUB_SRCDIR}/httpd-conf/gen", 'daemons', $build, $s->ws_port,
	$s->wsd_port);
my @wsd_argv = split ' ', (split /\t/, $wsd_line)[1];
$wsd_argv[-1] eq $program{real} or die "websocketd runs $wsd_argv[-1]\n";
sub run_ok {
	my ($st, $out, $err) = run([@_]);
	die "@_: $err" if $st != 0;
	return $out;
}

# Our websocketd: started as the stack starts its daemons (own process
# group, the env file, the service user when root), stopped by group.
my $wsd;
sub wsd_start {
	my ($prog) = @_;
	my @argv = (@wsd_argv[0 .. $#wsd_argv - 1], $prog);
	unshift @argv, qw(setpriv --reuid=xmhub --regid=xmhub --init-groups)
	    if $> == 0;
	$wsd = fork // die "fork: $!";
	if ($wsd == 0) {
		setsid();
		open STDIN, '<', '/dev/null';
		open STDOUT, '>>', $s->var . '/log/bench-websocketd.log' or die $!;
		open STDERR, '>&', \*STDOUT;
		exec @argv or POSIX::_exit(127);
	}
	for (1 .. 200) {
		return if IO::Socket::INET->new('127.0.0.1:' . $s->wsd_port);
		sleep 0.05;
	}
	die "websocketd did not listen\n";
}
sub wsd_stop {
	kill 'TERM', -$wsd;
	waitpid($wsd, 0);
	$wsd = undef;
}
END { kill 'TERM', -$wsd if $wsd }

# CPU seconds of a process: its own, plus its reaped children's.
sub cpu {
	my ($pid) = @_;
	open my $f, '<', "/proc/$pid/stat" or return (0, 0);
	my @f = split ' ', (<$f> =~ s/^.*\) //r);
	my $hz = POSIX::sysconf(POSIX::_SC_CLK_TCK());
	return (($f[11] + $f[12]) / $hz, ($f[13] + $f[14]) / $hz);
}
sub pid_of { my $p = $s->running($_[0]) or die "$_[0] is not running\n"; $p }

$s->stop_daemon('websocketd') or die "websocketd did not stop\n";
my ($front, $lighttpd) = (pid_of('ws-guard'), pid_of('lighttpd'));
# PostgreSQL's backends, reaped by the postmaster, when the stack runs a
# cluster of its own (not under t/with-testdb); autovacuum's workers
# count too.
my $postmaster;
if (open my $f, '<', $s->var . '/pg/postmaster.pid') {
	chomp($postmaster = <$f>);
}

# Batches per commit of session $sid: its batches over the transactions
# that inserted its chunks.
sub per_commit {
	my ($sid, $batches) = @_;
	my ($st, $out, $err) = $s->psql('SELECT count(DISTINCT c.xmin::text) '
		. 'FROM stored_chunks c JOIN ingest_streams t ON t.id = '
		. "c.stream_id WHERE t.session_id = '$sid'");
	die "psql: $err" if $st != 0;
	return $out > 0 ? $batches / $out : 0;
}

# One case: ($rate, $p99 ms, {part => CPU µs per batch}).
sub case {
	my ($kind, $window) = @_;
	wsd_start($program{$kind});
	my $sid = session();
	my @pg0 = $postmaster ? cpu($postmaster) : (0, 0);
	my @c0 = (cpu($wsd), cpu($front), cpu($lighttpd), times);
	my ($ws, $st) = Xmhub::WS->connect($s->port,
		"/api/v1/ingest/ws?session_id=$sid", {'X-Api-Key' => $key});
	die "$kind: upgrade $st\n" unless $ws;
	my ($rate, $lat) = $ws->pipeline($window, $seconds, \&nth, sub {
		my ($n, $ack) = @_;
		die "$kind: ack " . unpack('N', $ack) . " after $n\n"
		    if unpack('N', $ack) != ($n + 1) * 1000;
	});
	my $acked = @$lat;
	$ws->close;
	# The program's CPU is websocketd's once it reaped it.
	for (1 .. 100) {
		last unless Xmhub::Stack::descendants($wsd);
		sleep 0.05;
	}
	sleep 0.2;
	my @c1 = (cpu($wsd), cpu($front), cpu($lighttpd), times);
	my @pg1 = $postmaster ? cpu($postmaster) : (0, 0);
	wsd_stop();
	my @d = map { ($c1[$_] - $c0[$_]) * 1e6 / $acked } 0 .. $#c0;
	return ($rate, $lat->[int(@$lat * 0.99)], {program => $d[1],
		websocketd => $d[0], front => $d[2] + $d[3],
		lighttpd => $d[4] + $d[5], client => $d[6] + $d[7],
		postgres => ($pg1[1] - $pg0[1]) * 1e6 / $acked,
		per_commit => $kind eq 'real' ? per_commit($sid, $acked) : undef});
}

my %r; # {"$kind$window"} => [[rate, p99, cpu], ...]
for my $round (1 .. $rounds) {
	my @kinds = $round % 2 ? qw(sink real) : qw(real sink);
	for my $window (1, 8, 32) {
		push @{$r{"$_$window"}}, [case($_, $window)] for @kinds;
	}
}

sub median {
	my @v = sort { $a <=> $b } @_;
	return @v % 2 ? $v[$#v / 2] : ($v[@v / 2 - 1] + $v[@v / 2]) / 2;
}
my @parts = qw(program websocketd front lighttpd client postgres);
printf "%d rounds of %d s per case, one connection through lighttpd, "
    . "the front and websocketd; medians over the rounds\n\n", $rounds,
    $seconds;
print "| in flight | sink batches/s | real batches/s | real / sink "
    . "(rounds) | sink p99 ms | real p99 ms |\n"
    . "|---:|---:|---:|---:|---:|---:|\n";
for my $window (1, 8, 32) {
	my ($sk, $rl) = @r{"sink$window", "real$window"};
	my @ratio = sort { $a <=> $b } map { $rl->[$_][0] / $sk->[$_][0] }
	    0 .. $#$sk;
	my ($sr, $rr) = map { median(map { $_->[0] } @$_) } $sk, $rl;
	printf "| %d | %.0f | %.0f | %.2f (%.2f-%.2f) | %.2f | %.2f |\n",
	    $window, $sr, $rr, $rr / $sr, $ratio[0], $ratio[-1],
	    median(map { $_->[1] } @$sk), median(map { $_->[1] } @$rl);
}
print "\nCPU µs per batch (medians; postgres: its backends, when the "
    . "stack runs its own cluster) and batches per commit:\n\n| case | "
    . join(' | ', @parts) . " | batches per commit |\n|---|"
    . ('---:|' x (@parts + 1)) . "\n";
for my $kind (qw(sink real)) {
	for my $window (1, 8, 32) {
		my $c = $r{"$kind$window"};
		printf "| %s, %d in flight | %s | %s |\n", $kind, $window,
		    join(' | ', map { my $p = $_;
			sprintf '%.0f', median(map { $_->[2]{$p} } @$c) } @parts),
		    $kind eq 'real' ? sprintf('%.1f',
			median(map { $_->[2]{per_commit} } @$c)) : '-';
	}
}
