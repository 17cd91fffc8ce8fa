#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# bench/uploads - upload throughput and transcode overhead (`make bench`).
#
# 1. Upload throughput over loopback: POST /api/v1/uploads of a 256 MiB
#    file with curl, next to lighttpd accepting the same body into a file
#    (a POST to /api/health: lighttpd spools every body over 64 KiB to
#    server.upload-dirs before it calls a program, and health answers
#    without reading it).  MB/s each and their ratio, best of 3.
# 2. Transcode of a 10-minute WAV (44.1 kHz stereo 16 bit) through the
#    runner (xmhub-transcode --drain: claim, store to temp file, probe,
#    ffmpeg, ffprobe, store, complete) next to the bare ffmpeg command
#    alone, best of 3 each, interleaved; the ratio is the runner overhead
#    (aim: under 1.10).
# Not a test: it prints figures, it asserts nothing.
use strict;
use warnings;
use File::Temp qw(tempdir);
use JSON::PP;
use Time::HiRes qw(time);
use Xmhub::Platform;
use Xmhub::Test qw(run);

my $ROUNDS = 3;
my $MIB = 256;

my $p = Xmhub::Platform->start;
my $s = $p->stack;
my $var = $s->var;
my $dir = tempdir(CLEANUP => 1);
chmod 0755, $dir;
my $runner = "$ENV{XMHUB_BUILDDIR}/jobs/xmhub-transcode";

sub sh {
	my ($st, $out, $err) = run([@_]);
	die "@_: exit $st\n$err" if $st != 0;
	return $out;
}

# Only the runs started here transcode.
sub daemon_stop {
	open my $in, '<', "$var/run/transcode.pid" or return;
	chomp(my $pid = <$in>);
	kill 'TERM', -$pid;
	sleep 1 while kill 0, $pid;
}
daemon_stop();

my $fac = $p->facility('Bench');
my $admin = $p->user('facility_admin', $fac);
my $key = $p->api_key($p->token($admin), 'upload');

# curl's seconds for one POST; dies unless it answers $want.
sub post {
	my ($url, $want, @args) = @_;
	my $out = sh('curl', '-sS', '-o', '/dev/null', '-w',
		'%{http_code} %{time_total}', @args, $url);
	my ($code, $t) = split ' ', $out;
	die "$url: $code, not $want\n" if $code != $want;
	return $t;
}

# --- upload throughput ---
my $body = "$dir/body.bin";
sh('dd', 'if=/dev/urandom', "of=$body", 'bs=1M', "count=$MIB",
    'status=none');
my $mb = $MIB * 1048576 / 1e6;
my ($up, $floor) = (1e9, 1e9);
for (1 .. $ROUNDS) {
	my $t = post($s->url('/api/v1/uploads'), 200, '-H', "X-Api-Key: $key",
		'-F', "file=\@$body;filename=bench.wav");
	$up = $t if $t < $up;
	$t = post($s->url('/api/health'), 405, '-H',
		'Content-Type: application/octet-stream', '--data-binary',
		"\@$body");
	$floor = $t if $t < $floor;
}
printf "upload %d MiB: API %.0f MB/s, lighttpd into a file %.0f MB/s, "
    . "ratio %.2f\n", $MIB, $mb / $up, $mb / $floor, $floor / $up;
$p->sql("DELETE FROM uploads WHERE facility_id = '$fac'");
sh('rm', '-rf', "$var/objects/$fac");

# --- transcode overhead ---
my $wav = "$dir/long.wav";
sh(qw(sox -n -r 44100 -b 16 -c 2), $wav, qw(synth 600 brownnoise));
my $u = do {
	my $out = sh('curl', '-sS', '-H', "X-Api-Key: $key", '-F',
		"file=\@$wav", $s->url('/api/v1/uploads'));
	decode_json($out)->{id};
};
my $tok = $p->token($admin);
my @cmd = ('env', 'XMHUB_ENV_FILE=' . $s->env_file, $runner, '--drain');
@cmd = ('runuser', '-u', 'xmhub', '--', @cmd) if $> == 0;
my ($bare, $through) = (1e9, 1e9);
for my $round (1 .. $ROUNDS) {
	$p->req(POST => "/api/v1/uploads/$u/retranscode", token => $tok)
	    if $round > 1;
	my $t0 = time;
	sh('ffmpeg', '-nostdin', '-hide_banner', '-loglevel', 'error', '-y',
	    '-i', $wav, '-map', '0:a:0', '-vn', '-c:a', 'libopus', '-b:a',
	    '128k', '-f', 'webm', "$dir/out.webm");
	my $t1 = time;
	sh(@cmd);
	my $t2 = time;
	$bare = $t1 - $t0 if $t1 - $t0 < $bare;
	$through = $t2 - $t1 if $t2 - $t1 < $through;
}
my $done = $p->sql("SELECT count(*) FROM transcode_jobs WHERE upload_id = "
	    . "'$u' AND status = 'completed'");
die "only $done of $ROUNDS runs completed\n" if $done != $ROUNDS;
printf "transcode 10-min WAV: ffmpeg alone %.2f s, runner %.2f s, "
    . "ratio %.3f\n", $bare, $through, $through / $bare;
