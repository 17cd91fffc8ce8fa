#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Audio in XMBP streams end to end (doc/xmbp-audio.md): the audio
# declaration at session creation, checked and returned with the stream;
# a 1 kHz tone encoded by the device-side IMA-ADPCM encoder
# (t/e2e/audio-enc.c on lib/codec/xmbpaudio), sent in batches over HTTP
# and read back as WAV (duration by `sox --i` within one frame, dominant
# frequency by an FFT here, SNR against the original); PCM bit-exact;
# gaps filled with silence and reported; windows; the spectrogram of a
# window (its brightest row at 1 kHz); every refusal.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use JSON::PP;
use MIME::Base64 qw(encode_base64);
use Xmhub::Ingest;
use Xmhub::Platform qw(keys_of is_error);
use Xmhub::Png qw(png_rows brightest_row);
use Xmhub::Test qw(run);
use Xmhub::WS;

my $ENC = "$ENV{XMHUB_BUILDDIR}/t/e2e/audio-enc";
my $p = Xmhub::Platform->start;
my $fac = $p->facility('Audio A');
my $other = $p->facility('Audio B');
my $ta = $p->token($p->user('facility_admin', $fac));
my $tu = $p->token($p->user('user', $fac));
my $tb = $p->token($p->user('user', $other));
my $key = $p->api_key($ta, 'ingest');
my $in = Xmhub::Ingest->new($p, $key);
my $dir = tempdir(CLEANUP => 1);

# create(@stream definitions): (status, body) of a new session.
sub create {
	my (@defs) = @_;
	return $p->req(POST => '/api/v1/ingest/sessions', key => $key,
		json => {device_uid => 77, streams => \@defs});
}

# A session with one audio stream (index 0) of codec, rate, channels.
sub audio_session {
	my ($codec, $rate, $ch) = @_;
	my ($st, $s) = create({stream_index => 0, name => 'mic',
		value_type => 'bytes', audio => {codec => $codec,
			sample_rate_hz => $rate, channels => $ch}});
	die "session: $st\n" if $st != 201;
	return $s;
}

# encode(name, args...): the batches and original.raw of audio-enc.
sub encode {
	my ($name, @args) = @_;
	my $d = "$dir/$name";
	mkdir $d or die "$d: $!";
	my ($st, undef, $err) = run([$ENC, @args, $d]);
	die "audio-enc: $err" if $st != 0;
	opendir(my $dh, $d) or die;
	my @b = sort grep { /^batch-/ } readdir $dh;
	return ([map { slurp("$d/$_") } @b], slurp("$d/original.raw"));
}

sub slurp {
	my ($path) = @_;
	open(my $fh, '<:raw', $path) or die "$path: $!";
	local $/;
	return scalar <$fh>;
}

sub post {
	my ($sid, $body) = @_;
	return $p->req(POST => "/api/v1/ingest/sessions/$sid/data",
		key => $key, body => $body,
		headers => {'Content-Type' => 'application/octet-stream'});
}

# wav($token, $sid, %query): (status, body, response) of the WAV read.
sub wav {
	my ($token, $sid, %q) = @_;
	my $qs = join '&', 'format=wav', map { "$_=$q{$_}" } sort keys %q;
	return $p->req(GET => "/api/v1/metadata/sessions/$sid/streams/0/"
		. "samples?$qs", token => $token);
}

# The sample data of a canonical 44-byte-header WAV.
sub wav_data {
	my ($bytes) = @_;
	return substr($bytes, 44);
}

# --- declarations ---
{
	my ($st, $s) = create(
		{stream_index => 0, name => 'mic', value_type => 'bytes',
		    audio => {codec => 'ima_adpcm', sample_rate_hz => 16000,
			channels => 1}},
		{stream_index => 1, name => 'temp', value_type => 'f32'});
	is($st, 201, 'a bytes stream with audio: 201');
	is_deeply($s->{streams}[0]{audio}, {codec => 'ima_adpcm',
		sample_rate_hz => 16000, channels => 1},
	    'the audio declaration is returned with the stream');
	ok(!exists $s->{streams}[1]{audio}, 'a stream without audio has none');
	my ($nst, $ns) = create({stream_index => 0, name => 'raw',
		value_type => 'bytes', audio => undef});
	is($nst, 201, '"audio": null: 201');
	ok(!exists $ns->{streams}[0]{audio}, '"audio": null: no audio');
	my ($gst, $g) = $p->req(GET => "/api/v1/metadata/sessions/$s->{id}",
		token => $tu);
	is_deeply($g->{streams}[0]{audio}, $s->{streams}[0]{audio},
	    'the metadata read returns it too');
	my $ok = {codec => 'pcm_s16le', sample_rate_hz => 8000, channels => 2};
	for my $c (
		[{%$ok}, 'f32', 'audio on an f32 stream'],
		[{%$ok, codec => 'opus'}, 'bytes', 'codec opus'],
		[{%$ok, codec => 1}, 'bytes', 'codec as a number'],
		[{%$ok, sample_rate_hz => 999}, 'bytes', 'rate 999'],
		[{%$ok, sample_rate_hz => 192001}, 'bytes', 'rate 192001'],
		[{%$ok, sample_rate_hz => 8000.5}, 'bytes', 'rate 8000.5'],
		[{%$ok, channels => 0}, 'bytes', 'channels 0'],
		[{%$ok, channels => 9}, 'bytes', 'channels 9'],
		[{codec => 'pcm_s16le', channels => 1}, 'bytes', 'no rate'],
		['pcm_s16le', 'bytes', 'audio not an object'],
	    ) {
		my ($est, $eb) = create({stream_index => 0, name => 'a',
			value_type => $c->[1], audio => $c->[0]});
		is_error($est, $eb, 400, "declaration: $c->[2]");
	}
}

# --- IMA-ADPCM: a 1 kHz tone, 16 kHz mono, frames of 1024, 4 a batch ---
my $RATE = 16000;
my $N = 1024;
my $FRAMES = 47; # 3.008 s
my $adpcm = audio_session('ima_adpcm', $RATE, 1);
my ($batches, $orig) = encode('adpcm', 'adpcm', $RATE, 1, $FRAMES, $N, 4,
	5_000_000, 'tone');
my $all = 1;
for my $b (@$batches) {
	my ($st) = post($adpcm->{id}, $b);
	$all &&= $st == 200;
}
ok($all, scalar(@$batches) . ' ADPCM batches accepted');
my ($st, undef, $res) = wav($tu, $adpcm->{id});
is($st, 200, 'ADPCM as WAV: 200');
is($res->{headers}{'content-type'}, 'audio/wav', 'Content-Type audio/wav');
is($res->{headers}{'x-audio-gaps'}, 0, 'no gaps');
is($res->{headers}{'x-audio-start-us'}, 5_000_000,
    'X-Audio-Start-Us: the first frame\'s time');
is(length($res->{content}), 44 + 2 * $N * $FRAMES,
    'the WAV holds every sample frame sent');
{
	my $f = "$dir/adpcm.wav";
	open(my $fh, '>:raw', $f) or die;
	print {$fh} $res->{content};
	close $fh;
	my ($sst, $dur) = run(['sox', '--i', '-D', $f]);
	is($sst, 0, 'sox reads the WAV');
	chomp $dur;
	my $want = $N * $FRAMES / $RATE;
	ok(abs($dur - $want) <= $N / $RATE,
	    "sox --i: duration $dur s, sent $want s (within one frame)");
	my (undef, $r) = run(['sox', '--i', '-r', $f]);
	my (undef, $c) = run(['sox', '--i', '-c', $f]);
	is($r + 0, $RATE, 'sox --i: 16000 Hz');
	is($c + 0, 1, 'sox --i: 1 channel');
}
my @got = unpack('s<*', wav_data($res->{content}));
my @want = unpack('s<*', $orig);
{
	my $peak = dominant(\@got, $RATE, 8192);
	ok(abs($peak - 1000) <= $RATE / 8192,
	    "dominant frequency $peak Hz: 1 kHz within one FFT bin");
	my $snr = snr(\@want, \@got);
	ok($snr > 30, sprintf('SNR %.1f dB > 30 dB against the original',
	    $snr));
}

# --- the spectrogram of the ADPCM tone's window ---
sub spectrogram {
	my ($token, $sid, %q) = @_;
	my $qs = join '&', map { "$_=$q{$_}" } sort keys %q;
	return $p->req(GET => "/api/v1/metadata/sessions/$sid/streams/0/"
		. "spectrogram.png" . ($qs ne '' ? "?$qs" : ''), token => $token);
}
{
	my ($sst, undef, $sres) = spectrogram($tu, $adpcm->{id},
		from_us => 5_500_000, to_us => 7_500_000, width => 200,
		height => 129);
	is($sst, 200, 'spectrogram of a 2 s window: 200')
	    or diag $sres->{content};
	is($sres->{headers}{'content-type'}, 'image/png', 'a PNG');
	my ($w, $h, $rows) = eval { png_rows($sres->{content}) };
	is(defined $rows ? "${w}x$h" : $@, '200x129', 'width x height asked');
	my $bin = $RATE / 2 / 128;
	my $hz = defined $rows ? (128 - brightest_row($rows)) * $bin : -1;
	ok(abs($hz - 1000) <= $bin,
	    "the brightest row is 1 kHz within one bin ($hz Hz)");
	is($sres->{headers}{'x-audio-gaps'}, 0, 'with the X-Audio-* headers');
	# Any height from 16 to 2048 (doc/xmbp-audio.md), and the log scale.
	($sst, undef, $sres) = spectrogram($tu, $adpcm->{id},
		from_us => 5_500_000, to_us => 7_500_000, width => 200,
		height => 100, scale => 'log');
	($w, $h, $rows) = eval { png_rows($sres->{content}) };
	is($sst == 200 && defined $rows ? "${w}x$h" : "$sst $@", '200x100',
	    'a log-scale spectrogram of 100 rows: 200x100');
	# Row r from the top: lo * (nyquist / lo)^((99 - r) / 99), lo 20 Hz.
	my $ratio = ($RATE / 2 / 20) ** (1 / 99);
	$hz = defined $rows
	    ? 20 * ($RATE / 2 / 20) ** ((99 - brightest_row($rows)) / 99) : -1;
	ok($hz > 1000 / $ratio ** 1.5 && $hz < 1000 * $ratio ** 1.5,
	    "its brightest row is 1 kHz within a row ($hz Hz)");
	for my $bad ([height => 15], [height => 2049], [scale => 'mel'],
	    [scale => '']) {
		my ($est, $eb) = spectrogram($tu, $adpcm->{id}, @$bad);
		is_error($est, $eb, 400, "spectrogram: $bad->[0] '$bad->[1]'");
	}
	my ($est, $eb);
	($est, $eb) = spectrogram($tu, $adpcm->{id}, width => 5000);
	is_error($est, $eb, 400, 'spectrogram: width 5000');
	($est, $eb) = spectrogram($tu, $adpcm->{id}, from_us => 0,
		to_us => 700_000_000);
	is_error($est, $eb, 400, 'spectrogram: a window over 10 minutes');
	($est, $eb) = spectrogram($tu, $adpcm->{id}, from_us => 1,
		to_us => 2);
	is_error($est, $eb, 404, 'spectrogram: a window without audio');
	($est, $eb) = spectrogram($tb, $adpcm->{id});
	is_error($est, $eb, 403, 'spectrogram: another facility');
}

# --- raw PCM: bit-exact, 2 channels, noise ---
my $pcm = audio_session('pcm_s16le', 8000, 2);
($batches, $orig) = encode('pcm', 'pcm', 8000, 2, 20, 400, 2, 1_000_000,
	'noise');
post($pcm->{id}, $_) for @$batches;
($st, undef, $res) = wav($tu, $pcm->{id});
is($st, 200, 'PCM as WAV: 200');
ok(wav_data($res->{content}) eq $orig, 'PCM round-trips bit-exact');
is(substr($res->{content}, 0, 4) . substr($res->{content}, 8, 8),
    'RIFFWAVEfmt ', 'a RIFF WAVE file');
is(unpack('v', substr($res->{content}, 22, 2)), 2, 'header: 2 channels');
is(unpack('V', substr($res->{content}, 24, 4)), 8000, 'header: 8000 Hz');

# A window: frames 4..11 (each 50 ms) of the 20, exactly.
($st, undef, $res) = wav($tu, $pcm->{id}, from_us => 1_200_000,
	to_us => 1_600_000);
is($st, 200, 'window: 200');
ok(wav_data($res->{content}) eq substr($orig, 4 * 1600, 8 * 1600),
    'window [1.2 s, 1.6 s): exactly those samples');
# A window starting inside a frame takes the rest of that frame.
($st, undef, $res) = wav($tu, $pcm->{id}, from_us => 1_025_000,
	to_us => 1_100_000);
ok(wav_data($res->{content}) eq substr($orig, 200 * 4, 600 * 4),
    'window from the middle of a frame: from that sample on');
# A window reaching past the end: silence after the last frame, reported.
($st, undef, $res) = wav($tu, $pcm->{id}, from_us => 1_900_000,
	to_us => 2_100_000);
is(length(wav_data($res->{content})), 1600 * 4, 'window past the end: '
    . 'its whole length');
ok(wav_data($res->{content}) eq substr($orig, 18 * 1600) . ("\0" x 3200),
    'past the end: the last frames, then silence');
is($res->{headers}{'x-audio-gaps'}, 1, 'the silence at the end is a gap');
is($res->{headers}{'x-audio-gap-list'}, '2000000+100000',
    'X-Audio-Gap-List: start_us+duration_us');

# --- a gap: batch 3 of 10 never sent ---
my $gap = audio_session('pcm_s16le', 8000, 2);
for my $i (0 .. $#$batches) {
	post($gap->{id}, $batches->[$i]) unless $i == 3;
}
($st, undef, $res) = wav($tu, $gap->{id});
is($st, 200, 'with a gap: 200');
is($res->{headers}{'x-audio-gaps'}, 1, 'X-Audio-Gaps: 1');
is($res->{headers}{'x-audio-silence-us'}, 100_000,
    'X-Audio-Silence-Us: the missing batch, 100 ms');
is($res->{headers}{'x-audio-gap-list'}, '1300000+100000',
    'X-Audio-Gap-List: where it is');
ok(wav_data($res->{content}) eq substr($orig, 0, 6 * 1600) . ("\0" x 3200)
    . substr($orig, 8 * 1600), 'the gap is silence, the rest in place');

# --- the time line: jitter joins, a later start is a gap, an earlier one
# loses its overlap (8 kHz mono PCM frames of 80 sample frames, 10 ms) ---
{
	my $tl = audio_session('pcm_s16le', 8000, 1);
	my @f = map { my $k = $_; pack('C s<*', 1, map { $k * 1000 + $_ }
		0 .. 79) } 0 .. 3;
	# Frame 1 0.5 ms late (joins, so it ends at 20 ms on the line),
	# frame 2 at 30 ms (10 ms of silence before it), frame 3 5 ms before
	# frame 2's end (overlaps by 40 sample frames).
	my @ts = (1_000_000, 1_010_500, 1_030_000, 1_035_000);
	$in->send($tl->{id}, 1, [0, 'bytes', [map {
		[$ts[$_], encode_base64($f[$_], '')] } 0 .. 3]]);
	my ($tst, undef, $tres) = wav($tu, $tl->{id});
	is($tst, 200, 'time line: 200');
	my @v = unpack('s<*', wav_data($tres->{content}));
	is(scalar @v, 80 + 80 + 80 + 80 + 40, 'time line: 360 sample frames');
	is_deeply([@v[0 .. 159]], [0 .. 79, 1000 .. 1079],
	    'a frame 0.5 ms late follows the last one directly');
	is_deeply([@v[160 .. 239]], [(0) x 80],
	    'a frame placed 10 ms after the last one\'s end: 10 ms of silence');
	is_deeply([@v[240 .. 359]], [2000 .. 2079, 3040 .. 3079],
	    'an overlapping frame loses the part already there');
	is($tres->{headers}{'x-audio-gaps'}, 1, 'time line: one gap');
	is($tres->{headers}{'x-audio-gap-list'}, '1020000+10000',
	    'time line: where the gap is and how long');
}

# --- a sparse stream: two tiny frames 100 s apart at 192 kHz, 8
# channels would fill 307 MB of silence per read; over
# XMHUB_AUDIO_WAV_MAX_BYTES (256 MiB) the read and the spectrogram are
# refused before anything is written ---
{
	my $sp = audio_session('pcm_s16le', 192000, 8);
	my $f = pack('C s<*', 1, (100) x (8 * 4));
	$in->send($sp->{id}, 1, [0, 'bytes', [[1_000_000,
		encode_base64($f, '')], [101_000_000, encode_base64($f, '')]]]);
	my ($est, $eb) = wav($tu, $sp->{id});
	is_error($est, $eb, 400, 'a sparse stream whose WAV passes the bound');
	like($eb->{detail} // '', qr/^the window makes a WAV of more than 268435456 bytes \(87 seconds at 192000 Hz, 8 channels, gaps included: XMHUB_AUDIO_WAV_MAX_BYTES\); narrow it/,
	    'the detail says the bound and what to do');
	($est, $eb) = spectrogram($tu, $sp->{id});
	is_error($est, $eb, 400, 'its spectrogram too');
	my ($ost) = wav($tu, $sp->{id}, from_us => 100_000_000,
		to_us => 101_000_000);
	is($ost, 200, 'a window within the bound reads');
}

# --- refusals at ingest: 400, nothing stored ---
{
	my $s2 = audio_session('ima_adpcm', 16000, 2);
	my $frame = "\x02" . ("\0" x 8) . ("\x11" x 6);
	my @bad = (
		["\x01" . ("\0" x 8), 'a PCM frame in an ADPCM stream'],
		["\x03" . ("\0" x 8), 'codec id 3'],
		["\xff\0\0", 'codec id 0xff'],
		["\x02" . ("\0" x 8) . "\x11", 'ADPCM, 2 channels, 1 code byte'],
		["\x02\0\0\x59\0" . ("\0" x 4) . "\x11\x11",
		    'ADPCM step index 89'],
		["\x02\0\0\0\1" . ("\0" x 4) . "\x11\x11", 'reserved byte set'],
		["\x02" . ("\0" x 8), 'ADPCM header only'],
		['', 'an empty sample'],
	);
	for my $c (@bad) {
		my $batch = $in->encode(1, [0, 'bytes', [[1000,
			encode_base64($frame, '')], [2000,
			encode_base64($c->[0], '')]]]);
		my ($bst, $bb) = post($s2->{id}, $batch);
		is_error($bst, $bb, 400, "ingest: $c->[1]");
		like($bb->{detail} // '', qr/sample 1/,
		    "ingest: $c->[1]: the detail names the sample");
	}
	my ($bst, $bb) = post($s2->{id}, $in->encode(1, [0, 'bytes',
		[[1000, encode_base64($frame, '')]]]));
	is($bst, 200, 'a good frame after them: 200');
	is($bb->{accepted_samples}, 1, 'none of the refused batches stored');
}

# --- the same check over WebSocket: a good batch acked, a bad one ends
# the connection with its detail ---
{
	my $s4 = audio_session('pcm_s16le', 8000, 1);
	my ($ws, $wst) = Xmhub::WS->connect($p->stack->port,
		"/api/v1/ingest/ws?session_id=$s4->{id}", {'X-Api-Key' => $key});
	is($wst, 101, 'WebSocket: upgraded');
	$ws->send_binary($in->encode(1, [0, 'bytes', [[1000,
		encode_base64("\x01\x10\x00", '')]]]));
	my ($type, $payload) = $ws->read_message(30);
	is($type eq 'binary' && length $payload == 4 ? unpack('N', $payload)
	    : "($type)", 1, 'WebSocket: a PCM frame acked');
	$ws->send_binary($in->encode(2, [0, 'bytes', [[2000,
		encode_base64("\x02\x00\x00\x00\x00\x11", '')]]]));
	($type, $payload) = $ws->read_message(30);
	my $o = $type eq 'binary' && length $payload > 4
	    ? eval { JSON::PP->new->utf8->decode($payload) } : undef;
	like(ref $o eq 'HASH' ? $o->{detail} : "($type)",
	    qr/codec id 0x02, but the stream is declared pcm_s16le/,
	    'WebSocket: an ADPCM frame in a PCM stream refused with the detail');
	$ws->close;
}

# --- refusals at read ---
{
	my $s3 = $in->session(5, [0, 'bytes']);
	my ($est, $eb) = wav($tu, $s3->{id});
	is_error($est, $eb, 400, 'WAV of a stream without audio');
	($est, $eb) = wav($tb, $pcm->{id});
	is_error($est, $eb, 403, 'WAV of another facility\'s stream');
	($est, $eb) = wav($tu, $pcm->{id}, bucket_us => 1000);
	is_error($est, $eb, 400, 'bucket_us with format=wav');
	($est, $eb) = wav($tu, $pcm->{id}, from_us => 5, to_us => 4);
	is_error($est, $eb, 400, 'from_us after to_us');
	($est, $eb) = wav($tu, $pcm->{id}, from_us => 0,
		to_us => 200_000_000_000);
	is_error($est, $eb, 400, 'a window past the size bound');
	like($eb->{detail} // '', qr/narrow it/, 'the detail says what to do');
	($est, $eb) = $p->req(GET => "/api/v1/metadata/sessions/$pcm->{id}/"
		. 'streams/9/samples?format=wav', token => $tu);
	is_error($est, $eb, 404, 'WAV of an undeclared stream');
}

# Frequency of the largest bin of an FFT (Hann window) over the n values
# in the middle of @$x.
sub dominant {
	my ($x, $rate, $n) = @_;
	my $off = int((@$x - $n) / 2);
	my @re = map { $x->[$off + $_] * (0.5 - 0.5 * cos(2 * 3.141592653589793
		* $_ / ($n - 1))) } 0 .. $n - 1;
	my @im = (0) x $n;
	fft(\@re, \@im);
	my ($best, $bi) = (-1, 0);
	for my $k (1 .. $n / 2 - 1) {
		my $m = $re[$k] ** 2 + $im[$k] ** 2;
		($best, $bi) = ($m, $k) if $m > $best;
	}
	return $bi * $rate / $n;
}

# In-place iterative radix-2 FFT of (@$re, @$im), length a power of 2.
sub fft {
	my ($re, $im) = @_;
	my $n = @$re;
	for (my ($i, $j) = (1, 0); $i < $n; $i++) {
		my $bit = $n >> 1;
		for (; $j & $bit; $bit >>= 1) { $j ^= $bit }
		$j ^= $bit;
		if ($i < $j) {
			@$re[$i, $j] = @$re[$j, $i];
			@$im[$i, $j] = @$im[$j, $i];
		}
	}
	for (my $len = 2; $len <= $n; $len <<= 1) {
		my $ang = -2 * 3.141592653589793 / $len;
		my ($wr, $wi) = (cos($ang), sin($ang));
		for (my $i = 0; $i < $n; $i += $len) {
			my ($cr, $ci) = (1, 0);
			for my $k (0 .. $len / 2 - 1) {
				my ($a, $b) = ($i + $k, $i + $k + $len / 2);
				my $tr = $re->[$b] * $cr - $im->[$b] * $ci;
				my $ti = $re->[$b] * $ci + $im->[$b] * $cr;
				$re->[$b] = $re->[$a] - $tr;
				$im->[$b] = $im->[$a] - $ti;
				$re->[$a] += $tr;
				$im->[$a] += $ti;
				($cr, $ci) = ($cr * $wr - $ci * $wi,
				    $cr * $wi + $ci * $wr);
			}
		}
	}
}

# 10 log10 of the signal's power over the difference's.
sub snr {
	my ($a, $b) = @_;
	return -1 if @$a != @$b;
	my ($s, $e) = (0, 0);
	for my $i (0 .. $#$a) {
		$s += $a->[$i] ** 2;
		$e += ($a->[$i] - $b->[$i]) ** 2;
	}
	return $e == 0 ? 999 : 10 * log($s / $e) / log(10);
}

done_testing;
