#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Usage errors of the xmhub CLI (cli/usage.h): every bad invocation of
# every command group exits 2 with one line on standard error naming the
# argument and the form it takes, then the command's usage, and nothing
# on standard output.  No database: each is refused before one is
# opened.  Also httpd-conf/gen site, which `xmhub httpd-conf` runs.
use strict;
use warnings;
use Test::More;
use Xmhub::Test qw(run xmhub);

my $src = $ENV{XMHUB_SRCDIR} or die "XMHUB_SRCDIR is not set\n";
# Nothing may reach a database or a server: none is there.
$ENV{XMHUB_ENV_FILE} = '/nonexistent/xmhub.env';
delete $ENV{$_} for qw(XMHUB_DATABASE_URL XMHUB_API_KEY);

my $url = 'http://127.0.0.1:9';
my $sid = '0123abcd-0000-4000-8000-000000000000';
my @send = ('send', '--url', $url, '--key', 'k', '--session', $sid);
my @sim = ('sim', '--url', $url, '--key', 'k');

# [arguments, the line after "xmhub COMMAND: "]
my @bad = (
	[[qw(xmbp decode a b)], qr/stray argument "b"/],
	[[qw(xmch pack a b)], qr/stray argument "b"/],
	[[qw(migrate --bogus)], qr/--bogus: no such option/],
	[[qw(migrate --dir)], qr/--dir: missing value \(--dir DIR\)/],
	[[qw(migrate --dir a --dir b)], qr/--dir given twice/],
	[[qw(migrate sql)], qr/stray argument "sql"/],
	[[qw(migrate --check sql)], qr/stray argument "sql"/],
	[[qw(daemon)], qr/expected one daemon's name \(NAME: .*\)/],
	[[qw(daemon websocketd ws-guard)], qr/expected one daemon's name \(NAME: .*\)/],
	[[qw(daemon --port)], qr/expected one daemon's name \(NAME: .*\)/],
	[[qw(check-config --env-file)],
	    qr/--env-file: missing value \(--env-file FILE\)/],
	[[qw(settings --env --man)], qr/--env and --man exclude each other/],
	[[qw(settings --json)], qr/--json: no such option/],
	[[qw(facility create --slug s)], qr/--name is required \(--name N\)/],
	[[qw(facility create --name n --slug s x)], qr/stray argument "x"/],
	[[qw(facility list --facility x)], qr/--facility: no such option/],
	[[qw(facility disable)], qr/ID\|SLUG is required/],
	[[qw(facility delete a b)], qr/stray argument "b"/],
	[[qw(user create --email x)],
	    qr/--role is required \(user, facility_admin or super_admin\)/],
	[[qw(user create --email x --role root)],
	    qr/--role: expected user, facility_admin or super_admin, got "root"/],
	[[qw(user create --email x --email y --role user)],
	    qr/--email given twice/],
	[[qw(user create --role user --email)],
	    qr/--email: missing value \(--email E\)/],
	[[qw(user create --email x --role user --bogus 1)],
	    qr/--bogus: no such option/],
	[[qw(user list --json --json)], qr/--json given twice/],
	[[qw(user disable -x)], qr/-x: no such option/],
	[[qw(user delete)], qr/ID\|EMAIL is required/],
	[[qw(user set-password --password -)], qr/ID\|EMAIL is required/],
	[[qw(user unthrottle)], qr/--email E or --address A is required/],
	[['api-key', 'create', '--facility', 'f', '--name', 'n', '--scopes',
	  'upload,admin'],
	    qr/--scopes: expected a comma-separated list of upload and ingest, got "upload,admin"/],
	[[qw(api-key create --name n)],
	    qr/--facility is required \(--facility ID\)/],
	[[qw(api-key revoke)], qr/ID is required/],
	[[qw(device list --facility)],
	    qr/--facility: missing value \(--facility ID\)/],
	[[qw(httpd-conf)], qr/lighttpd, apache or htaccess is required first/],
	[[qw(httpd-conf --port 8080 lighttpd)],
	    qr/lighttpd, apache or htaccess is required first/],
	[[qw(hash-password --cost 3)], qr/--cost: no such option/],
	[[qw(backup)], qr/DIR is required/],
	[[qw(backup a b)], qr/stray argument "b"/],
	[[qw(restore --force)], qr/DIR is required/],
	[[qw(restore --force --force d)], qr/--force given twice/],
	[[qw(restore --forse d)], qr/--forse: no such option/],
	[['send', '--key', 'k', '--session', $sid, '--streams', '0:f32'],
	    qr/--url is required \(--url BASE_URL\)/],
	[['send', '--url', $url, '--session', $sid, '--streams', '0:f32'],
	    qr/--key API_KEY or XMHUB_API_KEY is required/],
	[[@send], qr/--streams is required \(--streams INDEX\[:NAME\]:TYPE,...\|\@SESSION.json\)/],
	[[@send, '--streams', '0:temp'],
	    qr/--streams: 'temp': not a value type \(expected INDEX\[:NAME\]:TYPE,... or \@SESSION.json\)/],
	[[@send, '--streams', '0:f32', '--in-flight', 65],
	    qr/--in-flight: expected a whole number from 1 to 64, got "65"/],
	[[@send, '--streams', '0:f32', '--batch-samples', 0],
	    qr/--batch-samples: expected a whole number from 1 to 65535, got "0"/],
	[[@send, '--streams', '0:f32', '--linger-ms', 'soon'],
	    qr/--linger-ms: expected a whole number from 0 to 60000, got "soon"/],
	[[@send, '--streams', '0:f32', '--timeout', 3601],
	    qr/--timeout: expected a whole number from 1 to 3600, got "3601"/],
	[[@send, '--streams', '0:f32', '--timeout'],
	    qr/--timeout: missing value \(--timeout S\)/],
	[[@send, '--streams', '0:f32', '--ws=yes'], qr/--ws takes no value/],
	[[@send, '--streams', '0:f32', '--bogus'], qr/--bogus: no such option/],
	[[@send, '--streams', '0:f32', 'a.csv', 'b.csv'],
	    qr/stray argument "b.csv" \(one FILE at most\)/],
	[['send', '--url', $url, '--key', 'k', '--session', 'x;y',
	  '--streams', '0:f32'],
	    qr/--session: expected a session id \(hex digits and dashes, 64 at most\), got "x;y"/],
	[['send', '--url', 'https://h', '--key', 'k', '--session', $sid,
	  '--streams', '0:f32'],
	    qr{--url: https://h: only http:// URLs are supported}],
	[[qw(sim --key k)], qr/--url is required \(--url BASE_URL\)/],
	[[@sim, '--devices', 'x'],
	    qr/--devices: expected a whole number from 1 to 1000, got "x"/],
	[[@sim, '--devices', '1.5'],
	    qr/--devices: expected a whole number from 1 to 1000, got "1.5"/],
	[[@sim, '--streams', 257],
	    qr/--streams: expected a whole number from 1 to 256, got "257"/],
	[[@sim, '--rate', -1],
	    qr/--rate: expected a number from 0 to 1000000, got "-1"/],
	[[@sim, '--duration', 0],
	    qr/--duration: expected a number from 0.001 to 31536000, got "0"/],
	[[@sim, '--samples', 0],
	    qr/--samples: expected a whole number from 1 to 1000000000000000, got "0"/],
	[[@sim, '--batch', 65536],
	    qr/--batch: expected a whole number from 1 to 65535, got "65536"/],
	[[@sim, '--in-flight', 65],
	    qr/--in-flight: expected a whole number from 1 to 64, got "65"/],
	[[@sim, '--device-uid', 4294967296],
	    qr/--device-uid: expected a whole number from 0 to 4294967295, got "4294967296"/],
	[[@sim, '--device-uid', 4294967295, '--devices', 2],
	    qr/--device-uid: BASE \+ --devices - 1 is over 4294967295/],
	[[@sim, '--timeout', 0],
	    qr/--timeout: expected a whole number from 1 to 3600, got "0"/],
	[[@sim, '--duration', 1, '--samples', 5],
	    qr/--duration and --samples exclude each other/],
	[[@sim, '--ws', '--streams', 256, '--batch', 1000, '--samples', 1],
	    qr/--batch and --streams: a batch would be \d+ bytes, over the WebSocket's 262144 limit/],
	[[@sim, '--d', 3], qr/--d: ambiguous, give the option's whole name/],
	[[@sim, '--json=1'], qr/--json takes no value/],
	[[@sim, '--rate'], qr/--rate: missing value \(--rate HZ\)/],
	[[@sim, '-v'], qr/-v: no such option/],
	[[@sim, 'now'], qr/stray argument "now"/],
);

for my $b (@bad) {
	my ($args, $why) = @$b;
	my $cmd = $args->[0] =~ /^(xmbp|xmch|facility|user|api-key|device)$/
	    ? "$args->[0] $args->[1]" : $args->[0];
	my ($st, $out, $err) = xmhub($args);
	my ($line, $rest) = split /\n/, $err, 2;
	ok($st == 2 && $out eq '' && $line =~ /\Axmhub \Q$cmd\E: $why\z/
	    && ($rest // '') =~ /\Ausage:\n  xmhub \Q$cmd\E .*\n\z/,
	    "xmhub @$args: exit 2, says why, then the usage")
	    or diag("status $st, stdout: $out, stderr: $err");
}

# Without a known command: the global usage after the line.
for my $b ([[], qr/a command is required/], [['frob'], qr/frob: no such command/],
    [['--frob'], qr/--frob: no such option/],
    [['--version', 'x'], qr/stray argument "x"/]) {
	my ($args, $why) = @$b;
	my ($st, $out, $err) = xmhub($args);
	ok($st == 2 && $err =~ /\Axmhub: $why\nusage: xmhub --version/,
	    "xmhub @$args: exit 2, says why") or diag("status $st, stderr: $err");
}
# A group without a known command: the group's usage after the line.
for my $b ([['user'], qr/a command is required/],
    [['user', 'frob'], qr/frob: no such command/]) {
	my ($args, $why) = @$b;
	my ($st, $out, $err) = xmhub($args);
	ok($st == 2 && $err =~ /\Axmhub user: $why\nusage:\n  xmhub user create /,
	    "xmhub @$args: exit 2, says why") or diag("status $st, stderr: $err");
}
# httpd-conf's options are read by the generator it runs (installed, so
# run here from the tree): the same line, exit 2, which xmhub passes on
# before its usage.
for my $b ([['nginx'], qr/expected lighttpd, apache or htaccess first, got "nginx"/],
    [[qw(lighttpd --bogus)], qr/--bogus: no such option/],
    [[qw(lighttpd --port)], qr/--port: missing value/],
    [[qw(lighttpd --ws-port x)], qr/--ws-port: expected a whole number from 1 to 65535, got "x"/],
    [[qw(apache --authz-port 70000)], qr/--authz-port: expected a whole number from 1 to 65535, got "70000"/],
    [[qw(apache --port 0)],
	qr/--port: expected a whole number from 1 to 65535, got "0"/],
    [[qw(apache --face-port x)],
	qr/--face-port: expected a whole number from 1 to 65535, got "x"/],
    [[qw(lighttpd extra)], qr/stray argument "extra"/]) {
	my ($args, $why) = @$b;
	my ($st, $out, $err) = run(["$src/httpd-conf/gen", 'site', @$args]);
	ok($st == 2 && $err =~ /\Axmhub httpd-conf: $why\n\z/,
	    "gen site @$args: exit 2, says why") or diag("status $st, stderr: $err");
}

done_testing;
