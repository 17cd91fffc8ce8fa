#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/face - the face service's cost over the detector itself, per
# model present in FACE_TEST_MODEL_DIR, all in one run on this machine:
#
#   shim_ms    raw face_detect() time of bench/face-shim (the image
#              decoded beforehand, not timed; median)
#   http_ms    the whole POST /api/v1/detect through lighttpd, upload,
#              multipart, decoding and JSON included (median latency of
#              wrk with one connection for BENCH_SECONDS, default 10)
#   ratio      http_ms / shim_ms (aim: 1.15 or less)
#   req/s      wrk with 2 connections for BENCH_SECONDS (default 10)
#              against FACE_API_MAX_CONCURRENT_INFERENCE=2, next to
#              1000 / shim_ms, one detector's sequential rate
#   py_ms      the same http_ms of a Python FastAPI + OpenCV service
#              (bench/face_fastapi.py under uvicorn, 2 workers) on the
#              same model file, same image, same run; SCRFD and YuNet
#   py_x       py_ms / http_ms: how many times faster this service
#              answers; on STDERR, this service's req/s with 2
#              connections over FastAPI's, BENCH_ROUNDS (default 3)
#              rounds of the two in turns, and their median (the speed
#              aim of doc/limits.md), with the CPU time each used per
#              request
#
# With BENCH_BASELINE_BUILDDIR (another build tree, e.g. of the commit
# before a change), a second stack runs that build beside this one and
# the two are measured in turns, BENCH_ROUNDS (default 3) rounds of
# BENCH_SECONDS each, so that both see the same machine:
#
#   base_ms    the baseline's http_ms (median of its rounds)
#   vs_base    median over the rounds of this build's http_ms divided by
#              the baseline's of the same round
#
# and then BENCH_PAIRS (default 200) single requests to each, in pairs
# whose order alternates, each timed by the client (whole request) and
# by the service (profiling.total_ms, no HTTP): the medians of both
# builds and the median of the per-pair ratios go to STDERR, closer
# interleaving for a machine whose load changes by the second.
#
# BENCH_MODELS (names, blank-separated) limits the models measured;
# BENCH_FACE_IMAGE names the photo (default grace_hopper.jpg; the speed
# aim of doc/limits.md is measured on messi5.jpg).
#
# Runs from a build tree (make bench, or make bench-face): a throwaway
# stack (t/lib/Xmhub/Stack.pm) and wrk on loopback.  The shim's image is
# grace_hopper.jpg (python-matplotlib-data), its default.
use strict;
use warnings;
use File::Temp qw(tempfile);
use HTTP::Tiny;
use JSON::PP;
use POSIX ();
use Time::HiRes qw(sleep time);
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Face qw(photo model_names model_dir);
use Xmhub::Stack;
use Xmhub::Test qw(run);

my $seconds = $ENV{BENCH_SECONDS} || 10;
my $runs = $ENV{BENCH_RUNS} || 30;
my $rounds = $ENV{BENCH_ROUNDS} || 3;
my $pairs = $ENV{BENCH_PAIRS} || 200;
my $base_build = $ENV{BENCH_BASELINE_BUILDDIR};
my ($wrk) = grep { -x } map { "$_/wrk" } split(/:/, $ENV{PATH});
$wrk or die "wrk not found: apt-get install wrk\n";
my @models = model_names();
if ($ENV{BENCH_MODELS}) {
	my %want = map { $_ => 1 } split ' ', $ENV{BENCH_MODELS};
	@models = grep { $want{$_} } @models;
}
@models or die 'no face model in ' . model_dir() . "\n";

my %licence = (
	scrfd_10g => 'InsightFace weights: non-commercial research only',
	'scrfd_2.5g' => 'InsightFace weights: non-commercial research only',
	scrfd_500m => 'InsightFace weights: non-commercial research only',
	yunet => 'MIT',
	blazeface => 'Apache-2.0',
	blazeface_front => 'Apache-2.0',
);

# The FastAPI baseline per model: decoding, the files Python's OpenCV
# loads (static exports) and the raw threshold the service's default
# confidence 0.5 stands for (the knots of lib/face/shim.cpp's specs[]).
my %py = (
	scrfd_10g => [scrfd => 0.5, qw(scrfd_10g_bnkps.onnx
	    det_10g_static640.onnx)],
	'scrfd_2.5g' => [scrfd => 0.4102, qw(scrfd_2.5g_bnkps.onnx
	    det_2.5g_static640.onnx)],
	scrfd_500m => [scrfd => 0.5263, qw(scrfd_500m_bnkps.onnx
	    det_500m_static640.onnx)],
	yunet => [yunet => 0.9949, 'face_detection_yunet_2022mar.onnx'],
);
my $python = '/usr/bin/python3'; # Debian's, with python3-opencv

# Raw detection times, one line per model: the smaller of two runs, one
# before and one after the HTTP figures (this machine is shared: a busy
# moment only ever adds time).
my %shim;
sub shim {
	my ($st, $out, $err) = run(["$ENV{XMHUB_BUILDDIR}/bench/face-shim",
		'-d', model_dir(), '-n', $runs]);
	die "bench/face-shim: $err" if $st != 0;
	for (split /\n/, $out) {
		next if !/^model=(\S+) det_ms=([\d.]+)/;
		$shim{$1} = $2 if !defined $shim{$1} || $2 < $shim{$1};
	}
}
shim();

my $photo = $ENV{BENCH_FACE_IMAGE} || 'grace_hopper.jpg';
my $image = photo($photo);
my ($body, $ct) = Xmhub::Face::multipart(image => $image,
	filename => $photo);
my ($bfh, $bodyfile) = tempfile(UNLINK => 1);
binmode $bfh;
print $bfh $body;
close $bfh;
my ($sfh, $script) = tempfile(SUFFIX => '.lua', UNLINK => 1);
print $sfh <<"EOF";
local f = io.open("$bodyfile", "rb")
wrk.body = f:read("*all")
f:close()
wrk.method = "POST"
wrk.headers["Content-Type"] = "$ct"
EOF
close $sfh;

my %env = (FACE_API_RATE_LIMIT_DETECT => '1000000/minute',
	FACE_API_MAX_CONCURRENT_INFERENCE => 2);
my $f = Xmhub::Face->start(env => {%env, FACE_API_MODEL => $models[0]});
my $base;
if ($base_build) {
	local $ENV{XMHUB_BUILDDIR} = $base_build;
	$base = Xmhub::Face->start(env => {%env, FACE_API_MODEL => $models[0]});
}
my $http = HTTP::Tiny->new(timeout => 120, keep_alive => 0);

# detect($stack): (client ms, the service's total_ms) of one request.
sub detect {
	my ($s) = @_;
	my $t = time;
	my $r = $http->request(POST => $s->url('/api/v1/detect'),
		{headers => {'Content-Type' => $ct}, content => $body});
	$t = (time - $t) * 1000;
	die "detect: $r->{status} $r->{content}\n" if $r->{status} != 200;
	return ($t, decode_json($r->{content})->{profiling}{total_ms});
}

# wrk($stack or URL, $connections): (median latency in ms, requests/s)
# of BENCH_SECONDS of detect requests from that many connections.
sub wrk {
	my ($s, $c) = @_;
	my $url = ref $s ? $s->url('/api/v1/detect') : $s;
	my ($st, $out, $err) = run([$wrk, '-t', $c, '-c', $c, '-d',
		"${seconds}s", '--latency', '-s', $script, $url]);
	die "wrk: $err" if $st != 0;
	my ($non2xx) = $out =~ /Non-2xx or 3xx responses: (\d+)/;
	warn "wrk: $non2xx answers were not 200\n" if $non2xx;
	my ($v, $unit) = $out =~ /^\s+50%\s+([\d.]+)(us|ms|s)\b/m
	    or die "wrk: no median latency in\n$out";
	my ($rps) = $out =~ /Requests\/sec:\s+([\d.]+)/;
	my ($n) = $out =~ /(\d+) requests in/;
	return ($v * {us => 0.001, ms => 1, s => 1000}->{$unit}, $rps // 0,
	    $n // 0);
}

# stat_of($pid): the fields of /proc/PID/stat after the command's name
# (0: state, 1: parent, 2: process group, 11 and 12: user and system
# clock ticks); () when it is gone.
sub stat_of {
	my $st = Xmhub::Face::slurp("/proc/$_[0]/stat") // return ();
	return split ' ', (split /\)\s+/, $st, 2)[1];
}

# cpu_s(@pids): CPU seconds (user + system, all threads) they have used.
sub cpu_s {
	my $ticks = 0;
	for (@_) {
		my @f = stat_of($_) or next;
		$ticks += $f[11] + $f[12];
	}
	return $ticks / POSIX::sysconf(POSIX::_SC_CLK_TCK());
}

# The processes that serve a detect of stack $s: its image workers, their
# face processes and the web server that spawned those.
sub service_pids {
	my ($s) = @_;
	my %p;
	for my $w ($s->workers) {
		$p{$w} = 1;
		my $face = (stat_of($w))[1] // next;
		$p{$face} = 1;
		$p{(stat_of($face))[1] // next} = 1;
	}
	return keys %p;
}

# The processes of group $pgid (uvicorn and its workers).
sub group_pids {
	my ($pgid) = @_;
	return grep { ((stat_of($_))[2] // 0) == $pgid }
	    map { m{(\d+)$} } glob '/proc/[0-9]*';
}

# cpu_wrk($target, $pids): wrk with 2 connections; (req/s, CPU ms the
# processes @$pids used per request).
sub cpu_wrk {
	my ($target, $pids) = @_;
	my $c = cpu_s(@$pids);
	my (undef, $rps, $n) = wrk($target, 2);
	return ($rps, $n ? (cpu_s(@$pids) - $c) * 1000 / $n : 0);
}

sub median {
	my @v = sort { $a <=> $b } @_;
	return @v % 2 ? $v[$#v / 2] : ($v[@v / 2 - 1] + $v[@v / 2]) / 2;
}

# pairs($model): BENCH_PAIRS requests to each build, in alternating
# order; medians and the median per-pair ratio on STDERR.
sub pairs {
	my ($m) = @_;
	my (%c, %t, @rc, @rt);
	for my $i (1 .. $pairs) {
		my %one;
		for my $which ($i % 2 ? qw(new base) : qw(base new)) {
			$one{$which} =
			    [detect($which eq 'new' ? $f : $base)];
		}
		push @{$c{$_}}, $one{$_}[0] for qw(new base);
		push @{$t{$_}}, $one{$_}[1] for qw(new base);
		push @rc, $one{new}[0] / $one{base}[0];
		push @rt, $one{new}[1] / $one{base}[1]
		    if $one{base}[1] > 0;
	}
	printf STDERR "%s: %d pairs: client ms %.2f (this build) %.2f "
	    . "(baseline), ratio %.3f; service total_ms %.2f %.2f, "
	    . "ratio %.3f\n", $m, $pairs, median(@{$c{new}}),
	    median(@{$c{base}}), median(@rc), median(@{$t{new}}),
	    median(@{$t{base}}), median(@rt);
}

# fastapi($model): (median ms, req/s) of the FastAPI baseline on it;
# () when it has none for this model.
sub fastapi {
	my ($m) = @_;
	my ($kind, $raw, @files) = @{$py{$m} // return ()};
	my ($file) = grep { -f } map { model_dir() . "/$_" } @files;
	return () if !$file;
	my $port = Xmhub::Stack::free_port();
	my $pid = fork() // die "fork: $!";
	if ($pid == 0) {
		@ENV{qw(BENCH_FACE_MODEL BENCH_FACE_KIND BENCH_FACE_RAW)} =
		    ($file, $kind, $raw);
		open STDOUT, '>', '/dev/null';
		setpgrp(0, 0);
		exec $python, '-m', 'uvicorn', 'face_fastapi:app', '--app-dir',
		    "$ENV{XMHUB_SRCDIR}/bench", '--host', '127.0.0.1',
		    '--port', $port, '--workers', 2, '--log-level', 'warning';
		die "$python: $!";
	}
	my $url = "http://127.0.0.1:$port/api/v1/detect";
	my $ok;
	# uvicorn and its two workers start in seconds, a minute on a loaded
	# machine
	for (1 .. 600) {
		my $r = $http->request(POST => $url,
			{headers => {'Content-Type' => $ct}, content => $body});
		$ok = $r->{status} == 200 and last;
		sleep 0.2;
	}
	my @res;
	if ($ok) {
		# both workers warm: more requests than a single one would see
		$http->request(POST => $url, {headers =>
			{'Content-Type' => $ct}, content => $body}) for 1 .. 24;
		# BENCH_ROUNDS rounds, this service and FastAPI in turns
		# with 2 connections: the machine's load moves between
		# rounds, less within one.
		# And the CPU time each spends per request: what two
		# saturated cores of their own would turn into req/s.
		my (@rps, @x, @cpu, @pycpu);
		my @mine = service_pids($f);
		my @theirs = group_pids($pid);
		for (1 .. $rounds) {
			my ($mine, $cm) = cpu_wrk($f, \@mine);
			my ($rps, $cp) = cpu_wrk($url, \@theirs);
			push @rps, $rps;
			push @x, $mine / $rps if $rps > 0;
			push @cpu, $cm;
			push @pycpu, $cp;
		}
		printf STDERR "%s: req/s with 2 connections over FastAPI's "
		    . "per round: %s\n", $m,
		    join(' ', map { sprintf '%.3f', $_ } @x);
		printf STDERR "%s: CPU ms per request (this service: its "
		    . "workers, face processes and web server; FastAPI: "
		    . "uvicorn's processes), median of the rounds: %.1f "
		    . "against %.1f, %.3fx\n", $m, median(@cpu),
		    median(@pycpu), median(@pycpu) / median(@cpu);
		my ($ms) = wrk($url, 1);
		@res = ($ms, median(@rps), median(@x));
	} else {
		warn "FastAPI baseline did not answer on $m\n";
	}
	kill 'TERM', -$pid;
	waitpid $pid, 0;
	return @res;
}

my @rows;
for my $i (0 .. $#models) {
	my $m = $models[$i];
	my @stacks = grep { defined } $f, $base;
	if ($i > 0) {
		$_->restart(FACE_API_MODEL => $m) for @stacks;
	}
	# Every FastCGI process warms its network up on its first request.
	for my $s (@stacks) {
		detect($s) for 1 .. 24;
	}
	my (@http, @base, @vs);
	for my $round (1 .. ($base ? $rounds : 1)) {
		my ($h) = wrk($f, 1);
		push @http, $h;
		next if !$base;
		my ($b) = wrk($base, 1);
		push @base, $b;
		push @vs, $h / $b;
	}
	printf STDERR "%s: this build / baseline per round: %s\n", $m,
	    join(' ', map { sprintf '%.3f', $_ } @vs) if @vs;
	pairs($m) if $base;
	my (undef, $rps) = wrk($f, 2);
	my ($py_ms, $py_rps, $rps_x) = fastapi($m);
	printf STDERR "%s: FastAPI + OpenCV %.2f ms, %.2f req/s; this "
	    . "service %.2fx faster, %.2fx the req/s (median of the rounds)\n",
	    $m, $py_ms, $py_rps, $py_ms / median(@http), $rps_x if $py_ms;
	push @rows, [$m, median(@http), $rps, @base ? median(@base) : undef,
	    @vs ? median(@vs) : undef, $py_ms];
}
shim();
printf "%-15s %9s %9s %6s %8s %10s %8s %6s%s  %s\n", 'model', 'shim_ms',
    'http_ms', 'ratio', 'req/s', '1000/shim', 'py_ms', 'py_x',
    $base ? '   base_ms vs_base' : '', 'licence';
for my $row (@rows) {
	my ($m, $http_ms, $rps, $base_ms, $vs, $py_ms) = @$row;
	my $s = $shim{$m} // 0;
	printf "%-15s %9.2f %9.2f %6.3f %8.2f %10.2f %8s %6s%s  %s\n", $m, $s,
	    $http_ms, $s > 0 ? $http_ms / $s : 0, $rps, $s > 0 ? 1000 / $s : 0,
	    $py_ms ? sprintf('%.2f', $py_ms) : '-',
	    $py_ms ? sprintf('%.3f', $py_ms / $http_ms) : '-',
	    $base ? sprintf(' %9.2f %7.3f', $base_ms, $vs) : '',
	    $licence{$m} // '?';
}
