#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Apache 2.4 in front of the built programs (httpd-conf/apache.conf, made
# by make from apache.conf.in and httpd-conf/programs; doc/deploy.md): the
# template rendered into a temporary directory, a real apache2 started on
# it (as the service user's server when root), PostgreSQL, websocketd and
# the objects directory of an Xmhub::Stack, and a few requests of every
# kind through it: readiness, login, devices, an upload transcoded by the
# runner and streamed back through X-Sendfile with Range, HTTP ingest,
# the WebSocket upgrade behind the FastCGI authorizer, the face service's
# own virtual host; the body limits, the security headers and the access
# log of doc/security.md.
use strict;
use warnings;
use HTTP::Tiny;
use IO::Select;
use IO::Socket::INET;
use JSON::PP;
use POSIX qw(WNOHANG);
use Test::More;
use Time::HiRes qw(sleep time);
use Xmhub::Accounts qw(mkuser login login_addr);
use Xmhub::Face;
use Xmhub::Ingest;
use Xmhub::Platform qw(is_error);
use Xmhub::Stack;
use Xmhub::Test qw(run);
use Xmhub::WS;

my $apache2 = (grep { -x } '/usr/sbin/apache2', '/usr/local/sbin/apache2')[0]
    or BAIL_OUT('apache2 not found: apt-get install apache2 '
	. 'libapache2-mod-fcgid libapache2-mod-xsendfile');
my $modules = '/usr/lib/apache2/modules';
my $build = $ENV{XMHUB_BUILDDIR};
my $root = $> == 0;
my $json = JSON::PP->new->utf8->canonical;

my $p = Xmhub::Platform->start(own_db => 1); # stops PostgreSQL
my $s = $p->stack;
my $var = $s->var;
# The runner is started here (--drain), so that the test knows when the
# upload has been transcoded.
ok($s->stop_daemon('transcode'), 'the stack runner stopped');
$s->set_env({FACE_API_MODEL_DIR => Xmhub::Face::model_dir()});

# --- the server ---
my $dir = "$var/apache";
mkdir $_, 0755 or die "$_: $!" for $dir, "$dir/run", "$dir/log",
    "$dir/face-state";
if ($root) {
	my ($uid, $gid) = (getpwnam('xmhub'))[2, 3];
	chown $uid, $gid, "$dir/run", "$dir/face-state";
}
my %ph = (
	ADDR => '127.0.0.1',
	PORT => Xmhub::Stack::free_port(),
	FACE_PORT => Xmhub::Stack::free_port(),
	AUTHZ_PORT => Xmhub::Stack::free_port(),
	WS_PORT => $s->ws_port,
	CGIBIN => "$build/cgi-bin",
	ENV_FILE => $s->env_file,
	OBJECTS => "$var/objects",
	FACE_WWW => "$build/face-www",
	CONSOLE => "$build/console",
	PLATFORM_WWW => "$build/platform-www",
	FACE_STATE => "$dir/face-state",
	ACCESS_LOG => "$dir/log/xmhub-access.log",
);

# A file's bytes; a file written.
sub slurp { local $/; open my $f, '<:raw', $_[0] or die "$_[0]: $!\n"; <$f> }
sub spew { my $f; open($f, '>:raw', $_[0]) && print($f $_[1]) && close($f)
	    or die "$_[0]: $!\n" }

my $template = slurp("$build/httpd-conf/apache.conf");
(my $site = $template) =~ s/@([A-Z_]+)@/$ph{$1} \/\/ die "no value for $1\n"/ge;
unlike($site, qr/@[A-Z_]+@/, 'every placeholder of apache.conf replaced');
my %doc = map { $_ => 1 } $template =~ /^#\s+([A-Z_]+)\s/mg;
is_deeply([grep { !$doc{$_} } sort keys %ph], [],
    'every placeholder is documented in its heading');
spew("$dir/xmhub.conf", $site);

# What Debian's apache2.conf and mods-enabled/ give a server, reduced to
# what xmhub needs.
my @mods = qw(mpm_event authz_core authz_user authn_core alias mime
    setenvif rewrite headers proxy proxy_http proxy_wstunnel authnz_fcgi
    fcgid xsendfile dir deflate filter remoteip);
# The server's configuration; $define goes before xmhub's.
sub server_conf {
	my ($define) = @_;
	spew("$dir/httpd.conf", join('',
	    map { "LoadModule ${_}_module $modules/mod_$_.so\n" } @mods) . <<"EOF");
ServerRoot $dir
ServerName 127.0.0.1
PidFile $dir/run/apache2.pid
DefaultRuntimeDir $dir/run
Mutex file:$dir/run default
ErrorLog $dir/log/error.log
LogLevel warn
LogFormat "%h %t \\"%r\\" %>s %b" common
CustomLog $dir/log/access.log common
TypesConfig /etc/mime.types
FcgidIPCDir $dir/run/fcgid
FcgidProcessTableFile $dir/run/fcgid_shm
${\($root ? "User xmhub\nGroup xmhub\n" : '')}$define
Include $dir/xmhub.conf
EOF
}
server_conf('');
my ($st, $out, $err) = run([$apache2, '-t', '-f', "$dir/httpd.conf"]);
is($st, 0, 'apache2 -t accepts the configuration') or diag "$out$err";

# cgi-bin/ingest-authorizer as the FastCGI daemon mod_authnz_fcgi calls:
# its listening socket on standard input, as systemd's StandardInput=
# socket gives it (doc/deploy.md).
my $listen = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
	LocalPort => $ph{AUTHZ_PORT}, Proto => 'tcp', Listen => 16,
	ReuseAddr => 1) or die "listen: $!\n";
my $authz = fork // die "fork: $!";
if ($authz == 0) {
	POSIX::setsid();
	open STDIN, '<&', $listen or die "dup: $!";
	open STDOUT, '>>', "$dir/log/authorizer.log" or die;
	open STDERR, '>&', \*STDOUT or die;
	my @cmd = ('env', "XMHUB_ENV_FILE=$ph{ENV_FILE}",
		"$build/cgi-bin/ingest-authorizer");
	@cmd = ('runuser', '-u', 'xmhub', '--', @cmd) if $root;
	exec @cmd or die "exec: $!";
}
close $listen;

($st, $out, $err) = run([$apache2, '-f', "$dir/httpd.conf", '-k', 'start']);
is($st, 0, 'apache2 starts') or diag "$out$err";
my $pid;
for (1 .. 100) {
	last if ($pid = eval { slurp("$dir/run/apache2.pid") })
	    && IO::Socket::INET->new(PeerAddr => "127.0.0.1:$ph{PORT}");
	sleep 0.1;
}
chomp $pid if defined $pid;
ok($pid, 'apache2 listens') or diag eval { slurp("$dir/log/error.log") };

END {
	my $status = $?;
	if ($pid && kill 0, $pid) {
		kill 'TERM', $pid;
		for (1 .. 100) { last unless kill 0, $pid; sleep 0.1 }
	}
	if ($authz) {
		kill 'TERM', -$authz;
		waitpid $authz, 0;
	}
	$? = $status;
}

# Xmhub::Platform's fixtures and requests, sent to Apache: the same
# object with a stack whose url() is Apache's.
{
	package Xmhub::ApacheFront;
	our @ISA = ('Xmhub::Stack');
	sub url { return "http://127.0.0.1:$_[0]{apache_port}" . ($_[1] // '/') }
	# Never stops the stack: the original does.
	sub stop { }
}
my $front = bless {%$s, apache_port => $ph{PORT}}, 'Xmhub::ApacheFront';
my $web = bless {%$p, stack => $front}, 'Xmhub::Platform';

# --- health, login ---
my ($b, $res);
($st, $b) = $web->req(GET => '/api/health/ready');
is($st, 200, 'ready: 200');
is($b->{status}, 'ready', 'ready: ready') or diag explain $b;
is_error($web->req(GET => '/api/healthz'), 404, '/api/healthz');
is_error($web->req(GET => '/nothing'), 404, 'a path of no program');

# --- the security headers, on the programs' answers and Apache's own ---
my %PLATFORM = (
	'x-content-type-options' => 'nosniff',
	'x-frame-options' => 'DENY',
	'content-security-policy' => "frame-ancestors 'none'",
	'referrer-policy' => 'no-referrer',
);
# headers_are(\%headers, $label): each once, as in httpd-conf/programs.
sub headers_are {
	my ($h, $label) = @_;
	is_deeply({map { $_ => $h->{$_} } keys %PLATFORM}, \%PLATFORM,
	    "$label: the security headers");
	ok(!exists $h->{'strict-transport-security'},
	    "$label: no Strict-Transport-Security unless defined");
}
($st, $b, $res) = $web->req(GET => '/api/health/ready?api_key=secret-query');
headers_are($res->{headers}, 'a program\'s 200');
($st, $b, $res) = $web->req(GET => '/api/auth/me');
headers_are($res->{headers}, 'a program\'s 401');
# (/api: the console's pages have their own, below.)
($st, $b, $res) = $web->req(GET => '/api/nothing');
is($st, 404, 'a path of no program under /api: 404');
headers_are($res->{headers}, 'Apache\'s own 404');

# raw_head($port, $head): the answer to a request head sent alone (no
# body): (status, {lower-case header => value}, body).
sub raw_head {
	my ($port, $head) = @_;
	my $c = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$port")
	    or die "connect: $!\n";
	print $c $head;
	my ($answer, $sel) = ('', IO::Select->new($c));
	while ($sel->can_read(20)) {
		my $n = sysread($c, my $buf, 65536);
		last unless $n;
		$answer .= $buf;
	}
	my ($st, $h, $body) =
	    $answer =~ /\AHTTP\/1\.1 (\d+)[^\n]*\r\n(.*?)\r\n\r\n(.*)\z/s
	    or return;
	return ($st, {map { /^([^:]+):\s*(.*)$/ ? (lc $1, $2) : () }
		split /\r\n/, $h}, $body);
}

# A Content-Length of 3 GB is refused before a byte is read, on each
# route class (uploads and ingest batches have their own limits).
for my $c (['/api/auth/login', $ph{PORT}], ['/api/v1/devices', $ph{PORT}],
	['/api/v1/uploads', $ph{PORT}],
	['/api/v1/ingest/sessions/00000000-0000-4000-8000-000000000000/data',
	    $ph{PORT}], ['/api/v1/detect', $ph{FACE_PORT}]) {
	my ($path, $port) = @$c;
	my ($st, $h, $body) = raw_head($port, "POST $path HTTP/1.1\r\n"
		. "Host: 127.0.0.1\r\nContent-Type: application/json\r\n"
		. "Content-Length: 3000000000\r\n\r\n");
	is($st, 413, "$path: 3 GB Content-Length: 413");
	like($body // '', qr/^\{"detail":"/, "$path: 413: a JSON detail");
	if ($port == $ph{PORT}) {
		headers_are($h, "$path: 413");
	} else {
		is($h->{'x-frame-options'}, 'DENY', "$path: 413: the headers");
	}
}

my $fac = $p->facility('Apache');
mkuser($p, 'apache-admin@example.org', 'correct horse', 'facility_admin',
    $fac);
my $l = login($web, 'apache-admin@example.org', 'correct horse');
ok($l->{access_token}, 'login through Apache');
my $token = $l->{access_token};
($st, $b) = $web->req(GET => '/api/auth/me', token => $token);
is($st, 200, '/api/auth/me: 200');
is($b->{email}, 'apache-admin@example.org', '/api/auth/me: the user');
is_error($web->req(GET => '/api/auth/me'), 401, '/api/auth/me without token');

# --- devices ---
($st, $b) = $web->req(POST => '/api/v1/devices', token => $token,
	json => {device_uid => 7, name => 'mast'});
is($st, 201, 'device create: 201') or diag explain $b;
($st, $b) = $web->req(GET => '/api/v1/devices', token => $token);
is($st, 200, 'device list: 200');
is_deeply([map { $_->{device_uid} } @{$b // []}], [7],
    'device list: the device') or diag explain $b;
($st, $b, $res) = $web->req(POST => '/api/v1/devices', token => $token,
	body => '{"name":"' . ('x' x (2 << 20)) . '"}');
is_error($st, $b, 413, 'a 2 MiB body outside uploads');
headers_are($res->{headers}, 'Apache\'s own 413');

($st, my $k) = $web->req(POST => '/api/v1/api-keys', token => $token,
	json => {name => 'recorder', scopes => ['upload', 'ingest']});
is($st, 200, 'an upload and ingest key') or diag explain $k;
my $key = $k->{key};
($st) = $web->req(GET => '/api/v1/ping', key => $key);
is($st, 200, '/api/v1/ping with the key: 200');

# --- upload, transcode, stream ---
my $wav = "$dir/tone.wav";
($st, $out, $err) = run(['sox', '-n', '-r', '44100', '-c', '2', '-b', '16',
	$wav, 'synth', '20', 'sine', '440']);
is($st, 0, 'a 20 s WAV') or diag $err;
my $audio = slurp($wav);
cmp_ok(length $audio, '>', 3_000_000, 'of a few MB');
my $bd = 'xmhub-apache-' . int(rand(1e9));
($st, my $u) = $web->req(POST => '/api/v1/uploads', key => $key,
	body => "--$bd\r\nContent-Disposition: form-data; name=\"file\"; "
	    . "filename=\"tone.wav\"\r\nContent-Type: audio/wav\r\n\r\n"
	    . "$audio\r\n--$bd--\r\n",
	headers => {'Content-Type' => "multipart/form-data; boundary=$bd"});
is($st, 200, 'upload: 200') or diag explain $u;
is($u->{original_size_bytes}, length $audio, 'upload: the whole file arrived')
    or diag explain $u;
# Without a key the access checker refuses it before mod_fcgid reads
# the body (doc/security.md "Bodies read after the credentials").
($st, $b) = $web->req(POST => '/api/v1/uploads', body => $audio,
	headers => {'Content-Type' => "multipart/form-data; boundary=$bd"});
is_error($st, $b, 401, 'upload without a key');
like($b->{detail} // '', qr/credentials were refused/,
    'upload without a key: refused by the access checker');

my @drain = ('env', 'XMHUB_ENV_FILE=' . $s->env_file,
	"$build/jobs/xmhub-transcode", '--drain');
@drain = ('runuser', '-u', 'xmhub', '--', @drain) if $root;
($st, $out, $err) = run(\@drain);
is($st, 0, 'the runner drains the queue') or diag "$out$err";
my $job = $p->sql("SELECT status FROM transcode_jobs WHERE upload_id = "
	. "'$u->{id}'");
is($job, 'completed', 'the transcode completed');

($st, undef, $res) = $web->req(GET => "/api/v1/streams/$u->{id}",
	token => $token);
is($st, 200, 'stream: 200');
my $whole = $res->{content} // '';
my $size = length $whole;
cmp_ok($size, '>', 10_000, 'stream: the transcoded file');
is($res->{headers}{'content-type'}, 'audio/webm', 'stream: audio/webm');
ok(!exists $res->{headers}{'x-sendfile'}, 'stream: X-Sendfile not leaked');
($st, undef, $res) = $web->req(GET => "/api/v1/streams/$u->{id}",
	token => $token, headers => {Range => 'bytes=100-1099'});
is($st, 206, 'stream Range: 206');
is($res->{headers}{'content-range'}, "bytes 100-1099/$size",
    'stream Range: Content-Range');
ok($res->{content} eq substr($whole, 100, 1000),
    'stream Range: those bytes');
($st, undef, $res) = $web->req(GET => "/api/v1/streams/$u->{id}",
	token => $token, headers => {Range => "bytes=$size-"});
is($st, 416, 'stream Range past the end: 416');
is($res->{headers}{'content-range'}, "bytes */$size",
    'stream 416: Content-Range');

# --- ingest over HTTP ---
my $in = Xmhub::Ingest->new($web, $key);
my $sess = $in->session(7, [0, 'f32']);
ok($sess->{id}, 'ingest session through Apache');
$b = $in->send($sess->{id}, 1, [0, 'f32', [[1000, 1.5], [2000, 2.5]]]);
is($b->{accepted_samples}, 2, 'ingest data: acknowledged')
    or diag explain $b;

# --- WebSocket ingest ---
my $wspath = "/api/v1/ingest/ws?session_id=$sess->{id}";
my ($ws, $wst, $head, $body) = Xmhub::WS->connect($ph{PORT}, $wspath, {});
ok(!$ws, 'upgrade without key: refused');
is($wst, 401, 'upgrade without key: 401');
like($body, qr/^\{"detail":/, 'upgrade without key: the authorizer\'s answer');
like($head, qr{^Content-Type: application/json}mi, 'upgrade without key: JSON');
($ws, $wst, $head, $body) = Xmhub::WS->connect($ph{PORT},
	'/api/v1/ingest/ws?session_id=00000000-0000-4000-8000-000000000000',
	{'X-Api-Key' => $key});
is($wst, 404, 'upgrade for no such session: 404');
($ws, $wst, $head, $body) = Xmhub::WS->connect($ph{PORT}, $wspath,
	{'X-Api-Key' => $key});
is($wst, 101, 'upgrade with the key: 101') or diag "$head$body";
if ($ws) {
	$ws->send_binary($in->encode(2, [0, 'f32', [[3000, 3.5]]]));
	my ($type, $ack) = $ws->read_message(30);
	is($type, 'binary', 'WebSocket: an ack message');
	is(length($ack // '') == 4 ? unpack('N', $ack) : undef, 3,
	    'WebSocket: accepted_samples 3');
	$ws->close;
}
($st, $b) = $web->req(GET => $wspath, key => $key);
is($st, 400, 'a plain GET of the WebSocket path: 400');

# --- the web console (doc/console.md) at / of the platform's port ---
{
	my $hc = HTTP::Tiny->new(timeout => 60);
	my $base = "http://127.0.0.1:$ph{PORT}";
	my $index = slurp("$build/console/index.htm");
	my $r = $hc->get("$base/");
	is($r->{status}, 200, 'console /: 200');
	is($r->{content}, $index, 'console /: index.htm');
	like($r->{headers}{'content-type'}, qr{^text/html}, 'console /: HTML');
	my $csp = $r->{headers}{'content-security-policy'} // '';
	like($csp, qr/default-src 'none'; script-src 'self'/,
	    "console /: the console's Content-Security-Policy");
	like($csp, qr{connect-src 'self' http://127\.0\.0\.1:$ph{FACE_PORT} },
	    'console /: the face port in connect-src');
	unlike($csp, qr/unsafe-inline/, 'console /: no inline script');
	is($r->{headers}{'x-frame-options'}, 'DENY',
	    "console /: the platform's other headers");
	is($r->{headers}{'cache-control'}, 'no-cache',
	    "console /: the console's Cache-Control");
	$r = $hc->get("$base/js/app.mjs",
		{headers => {'Accept-Encoding' => 'gzip'}});
	is($r->{status}, 200, 'console: a module');
	like($r->{headers}{'content-type'}, qr{^text/javascript},
	    'console: .mjs is text/javascript');
	is($r->{headers}{'content-encoding'}, 'gzip',
	    'console: compressed as sent (mod_deflate)');
	$r = $hc->get("$base/api/health");
	is($r->{status}, 200, 'console: /api stays the programs\'');
	is($r->{headers}{'content-security-policy'}, "frame-ancestors 'none'",
	    "console: the API keeps the platform's policy");
	$r = $hc->get("$base/no-such-page");
	is($r->{status}, 404, 'console: a missing file is 404');
	like($r->{content}, qr/"detail"/, 'console: as {"detail": ...}');
}

# --- the platform API's pages (t/e2e/openapi.t checks them in full) ---
for my $page (qw(/api/openapi.json /api/docs /api/redoc
    /api/www/swagger-ui/swagger-ui-bundle.js /api/www/redoc/redoc.standalone.js)) {
	$res = HTTP::Tiny->new->get("http://127.0.0.1:$ph{PORT}$page");
	is($res->{status}, 200, "$page: 200");
	like($res->{headers}{'content-type'} // '',
	    qr{^(application/json|text/html|text/javascript)}, "$page: its type");
}

# --- the face service ---
my $http = HTTP::Tiny->new(timeout => 60);
my $face = "http://127.0.0.1:$ph{FACE_PORT}";
$res = $http->get("$face/health");
is($res->{status}, 200, 'face /health: 200') or diag $res->{content};
like($res->{content}, qr/"status"/, 'face /health: its body');
is($res->{headers}{'x-frame-options'}, 'DENY',
    'face /health: the program\'s own headers, not doubled');
$res = $http->get("$face/openapi.json");
is($res->{status}, 200, 'face /openapi.json: 200');
ok(eval { $json->decode($res->{content})->{openapi} }, 'an OpenAPI document');
for my $page (qw(/docs /redoc)) {
	$res = $http->get("$face$page");
	is($res->{status}, 200, "face $page: 200");
	like($res->{headers}{'content-type'}, qr{^text/html}, "face $page: HTML");
	is($res->{headers}{'x-frame-options'}, 'DENY', "face $page: headers");
}
$res = $http->get("$face/static/swagger-ui/swagger-ui-bundle.js");
is($res->{status}, 200, 'face: the Swagger UI assets');
is($http->get("$face/api/v1/devices")->{status}, 404,
    'face port: no platform route');
is($http->get("http://127.0.0.1:$ph{PORT}/health")->{status}, 404,
    'platform port: no face route');
$res = $http->get("$face/api/v1/admin/stats");
is($res->{status}, 401, 'face admin without login: 401');

# The access log has paths, not queries.
my $access = eval { slurp("$dir/log/xmhub-access.log") } // '';
like($access, qr{"GET /api/health/ready HTTP/1\.1" 200 },
    'access log: the path');
unlike($access, qr/secret-query/, 'access log: no query');

# Behind a balancer: its X-Forwarded-For is ignored until it is trusted.
is(login_addr($s, "http://127.0.0.1:$ph{PORT}", '127.0.0.1', '203.0.113.7'),
    '127.0.0.1', 'no XMHUB_TRUSTED_PROXIES: X-Forwarded-For ignored');

# Strict-Transport-Security once defined (behind TLS); the balancer
# 127.0.0.1 trusted.
server_conf(qq{Define XMHUB_HSTS "max-age=600"\n}
    . qq{Define XMHUB_TRUSTED_PROXIES "127.0.0.1"});
($st, $out, $err) = run([$apache2, '-f', "$dir/httpd.conf", '-k', 'graceful']);
is($st, 0, 'apache2 reloads with XMHUB_HSTS and XMHUB_TRUSTED_PROXIES '
    . 'defined') or diag "$out$err";
my $hsts;
for (1 .. 100) {
	$res = HTTP::Tiny->new->get("http://127.0.0.1:$ph{PORT}/nothing");
	last if defined($hsts = $res->{headers}{'strict-transport-security'});
	sleep 0.1;
}
is($hsts, 'max-age=600', 'XMHUB_HSTS: Strict-Transport-Security');
is(login_addr($s, "http://127.0.0.1:$ph{PORT}", '127.0.0.1', '203.0.113.7'),
    '203.0.113.7', 'XMHUB_TRUSTED_PROXIES: the client of the balancer\'s '
    . 'X-Forwarded-For (mod_remoteip)');
is(login_addr($s, "http://127.0.0.1:$ph{PORT}", '127.0.0.3', '198.51.100.9'),
    '127.0.0.3', 'from another address: its X-Forwarded-For is ignored');

# Every 503 says Retry-After (httpd-conf/programs, "error 503 ...
# retry-after=2"): Apache's own (no WebSocket front behind
# mod_proxy_wstunnel) and a program's, which keeps its own, once.
ok($s->stop_daemon('ws-guard'), 'the WebSocket front stopped');
($ws, $wst, $head, $body) = Xmhub::WS->connect($ph{PORT}, $wspath,
	{'X-Api-Key' => $key});
is($wst, 503, 'no WebSocket front: Apache answers 503 itself')
    or diag "$head$body";
is(join(',', $head =~ /^Retry-After:\s*(\S+)\r$/mig), '2',
    'with Retry-After: 2, once');
$s->stop_db;
$res = HTTP::Tiny->new->get("http://127.0.0.1:$ph{PORT}/api/health/ready");
is($res->{status}, 503, 'PostgreSQL stopped: the program answers 503');
is($res->{headers}{'retry-after'}, 2, 'with its Retry-After, not doubled');
$s->start_db;

# Nothing crashed on the way.
my $log = eval { slurp("$dir/log/error.log") } // '';
unlike($log, qr/segfault|exit signal|Premature end|Sanitizer|runtime error/i,
    'no program crashed') or diag $log;

done_testing;
