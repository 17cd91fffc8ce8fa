#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Users end to end (doc/api.md "Users", the super_admin rules of doc/api.md
# "Roles and facilities"): every endpoint, the answers' shapes, every error
# status, the role matrix, two-facility isolation, soft delete and reactivation.
use strict;
use warnings;
use Test::More;
use Xmhub::Accounts qw(mkuser login claims is_error log_is_clean);
use Xmhub::Platform qw(keys_of);

# Every answer is checked against doc/platform-www/openapi.json.
$ENV{XMHUB_OPENAPI_CHECK} = 1;

my $p = Xmhub::Platform->start(own_db => 1); # stops PostgreSQL
my $s = $p->stack;
my $USER = 'created_at,display_name,email,facility_id,id,is_active,'
    . 'last_login_at,role,updated_at';
my $NOID = '00000000-0000-4000-8000-000000000000';
my ($T, $F) = (JSON::PP::true, JSON::PP::false);

my $root_id = mkuser($p, 'root@example.org', 'root-password', 'super_admin');
my $tr = login($p, 'root@example.org', 'root-password')->{access_token};

sub req {
	my ($method, $path, $token, $json) = @_;
	return $p->req($method, $path, token => $token,
		defined $json ? (json => $json) : ());
}

sub create {
	my ($token, %u) = @_;
	return req(POST => '/api/v1/users', $token, \%u);
}

# ids of a list answer, sorted
sub ids { return join ',', sort map { $_->{id} } @{$_[0] // []} }

my ($st, $b) = req(POST => '/api/v1/facilities', $tr, {name => 'A',
	slug => 'a'});
my $fa = $b->{id};
($st, $b) = req(POST => '/api/v1/facilities', $tr, {name => 'B',
	slug => 'b'});
my $fb = $b->{id};

# --- create (super_admin) ---
($st, $b) = create($tr, email => 'Admin.A@Example.org',
	password => 'admin-a-pw', display_name => 'Admin A',
	role => 'facility_admin', facility_id => $fa);
is($st, 200, 'create: 200') or diag explain $b;
is(keys_of($b), $USER, 'create: exactly the User fields (no hash)');
is($b->{email}, 'Admin.A@Example.org', 'create: e-mail as given');
is($b->{display_name}, 'Admin A', 'create: display_name');
is($b->{role}, 'facility_admin', 'create: role');
is($b->{facility_id}, $fa, 'create: facility_id');
ok($b->{is_active} && JSON::PP::is_bool($b->{is_active}),
	'create: active');
is($b->{last_login_at}, undef, 'create: never logged in');
like($b->{created_at}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/,
	'create: created_at in ISO 8601 UTC');
my $admin_a = $b;
is(($s->psql("SELECT password_hash LIKE '\$argon2id\$v=19\$%' FROM users "
	. "WHERE id = '$b->{id}'"))[1], "t\n", 'create: stored as Argon2id');

($st, $b) = create($tr, email => 'admin.a@example.ORG', password => 'x' x 8,
	display_name => 'Dup', role => 'user', facility_id => $fb);
is_error($st, $b, 409, 'create: e-mail exists, whatever its case');

my %made;
for my $u (['user.a', 'user', $fa], ['admin.b', 'facility_admin', $fb],
    ['user.b', 'user', $fb]) {
	($st, $b) = create($tr, email => "$u->[0]\@example.org",
		password => "$u->[0]-pw", display_name => $u->[0],
		role => $u->[1], facility_id => $u->[2]);
	is($st, 200, "create $u->[0]") or diag explain $b;
	$made{$u->[0]} = $b;
}
my ($user_a, $admin_b, $user_b) = @made{qw(user.a admin.b user.b)};
($st, $b) = create($tr, email => 'root2@example.org', password => 'root2-pw',
	display_name => 'Root 2', role => 'super_admin');
is($st, 200, 'create a super_admin without facility_id');
is($b->{facility_id}, undef, 'a super_admin has facility_id null');
my $root2 = $b;
($st, $b) = create($tr, email => 'root3@example.org', password => 'root3-pw',
	display_name => 'Root 3', role => 'super_admin', facility_id => undef);
is($st, 200, 'create a super_admin with facility_id null');

($st, $b) = create($tr, email => 'nofac@example.org', password => 'x' x 8,
	display_name => 'N', role => 'user');
is_error($st, $b, 400, 'super_admin creates a user without facility_id');
($st, $b) = create($tr, email => 'nofac@example.org', password => 'x' x 8,
	display_name => 'N', role => 'facility_admin', facility_id => undef);
is_error($st, $b, 400, 'super_admin creates a facility_admin, facility null');
($st, $b) = create($tr, email => 'sfac@example.org', password => 'x' x 8,
	display_name => 'S', role => 'super_admin', facility_id => $fa);
is_error($st, $b, 400, 'a super_admin with a facility_id');
($st, $b) = create($tr, email => 'nof@example.org', password => 'x' x 8,
	display_name => 'N', role => 'user', facility_id => $NOID);
is_error($st, $b, 400, 'a facility_id that names no facility');

my %base = (email => 'v@example.org', password => 'valid-pw',
	display_name => 'V', role => 'user', facility_id => $fa);
for my $case (
    ['password of 7 bytes', password => '1234567'],
    ['password of 1025 bytes', password => 'p' x 1025],
    ['password a number', password => 12345678],
    ['email not an address', email => 'not-an-email'],
    ['email with two @', email => 'a@b@example.org'],
    ['email null', email => undef],
    ['role unknown', role => 'admin'],
    ['role null', role => undef],
    ['display_name empty', display_name => ''],
    ['display_name a number', display_name => 5],
    ['facility_id not a UUID', facility_id => 'a'],
    ['is_active ignored but email missing', email => undef],
) {
	my ($name, %over) = @$case;
	($st, $b) = create($tr, %base, %over);
	is_error($st, $b, 400, "create, $name");
}
for my $field (qw(email password display_name role)) {
	my %u = %base;
	delete $u{$field};
	($st, $b) = create($tr, %u);
	is_error($st, $b, 400, "create without $field");
}
($st, $b) = create($tr, %base, password => '12345678');
is($st, 200, 'create: a password of exactly 8 bytes');
my $v = $b;

# --- logins of everyone ---
my %tok = (
	admin_a => login($p, 'admin.a@example.org', 'admin-a-pw')
	    ->{access_token},
	user_a => login($p, 'user.a@example.org', 'user.a-pw')->{access_token},
	admin_b => login($p, 'admin.b@example.org', 'admin.b-pw')
	    ->{access_token},
	user_b => login($p, 'user.b@example.org', 'user.b-pw')->{access_token},
);

# --- create (facility_admin) ---
($st, $b) = create($tok{admin_a}, email => 'new.a@example.org',
	password => 'new.a-pw', display_name => 'New A', role => 'user');
is($st, 200, 'facility_admin creates a user: 200') or diag explain $b;
is($b->{facility_id}, $fa, "facility_admin's new user is in its facility");
my $new_a = $b;
($st, $b) = create($tok{admin_a}, email => 'new.a2@example.org',
	password => 'new.a2-pw', display_name => 'New A2',
	role => 'facility_admin', facility_id => $fa);
is($st, 200, 'facility_admin names its own facility: 200');
is($b->{role}, 'facility_admin', 'facility_admin creates a facility_admin');
my $new_a2 = $b;
($st, $b) = create($tok{admin_a}, email => 'new.b@example.org',
	password => 'new.b-pw', display_name => 'New B', role => 'user',
	facility_id => $fb);
is_error($st, $b, 403, "facility_admin names another facility");
($st, $b) = create($tok{admin_a}, email => 'sa@example.org',
	password => 'sa-password', display_name => 'SA', role => 'super_admin');
is_error($st, $b, 403, 'facility_admin creates a super_admin');
($st, $b) = create($tok{user_a}, email => 'x@example.org',
	password => 'x-password', display_name => 'X', role => 'user');
is_error($st, $b, 403, 'a user creates a user');
($st, $b) = create(undef, email => 'x@example.org',
	password => 'x-password', display_name => 'X', role => 'user');
is_error($st, $b, 401, 'nobody creates a user');

# --- list ---
($st, $b) = req(GET => '/api/v1/users', $tr);
is($st, 200, 'list (super_admin): 200');
is(ref $b, 'ARRAY', 'list: an array');
is(keys_of($b->[0]), $USER, 'list: User objects');
is(scalar @$b, 10, 'list (super_admin): everybody');
my @created = map { $_->{created_at} } @$b;
is_deeply(\@created, [sort @created], 'list: oldest first');
($st, $b) = req(GET => "/api/v1/users?facility_id=$fb", $tr);
is(ids($b), ids([$admin_b, $user_b]), 'list ?facility_id=B: B only');
($st, $b) = req(GET => '/api/v1/users?facility_id=' . uc $fb, $tr);
is(ids($b), ids([$admin_b, $user_b]), 'list ?facility_id in upper case');
($st, $b) = req(GET => '/api/v1/users?facility_id=nope', $tr);
is_error($st, $b, 400, 'list ?facility_id not a UUID');
($st, $b) = req(GET => "/api/v1/users?facility_id=$NOID", $tr);
is_deeply($b, [], 'list ?facility_id of no facility: empty');

my $a_ids = ids([$admin_a, $user_a, $v, $new_a, $new_a2]);
($st, $b) = req(GET => '/api/v1/users', $tok{admin_a});
is($st, 200, 'list (facility_admin): 200');
is(ids($b), $a_ids, 'list (facility_admin A): exactly the users of A');
ok(!grep({ !defined $_->{facility_id} } @$b),
	'list (facility_admin): no super_admin');
($st, $b) = req(GET => "/api/v1/users?facility_id=$fb", $tok{admin_a});
is(ids($b), $a_ids, 'list (facility_admin A) ?facility_id=B: still A only');
($st, $b) = req(GET => '/api/v1/users', $tok{admin_b});
is(ids($b), ids([$admin_b, $user_b]), 'list (facility_admin B): B only');
($st, $b) = req(GET => '/api/v1/users', $tok{user_a});
is_error($st, $b, 403, 'list (user)');
($st, $b) = req(GET => '/api/v1/users', undef);
is_error($st, $b, 401, 'list (nobody)');

# --- get ---
($st, $b) = req(GET => "/api/v1/users/$user_a->{id}", $tok{admin_a});
is($st, 200, 'get (facility_admin, own facility): 200');
is_deeply({%$b, last_login_at => undef, updated_at => undef},
	{%$user_a, updated_at => undef},
	'get: the user as created (it has logged in since)');
($st, $b) = req(GET => "/api/v1/users/$user_b->{id}", $tr);
is($st, 200, 'get (super_admin, any facility): 200');
($st, $b) = req(GET => "/api/v1/users/$root2->{id}", $tr);
is($st, 200, 'get (super_admin) a super_admin: 200');
($st, $b) = req(GET => "/api/v1/users/$user_b->{id}", $tok{admin_a});
is_error($st, $b, 403, "get (facility_admin A) B's user");
($st, $b) = req(GET => "/api/v1/users/$root_id", $tok{admin_a});
is_error($st, $b, 403, 'get (facility_admin) a super_admin');
($st, $b) = req(GET => "/api/v1/users/$user_a->{id}", $tok{user_a});
is_error($st, $b, 403, 'get (user) even itself');
($st, $b) = req(GET => "/api/v1/users/$NOID", $tr);
is_error($st, $b, 404, 'get: unknown id');
($st, $b) = req(GET => "/api/v1/users/$NOID", $tok{admin_a});
is_error($st, $b, 404, 'get (facility_admin): unknown id');
($st, $b) = req(GET => '/api/v1/users/12', $tr);
is_error($st, $b, 400, 'get: id not a UUID');

# --- update ---
sleep 1; # updated_at must move
($st, $b) = req(PATCH => "/api/v1/users/$user_a->{id}", $tok{admin_a},
	{display_name => 'User A renamed', email => 'ignored@example.org'});
is($st, 200, 'update display_name: 200') or diag explain $b;
is(keys_of($b), $USER, 'update: a User');
is($b->{display_name}, 'User A renamed', 'update: display_name');
is($b->{email}, $user_a->{email}, 'update: e-mail not changed by PATCH');
isnt($b->{updated_at}, $user_a->{updated_at}, 'update: updated_at moved');
($st, $b) = req(PATCH => "/api/v1/users/$new_a->{id}", $tok{admin_a},
	{role => 'facility_admin'});
is($b->{role}, 'facility_admin', 'facility_admin promotes to facility_admin');
($st, $b) = req(PATCH => "/api/v1/users/$new_a->{id}", $tok{admin_a},
	{role => 'user'});
is($b->{role}, 'user', 'facility_admin demotes a facility_admin');
($st, $b) = req(PATCH => "/api/v1/users/$new_a->{id}", $tok{admin_a},
	{role => 'super_admin'});
is_error($st, $b, 403, 'facility_admin promotes to super_admin');
($st, $b) = req(PATCH => "/api/v1/users/$user_b->{id}", $tok{admin_a},
	{display_name => 'hacked'});
is_error($st, $b, 403, "facility_admin A updates B's user");
($st, $b) = req(PATCH => "/api/v1/users/$root2->{id}", $tok{admin_a},
	{display_name => 'hacked'});
is_error($st, $b, 403, 'facility_admin updates a super_admin');
($st, $b) = req(PATCH => "/api/v1/users/$new_a->{id}", $tok{admin_a},
	{facility_id => $fb});
is_error($st, $b, 403, 'facility_admin moves a user to another facility');
($st, $b) = req(PATCH => "/api/v1/users/$user_a->{id}", $tok{user_a},
	{display_name => 'me'});
is_error($st, $b, 403, 'a user updates itself');
($st, $b) = req(GET => "/api/v1/users/$user_b->{id}", $tr);
is($b->{display_name}, 'user.b', 'nothing above changed B\'s user');

($st, $b) = req(PATCH => "/api/v1/users/$new_a->{id}", $tr,
	{role => 'super_admin'});
is($st, 200, 'super_admin promotes to super_admin');
is($b->{role}, 'super_admin', 'promoted');
is($b->{facility_id}, undef, 'promotion clears the facility');
($st, $b) = req(PATCH => "/api/v1/users/$new_a->{id}", $tr,
	{role => 'user'});
is_error($st, $b, 400, 'demoting a super_admin without a facility');
($st, $b) = req(PATCH => "/api/v1/users/$new_a->{id}", $tr,
	{role => 'super_admin', facility_id => $fa});
is_error($st, $b, 400, 'a super_admin given a facility_id');
($st, $b) = req(PATCH => "/api/v1/users/$new_a->{id}", $tr,
	{role => 'user', facility_id => $fb});
is($st, 200, 'demoting a super_admin with a facility_id: 200');
is_deeply([$b->{role}, $b->{facility_id}], ['user', $fb],
	'demoted into facility B');
($st, $b) = req(PATCH => "/api/v1/users/$new_a->{id}", $tr,
	{facility_id => $fa});
is($b->{facility_id}, $fa, 'super_admin moves a user to facility A');
($st, $b) = req(PATCH => "/api/v1/users/$new_a->{id}", $tr,
	{facility_id => $NOID});
is_error($st, $b, 400, 'move to a facility that does not exist');
($st, $b) = req(PATCH => "/api/v1/users/$root_id", $tr,
	{role => 'facility_admin', facility_id => $fa});
is_error($st, $b, 400, 'a super_admin changes its own role');
($st, $b) = req(PATCH => "/api/v1/users/$admin_a->{id}", $tok{admin_a},
	{is_active => $F});
is_error($st, $b, 400, 'a facility_admin deactivates itself');
($st, $b) = req(PATCH => "/api/v1/users/$admin_a->{id}", $tok{admin_a},
	{display_name => 'Admin A (me)', is_active => $T, role =>
	'facility_admin'});
is($st, 200, 'updating oneself otherwise: 200');
for my $case (
    ['is_active a string', {is_active => 'false'}],
    ['role unknown', {role => 'root'}],
    ['display_name null', {display_name => undef}],
    ['display_name empty', {display_name => ''}],
    ['password too short', {password => 'short'}],
    ['facility_id not a UUID', {facility_id => 'x'}],
) {
	($st, $b) = req(PATCH => "/api/v1/users/$user_a->{id}", $tok{admin_a},
		$case->[1]);
	is_error($st, $b, 400, "update, $case->[0]");
}
($st, $b) = $p->req(PATCH => "/api/v1/users/$user_a->{id}",
	token => $tok{admin_a}, body => '{');
is_error($st, $b, 400, 'update, malformed JSON');
($st, $b) = req(PATCH => "/api/v1/users/$NOID", $tr, {display_name => 'x'});
is_error($st, $b, 404, 'update: unknown id');
($st, $b) = req(PATCH => "/api/v1/users/$NOID", $tok{admin_a}, {});
is_error($st, $b, 404, 'update (facility_admin): unknown id');

# A new password: the old one stops working, so do the old sessions.
{
	my $old = login($p, 'user.a@example.org', 'user.a-pw');
	($st, $b) = req(PATCH => "/api/v1/users/$user_a->{id}", $tok{admin_a},
		{password => 'user.a-new-pw'});
	is($st, 200, 'update password: 200');
	ok(!exists $b->{password} && !exists $b->{password_hash},
		'update password: no password in the answer');
	($st, $b) = req(POST => '/api/auth/login', undef,
		{email => 'user.a@example.org', password => 'user.a-pw'});
	is_error($st, $b, 401, 'the old password no longer logs in');
	my $new = login($p, 'user.a@example.org', 'user.a-new-pw');
	ok($new->{access_token}, 'the new password logs in');
	($st, $b) = req(POST => '/api/auth/refresh', undef,
		{refresh_token => $old->{refresh_token}});
	is_error($st, $b, 401, 'sessions from before the new password end');
	($st, $b) = req(GET => '/api/auth/me', $tok{user_a});
	is_error($st, $b, 401,
		'an access token from before the new password ends at once');
	$tok{user_a} = $new->{access_token};
}

# --- who sets whose password (doc/auth.md) ---
{
	($st, $b) = req(PATCH => "/api/v1/users/$new_a2->{id}", $tok{admin_a},
		{password => 'taken-over-pw'});
	is_error($st, $b, 403,
		"facility_admin sets a peer facility_admin's password");
	like($b->{detail}, qr/password of a user only/,
		'the detail says whose passwords a facility_admin sets');
	($st, $b) = req(PATCH => "/api/v1/users/$new_a2->{id}", $tok{admin_a},
		{role => 'user', password => 'taken-over-pw'});
	is_error($st, $b, 403, '... also when demoting it in the same request');
	($st, $b) = req(GET => "/api/v1/users/$new_a2->{id}", $tr);
	is($b->{role}, 'facility_admin', 'the refused request changed nothing');
	ok(login($p, 'new.a2@example.org', 'new.a2-pw'),
		'the peer keeps its password');
	($st, $b) = req(PATCH => "/api/v1/users/$root2->{id}", $tok{admin_a},
		{password => 'taken-over-pw'});
	is_error($st, $b, 403, "facility_admin sets a super_admin's password");
	($st, $b) = req(PATCH => "/api/v1/users/$user_a->{id}", $tok{admin_b},
		{password => 'taken-over-pw'});
	is_error($st, $b, 403, "facility_admin sets another facility's user's");

	($st, $b) = req(PATCH => "/api/v1/users/$new_a->{id}", $tok{admin_a},
		{password => 'new.a-new-pw'});
	is($st, 200, "facility_admin sets its own facility's user's: 200")
	    or diag explain $b;
	ok(login($p, 'new.a@example.org', 'new.a-new-pw'),
		'that user logs in with it');
	($st, $b) = req(PATCH => "/api/v1/users/$admin_b->{id}", $tr,
		{password => 'admin.b-new-pw'});
	is($st, 200, "super_admin sets a facility_admin's: 200");
	# Its tokens from before end (doc/auth.md "Account state").
	$tok{admin_b} = login($p, 'admin.b@example.org', 'admin.b-new-pw')
	    ->{access_token};
	ok($tok{admin_b}, 'the facility_admin logs in with it');
	($st, $b) = req(PATCH => "/api/v1/users/$root2->{id}", $tr,
		{password => 'root2-new-pw'});
	is($st, 200, "super_admin sets another super_admin's: 200");
	ok(login($p, 'root2@example.org', 'root2-new-pw'),
		'the other super_admin logs in with it');

	# One's own: only with the current password.
	my $me = "/api/v1/users/$admin_a->{id}";
	($st, $b) = req(PATCH => $me, $tok{admin_a},
		{password => 'admin-a-new-pw'});
	is_error($st, $b, 400, 'own password without current_password');
	like($b->{detail}, qr/current_password/, 'the detail names it');
	($st, $b) = req(PATCH => $me, $tok{admin_a},
		{password => 'admin-a-new-pw', current_password => 'wrong-pw'});
	is_error($st, $b, 403, 'own password, current_password wrong');
	($st, $b) = req(PATCH => $me, $tok{admin_a},
		{password => 'admin-a-new-pw', current_password => 12345678});
	is_error($st, $b, 400, 'own password, current_password a number');
	($st, $b) = req(PATCH => $me, $tr,
		{password => 'admin-a-new-pw', current_password => 'wrong-pw'});
	is($st, 200, "super_admin: someone else's needs no current_password")
	    or diag explain $b;
	my $before = login($p, 'admin.a@example.org', 'admin-a-new-pw')
	    ->{access_token};
	($st, $b) = req(PATCH => $me, $before,
		{password => 'admin-a-pw', current_password => 'admin-a-new-pw'});
	is($st, 200, 'own password with the right current_password: 200')
	    or diag explain $b;
	$tok{admin_a} = login($p, 'admin.a@example.org', 'admin-a-pw')
	    ->{access_token};
	ok($tok{admin_a}, 'it logs in with the new one');
	($st, $b) = req(GET => $me, $before);
	is_error($st, $b, 401, 'the access token it changed it with ends');
	($st, $b) = req(PATCH => "/api/v1/users/$root_id", $tr,
		{password => 'root-password'});
	is_error($st, $b, 400, 'a super_admin, too, needs current_password');

	# The field is documented where the API is.
	open(my $fh, '<', "$ENV{XMHUB_SRCDIR}/doc/api.md") or die "doc: $!";
	my $doc = do { local $/; <$fh> };
	close $fh;
	like($doc, qr/^\| `current_password` \|/m,
		'doc/api.md documents current_password');
}

# --- delete: soft, and reactivation ---
{
	my $before = login($p, 'new.a2@example.org', 'new.a2-pw');
	($st, $b) = req(DELETE => "/api/v1/users/$new_a2->{id}", $tok{admin_b});
	is_error($st, $b, 403, "delete (facility_admin B) A's user");
	($st, $b) = req(DELETE => "/api/v1/users/$root2->{id}", $tok{admin_a});
	is_error($st, $b, 403, 'delete (facility_admin) a super_admin');
	($st, $b) = req(DELETE => "/api/v1/users/$new_a2->{id}", $tok{user_a});
	is_error($st, $b, 403, 'delete (user)');
	($st, $b) = req(DELETE => "/api/v1/users/$admin_a->{id}", $tok{admin_a});
	is_error($st, $b, 400, 'delete oneself');
	($st, $b) = req(DELETE => "/api/v1/users/$NOID", $tok{admin_a});
	is_error($st, $b, 404, 'delete: unknown id');

	($st, $b, my $res) = req(DELETE => "/api/v1/users/$new_a2->{id}",
		$tok{admin_a});
	is($st, 204, 'delete (facility_admin, own facility): 204');
	is($res->{content} // '', '', 'delete: no body');
	($st, $b) = req(GET => "/api/v1/users/$new_a2->{id}", $tok{admin_a});
	is($st, 200, 'delete: the record is kept');
	ok(defined $b->{is_active} && !$b->{is_active},
		'delete: is_active false');
	ok(defined $b->{last_login_at}, 'delete: last_login_at kept');
	($st, $b) = req(POST => '/api/auth/login', undef,
		{email => 'new.a2@example.org', password => 'new.a2-pw'});
	is_error($st, $b, 401, 'a deleted user cannot log in');
	($st, $b) = req(POST => '/api/auth/refresh', undef,
		{refresh_token => $before->{refresh_token}});
	is_error($st, $b, 401, "a deleted user's refresh token is revoked");
	is(($s->psql("SELECT count(*) FROM refresh_tokens WHERE user_id = "
		. "'$new_a2->{id}' AND revoked_at IS NULL"))[1], "0\n",
		'delete: every refresh token of the user revoked');
	($st, $b) = req(DELETE => "/api/v1/users/$new_a2->{id}", $tok{admin_a});
	is($st, 204, 'delete again: 204 (still inactive)');
	($st, $b) = req(GET => '/api/v1/users', $tok{admin_a});
	ok((grep { $_->{id} eq $new_a2->{id} } @$b),
		'delete: the inactive user is still listed');

	($st, $b) = req(PATCH => "/api/v1/users/$new_a2->{id}", $tok{admin_a},
		{is_active => $T});
	is($st, 200, 'reactivate: 200');
	ok($b->{is_active}, 'reactivate: is_active true');
	my $after = login($p, 'new.a2@example.org', 'new.a2-pw');
	ok($after, 'reactivated user logs in again');
	($st, $b) = req(POST => '/api/auth/refresh', undef,
		{refresh_token => $before->{refresh_token}});
	is_error($st, $b, 401,
		'reactivation does not revive the old refresh tokens');
	($st, $b) = req(PATCH => "/api/v1/users/$new_a2->{id}", $tok{admin_a},
		{is_active => $F});
	is($st, 200, 'deactivate with PATCH: 200');
	($st, $b) = req(POST => '/api/auth/refresh', undef,
		{refresh_token => $after->{refresh_token}});
	is_error($st, $b, 401, 'deactivation with PATCH revokes the tokens');
	($st, $b) = req(DELETE => "/api/v1/users/$user_b->{id}", $tr);
	is($st, 204, 'delete (super_admin) any facility: 204');
	($st, $b) = req(DELETE => "/api/v1/users/$root2->{id}", $tr);
	is($st, 204, 'delete (super_admin) another super_admin: 204');
}

# --- the role matrix in one place ---
{
	my $ta = login($p, 'admin.a@example.org', 'admin-a-pw')->{access_token};
	my $tu = login($p, 'user.a@example.org', 'user.a-new-pw')
	    ->{access_token};
	my %want = (
		'GET /api/v1/users' => [200, 200, 403],
		'POST /api/v1/users' => [200, 200, 403],
		"GET /api/v1/users/$user_a->{id}" => [200, 200, 403],
		"PATCH /api/v1/users/$user_a->{id}" => [200, 200, 403],
		"GET /api/v1/users/$admin_b->{id}" => [200, 403, 403],
		"PATCH /api/v1/users/$admin_b->{id}" => [200, 403, 403],
		"DELETE /api/v1/users/$admin_b->{id}" => [204, 403, 403],
	);
	my $n = 0;
	for my $route (sort keys %want) {
		my ($m, $path) = split / /, $route;
		my @got;
		for my $t ($tr, $ta, $tu) {
			my $json = $m eq 'POST' ? {email => 'm' . ++$n
			    . '@example.org', password => 'matrix-pw',
			    display_name => 'M', role => 'user',
			    facility_id => $fa} : $m eq 'PATCH'
			    ? {display_name => 'M'} : undef;
			# The super_admin goes last on DELETE, so the others
			# meet the row still there.
			push @got, (req($m, $path, $t, $json))[0];
		}
		is_deeply(\@got, $want{$route},
			"$route: super_admin, facility_admin, user");
	}
}

# --- database down ---
$s->stop_db;
($st, $b) = req(GET => '/api/v1/users', $tr);
is_error($st, $b, 503, 'list, database down');
($st, $b) = req(PATCH => "/api/v1/users/$user_a->{id}", $tr,
	{display_name => 'x'});
is_error($st, $b, 503, 'update, database down');
$s->start_db;
($st, $b) = req(GET => '/api/v1/users', $tr);
is($st, 200, 'list, database back');

log_is_clean($p);

done_testing;
