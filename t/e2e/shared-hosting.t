#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# xmhub on a classic shared host (doc/shared-hosting.md): an account
# without root, its programs in public_html behind an .htaccess, run as
# the account by suexec, a PostgreSQL role that owns its database and
# nothing more, runners from the account's crontab.
#
# As root (CI): an unprivileged user made here installs the build into
# its home (make install prefix=~/xmhub) and writes its settings into
# ~/.config/xmhub/xmhub.env; Apache runs as a web user of its own, with
# suexec (apache2-suexec-custom, configured for that user only:
# /etc/apache2/suexec/USER) running the programs as the account.  Not as
# root: the caller is the account and Apache's user, the equivalent of
# suexec's per-user execution, and the settings' file is named by HOME.
#
# Two Apaches, one with mod_fcgid and one without (mod_cgid: each
# program then serves one request per process, lib/web/cgi.h), serve the
# same public_html; through each: login, facilities, users, API keys, an
# upload transcoded by a runner's --cron pass (a pass held off while
# another holds the lock) and played back, HTTP ingest and its samples
# read back, the body limits, headers and error answers of the table of
# programs; the web console at / of public_html, its headers, types and
# compression, an upgrade replacing its files, and a browser signing in
# through it.
use strict;
use warnings;
use File::Temp qw(tempdir);
use Fcntl qw(:flock);
use HTTP::Tiny;
use JSON::PP;
use Test::More;
use Xmhub::Ingest;
use Xmhub::Pg;
use Xmhub::Platform qw(is_error);
use Xmhub::SharedHost;
use Xmhub::Test qw(run);

my $build = $ENV{XMHUB_BUILDDIR} or BAIL_OUT('XMHUB_BUILDDIR is not set');
my $root = $> == 0;

# A file's bytes; a file written.
sub slurp { local $/; open my $f, '<:raw', $_[0] or die "$_[0]: $!\n"; <$f> }
sub spew { my $f; open($f, '>:raw', $_[0]) && print($f $_[1]) && close($f)
	    or die "$_[0]: $!\n" }

# --- the account and the web server's user ---
my $top = tempdir('xmhub-host-XXXXXX', TMPDIR => 1, CLEANUP => 1);
chmod 0755, $top;
my ($acct, $web_user) = ("xmhub-acct$$", 'xmhub-web');
my $home = "$top/home";
my %made_user;
if ($root) {
	BAIL_OUT('suexec not found: apt-get install apache2-suexec-custom')
	    unless -u '/usr/lib/apache2/suexec-custom';
	# suexec-custom runs only for group www-data (its mode), and reads
	# /etc/apache2/suexec/USER of the web server's user.
	if (!getpwnam($web_user)) {
		my ($st, $o, $e) = run(['useradd', '--system', '--gid',
			'www-data', '--no-create-home', '--home-dir',
			'/nonexistent', '--shell', '/usr/sbin/nologin', $web_user]);
		die "useradd $web_user: $e" if $st;
	}
	my ($st, $o, $e) = run(['useradd', '--system', '--user-group',
		'--create-home', '--home-dir', $home, '--shell', '/bin/sh',
		$acct]);
	die "useradd $acct: $e" if $st;
	$made_user{$acct} = 1;
	# The document root suexec allows: the account's home.
	spew("/etc/apache2/suexec/$web_user", "$home\npublic_html\n");
} else {
	mkdir $home, 0755 or die "$home: $!";
	$acct = getpwuid($>);
}
chmod 0711, $home;
my ($uid, $gid) = $root ? (getpwnam($acct))[2, 3] : ($>, (split ' ', $))[0]);
ok($uid != 0, 'the account is not root');

# as_acct(\@cmd, $stdin): the command as the account, with the
# environment cron gives it (HOME, PATH) and nothing else.
sub as_acct {
	my ($cmd, $in) = @_;
	my @env = ('env', '-i', "HOME=$home", 'PATH=/usr/bin:/bin',
		"USER=$acct");
	return run([$root ? ('runuser', '-u', $acct, '--') : (), @env, @$cmd],
	    $in);
}

# --- install into the home ---
my $prefix = "$home/xmhub";
my ($st, $out, $err) = as_acct(['make', '-s', '-C', $build, 'install',
	"prefix=$prefix"]);
is($st, 0, 'make install prefix=~/xmhub as the account') or diag "$out$err";
ok(-x "$prefix/libexec/xmhub/cgi-bin/auth", 'the programs installed');

# --- PostgreSQL as a hosting panel gives it ---
my $pg = Xmhub::Pg->shared // Xmhub::Pg->start;
my ($role, $db, $pw) = ("host_$$", "host_db_$$", "pw$$" . int(rand(1e9)));
($st, $out, $err) = $pg->psql("CREATE ROLE $role LOGIN PASSWORD '$pw' "
	. "NOSUPERUSER NOCREATEDB NOCREATEROLE", 'postgres');
is($st, 0, 'an ordinary role') or diag $err;
($st, $out, $err) = $pg->psql(qq{CREATE DATABASE "$db" OWNER $role},
	'postgres');
is($st, 0, 'a database it owns') or diag $err;
END {
	$pg->psql(qq{DROP DATABASE IF EXISTS "$db" WITH (FORCE)}, 'postgres')
	    if $pg && $db;
	$pg->psql("DROP ROLE IF EXISTS $role", 'postgres') if $pg && $role;
}
($st, $out) = $pg->psql("SELECT rolsuper OR rolcreatedb OR rolcreaterole "
	. "FROM pg_roles WHERE rolname = '$role'", 'postgres');
is($out, "f\n", 'neither superuser nor allowed to create databases or roles');

# --- the settings, outside the web root ---
my $data = "$home/xmhub-data";
my $env = join '', map { "$_\n" }
    "XMHUB_DATABASE_URL=postgresql://$role:$pw\@127.0.0.1:" . $pg->port
	. "/$db",
    'XMHUB_JWT_SECRET=' . join('', map { ('a' .. 'z')[rand 26] } 1 .. 48),
    "XMHUB_STORAGE_DIR=$data/objects", "XMHUB_TMP_DIR=$data/tmp",
    "XMHUB_SQL_DIR=$prefix/share/xmhub/sql", "XMHUB_LOCK_DIR=$data/lock",
    "XMHUB_SLOT_DIR=$data/slots", "XMHUB_METRICS_FILE=$data/metrics",
    'XMHUB_SENDFILE=false',
    # make install prefix= keeps configure's paths in the programs: the
    # one a --prefix build would have.
    "FACE_API_MODEL_DIR=$prefix/share/xmhub/models";
($st, $out, $err) = as_acct(['sh', '-c', 'umask 077 && mkdir -p '
	. "$home/.config/xmhub $data/objects $data/tmp $data/lock $data/slots "
	. "$home/public_html && cat > $home/.config/xmhub/xmhub.env && "
	. "chmod 755 $home/public_html"], $env);
is($st, 0, 'the settings in ~/.config/xmhub/xmhub.env') or diag $err;

my $xmhub = "$prefix/bin/xmhub";
($st, $out, $err) = as_acct([$xmhub, 'migrate']);
is($st, 0, 'xmhub migrate as the ordinary role') or diag "$out$err";
($st, $out, $err) = as_acct([$xmhub, 'check-config']);
is($st, 0, 'xmhub check-config finds the settings in the home')
    or diag "$out$err";

# `xmhub httpd-conf htaccess --public ~/public_html` with the installed
# tree's directories (that build's xmhub passes its configure's, here the
# build tree's, so the installed generator is run as it would run it).
($st, $out, $err) = as_acct(["$prefix/libexec/xmhub/httpd-conf-gen",
	"--dir=$prefix/share/xmhub/httpd-conf", 'site', 'htaccess',
	"--libexecdir=$prefix/libexec", "--pkgdatadir=$prefix/share/xmhub",
	"--sysconfdir=$prefix/etc", "--public=$home/public_html"]);
is($st, 0, 'the site made in public_html') or diag "$out$err";
my $public = "$home/public_html";
ok(-x "$public/xmhub-cgi/auth.cgi", 'the programs copied as NAME.cgi');
like(slurp("$public/.htaccess"),
    qr{^RewriteRule \^\(api/auth\.\*\)\$ xmhub-cgi/auth\.cgi/\$1 \[END\]$}m,
    '.htaccess: a route rewritten to its program');
is((stat "$public/xmhub-cgi/auth.cgi")[4], $uid, 'owned by the account');
ok(-f "$public/xmhub-console/index.htm", 'the console in xmhub-console/');
# What a run stopped before its swap leaves: served by no address, gone
# after the next run (below).
($st, $out, $err) = as_acct(['cp', '-r', "$public/xmhub-console",
	"$public/xmhub-console.new"]);
is($st, 0, 'a copy left by an interrupted run') or diag $err;

# The shared host's face page replaces the console's: it must export
# every name the console's modules import from it.
my $share = "$prefix/share/xmhub/console";
my %imported = map { $_ => 1 } map { /import\s*\{([^}]*)\}\s*from\s*'\.\/face\.mjs'/
	    ? split(/[\s,]+/, $1 =~ s/^\s+//r) : () } map { slurp($_) }
    glob "$share/js/*.mjs";
my $face = slurp("$public/xmhub-console/js/face.mjs");
my @missing = grep { $face !~ /^export (?:const|function) \Q$_\E\b/m }
    sort keys %imported;
ok(%imported && !@missing, 'the face page a shared host serves exports '
    . join(', ', sort keys %imported)) or diag "missing: @missing";

($st, $out, $err) = as_acct([$xmhub, 'user', 'create', '--email',
	'root@host.example', '--password', '-', '--role', 'super_admin'],
    "correct horse\n");
is($st, 0, 'a super admin, made by the account') or diag $err;

# --- the web servers ---
my %host;
END {
	my $status = $?;
	# Before the users go: their programs end with the servers.
	$_->stop for values %host;
	if ($root) {
		unlink "/etc/apache2/suexec/$web_user";
		run(['userdel', $_]) for keys %made_user;
	}
	$? = $status;
}
for my $mode (qw(cgi fcgid)) {
	$host{$mode} = eval { Xmhub::SharedHost->start(mode => $mode,
		public => $public, dir => "$top/apache",
		$root ? (user => $web_user, group => 'www-data',
			suexec => $acct) : (env => {HOME => $home})) };
	ok($host{$mode}, "apache2 ($mode) serves public_html") or diag $@;
}
like($host{fcgid}->error_log, qr/suEXEC mechanism enabled/,
    'suexec is enabled') if $root;

# The web console at / of public_html: its page with the console's
# headers (its Content-Security-Policy connecting to its own origin only:
# no face service here), its modules as JavaScript and compressed, the
# service worker at /sw.js, one address per file, /api not shadowed.
sub console_checks {
	my ($mode, $h) = @_;
	my $http = HTTP::Tiny->new(timeout => 60);
	my $res = $http->get($h->url('/'));
	is($res->{status}, 200, "$mode: GET / is the console");
	like($res->{content}, qr{<title>xmhub console</title>},
	    "$mode: its index.htm");
	is($res->{headers}{'content-type'}, 'text/html; charset=utf-8',
	    "$mode: the page is HTML");
	my $csp = $res->{headers}{'content-security-policy'} // '';
	like($csp, qr/^default-src 'none'; script-src 'self';.*connect-src 'self';/,
	    "$mode: the console's CSP, once, with connect-src 'self' only")
	    or diag explain $csp;
	is($res->{headers}{'cache-control'}, 'no-cache', "$mode: no-cache");
	is($res->{headers}{'x-content-type-options'}, 'nosniff',
	    "$mode: and the platform's headers");
	$res = $http->get($h->url('/js/app.mjs'),
	    {headers => {'Accept-Encoding' => 'gzip'}});
	is($res->{status}, 200, "$mode: a module");
	is($res->{headers}{'content-type'}, 'text/javascript',
	    "$mode: .mjs is text/javascript");
	is($res->{headers}{'content-encoding'}, 'gzip', "$mode: compressed");
	$res = $http->get($h->url('/sw.js'));
	is($res->{status}, 200, "$mode: the service worker at /sw.js");
	is($res->{headers}{'content-type'}, 'text/javascript',
	    "$mode: as JavaScript");
	like($http->get($h->url('/js/face.mjs'))->{content},
	    qr/not available on this server/, "$mode: the face page: none here");
	is($http->get($h->url("/$_/index.htm"))->{status}, 404,
	    "$mode: /$_/ not served: one address per file")
	    for 'xmhub-console', 'xmhub-console.new';
	$res = $http->get($h->url('/api/health'));
	is($res->{status}, 200, "$mode: /api still reaches the API");
	is($res->{headers}{'content-security-policy'}, "frame-ancestors 'none'",
	    "$mode: with the platform's CSP");
}

# The random part of X-Request-Id is drawn once per process
# (lib/web/app.c): the same under mod_fcgid, a new one per request as
# plain CGI.
sub id_base { return substr($_[0]{headers}{'x-request-id'} // '', 0, 24) }

my $wav = "$top/tone.wav";
($st, $out, $err) = run(['sox', '-n', '-r', '44100', '-c', '1', '-b', '16',
	$wav, 'synth', '3', 'sine', '440']);
is($st, 0, 'a 3 s WAV') or diag $err;
my $audio = slurp($wav);

for my $mode (sort keys %host) {
	my $web = $host{$mode}->platform;
	my ($b, $res, $r2);

	# --- health, the headers, what is not served ---
	($st, $b, $res) = $web->req(GET => '/api/health/ready');
	is($st, 200, "$mode: ready") or diag explain $b;
	is($b->{database}, 'ok', "$mode: ready: the database");
	is($res->{headers}{'x-frame-options'}, 'DENY',
	    "$mode: the platform's headers");
	(undef, undef, $r2) = $web->req(GET => '/api/health');
	if ($mode eq 'cgi') {
		isnt(id_base($r2), id_base($res), 'cgi: a process per request');
	} else {
		my (undef, undef, $r3) = $web->req(GET => '/api/health');
		is(id_base($r3), id_base($r2), 'fcgid: a process serves again');
	}
	is_error($web->req(GET => '/api/nothing'), 404, "$mode: no program");
	($st, $b, $res) = $web->req(GET => '/nothing');
	is_error($st, $b, 404, "$mode: Apache's own 404");
	is($res->{headers}{'x-content-type-options'}, 'nosniff',
	    "$mode: Apache's own answer: the headers");
	($st, undef, $res) = $web->req(GET => '/xmhub-cgi/.htaccess');
	is($st, 403, "$mode: .htaccess not served");
	($st, undef, $res) = $web->req(GET => '/xmhub-cgi/auth.cgi');
	unlike($res->{content} // '', qr/^\x7fELF/, "$mode: a program not "
	    . 'served as a file');
	console_checks($mode, $host{$mode});

	# --- login, facilities, users, keys ---
	($st, $b) = $web->req(POST => '/api/auth/login',
		json => {email => 'root@host.example',
			password => 'correct horse'});
	is($st, 200, "$mode: login") or diag explain $b;
	my $root_token = $b->{access_token};
	($st, $b) = $web->req(GET => '/api/auth/me', token => $root_token);
	is($b->{email}, 'root@host.example', "$mode: /api/auth/me");
	is_error($web->req(GET => '/api/auth/me'), 401,
	    "$mode: /api/auth/me without a token");
	($st, my $fac) = $web->req(POST => '/api/v1/facilities',
		token => $root_token, json => {name => "Host $mode",
			slug => "host-$mode"});
	is($st, 200, "$mode: a facility") or diag explain $fac;
	($st, my $u) = $web->req(POST => '/api/v1/users', token => $root_token,
		json => {email => "admin-$mode\@host.example",
			password => 'battery staple', role => 'facility_admin',
			facility_id => $fac->{id}, display_name => 'Admin'});
	is($st, 200, "$mode: a facility admin") or diag explain $u;
	($st, $b) = $web->req(POST => '/api/auth/login',
		json => {email => "admin-$mode\@host.example",
			password => 'battery staple'});
	my $token = $b->{access_token};
	ok($token, "$mode: the admin logs in");
	($st, $b) = $web->req(POST => '/api/v1/devices', token => $token,
		json => {device_uid => 7, name => 'mast'});
	is($st, 201, "$mode: a device") or diag explain $b;
	($st, my $k) = $web->req(POST => '/api/v1/api-keys', token => $token,
		json => {name => 'recorder', scopes => ['upload', 'ingest']});
	is($st, 200, "$mode: an API key") or diag explain $k;
	my $key = $k->{key};
	is(($web->req(GET => '/api/v1/ping', key => $key))[0], 200,
	    "$mode: /api/v1/ping with it");
	is_error($web->req(POST => '/api/v1/devices', token => $token,
		body => '{"name":"' . ('x' x (2 << 20)) . '"}'), 413,
	    "$mode: a body over the route's limit");

	# --- upload, a cron pass, playback ---
	my $bd = 'xmhub-host-' . int(rand(1e9));
	($st, my $up) = $web->req(POST => '/api/v1/uploads', key => $key,
		body => "--$bd\r\nContent-Disposition: form-data; "
		    . "name=\"file\"; filename=\"tone.wav\"\r\nContent-Type: "
		    . "audio/wav\r\n\r\n$audio\r\n--$bd--\r\n",
		headers => {'Content-Type' =>
		    "multipart/form-data; boundary=$bd"});
	is($st, 200, "$mode: upload") or diag explain $up;
	is($up->{original_size_bytes}, length $audio, "$mode: all of it");
	my @objects = glob "$data/objects/$fac->{id}/uploads/$up->{id}/*";
	ok(@objects && !grep({ (stat)[4] != $uid } @objects),
	    "$mode: stored by the account, outside the web root");

	# Another pass holds the runner's lock: this one does nothing.
	my $cron = ["$prefix/libexec/xmhub/jobs/xmhub-transcode", '--cron'];
	my $lockfile = "$data/lock/xmhub-transcode.lock";
	open my $lock, '>>', $lockfile or die "$lockfile: $!";
	chown $uid, $gid, $lockfile;
	flock($lock, LOCK_EX) or die "flock: $!";
	($st, $out, $err) = as_acct($cron);
	is($st, 0, "$mode: a cron pass while another runs: exit 0")
	    or diag $err;
	($st, $b) = $web->req(GET => "/api/v1/uploads/$up->{id}",
		token => $token);
	is($b->{status}, 'pending', "$mode: and the upload waits");
	close $lock;
	($st, $out, $err) = as_acct($cron);
	is($st, 0, "$mode: the next cron pass") or diag "$out$err";
	($st, $b) = $web->req(GET => "/api/v1/uploads/$up->{id}",
		token => $token);
	is($b->{status}, 'completed', "$mode: transcoded") or diag explain $b;
	($st, undef, $res) = $web->req(GET => "/api/v1/streams/$up->{id}",
		token => $token);
	is($st, 200, "$mode: played back");
	my $whole = $res->{content} // '';
	cmp_ok(length $whole, '>', 1000, "$mode: the transcoded file");
	is($res->{headers}{'content-type'}, 'audio/webm', "$mode: audio/webm");
	ok(!exists $res->{headers}{'x-sendfile'}, "$mode: no X-Sendfile");
	($st, undef, $res) = $web->req(GET => "/api/v1/streams/$up->{id}",
		token => $token, headers => {Range => 'bytes=100-199'});
	is($st, 206, "$mode: a range");
	ok(($res->{content} // '') eq substr($whole, 100, 100),
	    "$mode: those bytes");

	# --- HTTP ingest and its samples ---
	my $in = Xmhub::Ingest->new($web, $key);
	my $sess = $in->session(7, [0, 'f32']);
	ok($sess->{id}, "$mode: an ingest session");
	$b = $in->send($sess->{id}, 1, [0, 'f32', [[1000, 1.5], [2000, 2.5]]]);
	is($b->{accepted_samples}, 2, "$mode: a batch acknowledged");
	$b = $in->send($sess->{id}, 2, [0, 'f32', [[3000, 3.5]]]);
	is($b->{accepted_samples}, 3, "$mode: another");
	is_deeply([$in->read_all($token, $sess->{id}, 0)],
	    [[1000, 1.5], [2000, 2.5], [3000, 3.5]], "$mode: read back");
	is($in->close($sess->{id})->{status}, 'closed', "$mode: closed");
}

# --- an upgrade: the console's files replaced, none of the old left ---
# (run with the umask of doc/shared-hosting.md's step 2: what it makes is
# read by the web server's user all the same)
my $site = ["$prefix/libexec/xmhub/httpd-conf-gen",
	"--dir=$prefix/share/xmhub/httpd-conf", 'site', 'htaccess',
	"--libexecdir=$prefix/libexec", "--pkgdatadir=$prefix/share/xmhub",
	"--sysconfdir=$prefix/etc", "--public=$public"];
my $get = sub { (HTTP::Tiny->new->get($host{fcgid}->url($_[0])))->{status} };
($st, $out, $err) = as_acct(['sh', '-c', "umask 077 && echo 'export {};' "
	. "> $share/js/gone.mjs && exec \"\$@\"", 'sh', @$site]);
is($st, 0, 'a release with js/gone.mjs installed') or diag "$out$err";
is($get->('/js/gone.mjs'), 200, 'its js/gone.mjs served');
($st, $out, $err) = as_acct(['sh', '-c', "umask 077 && rm $share/js/gone.mjs "
	. "&& echo 'export {};' > $share/js/new.mjs && exec \"\$@\"", 'sh',
	@$site]);
is($st, 0, 'the next release, without it and with js/new.mjs')
    or diag "$out$err";
is($get->('/js/new.mjs'), 200, 'the new file served');
is($get->('/js/gone.mjs'), 404, 'the removed file no longer served');
ok(!-e "$public/xmhub-console.new" && !-e "$public/xmhub-console.old",
    'no copy of a release left beside the console');
is($get->('/'), 200, 'the console still at /');

# --- a browser signs in through the shared host ---
my $npm = $ENV{XMHUB_NPM_DIR} // "$ENV{XMHUB_SRCDIR}/_build/npm";
my $chromium = $ENV{CONSOLE_CHROMIUM} // '/usr/bin/chromium';
-x $chromium or BAIL_OUT("$chromium is missing: ./dev deps installs it");
{
	local $ENV{CONSOLE_URL} = $host{fcgid}->url('');
	local $ENV{CONSOLE_LOGIN} = 'root@host.example correct horse';
	local $ENV{XMHUB_NPM_DIR} = $npm;
	open my $run, '-|', 'node',
	    "$ENV{XMHUB_SRCDIR}/t/console/shared-host.mjs" or die "node: $!";
	my $n = 0;
	while (my $line = <$run>) {
		my $r = eval { decode_json($line) };
		if (!$r) {
			diag "shared-host.mjs: $line";
			next;
		}
		$n++;
		ok($r->{ok}, "browser: $r->{name}") or diag $r->{diag};
	}
	close $run;
	is($?, 0, 'the browser script ends cleanly');
	is($n, 5, 'the browser script reported its checks');
}

# Nothing crashed, under either server.
for my $mode (sort keys %host) {
	my $log = $host{$mode}->error_log;
	unlike($log, qr/segfault|exit signal|Premature end|Sanitizer|runtime error/i,
	    "$mode: no program crashed") or diag $log;
}

done_testing;
