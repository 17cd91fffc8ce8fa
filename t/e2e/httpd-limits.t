#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# What the web server itself guards (doc/security.md), on a real stack
# through lighttpd: a body over its route's limit refused before it
# reaches the disk, on every route class and the face service; a slow
# endless chunked body cut off; the security headers on a program's
# answers and on lighttpd's own; Strict-Transport-Security only when
# configured; no query in the access log; stored objects and logs not
# readable by others; the JSON 416 of a Range lighttpd refuses itself.
use strict;
use warnings;
use File::Find;
use HTTP::Tiny;
use IO::Select;
use IO::Socket::INET;
use JSON::PP;
use Test::More;
use Time::HiRes qw(sleep time);
use Xmhub::Ingest;
use Xmhub::Platform qw(is_error);
use Xmhub::Test qw(run read_answer);
use Xmhub::WS;

my $p = Xmhub::Platform->start;
my $s = $p->stack;
my $var = $s->var;
my $json = JSON::PP->new->utf8;
my $NOBODY = '00000000-0000-4000-8000-000000000000';
my $KiB = 1024;
my $MiB = 1024 * $KiB;
my %PLATFORM = (
	'x-content-type-options' => 'nosniff',
	'x-frame-options' => 'DENY',
	'content-security-policy' => "frame-ancestors 'none'",
	'referrer-policy' => 'no-referrer',
);
# What lighttpd answers itself (a 413, a 404, a malformed request) is
# outside the programs: it carries the console's stricter policy, which
# also forbids framing (httpd-conf/programs, "header console").
my ($console_csp) = map {
	/^header console Content-Security-Policy "(.*)"$/ ? $1 : ()
} split /\n/, do {
	local (@ARGV, $/) = ("$ENV{XMHUB_SRCDIR}/httpd-conf/programs");
	<>;
};
$console_csp =~ s/\@FACE_PORT\@/$s->face_port/ge;
like($console_csp, qr/frame-ancestors 'none'/,
    'the console\'s policy forbids framing');
my %OWN = (%PLATFORM, 'content-security-policy' => $console_csp);

# Bytes of the files lighttpd spools request bodies to.
sub spooled {
	my $n = 0;
	find(sub { $n += -s $_ if -f $_ }, "$var/tmp");
	return $n;
}

# exchange($port, $head, $next, $pause): sends the request head, then
# the pieces $next returns ($pause seconds apart) until the server
# answers or closes, $next returns undef or a minute has passed.
# Returns a hash: status (undef when the server closed without an
# answer), headers (lower-case names), body, sent (body bytes written),
# spooled (the most seen in VAR/tmp meanwhile), ended (before the minute).
sub exchange {
	my ($port, $head, $next, $pause) = @_;
	my $c = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
		PeerPort => $port) or die "connect: $!\n";
	local $SIG{PIPE} = 'IGNORE';
	my $sel = IO::Select->new($c);
	my %r = (sent => 0, spooled => 0, ended => 0);
	defined syswrite($c, $head) or die "write: $!\n";
	$c->blocking(0);
	my ($pending, $end) = ('', time + 60);
	while (time < $end) {
		if ($sel->can_read($pause // 0)) {
			$r{ended} = 1;
			last;
		}
		$pending = $next->() // last if $pending eq '';
		# The server may stop reading: never block on a write.
		next unless $sel->can_write(0.05);
		my $w = syswrite($c, $pending);
		if (!defined $w) {
			next if $!{EAGAIN};
			$r{ended} = 1; # closed under us
			last;
		}
		$r{sent} += $w;
		substr($pending, 0, $w) = '';
		my $n = spooled();
		$r{spooled} = $n if $n > $r{spooled};
	}
	@r{qw(status headers body)} = read_answer($c, $sel);
	return \%r;
}

# A request head with a Content-Length of 3 GB, then its body as fast as
# it goes.
sub huge {
	my ($port, $path) = @_;
	my $piece = 'x' x (64 * $KiB);
	return exchange($port, "POST $path HTTP/1.1\r\nHost: 127.0.0.1\r\n"
		    . "Content-Type: application/json\r\nConnection: close\r\n"
		    . "Content-Length: 3000000000\r\n\r\n", sub { $piece });
}

sub detail_of {
	my ($r) = @_;
	my $b = eval { $json->decode($r->{body} // '') };
	return ref $b eq 'HASH' ? $b->{detail} : undef;
}

# headers_are($res_headers, \%want, $label): each header once, as wanted.
sub headers_are {
	my ($h, $want, $label) = @_;
	is_deeply({map { $_ => $h->{$_} } keys %$want}, $want,
	    "$label: the security headers");
}

# --- a Content-Length over the limit, per route class ---
for my $c (['/api/auth/login', 'JSON API, no login needed', $MiB],
	['/api/v1/devices', 'JSON API', $MiB],
	['/api/v1/uploads', 'uploads (spooled)', 2048 * $MiB + $MiB],
	["/api/v1/ingest/sessions/$NOBODY/data", 'ingest batch', $MiB + 64 * $KiB]) {
	my ($path, $label, $cap) = @$c;
	my $r = huge($s->port, "$path?api_key=secret-in-the-query");
	is($r->{status}, 413, "$label: 3 GB Content-Length: 413");
	ok(defined detail_of($r), "$label: 413: a JSON detail")
	    or diag $r->{body};
	like($r->{headers}{'content-type'} // '', qr{^application/json},
	    "$label: 413: JSON");
	cmp_ok($r->{spooled}, '<', $cap, "$label: nothing spooled to VAR/tmp");
	cmp_ok($r->{sent}, '<', 16 * $MiB, "$label: refused at once");
	headers_are($r->{headers}, \%OWN, "$label: 413");
}
my $r = huge($s->face_port, '/api/v1/detect');
is($r->{status}, 413, 'face detect: 3 GB Content-Length: 413');
ok(defined detail_of($r), 'face detect: 413: a JSON detail');
cmp_ok($r->{spooled}, '<', 21 * $MiB, 'face detect: nothing spooled');
is($r->{headers}{'x-frame-options'}, 'DENY', 'face detect: 413: headers');
ok(!exists $r->{headers}{'content-security-policy'},
    "face detect: 413: the face service's headers, not the platform's");

# --- an endless chunked body, sent slowly: cut off at the limit ---
my $sent_chunks = 0;
$r = exchange($s->port, "POST /api/v1/devices HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    . "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
	    . "\r\n", sub {
		$sent_chunks++;
		return sprintf("%x\r\n%s\r\n", 16 * $KiB, '[' x (16 * $KiB));
	}, 0.01);
ok($r->{ended}, "endless chunked body: cut off (after $sent_chunks chunks)");
ok(!defined $r->{status} || $r->{status} == 413,
    'endless chunked body: 413 or a close') or diag explain $r;
cmp_ok($r->{spooled}, '<=', $MiB,
    'endless chunked body: at most 1 MiB spooled');
cmp_ok($r->{sent}, '<', 8 * $MiB, 'endless chunked body: stopped early');
is(spooled(), 0, 'the spool file is gone');

# --- the headers on other answers ---
my ($st, $b, $res) = $p->req(GET => '/api/health');
is($st, 200, 'a program: 200');
headers_are($res->{headers}, \%PLATFORM, 'a program\'s 200');
ok(!exists $res->{headers}{'strict-transport-security'},
    'no Strict-Transport-Security by default');
($st, $b, $res) = $p->req(GET => '/api/auth/me');
is_error($st, $b, 401, 'a program\'s 401');
headers_are($res->{headers}, \%PLATFORM, 'a program\'s 401');
($st, $b, $res) = $p->req(GET => '/no/such/path');
is_error($st, $b, 404, 'lighttpd\'s own 404');
headers_are($res->{headers}, \%OWN, 'lighttpd\'s own 404');
$r = exchange($s->port, "GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    . "Content-Length: 12x\r\n\r\n", sub { undef });
is($r->{status}, 400, 'a malformed request: 400');
headers_are($r->{headers}, \%OWN, 'lighttpd\'s own 400');

# --- the access log keeps paths, not queries ---
my $ua = 'xmhub-limits-' . int(rand(1e9));
($st) = $p->req(GET => '/api/health?api_key=secret-in-the-query',
	headers => {'User-Agent' => $ua});
is($st, 200, 'a request with a credential in its query');
my $log = '';
for (1 .. 50) {
	$log = do { local (@ARGV, $/) = "$var/log/access.log"; <> } // '';
	last if index($log, $ua) >= 0;
	sleep 0.2;
}
like($log, qr{"GET /api/health HTTP/1\.1" 200 .*\Q$ua\E},
    'the access log has the request, its path');
unlike($log, qr/secret-in-the-query/, 'the access log has no query');

# --- an upload: its files; lighttpd's own 416 is JSON ---
my $fac = $p->facility('Limits');
my $token = $p->token($p->user('facility_admin', $fac));
my $key = $p->api_key($token);
my $wav = "$var/tone.wav";
my ($rc, $out, $err) = run(['sox', '-n', '-r', '8000', '-c', '1', '-b', '16',
	$wav, 'synth', '2', 'sine', '440']);
is($rc, 0, 'a WAV') or diag $err;
my $audio = do { local (@ARGV, $/) = $wav; binmode ARGV; <> };
my $bd = 'xmhub-limits';
($st, my $u) = $p->req(POST => '/api/v1/uploads', key => $key,
	body => "--$bd\r\nContent-Disposition: form-data; name=\"file\"; "
	    . "filename=\"tone.wav\"\r\nContent-Type: audio/wav\r\n\r\n"
	    . "$audio\r\n--$bd--\r\n",
	headers => {'Content-Type' => "multipart/form-data; boundary=$bd"});
is($st, 200, 'an upload') or diag explain $u;
my $status = '';
for (1 .. 600) {
	($st, $b) = $p->req(GET => "/api/v1/uploads/$u->{id}", token => $token);
	$status = $b->{status} // '';
	last if $status =~ /^(completed|failed)$/;
	sleep 0.2;
}
is($status, 'completed', 'the upload is transcoded');
($st, $b, $res) = $p->req(GET => "/api/v1/streams/$u->{id}", token => $token,
	headers => {Range => 'bytes=-18446744073709551615'});
is_error($st, $b, 416, 'an overflowing suffix Range');
like($res->{headers}{'content-type'} // '', qr{^application/json},
    '416: JSON, not lighttpd\'s HTML');

# The original and its transcode, written by two programs, and the logs.
my @objects;
find(sub { push @objects, $File::Find::name if -f $_ }, "$var/objects");
cmp_ok(scalar(grep { !m{/\.health(/|$)} } @objects), '>=', 2,
    'the upload and its transcode are stored');
my @open;
find(sub {
	my $mode = (lstat $_)[2];
	push @open, sprintf('%s %04o', $File::Find::name, $mode & 07777)
	    if $mode & 07;
}, "$var/objects", "$var/log");
is_deeply(\@open, [], 'objects and logs: nothing for other users');

# --- lighttpd's own 503s say Retry-After (httpd-conf/programs, "error
# 503 ... retry-after=2") ---
# The WebSocket front stopped: the authorizer lets the upgrade on and
# lighttpd's proxy finds no backend.  The stack's restart below starts it
# again.
my $sid = Xmhub::Ingest->new($p, $key)->session(77, [0, 'f32'])->{id};
ok($s->stop_daemon('ws-guard'), 'the WebSocket front stopped');
my (undef, $wst, $whead, $wbody) = Xmhub::WS->connect($s->port,
	"/api/v1/ingest/ws?session_id=$sid", {'X-Api-Key' => $key});
is($wst, 503, 'no WebSocket front: lighttpd answers 503 itself');
like($whead, qr/^Retry-After: 2\r$/mi, 'with Retry-After: 2');
is((() = $whead =~ /^Retry-After:/mig), 1, 'once');
is(eval { $json->decode($wbody)->{detail} }, 'the service is unavailable',
    'and the JSON detail of its own answers');
# A FastCGI pool whose sockets are gone: lighttpd's 503 until it has
# spawned the pool again.
unlink glob "$var/run/metadata.sock-*";
($st, $b, $res) = $p->req(GET => '/api/v1/metadata/sessions', token => $token);
is($st, 503, 'a FastCGI pool without its sockets: 503')
    or diag explain $b;
is($res->{headers}{'retry-after'}, 2, 'with Retry-After: 2');
# A program's own 503 keeps its own value, not doubled: t/e2e/face-limits.t
# (the face service busy, Retry-After: 1).

# --- Strict-Transport-Security when configured ---
$s->restart(env => {XMHUB_HSTS => 'max-age=600'});
($st, $b, $res) = $p->req(GET => '/api/health');
is($res->{headers}{'strict-transport-security'}, 'max-age=600',
    'XMHUB_HSTS: Strict-Transport-Security on a program\'s answer');
($st, $b, $res) = $p->req(GET => '/no/such/path');
is($res->{headers}{'strict-transport-security'}, 'max-age=600',
    'XMHUB_HSTS: and on lighttpd\'s own');
$res = HTTP::Tiny->new->get($s->face_url('/health'));
is($res->{headers}{'strict-transport-security'},
    'max-age=63072000; includeSubDomains',
    'the face service keeps its own, once');

done_testing;
