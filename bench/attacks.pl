#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# bench/attacks - issue 27's attacks replayed on a fresh stack of this
# tree (make bench-attacks), as the issue tells them, with ordinary
# accounts and keys of two facilities, A (the attacker) and B:
#   1. A's sparse audio stream (pcm_s16le, 192 kHz, 8 channels, two tiny
#      frames 600 s apart) read as WAV by A's `user` over 3 connections
#      that never read their answer, held 10 s: the whole stream (a
#      1.84 GB WAV), then the largest window under
#      XMHUB_AUDIO_WAV_MAX_BYTES (87 s, 267 MB);
#   2. that stream's spectrogram, 2 at once by the same viewer: the whole
#      stream, then the 87 s window;
#   3. a 4 KB WAV at 1 Hz (nominal 2,026 s) and a 1 KB 8-channel WAV at
#      1 Hz uploaded with A's key and left to the stack's transcode
#      runner;
#   4. a face video MKV whose header says 1 s and which holds 70 s (32x32
#      at 2 frames a second, then at 1), over FACE_API_VIDEO_MAX_SECONDS
#      set to 60 for the run (FACE_API_MODEL yunet), posted with a face
#      key: the issue's 700 s over the default 600 s scaled down by 10,
#      as detecting a face in 600 frames took about 7 minutes on the
#      2-core machine;
#   5. two facilities competing: A's viewer draws 2 windows of a 252 KB
#      FLAC upload at once (the whole of it, at the largest image,
#      4096x2048) while B's viewer lists its uploads, one request after
#      another for 3 s (B's latency);
#   6. unauthenticated chunked POSTs of 256 MiB: 3 at once to
#      /api/v1/uploads, one to the face service's mask-video;
#   7. 56 WebSocket connections opened with one key of A (websocketd's
#      --maxforks), then one with B's key.
# During each, a child samples every 50 ms the bytes of the files in
# lighttpd's temp folder (VAR/tmp, server.upload-dirs) and in the
# programs' TMPDIR (a directory of this run named in the stack's env
# file: the session spectrogram's WAV, the runners' work directories,
# the face service's video), and the resident size (VmRSS) of every
# process of the stack: lighttpd's tree (the FastCGI programs and their
# decoder children), each daemon's (the runners, websocketd and its
# connections' programs, the supervisor) and PostgreSQL's (the
# postmaster and its backends).  Per attack: the peaks, the largest
# single process, the sum (shared pages, PostgreSQL's shared buffers
# above all, count once per process), what the attacker got, and the
# issue's figure before the fixes, quoted (that baseline is not run: it
# would fill the disk).  The same run's baseline is the stack idle for
# 3 s before the attacks.  BENCH_ATTACKS (a regex on the attacks'
# numbers, e.g. '1b|5') runs only those after the baseline.
# Not a test: it asserts nothing, and dies when an attack can not be set
# up, so that a broken recipe is never reported as a bound.
use strict;
use warnings;
use File::Find ();
use File::Temp qw(tempdir);
use HTTP::Tiny;
use IO::Select;
use IO::Socket::IP;
use JSON::PP;
use MIME::Base64 qw(encode_base64);
use POSIX ();
use Socket qw(SOL_SOCKET SO_RCVBUF);
use Time::HiRes qw(time sleep);
use Xmhub::Face qw(model_dir);
use Xmhub::Ingest;
use Xmhub::Objects;
use Xmhub::Platform;
use Xmhub::Test qw(run within);
use Xmhub::WS;

# BENCH_ATTACKS: only these (a regex on the names' beginnings, e.g. 4|5).
my $only = $ENV{BENCH_ATTACKS};
my $HOLD = 10;        # seconds the unread WAV answers are held
my $EVERY = 0.05;     # seconds between samples
my $MiB = 1 << 20;
my $json = JSON::PP->new->utf8->canonical;
my $page = POSIX::sysconf(POSIX::_SC_PAGESIZE());

# The programs' temporary files: a directory of the run, the service
# user's, named in the env file (the daemons take TMPDIR from the
# environment first: none here).
delete $ENV{TMPDIR};
my $dir = tempdir('xmhub-attacks-XXXXXX', TMPDIR => 1, CLEANUP => 1);
chmod 0755, $dir;
my $ptmp = "$dir/tmp";
mkdir $ptmp, 0700 or die "$ptmp: $!\n";
chown((getpwnam('xmhub'))[2, 3], $ptmp) if $> == 0;
my $pw = "bench-$$";
my $p = Xmhub::Platform->start(env => {
	TMPDIR => $ptmp,
	FACE_API_MODEL_DIR => model_dir(),
	FACE_API_STORAGE_ENABLED => 'true',
	FACE_API_API_KEY_ENABLED => 'true',
	FACE_API_ADMIN_PASSWORD => $pw,
	FACE_API_MODEL => 'yunet',
	FACE_API_VIDEO_MAX_SECONDS => 60,
});
my $s = $p->stack;
my $var = $s->var;
my %dirs = (spool => "$var/tmp", programs => $ptmp);

# --- sampling ---

# The stack's process trees' roots, by name, from `stack status`.
sub roots {
	my (undef, $out) = $s->status;
	my %r = $out =~ /^stack: (.+?): running, pid (\d+)/mg;
	for (qw(lighttpd PostgreSQL transcode face-video websocketd)) {
		die "stack status: $_ is not running\n$out" unless $r{$_};
	}
	return \%r;
}

# Bytes of the files under $d.
sub du {
	my ($d) = @_;
	my $n = 0;
	File::Find::find({no_chdir => 1,
	    wanted => sub { $n += (lstat)[7] // 0 if -f }}, $d);
	return $n;
}

# The name of process $pid: its program's file name, with its first
# argument when that is an option (the face service's image workers are
# "face --face-worker").
sub proc_name {
	my ($pid) = @_;
	open my $f, '<', "/proc/$pid/cmdline" or return '?';
	my @argv = split /\0/, <$f> // '';
	my $name = ($argv[0] // '?') =~ s{.*/}{}r;
	$name .= " $argv[1]" if ($argv[1] // '') =~ /^--[\w-]+$/;
	return $name;
}

# One sample: the bytes of %dirs (spool, programs), the resident bytes of
# the largest process (max, max_name) and summed over the trees of
# %$roots (sum) and by part (web: lighttpd's, pg: PostgreSQL's,
# daemons: the others').
sub sample {
	my ($roots) = @_;
	my %kids;
	for my $stat (glob '/proc/[0-9]*/stat') {
		open my $f, '<', $stat or next;
		my ($pid, $st, $ppid) = (<$f> // '') =~ /^(\d+) \(.*\) (\S) (\d+) /
		    or next;
		push @{$kids{$ppid}}, $pid if $st ne 'Z';
	}
	my %r = (sum => 0, max => 0, web => 0, pg => 0, daemons => 0);
	my $max_pid;
	for my $root (keys %$roots) {
		my $part = $root eq 'lighttpd' ? 'web'
		    : $root eq 'PostgreSQL' ? 'pg' : 'daemons';
		my @todo = ($roots->{$root});
		while (defined(my $pid = shift @todo)) {
			push @todo, @{$kids{$pid} // []};
			open my $f, '<', "/proc/$pid/statm" or next;
			my $rss = ((split ' ', <$f> // '')[1] // 0) * $page;
			$r{$_} += $rss for 'sum', $part;
			($r{max}, $max_pid) = ($rss, $pid) if $rss > $r{max};
		}
	}
	$r{max_name} = defined $max_pid ? proc_name($max_pid) : '';
	$r{$_} = du($dirs{$_}) for keys %dirs;
	return \%r;
}

# sampler(): starts a child sampling every $EVERY s; a function that
# stops it and returns the peaks of each of sample()'s figures (each its
# own peak), and n, the samples taken.
sub sampler {
	my $roots = roots();
	pipe(my $stop_r, my $stop_w) or die "pipe: $!\n";
	pipe(my $res_r, my $res_w) or die "pipe: $!\n";
	my $pid = fork // die "fork: $!\n";
	if ($pid == 0) {
		close $stop_w;
		close $res_r;
		my %peak = (n => 0, max_name => '');
		my $sel = IO::Select->new($stop_r);
		do {
			my $x = sample($roots);
			$peak{n}++;
			for (qw(spool programs sum web pg daemons)) {
				$peak{$_} = $x->{$_} if $x->{$_} > ($peak{$_} // -1);
			}
			@peak{qw(max max_name)} = @$x{qw(max max_name)}
			    if $x->{max} > ($peak{max} // -1);
		} until $sel->can_read($EVERY);
		print {$res_w} $json->encode(\%peak);
		close $res_w;
		POSIX::_exit(0);
	}
	close $stop_r;
	close $res_w;
	return sub {
		close $stop_w;
		local $/;
		my $out = <$res_r>;
		waitpid $pid, 0;
		return $json->decode($out // die "the sampler died\n");
	};
}

my @rows;
# attack($name, $before, $code): $code->() run with the sampler on; it
# returns what the attacker got (text).  A row of the table.
sub attack {
	my ($name, $before, $code) = @_;
	return if $only && @rows && $name !~ /^(?:$only)\b/;
	print STDERR "# $name\n";
	my $stop = sampler();
	my $t0 = time;
	my $got = eval { $code->() };
	my $secs = time - $t0;
	my $peak = $stop->();
	die "$name: $@" unless defined $got;
	push @rows, {name => $name, before => $before, got => $got,
		secs => $secs, %$peak};
	print STDERR "#   $got; ", $json->encode($peak), "\n";
}

# --- helpers of the attacks ---

# curl(\@args, $url, $out): the argv of a curl printing status, bytes
# sent and seconds ("%{http_code} %{size_upload} %{time_total}"), the
# answer's body into $out (default none).
sub curl {
	my ($args, $url, $out) = @_;
	return ['curl', '-sS', '-o', $out // '/dev/null', '-w',
		'%{http_code} %{size_upload} %{time_total}', @$args, $url];
}

# spawn(@argvs): the commands started at once; a function waiting for
# them that returns their outputs, in order.
sub spawn {
	my @fh = map { open(my $f, '-|', @$_) or die "$_->[0]: $!\n"; $f } @_;
	return sub {
		return map { local $/; my $o = <$_> // ''; close $_; $o } @fh;
	};
}

# statuses(@outputs of curl): "200, 429 (2.1 s)" and the like, the
# seconds of the slowest.
sub statuses {
	my @f = map { [split ' '] } @_;
	my ($slow) = sort { $b <=> $a } map { $_->[2] // 0 } @f;
	return join(', ', map { $_->[0] // '?' } @f)
	    . sprintf(' (the slowest in %.1f s)', $slow // 0);
}

sub bearer { return ('-H', "Authorization: Bearer $_[0]") }

# --- the accounts ---
my ($fa, $fb) = ($p->facility('Attacker A'), $p->facility('Other B'));
my $admin_a = $p->token($p->user('facility_admin', $fa), 3600);
my $viewer_a = $p->token($p->user('user', $fa), 3600);
my $admin_b = $p->token($p->user('facility_admin', $fb), 3600);
my $viewer_b = $p->token($p->user('user', $fb), 3600);
my $key_a = $p->api_key($admin_a, 'ingest', 'upload');
my $key_b = $p->api_key($admin_b, 'ingest', 'upload');
my ($in_a, $in_b) = map { Xmhub::Ingest->new($p, $_) } $key_a, $key_b;

# A's sparse stream: 4 sample frames at 1 s and at 601 s.
my $sparse = $in_a->audio_session(5, 'pcm_s16le', 192000, 8)->{id};
my $frame = encode_base64(pack('C s<*', 1, (100) x (8 * 4)), '');
$in_a->send($sparse, 1, [0, 'bytes', [[1_000_000, $frame],
	[601_000_000, $frame]]]);
my $stream = "/api/v1/metadata/sessions/$sparse/streams/0";
my $WIN = 'from_us=1000000&to_us=88000000'; # 87 s: 267,264,044 bytes
{
	my ($st, undef, $res) = $p->req(GET => "$stream/samples?format=wav&"
		. 'from_us=601000000&to_us=601000020', token => $viewer_a);
	die "the sparse stream does not read: $st $res->{content}\n"
	    if $st != 200;
}

# hold($path, $n): $n connections asking $path as A's viewer and reading
# nothing for $HOLD s (a 16 KiB receive buffer); then the status each
# got, from the first bytes of its answer, read and closed in turn: "(q)"
# after one that had no answer yet when the hold ended (it was waiting
# in the pool, answered once an earlier one was closed).
sub hold {
	my ($path, $n) = @_;
	my @c;
	for (1 .. $n) {
		my $c = IO::Socket::IP->new(PeerHost => '127.0.0.1',
			PeerPort => $s->port, Proto => 'tcp')
		    or die "connect: $@\n";
		setsockopt($c, SOL_SOCKET, SO_RCVBUF, 16384);
		print {$c} "GET $path HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		    . "Authorization: Bearer $viewer_a\r\nConnection: close"
		    . "\r\n\r\n";
		push @c, $c;
	}
	sleep $HOLD;
	my @waiting = map { !IO::Select->new($_)->can_read(0) } @c;
	my @st;
	for my $i (0 .. $#c) {
		my $head = '';
		sysread($c[$i], $head, 512)
		    if IO::Select->new($c[$i])->can_read(5);
		push @st, ($head =~ m{^HTTP/1\.\d (\d+)} ? $1 : 'none')
		    . ($waiting[$i] ? ' (q)' : '');
		close $c[$i];
	}
	return join ', ', @st;
}

# Until A's render share is free again (the held answer's process saw
# its client go): a tiny WAV of the stream reads.
sub share_back {
	within(30, sub { ($p->req(GET => "$stream/samples?format=wav&"
		. 'from_us=601000000&to_us=601000020', token => $viewer_a))[0]
		== 200 }) or die "A's render share is still held after 30 s\n";
}

attack('idle stack, 3 s (baseline)', '-', sub { sleep 3; '-' });

attack('1a. sparse stream as WAV, whole (1.84 GB), 3 unread connections '
    . "held ${HOLD} s", '1.84 GB of silence a read; 3 idle connections '
    . 'held 5.5 GB after 39 s', sub {
	hold("$stream/samples?format=wav", 3);
});
attack('1b. the same, the largest window under the bound (87 s, 267 MB)',
    '(the same)', sub {
	share_back();
	return hold("$stream/samples?format=wav&$WIN", 3);
});

attack('2a. its spectrogram, whole, 2 at once by the viewer',
    'a 1.84 GB temporary WAV a request', sub {
	share_back();
	return statuses(spawn(map { curl([bearer($viewer_a)],
		$s->url("$stream/spectrogram.png")) } 1 .. 2)->());
});
attack('2b. its spectrogram, the 87 s window, 2 at once', '(the same)', sub {
	return statuses(spawn(map { curl([bearer($viewer_a)],
		$s->url("$stream/spectrogram.png?$WIN")) } 1 .. 2)->());
});

# wait_jobs(@upload ids): "status: error (s after upload)" of each
# upload's transcode job once it ended.
sub wait_jobs {
	my ($t0, @ids) = @_;
	my @out;
	for my $id (@ids) {
		my $j;
		within(120, sub {
			my ($st, $l) = $p->req(GET => '/api/v1/transcode-jobs?'
				. "upload_id=$id", token => $admin_a);
			$j = $st == 200 ? $l->{items}[0] : undef;
			return $j && $j->{status} =~ /^(completed|failed)$/;
		}) or die "upload $id: its job did not end in 120 s\n";
		push @out, sprintf('%s%s after %d attempts, %.1f s, output %s '
		    . 'bytes', $j->{status}, defined $j->{error_message}
		    ? " \"$j->{error_message}\"" : '', $j->{attempts},
		    time - $t0, $j->{output_size_bytes} // 0);
	}
	return @out;
}

# upload($name, $bytes): the upload's id (A's key), dies unless 200.
sub upload {
	my ($name, $bytes) = @_;
	my ($st, $u) = Xmhub::Objects::upload($p, $key_a, $name, $bytes);
	die "upload $name: $st\n" if $st != 200;
	return $u->{id};
}

attack('3. a 4 KB WAV at 1 Hz and a 1 KB 8-channel WAV at 1 Hz uploaded',
    '4 KB: a 31.5 MB Opus output, 34 s of the runner; 1 KB 8-channel: '
    . 'the spectrogram child crashed (SIGSEGV in libsox)', sub {
	my $t0 = time;
	my @id = (upload('slow.wav', Xmhub::Objects::wav(2026, 1, 1)),
		upload('ch8.wav', Xmhub::Objects::wav(61, 1, 8)));
	my @j = wait_jobs($t0, @id);
	my ($wst) = $p->req(GET => "/api/v1/uploads/$id[1]/spectrogram.png?"
		. 'from_ms=0&to_ms=1000', token => $viewer_a);
	return "4 KB: $j[0]; 1 KB 8-channel: $j[1]; its window: $wst";
});

# --- the face service ---
my $http = HTTP::Tiny->new(timeout => 300, keep_alive => 0);
my $res = $http->request(POST => $s->face_url('/api/v1/admin/api-keys'), {
	headers => {Authorization => 'Basic '
		. encode_base64("admin:$pw", ''),
		'Content-Type' => 'application/json'},
	content => '{"name":"attacker"}'});
die "a face key: $res->{status} $res->{content}\n" if $res->{status} != 201;
my $fkey = $json->decode($res->{content})->{key};

# lying_mkv($fps): a file of 70 s of 32x32 frames at $fps, its Segment's
# Duration (ID 0x4489, an 8-byte float of ms) and its streams' DURATION
# tags made to say 1 s.
sub lying_mkv {
	my ($fps) = @_;
	my ($real, $mkv) = ("$dir/real-$fps.mkv", "$dir/lying-$fps.mkv");
	my ($st, undef, $err) = run(['ffmpeg', '-nostdin', '-v', 'error',
		'-y', '-f', 'lavfi', '-i', "testsrc2=s=32x32:r=$fps:d=70",
		'-c:v', 'libx264', '-pix_fmt', 'yuv420p', $real]);
	die "ffmpeg: $err" if $st != 0;
	my $v = Xmhub::Face::slurp($real);
	my $at = index($v, "\x44\x89\x88");
	die "no Segment Duration in the MKV\n" if $at < 0;
	substr($v, $at + 3, 8) = pack('d>', 1000);
	$v =~ s/00:01:10\.0/00:00:01.0/g;
	open my $o, '>:raw', $mkv or die "$mkv: $!\n";
	print {$o} $v;
	close $o or die "$mkv: $!\n";
	my (undef, $d) = run(['ffprobe', '-v', 'error', '-show_entries',
		'format=duration', '-of', 'csv=p=0', $mkv]);
	die "the MKV's header says $d s, not 1\n" if $d + 0 != 1;
	return $mkv;
}

# mask($mkv): what mask-video did with the video, once its job ended.
sub mask {
	my ($mkv) = @_;
	my $t0 = time;
	my $out = join ' ', spawn(curl(['-H', "X-API-Key: $fkey", '-F',
		"video=\@$mkv;type=video/x-matroska"],
		$s->face_url('/api/v1/mask-video'), "$dir/job.json"))->();
	my ($st) = split ' ', $out;
	die "mask-video: $out\n" if $st != 202;
	my $id = $json->decode(Xmhub::Face::slurp("$dir/job.json"))->{id};
	my $j;
	within(180, sub {
		my $r = $http->request(GET => $s->face_url("/api/v1/video-jobs/"
			. $id), {headers => {'X-API-Key' => $fkey}});
		$j = eval { $json->decode($r->{content}) } // {};
		return ($j->{state} // '') =~ /^(completed|failed)$/;
	}) or die "the video job did not end in 180 s: "
	    . $json->encode($j) . "\n";
	return sprintf('202, then %s after %d frames%s (%.1f s)',
	    $j->{state}, $j->{frames_done} // 0,
	    defined $j->{error} ? ": \"$j->{error}\"" : '', time - $t0);
}

my %mkv = map { $_ => lying_mkv($_) } 1, 2;
attack('4a. a face video MKV whose header says 1 s, holding 70 s at 2 fps '
    . '(FACE_API_VIDEO_MAX_SECONDS 60 for the run)',
    'accepted and fully processed', sub { mask($mkv{2}) });
attack('4b. the same at 1 fps', '(the same)', sub { mask($mkv{1}) });

# --- two facilities ---
my ($sst, $flac, $serr) = run(['sox', '-n', '-r', '44100', '-b', '16', '-c',
	'2', '-t', 'flac', '-', 'synth', '3.05', 'pinknoise']);
die "sox: $serr" if $sst != 0;
my $tflac = time;
my $fid = upload('take.flac', $flac);
my ($fj) = wait_jobs($tflac, $fid);
die "the FLAC upload: $fj\n" unless $fj =~ /^completed/;
my (undef, $fu) = $p->req(GET => "/api/v1/uploads/$fid", token => $viewer_a);

attack(sprintf('5. A\'s viewer: 2 spectrogram windows (the whole, 4096x2048) '
    . 'of a %d KB FLAC at once; B lists its uploads meanwhile',
    length($flac) / 1024),
    "B's GET /api/v1/uploads waited 16.7 s", sub {
	my $wait = spawn(map { curl([bearer($viewer_a)], $s->url(
		"/api/v1/uploads/$fid/spectrogram.png?from_ms=0&to_ms="
		. "$fu->{duration_ms}&width=4096&height=2048")) } 1 .. 2);
	my @lat;
	my $t = time + 3;
	while (time < $t) {
		my $t0 = time;
		my ($st) = $p->req(GET => '/api/v1/uploads', token => $viewer_b);
		die "B's list: $st\n" if $st != 200;
		push @lat, time - $t0;
	}
	@lat = sort { $a <=> $b } @lat;
	return sprintf("A: %s; B: %d lists, median %.3f s, slowest %.3f s",
	    statuses($wait->()), scalar @lat, $lat[@lat / 2], $lat[-1]);
});

# --- unauthenticated bodies ---
my $big = "$dir/zeros";
open my $z, '>', $big or die "$big: $!\n";
truncate $z, 256 * $MiB or die "$big: $!\n";
close $z;
# Expect: none, so that curl sends the body without waiting for a 100.
my @chunked = ('-X', 'POST', '-T', $big, '-H', 'Expect:',
	'-H', 'Transfer-Encoding: chunked',
	'-H', 'Content-Type: multipart/form-data; boundary=x');

attack('6. unauthenticated chunked POSTs of 256 MiB: 3 at once to '
    . '/api/v1/uploads, 1 to mask-video', 'uploads: spooled up to 2 GiB '
    . '(2,053 MiB in 5.9 s), mask-video up to 256 MiB, no cap on '
    . 'parallel spools', sub {
	my @o = spawn((map { curl(\@chunked, $s->url('/api/v1/uploads')) }
		1 .. 3), curl(\@chunked, $s->face_url('/api/v1/mask-video')))->();
	my $sent = 0;
	$sent += (split ' ')[1] // 0 for @o;
	return sprintf('uploads: %s; mask-video: %s; %.1f MiB sent in all',
	    statuses(@o[0 .. 2]), statuses($o[3]), $sent / $MiB);
});

# --- WebSocket ---
my @wsid = map { $in_a->session(100 + $_, [0, 'f32'])->{id} } 1 .. 56;
my $wsb = $in_b->session(200, [0, 'f32'])->{id};

attack("7. 56 WebSocket connections with one key of A, then B's key",
    "B's WebSocket got 429", sub {
	my (@open, %n);
	for my $sid (@wsid) {
		my ($ws, $st) = Xmhub::WS->connect($s->port,
			"/api/v1/ingest/ws?session_id=$sid",
			{'X-Api-Key' => $key_a});
		$n{$st}++;
		push @open, $ws if $ws;
	}
	my ($wb, $bst) = Xmhub::WS->connect($s->port,
		"/api/v1/ingest/ws?session_id=$wsb", {'X-Api-Key' => $key_b});
	# An upgraded connection whose program found no share gets the
	# 429's detail as its one message and is closed.
	my $kept = grep { ($_->read_message(0.5))[0] eq 'timeout' } @open;
	my $bkept = $wb && ($wb->read_message(0.5))[0] eq 'timeout';
	$_->close for @open, grep { defined } $wb;
	return sprintf('A: %s, %d of them kept open; B: %s%s',
	    join(', ', map { "$n{$_} x $_" } sort keys %n), $kept, $bst,
	    $bkept ? ', kept open' : '');
});

# --- the table ---
sub mb { return sprintf('%.1f', $_[0] / 1e6) }
my ($uptime) = (run(['uptime']))[1] =~ /load average: (.*)/;
printf "## bench/attacks, %s UTC, load %s, every %.0f ms\n\n",
    POSIX::strftime('%Y-%m-%d %H:%M', gmtime), $uptime // '?',
    $EVERY * 1000;
print "| attack | what the attacker got | peak VAR/tmp, MB | peak programs' "
    . "TMPDIR, MB | peak RSS, largest process, MB | peak RSS, sum, MB (x "
    . "idle) | of which web / daemons / PostgreSQL | samples | before the "
    . "fixes (issue 27) |\n";
print "|---|---|---:|---:|---:|---:|---:|---:|---|\n";
my $idle = $rows[0]{sum} || 1;
for my $r (@rows) {
	printf "| %s | %s | %s | %s | %s (%s) | %s (%.2fx) | %s / %s / %s | %d "
	    . "| %s |\n", $r->{name}, $r->{got}, mb($r->{spool}),
	    mb($r->{programs}), mb($r->{max}), $r->{max_name}, mb($r->{sum}),
	    $r->{sum} / $idle, mb($r->{web}), mb($r->{daemons}), mb($r->{pg}),
	    $r->{n}, $r->{before};
}
