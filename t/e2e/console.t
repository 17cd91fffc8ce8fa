#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# The web console in a real browser (doc/console.md): a stack with a
# super admin, a facility admin and a viewer who log in with passwords,
# `xmhub sim` feeding an ingest session while the browser watches, and
# t/console/console.mjs driving Debian's chromium through playwright-core:
# sign in, users, API keys, an upload played through a signed URL, the
# live chart, the face page, a viewer without edit controls, sign out, no
# console errors, axe-core on every page.  XMHUB_CONSOLE_SHOTS=DIR keeps
# screenshots of the pages there (make console-shots: doc/console/).
use strict;
use warnings;
use File::Temp qw(tempdir);
use JSON::PP;
use Test::More;
use Time::HiRes qw(sleep);
use Xmhub::Face qw(model_dir);
use Xmhub::Objects;
use Xmhub::Platform;
use Xmhub::Test qw(run);
use Xmhub::XMBP ();

my $npm = $ENV{XMHUB_NPM_DIR} // "$ENV{XMHUB_SRCDIR}/_build/npm";
my $chromium = $ENV{CONSOLE_CHROMIUM} // '/usr/bin/chromium';
-x $chromium or BAIL_OUT("$chromium is missing: ./dev deps installs it");
-d "$npm/node_modules/playwright-core"
    or BAIL_OUT("playwright-core is missing in $npm: ./dev deps");
-f "$ENV{XMHUB_BUILDDIR}/console/index.htm"
    or BAIL_OUT('the console is not built (make)');

# Above the console's 30 s refresh margin: tokens are refreshed now and
# then, not before every call.
my $ttl = 45;
my $p = Xmhub::Platform->start;
$p->stack->restart(env => {FACE_API_MODEL_DIR => model_dir(),
	XMHUB_ACCESS_TTL => $ttl});
my $fa = $p->facility('Console A');
my $super_t = $p->token($p->user('super_admin', undef));
my %login;
for my $who (['super', 'super_admin', undef], ['admin', 'facility_admin', $fa],
    ['viewer', 'user', $fa]) {
	my ($name, $role, $fac) = @$who;
	my $email = "console-$name-$$\@example.org";
	my $pw = "console-$name-password";
	my ($st, $u) = $p->req(POST => '/api/v1/users', token => $super_t,
		json => {email => $email, password => $pw, role => $role,
			display_name => "Console $name",
			defined $fac ? (facility_id => $fac) : ()});
	is($st, 200, "the $name logs in with a password") or diag explain $u;
	$login{$name} = "$email $pw";
}
my ($st, $dev) = $p->req(POST => '/api/v1/devices', token => $super_t,
	json => {facility_id => $fa, device_uid => 4242, name => 'console device'});
is($st, 201, 'a device');
my $key = do {
	my ($s, $k) = $p->req(POST => '/api/v1/api-keys', token => $super_t,
		json => {facility_id => $fa, name => 'device key'});
	$k->{key};
};
# An alarm rule the sim's sine (amplitude 1) crosses at once, and an
# endpoint no one answers: the Alarms page has an alarm and a delivery
# being retried (doc/alarms.md).
($st) = $p->req(POST => '/api/v1/alarm-rules', token => $super_t,
	json => {facility_id => $fa, name => 'console sine', kind => 'threshold',
		stream_name => 'sine0', op => 'above', hi => 0.5, for_samples => 3});
is($st, 201, 'an alarm rule');
($st) = $p->req(POST => '/api/v1/webhooks', token => $super_t,
	json => {facility_id => $fa, name => 'console hook',
		url => 'http://127.0.0.1:9/console', secret => 'console secret 0123'});
is($st, 201, 'a webhook endpoint');
# The device is `xmhub sim` (doc/sender.md), as a user would run it before
# the first real device exists: its five streams (a sine and noise, f32;
# a walk, f64; a counter, i64; 8 kHz PCM audio, bytes) at 100 Hz, ten
# batches a second, for longer than the browser needs; it is
# stopped by its pid at the end. sim creates its session through the API
# with the key; the test finds it by the device.
my $feeder = fork // die "fork: $!";
if ($feeder == 0) {
	open STDOUT, '>', '/dev/null' or die "/dev/null: $!";
	exec $ENV{XMHUB_BIN}, 'sim', '--url', $p->stack->url(''), '--key', $key,
	    '--device-uid', 4242, '--streams', 5, '--rate', 100,
	    '--duration', 900 or die "exec: $!";
}
END { kill 'TERM', $feeder if $feeder; }
my $session;
for (1 .. 150) {
	my ($s, $list) = $p->req(GET => "/api/v1/metadata/sessions?device_id=$dev->{id}"
	    . '&status=active', token => $super_t);
	$session = $list->{items}[0] if $s == 200 && @{$list->{items} // []};
	last if $session && $session->{total_samples} >= 1000;
	sleep 0.2;
}
ok($session && $session->{total_samples} >= 1000,
	'xmhub sim feeds a session of the device')
    or BAIL_OUT('no session from xmhub sim');
is_deeply([map { "$_->{name} $_->{value_type}" } @{$session->{streams}}],
	['sine0 f32', 'noise1 f32', 'walk2 f64', 'counter3 i64', 'audio4 bytes'],
	"sim's session has its five streams");
is($session->{streams}[4]{audio}{sample_rate_hz}, 8000,
	'the fifth is declared 8 kHz audio');

# tone($hz, $rate, $secs): a WAV of a tone, 16-bit mono.
sub tone {
	my ($hz, $rate, $secs) = @_;
	my $data = pack('s<*', map { int(8000 * sin(2 * 3.14159265 * $hz * $_ / $rate)) } 0 .. $secs * $rate - 1);
	my $head = substr(Xmhub::Objects::wav(0), 0, 44);
	substr($head, 4, 4) = pack('V', 36 + length $data);
	substr($head, 24, 8) = pack('VV', $rate, 2 * $rate);
	substr($head, 40, 4) = pack('V', length $data);
	return $head . $data;
}
my $tmp = tempdir(CLEANUP => 1);
my $wav = "$tmp/console-tone.wav";
{
	# Four seconds of a 440 Hz tone at 8 kHz.
	open my $f, '>:raw', $wav or die "$wav: $!";
	print $f tone(440, 8000, 4);
	close $f;
}
# Eleven minutes of a 300 Hz tone at 2 kHz (2.6 MB): longer
# than one drawn window of the upload page's spectrogram (10 minutes).
# Uploaded with the key now, transcoded while the browser starts.
{
	my ($s, $b) = Xmhub::Objects::upload($p, $key, 'console-long.wav', tone(300, 2000, 660));
	is($s, 200, 'an upload of eleven minutes') or diag explain $b;
}
my $photo = '/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg';
# A second of the photo at 5 frames a second, for the face video page.
my $video = "$tmp/console-face.mp4";
{
	my ($s, undef, $err) = run(['ffmpeg', '-nostdin', '-v', 'error', '-y',
		'-loop', '1', '-i', $photo, '-t', 1, '-r', 5, '-vf', 'scale=320:-2',
		'-pix_fmt', 'yuv420p', '-c:v', 'libx264', $video]);
	is($s, 0, 'a short video of a face') or diag $err;
}
# ./dev up's stack turns the face service's storage on (video
# anonymization needs it); this test does not set it.
is($p->stack->setting('FACE_API_STORAGE_ENABLED'), 'true',
	'the stack writes FACE_API_STORAGE_ENABLED=true into its env file');
# A late batch the browser script posts while it watches the chart: ten
# samples of 50 from 0.1 s after the stream's first, long before the
# newest bucket (a batch_seq far behind: stored, the gap count unchanged).
my $late = "$tmp/late.xmbp";
{
	my ($fs, $first) = $p->req(GET => "/api/v1/metadata/sessions/"
	    . "$session->{id}/streams/0/samples?limit=1", token => $super_t);
	is($fs, 200, "the stream's first sample") or BAIL_OUT('no first sample');
	my $t = $first->{samples}[0][0] + 100_000;
	open my $f, '>:raw', $late or die "$late: $!";
	print $f Xmhub::XMBP::batch(40000, undef,
		[0, 'f32', [map { [$t + $_ * 1000, 50] } 0 .. 9]]);
	close $f;
}

local $ENV{CONSOLE_URL} = $p->stack->url('');
local $ENV{CONSOLE_FACE_URL} = $p->stack->face_url('');
local $ENV{CONSOLE_SUPER} = $login{super};
local $ENV{CONSOLE_ADMIN} = $login{admin};
local $ENV{CONSOLE_VIEWER} = $login{viewer};
local $ENV{CONSOLE_NEW_EMAIL} = "console-new-$$\@example.org";
local $ENV{CONSOLE_SESSION} = $session->{id};
local $ENV{CONSOLE_WAV} = $wav;
local $ENV{CONSOLE_PHOTO} = $photo;
local $ENV{CONSOLE_VIDEO} = $video;
local $ENV{CONSOLE_LATE_BATCH} = $late;
local $ENV{CONSOLE_INGEST_KEY} = $key;
local $ENV{CONSOLE_ACCESS_TTL} = $ttl;
local $ENV{XMHUB_NPM_DIR} = $npm;
local $ENV{CONSOLE_SHOTS} = $ENV{XMHUB_CONSOLE_SHOTS} // '';
open my $run, '-|', 'node', "$ENV{XMHUB_SRCDIR}/t/console/console.mjs"
    or die "node: $!";
my $n = 0;
while (my $line = <$run>) {
	my $r = eval { decode_json($line) };
	if (!$r) {
		diag "console.mjs: $line";
		next;
	}
	$n++;
	ok($r->{ok}, $r->{name}) or diag $r->{diag};
}
close $run;
is($?, 0, 'the browser script ends cleanly');
ok($n >= 40, "the browser script reported its checks ($n)");
kill 'TERM', $feeder;
waitpid $feeder, 0;
$feeder = 0;

# Screenshots, made small: 800 px wide, 128 colours (ffmpeg's palette
# filters).
for my $png (glob(($ENV{XMHUB_CONSOLE_SHOTS} || '/nonexistent') . '/*.png')) {
	my ($s, undef, $err) = run(['ffmpeg', '-v', 'error', '-y', '-i', $png,
		'-vf', 'scale=800:-1:flags=lanczos,split[a][b];'
		    . '[a]palettegen=max_colors=128[p];[b][p]paletteuse=dither=none',
		"$png.tmp.png"]);
	is($s, 0, "$png is made smaller") or diag $err;
	rename "$png.tmp.png", $png if $s == 0;
}

# The users made in the browser exist.
($st, my $users) = $p->req(GET => "/api/v1/users?facility_id=$fa",
	token => $super_t);
ok((grep { $_->{email} eq $ENV{CONSOLE_NEW_EMAIL} } @$users),
	'the user created in the console exists');
done_testing;
