#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Devices end to end (doc/api.md "Devices"): registration, reading, changes,
# the checks on device_uid and the other fields, roles.
use strict;
use warnings;
use Test::More;
use Xmhub::Platform qw(keys_of is_error);

# Every answer is checked against doc/platform-www/openapi.json.
$ENV{XMHUB_OPENAPI_CHECK} = 1;

my $p = Xmhub::Platform->start(own_db => 1); # stops PostgreSQL
my $fac = $p->facility('Devices A');
my $other = $p->facility('Devices B');
my $admin = $p->user('facility_admin', $fac);
my $user = $p->user('user', $fac);
my $super = $p->user('super_admin', undef);
my $ta = $p->token($admin);
my $tu = $p->token($user);
my $ts = $p->token($super);

my $DEVICE = 'created_at,device_uid,facility_id,firmware_version,'
    . 'hardware_version,id,is_active,last_seen_at,name';
my $NOBODY = '00000000-0000-4000-8000-000000000000';

sub post {
	my ($token, $body) = @_;
	return $p->req(POST => '/api/v1/devices', token => $token,
		json => $body);
}

sub get { return $p->req(GET => "/api/v1/devices/$_[1]", token => $_[0]) }

sub patch {
	my ($token, $id, $body) = @_;
	return $p->req(PATCH => "/api/v1/devices/$id", token => $token,
		json => $body);
}

# --- registration ---
my ($st, $d) = post($ta, {device_uid => 42, name => 'mast 1'});
is($st, 201, 'create: 201') or diag explain $d;
is(keys_of($d), $DEVICE, 'create: exactly the Device fields');
is($d->{device_uid}, 42, 'create: device_uid');
ok(!ref $d->{device_uid} && $d->{device_uid} =~ /^\d+$/,
    'create: device_uid is a JSON number');
is($d->{name}, 'mast 1', 'create: name');
is($d->{facility_id}, $fac, "create: the admin's facility");
is($d->{is_active}, JSON::PP::true, 'create: active');
is($d->{last_seen_at}, undef, 'create: never seen');
is($d->{hardware_version}, undef, 'create: no hardware_version');
is($d->{firmware_version}, undef, 'create: no firmware_version');
like($d->{created_at}, qr/^\d{4}-\d\d-\d\dT[\d:.]+Z$/, 'create: created_at');
like($d->{id}, qr/^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$/, 'create: id');
my $d1 = $d;

($st, $d) = post($ta, {device_uid => 0, name => 'zero',
	hardware_version => 'rev B', firmware_version => '1.2.3',
	facility_id => $fac});
is($st, 201, 'device_uid 0, versions, own facility_id: 201');
is($d->{device_uid}, 0, 'device_uid 0');
is($d->{hardware_version}, 'rev B', 'hardware_version');
is($d->{firmware_version}, '1.2.3', 'firmware_version');
($st, $d) = post($ta, {device_uid => 4294967295, name => 'max',
	hardware_version => undef});
is($st, 201, 'device_uid 4294967295: 201');
is($d->{device_uid}, 4294967295, 'device_uid 4294967295 read back');
my $dmax = $d;

($st, $d) = post($ta, {device_uid => 42, name => 'again'});
is_error($st, $d, 409, 'device_uid taken in the facility');
($st, $d) = post($ts, {device_uid => 42, name => 'elsewhere',
	facility_id => $other});
is($st, 201, 'the same device_uid in another facility: 201');
is($d->{facility_id}, $other, 'super_admin: the facility named');

my @bad = (
	[{name => 'n'}, 'no device_uid'],
	[{device_uid => -1, name => 'n'}, 'device_uid -1'],
	[{device_uid => 4294967296, name => 'n'}, 'device_uid 4294967296'],
	[{device_uid => '1', name => 'n'}, 'device_uid "1"'],
	[{device_uid => 1.5, name => 'n'}, 'device_uid 1.5'],
	[{device_uid => undef, name => 'n'}, 'device_uid null'],
	[{device_uid => JSON::PP::true, name => 'n'}, 'device_uid true'],
	[{device_uid => [1], name => 'n'}, 'device_uid an array'],
	[{device_uid => 7}, 'no name'],
	[{device_uid => 7, name => ''}, 'empty name'],
	[{device_uid => 7, name => 5}, 'name a number'],
	[{device_uid => 7, name => undef}, 'name null'],
	[{device_uid => 7, name => 'x' x 201}, 'name of 201 bytes'],
	[{device_uid => 7, name => 'n', hardware_version => 2},
	    'hardware_version a number'],
	[{device_uid => 7, name => 'n', firmware_version => ['1']},
	    'firmware_version an array'],
	[{device_uid => 7, name => 'n', firmware_version => 'v' x 101},
	    'firmware_version of 101 bytes'],
	[{device_uid => 7, name => 'n', facility_id => 'x'},
	    'facility_id not a UUID'],
);
is_error(post($ta, $_->[0]), 400, "create, $_->[1]") for @bad;
for my $raw ('{', '', '[]', '42', 'null', '{"device_uid": 1e3, "name": "n"}',
	'{"device_uid": 18446744073709551616, "name": "n"}',
	'{"device_uid": 01, "name": "n"}') {
	is_error($p->req(POST => '/api/v1/devices', token => $ta,
		body => $raw), 400, "create, body '$raw'");
}
is($p->sql("SELECT count(*) FROM devices WHERE device_uid = 7"), 0,
    'no bad request stored anything');

is_error(post($tu, {device_uid => 9, name => 'n'}), 403, 'user creates');
is_error(post(undef, {device_uid => 9, name => 'n'}), 401, 'no token');
is_error(post($ts, {device_uid => 9, name => 'n'}), 400,
    'super_admin creates without facility_id');
is_error(post($ts, {device_uid => 9, name => 'n', facility_id => $NOBODY}),
    400, 'super_admin creates in no facility');

# --- reading ---
($st, my $l) = $p->req(GET => '/api/v1/devices', token => $tu);
is($st, 200, 'user lists: 200');
is_deeply([map { $_->{device_uid} } @$l], [42, 0, 4294967295],
    "the facility's devices, oldest first");
is(keys_of($l->[0]), $DEVICE, 'list items are Devices');
($st, $d) = get($tu, $d1->{id});
is($st, 200, 'user reads one: 200');
is_deeply($d, $d1, 'read: as created');
is_error(get($tu, $NOBODY), 404, 'read an unknown device');
is_error(get($tu, 'not-a-uuid'), 400, 'read, id not a UUID');
is_error($p->req(GET => '/api/v1/devices'), 401, 'list without a token');
is_error($p->req(DELETE => "/api/v1/devices/$d1->{id}", token => $ta), 405,
    'DELETE a device');
is_error($p->req(GET => '/api/v1/devicesX', token => $ta), 404,
    '/api/v1/devicesX');

# --- changes ---
($st, $d) = patch($ta, $d1->{id}, {name => 'mast one'});
is($st, 200, 'rename: 200');
is(keys_of($d), $DEVICE, 'patch: a Device');
is($d->{name}, 'mast one', 'rename: the new name');
is($d->{device_uid}, 42, 'rename: device_uid unchanged');
($st, $d) = patch($ta, $d1->{id}, {hardware_version => 'rev C',
	firmware_version => '2.0'});
is($d->{hardware_version}, 'rev C', 'patch: hardware_version');
is($d->{firmware_version}, '2.0', 'patch: firmware_version');
is($d->{name}, 'mast one', 'patch: name kept');
($st, $d) = patch($ta, $d1->{id}, {firmware_version => undef});
is($st, 200, 'clear firmware_version: 200');
is($d->{firmware_version}, undef, 'firmware_version cleared');
is($d->{hardware_version}, 'rev C', 'hardware_version kept');
($st, $d) = patch($ta, $d1->{id}, {is_active => JSON::PP::false});
is($d->{is_active}, JSON::PP::false, 'deactivate');
($st, $d) = patch($ta, $d1->{id}, {});
is($st, 200, 'empty patch: 200');
is($d->{is_active}, JSON::PP::false, 'empty patch: nothing changed');
($st, $d) = patch($ta, $d1->{id}, {is_active => JSON::PP::true,
	device_uid => 99, facility_id => $other, id => $NOBODY});
is($d->{is_active}, JSON::PP::true, 'reactivate');
is($d->{device_uid}, 42, 'device_uid can not be patched (ignored)');
is($d->{facility_id}, $fac, 'facility_id can not be patched (ignored)');
is($d->{id}, $d1->{id}, 'id can not be patched (ignored)');
($st, $d) = get($tu, $d1->{id});
is($d->{name}, 'mast one', 'changes are stored');

for my $c ([{name => undef}, 'name null'], [{name => ''}, 'name empty'],
	[{name => 3}, 'name a number'], [{is_active => 'no'}, 'is_active "no"'],
	[{is_active => 1}, 'is_active 1'], [{is_active => undef}, 'is_active null'],
	[{hardware_version => 1.5}, 'hardware_version a number']) {
	is_error(patch($ta, $d1->{id}, $c->[0]), 400, "patch, $c->[1]");
}
is_error($p->req(PATCH => "/api/v1/devices/$d1->{id}", token => $ta,
	body => '{"name":'), 400, 'patch, bad JSON');
is_error(patch($tu, $d1->{id}, {name => 'x'}), 403, 'user patches');
is_error(patch($ta, $NOBODY, {name => 'x'}), 404, 'patch an unknown device');
($st, $d) = patch($ts, $dmax->{id}, {name => 'by super'});
is($st, 200, 'super_admin patches any device');

# --- database down ---
$p->stack->stop_db;
is_error($p->req(GET => '/api/v1/devices', token => $ta), 503,
    'list with the database down');
is_error(post($ta, {device_uid => 5, name => 'n'}), 503,
    'create with the database down');
$p->stack->start_db;
($st) = $p->req(GET => '/api/v1/devices', token => $ta);
is($st, 200, 'the database back: 200');

done_testing;
