#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# httpd-conf/gen and its table httpd-conf/programs against the build
# tree: every FastCGI program built is served by lighttpd and Apache
# (and the platform's by a shared host's .htaccess site),
# every daemon has its systemd unit naming a program of the build, with
# the file modes of doc/security.md; a bad table line is refused, naming
# the line.
use strict;
use warnings;
use File::Temp qw(tempdir);
use Test::More;
use Xmhub::Test qw(run);

my $build = $ENV{XMHUB_BUILDDIR} or die "XMHUB_BUILDDIR is not set\n";
my $src = $ENV{XMHUB_SRCDIR} or die "XMHUB_SRCDIR is not set\n";
my $gen = "$src/httpd-conf/gen";

sub slurp { local (@ARGV, $/) = @_; return <> // '' }

my @built = sort grep { -f "$build/cgi-bin/$_" && -x _ }
    map { s{.*/}{}r } glob "$build/cgi-bin/*";
ok(@built >= 10, 'the programs built: ' . scalar @built);

my ($st, $conf, $err) = run([$gen, 'lighttpd', '/var', $build, 1, 2, 3]);
is($st, 0, 'gen lighttpd') or diag $err;
is($err, '', 'gen lighttpd: every program is built');
my %lighttpd = map { $_ => 1 }
    $conf =~ m{"bin-path" => "\Q$build\E/cgi-bin/([^"]+)"}g;
is_deeply([grep { !$lighttpd{$_} } @built], [],
    'lighttpd serves every program built');
# The table's stream-answer programs: answers passed on as the client
# reads, not spooled (doc/security.md "Fair shares").
for my $r ('/api/v1/uploads', '/api/v1/metadata') {
	like($conf, qr{^\t\$HTTP\["url"\] =~ "\^\Q$r\E" \{\n(?:\t\t.*\n)*?\t\tserver\.stream-response-body = 2\n\t\tserver\.max-write-idle = 60\n}m,
	    "lighttpd: $r answers streamed");
}

# The uploads' spool: every POST after the authorizer, no body streamed
# (doc/security.md "Bodies read after the credentials").
my ($up) = $conf =~ m{^(\t\$HTTP\["url"\] =~ "\^/api/v1/uploads" \{\n.*?^\t\}\n)}ms;
like($up // '', qr{^\t\t\$HTTP\["request-method"\] == "POST" \{\n\t\t\tfastcgi\.server = \(\n\t\t\t\t"/api/v1/uploads" => \(\(\n\t\t\t\t\t"socket" => "/var/run/uploads-authz\.sock",}m,
    'lighttpd: an upload POST asks the authorizer first, whatever its framing');
unlike($up // '', qr/stream-request-body/, 'lighttpd: no upload body streamed');
like($up // '', qr{^\t\t\$HTTP\["request-method"\] != "POST" \{\n\t\t\tserver\.max-request-size = 64\n}m,
    'lighttpd: other methods on uploads take 64 KiB at most');

# XMHUB_TRUSTED_PROXIES: mod_extforward first, trusting those only.
unlike($conf, qr/extforward/, 'lighttpd: no mod_extforward without proxies');
($st, my $fw, $err) = run([$gen, 'lighttpd', '--proxies=10.0.0.2, 10.1.0.0/16',
	'/var', $build, 1, 2, 3]);
is($st, 0, 'gen lighttpd --proxies') or diag $err;
like($fw, qr/^server\.modules = \("mod_extforward", /m,
    'lighttpd: mod_extforward before the other modules');
like($fw, qr/^extforward\.forwarder = \("10\.0\.0\.2" => "trust", "10\.1\.0\.0\/16" => "trust"\)$/m,
    'lighttpd: the trusted proxies');
($st, undef, $err) = run([$gen, 'lighttpd', '--proxies=10.0.0.2 "x"', '/var',
	$build, 1, 2, 3]);
isnt($st, 0, 'gen lighttpd: a proxy that is no address is refused');
like($err, qr/"x"/, 'naming it');

my $apache = slurp("$build/httpd-conf/apache.conf");
like($apache, qr/^\s*RemoteIPInternalProxy \$\{XMHUB_TRUSTED_PROXIES\}$/m,
    'apache.conf: mod_remoteip with XMHUB_TRUSTED_PROXIES defined');
my %apache = map { $_ => 1 } $apache =~ m{\@CGIBIN\@/([\w-]+)}g;
# An authorizer runs on its own: its unit runs `xmhub daemon NAME`,
# which listens on XMHUB_AUTHZ_PORT for it.
my @auth = $apache =~ /^AuthnzFcgiDefineProvider authn xmhub-([\w-]+) /mg;
for my $a (@auth) {
	my $f = "$build/httpd-conf/systemd/xmhub-$a.service";
	$apache{$a} = -f $f
	    && slurp($f) =~ m{^ExecStart=\S+/xmhub daemon \Q$a\E$}m;
}
is_deeply([grep { !$apache{$_} } @built], [],
    'apache.conf (or its authorizer unit) serves every program built');
unlike($apache, qr/\@(SERVE|AUTHORIZERS)\b/, 'apache.conf: no marker left');
like($apache, qr/^\s*FcgidOutputBufferSize 65536$/m,
    'apache.conf: answers handed on in 64 KiB pieces');

# A shared host's site (doc/shared-hosting.md): the platform's programs
# copied as NAME.cgi, every route of theirs rewritten to them, first
# match first as in the table; the console after them.
{
	my $pub = tempdir('xmhub-htaccess-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	my $lx = tempdir('xmhub-libexec-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	symlink $build, "$lx/xmhub" or die "symlink: $!";
	# The share directory's console (mk/console.am installs both).
	my $sh = tempdir('xmhub-share-XXXXXX', TMPDIR => 1, CLEANUP => 1);
	symlink "$build/console", "$sh/console" or die "symlink: $!";
	symlink "$ENV{XMHUB_SRCDIR}/www/console-htaccess", "$sh/console-htaccess"
	    or die "symlink: $!";
	($st, my $out, $err) = run([$gen, 'site', 'htaccess', "--libexecdir=$lx",
		"--pkgdatadir=$sh", '--sysconfdir=/x', "--public=$pub"]);
	is($st, 0, 'gen site htaccess') or diag $err;
	is($err, '', 'gen site htaccess: every program is built');
	my $h = slurp("$pub/.htaccess");
	my @to = $h =~ m{^RewriteRule \S+ xmhub-cgi/([\w-]+)\.cgi/\$1 \[END\]$}mg;
	my %prog = map { $_ => 1 } @to;
	is_deeply([grep { !-x "$pub/xmhub-cgi/$_.cgi" } sort keys %prog], [],
	    '.htaccess: each program it names copied as NAME.cgi');
	is_deeply([grep { -s "$pub/xmhub-cgi/$_.cgi" != -s "$build/cgi-bin/$_" }
	    sort keys %prog], [], 'copies of the build\'s programs');
	ok($prog{auth} && $prog{ingest} && $prog{uploads} && !$prog{face}
	    && !$prog{'ingest-authorizer'},
	    '.htaccess: the platform\'s programs, no authorizer nor face service');
	like($h, qr{^RewriteRule \^\(\?=api/v1/ingest/sessions/\[\^/\]\+/data\$\)\(\.\*\)\$ xmhub-cgi/ingest\.cgi/.*\n(?:.*\n)*RewriteRule \^\(api/v1/ingest\.\*\)\$ xmhub-cgi/ingest}m,
	    '.htaccess: the batch route above the ingest prefix');
	like($h, qr{xmhub-cgi/[\w-]+\.cgi/\$1 \[END\]\n(?:(?!.*xmhub-cgi/).*\n)*RewriteRule \^\(\S+\)\$ xmhub-console/\$1 \[END\]\n}m,
	    '.htaccess: the console\'s files after every route of the API');
	like(slurp("$pub/xmhub-cgi/.htaccess"),
	    qr{<Files "uploads\.cgi">\n\tLimitRequestBody 2148532224\n</Files>},
	    'xmhub-cgi/.htaccess: the uploads\' body limit');
	($st, $out, $err) = run([$gen, 'site', 'htaccess', "--libexecdir=$lx",
		'--pkgdatadir=/x', '--sysconfdir=/x']);
	is($st, 2, 'gen site htaccess without --public: a usage error');
	like($err, qr/--public DIR is required/, 'saying so');
}

($st, my $daemons) = run([$gen, 'daemons', $build, 8082, 8084]);
is($st, 0, 'gen daemons');
my @units = map { "xmhub-$_.service" } $daemons =~ /^([^\t]+)\t/mg;
ok(@units >= 4, 'daemons: ' . scalar @units);
my $dir = "$build/httpd-conf/systemd";
my @made = sort map { s{.*/}{}r } glob "$dir/xmhub-*";
is_deeply([grep { my $u = $_; !grep { $_ eq $u } @made } @units], [],
    'a systemd unit per daemon');
for my $u (grep { /\.service$/ } @made) {
	my $t = slurp("$dir/$u");
	like($t, qr/^UMask=0027$/m, "$u: UMask=0027");
	like($t, qr/^User=xmhub$/m, "$u: runs as xmhub");
	# The decoders' children set up Landlock (lib/core/child.c): the
	# system call filter lets its three calls through.
	like($t, qr/^SystemCallFilter=landlock_create_ruleset landlock_add_rule landlock_restrict_self$/m,
	    "$u: the Landlock calls allowed");
	if ($u eq 'xmhub-lighttpd.service') {
		like($t, qr{^ExecStart=/usr/sbin/lighttpd -D -f (\S+)$}m,
		    "$u: lighttpd in the foreground");
		my ($conf) = $t =~ m{^ExecStart=/usr/sbin/lighttpd -D -f (\S+)$}m;
		like($t, qr{^ExecStartPre=\S+/xmhub httpd-conf lighttpd --output=\Q$conf\E$}m,
		    "$u: on the configuration rendered before each start");
		next;
	}
	# `xmhub daemon NAME` runs the table's command of NAME (the
	# settings' ports in it), or an authorizer of cgi-bin/.
	my ($name) = $t =~ m{^ExecStart=\S+/xmhub daemon ([\w-]+)$}m;
	my ($cmd) = defined $name ? $daemons =~ /^\Q$name\E\t(.*)$/m : ();
	$cmd //= "$build/cgi-bin/$name" if defined $name && grep { $_ eq $name } @auth;
	my ($prog) = ($cmd // '') =~ m{\Q$build\E/((?:jobs|ws|cgi-bin)/[\w-]+)};
	# lighttpd's instance: its configuration from the CLI, first.
	$prog //= 'cli/xmhub'
	    if $t =~ m{^ExecStartPre=\S+/xmhub httpd-conf lighttpd }m;
	ok(defined $prog && -x "$build/$prog",
	    "$u: runs a program of the build (" . ($prog // 'none') . ')');
}

# A copy of the generator with a bad table.
my $tmp = tempdir(CLEANUP => 1);
my $table = slurp("$src/httpd-conf/programs");
$table =~ s/^(fastcgi tags platform \S+) json$/$1 jsn/m or die "no tags line\n";
open my $fh, '>', "$tmp/programs" or die "$tmp/programs: $!\n";
print $fh $table;
close $fh;
system('cp', $gen, "$tmp/gen") == 0 or die "cp: $?\n";
($st, undef, $err) = run([$tmp . '/gen', 'daemons', $build, 8082, 8084]);
isnt($st, 0, 'an unknown size: refused');
like($err, qr{programs:\d+: unknown size jsn}, 'the line is named');
# spool without an authorizer would spool every body unasked.
$table = slurp("$src/httpd-conf/programs");
$table =~ s/^(fastcgi uploads .*) authorize=uploads spool$/$1 spool/m
    or die "no uploads line\n";
open $fh, '>', "$tmp/programs" or die "$tmp/programs: $!\n";
print $fh $table;
close $fh;
($st, undef, $err) = run([$tmp . '/gen', 'daemons', $build, 8082, 8084]);
isnt($st, 0, 'spool without authorize=: refused');
like($err, qr{programs:\d+: uploads: spool needs authorize=},
    'the line is named');

done_testing;
