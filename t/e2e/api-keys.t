#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# API keys end to end (doc/api.md "API keys", doc/auth.md "API keys"):
# creation, listing, revocation, authentication of GET /api/v1/ping.
use strict;
use warnings;
use Digest::SHA qw(sha256_hex);
use Test::More;
use Xmhub::Platform qw(iso keys_of is_error);

my $p = Xmhub::Platform->start(own_db => 1); # stops PostgreSQL
my $fac = $p->facility('Keys A');
my $other = $p->facility('Keys B');
my $admin = $p->user('facility_admin', $fac);
my $user = $p->user('user', $fac);
my $super = $p->user('super_admin', undef);
my $ta = $p->token($admin);
my $tu = $p->token($user);
my $ts = $p->token($super);

my $CREATED = 'created_at,expires_at,facility_id,id,key,key_prefix,name,scopes';
my $LISTED = 'created_at,created_by,expires_at,facility_id,id,is_active,'
    . 'key_prefix,last_used_at,name,scopes';

sub create {
	my ($token, $body) = @_;
	return $p->req(POST => '/api/v1/api-keys', token => $token,
		json => $body);
}

sub list {
	my ($token, $query) = @_;
	my ($st, $body) = $p->req(GET => '/api/v1/api-keys' . ($query // ''),
		token => $token);
	is($st, 200, 'list: 200') or diag explain $body;
	return $body // [];
}

sub ping {
	my ($key, %opt) = @_;
	return $p->req(GET => '/api/v1/ping' . ($opt{query} // ''),
		defined $key ? (key => $key) : (), %opt{qw(headers)});
}

# --- creation ---
my ($st, $k, $res) = create($ta, {name => 'field recorder 1'});
is($st, 200, 'create: 200') or diag explain $k;
is($res->{headers}{'cache-control'}, 'no-store',
    'create: Cache-Control: no-store (the answer holds the key)');
is(keys_of($k), $CREATED, 'create: exactly the creation fields');
like($k->{key}, qr/^xmk_[0-9A-Za-z]{43}$/, 'create: the key has its form');
is($k->{key_prefix}, substr($k->{key}, 0, 12),
    'create: key_prefix is its first 12 characters');
is($k->{name}, 'field recorder 1', 'create: name');
is($k->{facility_id}, $fac, "create: the admin's facility");
is_deeply($k->{scopes}, ['upload', 'ingest'], 'create: all scopes by default');
is($k->{expires_at}, undef, 'create: never expires by default');
like($k->{created_at}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/,
    'create: created_at is ISO 8601 UTC');
my $key = $k->{key};

is($p->sql("SELECT key_hash FROM api_keys WHERE id = '$k->{id}'"),
    sha256_hex($key), 'stored: the SHA-256 of the key');
is($p->sql("SELECT count(*) FROM api_keys WHERE key_hash = '$key' "
	    . "OR key_prefix = '$key' OR name = '$key'"), 0,
    'stored: never the key itself');

# --- listing ---
my $l = list($ta);
my ($row) = grep { $_->{id} eq $k->{id} } @$l;
ok($row, 'list: the new key is listed');
is(keys_of($row), $LISTED, 'list: exactly the listed fields');
is($row->{created_by}, $admin->{id}, 'list: created_by is the creator');
is($row->{is_active}, JSON::PP::true, 'list: active');
is($row->{last_used_at}, undef, 'list: never used yet');
is($row->{key_prefix}, $k->{key_prefix}, 'list: key_prefix');
(undef, undef, $res) = $p->req(GET => '/api/v1/api-keys', token => $ta);
unlike($res->{content}, qr/\Q$key\E/, 'list: never the plaintext key');
unlike($res->{content}, qr/key_hash|\Q${\ sha256_hex($key)}\E/,
    'list: never the hash');

# --- ping ---
($st, my $b) = ping($key);
is($st, 200, 'ping: 200 with the key');
is_deeply($b, {pong => JSON::PP::true, api_key_name => 'field recorder 1',
	facility_id => $fac}, 'ping: pong, the key name, its facility');
($row) = grep { $_->{id} eq $k->{id} } @{list($ta)};
like($row->{last_used_at} // '', qr/^\d{4}-.*Z$/, 'ping: sets last_used_at');

is_error(ping(undef), 401, 'ping without a key');
is_error(ping(''), 401, 'ping with an empty key');
is_error(ping('garbage'), 401, 'ping with a garbage key');
is_error(ping(substr($key, 0, 46)), 401, 'ping with a truncated key');
is_error(ping($key . 'x'), 401, 'ping with a lengthened key');
is_error(ping('xmk_' . ('A' x 43)), 401, 'ping with an unknown key');
($st, $b) = ping('xmk_' . ('A' x 43));
is($b->{detail}, 'invalid API key', 'unknown key: "invalid API key"');
is_error(ping(undef, query => "?api_key=$key"), 401,
    'a key in the query string (api_key) is not accepted');
is_error(ping(undef, query => "?key=$key&X-Api-Key=$key"), 401,
    'a key in the query string (key, X-Api-Key) is not accepted');
is_error(ping(undef, headers => {Authorization => "Bearer $key"}), 401,
    'a key as a bearer token is not accepted');
is_error($p->req(GET => '/api/v1/ping', token => $ta), 401,
    'a JWT is not an API key');
($st) = ping($key, headers => {'X-API-KEY' => $key});
is($st, 200, 'the header name is case-insensitive');
is_error($p->req(POST => '/api/v1/ping', key => $key), 405, 'POST ping');
is_error($p->req(GET => '/api/v1/pingx', key => $key), 404, '/api/v1/pingx');

# --- scopes ---
($st, $k) = create($ta, {name => 'uploader', scopes => ['upload']});
is($st, 200, 'scopes [upload]: 200');
is_deeply($k->{scopes}, ['upload'], 'scopes [upload]: returned');
is($p->sql("SELECT scopes FROM api_keys WHERE id = '$k->{id}'"), '{upload}',
    'scopes [upload]: stored');
($st) = ping($k->{key});
is($st, 200, 'ping accepts a key of any scope');
($st, $k) = create($ta, {name => 'ingester',
	scopes => ['ingest', 'upload', 'ingest']});
is($st, 200, 'scopes with a repeat: 200');
is_deeply($k->{scopes}, ['upload', 'ingest'],
    'scopes: each once, in canonical order');
($st, $k) = create($ta, {name => 'ingest only', scopes => ['ingest']});
is($p->sql("SELECT scopes FROM api_keys WHERE id = '$k->{id}'"), '{ingest}',
    'scopes [ingest]: stored');
($st, $k) = create($ta, {name => 'null scopes', scopes => undef});
is_deeply($k->{scopes}, ['upload', 'ingest'], 'scopes null: all');

# --- bad requests ---
my @bad = (
	[{}, 'no name'],
	[{name => ''}, 'empty name'],
	[{name => 7}, 'name a number'],
	[{name => undef}, 'name null'],
	[{name => 'x' x 201}, 'name of 201 bytes'],
	[{name => 'n', scopes => []}, 'scopes empty'],
	[{name => 'n', scopes => ['admin']}, 'unknown scope'],
	[{name => 'n', scopes => ['upload', 'Upload']}, 'scope in capitals'],
	[{name => 'n', scopes => 'upload'}, 'scopes a string'],
	[{name => 'n', scopes => [1]}, 'scopes of numbers'],
	[{name => 'n', scopes => {upload => 1}}, 'scopes an object'],
	[{name => 'n', expires_at => '2000-01-01T00:00:00Z'}, 'expiry past'],
	[{name => 'n', expires_at => iso(time - 5)}, 'expiry just past'],
	[{name => 'n', expires_at => 'tomorrow'}, 'expiry not a time'],
	[{name => 'n', expires_at => '2030-01-01'}, 'expiry a date'],
	[{name => 'n', expires_at => '2030-01-01T00:00:00'}, 'expiry no zone'],
	[{name => 'n', expires_at => '2030-13-45T00:00:00Z'}, 'expiry month 13'],
	[{name => 'n', expires_at => 1893456000}, 'expiry a number'],
	[{name => 'n', facility_id => 'nope'}, 'facility_id not a UUID'],
);
for my $c (@bad) {
	is_error(create($ta, $c->[0]), 400, "create, $c->[1]");
}
is_error($p->req(POST => '/api/v1/api-keys', token => $ta, body => '{'),
    400, 'create, bad JSON');
is_error($p->req(POST => '/api/v1/api-keys', token => $ta,
	body => '["name"]'), 400, 'create, a JSON array');
is_error($p->req(POST => '/api/v1/api-keys', token => $ta, body => ''),
    400, 'create, no body');

# --- expiry ---
my $later = iso(time + 365 * 86400);
($st, $k) = create($ta, {name => 'yearly', expires_at => $later});
is($st, 200, 'expiry in a year: 200');
is($k->{expires_at}, $later, 'expiry: returned as given, in UTC');
($st, $k) = create($ta, {name => 'offset',
	expires_at => '2099-06-01T12:00:00+02:00'});
is($k->{expires_at}, '2099-06-01T10:00:00Z', 'expiry with an offset: UTC');
($st, $k) = create($ta, {name => 'never', expires_at => undef});
is($st, 200, 'expiry null: 200');
is($k->{expires_at}, undef, 'expiry null: never');

($st, $k) = create($ta, {name => 'soon', expires_at => iso(time + 3)});
is($st, 200, 'expiring in 3 s: 200');
($st) = ping($k->{key});
is($st, 200, 'expiring key: accepted before its time');
sleep 1 while time <= $p->sql("SELECT extract(epoch FROM expires_at) "
	. "FROM api_keys WHERE id = '$k->{id}'");
is_error(ping($k->{key}), 401, 'expiring key: refused after its time');

($st, $k) = create($ta, {name => 'backdated'});
$p->sql("UPDATE api_keys SET expires_at = now() - interval '1 second' "
	. "WHERE id = '$k->{id}'");
is_error(ping($k->{key}), 401, 'expired key');

# --- revocation ---
($st, $k) = create($ta, {name => 'to revoke'});
($st) = ping($k->{key});
is($st, 200, 'before revocation: 200');
($st, $b, $res) = $p->req(DELETE => "/api/v1/api-keys/$k->{id}", token => $ta);
is($st, 204, 'revoke: 204');
is($res->{content} // '', '', 'revoke: empty body');
is_error(ping($k->{key}), 401, 'revoked key');
($row) = grep { $_->{id} eq $k->{id} } @{list($ta)};
is($row->{is_active}, JSON::PP::false, 'revoked key: listed, inactive');
($st) = $p->req(DELETE => "/api/v1/api-keys/$k->{id}", token => $ta);
is($st, 204, 'revoke again: 204');
is_error($p->req(DELETE => '/api/v1/api-keys/00000000-0000-4000-8000-'
	    . '000000000000', token => $ta), 404, 'revoke an unknown key');
is_error($p->req(DELETE => '/api/v1/api-keys/123', token => $ta), 400,
    'revoke, id not a UUID');
is_error($p->req(PATCH => "/api/v1/api-keys/$k->{id}", token => $ta,
	json => {}), 405, 'PATCH a key');

# --- inactive facility ---
($st, $k) = create($ta, {name => 'facility switch'});
$p->sql("UPDATE facilities SET is_active = false WHERE id = '$fac'");
is_error(ping($k->{key}), 401, 'a key of an inactive facility');
$p->sql("UPDATE facilities SET is_active = true WHERE id = '$fac'");
($st) = ping($k->{key});
is($st, 200, 'the facility active again: 200');

# --- roles ---
is_error($p->req(GET => '/api/v1/api-keys', token => $tu), 403, 'user lists');
is_error(create($tu, {name => 'x'}), 403, 'user creates');
is_error($p->req(DELETE => "/api/v1/api-keys/$k->{id}", token => $tu), 403,
    'user revokes');
($st) = ping($k->{key});
is($st, 200, "the user's attempt left the key alone");
is_error($p->req(GET => '/api/v1/api-keys'), 401, 'no token');
is_error($p->req(GET => '/api/v1/api-keys', token => 'x.y.z'), 401,
    'garbage token');
is_error($p->req(GET => '/api/v1/api-keys',
	token => $p->token($admin, -10)), 401, 'expired token');
is_error($p->req(GET => '/api/v1/api-keys', key => $k->{key}), 401,
    'an API key is not a JWT');

is_error(create($ts, {name => 'super'}), 400,
    'super_admin creates without facility_id');
is_error(create($ts, {name => 'super',
	facility_id => '00000000-0000-4000-8000-000000000000'}), 400,
    'super_admin creates in no facility');
($st, $k) = create($ts, {name => 'by super', facility_id => $other});
is($st, 200, 'super_admin creates in a facility: 200');
is($k->{facility_id}, $other, 'super_admin: the facility named');
($st, $b) = ping($k->{key});
is($b->{facility_id}, $other, "super_admin's key pings as its facility");
($row) = grep { $_->{id} eq $k->{id} } @{list($ts)};
is($row->{created_by}, $super->{id}, 'super_admin: created_by');
my %seen = map { $_->{facility_id} => 1 } @{list($ts)};
ok($seen{$fac} && $seen{$other}, 'super_admin lists every facility');
%seen = map { $_->{facility_id} => 1 } @{list($ts, "?facility_id=$other")};
is_deeply([keys %seen], [$other], 'super_admin filters by facility_id');
is_error($p->req(GET => '/api/v1/api-keys?facility_id=x', token => $ts),
    400, 'super_admin filter not a UUID');
($st) = $p->req(DELETE => "/api/v1/api-keys/$k->{id}", token => $ts);
is($st, 204, 'super_admin revokes a key of any facility');

# --- database down ---
($st, $k) = create($ta, {name => 'db down'});
$p->stack->stop_db;
is_error(ping($k->{key}), 503, 'ping with the database down');
is_error($p->req(GET => '/api/v1/api-keys', token => $ta), 503,
    'list with the database down');
is_error(create($ta, {name => 'x'}), 503, 'create with the database down');
is_error(ping('garbage'), 401, 'a malformed key is 401 without a query');
$p->stack->start_db;
($st) = ping($k->{key});
is($st, 200, 'the database back: ping 200');

done_testing;
