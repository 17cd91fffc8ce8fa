#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Transcoding and streaming end to end (the transcode-jobs and streams
# endpoints; doc/transcoding.md, doc/streams.md): real inputs made here with sox
# and ffmpeg, uploaded through the API, transcoded by the runner (the stack's
# --loop daemon, or runners started here), read back through /api/v1/streams
# with Range.
use strict;
use warnings;
use File::Temp qw(tempdir);
use HTTP::Tiny;
use JSON::PP;
use POSIX qw(WNOHANG);
use Test::More;
use Time::HiRes qw(sleep time);
use Xmhub::Platform qw(keys_of is_error);
use Xmhub::S3;
use Xmhub::Test qw(run);

# Short waits: failed runs come back after 1 s (then 2 s), a runner
# that stops beating loses its job after 4 s.
my %ENV_SHORT = (XMHUB_TRANSCODE_BACKOFF => 1, XMHUB_TRANSCODE_LEASE => 4);
my $build = $ENV{XMHUB_BUILDDIR};
my $runner = "$build/jobs/xmhub-transcode";
my $dir = tempdir(CLEANUP => 1);
chmod 0755, $dir;

# The platform the helpers below talk to: a stack with %env, two
# facilities, their people and an upload key of the first.
my ($p, $s, $var, $fac, $other, $ta, $tu, $tb, $ts, $k, $key, $s3);
sub platform {
	my (%env) = @_;
	$p = Xmhub::Platform->start;
	$s = $p->stack;
	$s->restart(env => {%ENV_SHORT, %env});
	$var = $s->var;
	$fac = $p->facility('Transcode A');
	$other = $p->facility('Transcode B');
	($ta, $tu, $tb, $ts) = map { $p->token($_) }
	    $p->user('facility_admin', $fac), $p->user('user', $fac),
	    $p->user('facility_admin', $other), $p->user('super_admin', undef);
	(my $st, $k) = $p->req(POST => '/api/v1/api-keys', token => $ta,
		json => {name => 'recorder', scopes => ['upload']});
	is($st, 200, 'an upload key') or diag explain $k;
	$key = $k->{key};
}
platform();

my $JOB = 'attempts,completed_at,error_message,facility_id,id,max_attempts,'
    . 'output_duration_ms,output_size_bytes,queued_at,started_at,status,'
    . 'target_bitrate,target_codec,target_container,target_format,'
    . 'target_sample_rate,upload_id,worker_id';
my $NOBODY = '00000000-0000-4000-8000-000000000000';

sub sh {
	my ($st, $out, $err) = run([@_]);
	die "@_: exit $st\n$err" if $st != 0;
	return $out;
}

sub slurp {
	my ($path) = @_;
	open my $f, '<:raw', $path or die "$path: $!";
	local $/;
	return scalar <$f>;
}

sub spew {
	my ($path, $data) = @_;
	open my $f, '>:raw', $path or die "$path: $!";
	print $f $data;
	close $f or die "$path: $!";
}

# ffprobe's key=value answer about a file.
sub ffprobe {
	my ($path) = @_;
	my ($st, $out, $err) = run(['ffprobe', '-v', 'error',
		'-show_entries',
		'format=format_name,duration:stream=codec_name,codec_type',
		'-of', 'default=nw=1', $path]);
	diag "ffprobe: $err" if $st != 0;
	my %h;
	for (split /\n/, $out) {
		$h{$1} //= $2 if /^(\w+)=(.*)$/;
	}
	return \%h;
}

sub get_upload {
	my ($id) = @_;
	return $p->req(GET => "/api/v1/uploads/$id", token => $tu);
}

# POST /api/v1/uploads with one file part; the Upload.
sub upload {
	my ($name, $data) = @_;
	my $b = 'xmhub-test-' . int(rand(1e9));
	my $body = "--$b\r\nContent-Disposition: form-data; name=\"file\"; "
	    . "filename=\"$name\"\r\nContent-Type: application/octet-stream"
	    . "\r\n\r\n$data\r\n--$b--\r\n";
	my ($st, $u) = $p->req(POST => '/api/v1/uploads', key => $key,
		body => $body,
		headers => {'Content-Type' => "multipart/form-data; boundary=$b"});
	is($st, 200, "upload $name: 200") or diag explain $u;
	return $u;
}

# The newest job of an upload.
sub job_of {
	my ($upload) = @_;
	return $p->sql("SELECT id FROM transcode_jobs WHERE upload_id = "
		    . "'$upload' ORDER BY queued_at DESC, id LIMIT 1");
}

sub get_job {
	my ($id, $token) = @_;
	return $p->req(GET => "/api/v1/transcode-jobs/$id",
		token => $token // $tu);
}

# Polls job $id until it ends (or $want); the job.
sub wait_job {
	my ($id, $want, $limit) = @_;
	my $end = time + ($limit // 180);
	my $j;
	while (time < $end) {
		(my $st, $j) = get_job($id);
		return $j if $st == 200 && ($want ? $j->{status} eq $want
			: $j->{status} =~ /^(completed|failed|cancelled)$/);
		sleep 0.2;
	}
	diag "job $id: still $j->{status} after the wait";
	return $j;
}

sub cancel {
	my ($id, $token) = @_;
	return $p->req(POST => "/api/v1/transcode-jobs/$id/cancel",
		token => $token);
}

sub stream {
	my ($upload, %opt) = @_;
	return $p->req(GET => "/api/v1/streams/$upload",
		token => $opt{token} // $tu, headers => $opt{headers} // {});
}

# --- inputs made here ---
my %in;
sub make {
	my ($name, @cmd) = @_;
	sh(@cmd);
	$in{$name} = slurp("$dir/$name");
}
make('s16-mono.wav', qw(sox -n -r 44100 -b 16 -c 1), "$dir/s16-mono.wav",
    qw(synth 3.2 sine 440));
make('s16-stereo.wav', qw(sox -n -r 44100 -b 16 -c 2), "$dir/s16-stereo.wav",
    qw(synth 2.5 sine 440 sine 660));
make('s24-mono.wav', qw(sox -n -r 44100 -b 24 -c 1), "$dir/s24-mono.wav",
    qw(synth 1.75 sine 300));
make('s24-stereo.wav', qw(sox -n -r 44100 -b 24 -c 2),
    "$dir/s24-stereo.wav", qw(synth 2.0 sine 500));
make('tone.flac', qw(sox -n -r 44100 -b 16 -c 2), "$dir/tone.flac",
    qw(synth 4.0 pinknoise));
make('tone.mp3', 'ffmpeg', '-v', 'error', '-y', '-i', "$dir/s16-stereo.wav",
    '-c:a', 'libmp3lame', '-b:a', '128k', "$dir/tone.mp3");
make('r48k.wav', qw(sox -n -r 48000 -b 16 -c 2), "$dir/r48k.wav",
    qw(synth 3.0 sine 1000));
make('long.wav', qw(sox -n -r 44100 -b 16 -c 2), "$dir/long.wav",
    qw(synth 600 brownnoise));
$in{'empty.wav'} = '';
$in{'text.wav'} = "This is not audio at all.\n" x 40;
$in{'cut.wav'} = substr($in{'s16-stereo.wav'}, 0,
    int(length($in{'s16-stereo.wav'}) / 3));
# A stereo WAV whose header was damaged to say 9 channels: libsox reads
# it, ffmpeg's Opus encoder refuses it with a line naming its heap
# address ("[libopus @ 0x...]").
{
	my $d = $in{'s16-stereo.wav'};
	substr($d, 22, 2) = pack('v', 9);
	substr($d, 28, 4) = pack('V', 44100 * 18);
	substr($d, 32, 2) = pack('v', 18);
	$in{'ch9.wav'} = $d;
}

my @good = (
	# name, duration ms, rate, channels, bit depth, codec
	['s16-mono.wav', 3200, 44100, 1, 16, 'pcm_s16le'],
	['s16-stereo.wav', 2500, 44100, 2, 16, 'pcm_s16le'],
	['s24-mono.wav', 1750, 44100, 1, 24, 'pcm_s24le'],
	['s24-stereo.wav', 2000, 44100, 2, 24, 'pcm_s24le'],
	['tone.flac', 4000, 44100, 2, 16, 'flac'],
	['tone.mp3', 2500, 44100, 2, undef, 'mp3'],
	['r48k.wav', 3000, 48000, 2, 16, 'pcm_s16le'],
	['long.wav', 600000, 44100, 2, 16, 'pcm_s16le'],
);
# An HLS playlist named .wav whose segment is a local file the runner's
# user can read: ffprobe and ffmpeg would follow it (and so read any such
# file) unless they are held to audio containers.
{
	my $seg = tempdir(CLEANUP => 1);
	chmod 0755, $seg;
	sh('ffmpeg', '-v', 'error', '-y', '-i', "$dir/s16-mono.wav",
	    '-c:a', 'aac', "$seg/local.aac");
	chmod 0644, "$seg/local.aac";
	$in{'playlist.wav'} = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n"
	    . "#EXTINF:3.2,\n$seg/local.aac\n#EXT-X-ENDLIST\n";
}
# A WAV of 100 Hz: under the sample rates a job takes (JOBS_RATE_MIN),
# as a 1 Hz one that would make hours of output from a few bytes.
{
	my $data = pack('v*', map { int(1000 * sin($_ / 5)) } 0 .. 199);
	$in{'r100.wav'} = 'RIFF' . pack('V', 36 + length $data) . 'WAVEfmt '
	    . pack('VvvVVvv', 16, 1, 1, 100, 200, 2, 16) . 'data'
	    . pack('V', length $data) . $data;
}
my @bad = qw(empty.wav text.wav cut.wav ch9.wav playlist.wav r100.wav);

my (%upload, %job);
for my $name ((map { $_->[0] } @good), @bad) {
	my $u = upload($name, $in{$name});
	$upload{$name} = $u->{id};
	$job{$name} = job_of($u->{id});
	like($job{$name}, qr/^[0-9a-f-]{36}$/, "$name: a job was queued");
}

# --- good inputs ---
for my $g (@good) {
	my ($name, $ms, $rate, $ch, $bits, $codec) = @$g;
	my $j = wait_job($job{$name}, undef, 600);
	is($j->{status}, 'completed', "$name: completed")
	    or diag explain $j;
	is(keys_of($j), $JOB, "$name: exactly the job fields");
	is($j->{attempts}, 1, "$name: one attempt");
	is($j->{error_message}, undef, "$name: no error");
	is_deeply([@$j{qw(target_format target_codec target_container
		target_bitrate)}], ['webm', 'opus', 'webm', '128k'],
	    "$name: the default target");
	like($j->{worker_id}, qr/^.+:\d+$/, "$name: worker_id host:pid");
	ok(defined $j->{started_at} && defined $j->{completed_at},
	    "$name: started and completed");
	my ($st, $u) = get_upload($upload{$name});
	is($u->{status}, 'completed', "$name: the upload is completed");
	ok(abs($u->{duration_ms} - $ms) <= 50,
	    "$name: duration_ms $u->{duration_ms} within 50 ms of $ms");
	is($u->{sample_rate_hz}, $rate, "$name: sample_rate_hz");
	is($u->{channels}, $ch, "$name: channels");
	is($u->{bit_depth}, $bits, "$name: bit_depth");
	is($u->{codec}, $codec, "$name: codec");

	($st, undef, my $res) = stream($upload{$name});
	is($st, 200, "$name: stream 200");
	is($res->{headers}{'content-type'}, 'audio/webm',
	    "$name: stream Content-Type");
	is($res->{headers}{'cache-control'}, 'private, max-age=3600',
	    "$name: stream Cache-Control");
	is($res->{headers}{'accept-ranges'}, 'bytes',
	    "$name: stream Accept-Ranges");
	is(length($res->{content}), $j->{output_size_bytes},
	    "$name: output_size_bytes is the stream's length");
	spew("$dir/out.webm", $res->{content});
	my $f = ffprobe("$dir/out.webm");
	is($f->{codec_name}, 'opus', "$name: the stream is Opus");
	like($f->{format_name}, qr/\bwebm\b/, "$name: in WebM");
	ok(abs($f->{duration} * 1000 - $ms) <= 50,
	    "$name: stream duration $f->{duration} s within 50 ms");
	ok(abs($j->{output_duration_ms} - $ms) <= 50,
	    "$name: output_duration_ms within 50 ms");
}

# --- bad inputs: failed after max_attempts, with a reason ---
# (one attempt for those the probe refuses: another can not change it)
my %refused = ('r100.wav' => 1);
for my $name (@bad) {
	my $j = wait_job($job{$name}, undef, 120);
	is($j->{status}, 'failed', "$name: failed") or diag explain $j;
	is($j->{attempts}, $refused{$name} ? 1 : 3,
	    "$name: after " . ($refused{$name} ? 1 : 3) . " attempts");
	is($j->{max_attempts}, 3, "$name: max_attempts 3");
	ok(defined $j->{error_message} && length $j->{error_message},
	    "$name: error_message") and note "$name: $j->{error_message}";
	unlike($j->{error_message} // '', qr{/tmp|\Q$var\E|xmhub-transcode-},
	    "$name: no server path in error_message");
	unlike($j->{error_message} // '', qr{(?:^|[\s'"(=:])/\w},
	    "$name: no filesystem path at all in error_message");
	unlike($j->{error_message} // '', qr/0x/i,
	    "$name: no 0x address in error_message");
	ok(length($j->{error_message} // '') <= 1000,
	    "$name: error_message bounded");
	my ($st, $u) = get_upload($upload{$name});
	is($u->{status}, 'failed', "$name: the upload is failed");
	is_error(stream($upload{$name}), 404, "$name: no stream");
}
{
	my (undef, $j) = get_job($job{'cut.wav'});
	like($j->{error_message}, qr/truncated/,
	    'cut WAV: the message says truncated');
	(undef, $j) = get_job($job{'ch9.wav'});
	like($j->{error_message}, qr/^ffmpeg: libopus: .*\b9 channels/,
	    "9-channel header: ffmpeg's reason, its component named")
	    or diag $j->{error_message};
	# The raw stderr, addresses and all, is the runner's log's only.
	my $log = slurp("$var/log/transcode.log");
	like($log, qr/job \Q$job{'ch9.wav'}\E ffmpeg: \[libopus \@ 0x[0-9a-f]+\]/,
	    "9-channel header: ffmpeg's raw stderr is in the runner's log");
	(undef, $j) = get_job($job{'r100.wav'});
	is($j->{error_message}, 'the sample rate 100 Hz is outside 1000 to '
	    . '768000 Hz', '100 Hz WAV: refused at probe time, saying why');
}

# --- Range ---
# check_ranges($upload, $label): the Range answers of a stream, against
# its whole body.
sub check_ranges {
	my ($upload, $label) = @_;
	my ($st, undef, $res) = stream($upload);
	my $all = $res->{content};
	my $size = length $all;
	ok($size > 1000, "$label: a stream of $size bytes");
	($st, undef, $res) = stream(uc $upload);
	ok($st == 200 && $res->{content} eq $all,
	    "$label: the same stream by the id in capitals");
	for my $r ([100, 199], [0, 0], [$size - 10, $size - 1],
		[1000, $size + 5000]) {
		my ($a, $b) = @$r;
		my $h = "bytes=$a-$b";
		($st, undef, $res) = stream($upload,
			headers => {Range => $h});
		$b = $size - 1 if $b >= $size;
		is($st, 206, "$label: $h: 206");
		is($res->{headers}{'content-range'}, "bytes $a-$b/$size",
		    "$label: $h: Content-Range");
		ok($res->{content} eq substr($all, $a, $b - $a + 1),
		    "$label: $h: the bytes of the slice");
		is($res->{headers}{'content-type'}, $label =~ /mp4/
		    ? 'audio/mp4' : 'audio/webm', "$label: $h: Content-Type");
	}
	($st, undef, $res) = stream($upload, headers => {Range => 'bytes=500-'});
	is($st, 206, "$label: open range: 206");
	ok($res->{content} eq substr($all, 500), "$label: open range: the rest");
	is($res->{headers}{'content-range'}, "bytes 500-" . ($size - 1)
	    . "/$size", "$label: open range: Content-Range");
	($st, undef, $res) = stream($upload, headers => {Range => 'bytes=-300'});
	is($st, 206, "$label: suffix range: 206");
	ok($res->{content} eq substr($all, -300),
	    "$label: suffix range: the last 300 bytes");
	is($res->{headers}{'content-range'}, "bytes " . ($size - 300) . '-'
	    . ($size - 1) . "/$size", "$label: suffix range: Content-Range");
	for my $h ("bytes=$size-", 'bytes=' . ($size + 10) . '-' . ($size + 20),
		'bytes=9-0', 'bytes=abc', 'bytes=-0') {
		($st, undef, $res) = stream($upload, headers => {Range => $h});
		is($st, 416, "$label: $h: 416");
		is($res->{headers}{'content-range'}, "bytes */$size",
		    "$label: $h: Content-Range bytes */size");
	}
	($st, undef, $res) = stream($upload,
		headers => {Range => 'bytes=0-1,500-599'});
	# lighttpd's own answer, as for a static file.
	like($st, qr/^20[06]$/, "$label: several ranges: $st");
	($st, undef, $res) = stream($upload, headers => {Range => 'items=1-2'});
	is($st, 200, "$label: another unit: 200, the whole");
	ok($res->{content} eq $all, "$label: another unit: every byte");
}
check_ranges($upload{'s16-stereo.wav'}, 'filesystem');

# --- the transcode-jobs endpoints ---
{
	my ($st, $l) = $p->req(GET => '/api/v1/transcode-jobs', token => $tu);
	is($st, 200, 'list: 200');
	is(keys_of($l), 'items,page,per_page,total', 'list: the envelope');
	my $n = $p->sql("SELECT count(*) FROM transcode_jobs WHERE "
		    . "facility_id = '$fac'");
	is($l->{total}, $n, "list: total is the facility's $n jobs");
	is($l->{page}, 1, 'list: page 1 by default');
	is($l->{per_page}, 20, 'list: 20 per page by default');
	is(scalar @{$l->{items}}, $n < 20 ? $n : 20, 'list: one page');
	is(keys_of($l->{items}[0]), $JOB, 'list: items are jobs');
	my @ids = split /\n/, $p->sql("SELECT id FROM transcode_jobs WHERE "
		    . "facility_id = '$fac' ORDER BY queued_at DESC, id");
	($st, $l) = $p->req(GET => '/api/v1/transcode-jobs?page=2&per_page=3',
		token => $tu);
	is_deeply([map { $_->{id} } @{$l->{items}}], [@ids[3 .. 5]],
	    'list: page 2 of 3, newest first');
	is($l->{per_page}, 3, 'list: per_page as asked');
	($st, $l) = $p->req(GET => '/api/v1/transcode-jobs?status=failed',
		token => $tu);
	is($l->{total}, scalar @bad, 'list: status=failed: the bad inputs');
	is_deeply([sort map { $_->{id} } @{$l->{items}}],
	    [sort map { $job{$_} } @bad], 'list: status=failed: those jobs');
	for my $q ('page=0', 'page=x', 'per_page=0', 'per_page=101',
		'status=done', 'page=1.5') {
		is_error($p->req(GET => "/api/v1/transcode-jobs?$q",
			token => $tu), 400, "list ?$q");
	}
	($st, $l) = $p->req(GET => '/api/v1/transcode-jobs', token => $tb);
	is($l->{total}, 0, "list: another facility's admin sees none of them");
	($st, $l) = $p->req(GET => '/api/v1/transcode-jobs?per_page=100',
		token => $ts);
	is($l->{total}, $n, 'list: a super_admin sees every facility');
	($st, $l) = $p->req(GET =>
		"/api/v1/transcode-jobs?facility_id=$other", token => $ts);
	is($l->{total}, 0, 'list: a super_admin filters by facility');
	is_error($p->req(GET => '/api/v1/transcode-jobs?facility_id=x',
		token => $ts), 400, 'list: facility_id not a UUID');
	my $up = $upload{'s16-mono.wav'};
	($st, $l) = $p->req(GET => "/api/v1/transcode-jobs?upload_id=$up",
		token => $tu);
	is($st, 200, 'list ?upload_id: 200');
	is_deeply([map { $_->{id} } @{$l->{items}}],
	    [split /\n/, $p->sql("SELECT id FROM transcode_jobs WHERE "
		. "upload_id = '$up' ORDER BY queued_at DESC, id")],
	    "list ?upload_id: that upload's jobs, newest first");
	is($l->{total}, $p->sql("SELECT count(*) FROM transcode_jobs WHERE "
		. "upload_id = '$up'"), 'list ?upload_id: total counts them only');
	ok(!grep({ $_->{upload_id} ne $up } @{$l->{items}}),
	    'list ?upload_id: no job of another upload');
	($st, $l) = $p->req(GET => '/api/v1/transcode-jobs?upload_id='
		. uc($up) . '&status=failed', token => $tu);
	is($l->{total}, 0, 'list ?upload_id (upper case) with status: '
		. 'combined');
	($st, $l) = $p->req(GET => "/api/v1/transcode-jobs?upload_id=$up",
		token => $tb);
	is($l->{total}, 0, "list ?upload_id: another facility's admin sees "
		. 'none');
	for my $q ('upload_id=x', 'upload_id=', "upload_id=${up}0") {
		is_error($p->req(GET => "/api/v1/transcode-jobs?$q",
			token => $tu), 400, "list ?$q");
	}
	is_error($p->req(GET => '/api/v1/transcode-jobs'), 401,
	    'list without a token');

	my $id = $job{'s16-mono.wav'};
	($st, my $j) = get_job($id);
	is($st, 200, 'get: 200');
	is($j->{id}, $id, 'get: the job');
	is_error(get_job($id, $tb), 403, "get: another facility's job");
	is((get_job($id, $ts))[0], 200, 'get: a super_admin');
	is_error(get_job($NOBODY), 404, 'get: unknown job');
	is_error(get_job('x'), 400, 'get: id not a UUID');
	is_error($p->req(GET => "/api/v1/transcode-jobs/$id"), 401,
	    'get without a token');
	is_error($p->req(DELETE => "/api/v1/transcode-jobs/$id",
		token => $ta), 405, 'DELETE a job');
	is_error(cancel($id, $ta), 409, 'cancel a completed job');
	is_error(cancel($id, $tu), 403, 'a user cancels');
	is_error(cancel($id, $tb), 403, "cancel another facility's job");
	is_error(cancel($NOBODY, $ta), 404, 'cancel an unknown job');
	is_error(cancel($id, undef), 401, 'cancel without a token');
	is((get_job($id))[1]{status}, 'completed',
	    'the refused cancels changed nothing');

	my $u = $upload{'s16-mono.wav'};
	is_error(stream($u, token => $tb), 403,
	    "stream of another facility's upload");
	is((stream($u, token => $ts))[0], 200, 'stream: a super_admin');
	is_error(stream($NOBODY), 404, 'stream of an unknown upload');
	is_error(stream('x'), 400, 'stream: id not a UUID');
	is_error($p->req(GET => "/api/v1/streams/$u"), 401,
	    'stream without a token');
}

# --- runners started here ---
# The stack's --loop daemon is stopped for what follows, so that only
# the runners started here take jobs; through the stack, so that its
# supervisor does not start it again.
sub daemon_stop {
	ok($s->stop_daemon('transcode'), 'the stack runner stopped');
}

# The runners started here keep their temporary directories in $tmp.
my $tmp = "$dir/tmp";
mkdir $tmp or die "$tmp: $!";
chown((getpwnam('xmhub'))[2, 3], $tmp) if $> == 0;

my %runners; # fork pid => 1
sub runner_start {
	my (@args) = @_;
	my @cmd = ('env', 'XMHUB_ENV_FILE=' . $s->env_file, "TMPDIR=$tmp",
		$runner, @args);
	@cmd = ('runuser', '-u', 'xmhub', '--', @cmd) if $> == 0;
	my $pid = fork // die "fork: $!";
	if ($pid == 0) {
		open STDIN, '<', '/dev/null';
		open STDOUT, '>>', "$dir/runners.log";
		open STDERR, '>&', \*STDOUT;
		exec @cmd or die "exec: $!";
	}
	$runners{$pid} = 1;
	return $pid;
}

# Waits for a runner started here to exit; its exit status.
sub runner_wait {
	my ($pid, $limit) = @_;
	my $end = time + ($limit // 300);
	while (time < $end) {
		if (waitpid($pid, WNOHANG) == $pid) {
			delete $runners{$pid};
			return $? >> 8;
		}
		sleep 0.1;
	}
	return -1;
}

sub runner_stop {
	my ($pid) = @_;
	kill 'TERM', $pid;
	return runner_wait($pid, 60);
}

END { kill 'KILL', $_ for keys %runners }

# The pids of the ffmpeg processes whose parent is $ppid.
sub ffmpeg_of {
	my ($ppid) = @_;
	my @pids;
	for my $st (glob '/proc/[0-9]*/stat') {
		open my $f, '<', $st or next;
		my $line = <$f> // next;
		push @pids, $1 if $line =~ /^(\d+) \(ffmpeg\) \S+ (\d+) /
		    && $2 == $ppid;
	}
	return @pids;
}

# A process that runs (a zombie does not: whoever reaps orphans here may
# take a while).
sub alive {
	my ($pid) = @_;
	open my $f, '<', "/proc/$pid/stat" or return 0;
	my $line = <$f> // return 0;
	return $line !~ /^\d+ \(.*\) Z /;
}

# The NUL-separated words of /proc/PID/FILE (cmdline, environ).
sub proc_words {
	my ($pid, $file) = @_;
	open my $f, '<:raw', "/proc/$pid/$file" or return ();
	local $/;
	return split /\0/, scalar(<$f>) // '';
}

# The running ffmpeg processes whose command line names a file in $d.
sub ffmpeg_in {
	my ($d) = @_;
	my @pids;
	for my $p (map { m{^/proc/(\d+)$} ? $1 : () } glob '/proc/[0-9]*') {
		my @w = proc_words($p, 'cmdline');
		push @pids, $p if @w && $w[0] eq 'ffmpeg' && alive($p)
		    && grep { index($_, "$d/") == 0 } @w;
	}
	return @pids;
}

# Waits until job $id runs and its ffmpeg is there; the runner's pid
# (from worker_id host:pid) and ffmpeg's.
sub wait_ffmpeg {
	my ($id) = @_;
	my $end = time + 120;
	while (time < $end) {
		my (undef, $j) = get_job($id);
		if ($j->{status} eq 'running'
		    && ($j->{worker_id} // '') =~ /:(\d+)$/) {
			my $rp = $1;
			my @f = ffmpeg_of($rp);
			return ($rp, $f[0], $j) if @f;
		}
		sleep 0.05;
	}
	return;
}

sub retranscode {
	my ($upload) = @_;
	my ($st, $r) = $p->req(POST => "/api/v1/uploads/$upload/retranscode",
		token => $tu);
	is($st, 200, 'retranscode: 200') or diag explain $r;
	is(keys_of($r), 'job_id', 'retranscode: the job_id');
	return $r->{job_id};
}

daemon_stop();

# Cancel of a queued job: it never runs.
my $long = $upload{'long.wav'};
my $q = retranscode($long);
isnt($q, $job{'long.wav'}, 'retranscode: a new job');
is((get_job($q))[1]{status}, 'queued', 'the new job is queued');
is((cancel($q, $ta))[0], 204, 'cancel a queued job: 204');
is((get_job($q))[1]{status}, 'cancelled', 'the queued job is cancelled');
is_error(cancel($q, $ta), 409, 'cancel it again');
is(runner_wait(runner_start('--drain'), 120), 0, 'a drain with nothing to do');
is((get_job($q))[1]{status}, 'cancelled', 'the cancelled job did not run');
is((get_upload($long))[1]{status},
    'completed', 'the upload keeps its completed transcode');

# Cancel of a running job: its ffmpeg is gone within seconds.
my $loop = runner_start('--loop');
my $c = retranscode($long);
my ($rpid, $fpid) = wait_ffmpeg($c);
ok($fpid, "the job runs, ffmpeg $fpid") or BAIL_OUT('no running ffmpeg');
is((cancel($c, $ta))[0], 204, 'cancel a running job: 204');
{
	my $end = time + 10;
	sleep 0.05 while alive($fpid) && time < $end;
}
ok(!alive($fpid), 'its ffmpeg is gone within 10 s');
my ($st2, $cj) = get_job($c);
is($cj->{status}, 'cancelled', 'the running job is cancelled');
ok(defined $cj->{completed_at}, 'cancelled: completed_at set');
is_error(cancel($c, $ta), 409, 'cancel the cancelled job again');
sleep 1; # the runner has had its heartbeat and moved on
is((get_job($c))[1]{status}, 'cancelled', 'the runner did not undo it');
is((stream($long))[0], 200, 'the earlier transcode still streams');

# Retranscode: a new job completes and becomes the stream.
my $r = retranscode($upload{'s16-stereo.wav'});
my $rj = wait_job($r);
is($rj->{status}, 'completed', 'retranscode: completed');
like($p->sql("SELECT string_agg(status, ',' ORDER BY queued_at) FROM "
	    . "transcode_jobs WHERE upload_id = '$upload{'s16-stereo.wav'}'"),
    qr/^completed,completed$/, 'retranscode: two completed jobs');
is(runner_stop($loop), 0, 'SIGTERM: the loop runner exits 0');

# kill -9 of a runner mid-transcode: its ffmpeg dies with it, the next
# runner removes its temporary directory when it starts, takes the job
# back after the lease without counting the lost run as an attempt, and
# completes it.
my $kj = retranscode($long);
my $victim = runner_start('--loop');
my ($kpid, $kff) = wait_ffmpeg($kj);
ok($kpid, "runner $kpid transcodes") or BAIL_OUT('no running ffmpeg');
my ($kin) = grep { m{/input$} } proc_words($kff, 'cmdline');
(my $kdir = $kin // '') =~ s{/input$}{};
like($kdir, qr{^\Q$tmp\E/xmhub-transcode-run-\w{6}$},
    "its ffmpeg works in $kdir");
{
	my @env = proc_words($kff, 'environ');
	ok(scalar(grep { /^PATH=/ } @env), "ffmpeg's environment is readable");
	is(join(' ', grep { !/^(PATH|LANG|LC_\w+)=/ } @env), '',
	    "ffmpeg's environment is PATH and the locale only");
	ok(!grep({ /^(XMHUB_|FACE_API_)/ } @env),
	    'no XMHUB_* or FACE_API_* variable (database URL, keys) in it');
	# Whatever the input's header claims, ffmpeg stops at the setting's
	# length (24 h) and at twice its bitrate's bytes for it.
	# Confined by lib/core/child's trampoline: no socket, bounded.
	like(slurp("/proc/$kff/status"), qr/^Seccomp:\s+2$/m,
	    'ffmpeg runs under a seccomp filter');
	my $limits = slurp("/proc/$kff/limits");
	like($limits, qr/^Max address space\s+8589934592 /m,
	    'ffmpeg: 8 GiB of address space');
	like($limits, qr/^Max open files\s+256 /m, 'ffmpeg: 256 files');
	my $fs = 128000 / 8 * 2 * 86400 + 1048576;
	like(join(' ', proc_words($kff, 'cmdline')),
	    qr/ -t 86400 -fs $fs -f webm /,
	    'ffmpeg: -t XMHUB_TRANSCODE_MAX_SECONDS and -fs');
}
kill 'KILL', $kpid;
runner_wait($victim, 30);
{
	my $end = time + 5;
	sleep 0.05 while (alive($kff) || ffmpeg_in($kdir)) && time < $end;
}
ok(!alive($kff), 'its ffmpeg died with it');
is(scalar(ffmpeg_in($kdir)), 0, 'no ffmpeg of the job is left (/proc)');
ok(-d $kdir, 'its temporary directory is left behind');
is($p->sql("SELECT status || ' ' || attempts FROM transcode_jobs WHERE id "
	    . "= '$kj'"), 'running 1', 'the job is still running, attempt 1');
my $rescuer = runner_start('--loop', '--worker-id', 'rescuer');
{
	my $end = time + 10;
	sleep 0.05 while -d $kdir && time < $end;
}
ok(!-d $kdir, 'the next runner removed it when it started');
my $kd = wait_job($kj, 'completed', 300);
is($kd->{status}, 'completed', 'the job completed after the lease');
is($kd->{worker_id}, 'rescuer', 'on the other runner');
is($kd->{attempts}, 1, 'the lost run is not counted as an attempt');
is($p->sql("SELECT lost_runs FROM transcode_jobs WHERE id = '$kj'"), 1,
    'it is counted as a lost run');
ok(abs($kd->{output_duration_ms} - 600000) <= 50,
    'the output is whole');
is(runner_stop($rescuer), 0, 'the rescuer stops');
like(slurp("$dir/runners.log"),
    qr/removed \Q$kdir\E, left by a runner that died/,
    'the rescuer said so in its log');

# A job whose runner is lost a third time fails (an input that crashes
# the runner must not take runners down forever); its attempts stay.
{
	my $lj = retranscode($upload{'s16-mono.wav'});
	$p->sql("UPDATE transcode_jobs SET status = 'running', worker_id = "
	    . "'ghost:1', attempts = 1, lost_runs = 2, heartbeat_at = now() - "
	    . "interval '1 hour' WHERE id = '$lj'");
	is(runner_wait(runner_start('--drain'), 120), 0,
	    'a drain finds a job lost twice before, stale again');
	my (undef, $j) = get_job($lj);
	is($j->{status}, 'failed', 'its third lost run fails it');
	is($j->{attempts}, 1, 'its attempts as they were');
	like($j->{error_message}, qr/lease expired\) in 3 runs/,
	    'error_message: the runner was lost 3 times');
	is((get_upload($upload{'s16-mono.wav'}))[1]{status}, 'completed',
	    'the upload keeps its completed transcode');
}

# SIGTERM mid-transcode: ffmpeg stopped, the job given back uncounted.
{
	my $tj = retranscode($long);
	my $tr = runner_start('--loop');
	my (undef, $tff) = wait_ffmpeg($tj);
	ok($tff, 'a runner to stop transcodes');
	is(runner_stop($tr), 0, 'SIGTERM mid-transcode: exit 0');
	ok(!alive($tff), 'its ffmpeg is gone');
	my (undef, $j) = get_job($tj);
	is($j->{status}, 'queued', 'the job is queued again');
	is($j->{attempts}, 0, 'the stopped run is not counted');
	is((cancel($tj, $ta))[0], 204, '(cancelled, to keep the queue clear)');
}

# Deleting the upload of a running job stops its ffmpeg too.
{
	my $gone = upload('long.wav', $in{'long.wav'})->{id};
	my $gr = runner_start('--loop');
	my (undef, $gff) = wait_ffmpeg(job_of($gone));
	ok($gff, 'the new upload transcodes');
	is(($p->req(DELETE => "/api/v1/uploads/$gone", token => $tu))[0],
	    204, 'delete the upload of a running job');
	my $end = time + 10;
	sleep 0.05 while alive($gff) && time < $end;
	ok(!alive($gff), 'its ffmpeg is gone within 10 s');
	is(runner_stop($gr), 0, 'that runner goes on, and stops on SIGTERM');
	my @left = glob "$var/objects/$fac/uploads/$gone/*";
	is(scalar @left, 0, 'nothing of the upload is left in the store');
}

# A bad setting or argument stops the runner before it does anything.
{
	my ($st, undef, $err) = run(['env', 'XMHUB_ENV_FILE=' . $s->env_file,
		'XMHUB_TRANSCODE_FORMAT=ogg', $runner, '--drain']);
	is($st, 1, 'XMHUB_TRANSCODE_FORMAT=ogg: exit 1');
	like($err, qr/XMHUB_TRANSCODE_FORMAT/, 'it names the setting');
	($st) = run(['env', 'XMHUB_ENV_FILE=' . $s->env_file,
		'XMHUB_TRANSCODE_BITRATE=fast', $runner, '--drain']);
	is($st, 1, 'XMHUB_TRANSCODE_BITRATE=fast: exit 1');
	($st, undef, $err) = run([$runner, '--now']);
	is($st, 2, 'an unknown argument: exit 2');
	like($err, qr/usage/, 'with the usage');
}

# Two runners draining 10 jobs never run one twice.
my @many = map { upload("many-$_.wav", $in{'s16-mono.wav'})->{id} } 1 .. 10;
# (Not map: Xmhub::Stack reads its env file into $_, map's alias.)
my @mj;
for my $u (@many) {
	push @mj, job_of($u);
}
my @drains = map { runner_start('--drain', '--worker-id', "drain$_") } 1, 2;
is(runner_wait($_, 600), 0, "drain runner $_ exits 0") for @drains;
my $rows = $p->sql("SELECT string_agg(status || ' ' || attempts || ' ' || "
	    . "worker_id, ',') FROM transcode_jobs WHERE id IN ("
	    . join(',', map { "'$_'" } @mj) . ')');
my @rows = split /,/, $rows;
is(scalar @rows, 10, '10 jobs');
is(scalar(grep { /^completed 1 drain[12]$/ } @rows), 10,
    'each completed in one attempt by one of the two runners')
    or diag $rows;
my %by;
$by{(split / /)[2]}++ for @rows;
note "jobs per runner: " . join(', ', map { "$_ $by{$_}" } sort keys %by);
my $outputs = 0;
for my $i (0 .. $#many) {
	my @o = glob "$var/objects/$fac/uploads/$many[$i]/*.webm";
	$outputs++ if @o == 1 && $o[0] =~ m{/\Q$mj[$i]\E\.webm$};
}
is($outputs, 10, 'one output per job, named by it');

# AAC in MP4.
$s->restart(env => {%ENV_SHORT, XMHUB_TRANSCODE_FORMAT => 'mp4'});
daemon_stop();
my $mp4 = $upload{'s16-stereo.wav'};
my $mj = retranscode($mp4);
is(runner_wait(runner_start('--drain'), 300), 0, 'drain the mp4 job');
my $m = wait_job($mj);
is($m->{status}, 'completed', 'mp4: completed');
is_deeply([@$m{qw(target_format target_codec target_container)}],
    ['mp4', 'aac', 'mp4'], 'mp4: the target');
{
	my ($st, undef, $res) = stream($mp4);
	is($res->{headers}{'content-type'}, 'audio/mp4', 'mp4: Content-Type');
	spew("$dir/out.m4a", $res->{content});
	my $f = ffprobe("$dir/out.m4a");
	is($f->{codec_name}, 'aac', 'mp4: the stream is AAC');
	like($f->{format_name}, qr/\bmp4\b/, 'mp4: in MP4');
	ok(abs($f->{duration} * 1000 - 2500) <= 50,
	    "mp4: duration $f->{duration} s within 50 ms");
}
check_ranges($mp4, 'filesystem mp4');

# The store refuses the output (full, read-only): the run is deferred,
# not one of the job's attempts, and once the store takes writes again
# the job completes, however many runs the outage lasted
# (doc/transcoding.md "Attempts and lost runs").
{
	my $u = upload('s16-stereo.wav', $in{'s16-stereo.wav'})->{id};
	my $jid = job_of($u);
	my $updir = "$var/objects/$fac/uploads/$u";
	my $mode = (stat $updir)[2] & 07777;
	chmod 0550, $updir or die "$updir: $!";
	# More runs than XMHUB_TRANSCODE_MAX_ATTEMPTS (3), each one pass
	# after the backoff (1 s).
	for (1 .. 4) {
		is(runner_wait(runner_start('--drain'), 120), 0,
		    "store refuses: pass $_");
		sleep 1.1;
	}
	my $deferred = () = slurp("$dir/runners.log")
	    =~ /job \Q$jid\E attempt 1 deferred: the output could not be stored/g;
	is($deferred, 4, 'store refuses: each pass ran the job and deferred it');
	my ($st, $j) = get_job($jid);
	is_deeply([@$j{qw(status attempts error_message)}],
	    ['queued', 0, 'the output could not be stored'],
	    'store refuses: 4 runs later the job waits, no attempt counted')
	    or diag explain $j;
	is((get_upload($u))[1]{status}, 'processing',
	    'store refuses: the upload is still processing');
	chmod $mode, $updir or die "$updir: $!";
	is(runner_wait(runner_start('--drain'), 120), 0, 'store back: a pass');
	$j = wait_job($jid);
	is_deeply([@$j{qw(status attempts)}], ['completed', 1],
	    'store back: the job completes in its first counted attempt');
}

# A recording longer than XMHUB_TRANSCODE_MAX_SECONDS fails, saying so,
# and so does a 100 Hz one: at once, in one run, since no other run can
# change what the probe found (the backoff of 1 s would have a drain
# wait for a second and a third attempt).
{
	$s->set_env({XMHUB_TRANSCODE_MAX_SECONDS => 2});
	my $u = upload('s16-stereo.wav', $in{'s16-stereo.wav'})->{id};
	my $jid = job_of($u);
	my $u100 = upload('r100.wav', $in{'r100.wav'})->{id};
	my $j100 = job_of($u100);
	is(runner_wait(runner_start('--drain'), 120), 0, 'max seconds: a pass');
	my (undef, $j) = get_job($jid);
	is($j->{error_message}, 'the recording is 2.5 s long, more than the '
	    . '2 s a transcode takes (XMHUB_TRANSCODE_MAX_SECONDS)',
	    'a 2.5 s recording, XMHUB_TRANSCODE_MAX_SECONDS=2: refused')
	    or diag explain $j;
	is_deeply([@$j{qw(status attempts)}], ['failed', 1],
	    'max seconds: failed after one run');
	(undef, $j) = get_job($j100);
	is_deeply([@$j{qw(status attempts error_message)}], ['failed', 1,
	    'the sample rate 100 Hz is outside 1000 to 768000 Hz'],
	    '100 Hz WAV: failed after one run, saying why') or diag explain $j;
	my ($st, $up) = get_upload($u100);
	is($up->{status}, 'failed', '100 Hz WAV: the upload is failed');
	$s->set_env({XMHUB_TRANSCODE_MAX_SECONDS => undef});
}

# --- streams from S3: proxied through the program, with Range ---
$s3 = Xmhub::S3->start;
platform($s3->env);
{
	my $u = upload('s16-stereo.wav', $in{'s16-stereo.wav'})->{id};
	my $j = wait_job(job_of($u));
	is($j->{status}, 'completed', 's3: completed');
	ok(!-e "$var/objects/$fac", 's3: nothing in the filesystem store');
	my $r = HTTP::Tiny->new->get(join("/", $s3->endpoint, $s3->bucket, $fac, "uploads", $u, "$j->{id}.webm"));
	ok($r->{success}, 's3: the output is in the bucket') or diag "$r->{status} $r->{content}";
	my ($st, undef, $res) = stream($u);
	is($st, 200, 's3: stream 200') or diag $res->{content};
	ok($res->{content} eq $r->{content}, 's3: the stream is the object');
	is($res->{headers}{'content-type'}, 'audio/webm', 's3: Content-Type');
	is($res->{headers}{'cache-control'}, 'private, max-age=3600',
	    's3: Cache-Control');
	is($res->{headers}{'accept-ranges'}, 'bytes', 's3: Accept-Ranges');
	spew("$dir/s3.webm", $res->{content});
	my $f = ffprobe("$dir/s3.webm");
	is($f->{codec_name}, 'opus', 's3: Opus');
	ok(abs($f->{duration} * 1000 - 2500) <= 50, 's3: duration');
	check_ranges($u, 's3');
	is_error(stream($u, token => $tb), 403,
	    "s3: stream of another facility's upload");
}

# libsox reads upload headers in a child of the runner, which starts
# before any setting is read: it answers with no env file at all, and its
# environment is the minimal one of every child (checked above for ffmpeg).
{
	my $wav = "$tmp/probe.wav";
	my ($rc, undef, $err) = run(['sox', '-n', '-r', '8000', '-c', '1',
		'-b', '16', $wav, 'synth', '2', 'sine', '440']);
	is($rc, 0, 'probe child: a WAV') or diag $err;
	local $ENV{XMHUB_ENV_FILE} = "$tmp/no-such-env-file";
	my $out;
	($rc, $out) = run([$runner, '--probe-sox', $wav]);
	is($rc, 0, 'probe child: runs without reading settings');
	is($out, "2000 8000 1 16 pcm_s16le\n",
	    'probe child: duration, rate, channels, bits, codec');
	($rc, $out) = run([$runner, '--probe-sox', "$build/cli/xmhub"]);
	is_deeply([$rc, $out], [1, ''], 'probe child: not audio: 1, nothing');
}

done_testing;
