#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# The xmhub CLI against the real stack: migrate; create, list, disable,
# delete of facilities, users and keys; user set-password; device list;
# --help, --version; check-config.  What it does shows through the API.
# Usage errors: t/e2e/cli-usage.t.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempfile);
use HTTP::Tiny;
use JSON::PP;
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Stack;
use Xmhub::Test qw(run bin);

my $s = Xmhub::Stack->start;
# A connection per request: between two requests the CLI runs, and on a
# loaded machine longer than lighttpd keeps an idle connection, where
# HTTP::Tiny would send a POST on the closed one and answer 599.
my $http = HTTP::Tiny->new(timeout => 60, keep_alive => 0);
# The CLI reads its settings from the stack's env file, as in production.
$ENV{XMHUB_ENV_FILE} = $s->env_file;
delete $ENV{XMHUB_DATABASE_URL};

sub xmhub { my ($stdin, @args) = @_; return run([bin('xmhub'), @args], $stdin) }

# within($seconds, $want, $check): polls $check until it answers $want.
# The CLI changes rows outside the web server's processes: they see it
# when the database's notification arrives (doc/auth.md), not at once.
sub within {
	my ($seconds, $want, $check) = @_;
	my $end = time + $seconds;
	while (1) {
		return 1 if $check->() == $want;
		return 0 if time > $end;
		select(undef, undef, undef, 0.02);
	}
}

my ($st, $out, $err) = xmhub(undef, 'migrate', '--dir', "$ENV{XMHUB_SRCDIR}/sql");
is($st, 0, 'migrate on a migrated database exits 0') or diag($err);
like($out, qr/applied now\)|up to date/, 'and says it is up to date');

($st, $out, $err) = xmhub(undef, qw(facility create --name North --slug north));
is($st, 0, 'facility create') or diag($err);
my $fac = eval { decode_json($out)->{id} };
like($fac // '', qr/^[0-9a-f-]{36}$/, 'prints the new id');
($st, $out, $err) = xmhub(undef, qw(facility create --name North2 --slug north));
ok($st == 1 && $err =~ /already exists/, 'duplicate slug: exit 1, says so');

($st, $out, $err) = xmhub("s3cret-pass\n", qw(user create --email Root@Example.org
	--password - --role super_admin --name Root));
is($st, 0, 'super_admin created, password from standard input') or diag($err);
ok(eval { decode_json($out)->{created} }, 'created true');
($st, $out, $err) = xmhub("another-one\n", qw(user create --email root@example.org
	--password - --role super_admin));
ok($st == 1 && $err =~ /already exists/, 'same e-mail in another case: exit 1');
($st, $out, $err) = xmhub("another-one\n", qw(user create --email root@example.org
	--role super_admin --if-absent));
is($st, 0, '--if-absent makes an existing user a success');
ok(eval { !decode_json($out)->{created} }, 'created false');
($st, $out, $err) = xmhub("ann-password\n", 'user', 'create', '--email',
	'ann@example.org', '--role', 'facility_admin', '--facility', $fac);
is($st, 0, 'facility_admin created in a facility, password from standard '
	. 'input without --password') or diag($err);
my $ann = eval { decode_json($out)->{id} };
($st, $out, $err) = xmhub("bob-password\n", qw(user create --email bob@example.org
	--password - --role user));
is($st, 1, 'a user without a facility is refused');
($st, $out, $err) = xmhub(undef, qw(user create --email x@example.org
	--password in-the-clear --role user --facility), $fac);
ok($st == 1 && $err =~ /command line/, 'a password on the command line is '
	. 'refused, saying why') or diag($err);
($st, $out, $err) = xmhub('', qw(user create --email x@example.org
	--role user --facility), $fac);
ok($st == 1 && $err =~ /no password/, 'no password on standard input: exit 1');

# The users log in through the API.
my $r = $http->post($s->url('/api/auth/login'), {
	headers => {'content-type' => 'application/json'},
	content => encode_json({email => 'root@example.org',
		password => 's3cret-pass'})});
is($r->{status}, 200, 'the CLI-made super_admin logs in') or diag($r->{content});

($st, $out, $err) = xmhub(undef, 'api-key', 'create', '--facility', $fac,
	'--name', 'gateway', '--scopes', 'ingest');
is($st, 0, 'api-key create') or diag($err);
my $k = eval { decode_json($out) } // {};
like($k->{key} // '', qr/^xmk_[0-9A-Za-z]{43}$/, 'prints the key once');
is($k->{key_prefix}, substr($k->{key} // '', 0, 12), 'and its prefix');
$r = $http->get($s->url('/api/v1/ping'), {headers => {'x-api-key' => $k->{key} // ''}});
is($r->{status}, 200, 'the key works with ping');
is(eval { decode_json($r->{content})->{facility_id} }, $fac, 'in its facility');
($st, $out, $err) = xmhub(undef, 'api-key', 'create', '--facility',
	'00000000-0000-4000-8000-000000000000', '--name', 'x');
is($st, 1, 'an unknown facility is refused');

# --version, --help: the global usage names every command; each command
# answers --help with its own usage, exit 0.
($st, $out) = xmhub(undef, '--version');
ok($st == 0 && $out =~ /^xmhub \d+\.\d+/, '--version') or diag($out);
($st, $out) = xmhub(undef, '--help');
is($st, 0, '--help: exit 0');
my @cmds = map { /^  xmhub (\S+)(?: ([a-z][a-z-]*))?/ ? [$1, $2] : () }
	split /\n/, $out;
my %want = map { $_ => 1 } ('facility list', 'facility disable',
	'facility delete', 'user list', 'user disable', 'user delete',
	'user set-password', 'api-key list', 'api-key revoke', 'api-key delete',
	'device list', 'check-config', 'migrate');
delete $want{join ' ', grep { defined } @$_} for @cmds;
is(join(',', sort keys %want), '', 'the usage lists every new command');
for my $c (@cmds) {
	my @w = grep { defined } @$c;
	($st, $out, $err) = xmhub(undef, @w, '--help');
	my $line = join ' ', @w;
	ok($st == 0 && $out =~ /^  xmhub \Q$line\E\b/m && $err eq '',
		"xmhub $line --help: its usage, exit 0") or diag("$st $out $err");
}
($st, $out, $err) = xmhub(undef, qw(facility bogus));
ok($st == 2 && $err =~ /xmhub facility create/, 'an unknown command of a '
	. 'group: the group\'s usage, exit 2');

# Lists: a table by default, the API's objects with --json.
($st, $out, $err) = xmhub(undef, qw(facility list));
ok($st == 0 && $out =~ /^id\s+slug\s+name\s+is_active/ && $out =~ /\snorth\s+North\s+yes/,
	'facility list: a table with a header') or diag("$out$err");
my $facs = eval { decode_json((xmhub(undef, qw(facility list --json)))[1]) };
is_deeply([map { $_->{slug} } @{$facs // []}], ['north'], 'facility list --json');
my $users = eval { decode_json((xmhub(undef, qw(user list --json)))[1]) };
is_deeply([sort map { $_->{email} } @{$users // []}],
	['Root@Example.org', 'ann@example.org'], 'user list --json: every user');
ok(!grep({ exists $_->{password_hash} } @{$users // []}), 'and no password hash');
$users = eval { decode_json((xmhub(undef, qw(user list --json --facility), $fac))[1]) };
is_deeply([map { $_->{email} } @{$users // []}], ['ann@example.org'],
	'user list --facility: that facility\'s users');
my $keys = eval { decode_json((xmhub(undef, qw(api-key list --json)))[1]) };
is_deeply([map { $_->{name} } @{$keys // []}], ['gateway'], 'api-key list --json');
ok(!grep({ exists $_->{key} || exists $_->{key_hash} } @{$keys // []}),
	'and neither keys nor hashes');
($st, $out, $err) = $s->psql("INSERT INTO devices (facility_id, device_uid, name) "
	. "VALUES ('$fac', 77, 'probe-77')");
is($st, 0, 'a device') or diag($err);
($st, $out, $err) = xmhub(undef, qw(device list));
ok($st == 0 && $out =~ /\s77\s+probe-77\s/, 'device list: a table') or diag("$out$err");
my $devs = eval { decode_json((xmhub(undef, qw(device list --json)))[1]) };
is($devs->[0]{device_uid}, 77, 'device list --json');

# user set-password: recovers the super_admin without the API; the old
# password and the old tokens end, the login throttle forgets the e-mail.
sub login {
	my ($email, $pw) = @_;
	return $http->post($s->url('/api/auth/login'), {
		headers => {'content-type' => 'application/json'},
		content => encode_json({email => $email, password => $pw})});
}
my $login = login('root@example.org', 's3cret-pass');
my $old = eval { decode_json($login->{content}) } // {};
ok($old->{access_token}, 'root logs in')
    or diag("$login->{status} $login->{reason}: $login->{content}");
is(login('root@example.org', 'a wrong one')->{status}, 401, 'a failed login');
my $tkey = "login_throttle_key('root\@example.org')";
($st, $out) = $s->psql("SELECT count(*) FROM login_throttle WHERE email = $tkey");
cmp_ok($out, '>', 0, 'is counted by the throttle');
($st, $out, $err) = xmhub("new-root-pass\n", qw(user set-password root@example.org
	--password -));
ok($st == 0 && $out =~ /new password/, 'user set-password') or diag($err);
($st, $out) = $s->psql("SELECT count(*) FROM login_throttle WHERE email = $tkey");
is($out + 0, 0, 'the throttle forgot the e-mail');
is(login('root@example.org', 's3cret-pass')->{status}, 401, 'the old password fails');
is(login('root@example.org', 'new-root-pass')->{status}, 200, 'the new one works');
ok(within(5, 401, sub { $http->get($s->url('/api/auth/me'),
	{headers => {authorization => "Bearer $old->{access_token}"}})->{status} }),
	'the access token from before is refused');
$r = $http->post($s->url('/api/auth/refresh'), {
	headers => {'content-type' => 'application/json'},
	content => encode_json({refresh_token => $old->{refresh_token}})});
is($r->{status}, 401, 'and so is the refresh token');
($st, $out, $err) = xmhub("short\n", qw(user set-password root@example.org));
ok($st == 1 && $err =~ /8 to/, 'a short password is refused') or diag($err);
($st, $out, $err) = xmhub("whatever-pass\n", qw(user set-password nobody@example.org));
ok($st == 1 && $err =~ /not found/, 'an unknown user: exit 1');
($st, $out, $err) = xmhub(undef, qw(user set-password root@example.org
	--password new-root-pass));
ok($st == 1 && $err =~ /command line/, 'set-password refuses a password on argv');

# On a terminal: a prompt, and what is typed is not echoed.
{
	require IO::Pty;
	my $pty = IO::Pty->new;
	my (undef, $outfile) = tempfile(UNLINK => 1);
	my $pid = fork() // die "fork: $!";
	if ($pid == 0) {
		$pty->make_slave_controlling_terminal;
		my $tty = $pty->slave;
		close $pty;
		open STDIN, '<&', $tty or die;
		open STDERR, '>&', $tty or die;
		open STDOUT, '>', $outfile or die;
		exec bin('xmhub'), qw(user set-password root@example.org) or die;
	}
	$pty->close_slave;
	my ($seen, $buf) = ('', '');
	my $until = sub {
		my ($re) = @_;
		my $rin = '';
		vec($rin, fileno($pty), 1) = 1;
		while ($seen !~ $re && select(my $r = $rin, undef, undef, 20) > 0) {
			last unless sysread($pty, $buf, 4096);
			$seen .= $buf;
		}
	};
	$until->(qr/Password: /);
	like($seen, qr/Password: /, 'on a terminal: a prompt');
	syswrite($pty, "typed-on-tty-1\n");
	$until->(qr/\n/);
	waitpid($pid, 0);
	is($? >> 8, 0, 'the password typed at the prompt is taken');
	unlike($seen, qr/typed-on-tty/, 'and not echoed');
	is(login('root@example.org', 'typed-on-tty-1')->{status}, 200,
		'the typed password logs in');
	($st, $out, $err) = xmhub("new-root-pass\n", qw(user set-password root@example.org));
	is($st, 0, 'back to the other password') or diag($err);
}

# disable: the API no longer lets them in.
my $annl = eval { decode_json(login('ann@example.org', 'ann-password')->{content}) } // {};
ok($annl->{access_token}, 'ann logs in');
($st, $out, $err) = xmhub(undef, qw(user disable ANN@example.org));
ok($st == 0 && $out =~ /disabled/, 'user disable by e-mail') or diag($err);
is(login('ann@example.org', 'ann-password')->{status}, 401, 'a disabled user cannot log in');
$users = eval { decode_json((xmhub(undef, qw(user list --json --facility), $fac))[1]) };
ok(!$users->[0]{is_active}, 'user list shows it inactive');
($st, $out, $err) = xmhub(undef, qw(api-key revoke), $k->{id});
ok($st == 0 && $out =~ /revoked/, 'api-key revoke') or diag($err);
ok(within(5, 401, sub { $http->get($s->url('/api/v1/ping'),
	{headers => {'x-api-key' => $k->{key} // ''}})->{status} }),
	'a revoked key is refused');
($st, $out, $err) = xmhub(undef, qw(api-key revoke 00000000-0000-4000-8000-000000000000));
ok($st == 1 && $err =~ /not found/, 'revoking an unknown key: exit 1');
($st, $out, $err) = xmhub(undef, qw(facility create --name South --slug south));
my $south = eval { decode_json($out)->{id} };
($st, $out, $err) = xmhub(undef, 'api-key', 'create', '--facility', $south,
	'--name', 'south-gw');
my $sk = eval { decode_json($out) } // {};
is($http->get($s->url('/api/v1/ping'), {headers => {'x-api-key' => $sk->{key} // ''}})->{status},
	200, 'a key of another facility works');
($st, $out, $err) = xmhub(undef, qw(facility disable south));
ok($st == 0 && $out =~ /disabled/, 'facility disable by slug') or diag($err);
ok(within(5, 401, sub { $http->get($s->url('/api/v1/ping'),
	{headers => {'x-api-key' => $sk->{key} // ''}})->{status} }),
	'its keys stop working');

# delete: the rows go.
($st, $out, $err) = xmhub(undef, qw(api-key delete), $k->{id});
ok($st == 0 && $out =~ /deleted/, 'api-key delete') or diag($err);
($st, $out) = $s->psql("SELECT count(*) FROM api_keys WHERE id = '$k->{id}'");
is($out + 0, 0, 'the key row is gone');
($st, $out, $err) = xmhub(undef, qw(user delete), $ann);
ok($st == 0 && $out =~ /deleted/, 'user delete by id') or diag($err);
($st, $out) = $s->psql("SELECT count(*) FROM users WHERE id = '$ann'");
is($out + 0, 0, 'the user row is gone');
($st, $out, $err) = xmhub(undef, qw(user delete), $ann);
ok($st == 1 && $err =~ /not found/, 'deleting it again: not found');
my $objdir = $s->setting('XMHUB_STORAGE_DIR');
mkdir "$objdir/$south";
open my $o, '>', "$objdir/$south/probe" or die "$objdir/$south/probe: $!";
print {$o} "x";
close $o;
($st, $out, $err) = xmhub(undef, qw(facility delete south));
ok($st == 0 && $out =~ /deleted/, 'facility delete by slug') or diag($err);
($st, $out) = $s->psql("SELECT count(*) FROM facilities WHERE slug = 'south'");
is($out + 0, 0, 'the facility row is gone');
ok(!-e "$objdir/$south/probe", 'and its stored objects');

# check-config: the stack's env file is complete once the model
# directory is named; every kind of problem is said, exit 1.
my $env = $s->env_file;
my $good = "$env.check";
open my $in, '<', $env or die "$env: $!";
my @lines = <$in>;
close $in;
sub env_file {
	my (@extra) = @_;
	open my $f, '>', $good or die "$good: $!";
	print {$f} @lines, map { "$_\n" } @extra;
	close $f;
	return $good;
}
{
	local $ENV{XMHUB_ENV_FILE};
	delete $ENV{XMHUB_ENV_FILE};
	($st, $out, $err) = xmhub(undef, 'check-config', '--env-file',
		env_file("FACE_API_MODEL_DIR=$ENV{FACE_TEST_MODEL_DIR}"));
	ok($st == 0 && $out =~ /: ok$/m, 'check-config: the stack\'s settings are ok')
		or diag("$out$err");
	@lines = map { s/^XMHUB_JWT_SECRET=.*/XMHUB_JWT_SECRET=tooshort-secret/r } @lines;
	# The stack writes its own FACE_API_STORAGE_ENABLED (true), which
	# would win over the bad value below.
	@lines = grep { !/^FACE_API_STORAGE_ENABLED=/ } @lines;
	($st, $out, $err) = xmhub(undef, 'check-config', '--env-file',
		env_file('FACE_API_MODEL_DIR=/nonexistent/models', 'XMHUB_BOGUS=1',
			'XMHUB_ACCESS_TTL=0', 'FACE_API_CONFIDENCE=2',
			'FACE_API_STORAGE_ENABLED=maybe'));
	is($st, 1, 'check-config with problems: exit 1');
	like($out, qr/^XMHUB_JWT_SECRET: 32 characters or more/m, 'a short secret');
	unlike($out, qr/tooshort-secret/, 'whose value is not printed');
	like($out, qr/^XMHUB_BOGUS: unknown setting/m, 'an unknown name');
	like($out, qr/^XMHUB_ACCESS_TTL: an integer from 1 to/m, 'an integer out of range');
	like($out, qr/^FACE_API_CONFIDENCE: a number from 0.01 to 1/m, 'a number out of range');
	like($out, qr/^FACE_API_STORAGE_ENABLED: true or false/m, 'a bad boolean');
	like($out, qr{^FACE_API_MODEL_DIR: /nonexistent/models}m, 'a missing model directory');
	is(scalar(() = $out =~ /^FACE_API_MODEL_DIR:/mg), 1, 'said once');
	like($out, qr/^6 problems$/m, 'and counted: the six above');
	open my $f, '>', $good or die;
	print {$f} "FACE_API_MODEL_DIR=$ENV{FACE_TEST_MODEL_DIR}\n";
	close $f;
	local $ENV{XMHUB_DATABASE_URL};
	delete $ENV{XMHUB_DATABASE_URL};
	($st, $out, $err) = xmhub(undef, 'check-config', '--env-file', $good);
	ok($st == 1 && $out =~ /^XMHUB_DATABASE_URL: not set/m
		&& $out =~ /^XMHUB_JWT_SECRET: not set/m,
		'missing database URL and JWT secret') or diag($out);
	($st, $out, $err) = xmhub(undef, 'check-config', '--env-file', "$good.none");
	ok($st == 1 && $err =~ /No such file/, 'a missing --env-file: exit 1');
	unlink $good;
}

done_testing();
