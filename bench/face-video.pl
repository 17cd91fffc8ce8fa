#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/face-video - video masking throughput against the detector's
# raw rate on the same frames, per model, in one run (doc/face-video.md
# "Throughput"):
#
#   det_fps       face_detect() alone over the video's frames, decoded
#                 into memory beforehand (bench/face-video)
#   pipeline_fps  the runner's whole work on the same file: ffmpeg
#                 decoding, detection, tracking, masking, x264 encoding
#                 and the audio copy (faceapi_video_mask)
#   ratio         pipeline_fps / det_fps (aim: 0.8 or more at k = 1)
#
# with detection on every frame (k = 1, the default) and on every third
# (k = 3, FACE_API_VIDEO_DETECT_EVERY=3).  Each figure is the median of
# BENCH_ROUNDS (default 3) runs, each measuring both rates one after the
# other, the ratio the median of the runs' own ratios: this machine is
# shared, and a ratio of two rates measured seconds apart moves less
# than either rate.  The video: BENCH_VIDEO_SECONDS (default 10) of
# 640x480 at 25 fps, grace_hopper.jpg moving over testsrc2, an AAC
# track.  BENCH_MODELS (blank-separated; default yunet, else the best
# model present) names the models.  Runs from a build tree (make
# bench-face-video).
use strict;
use warnings;
use File::Temp qw(tempdir);
use Xmhub::Face qw(model_names model_dir);
use Xmhub::Test qw(run);

my $build = $ENV{XMHUB_BUILDDIR} // '.';
my $prog = "$build/bench/face-video";
-x $prog or die "$prog is not built (make bench/face-video)\n";
my $secs = $ENV{BENCH_VIDEO_SECONDS} // 10;
my $dir = tempdir(CLEANUP => 1);
my $video = "$dir/bench.mp4";
my ($st, $out, $err) = run(['ffmpeg', '-nostdin', '-v', 'error', '-y',
	'-f', 'lavfi', '-i', "testsrc2=s=640x480:r=25:d=$secs",
	'-loop', '1', '-i',
	'/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg',
	'-f', 'lavfi', '-i', "sine=f=440:d=$secs",
	'-filter_complex', "[1:v]scale=200:234[f];[0:v][f]overlay="
	    . "x='mod(t*60,440)':y=120:shortest=1[v]",
	'-map', '[v]', '-map', '2:a', '-c:v', 'libx264', '-pix_fmt', 'yuv420p',
	'-c:a', 'aac', '-t', $secs, $video]);
die "ffmpeg: $err" if $st != 0;

my %have = map { $_ => 1 } model_names();
my @models = $ENV{BENCH_MODELS} ? split(' ', $ENV{BENCH_MODELS})
    : ($have{yunet} ? 'yunet' : (model_names())[0]);
my $rounds = $ENV{BENCH_ROUNDS} // 3;

sub median {
	my @v = sort { $a <=> $b } @_;
	return @v % 2 ? $v[$#v / 2] : ($v[@v / 2 - 1] + $v[@v / 2]) / 2;
}
printf "%-12s %2s %7s %8s %13s %6s\n", qw(model k frames det_fps
    pipeline_fps ratio);
for my $m (@models) {
	for my $k (1, 3) {
		my (%v, $frames, $name);
		for (1 .. $rounds) {
			($st, $out, $err) = run([$prog, '-d', model_dir(), '-m',
				$m, '-v', $video, '-k', $k]);
			die "face-video: $m: $err" if $st != 0;
			my %r = $out =~ /(\w+)=(\S+)/g;
			push @{$v{$_}}, $r{$_} for qw(det_fps pipeline_fps ratio);
			($frames, $name) = @r{qw(frames model)};
		}
		printf "%-12s %2d %7d %8.2f %13.2f %5.2fx\n", $name, $k,
		    $frames, map { median(@{$v{$_}}) }
		    qw(det_fps pipeline_fps ratio);
	}
}
