#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Authentication end to end (doc/api.md "Authentication", doc/auth.md
# "Tokens (JWT)"): login, refresh with rotation and reuse detection, logout, me,
# hostile tokens, token lifetimes.
use strict;
use warnings;
use Test::More;
use JSON::PP ();
use Time::HiRes qw(time);
use Xmhub::Accounts qw(mkuser login claims jwt is_error program_log
    log_is_clean);
use Xmhub::Platform qw(keys_of);
use Xmhub::Test qw(run);

my $p = Xmhub::Platform->start(own_db => 1); # stops PostgreSQL
my $s = $p->stack;
my $secret = $s->setting('XMHUB_JWT_SECRET');
my $PAIR = 'access_token,refresh_token,token_type';
my $ME = 'display_name,email,facility_id,id,role';

my $root_id = mkuser($p, 'Root@Example.org', 'root-password', 'super_admin');
my $root = login($p, 'root@example.org', 'root-password');
my $tr = $root->{access_token};

sub post {
	my ($path, $json, %opt) = @_;
	return $p->req(POST => $path, json => $json, %opt);
}

sub me { return $p->req(GET => '/api/auth/me', token => $_[0]) }

sub refresh {
	return post('/api/auth/refresh', {refresh_token => $_[0]});
}

my ($st, $b) = post('/api/v1/facilities', {name => 'Auth A', slug => 'auth-a'},
	token => $tr);
is($st, 200, 'facility made') or diag explain $b;
my $fac = $b->{id};
($st, $b) = post('/api/v1/users', {email => 'alice@example.org',
	password => 'alice-password', display_name => 'Alice',
	role => 'user', facility_id => $fac}, token => $tr);
is($st, 200, 'user made') or diag explain $b;
my $alice = $b;

# --- login ---
($st, $b, my $res) = post('/api/auth/login', {email => 'alice@example.org',
	password => 'alice-password'});
is($st, 200, 'login: 200');
is($res->{headers}{'cache-control'}, 'no-store',
	'login: Cache-Control: no-store (the answer holds tokens)');
is(keys_of($b), "$PAIR,user", 'login: the pair, token_type and user');
is($b->{token_type}, 'bearer', 'login: token_type bearer');
is(keys_of($b->{user}), $ME, 'login: user has exactly its five fields');
is_deeply($b->{user}, {id => $alice->{id}, email => 'alice@example.org',
	display_name => 'Alice', role => 'user', facility_id => $fac},
	'login: the user');
my $ca = claims($b->{access_token});
my $cr = claims($b->{refresh_token});
is($ca->{type}, 'access', 'access token: type access');
is($cr->{type}, 'refresh', 'refresh token: type refresh');
is($ca->{sub}, $alice->{id}, 'access token: sub is the user');
is($ca->{role}, 'user', 'access token: role');
is($ca->{facility_id}, $fac, 'access token: facility_id');
is($ca->{exp} - $ca->{iat}, 900, 'access token: 15 minutes by default');
is($cr->{exp} - $cr->{iat}, 2592000, 'refresh token: 30 days by default');
like($cr->{jti}, qr/^[0-9a-f-]{36}$/, 'refresh token: a jti');
is($root->{user}{facility_id}, undef, 'super_admin: facility_id null');
is($root->{user}{email}, 'Root@Example.org',
	'login: e-mail matched whatever the case, shown as stored');
is(claims($tr)->{facility_id}, '', 'super_admin token: facility_id ""');
is(($s->psql("SELECT last_login_at > now() - interval '1 minute' "
	. "FROM users WHERE id = '$alice->{id}'"))[1], "t\n",
	'login: last_login_at set');
my $alice_login = $b;

($st, $b) = post('/api/auth/login', {email => 'ALICE@example.ORG',
	password => 'alice-password'});
is($st, 200, 'login: e-mail case does not matter');

# --- failed logins: all alike ---
my %denied;
for my $case (
    ['wrong password', 'alice@example.org', 'alice-passwore'],
    ['unknown email', 'nobody@example.org', 'alice-password'],
    ['password case', 'alice@example.org', 'ALICE-PASSWORD'],
    ['email with spaces', ' alice@example.org', 'alice-password'],
) {
	my ($name, $email, $pw) = @$case;
	($st, $b) = post('/api/auth/login', {email => $email, password => $pw});
	is_error($st, $b, 401, "login, $name");
	$denied{$b->{detail} // ''}++;
}
is_deeply([keys %denied], ['wrong email or password'],
	'failed logins: one message, "wrong email or password"');

# An unknown e-mail costs a password verification too (auth_password_dummy):
# compared with a wrong password, it must not be much faster.  Each
# attempt is the first failure of its e-mail, so none is throttled (a
# throttled attempt is refused at once, without a verification: 429).
# Known and unknown alternate, so that a FastCGI process's first request
# (slower: its memory touched for the first time) falls on both alike;
# the medians of five are compared.
sub took {
	my ($email) = @_;
	my $t0 = time;
	my ($st) = post('/api/auth/login',
	    {email => $email, password => 'wrong-pw'});
	my $t = time - $t0;
	is($st, 401, "timing: $email refused after a verification");
	return $t;
}
my @timed = map { "timing$_\@example.org" } 1 .. 5;
mkuser($p, $_, "password-of-$_", 'super_admin') for @timed;
my (@k, @u);
for my $i (1 .. 5) {
	push @k, took($timed[$i - 1]);
	push @u, took("nobody$i\@example.org");
}
my ($known, $unknown) = map { (sort { $::a <=> $::b } @$_)[2] } \@k, \@u;
cmp_ok($unknown, '>', $known * 0.4,
	'login: an unknown e-mail takes about as long as a wrong password')
    or diag "known @k s, unknown @u s";
# Five failures of alice from this address (two above): the next attempt
# waits 1 s, then 2 s after a 6th failure (doc/auth.md "Login
# throttling", t/e2e/login-throttle.t).  The super admin clears that.
for (1 .. 6) {
	($st, $b) = post('/api/auth/login', {email => 'alice@example.org',
		password => 'alice-passwore'});
	last if $st == 429;
}
is($st, 429, 'login: after 5 failures from one address, throttled');
($st, $b) = $p->req(DELETE => "/api/v1/users/$alice->{id}/login-throttle",
	token => $tr);
is($st, 204, 'the super admin clears the throttle');

# --- malformed bodies: 400 ---
for my $case (
    ['not JSON', '{"email": '],
    ['an array', '[]'],
    ['empty body', ''],
    ['trailing garbage', '{"email":"a@b.c","password":"x"} x'],
) {
	($st, $b) = $p->req(POST => '/api/auth/login', body => $case->[1]);
	is_error($st, $b, 400, "login, $case->[0]");
}
for my $case (
    ['no email', {password => 'x'}],
    ['no password', {email => 'alice@example.org'}],
    ['email a number', {email => 5, password => 'x'}],
    ['password null', {email => 'alice@example.org', password => undef}],
    ['password an object', {email => 'alice@example.org', password => {}}],
    ['password too long', {email => 'alice@example.org',
	password => 'x' x 1025}],
) {
	($st, $b) = post('/api/auth/login', $case->[1]);
	is_error($st, $b, 400, "login, $case->[0]");
}
($st, $b) = $p->req(GET => '/api/auth/login');
is_error($st, $b, 405, 'GET /api/auth/login');
($st, $b) = $p->req(GET => '/api/auth/nothing');
is_error($st, $b, 404, 'GET /api/auth/nothing');

# --- me ---
($st, $b) = me($alice_login->{access_token});
is($st, 200, 'me: 200');
is_deeply($b, $alice_login->{user}, 'me: the login user object');
($st, $b) = me($tr);
is($st, 200, 'me: super_admin');
is($b->{id}, $root_id, 'me: its id');
for my $case (
    ['no Authorization', {}],
    ['garbage', {Authorization => 'Bearer garbage'}],
    ['empty bearer', {Authorization => 'Bearer '}],
    ['Basic', {Authorization => 'Basic YWxpY2U6YWxpY2U='}],
    ['token without Bearer', {Authorization => $alice_login->{access_token}}],
    ['three dots', {Authorization => 'Bearer a.b.c.d'}],
) {
	($st, $b) = $p->req(GET => '/api/auth/me', headers => $case->[1]);
	is_error($st, $b, 401, "me, $case->[0]");
}
($st, $b) = me($alice_login->{refresh_token});
is_error($st, $b, 401, 'me with a refresh token');

# --- hostile tokens ---
my $now = time;
my %good = (sub => $alice->{id}, role => 'user', facility_id => $fac,
	type => 'access', iat => int($now), exp => int($now) + 600);
($st, $b) = me(jwt({alg => 'HS256'}, \%good, $secret));
is($st, 200, 'a token signed by hand with the secret works (control)');
($st, $b) = me(jwt({alg => 'none'}, \%good, $secret));
is_error($st, $b, 401, 'alg none');
($st, $b) = me(jwt({alg => 'HS512'}, \%good, $secret));
is_error($st, $b, 401, 'HS512 with the same secret');
($st, $b) = me(jwt({alg => 'HS384'}, \%good, $secret));
is_error($st, $b, 401, 'HS384 with the same secret');
($st, $b) = me(jwt({alg => 'HS256'}, \%good, 'x' x 48));
is_error($st, $b, 401, 'another secret');
{
	my $t = $alice_login->{access_token};
	my ($h, $c, $sig) = split /\./, $t;
	my $flip = substr($sig, 5, 1) eq 'A' ? 'B' : 'A';
	substr($sig, 5, 1) = $flip;
	($st, $b) = me("$h.$c.$sig");
	is_error($st, $b, 401, 'tampered signature');
	my $forged = jwt({alg => 'HS256'}, {%good, role => 'super_admin',
		facility_id => ''}, 'wrong');
	my (undef, $fc) = split /\./, $forged;
	($st, $b) = me("$h.$fc.$sig");
	is_error($st, $b, 401, 'claims swapped under a real signature');
}
($st, $b) = me(jwt({alg => 'HS256'}, {%good, exp => int($now) - 5}, $secret));
is_error($st, $b, 401, 'expired access token (exp in the past)');
($st, $b) = me(jwt({alg => 'HS256'}, {%good, type => 'refresh'}, $secret));
is_error($st, $b, 401, 'type refresh on a protected route');

# --- refresh: rotation and reuse detection ---
my $r0 = login($p, 'alice@example.org', 'alice-password');
($st, $b, $res) = refresh($r0->{refresh_token});
is($st, 200, 'refresh: 200') or diag explain $b;
is($res->{headers}{'cache-control'}, 'no-store',
	'refresh: Cache-Control: no-store');
is(keys_of($b), $PAIR, 'refresh: access_token, refresh_token, token_type');
is($b->{token_type}, 'bearer', 'refresh: token_type bearer');
my $r1 = $b;
isnt($r1->{refresh_token}, $r0->{refresh_token}, 'refresh: a new token');
is(claims($r1->{access_token})->{sub}, $alice->{id}, 'refresh: same user');
($st, $b) = me($r1->{access_token});
is($st, 200, 'refresh: the new access token works');
($st, $b) = refresh($r1->{refresh_token});
is($st, 200, 'refresh: the new refresh token works once');
my $r2 = $b;
($st, $b) = refresh($r1->{refresh_token});
is_error($st, $b, 401, 'refresh: a used token again (reuse)');
($st, $b) = refresh($r2->{refresh_token});
is_error($st, $b, 401,
	'refresh: after reuse, the newest token of that login is revoked too');
like(program_log($p),
    qr/refresh token was presented again; token family [0-9a-f-]{36} revoked/,
    'refresh: reuse is logged');
my $fam = claims($r0->{refresh_token})->{jti};
is(($s->psql("SELECT count(*) FILTER (WHERE revoked_at IS NULL), count(*) "
	. "FROM refresh_tokens WHERE family_id = (SELECT family_id FROM "
	. "refresh_tokens WHERE id = '$fam')"))[1], "0|3\n",
	'refresh: every token of the family revoked, none deleted');
# Another login of the same user is a family of its own: untouched.
($st, $b) = refresh($alice_login->{refresh_token});
is($st, 200, 'reuse detection leaves the other logins alone');
my $other = $b;

($st, $b) = refresh($alice_login->{access_token});
is_error($st, $b, 401, 'refresh: an access token as refresh_token');
($st, $b) = refresh('garbage');
is_error($st, $b, 401, 'refresh: garbage');
($st, $b) = refresh(jwt({alg => 'HS256'}, {%good, type => 'refresh',
	jti => '3e0a6b1c-1111-4222-8333-944455556666'}, $secret));
is_error($st, $b, 401, 'refresh: well signed but never issued (unknown)');
($st, $b) = refresh(jwt({alg => 'none'}, {%good, type => 'refresh',
	jti => '3e0a6b1c-1111-4222-8333-944455556666'}, $secret));
is_error($st, $b, 401, 'refresh: alg none');
($st, $b) = post('/api/auth/refresh', {});
is_error($st, $b, 400, 'refresh: no refresh_token');
($st, $b) = post('/api/auth/refresh', {refresh_token => 12});
is_error($st, $b, 400, 'refresh: refresh_token a number');
($st, $b) = $p->req(POST => '/api/auth/refresh', body => 'nope');
is_error($st, $b, 400, 'refresh: not JSON');

# Expired in the database (the stored expiry is the one that counts).
{
	my $r = login($p, 'alice@example.org', 'alice-password');
	my $jti = claims($r->{refresh_token})->{jti};
	$s->psql("UPDATE refresh_tokens SET expires_at = now() - "
		. "interval '1 second' WHERE id = '$jti'");
	($st, $b) = refresh($r->{refresh_token});
	is_error($st, $b, 401, 'refresh: expired');
}

# The tokens follow the user's current role.
{
	($st, $b) = $p->req(PATCH => "/api/v1/users/$alice->{id}",
		token => $tr, json => {role => 'facility_admin'});
	is($st, 200, 'alice made facility_admin');
	($st, $b) = refresh($other->{refresh_token});
	is($st, 200, 'refresh after a role change');
	is(claims($b->{access_token})->{role}, 'facility_admin',
		'refresh: the new token carries the current role');
	$other = $b;
}

# --- logout: one login, or every login of the user ---
{
	my $l1 = login($p, 'alice@example.org', 'alice-password');
	my $l2 = login($p, 'alice@example.org', 'alice-password');
	($st, $b) = refresh($l1->{refresh_token});
	is($st, 200, 'logout: a login refreshed once first');
	my $l1b = $b;
	($st, $b, my $r) = post('/api/auth/logout',
		{refresh_token => $l1b->{refresh_token}});
	is($st, 204, 'logout: 204');
	is($r->{content} // '', '', 'logout: no body');
	($st, $b) = refresh($l1b->{refresh_token});
	is_error($st, $b, 401, 'logout: the token presented is refused after');
	($st, $b) = refresh($l2->{refresh_token});
	is($st, 200, 'logout: another login of the same user still refreshes');
	my $l2b = $b;
	($st, $b) = me($l1b->{access_token});
	is($st, 200, 'logout: the access token lives until it expires '
		. '(documented)');
	($st, $b) = post('/api/auth/logout',
		{refresh_token => $l1b->{refresh_token}});
	is($st, 204, 'logout: twice is fine (the login is already ended)');
	my $l3 = login($p, 'alice@example.org', 'alice-password');
	my $rootl = login($p, 'root@example.org', 'root-password');
	($st, $b) = post('/api/auth/logout',
		{refresh_token => $l3->{refresh_token}, all => JSON::PP::true});
	is($st, 204, 'logout all: 204');
	($st, $b) = refresh($l2b->{refresh_token});
	is_error($st, $b, 401, 'logout all: the other login is ended too');
	($st, $b) = refresh($l3->{refresh_token});
	is_error($st, $b, 401, 'logout all: and the one presented');
	($st, $b) = refresh($rootl->{refresh_token});
	is($st, 200, 'logout all: other users keep their logins');
	is(($s->psql("SELECT count(*) FROM refresh_tokens r JOIN users u "
		. "ON u.id = r.user_id WHERE u.email = 'alice\@example.org' "
		. "AND r.revoked_at IS NULL AND r.used_at IS NULL"))[1], "0\n",
		'logout all: no usable refresh token of the user is left');
	($st, $b) = post('/api/auth/logout', {refresh_token => 'garbage'});
	is_error($st, $b, 401, 'logout: garbage');
	($st, $b) = post('/api/auth/logout',
		{refresh_token => $l1b->{access_token}});
	is_error($st, $b, 401, 'logout: an access token');
	($st, $b) = post('/api/auth/logout', {refresh_token => jwt(
		{alg => 'HS256'}, {%good, type => 'refresh',
		jti => '3e0a6b1c-1111-4222-8333-944455556666'}, $secret)});
	is_error($st, $b, 401, 'logout: well signed but never issued');
	($st, $b) = post('/api/auth/logout', {});
	is_error($st, $b, 400, 'logout: no refresh_token');
	($st, $b) = post('/api/auth/logout',
		{refresh_token => $l1b->{refresh_token}, all => 'yes'});
	is_error($st, $b, 400, 'logout: all not a boolean');
}

# Inactive user: login, refresh and me all refuse.
{
	my $r = login($p, 'alice@example.org', 'alice-password');
	($st, $b) = $p->req(DELETE => "/api/v1/users/$alice->{id}",
		token => $tr);
	is($st, 204, 'alice deactivated');
	($st, $b) = post('/api/auth/login', {email => 'alice@example.org',
		password => 'alice-password'});
	is_error($st, $b, 401, 'login: inactive user');
	is($b->{detail}, 'wrong email or password',
		'login: an inactive user gets the same message');
	($st, $b) = me($r->{access_token});
	is_error($st, $b, 401, 'me: inactive user');
	($st, $b) = refresh($r->{refresh_token});
	is_error($st, $b, 401, 'refresh: inactive user (token revoked)');
	# Even a token that was not revoked: the user's state is checked.
	$s->psql("UPDATE refresh_tokens SET revoked_at = NULL "
		. "WHERE user_id = '$alice->{id}' AND used_at IS NULL");
	($st, $b) = refresh($r->{refresh_token});
	is_error($st, $b, 401, 'refresh: inactive user (token still valid)');
	($st, $b) = $p->req(PATCH => "/api/v1/users/$alice->{id}",
		token => $tr, json => {is_active => JSON::PP::true});
	is($st, 200, 'alice reactivated');
	ok(login($p, 'alice@example.org', 'alice-password'),
		'login: works again after reactivation');
}

# Inactive facility: its users cannot log in.
{
	($st, $b) = $p->req(PATCH => "/api/v1/facilities/$fac", token => $tr,
		json => {is_active => JSON::PP::false});
	is($st, 200, 'facility deactivated');
	($st, $b) = post('/api/auth/login', {email => 'alice@example.org',
		password => 'alice-password'});
	is_error($st, $b, 401, 'login: user of an inactive facility');
	($st, $b) = $p->req(PATCH => "/api/v1/facilities/$fac", token => $tr,
		json => {is_active => JSON::PP::true});
	ok(login($p, 'alice@example.org', 'alice-password'),
		'login: works again with the facility active');
}

# User gone: its facility deleted (users and tokens cascade).
{
	($st, $b) = post('/api/v1/facilities', {name => 'Gone', slug => 'gone'},
		token => $tr);
	my $gone = $b->{id};
	($st, $b) = post('/api/v1/users', {email => 'bob@example.org',
		password => 'bob-password', display_name => 'Bob',
		role => 'facility_admin', facility_id => $gone}, token => $tr);
	my $r = login($p, 'bob@example.org', 'bob-password');
	($st, $b) = $p->req(DELETE => "/api/v1/facilities/$gone", token => $tr);
	is($st, 204, 'facility with bob deleted');
	($st, $b) = refresh($r->{refresh_token});
	is_error($st, $b, 401, 'refresh: user missing');
	($st, $b) = me($r->{access_token});
	is_error($st, $b, 401, 'me: user missing');
	($st, $b) = post('/api/auth/login', {email => 'bob@example.org',
		password => 'bob-password'});
	is_error($st, $b, 401, 'login: user missing');
}

# Database down: 503 with a detail; back up: works again.
{
	$s->stop_db;
	($st, $b) = post('/api/auth/login', {email => 'root@example.org',
		password => 'root-password'});
	is_error($st, $b, 503, 'login, database down');
	($st, $b) = refresh($other->{refresh_token});
	is_error($st, $b, 503, 'refresh, database down');
	($st, $b) = post('/api/auth/logout',
		{refresh_token => $other->{refresh_token}});
	is_error($st, $b, 503, 'logout, database down');
	$s->start_db;
	ok(login($p, 'root@example.org', 'root-password'),
		'login: works when the database is back');
}

# --- settings ---
# A bad lifetime stops the program, saying why.
for my $case (['XMHUB_ACCESS_TTL', 'abc'], ['XMHUB_ACCESS_TTL', '0'],
    ['XMHUB_REFRESH_TTL', '-5'], ['XMHUB_REFRESH_TTL', '12s']) {
	my ($name, $val) = @$case;
	local $ENV{XMHUB_ENV_FILE} = $s->env_file;
	local $ENV{$name} = $val;
	my ($rc, $out, $err) = run(["$ENV{XMHUB_BUILDDIR}/cgi-bin/auth"]);
	is($rc, 1, "$name=$val: cgi-bin/auth exits 1");
	like($err, qr/\Q$name\E/, "$name=$val: and says which setting");
}
{
	local $ENV{XMHUB_ENV_FILE} = $s->env_file;
	local $ENV{XMHUB_JWT_SECRET} = 'short';
	my ($rc, $out, $err) = run(["$ENV{XMHUB_BUILDDIR}/cgi-bin/auth"]);
	is($rc, 1, 'a JWT secret under 32 characters: cgi-bin/auth exits 1');
	like($err, qr/XMHUB_JWT_SECRET/, 'and says so');
}

# Short lifetimes from the env file: restart the stack with them.
{
	$s->restart(env => {XMHUB_ACCESS_TTL => 2, XMHUB_REFRESH_TTL => 3600});
	my $r = login($p, 'root@example.org', 'root-password');
	my $c = claims($r->{access_token});
	is($c->{exp} - $c->{iat}, 2, 'XMHUB_ACCESS_TTL=2: a 2-second token');
	$c = claims($r->{refresh_token});
	is($c->{exp} - $c->{iat}, 3600, 'XMHUB_REFRESH_TTL=3600');
	($st, $b) = me($r->{access_token});
	is($st, 200, 'short-lived token: works at first');
	sleep 3;
	($st, $b) = me($r->{access_token});
	is_error($st, $b, 401, 'short-lived token: expired after 3 s');
	like($b->{detail}, qr/expired/, 'short-lived token: detail says expired');
	($st, $b) = refresh($r->{refresh_token});
	is($st, 200, 'short-lived token: the refresh token still works');
	($st, $b) = me($b->{access_token});
	is($st, 200, 'short-lived token: and gives a working access token');
}

log_is_clean($p);

done_testing;
