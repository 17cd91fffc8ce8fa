#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Facilities end to end (doc/api.md "Facilities"): every endpoint, the answers'
# shapes, every error status, who may call.
use strict;
use warnings;
use Test::More;
use Xmhub::Accounts qw(mkuser login is_error log_is_clean);
use Xmhub::Platform qw(keys_of);

my $p = Xmhub::Platform->start(own_db => 1); # stops PostgreSQL
my $s = $p->stack;
my $FACILITY = 'created_at,description,id,is_active,name,slug,updated_at';
my $NOID = '00000000-0000-4000-8000-000000000000';

mkuser($p, 'root@example.org', 'root-password', 'super_admin');
my $tr = login($p, 'root@example.org', 'root-password')->{access_token};

sub req {
	my ($method, $path, $token, $json) = @_;
	return $p->req($method, $path, token => $token,
		defined $json ? (json => $json) : ());
}

# --- create ---
my ($st, $b) = req(POST => '/api/v1/facilities', $tr,
	{name => 'North Site', slug => 'north-site'});
is($st, 200, 'create: 200') or diag explain $b;
is(keys_of($b), $FACILITY, 'create: exactly the Facility fields');
like($b->{id}, qr/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
	'create: id a UUID');
is($b->{name}, 'North Site', 'create: name');
is($b->{slug}, 'north-site', 'create: slug');
is($b->{description}, undef, 'create: no description is null');
ok($b->{is_active} && JSON::PP::is_bool($b->{is_active}),
	'create: is_active true (a JSON boolean)');
like($b->{created_at}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/,
	'create: created_at in ISO 8601 UTC');
is($b->{updated_at}, $b->{created_at}, 'create: updated_at = created_at');
my $north = $b;

($st, $b) = req(POST => '/api/v1/facilities', $tr, {name => 'South',
	slug => 'south', description => 'the southern farm'});
is($st, 200, 'create with a description: 200');
is($b->{description}, 'the southern farm', 'create: description kept');
my $south = $b;

($st, $b) = req(POST => '/api/v1/facilities', $tr,
	{name => 'Another North', slug => 'north-site'});
is_error($st, $b, 409, 'create: slug exists');

for my $case (
    ['no name', {slug => 'x1'}],
    ['no slug', {name => 'X'}],
    ['empty name', {name => '', slug => 'x1'}],
    ['name a number', {name => 1, slug => 'x1'}],
    ['name null', {name => undef, slug => 'x1'}],
    ['slug upper case', {name => 'X', slug => 'North'}],
    ['slug with a space', {name => 'X', slug => 'a b'}],
    ['slug with a leading dash', {name => 'X', slug => '-ab'}],
    ['slug with a double dash', {name => 'X', slug => 'a--b'}],
    ['slug too long', {name => 'X', slug => 'a' x 65}],
    ['description a number', {name => 'X', slug => 'x1', description => 3}],
    ['name too long', {name => 'n' x 201, slug => 'x1'}],
) {
	($st, $b) = req(POST => '/api/v1/facilities', $tr, $case->[1]);
	is_error($st, $b, 400, "create, $case->[0]");
}
($st, $b) = $p->req(POST => '/api/v1/facilities', token => $tr,
	body => '{"name": "X", "slug": "x1"');
is_error($st, $b, 400, 'create, malformed JSON');

# --- list and get ---
($st, $b) = req(GET => '/api/v1/facilities', $tr);
is($st, 200, 'list: 200');
is(ref $b, 'ARRAY', 'list: an array');
is_deeply([map { $_->{slug} } @$b], ['north-site', 'south'],
	'list: every facility, oldest first');
is(keys_of($b->[0]), $FACILITY, 'list: items are Facility objects');

($st, $b) = req(GET => "/api/v1/facilities/$north->{id}", $tr);
is($st, 200, 'get: 200');
is_deeply($b, $north, 'get: the facility as created');
($st, $b) = req(GET => '/api/v1/facilities/' . uc $north->{id}, $tr);
is($st, 200, 'get: the id in upper case works too');
($st, $b) = req(GET => "/api/v1/facilities/$NOID", $tr);
is_error($st, $b, 404, 'get: unknown id');
($st, $b) = req(GET => '/api/v1/facilities/north-site', $tr);
is_error($st, $b, 400, 'get: an id that is not a UUID');

# --- update ---
sleep 1; # updated_at must move
($st, $b) = req(PATCH => "/api/v1/facilities/$north->{id}", $tr,
	{name => 'North', description => 'renamed', slug => 'ignored'});
is($st, 200, 'update: 200') or diag explain $b;
is(keys_of($b), $FACILITY, 'update: a Facility');
is($b->{name}, 'North', 'update: name');
is($b->{description}, 'renamed', 'update: description');
is($b->{slug}, 'north-site', 'update: the slug is not changed by PATCH');
is($b->{created_at}, $north->{created_at}, 'update: created_at kept');
isnt($b->{updated_at}, $north->{updated_at}, 'update: updated_at moved');
($st, $b) = req(PATCH => "/api/v1/facilities/$north->{id}", $tr,
	{description => undef});
is($b->{description}, undef, 'update: description null clears it');
is($b->{name}, 'North', 'update: what is not given is kept');
($st, $b) = req(PATCH => "/api/v1/facilities/$north->{id}", $tr,
	{is_active => JSON::PP::false});
ok(defined $b->{is_active} && !$b->{is_active}, 'update: is_active false');
($st, $b) = req(PATCH => "/api/v1/facilities/$north->{id}", $tr, {});
is($st, 200, 'update with nothing: 200');
ok(!$b->{is_active}, 'update with nothing: the facility as it is');
($st, $b) = req(PATCH => "/api/v1/facilities/$north->{id}", $tr,
	{is_active => JSON::PP::true});
ok($b->{is_active}, 'update: is_active true again');
for my $case (
    ['is_active a string', {is_active => 'yes'}],
    ['name null', {name => undef}],
    ['name empty', {name => ''}],
    ['description an array', {description => []}],
) {
	($st, $b) = req(PATCH => "/api/v1/facilities/$north->{id}", $tr,
		$case->[1]);
	is_error($st, $b, 400, "update, $case->[0]");
}
($st, $b) = req(PATCH => "/api/v1/facilities/$NOID", $tr, {name => 'X'});
is_error($st, $b, 404, 'update: unknown id');
($st, $b) = req(PATCH => "/api/v1/facilities/$NOID", $tr, {});
is_error($st, $b, 404, 'update with nothing: unknown id');

# --- who may call: super_admin only ---
($st, $b) = req(POST => '/api/v1/users', $tr, {email => 'fa@example.org',
	password => 'fa-password', display_name => 'FA',
	role => 'facility_admin', facility_id => $north->{id}});
is($st, 200, 'facility_admin of north made') or diag explain $b;
my $fa_id = $b->{id};
($st, $b) = req(POST => '/api/v1/users', $tr, {email => 'u@example.org',
	password => 'u-password', display_name => 'U', role => 'user',
	facility_id => $north->{id}});
is($st, 200, 'user of north made');
my %tok = (
	facility_admin => login($p, 'fa@example.org', 'fa-password')
	    ->{access_token},
	user => login($p, 'u@example.org', 'u-password')->{access_token},
);
my @routes = (
	[GET => '/api/v1/facilities'],
	[POST => '/api/v1/facilities', {name => 'Z', slug => 'z'}],
	[GET => "/api/v1/facilities/$north->{id}"],
	[PATCH => "/api/v1/facilities/$north->{id}", {name => 'Z'}],
	[DELETE => "/api/v1/facilities/$north->{id}"],
);
for my $role (sort keys %tok) {
	for my $r (@routes) {
		($st, $b) = req($r->[0], $r->[1], $tok{$role}, $r->[2]);
		is_error($st, $b, 403, "$role: $r->[0] $r->[1]");
	}
}
for my $r (@routes) {
	($st, $b) = req($r->[0], $r->[1], undef, $r->[2]);
	is_error($st, $b, 401, "no token: $r->[0] $r->[1]");
}
($st, $b) = req(GET => "/api/v1/facilities/$north->{id}", $tr);
is($b->{name}, 'North', 'nothing above changed the facility');
($st, $b) = req(PUT => "/api/v1/facilities/$north->{id}", $tr, {});
is_error($st, $b, 405, 'PUT: 405');
($st, $b) = req(GET => '/api/v1/facilitiesX', $tr);
is_error($st, $b, 404, 'a path that only begins like the prefix');

# --- delete: the facility and everything of it ---
my $key = $s->psql("INSERT INTO api_keys (facility_id, name, key_prefix, "
	. "key_hash) VALUES ('$north->{id}', 'k', 'xmk_12345678', "
	. "repeat('a', 64)) RETURNING id");
($st, $b) = req(DELETE => "/api/v1/facilities/$north->{id}", $tr);
is($st, 204, 'delete: 204');
is($b, undef, 'delete: no body');
($st, $b) = req(GET => "/api/v1/facilities/$north->{id}", $tr);
is_error($st, $b, 404, 'delete: gone');
is(($s->psql("SELECT (SELECT count(*) FROM users WHERE facility_id = "
	. "'$north->{id}') + (SELECT count(*) FROM api_keys WHERE "
	. "facility_id = '$north->{id}') + (SELECT count(*) FROM "
	. "refresh_tokens WHERE user_id = '$fa_id')"))[1], "0\n",
	'delete: its users, their tokens and its keys went with it');
($st, $b) = req(GET => "/api/v1/users/$fa_id", $tr);
is_error($st, $b, 404, 'delete: its users are gone from the API too');
($st, $b) = req(DELETE => "/api/v1/facilities/$north->{id}", $tr);
is_error($st, $b, 404, 'delete again: 404');
($st, $b) = req(GET => '/api/v1/facilities', $tr);
is_deeply([map { $_->{slug} } @$b], ['south'], 'list after delete');
($st, $b) = req(POST => '/api/v1/facilities', $tr,
	{name => 'North again', slug => 'north-site'});
is($st, 200, 'the slug of a deleted facility is free again');

# --- database down ---
$s->stop_db;
($st, $b) = req(GET => '/api/v1/facilities', $tr);
is_error($st, $b, 503, 'list, database down');
($st, $b) = req(POST => '/api/v1/facilities', $tr, {name => 'D', slug => 'd'});
is_error($st, $b, 503, 'create, database down');
$s->start_db;
($st, $b) = req(GET => '/api/v1/facilities', $tr);
is($st, 200, 'list, database back');

log_is_clean($p);

done_testing;
