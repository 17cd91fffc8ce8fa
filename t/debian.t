#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# debian/: the packages build from a copy of the tree with
# dpkg-buildpackage, lintian finds no error in them, and once installed
# (dpkg -i, as root) they serve from the installed files alone: the
# system user, the directories and the settings file made by postinst
# (root:xmhub 0640, a JWT secret of its own), `xmhub migrate` on a
# PostgreSQL of the test's, lighttpd started with the commands of the
# installed xmhub-lighttpd.service (its configuration from `xmhub
# httpd-conf lighttpd`) answering /api/health, /api/health/ready, the
# face service's /health and a detection (OpenCV) with writable
# executable memory refused as MemoryDenyWriteExecute= does (the kernel's
# PR_SET_MDWE, where it has it); every installed unit rated below 4 by
# `systemd-analyze security`.  Purging removes the settings file; the
# test removes what is left (doc/packaging.md).
use strict;
use warnings;
use File::Temp qw(tempdir);
use HTTP::Tiny;
use IO::Socket::INET;
use JSON::PP;
use POSIX qw(WNOHANG);
use Test::More;
use Time::HiRes qw(sleep time);
use Xmhub::Face qw(photo);
use Xmhub::Stack;
use Xmhub::Test qw(run);

sub free_port { return Xmhub::Stack::free_port() }

my $src = $ENV{XMHUB_SRCDIR} or die "XMHUB_SRCDIR is not set\n";
my @pkgs = qw(xmhub xmhub-face libxmbp-dev);
my $env_file = '/etc/xmhub/xmhub.env';

# stop($why): this file fails here, the other test files still run.
sub stop { diag $_[0]; done_testing(); exit 1 }

# Installing packages needs root (CI runs ./dev check as root).
is($>, 0, 'runs as root (dpkg -i)') or stop('t/debian.t installs packages '
    . 'into this machine: run it as root');
# Never touch an xmhub installed by someone else.
my ($st, $out) = run(['dpkg-query', '-W', '-f=${db:Status-Status}', 'xmhub']);
isnt($out, 'installed', 'no xmhub package installed before the test')
    or stop('xmhub is installed on this machine; the test purges its own');
ok(!-e $env_file && !-e '/var/lib/xmhub', "no $env_file, no /var/lib/xmhub")
    or stop('an xmhub installation is here; the test would replace it');

my $tmp = tempdir(CLEANUP => 1);
chmod 0755, $tmp;
# $ours: from dpkg -i on, /var/lib/xmhub and /run/xmhub-lighttpd are the
# test's to remove.
my ($lighttpd_pid, $pg_ctl, $pg_dir, $installed, $ours);

sub cleanup {
	if ($lighttpd_pid) {
		kill 'TERM', $lighttpd_pid;
		waitpid($lighttpd_pid, 0);
		$lighttpd_pid = undef;
	}
	if ($pg_ctl) {
		run(['setpriv', '--reuid=xmhub', '--regid=xmhub', '--init-groups',
		    $pg_ctl, '-D', $pg_dir, '-m', 'fast', '-w', 'stop']);
		$pg_ctl = undef;
	}
	if ($installed) {
		run(['dpkg', '--purge', @pkgs]);
		$installed = 0;
	}
	system('rm', '-rf', '/var/lib/xmhub', '/run/xmhub-lighttpd') if $ours;
}
END { cleanup() }
$SIG{INT} = $SIG{TERM} = sub { cleanup(); exit 1 };

# --- build ---

# A copy without build trees: dpkg-buildpackage writes beside the tree
# and into debian/.
my $tree = "$tmp/xmhub";
mkdir $tree or die "$tree: $!\n";
my @exclude = map { "--exclude=./$_" } qw(_build var .git debian/build
    debian/tmp autom4te.cache config.status config.log Makefile config.h
    xmbp.pc);
($st, undef, my $err) = run(['tar', '-C', $src, @exclude, '-cf',
    "$tmp/src.tar", '.']);
($st, undef, $err) = run(['tar', '-C', $tree, '-xf', "$tmp/src.tar"])
    if $st == 0;
is($st, 0, 'the tree copied') or diag $err;
system('chmod', '-R', 'u+w', $tree);

# The previous version, for the upgrade: the same tree without its newest
# migration, an older version in debian/changelog.
my $old_tree = "$tmp/old/xmhub";
system('mkdir', '-p', $old_tree);
($st, undef, $err) = run(['tar', '-C', $old_tree, '-xf', "$tmp/src.tar"]);
is($st, 0, 'the previous version copied') or diag $err;
system('chmod', '-R', 'u+w', $old_tree);
my ($newest) = (sort map { m{([^/]+)\.sql$} } glob "$old_tree/sql/*.sql")[-1];
ok($newest && unlink("$old_tree/sql/$newest.sql"),
    "the previous version lacks the newest migration, $newest");
for (['Makefile.am', qr{\s*sql/\Q$newest\E\.sql}],
    ['debian/changelog', qr{^xmhub \(\K([^)~]+)}]) {
	my ($f, $re) = @$_;
	my $t = do { local (@ARGV, $/) = "$old_tree/$f"; <> };
	$f eq 'Makefile.am' ? $t =~ s/$re//g : $t =~ s/$re/$1~old1/;
	open my $w, '>', "$old_tree/$f" or die "$old_tree/$f: $!\n";
	print {$w} $t;
	close $w or die "$old_tree/$f: $!\n";
}

my %build_env = (DEB_BUILD_OPTIONS => 'nocheck parallel=2');
# Builds share the compiler cache of ./dev's trees when there is one.
if (!system('sh', '-c', 'command -v ccache >/dev/null')) {
	%build_env = (%build_env, CC => 'ccache gcc', CXX => 'ccache g++');
}
# Offline, as a Debian builder: a network namespace of its own (no
# network at all) and no npm folder; what the pages serve is in vendor/.
sub build {
	my ($dir, $what) = @_;
	my $t0 = time;
	my ($st, $out, $err) = run(['unshare', '--net', 'env', '-u',
	    'XMHUB_NPM_DIR', map({ "$_=$build_env{$_}" } sort keys %build_env),
	    'sh', '-c', 'cd "$0" && exec dpkg-buildpackage -us -uc -b', $dir]);
	is($st, 0, "$what: dpkg-buildpackage -us -uc -b, with no network and "
	    . 'no npm') or stop(substr($out . $err, -4000));
	diag sprintf('%s: the packages built in %.0f s', $what, time - $t0);
	(my $up = $dir) =~ s{/[^/]+$}{};
	my %deb = map { $_ => (glob "$up/${_}_*.deb")[0] } @pkgs;
	ok(defined $deb{$_} && -s $deb{$_}, "$what: $_ built") for @pkgs;
	return %deb;
}
my %deb = build($tree, 'this version');
my %old_deb = build($old_tree, 'the previous version');

my ($changes) = glob "$tmp/xmhub_*.changes";
($st, $out, $err) = run(['lintian', '--tag-display-limit', '0', $changes]);
my @errors = grep { /^E: / } split /\n/, $out;
is_deeply(\@errors, [], 'lintian: no error');
diag "lintian: $_" for grep { /^[WEI]: / } split /\n/, $out;

# --- install ---

$installed = $ours = 1;
($st, $out, $err) = run(['env', 'DEBIAN_FRONTEND=noninteractive', 'dpkg',
    '-i', map { $old_deb{$_} } @pkgs]);
is($st, 0, 'dpkg -i the previous version') or diag $out . $err;

# A PostgreSQL of the test's, its socket only, as the user xmhub.
my ($pg_bin) = sort { $b cmp $a } grep { -x "$_/initdb" }
    glob '/usr/lib/postgresql/*/bin';
ok($pg_bin, "PostgreSQL's programs: " . ($pg_bin // 'none'));
$pg_dir = "$tmp/pg";
my $pg_run = "$tmp/pgrun";
for my $d ($pg_dir, $pg_run) {
	mkdir $d, 0700 or die "$d: $!\n";
	system('chown', 'xmhub:', $d);
}
my $pg_port = free_port();
my @as_xmhub = ('setpriv', '--reuid=xmhub', '--regid=xmhub', '--init-groups',
    'env', '-i', 'PATH=/usr/bin:/bin', "XMHUB_ENV_FILE=$env_file");
($st, $out, $err) = run([@as_xmhub, "$pg_bin/initdb", '-D', $pg_dir,
    '-U', 'xmhub', '-E', 'UTF8', '--locale=C.UTF-8', '--auth-local=trust',
    '--auth-host=reject']);
is($st, 0, 'initdb') or diag $err;
$pg_ctl = "$pg_bin/pg_ctl";
($st, $out, $err) = run([@as_xmhub, $pg_ctl, '-D', $pg_dir, '-w', '-l',
    "$pg_run/postgresql.log", '-o', "-c listen_addresses= -c port=$pg_port "
    . "-c unix_socket_directories=$pg_run", 'start']);
is($st, 0, 'PostgreSQL started') or diag $err;
($st, $out, $err) = run([@as_xmhub, "$pg_bin/createdb", '-h', $pg_run, '-p',
    $pg_port, 'xmhub']);
is($st, 0, 'createdb xmhub') or diag $err;

# The settings name it (written in place: the file keeps its owner and
# mode).
my $settings = do { local (@ARGV, $/) = $env_file; <> } // '';
$settings =~ s{^XMHUB_DATABASE_URL=.*$}
    {XMHUB_DATABASE_URL=postgresql:///xmhub?host=$pg_run&port=$pg_port}m
    or fail('the settings name a database');
open my $fh, '+<', $env_file or die "$env_file: $!\n";
truncate $fh, 0;
print {$fh} $settings;
close $fh or die "$env_file: $!\n";

($st, $out, $err) = run([@as_xmhub, '/usr/bin/xmhub', 'check-config']);
is($st, 0, 'xmhub check-config: the settings postinst wrote are complete')
    or diag $out . $err;
($st, $out, $err) = run([@as_xmhub, '/usr/bin/xmhub', 'migrate']);
is($st, 0, 'xmhub migrate, as xmhub, from the installed migrations')
    or diag $err;
like($out, qr/^migrate: applied \d+_/m, 'the previous version migrated');

my ($fst, $fac) = run([@as_xmhub, '/usr/bin/xmhub', 'facility', 'create',
    '--name', 'Kept', '--slug', 'kept']);
is($fst, 0, 'the previous version stores a facility');

# --- upgrade ---

# Unpacked, not configured: the new programs with the old schema.  The
# units' first ExecStartPre refuses to start them.
($st, $out, $err) = run(['env', 'DEBIAN_FRONTEND=noninteractive', 'dpkg',
    '--unpack', map { $deb{$_} } @pkgs]);
is($st, 0, 'dpkg --unpack this version') or diag $out . $err;
($st, $out, $err) = run([@as_xmhub, '/usr/bin/xmhub', 'migrate', '--check']);
is($st, 1, 'xmhub migrate --check: 1 with a migration pending');
like($out, qr/^migrate: pending \Q$newest\E$/m, "it names $newest");
like($err, qr/1 migration pending: the programs must not run/,
    'and says why the units do not start');
($st, $out, $err) = run(['env', 'DEBIAN_FRONTEND=noninteractive', 'dpkg',
    '--configure', '-a']);
is($st, 0, 'dpkg --configure -a: the upgrade') or diag $out . $err;
like($out . $err, qr/^migrate: applied \Q$newest\E$/m,
    "postinst applied $newest before the units restart");
($st, $out, $err) = run([@as_xmhub, '/usr/bin/xmhub', 'migrate', '--check']);
is($st, 0, 'xmhub migrate --check: 0 after the upgrade') or diag $out . $err;
($st, $out) = run([@as_xmhub, '/usr/bin/xmhub', 'facility', 'list',
    '--json']);
like($out, qr/"slug":\s*"kept"/, "the previous version's facility is kept");
($st, $out) = run(['dpkg-query', '-W', '-f=${Version}', 'xmhub']);
unlike($out, qr/~old/, 'this version is installed: ' . $out);

ok(defined getpwnam('xmhub'), 'the system user xmhub exists');
my @s = stat $env_file;
ok(@s, "postinst wrote $env_file");
is(sprintf('%04o', ($s[2] // 0) & 07777), '0640', "$env_file: mode 0640");
is($s[4], 0, "$env_file: owned by root");
is(scalar getgrgid($s[5] // -1), 'xmhub', "$env_file: group xmhub");
$settings = do { local (@ARGV, $/) = $env_file; <> } // '';
my ($secret) = $settings =~ /^XMHUB_JWT_SECRET=(\S+)$/m;
ok(defined $secret && length $secret >= 32,
    'the settings hold a JWT secret of 32 characters or more');
for my $d (qw(/var/lib/xmhub/objects /var/lib/xmhub/run /var/log/xmhub)) {
	my @d = stat $d;
	is(scalar getpwuid($d[4] // -1), 'xmhub', "$d: made, the user xmhub's");
}
ok(-f '/usr/lib/sysusers.d/xmhub.conf' && -f '/etc/logrotate.d/xmhub'
    && -f '/usr/share/xmhub/cron.d/xmhub', 'sysusers.d, logrotate, cron files');
my $site = do { local (@ARGV, $/) = '/etc/apache2/sites-available/xmhub.conf';
	<> } // '';
like($site, qr{^\s*ScriptAlias /api/health /usr/libexec/xmhub/cgi-bin/health$}m,
    "Apache's site: the installed programs");
unlike($site, qr/\@[A-Z_]+\@/, "Apache's site: no placeholder left");
($st, $out, $err) = run(['/usr/bin/xmhub', 'httpd-conf', 'apache']);
is($st, 0, 'xmhub httpd-conf apache') or diag $err;
ok($out eq $site, "xmhub httpd-conf apache prints Apache's site");
($st, $out) = run(['/usr/bin/xmhub', 'httpd-conf', 'apache', '--port=8090']);
like($out, qr/^Listen 127\.0\.0\.1:8090$/m, 'xmhub httpd-conf apache --port');
($st, undef, $err) = run(['/usr/bin/xmhub', 'httpd-conf', 'nginx']);
isnt($st, 0, 'xmhub httpd-conf nginx: refused');

# The documents the man pages and the docs point at are installed
# (dh_compress may have compressed them).
sub installed_doc { my ($p) = @_; return -f $p || -f "$p.gz" }
my @named = map { /^\.Pa (?:\/usr\/share\/doc\/\S+\/)?(\S+\.md)/ ? $1 : () }
    map { split /\n/, do { local (@ARGV, $/) = $_; <> } }
    "$src/man/xmhub.1", "$src/man/xmbp.3";
ok(@named >= 3, 'the man pages name documents: ' . join(' ', @named));
for my $md (@named) {
	ok(installed_doc("/usr/share/doc/xmhub/$md")
	    || installed_doc("/usr/share/doc/libxmbp-dev/$md"),
	    "$md, named by a man page, is installed");
}
for my $md (map { m{([^/]+\.md)$} } glob("$src/doc/*.md")) {
	ok(installed_doc("/usr/share/doc/xmhub/$md"), "xmhub: doc/$md installed");
}
for my $f (qw(xmbp.md device.md examples/device-posix.c)) {
	ok(installed_doc("/usr/share/doc/libxmbp-dev/$f"),
	    "libxmbp-dev: $f installed");
}

# Every unit is sandboxed: systemd's own rating, below 4.
my @units = glob '/lib/systemd/system/xmhub-*.service';
ok(@units >= 7, 'the units installed: ' . scalar @units);
for my $u (@units) {
	($st, $out, $err) = run(['systemd-analyze', 'security', '--offline=yes',
	    $u]);
	my ($level) = ($out . $err) =~ /Overall exposure level for \S+: ([\d.]+)/;
	ok(defined $level && $level < 4,
	    "$u: exposure " . ($level // 'unknown') . ' < 4');
}

# --- serve from the installed files ---

# lighttpd as xmhub-lighttpd.service starts it: its runtime directory,
# its environment, its ExecStartPre lines (the renderer, on free ports
# here, then lighttpd's check) and its ExecStart.
my $unit = do { local (@ARGV, $/) = '/lib/systemd/system/xmhub-lighttpd.service';
	<> } // '';
my %env = map { split /=/, $_, 2 } $unit =~ /^Environment=(\S+)$/mg;
my ($rundir) = $unit =~ /^RuntimeDirectory=(\S+)$/m;
my @pre = $unit =~ /^ExecStartPre=(.+)$/mg;
my ($start) = $unit =~ /^ExecStart=(.+)$/m;
is(scalar @pre, 3, 'xmhub-lighttpd.service: three ExecStartPre lines');
like($pre[0], qr{^/usr/bin/xmhub migrate --check$},
    'xmhub-lighttpd.service: the migrations checked first');
ok($rundir && $start, 'xmhub-lighttpd.service: RuntimeDirectory, ExecStart');
system('install', '-d', '-o', 'xmhub', '-g', 'xmhub', '-m', '0755',
    "/run/$rundir");
# Every port is a setting of the env file (doc/deploy.md "Ports"): free
# ones here, for the unit's commands as they are.
my ($port, $face_port, $ws_port) = (free_port(), free_port(), free_port());
open $fh, '>>', $env_file or die "$env_file: $!\n";
print {$fh} "XMHUB_PORT=$port\nFACE_API_PORT=$face_port\n"
    . "XMHUB_WS_PORT=$ws_port\n";
close $fh or die "$env_file: $!\n";
my @as_unit = ('setpriv', '--reuid=xmhub', '--regid=xmhub', '--init-groups',
    'env', '-i', 'PATH=/usr/bin:/bin', map { "$_=$env{$_}" } sort keys %env);
for my $cmd (@pre) {
	my @argv = split ' ', $cmd;
	($st, $out, $err) = run([@as_unit, @argv]);
	is($st, 0, "ExecStartPre: @argv[0, 1, 2]") or diag $out . $err;
}
my $rendered = do { local (@ARGV, $/) = "/run/$rundir/lighttpd.conf"; <> }
    // '';
like($rendered, qr/\b127\.0\.0\.1:$port\b/, 'lighttpd: XMHUB_PORT of the settings');
like($rendered, qr/"port" => $ws_port\b|127\.0\.0\.1:$ws_port\b/,
    'lighttpd: the WebSocket front at XMHUB_WS_PORT of the settings');

# The WebSocket front as its unit starts it: `xmhub daemon ws-guard`,
# listening on XMHUB_WS_PORT of the settings.
{
	my $g = do { local (@ARGV, $/) = '/lib/systemd/system/xmhub-ws-guard.service'; <> } // '';
	my ($gexec) = $g =~ /^ExecStart=(.+)$/m;
	is($gexec, '/usr/bin/xmhub daemon ws-guard', 'xmhub-ws-guard.service: xmhub daemon');
	my %genv = map { split /=/, $_, 2 } $g =~ /^Environment=(\S+)$/mg;
	my $pid = fork() // die "fork: $!\n";
	if ($pid == 0) {
		exec('setpriv', '--reuid=xmhub', '--regid=xmhub', '--init-groups',
		    'env', '-i', 'PATH=/usr/bin:/bin',
		    (map { "$_=$genv{$_}" } sort keys %genv), split ' ', $gexec)
		    or die "exec: $!\n";
	}
	my $up;
	for (1 .. 50) {
		last if $up = IO::Socket::INET->new(PeerAddr => "127.0.0.1:$ws_port");
		sleep 0.1;
	}
	ok($up, "ws-guard listens on XMHUB_WS_PORT ($ws_port)");
	kill 'TERM', $pid;
	waitpid($pid, 0);
}
# The face service's model: the one xmhub-face ships.
ok(-f '/usr/share/xmhub/models/face_detection_yunet_2022mar.onnx',
    'xmhub-face ships YuNet');
like($unit, qr/^MemoryDenyWriteExecute=yes$/m,
    'xmhub-lighttpd.service: MemoryDenyWriteExecute');
$lighttpd_pid = fork() // die "fork: $!\n";
if ($lighttpd_pid == 0) {
	# PR_SET_MDWE (65), PR_MDWE_REFUSE_EXEC_GAIN (1): Linux 6.3 and
	# later; lighttpd and the programs it spawns inherit it.
	require 'syscall.ph';
	print STDERR syscall(&SYS_prctl, 65, 1, 0, 0, 0) == 0
	    ? "# lighttpd runs with writable executable memory refused\n"
	    : "# no PR_SET_MDWE in this kernel ($!): lighttpd runs without\n";
	umask(oct(($unit =~ /^UMask=(\d+)$/m)[0] // '0027'));
	exec(@as_unit, split ' ', $start) or die "exec: $!\n";
}

my $http = HTTP::Tiny->new(timeout => 10, keep_alive => 0);
my $res;
for (1 .. 100) {
	$res = $http->get("http://127.0.0.1:$port/api/health");
	last if $res->{status} == 200
	    || waitpid($lighttpd_pid, WNOHANG) == $lighttpd_pid;
	sleep 0.2;
}
is($res->{status}, 200, 'GET /api/health: 200') or diag $res->{content};
is(eval { decode_json($res->{content})->{status} }, 'ok',
    'GET /api/health: {"status":"ok"}');
$res = $http->get("http://127.0.0.1:$port/api/health/ready");
is($res->{status}, 200, 'GET /api/health/ready: 200 (database, store)')
    or diag $res->{content};
$res = $http->get("http://127.0.0.1:$port/");
is($res->{status}, 200, 'GET /: the console, from the installed files');
like($res->{headers}{'content-type'} // '', qr{^text/html},
    'the console: an HTML page');
$res = $http->get("http://127.0.0.1:$face_port/health");
is($res->{status}, 200, "the face service's GET /health: 200")
    or diag $res->{content};
my $health = eval { decode_json($res->{content}) } // {};
ok($health->{model_loaded}, "the face service's health: the model loaded");
is($res->{headers}{'x-content-type-options'}, 'nosniff',
    "the table's headers on the face service's answers");

my ($body, $ct) = Xmhub::Face::multipart(image => photo('messi5.jpg'));
$res = $http->request(POST => "http://127.0.0.1:$face_port/api/v1/detect",
    {headers => {'Content-Type' => $ct}, content => $body});
is($res->{status}, 200, 'POST /api/v1/detect: 200') or diag $res->{content};
my $found = eval { decode_json($res->{content})->{detections} } // [];
is(scalar @$found, 1, 'one face on messi5.jpg');

# Every documented page of both services, and each file it loads (its
# src= and href= on this server), from the installed files.
sub page {
	my ($base, $path) = @_;
	my $r = $http->get("$base$path");
	is($r->{status}, 200, "GET $path: 200") or return;
	my @refs = grep { !m{^(?:data:|https?:|#)} }
	    $r->{content} =~ /\b(?:src|href)="([^"]+)"/g;
	for my $ref (@refs) {
		(my $dir = $path) =~ s{[^/]*$}{};
		my $url = $ref =~ m{^/} ? $ref : "$dir$ref";
		my $a = $http->get("$base$url");
		ok($a->{status} == 200 && length $a->{content} > 0,
		    "$path loads $url: 200, not empty")
		    or diag "$a->{status}";
	}
}
page("http://127.0.0.1:$port", $_)
    for qw(/ /api/docs /api/redoc /api/openapi.json);
page("http://127.0.0.1:$face_port", $_) for qw(/docs /redoc /openapi.json);
$res = $http->get("http://127.0.0.1:$port/vendor/uplot.js");
is($res->{status}, 200, "the console's vendor/uplot.js: 200");

my $log = do { local (@ARGV, $/) = '/var/log/xmhub/lighttpd.log'; <> } // '';
unlike($log, qr/pcre2_jit/, "lighttpd's log: no regex needed the JIT");
# lighttpd runs the installed Retry-After script (mod_magnet) at every
# answer: a wrong path is an error line per request.
ok(-f '/usr/share/xmhub/errors/retry-after.lua',
    'the Retry-After script is installed');
unlike($log, qr/retry-after\.lua/, "lighttpd's log: the script was found");

# --- remove ---

kill 'TERM', $lighttpd_pid;
waitpid($lighttpd_pid, 0);
$lighttpd_pid = undef;
($st, $out, $err) = run(['dpkg', '--purge', @pkgs]);
is($st, 0, 'dpkg --purge') or diag $out . $err;
$installed = 0 if $st == 0;
ok(!-e $env_file, 'purge removed the settings file');
ok(!-e '/usr/bin/xmhub', 'purge removed the programs');

done_testing();

