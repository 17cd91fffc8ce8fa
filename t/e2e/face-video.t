#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Video anonymization end to end (doc/face-video.md): a video made with
# ffmpeg from a face photo (the face moving across the frames, frames
# without it, an audio track) goes through POST /api/v1/mask-video, the
# runner xmhub-face-video (a daemon of the stack) and back through
# /api/v1/video-jobs/{id}/result.  The result has the same frame count
# and duration, the face region differs from the source in every frame
# where the face is, the rest stays within a small codec error, and the
# audio packets are the source's.  Also: Range on the result, a phone
# video turned upright, Matroska for audio MP4 can not hold, cancel, a runner stopped mid-job giving its job
# back, detection on every third frame, API keys, a
# damaged video failing with a detail, the limits (413/400), unknown
# jobs, and 503 without storage.
use strict;
use warnings;
use File::Temp qw(tempdir);
use Test::More;
use Time::HiRes qw(sleep time);
use Xmhub::Face qw(model_names slurp);
use Xmhub::Prom qw(prom_samples prom_check);
use Xmhub::Test qw(run);

my %have = map { $_ => 1 } model_names();
my $model = $have{yunet} ? 'yunet' : (model_names())[0];
die "no face model in the test model directory\n" if !defined $model;

my $f = Xmhub::Face->start(env => {
	FACE_API_MODEL => $model,
	FACE_API_STORAGE_ENABLED => 'true',
	FACE_API_RATE_LIMIT_MASK => '100000/minute',
	FACE_API_VIDEO_MAX_BYTES => 3000000,
	FACE_API_VIDEO_MAX_PIXELS => 100000,
	FACE_API_VIDEO_MAX_SECONDS => 10,
});
my $dir = tempdir(CLEANUP => 1);
my $photo = '/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg';
my ($W, $H, $FPS) = (320, 240, 10);

# ffmpeg(@args): runs it, dies with its stderr on failure.
sub ffmpeg {
	my ($st, $out, $err) = run(['ffmpeg', '-nostdin', '-v', 'error', '-y',
		@_]);
	die "ffmpeg @_: $err" if $st != 0;
	return $out;
}

# make_video($path, %opt): a testsrc2 background ($opt{fps}, else $FPS,
# frames a second), the photo scaled to 120x140 moving right by 5 px a
# frame from x = 20, visible from 0.5 s to 2.4 s (frames 5 to 24 at
# 10 fps), a 440 Hz AAC track.
sub make_video {
	my ($path, %o) = @_;
	my $d = $o{seconds} // 3;
	my $s = $o{size} // "${W}x$H";
	my $fps = $o{fps} // $FPS;
	ffmpeg('-f', 'lavfi', '-i', "testsrc2=s=$s:r=$fps:d=$d",
	    '-loop', '1', '-i', $photo,
	    '-f', 'lavfi', '-i', "sine=f=440:d=$d",
	    '-filter_complex', '[1:v]scale=120:140[f];[0:v][f]overlay='
		. "x='20+t*50':y=50:enable='between(t,0.45,2.45)'"
		. ':shortest=1[v]',
	    '-map', '[v]', '-map', '2:a', '-c:v', 'libx264', '-pix_fmt',
	    'yuv420p', '-crf', '10', '-c:a', 'aac', '-t', $d,
	    @{$o{extra} // []}, $path);
	return slurp($path);
}

# vpost(bytes, fields): POST /api/v1/mask-video with the video part.
sub vpost {
	my ($video, %fields) = @_;
	my $b = 'xmhubVideo' . int(rand(1e9));
	my $body = '';
	$body .= "--$b\r\nContent-Disposition: form-data; name=\"$_\"\r\n\r\n"
	    . "$fields{$_}\r\n" for sort keys %fields;
	$body .= "--$b\r\nContent-Disposition: form-data; name=\"video\"; "
	    . "filename=\"v.mp4\"\r\nContent-Type: video/mp4\r\n\r\n$video\r\n"
	    if defined $video;
	$body .= "--$b--\r\n";
	return $f->http->request(POST => $f->url('/api/v1/mask-video'),
	    {headers => {'Content-Type' => "multipart/form-data; boundary=$b"},
	     content => $body});
}
sub detail { return ($f->json($_[0]) // {})->{detail} // '' }
sub job { return $f->json($f->req(GET => "/api/v1/video-jobs/$_[0]")) }

# wait_job(id, states): the job once its state is one of states.
sub wait_job {
	my ($id, @states) = @_;
	my $until = time + 180;
	my $j;
	while (time < $until) {
		$j = job($id);
		return $j if grep { $_ eq ($j->{state} // '') } @states;
		sleep 0.3;
	}
	return $j;
}

# probe(path): frame count, duration (s), and the audio codec.
sub probe {
	my ($path) = @_;
	my ($st, $out) = run(['ffprobe', '-v', 'error', '-count_frames',
		'-show_entries', 'stream=codec_type,codec_name,nb_read_frames'
		. ':format=duration', '-of', 'default=nw=1', $path]);
	my ($frames) = $out =~ /codec_type=video\s+nb_read_frames=(\d+)/
	    ? ($1) : ($out =~ /nb_read_frames=(\d+)/);
	my %r = (frames => $frames, duration => ($out =~ /duration=([\d.]+)/)[0]);
	$r{audio} = $1 if $out =~ /codec_name=(\w+)\s+codec_type=audio/;
	return \%r;
}

# --- the masked video ---
my $src = "$dir/src.mp4";
my $video = make_video($src);
my $r = vpost($video);
is($r->{status}, 202, 'POST /api/v1/mask-video: 202') or diag $r->{content};
my $j = $f->json($r) // {};
like($j->{id} // '', qr/^[0-9a-f-]{36}$/, 'a job id');
is($j->{state}, 'queued', 'queued');
is($j->{frames_total}, 30, 'frames_total from the header');
is($r->{headers}{location}, "/api/v1/video-jobs/$j->{id}", 'Location');
my $id = $j->{id};
$j = wait_job($id, qw(completed failed cancelled));
is($j->{state}, 'completed', 'the job completes') or diag explain $j;
is($j->{frames_done}, 30, 'frames_done: every frame');
ok(($j->{fps} // 0) > 0, 'fps reported');
is($j->{error}, undef, 'no error');
is($j->{result_url}, "/api/v1/video-jobs/$id/result", 'result_url');
ok(!-e $f->stack->var . "/objects/face/videos/$id/input",
    'the unmasked input is gone from the store');
ok(-s $f->stack->var . "/objects/face/videos/$id/output", 'the output is kept');

$r = $f->req(GET => "/api/v1/video-jobs/$id/result");
is($r->{status}, 200, 'result: 200');
is($r->{headers}{'content-type'}, 'video/mp4', 'an MP4');
my $out = "$dir/out.mp4";
open my $fh, '>:raw', $out or die;
print $fh $r->{content};
close $fh;
my $len = length $r->{content};
$r = $f->req(GET => "/api/v1/video-jobs/$id/result",
    headers => {Range => 'bytes=100-199'});
is($r->{status}, 206, 'Range: 206');
is($r->{headers}{'content-range'}, "bytes 100-199/$len", 'Content-Range');
is($r->{content}, substr(slurp($out), 100, 100), 'the bytes of the range');

my ($ps, $po) = (probe($src), probe($out));
is($po->{frames}, $ps->{frames}, "same frame count ($ps->{frames})");
ok(abs($po->{duration} - $ps->{duration}) < 0.15,
    "same duration ($ps->{duration} s, $po->{duration} s)");
is($po->{audio}, 'aac', 'audio present');
my $amd5 = sub {
	ffmpeg('-i', $_[0], '-map', '0:a', '-c', 'copy', '-f', 'md5', '-');
};
is($amd5->($out), $amd5->($src), 'audio packets copied unchanged');

# Pixels: the face (at 39,27-85,78 of the 120x140 photo: YuNet's box)
# in frame i is at x0 = 20 + 5i, y0 = 50, in frames 5 to 24.
# check_pixels(source, output, k): the frames showing the face whose
# face region did not change (mean absolute difference under 8), the
# frames whose rest changed by more than codec error (over 2.5), and
# that error per frame.  The rest is outside the face's rectangles
# (with a margin for the padding) in frames i - k .. i + k: the frames
# whose detections a frame's masks come from (doc/face-video.md).
sub check_pixels {
	my ($src, $out, $k) = @_;
	my $raw_s = ffmpeg('-i', $src, '-f', 'rawvideo', '-pix_fmt', 'gray', '-');
	my $raw_o = ffmpeg('-i', $out, '-f', 'rawvideo', '-pix_fmt', 'gray', '-');
	my %vis = map { $_ => 1 } 5 .. 24;
	my ($face_bad, $rest_bad, @rest_err) = (0, 0);
	for my $i (0 .. 29) {
		my ($s, $o) = map { substr($_, $i * $W * $H, $W * $H) }
		    $raw_s, $raw_o;
		my @ex = map { [20 + 5 * $_ + 15, 50 + 10, 20 + 5 * $_ + 110,
		    50 + 100] } grep { $vis{$_} } $i - $k .. $i + $k;
		my $x0 = 20 + 5 * $i;
		my ($fd, $fn, $rd, $rn) = (0, 0, 0, 0);
		for my $y (0 .. $H - 1) {
			my @a = unpack 'C*', substr($s, $y * $W, $W);
			my @b = unpack 'C*', substr($o, $y * $W, $W);
			for my $x (0 .. $W - 1) {
				my $d = abs($a[$x] - $b[$x]);
				if ($vis{$i} && $x >= $x0 + 45 && $x < $x0 + 80
				    && $y >= 50 + 32 && $y < 50 + 75) {
					$fd += $d;
					$fn++;
				}
				next if grep { $x >= $_->[0] && $x < $_->[2]
				    && $y >= $_->[1] && $y < $_->[3] } @ex;
				$rd += $d;
				$rn++;
			}
		}
		$face_bad++ if $vis{$i} && $fd / $fn < 8;
		push @rest_err, sprintf('%.2f', $rd / $rn);
		$rest_bad++ if $rd / $rn > 2.5;
	}
	return ($face_bad, $rest_bad, "@rest_err");
}
my ($face_bad, $rest_bad, $errs) = check_pixels($src, $out, 1);
is($face_bad, 0, 'the face region differs in each of the 20 frames '
    . 'showing the face');
is($rest_bad, 0, 'the rest of each frame stays within codec error')
    or diag "mean error per frame: $errs";

# --- a phone video: its display matrix turns it a quarter ---
ffmpeg('-i', $src, '-c', 'copy', '-metadata:s:v', 'rotate=90',
    "$dir/rot.mp4");
$r = vpost(slurp("$dir/rot.mp4"));
is(($f->json($r) // {})->{width}, $H, 'turned: width and height swapped');
$j = wait_job(($f->json($r) // {})->{id}, qw(completed failed));
is($j->{state}, 'completed', 'a turned video completes') or diag explain $j;
$r = $f->req(GET => "/api/v1/video-jobs/$j->{id}/result");
open $fh, '>:raw', "$dir/rot-out.mp4" or die;
print $fh $r->{content};
close $fh;
my ($rst, $rout) = run(['ffprobe', '-v', 'error', '-select_streams', 'v:0',
	'-count_frames', '-show_entries', 'stream=width,height,nb_read_frames',
	'-of', 'csv=p=0', "$dir/rot-out.mp4"]);
is($rout =~ s/\s+//gr, "$H,$W,30", 'upright frames, all 30 of them');

# --- audio MP4 can not hold: Matroska, the audio still copied ---
ffmpeg('-i', $src, '-c:v', 'copy', '-c:a', 'pcm_s16le', "$dir/pcm.mov");
$r = vpost(slurp("$dir/pcm.mov"));
$j = wait_job(($f->json($r) // {})->{id}, qw(completed failed));
is($j->{state}, 'completed', 'PCM audio in MOV: completes') or diag explain $j;
$r = $f->req(GET => "/api/v1/video-jobs/$j->{id}/result");
is($r->{headers}{'content-type'}, 'video/x-matroska', 'a Matroska result');
open $fh, '>:raw', "$dir/pcm-out.mkv" or die;
print $fh $r->{content};
close $fh;
is(probe("$dir/pcm-out.mkv")->{audio}, 'pcm_s16le', 'its audio is PCM');
is($amd5->("$dir/pcm-out.mkv"), $amd5->("$dir/pcm.mov"),
    'the PCM packets copied unchanged');

# --- cancel ---
my $long = make_video("$dir/long.mp4", seconds => 8);
$r = vpost($long);
is($r->{status}, 202, 'a longer video: 202');
my $cid = ($f->json($r) // {})->{id};
$j = wait_job($cid, qw(running completed failed));
is($j->{state}, 'running', 'it runs');
$r = $f->req(DELETE => "/api/v1/video-jobs/$cid");
is($r->{status}, 200, 'DELETE: 200');
is(($f->json($r) // {})->{state}, 'cancelled', 'cancelled');
is($f->req(DELETE => "/api/v1/video-jobs/$cid")->{status}, 409,
    'DELETE again: 409');
is($f->req(GET => "/api/v1/video-jobs/$cid/result")->{status}, 409,
    'no result for a cancelled job: 409');
# The runner left it: the next job completes, the cancelled one stays.
$r = vpost($video, method => 'solid');
my $nid = ($f->json($r) // {})->{id};
my $t0 = time;
$j = wait_job($nid, qw(completed failed));
is($j->{state}, 'completed', 'the runner goes on with the next job');
is(job($cid)->{state}, 'cancelled', 'the cancelled job stays cancelled');

# --- a damaged video: its header is fine, half its frames are gone ---
my $fast = make_video("$dir/fast.mp4", extra => ['-movflags', '+faststart']);
$r = vpost(substr($fast, 0, int(length($fast) / 2)));
is($r->{status}, 202, 'a truncated video is queued (its header reads)');
$j = wait_job(($f->json($r) // {})->{id}, qw(completed failed));
is($j->{state}, 'failed', 'and fails');
like($j->{error} // '', qr/truncated|damaged|decode/, 'with a detail: '
    . ($j->{error} // ''));

# --- a lying header: an MKV that says 1 s and holds 12 s, over
# FACE_API_VIDEO_MAX_SECONDS (10): accepted on its header, the run stops
# past 10 s of frames and fails, saying so; at 10 fps and at 1 fps (where
# a decoder stopped at the limit + 1 s would end exactly at the frames
# allowed, and the video would complete cut at 10 s) ---
for my $fps (10, 1) {
	make_video("$dir/long.mkv", seconds => 12, size => '32x32',
	    fps => $fps);
	my $mkv = slurp("$dir/long.mkv");
	# The Segment's Duration (ID 0x4489, an 8-byte float of ms) and the
	# streams' DURATION tags.
	my $at = index($mkv, "\x44\x89\x88");
	substr($mkv, $at + 3, 8) = pack('d>', 1000) if $at >= 0;
	$mkv =~ s/00:00:12\.0/00:00:01.0/g;
	open my $o, '>:raw', "$dir/lying.mkv" or die "$dir/lying.mkv: $!";
	print {$o} $mkv;
	close $o or die "$dir/lying.mkv: $!";
	my $pr = probe("$dir/lying.mkv");
	is_deeply([$pr->{duration} + 0, $pr->{frames}], [1, 12 * $fps],
	    "$fps fps: the MKV says 1 s and holds " . 12 * $fps
	    . " frames (12 s)");
	$r = vpost($mkv);
	is($r->{status}, 202, "$fps fps: a video whose header says 1 s: 202");
	$j = wait_job(($f->json($r) // {})->{id}, qw(completed failed));
	is($j->{state}, 'failed', "$fps fps: holding 12 s, it fails");
	is($j->{error}, 'the video holds more than 10 s '
	    . '(FACE_API_VIDEO_MAX_SECONDS), more than its header says',
	    "$fps fps: with a detail saying why");
}

# --- bad requests and limits ---
$r = vpost('this is not a video at all');
is($r->{status}, 400, 'not a video: 400');
like(detail($r), qr/^not a readable video: Invalid data/, 'detail: ' . detail($r));
unlike(detail($r), qr/xmhub-face-video-/, 'no temporary file name in it');
# A playlist would make ffmpeg read other files than the upload.
$r = vpost("#EXTM3U\n#EXT-X-TARGETDURATION:3\n#EXTINF:3.0,\n$src\n"
    . "#EXT-X-ENDLIST\n");
is($r->{status}, 400, 'an HLS playlist naming a local video: 400');
like(detail($r), qr/not on whitelist|not a readable video/,
    'detail: ' . detail($r));
$r = vpost(substr($video, 0, 2000));
is($r->{status}, 400, 'cut before its header ends: 400');
$r = vpost(undef, method => 'solid');
is($r->{status}, 400, 'no video part: 400');
like(detail($r), qr/video/, 'detail names the video');
$r = vpost($video, method => 'sepia');
is($r->{status}, 400, 'a bad method: 400');
like(detail($r), qr/method/, 'detail names the parameter');
$r = vpost('x' x 3100000);
is($r->{status}, 413, 'over FACE_API_VIDEO_MAX_BYTES: 413');
like(detail($r), qr/video may have 3000000 bytes/, 'detail: ' . detail($r));
$r = vpost(make_video("$dir/big.mp4", size => '400x300', seconds => 1));
is($r->{status}, 413, 'over FACE_API_VIDEO_MAX_PIXELS: 413');
like(detail($r), qr/400x300/, 'detail: ' . detail($r));
$r = vpost(make_video("$dir/longer.mp4", seconds => 12, size => '32x32'));
is($r->{status}, 413, 'over FACE_API_VIDEO_MAX_SECONDS: 413');
like(detail($r), qr/10 s/, 'detail: ' . detail($r));
$r = $f->req(GET => '/api/v1/video-jobs/00000000-0000-4000-8000-000000000000');
is($r->{status}, 404, 'unknown job: 404');
is($f->req(GET => '/api/v1/video-jobs/nope')->{status}, 400,
    'not a UUID: 400');

# --- the API pages document them ---
my $api = $f->json($f->req(GET => '/openapi.json')) // {};
ok($api->{paths}{$_}, "openapi: $_") for '/api/v1/mask-video',
    '/api/v1/video-jobs/{id}', '/api/v1/video-jobs/{id}/result';
my $props = $api->{paths}{'/api/v1/mask-video'}{post}{requestBody}{content}
    {'multipart/form-data'}{schema}{properties};
is(join(',', sort keys %{$props // {}}), 'confidence,max_faces,method,'
    . 'nms_threshold,padding,strength,video',
    'openapi: the video and the mask parameters as form fields');

# --- a runner stopped mid-job gives the job back uncounted ---
$r = vpost($long);
my $gid = ($f->json($r) // {})->{id};
$j = wait_job($gid, qw(running completed failed));
is($j->{state}, 'running', 'another long job runs');
ok($f->stack->stop_daemon('face-video'), 'the runner stops (SIGTERM)');
$j = job($gid);
is($j->{state}, 'queued', 'its job is queued again');
is($j->{attempts}, 0, 'without counting an attempt');
ok(!-e $f->stack->var . "/objects/face/videos/$gid/output", 'no output');

# --- detection on every third frame: boxes interpolated between ---
$f->restart(FACE_API_VIDEO_DETECT_EVERY => 3);
$j = wait_job($gid, qw(completed failed));
is($j->{state}, 'completed', 'the runner started again completes it');
is($j->{frames_done}, 80, 'all of its 80 frames');
is($j->{attempts}, 1, 'in one attempt');
$r = vpost($video);
$j = wait_job(($f->json($r) // {})->{id}, qw(completed failed));
is($j->{state}, 'completed', 'k = 3: completes') or diag explain $j;
$r = $f->req(GET => "/api/v1/video-jobs/$j->{id}/result");
open $fh, '>:raw', "$dir/k3.mp4" or die;
print $fh $r->{content};
close $fh;
is(probe("$dir/k3.mp4")->{frames}, 30, 'k = 3: every frame');
($face_bad, $rest_bad, $errs) = check_pixels($src, "$dir/k3.mp4", 3);
is($face_bad, 0, 'k = 3: the face is masked in each of its 20 frames');
is($rest_bad, 0, 'k = 3: the rest within codec error')
    or diag "mean error per frame: $errs";

# --- the jobs in the face service's /metrics (doc/metrics.md) ---
{
	my $m = $f->req(GET => '/metrics');
	is($m->{status}, 200, 'metrics: 200');
	prom_check($m->{content}, 'metrics with the video jobs: promtool');
	my $got = prom_samples($m->{content});
	my $sql = sub {
		my ($st, $out) = $f->stack->psql($_[0]);
		chomp $out;
		return $out;
	};
	my $total = 0;
	for my $state (qw(queued running completed failed cancelled)) {
		my $n = $sql->('SELECT count(*) FROM face_video_jobs '
		    . "WHERE status = '$state'");
		$total += $n;
		is($got->{qq{xmhub_face_video_jobs{state="$state"}}}, $n,
		    "metrics: $n $state video jobs");
	}
	cmp_ok($total, '>', 0, 'metrics: the jobs of this test');
	is($got->{xmhub_face_video_job_duration_seconds_count},
	    $sql->("SELECT count(*) FROM face_video_jobs WHERE status IN "
		. "('completed', 'failed') AND started_at IS NOT NULL AND "
		. 'finished_at IS NOT NULL'),
	    'metrics: the run times of the finished ones');
}

# --- API keys: as the other public endpoints ---
$f->restart(FACE_API_API_KEY_ENABLED => 'true');
$r = vpost($video);
is($r->{status}, 401, 'keys on, no X-API-Key: 401');
is($f->req(GET => "/api/v1/video-jobs/$id")->{status}, 401,
    'job state without a key: 401');

# --- without storage ---
$f->restart(FACE_API_STORAGE_ENABLED => 'false',
    FACE_API_API_KEY_ENABLED => 'false');
$r = vpost($video);
is($r->{status}, 503, 'storage disabled: 503');
like(detail($r), qr/FACE_API_STORAGE_ENABLED/, 'detail: ' . detail($r));
is($f->req(GET => "/api/v1/video-jobs/$id")->{status}, 503,
    'job state without storage: 503');

# The runner's own log: the stack's sanitizer check reads the FastCGI
# programs' log only, so this one is looked at here (ASan builds).
ok($f->stack->stop_daemon('face-video'), 'the runner stops');
my $log = slurp($f->stack->var . '/log/face-video.log') // '';
like($log, qr/attempt 1 failed: the video is truncated/,
    'the runner logged the damaged video');
unlike($log, qr/ERROR: \w*Sanitizer|runtime error:/,
    'no sanitizer report from the runner');

done_testing();
