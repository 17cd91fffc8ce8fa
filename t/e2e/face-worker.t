#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# The face service's image worker end to end (doc/face.md "Isolation"):
# each face process decodes, detects, masks and encodes in a worker that
# holds no credential (not in its environment, not in its memory), runs
# under seccomp with no_new_privs and only its socket open, and is
# replaced when it dies: a worker killed between two requests costs
# nothing, one killed or stuck during a request costs that request a 500.
use strict;
use warnings;
no warnings 'portable'; # 64-bit addresses of /proc/PID/maps
use File::Temp qw(tempfile);
use HTTP::Tiny;
use POSIX ();
use Test::More;
use Time::HiRes qw(sleep time);
use Xmhub::Face qw(photo model_names slurp);

my @models = model_names();
my ($model) = grep { $_ eq 'yunet' } @models;
$model //= $models[0] // die "no face model\n";

my %secret = (
	FACE_API_ADMIN_PASSWORD => 'admin-pw-worker-test-' . $$,
	FACE_API_URL_SECRET => 'url-secret-worker-test-' . ('u' x 16) . $$,
	FACE_API_S3_ACCESS_KEY => 'AKIAWORKERTEST' . $$,
	FACE_API_S3_SECRET_KEY => 'worker-test-s3-secret-key-' . $$,
);
my $f = Xmhub::Face->start(env => {%secret, FACE_API_MODEL => $model,
	FACE_API_STORAGE_ENABLED => 'true', FACE_API_WORKER_TIMEOUT => 3,
	FACE_API_RATE_LIMIT_DETECT => '10000/minute',
	FACE_API_RATE_LIMIT_MASK => '10000/minute'});
$secret{$_} = $f->stack->setting($_)
    for qw(XMHUB_DATABASE_URL XMHUB_JWT_SECRET);
ok(length $secret{$_}, "the stack has $_") for qw(XMHUB_DATABASE_URL
	XMHUB_JWT_SECRET);

my $messi = photo('messi5.jpg');
sub detect { return $f->post('/api/v1/detect', image => $messi) }
sub detail { return ($f->json($_[0]) // {})->{detail} // '' }

my $r = detect();
is($r->{status}, 200, 'detect: 200');
ok(@{($f->json($r) // {})->{detections} // []},
    'faces found through the worker');
# status($pid): /proc/PID/status.
sub status { return slurp("/proc/$_[0]/status") // '' }

# Workers restrict themselves once their model is loaded and warm.
my @w;
for (1 .. 300) {
	@w = $f->workers;
	last if @w && !grep { status($_) !~ /^Seccomp:\s+2$/m } @w;
	sleep 0.1;
}
ok(@w >= 1, 'the face processes have image workers (' . scalar(@w) . ')');

# --- what a worker holds ---
for my $pid (@w) {
	my $envtext = slurp("/proc/$pid/environ") // '';
	my @names = map { /^([^=]*)=/ ? $1 : () } split /\0/, $envtext;
	is_deeply([grep { /^(XMHUB_|FACE_API_)/ } @names], [],
	    "$pid: no XMHUB_ or FACE_API_ variable in the environment");
	ok(!grep({ index($envtext, $secret{$_}) >= 0 } keys %secret),
	    "$pid: no secret value in the environment");
	like(status($pid), qr/^Seccomp:\s+2$/m, "$pid: seccomp filter on");
	like(status($pid), qr/^NoNewPrivs:\s+1$/m, "$pid: no_new_privs");
	my %fds = map { m{/(\d+)$} ? ($1 => readlink $_) : () }
	    glob "/proc/$pid/fd/*";
	is_deeply([sort { $a <=> $b } keys %fds], [0, 1, 2, 3],
	    "$pid: only stdin, stdout, stderr and the socket open");
	is($fds{0}, '/dev/null', "$pid: stdin is /dev/null, not FastCGI's");
	like($fds{3} // '', qr/^socket:/, "$pid: fd 3 is the socket");
	my $limits = slurp("/proc/$pid/limits") // '';
	like($limits, qr/^Max open files\s+8\s+8\b/m, "$pid: RLIMIT_NOFILE 8");
	like($limits, qr/^Max file size\s+0\s+0\b/m, "$pid: RLIMIT_FSIZE 0");
	my ($ppid) = (slurp("/proc/$pid/stat") // '') =~ /\)\s+\S+\s+(\d+)/;
	is(readlink("/proc/$ppid/exe"), "$ENV{XMHUB_BUILDDIR}/cgi-bin/face",
	    "$pid: its parent is a face FastCGI process");
}
my $pid = $w[0];
my ($ppid) = (slurp("/proc/$pid/stat") // '') =~ /\)\s+\S+\s+(\d+)/;

# memory_has($pid, @needles): the needles found in the process's
# readable memory (mappings up to 256 MiB: AddressSanitizer's shadow is
# larger and holds no bytes of the program).
sub memory_has {
	my ($p, @needles) = @_;
	my %found;
	open my $maps, '<', "/proc/$p/maps" or die "/proc/$p/maps: $!";
	open my $mem, '<:raw', "/proc/$p/mem" or die "/proc/$p/mem: $!";
	while (<$maps>) {
		my ($from, $to, $perm, $name) =
		    /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/ or next;
		($from, $to) = (hex $from, hex $to);
		next if $perm !~ /^r/ || $to - $from > 256 << 20
		    || $name =~ /^\[(vvar|vsyscall)\]/;
		for (my $at = $from; $at < $to; $at += 1 << 20) {
			my $n = $to - $at < 1 << 20 ? $to - $at : 1 << 20;
			# A little overlap: a needle across two reads.
			$n += 256 if $at + $n + 256 <= $to;
			sysseek($mem, $at, 0) or next;
			my $got = sysread($mem, my $buf, $n) or next;
			index($buf, $_) >= 0 and $found{$_} = 1 for @needles;
		}
	}
	return sort keys %found;
}
my @needles = map { $secret{$_} } sort keys %secret;
is_deeply([memory_has($ppid, $secret{FACE_API_ADMIN_PASSWORD})],
    [$secret{FACE_API_ADMIN_PASSWORD}],
    'the memory scan finds the admin password in the face process');
is_deeply([memory_has($pid, @needles)], [],
    "no secret anywhere in the worker's memory");

# gone(@pids): waits until the processes have ended (zombies count).
sub gone {
	for (1 .. 100) {
		return 1 unless grep {
			(slurp("/proc/$_/stat") // '') =~ /\)\s+[^Z]/ } @_;
		sleep 0.05;
	}
	return 0;
}

# --- a worker killed between two requests ---
kill 'KILL', @w;
ok(gone(@w), 'the workers are killed');
$r = detect();
# The answer's detail says why a worker was lost (a timeout, its end):
# printed when it fails, since CI keeps no log.
is($r->{status}, 200, 'workers killed: the next detect is 200')
    or diag("detect: $r->{content}");
my @after = $f->workers;
ok(@after >= 1 && !grep({ my $p = $_; grep { $_ == $p } @w } @after),
    'a new worker runs, none of the killed ones')
    or diag("killed: @w; workers now: @after");
$r = $f->post('/api/v1/mask', image => $messi, fields => {format => 'png'});
is($r->{status}, 200, 'and mask works');
like($r->{content}, qr/^\x89PNG/, 'a PNG comes back');

# --- a worker killed during a request ---
# bg_detect: a detect in a child process; returns (pid, result file).
sub bg_detect {
	my (undef, $out) = tempfile(UNLINK => 1);
	my $child = fork // die "fork: $!";
	if ($child == 0) {
		my $res = detect();
		open my $o, '>', $out or POSIX::_exit(1);
		print $o "$res->{status}\n$res->{content}";
		close $o;
		POSIX::_exit(0);
	}
	return ($child, $out);
}
sub bg_result {
	my ($child, $out) = @_;
	waitpid $child, 0;
	my ($st, $body) = split /\n/, slurp($out) // '', 2;
	return {status => $st // 0, content => $body // ''};
}

@w = $f->workers;
kill 'STOP', @w;
my ($child, $out) = bg_detect();
sleep 1.5; # the request reaches a stopped worker and waits
kill 'KILL', @w;
$r = bg_result($child, $out);
is($r->{status}, 500, 'worker killed during the request: 500');
like(detail($r), qr/worker was lost .*signal 9/,
    'the detail says the worker was lost');
$r = detect();
is($r->{status}, 200, 'the next request: 200');

# --- a worker that stops answering ---
@w = $f->workers;
kill 'STOP', @w;
my $t0 = time;
$r = detect();
my $took = time - $t0;
is($r->{status}, 500, 'stuck worker: 500 after FACE_API_WORKER_TIMEOUT');
like(detail($r), qr/took too long/, 'the detail says it took too long');
ok($took >= 2.5 && $took < 30, sprintf('answered after %.1f s', $took));
kill 'KILL', @w; # the other stopped ones
$r = detect();
is($r->{status}, 200, 'the next request: 200');

done_testing();
