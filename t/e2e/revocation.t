#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Revocation takes effect on the very next request (doc/auth.md "Account
# state on every request"): a deactivated, demoted, deleted user, a new
# password, a revoked key, a deactivated or deleted facility, each made
# through one program (or straight in SQL, as another host would) and
# seen by another program's process, whose cache held the caller as
# valid a moment before.  An open WebSocket whose key is revoked ends
# before its next batch is stored.
use strict;
use warnings;
use Test::More;
use Xmhub::Accounts qw(mkuser login);
use Xmhub::Ingest;
use Xmhub::Platform qw(is_error);
use Xmhub::WS;
use Xmhub::XMBP qw(batch);

my $p = Xmhub::Platform->start;
my $s = $p->stack;
my $root = $p->token($p->user('super_admin', undef));

# ok_then_refused($what, $check, $do): $check (a sub giving a status)
# answers 200 now from a warm cache, then the change $do is made through
# the API, then the same $check answers 401 on the very next request.
sub ok_then_refused {
	my ($what, $check, $do) = @_;
	is($check->(), 200, "$what: 200 before") for 1 .. 3;
	$do->();
	is($check->(), 401, "$what: refused on the next request");
}

# within($seconds, $want, $check): polls $check until it answers $want;
# true when it did within $seconds.  For changes made in SQL, outside any
# xmhub process: they are seen when their notification arrives
# (doc/auth.md), not by a request racing it.
sub within {
	my ($seconds, $want, $check) = @_;
	my $end = time + $seconds;
	while (1) {
		return 1 if $check->() == $want;
		return 0 if time > $end;
		select(undef, undef, undef, 0.01);
	}
}

# get($path, %auth): the status of a GET.
sub get { my ($path, %a) = @_; return ($p->req(GET => $path, %a))[0] }

# A user deactivated by the users program; seen by devices and uploads.
{
	my $fac = $p->facility('Rev deactivate');
	my $u = $p->user('user', $fac);
	my $t = $p->token($u);
	ok_then_refused('deactivated user (devices)',
	    sub { get('/api/v1/devices', token => $t) },
	    sub {
		    is(($p->req(DELETE => "/api/v1/users/$u->{id}",
			token => $root))[0], 204, 'user deactivated');
	    });
	is(get('/api/v1/uploads', token => $t), 401,
	    'deactivated user: another program refuses too');
	my ($st, $b) = $p->req(PATCH => "/api/v1/users/$u->{id}", token => $t,
		json => {is_active => JSON::PP::true});
	is_error($st, $b, 401, 'deactivated user cannot reactivate itself');
}

# A facility admin demoted: its token no longer creates users or keys.
{
	my $fac = $p->facility('Rev demote');
	my $a = $p->user('facility_admin', $fac);
	my $t = $p->token($a);
	ok_then_refused('demoted admin (api-keys)',
	    sub { get('/api/v1/api-keys', token => $t) },
	    sub {
		    is(($p->req(PATCH => "/api/v1/users/$a->{id}",
			token => $root, json => {role => 'user'}))[0], 200,
			'admin demoted');
	    });
	my ($st) = $p->req(POST => '/api/v1/users', token => $t,
		json => {email => 'minion@example.org', password => 'pw-123456',
			display_name => 'Minion', role => 'facility_admin'});
	is($st, 401, 'demoted admin: creating an admin is refused');
	($st) = $p->req(POST => '/api/v1/api-keys', token => $t,
		json => {name => 'late key'});
	is($st, 401, 'demoted admin: minting a key is refused');
}

# A new password ends the access tokens issued before it.
{
	my $fac = $p->facility('Rev password');
	my $id = mkuser($p, 'rev.pw@example.org', 'old-password-1', 'user',
		$fac);
	my $old = login($p, 'rev.pw@example.org', 'old-password-1');
	ok_then_refused('new password (tags)',
	    sub { get('/api/v1/tags', token => $old->{access_token}) },
	    sub {
		    is(($p->req(PATCH => "/api/v1/users/$id", token => $root,
			json => {password => 'new-password-2'}))[0], 200,
			'password changed');
	    });
	my $new = login($p, 'rev.pw@example.org', 'new-password-2');
	is(get('/api/v1/tags', token => $new->{access_token}), 200,
	    'a token of the new password works');
}

# /api/auth/me answers from the cache its check filled (doc/auth.md): a
# new display name, given through the users program, is on the next /me
# of the login program's processes; an e-mail changed in SQL as soon as
# its notification arrives.
{
	my $fac = $p->facility('Rev profile');
	my $u = $p->user('user', $fac);
	my $t = $p->token($u);
	my $me = sub {
		my ($st, $b) = $p->req(GET => '/api/auth/me', token => $t);
		return $st == 200 ? "$b->{display_name} <$b->{email}>" : $st;
	};
	my $email = ($p->sql("SELECT email FROM users WHERE id = '$u->{id}'"))[0];
	is($me->(), "Test user <$email>", '/me: 200 before') for 1 .. 3;
	is(($p->req(PATCH => "/api/v1/users/$u->{id}", token => $root,
	    json => {display_name => 'Renamed'}))[0], 200, 'display name changed');
	is($me->(), "Renamed <$email>", '/me: the new name on the next request')
	    for 1 .. 4;
	$p->sql("UPDATE users SET email = 'moved\@example.org' "
	    . "WHERE id = '$u->{id}'");
	my $moved = 'Renamed <moved@example.org>';
	ok(within(2, 1, sub { $me->() eq $moved ? 1 : 0 }),
	    '/me: an e-mail changed in SQL is seen');
	is($me->(), $moved, '/me: and stays so') for 1 .. 4;
}

# Straight in the database, as another host's process would change it:
# seen as soon as the notification arrives, and for good.
{
	my $fac = $p->facility('Rev sql');
	my $u = $p->user('facility_admin', $fac);
	my $t = $p->token($u);
	my $devices = sub { get('/api/v1/devices', token => $t) };
	is($devices->(), 200, 'SQL: 200 before') for 1 .. 3;
	$p->sql("UPDATE users SET is_active = false WHERE id = '$u->{id}'");
	ok(within(2, 401, $devices), 'user deactivated in SQL: refused');
	is($devices->(), 401, 'user deactivated in SQL: and stays refused')
	    for 1 .. 5;
	$p->sql("UPDATE users SET is_active = true WHERE id = '$u->{id}'");
	my $t1 = $p->token({%$u, ver => 1});
	my $again = sub { get('/api/v1/devices', token => $t1) };
	ok(within(2, 200, $again), 'reactivated in SQL: a new token works');
	is($devices->(), 401,
	    'reactivated: the token from before stays refused');
	$p->sql("DELETE FROM users WHERE id = '$u->{id}'");
	ok(within(2, 401, $again), 'user deleted in SQL: refused');
	is($again->(), 401, 'user deleted in SQL: and stays refused') for 1 .. 5;
}

# A revoked key, a deactivated facility, a deleted facility.
{
	my $fac = $p->facility('Rev keys');
	my $admin = $p->token($p->user('facility_admin', $fac));
	my $key = $p->api_key($admin, 'ingest', 'upload');
	my ($kid) = $p->sql("SELECT id FROM api_keys WHERE facility_id = "
		. "'$fac'");
	ok_then_refused('revoked key (ping)',
	    sub { get('/api/v1/ping', key => $key) },
	    sub {
		    is(($p->req(DELETE => "/api/v1/api-keys/$kid",
			token => $admin))[0], 204, 'key revoked');
	    });
	my ($st) = $p->req(POST => '/api/v1/ingest/sessions', key => $key,
		json => {device_uid => 1, streams => []});
	is($st, 401, 'revoked key: the ingest program refuses it too');

	my $key2 = $p->api_key($admin, 'ingest');
	ok_then_refused('facility deactivated (key)',
	    sub { get('/api/v1/ping', key => $key2) },
	    sub { is(($p->req(PATCH => "/api/v1/facilities/$fac",
		    token => $root, json => {is_active => JSON::PP::false}))[0],
		    200, 'facility deactivated') });
	is(get('/api/v1/devices', token => $admin), 401,
	    'facility deactivated: its admin\'s token is refused');
	is(($p->req(PATCH => "/api/v1/facilities/$fac", token => $root,
		json => {is_active => JSON::PP::true}))[0], 200,
		'facility reactivated');
	ok_then_refused('facility deleted (token)',
	    sub { get('/api/v1/devices', token => $admin) },
	    sub { is(($p->req(DELETE => "/api/v1/facilities/$fac",
		    token => $root))[0], 204, 'facility deleted') });
	is(get('/api/v1/ping', key => $key2), 401,
	    'facility deleted: its key is refused');
}

# An open WebSocket: the key revoked between two batches.
{
	my $fac = $p->facility('Rev ws');
	my $admin = $p->token($p->user('facility_admin', $fac));
	my $key = $p->api_key($admin, 'ingest');
	my ($kid) = $p->sql("SELECT id FROM api_keys WHERE facility_id = "
		. "'$fac'");
	my $sess = Xmhub::Ingest->new($p, $key)->session(5, [0, 'f32']);
	my ($c, $st) = Xmhub::WS->connect($s->port,
		"/api/v1/ingest/ws?session_id=$sess->{id}", {'X-Api-Key' => $key});
	is($st, 101, 'ws: upgraded');
	$c->send_binary(batch(0, undef, [0, 'f32', [[1, 1.5], [2, 2.5]]]));
	my ($type, $ack) = $c->read_message(30);
	is(length($ack // ''), 4, 'ws: first batch acknowledged');
	is(($p->req(DELETE => "/api/v1/api-keys/$kid", token => $admin))[0],
	    204, 'ws: key revoked while the connection is open');
	$c->send_binary(batch(1, undef, [0, 'f32', [[3, 3.5]]]));
	my ($t2, $msg) = $c->read_message(30);
	like($msg // '', qr/invalid API key/,
	    'ws: the next batch gets the error message');
	my ($t3) = $c->read_message(30);
	ok($t3 eq 'eof' || $t3 eq 'close', 'ws: then the connection ends');
	is($p->sql("SELECT total_samples FROM ingest_sessions WHERE id = "
		. "'$sess->{id}'"), 2, 'ws: the batch after the revoke is not stored');
}

done_testing();
