#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# An upload's spectrogram and waveform end to end (doc/uploads.md
# "Spectrogram and waveform"): a 440 Hz tone made here with sox, uploaded
# through the API, transcoded by a runner started here, then read back:
# the stored spectrogram's brightest row sits at 440 Hz (within one
# frequency bin), so does a window drawn on demand, the waveform's length
# matches the duration at the requested resolution and its peaks the
# tone's amplitude.  Also: 404 before the runner ran, 409 after a failed
# transcode, bounds (400), caching (ETag, 304), tenants (403), and the
# objects gone with the upload.
use strict;
use warnings;
use File::Temp qw(tempdir);
use JSON::PP;
use POSIX qw(ceil);
use Test::More;
use Xmhub::Objects;
use Xmhub::Platform qw(is_error);
use Xmhub::Png qw(png_rows brightest_row);
use Xmhub::S3;
use Xmhub::Test qw(run);

my $build = $ENV{XMHUB_BUILDDIR};
my $runner = "$build/jobs/xmhub-transcode";
my $dir = tempdir(CLEANUP => 1);
chmod 0755, $dir;

my $p = Xmhub::Platform->start;
my $s = $p->stack;
# One attempt: a broken file fails at once.  The runner is run here, so
# the 404 before it is not a race.
$s->restart(env => {XMHUB_TRANSCODE_MAX_ATTEMPTS => 1});
ok($s->stop_daemon('transcode'), 'the stack runner is stopped');
my $var = $s->var;
my $fac = $p->facility('Visual A');
my $other = $p->facility('Visual B');
my $tu = $p->token($p->user('user', $fac));
my $tb = $p->token($p->user('user', $other));
my $key = $p->api_key($p->token($p->user('facility_admin', $fac)), 'upload');

sub upload {
	my ($name, $data) = @_;
	my ($st, $u) = Xmhub::Objects::upload($p, $key, $name, $data);
	is($st, 200, "upload $name: 200") or diag explain $u;
	return $u;
}

# Runs a runner until no job is left, as the stack would.
sub drain {
	my $tmp = "$dir/tmp";
	mkdir $tmp;
	chown((getpwnam('xmhub'))[2, 3], $tmp) if $> == 0;
	my @cmd = ('env', 'XMHUB_ENV_FILE=' . $s->env_file, "TMPDIR=$tmp",
		$runner, '--drain');
	@cmd = ('runuser', '-u', 'xmhub', '--', @cmd) if $> == 0;
	my ($st, undef, $err) = run(\@cmd);
	is($st, 0, 'the runner drains the queue') or diag $err;
}

sub get {
	my ($path, %opt) = @_;
	return $p->req(GET => $path, token => $opt{token} // $tu,
		headers => $opt{headers} // {});
}

# --- a 440 Hz tone, stereo, 12 s at 44.1 kHz ---
my $rate = 44100;
my $secs = 12;
my ($rc, $wav, $err) = run(['sox', '-n', '-r', $rate, '-b', '16', '-c', '2',
    '-t', 'wav', '-', 'synth', $secs, 'sine', '440', 'vol', '0.5']);
is($rc, 0, 'sox makes the tone') or diag $err;
my $u = upload('tone.wav', $wav);
my $base = "/api/v1/uploads/$u->{id}";

my ($st, $b, $res) = get("$base/spectrogram.png");
is_error($st, $b, 404, 'the spectrogram before the runner ran');
ok(!$res->{headers}{etag} && !$res->{headers}{'cache-control'},
    'not cached');
like($b->{detail} // '', qr/not made yet/, 'it is not made yet');
($st, $b) = get("$base/waveform.json");
is_error($st, $b, 404, 'the waveform before the runner ran');
($st, $b) = get("$base/spectrogram.png?from_ms=0&to_ms=1000");
is_error($st, $b, 404, 'a window before the runner ran');

drain();
($st, $b) = get($base);
is($b->{status}, 'completed', 'the upload is transcoded');
my $objects = "$var/objects/$fac/uploads/$u->{id}";
ok(-s "$objects/spectrogram.png", 'the spectrogram is stored beside it');
ok(-s "$objects/peaks", 'so are the peaks');

# Row r from the top is (h - 1 - r) * nyquist / (h - 1) Hz; within a
# row, or within libsox's bin when drawn at fewer rows (1025 at most).
sub check_tone {
	my ($png, $name, $w, $h) = @_;
	my ($pw, $ph, $rows) = eval { png_rows($png) };
	ok(defined $rows, "$name: a PNG") or return diag $@;
	is("${pw}x$ph", "${w}x$h", "$name: ${w}x$h");
	my $bin = $rate / 2 / (($ph < 1025 ? $ph : 1025) - 1);
	my $hz = ($ph - 1 - brightest_row($rows)) * $rate / 2 / ($ph - 1);
	cmp_ok(abs($hz - 440), '<=', $bin,
	    "$name: the brightest row is 440 Hz within one bin ($hz Hz, "
	    . "bin $bin Hz)");
}

($st, undef, $res) = get("$base/spectrogram.png");
is($st, 200, 'the stored spectrogram: 200');
is($res->{headers}{'content-type'}, 'image/png', 'a PNG');
check_tone($res->{content}, 'the stored spectrogram', 1024, 257);
my $etag = $res->{headers}{etag};
like($etag // '', qr/^"[^"]+"$/, 'with an ETag');
like($res->{headers}{'cache-control'} // '', qr/immutable/,
    'cached for good');
($st, undef, $res) = get("$base/spectrogram.png",
	headers => {'If-None-Match' => $etag});
is($st, 304, 'If-None-Match with its ETag: 304');
is(length($res->{content} // ''), 0, 'without a body');

($st, undef, $res) = get("$base/spectrogram.png?from_ms=2000&to_ms=5000"
    . "&width=400&height=513");
is($st, 200, 'a window drawn on demand: 200');
check_tone($res->{content}, 'the window', 400, 513);
like($res->{headers}{etag} // '', qr/^"[^"]+"$/, 'with an ETag');
isnt($res->{headers}{etag}, $etag, 'not the stored one\'s');
($st, undef, $res) = get("$base/spectrogram.png?from_ms=11000"
    . "&to_ms=600000&height=129");
is($st, 200, 'a window past the end: 200, to the end');
check_tone($res->{content}, 'the last second', 1024, 129);

# Any height from 16 to 2048 (rows mapped from a 2^k + 1 drawing), and
# the log scale: 20 Hz at the bottom, the Nyquist frequency at the top.
($st, undef, $res) = get("$base/spectrogram.png?from_ms=2000&to_ms=5000"
    . "&width=400&height=300");
is($st, 200, 'a window 300 rows high: 200');
check_tone($res->{content}, 'the 300 rows', 400, 300);
my $linear = $res->{content};
($st, undef, $res) = get("$base/spectrogram.png?from_ms=2000&to_ms=5000"
    . "&width=400&height=300&scale=log");
is($st, 200, 'the same window on the log scale: 200');
{
	my ($pw, $ph, $rows) = eval { png_rows($res->{content}) };
	is(defined $rows ? "${pw}x$ph" : $@, '400x300', 'the log scale: 400x300');
	isnt($res->{content}, $linear, 'the log scale is not the linear one');
	# Row r from the top: 20 * (nyquist / 20)^((299 - r) / 299) Hz; a
	# row's step there, or libsox's bin (21.5 Hz), whichever is more.
	my $top = $rate / 2 / 20;
	my $hz = defined $rows
	    ? 20 * $top ** ((299 - brightest_row($rows)) / 299) : -1;
	my $tol = 440 * ($top ** (1 / 299) - 1);
	$tol = $rate / 2 / 1024 if $tol < $rate / 2 / 1024;
	cmp_ok(abs($hz - 440), '<=', $tol,
	    "the log scale: the brightest row is 440 Hz within $tol Hz "
	    . "($hz Hz)");
	# 440 Hz sits higher on the log scale than on the linear one.
	my (undef, undef, $lin) = eval { png_rows($linear) };
	cmp_ok(brightest_row($rows), '<', brightest_row($lin),
	    'the tone sits higher on the log scale');
	like($res->{headers}{etag} // '', qr/-log-/, 'its ETag names the scale');
}
($st, undef, $res) = get("$base/spectrogram.png?from_ms=0&to_ms=1000"
    . "&width=100&height=2048");
is($st, 200, 'the tallest window, 2048 rows: 200');
check_tone($res->{content}, 'the 2048 rows', 100, 2048);

for my $bad (['from_ms=0&to_ms=600001', 'more than 10 minutes'],
    ['from_ms=0&to_ms=1000&width=4097', 'wider than 4096'],
    ['from_ms=0&to_ms=1000&width=99', 'narrower than 100'],
    ['from_ms=0&to_ms=1000&height=2049', 'taller than 2048'],
    ['from_ms=0&to_ms=1000&height=15', 'lower than 16'],
    ['from_ms=0&to_ms=1000&scale=mel', 'a scale neither linear nor log'],
    ['scale=log', 'a scale and no window'],
    ['from_ms=1000', 'no to_ms'],
    ['from_ms=2000&to_ms=1000', 'to_ms before from_ms'],
    ['from_ms=12000&to_ms=13000', 'a window after the end'],
    ['from_ms=-1&to_ms=1000', 'a negative from_ms'],
    ['from_ms=x&to_ms=1000', 'a from_ms that is no number']) {
	($st, $b, $res) = get("$base/spectrogram.png?$bad->[0]");
	is_error($st, $b, 400, "a window with $bad->[1]");
	ok(!$res->{headers}{etag} && !$res->{headers}{'cache-control'},
	    "a window with $bad->[1]: not cached");
}

# --- the waveform ---
sub waveform {
	my ($query) = @_;
	my ($st, $w, $res) = get("$base/waveform.json$query");
	is($st, 200, "waveform.json$query: 200") or diag explain $w;
	is($res->{headers}{'content-length'}, length $res->{content},
	    "waveform.json$query: Content-Length is the body's");
	return $w;
}
my $frames = $rate * $secs;
for my $pps (50, 7, 200) {
	my $w = waveform("?pixels_per_second=$pps");
	my $spp = int($rate / $pps);
	is(join(',', map { "$_=$w->{$_}" } qw(version channels sample_rate
		samples_per_pixel bits)),
	    "version=2,channels=1,sample_rate=$rate,samples_per_pixel=$spp,"
	    . "bits=16", "$pps pixels/s: audiowaveform's fields");
	is($w->{length}, ceil($frames / $spp),
	    "$pps pixels/s: length is the duration at $spp samples/pixel");
	is(scalar @{$w->{data}}, 2 * $w->{length},
	    "$pps pixels/s: a min and a max per pixel");
	my @max = @{$w->{data}}[map { 2 * $_ + 1 } 0 .. $w->{length} - 1];
	my @min = @{$w->{data}}[map { 2 * $_ } 0 .. $w->{length} - 1];
	# vol 0.5 of full scale: 16384; both channels alike, so the mix too.
	my @off = grep { abs($max[$_] - 16384) > 400
		    || abs($min[$_] + 16384) > 400 } 0 .. $#max;
	is(scalar @off, 0, "$pps pixels/s: every pixel peaks at +-16384")
	    or diag "pixel $off[0]: $min[$off[0]] $max[$off[0]]";
}
my $w = waveform('');
is($w->{samples_per_pixel}, int($rate / 200),
    'no pixels_per_second: the stored resolution, 200 pixels/s');
$w = waveform('?pixels_per_second=10&bits=8');
is($w->{bits}, 8, 'bits=8');
ok(!grep({ $_ < -128 || $_ > 127 } @{$w->{data}}), 'values of 8 bits')
    and cmp_ok(abs($w->{data}[1] - 64), '<=', 2, 'half scale is 64');
($st, undef, $res) = get("$base/waveform.json?pixels_per_second=10");
my $wtag = $res->{headers}{etag};
($st) = get("$base/waveform.json?pixels_per_second=10",
	headers => {'If-None-Match' => $wtag});
is($st, 304, 'the waveform with its ETag: 304');
for my $bad (['pixels_per_second=201', 'finer than stored'],
    ['pixels_per_second=0', 'zero pixels per second'],
    ['pixels_per_second=-5', 'a negative resolution'],
    ['bits=12', 'bits=12']) {
	($st, $b) = get("$base/waveform.json?$bad->[0]");
	is_error($st, $b, 400, "the waveform with $bad->[1]");
}

# --- tenants ---
for my $path ("$base/spectrogram.png", "$base/waveform.json",
    "$base/spectrogram.png?from_ms=0&to_ms=1000") {
	($st, $b, $res) = get($path, token => $tb);
	is_error($st, $b, 403, "another facility's user: $path");
	unlike($res->{content}, qr/PNG|data/, 'nothing of it is shown');
	($st) = $p->req(GET => $path);
	is($st, 401, "no token: $path");
}

# --- a failed transcode ---
my $bad = upload('noise.wav', "RIFF this is not audio at all" x 10);
drain();
($st, $b) = get("/api/v1/uploads/$bad->{id}");
is($b->{status}, 'failed', 'a broken file fails its transcode');
for my $v ('spectrogram.png', 'waveform.json',
    'spectrogram.png?from_ms=0&to_ms=1000') {
	($st, $b) = get("/api/v1/uploads/$bad->{id}/$v");
	is_error($st, $b, 409, "$v of a failed transcode");
}

# --- gone with the upload ---
($st) = $p->req(DELETE => $base, token => $tu);
is($st, 204, 'the upload is deleted');
ok(!-e "$objects/spectrogram.png" && !-e "$objects/peaks",
    'its spectrogram and peaks are gone with it');
($st, $b) = get("$base/spectrogram.png");
is_error($st, $b, 404, 'the spectrogram of a deleted upload');

# --- a 2-hour recording: memory does not follow its length ---
# The runner's child on a 2-hour file (8 kHz mono) next to the 12-second
# tone: the same peak RSS; its peaks then serve a 2-hour waveform at the
# finest resolution (20 MB of JSON) from a FastCGI process whose peak RSS
# grows by far less than that.
sub vm {
	my ($pid, $field) = @_;
	open my $f, '<', "/proc/$pid/status" or return 0;
	while (my $line = <$f>) {
		return $1 if $line =~ /^\Q$field\E:\s+(\d+)/;
	}
	return 0;
}
sub uploads_hwm {
	my $prog = "$build/cgi-bin/uploads";
	my $max = 0;
	for my $d (glob '/proc/[0-9]*') {
		open my $f, '<', "$d/cmdline" or next;
		next unless ((split /\0/, <$f> // '')[0] // '') eq $prog;
		my ($pid) = $d =~ m{(\d+)$};
		my $hwm = vm($pid, 'VmHWM');
		$max = $hwm if $hwm > $max;
	}
	return $max;
}
sub child_rss {
	my ($file, $ms, $peaks) = @_;
	# An ASan build keeps freed blocks (its quarantine), which would
	# count as resident: not there.
	my $asan = join ':', grep { length } $ENV{ASAN_OPTIONS} // '',
	    'quarantine_size_mb=0';
	my ($rc, $out, $err) = run(['env', "ASAN_OPTIONS=$asan",
		'/usr/bin/time', '-f', 'RSS %M', $runner, '--spectro-sox',
		$file, 0, $ms, 1024, 257, 'linear', $peaks]);
	is($rc, 0, "the runner's child draws $file") or diag $err;
	return $err =~ /RSS (\d+)/ ? $1 : 0;
}
{
	my $long = upload('tone.wav', $wav);
	drain();
	my $two = "$dir/two.wav";
	my ($rc, undef, $err) = run(['sox', '-n', '-r', '8000', '-b', '16',
		'-c', '1', $two, 'synth', '7200', 'sine', '440', 'vol', '0.5']);
	is($rc, 0, 'sox makes 2 hours of tone') or diag $err;
	($rc, undef, $err) = run(['sox', '-n', '-r', '8000', '-c', '1',
		"$dir/short.wav", 'synth', '12', 'sine', '440']);
	is($rc, 0, 'and 12 seconds') or diag $err;
	my $short_rss = child_rss("$dir/short.wav", 12000, "$dir/short.peaks");
	my $obj = "$var/objects/$fac/uploads/$long->{id}/peaks";
	my $long_rss = child_rss($two, 7200000, "$dir/two.peaks");
	cmp_ok($long_rss, '<', $short_rss + 4096,
	    "the child's peak RSS for 2 hours ($long_rss KiB) is that for 12 s "
	    . "($short_rss KiB)");
	unlink $two;
	# The 2-hour peaks in place of the tone's.
	my ($c) = run(['cp', "$dir/two.peaks", $obj]);
	is($c, 0, 'the 2-hour peaks are the upload\'s');
	my $before = uploads_hwm();
	my ($st, undef, $res) = get("/api/v1/uploads/$long->{id}/waveform.json"
	    . '?pixels_per_second=200');
	is($st, 200, 'the 2-hour waveform at 200 pixels/s: 200');
	my $frames = 7200 * 8000;
	my ($len) = ($res->{content} // '') =~ /"length":(\d+)/;
	is($len, ceil($frames / 40), 'its length is 2 hours at 40 samples '
	    . 'per pixel');
	is(($res->{content} =~ tr/,//), 2 * $len - 1 + 6,
	    'with a min and a max per pixel');
	my $size = length $res->{content};
	my $grew = uploads_hwm() - $before;
	cmp_ok($grew * 1024, '<', $size / 4, "the FastCGI peak RSS grew by "
	    . "$grew KiB for $size bytes of JSON");
}

# --- the same with the S3 store: a window is drawn from a copy ---
my $s3 = Xmhub::S3->start;
$p = Xmhub::Platform->start;
$s = $p->stack;
$s->restart(env => {$s3->env});
ok($s->stop_daemon('transcode'), 's3: the stack runner is stopped');
$fac = $p->facility('Visual S3');
$tu = $p->token($p->user('user', $fac));
$key = $p->api_key($p->token($p->user('facility_admin', $fac)), 'upload');
$u = upload('tone.wav', $wav);
$base = "/api/v1/uploads/$u->{id}";
drain();
ok(!-e $s->var . "/objects/$fac", 's3: nothing in the filesystem store');
($st, undef, $res) = get("$base/spectrogram.png");
is($st, 200, 's3: the stored spectrogram: 200');
check_tone($res->{content}, 's3: the stored spectrogram', 1024, 257);
($st, undef, $res) = get("$base/spectrogram.png?from_ms=1000&to_ms=3000"
    . "&width=200&height=1025");
is($st, 200, 's3: a window: 200');
check_tone($res->{content}, 's3: the window', 200, 1025);
$w = waveform('?pixels_per_second=25');
is($w->{length}, ceil($frames / int($rate / 25)),
    's3: the waveform\'s length');
($st) = $p->req(DELETE => $base, token => $tu);
is($st, 204, 's3: the upload is deleted');
($st, $b) = get("$base/waveform.json");
is_error($st, $b, 404, 's3: the waveform of a deleted upload');

done_testing;
