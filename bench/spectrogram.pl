#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# bench/spectrogram - the runner's spectrogram of a recording next to the
# sox program on the same file (`make bench-spectrogram`).
#
# 1. A 10-minute WAV (44.1 kHz stereo 16 bit, pink noise under a tone):
#    the command the transcode runner's child runs (lib/core/spectro:
#    libsox's spectrogram effect through the libsox API, 1024 x 257, the
#    channels averaged, and the waveform peaks in the same pass:
#    `xmhub-transcode --spectro-sox FILE 0 600000 1024 257 linear
#    PEAKS`), the same without peaks, 300 rows (drawn at 513, rows
#    mapped) and the log scale (drawn at 1025, rows mapped), against
#    `sox FILE -n channels 1 spectrogram -x 1024 -y 257 -r -o OUT` (the
#    same image by the sox program) and sox's defaults `sox FILE -n spectrogram` (800 wide, each channel drawn,
#    axes).  Best of 5 each, interleaved; ratios to the same-image sox
#    (aim: at most 1.10).
# 2. Memory: the child's peak RSS for the 10-minute file and a 2-hour one
#    (8 kHz mono), and a 10-minute window at the end of the 2-hour file
#    (seeked to, not read through): RSS must not grow with the length.
# Not a test: it prints figures, it asserts nothing.
use strict;
use warnings;
use File::Temp qw(tempdir);
use Time::HiRes qw(time);
use Xmhub::Test qw(run);

my $ROUNDS = 5;
my $runner = "$ENV{XMHUB_BUILDDIR}/jobs/xmhub-transcode";
my $dir = tempdir(CLEANUP => 1);

sub sh {
	my ($st, $out, $err) = run([@_]);
	die "@_: exit $st\n$err" if $st != 0;
	return $out;
}

# Seconds and peak RSS (KiB) of one run of @cmd (GNU time).
sub timed {
	my (@cmd) = @_;
	my $t = time;
	my ($st, $out, $err) = run(['/usr/bin/time', '-f', 'RSS %M', @cmd]);
	my $s = time - $t;
	die "@cmd: exit $st\n$err" if $st != 0;
	my ($rss) = $err =~ /RSS (\d+)/;
	return ($s, $rss);
}

my $ten = "$dir/ten.wav";
sh('sox', '-n', '-r', '44100', '-b', '16', '-c', '2', $ten, 'synth', '600',
    'pinknoise', 'synth', 'sine', 'mix', '1000', 'vol', '0.5');
my $peaks = "$dir/peaks";
my %case = (
	'runner (spectrogram + peaks)' => [$runner, '--spectro-sox', $ten, 0,
	    600000, 1024, 257, 'linear', $peaks],
	'runner (spectrogram only)' => [$runner, '--spectro-sox', $ten, 0,
	    600000, 1024, 257, 'linear', '-'],
	'runner (300 rows, mapped)' => [$runner, '--spectro-sox', $ten, 0,
	    600000, 1024, 300, 'linear', '-'],
	'runner (log scale, 257 rows)' => [$runner, '--spectro-sox', $ten, 0,
	    600000, 1024, 257, 'log', '-'],
	'sox, same image' => ['sh', '-c', 'sox "$0" -n channels 1 '
	    . 'spectrogram -x 1024 -y 257 -r -o "$1"', $ten, "$dir/sox.png"],
	'sox, defaults' => ['sh', '-c', 'cd "$1" && sox "$0" -n spectrogram',
	    $ten, $dir],
);
my @order = ('sox, same image', 'runner (spectrogram + peaks)',
    'runner (spectrogram only)', 'runner (300 rows, mapped)',
    'runner (log scale, 257 rows)', 'sox, defaults');
my (%best, %rss);
for my $round (1 .. $ROUNDS) {
	for my $name (@order) {
		# The runner writes the PNG to stdout: into a file, as its
		# parent's pipe would take it.
		my @cmd = @{$case{$name}};
		@cmd = ('sh', '-c', '"$@" > "' . "$dir/run.png" . '"', 'sh',
		    @cmd) if $cmd[0] eq $runner;
		my ($s, $r) = timed(@cmd);
		$best{$name} = $s if !defined $best{$name} || $s < $best{$name};
		$rss{$name} = $r;
	}
}
printf "spectrogram of a 10-minute WAV (44.1 kHz stereo), best of %d:\n",
    $ROUNDS;
printf "  %-30s %7.2f s  %6.0f MiB RSS  %.2fx\n", $_, $best{$_},
    ($rss{$_} // 0) / 1024, $best{$_} / $best{'sox, same image'}
    for @order;

my $two = "$dir/two.wav";
sh('sox', '-n', '-r', '8000', '-b', '16', '-c', '1', $two, 'synth', '7200',
    'pinknoise', 'vol', '0.5');
my ($s10, $r10) = timed('sh', '-c', '"$@" > /dev/null', 'sh', $runner,
    '--spectro-sox', $ten, 0, 600000, 1024, 257, 'linear', $peaks);
my ($s2h, $r2h) = timed('sh', '-c', '"$@" > /dev/null', 'sh', $runner,
    '--spectro-sox', $two, 0, 7200000, 1024, 257, 'linear', $peaks);
my ($sw, $rw) = timed('sh', '-c', '"$@" > /dev/null', 'sh', $runner,
    '--spectro-sox', $two, 6600000, 7200000, 1024, 257, 'linear', '-');
my ($sw0, $rw0) = timed('sh', '-c', '"$@" > /dev/null', 'sh', $runner,
    '--spectro-sox', $two, 0, 600000, 1024, 257, 'linear', '-');
print "memory of the runner's child:\n";
printf "  %-42s %6.2f s  %6.1f MiB RSS\n", @$_
    for ['10 minutes, 44.1 kHz stereo, with peaks', $s10, $r10 / 1024],
    ['2 hours, 8 kHz mono, with peaks', $s2h, $r2h / 1024],
    ['2 hours: its first 10 minutes', $sw0, $rw0 / 1024],
    ['2 hours: its last 10 minutes (seeked)', $sw, $rw / 1024];
printf "  stored peaks of the 2 hours: %.1f MiB\n", (-s $peaks) / 1048576;
