#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# httpd-conf/stack signals only what it started (doc/security.md): after
# a reboot a pid file may name a process of another program, or one of
# the same name that is not this stack's.  `stack down`, `stack up` and
# `stack daemon-stop` with such stale pid files leave those processes
# (each leading its own process group, as the daemons do) alone, and
# `up` starts the stack's own.  Its supervisor leaves a daemon stopped on
# purpose stopped (t/e2e/self-heal.t: it restarts what dies).  A port
# held by another process fails `stack up` before anything starts, and
# says which port and which setting chooses it (doc/deploy.md).
use strict;
use warnings;
use File::Temp qw(tempdir);
use HTTP::Tiny;
use IO::Socket::INET;
use POSIX qw(setsid);
use Test::More;
use Time::HiRes qw(sleep);
use Xmhub::Stack;
use Xmhub::Test qw(run);

my $s = Xmhub::Stack->start(own_db => 1); # its cluster's pid file
my $var = $s->var;
my $dir = tempdir('xmhub-stack-t-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my @bystanders;

# A `sleep 300` of its own process group under the command name $name
# (a copy of sleep so named); its pid.
sub bystander {
	my ($name) = @_;
	my $prog = "$dir/$name";
	system('cp', (grep { -x } '/bin/sleep', '/usr/bin/sleep')[0], $prog) == 0
	    or die "cp sleep: $?\n";
	my $pid = fork // die "fork: $!\n";
	if ($pid == 0) {
		setsid();
		open STDIN, '<', '/dev/null';
		exec $prog, '300' or exit 127;
	}
	push @bystanders, $pid;
	return $pid;
}

END { kill 'KILL', @bystanders if @bystanders }

sub alive {
	my ($pid) = @_;
	# A zombie of ours is dead too; reap it first.
	waitpid($pid, POSIX::WNOHANG());
	return kill 0, $pid;
}

# A file as the stack's user writes it.
sub spew {
	my ($f, $s) = @_;
	open my $fh, '>', $f or die "$f: $!\n";
	print $fh $s;
	close $fh or die "$f: $!\n";
	chown((getpwnam('xmhub'))[2, 3], $f) if $> == 0;
}

sub status {
	my ($st, $out) = run([Xmhub::Stack::script(), 'status', $var]);
	return ($st, $out);
}

my %by = (
	# Other programs.
	sleep => bystander('sleep'),
	# Named as the stack's own are: lighttpd, a daemon's program,
	# PostgreSQL; not started on this var directory.
	lighttpd => bystander('lighttpd'),
	'xmhub-transcode' => bystander('xmhub-transcode'),
	postgres => bystander('postgres'),
);
sleep 0.2;
ok(alive($by{$_}), "bystander $_ runs") for sort keys %by;

# plant($pg): writes the stale pid files; lighttpd's, the daemons' and,
# with $pg, PostgreSQL's.
sub plant {
	my ($pg) = @_;
	spew("$var/run/lighttpd.pid", "$by{lighttpd}\n");
	spew("$var/run/transcode.pid", "$by{'xmhub-transcode'}\n");
	spew("$var/run/websocketd.pid", "$by{sleep}\n");
	spew("$var/run/ingest-reaper.pid", "$by{sleep}\n");
	spew("$var/pg/postmaster.pid", "$by{postgres}\n$var/pg\n") if $pg;
}

$s->stack('down', $var);
my ($st) = status();
is($st, 3, 'stopped: nothing runs');
plant(1);
($st, my $out) = status();
is($st, 3, 'stale pid files: nothing of the stack is said to run')
    or diag $out;
$s->stack('down', $var);
ok(alive($by{$_}), "down with stale pid files: $_ still runs")
    for sort keys %by;

# PostgreSQL would refuse its own lock file naming a live process: an
# operator removes it after a reboot.
unlink "$var/pg/postmaster.pid";
plant(0);
$s->up;
($st, $out) = status();
is($st, 0, 'up with stale pid files: everything runs') or diag $out;
my $res = HTTP::Tiny->new(timeout => 20)->get($s->url('/api/health'));
is($res->{status}, 200, 'up with stale pid files: lighttpd answers');
for my $f (qw(lighttpd transcode websocketd ingest-reaper)) {
	open my $fh, '<', "$var/run/$f.pid" or die "$f.pid: $!\n";
	my $pid = <$fh>;
	chomp $pid;
	ok(!grep({ $_ == $pid } values %by), "$f.pid: the stack's own process");
}
ok(alive($by{$_}), "up with stale pid files: $_ still runs")
    for sort keys %by;

# A daemon stopped, its pid file stale again.
ok($s->stop_daemon('transcode'), 'daemon-stop: the transcode runner stops');
spew("$var/run/transcode.pid", "$by{'xmhub-transcode'}\n");
ok($s->stop_daemon('transcode'), 'daemon-stop with a stale pid file');
ok(alive($by{'xmhub-transcode'}), 'daemon-stop: the bystander still runs');
ok($s->running('supervisor'), 'up: the supervisor runs');
sleep 3;
ok(!$s->running('transcode'),
    'the supervisor leaves a daemon stopped on purpose stopped');

$s->stack('down', $var);
($st) = status();
is($st, 3, 'down: the stack\'s own processes stopped');
ok(alive($by{$_}), "down: $_ still runs") for sort keys %by;
ok(!$s->running('supervisor'), 'down: the supervisor stopped');

# A port another process listens on.
my $held = IO::Socket::INET->new(LocalAddr => '127.0.0.1', LocalPort => 0,
	Proto => 'tcp', Listen => 1) or die "listen: $!\n";
my $hp = $held->sockport;
for ([port => 'lighttpd', 'XMHUB_PORT'], [face_port => 'the face service (lighttpd)',
	'FACE_API_PORT'], [ws_port => 'ws-guard', 'XMHUB_WS_PORT'],
    [wsd_port => 'websocketd', 'XMHUB_WSD_PORT']) {
	my ($which, $who, $setting) = @$_;
	my $v = tempdir('xmhub-stack-t-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	chown((getpwnam('xmhub'))[2, 3], $v) if $> == 0;
	my %ports = (map({ $_ => Xmhub::Stack::free_port() }
		qw(port face_port ws_port wsd_port)), $which => $hp);
	local $ENV{XMHUB_SQL_DIR} = "$ENV{XMHUB_SRCDIR}/sql";
	my ($ust, $uout, $uerr) = run([Xmhub::Stack::script(), 'up', $v,
		$ENV{XMHUB_BUILDDIR}, @ports{qw(port face_port ws_port wsd_port)}]);
	isnt($ust, 0, "$which held: stack up fails");
	like($uerr, qr/port $hp \(\Q$who\E's, $setting\) is in use by another process/,
	    "$which held: the port, the part and the setting named") or diag $uerr;
	my ($vst) = run([Xmhub::Stack::script(), 'status', $v]);
	is($vst, 3, "$which held: nothing was started");
	ok(!-e "$v/pg/PG_VERSION", "$which held: not even PostgreSQL");
}

done_testing;
