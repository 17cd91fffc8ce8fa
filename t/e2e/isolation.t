#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Tenant isolation (doc/api.md "Roles and facilities"): two facilities A and B,
# each with a facility_admin and a user.  For API keys, devices and tags: nobody
# of A reads, changes or deletes B's rows (403 by id), lists never show them,
# creating in B is 403; a super_admin sees both and filters by facility.
use strict;
use warnings;
use Test::More;
use Xmhub::Platform;

my $p = Xmhub::Platform->start;
my %fac = (A => $p->facility('Isolation A'), B => $p->facility('Isolation B'));
my (%admin, %user);
for my $f (qw(A B)) {
	$admin{$f} = $p->token($p->user('facility_admin', $fac{$f}));
	$user{$f} = $p->token($p->user('user', $fac{$f}));
}
my $super = $p->token($p->user('super_admin', undef));

sub ok_status {
	my ($want, $name, $st, $body) = @_;
	is($st, $want, "$name: $want") or diag explain $body;
	return $body;
}

# Rows of each kind in each facility, made by that facility's admin.
my (%key, %device, %tag);
for my $f (qw(A B)) {
	$key{$f} = ok_status(200, "key of $f", $p->req(POST => '/api/v1/api-keys',
		token => $admin{$f}, json => {name => "key $f"}));
	$device{$f} = ok_status(201, "device of $f", $p->req(POST =>
		'/api/v1/devices', token => $admin{$f},
		json => {device_uid => 1, name => "device $f"}));
	$tag{$f} = ok_status(200, "tag of $f", $p->req(POST => '/api/v1/tags',
		token => $admin{$f}, json => {name => "tag $f"}));
}

sub ids_of {
	my ($token, $path) = @_;
	my ($st, $l) = $p->req(GET => $path, token => $token);
	is($st, 200, "GET $path: 200");
	return {map { $_->{id} => $_->{facility_id} } @{$l // []}};
}

# --- lists ---
for my $f (qw(A B)) {
	my $g = $f eq 'A' ? 'B' : 'A';
	for my $who (["admin", $admin{$f}], ["user", $user{$f}]) {
		for my $kind (['/api/v1/devices', \%device],
		    ['/api/v1/tags', \%tag],
		    $who->[0] eq 'admin' ? (['/api/v1/api-keys', \%key]) : ()) {
			my $ids = ids_of($who->[1], $kind->[0]);
			ok($ids->{$kind->[1]{$f}{id}},
			    "$f $who->[0]: $kind->[0] lists its own row");
			ok(!$ids->{$kind->[1]{$g}{id}},
			    "$f $who->[0]: $kind->[0] never lists ${g}'s row");
			is_deeply([grep { $_ ne $fac{$f} } values %$ids], [],
			    "$f $who->[0]: $kind->[0] lists only ${f}'s rows");
			# A filter naming the other facility is ignored.
			$ids = ids_of($who->[1], "$kind->[0]?facility_id=$fac{$g}");
			ok(!$ids->{$kind->[1]{$g}{id}},
			    "$f $who->[0]: $kind->[0]?facility_id=$g does not "
			    . 'reach it');
		}
	}
}

# --- by id: A's admin and user on B's rows ---
for my $who (['admin', $admin{A}], ['user', $user{A}]) {
	my ($n, $t) = @$who;
	ok_status(403, "A $n reads B's device",
	    $p->req(GET => "/api/v1/devices/$device{B}{id}", token => $t));
	ok_status(403, "A $n patches B's device",
	    $p->req(PATCH => "/api/v1/devices/$device{B}{id}", token => $t,
		json => {name => 'taken'}));
	ok_status(403, "A $n deletes B's tag",
	    $p->req(DELETE => "/api/v1/tags/$tag{B}{id}", token => $t));
	ok_status(403, "A $n revokes B's key",
	    $p->req(DELETE => "/api/v1/api-keys/$key{B}{id}", token => $t));
}
my (undef, $d) = $p->req(GET => "/api/v1/devices/$device{B}{id}",
	token => $admin{B});
is($d->{name}, 'device B', "B's device unchanged");
ok((grep { $_->{id} eq $tag{B}{id} } @{($p->req(GET => '/api/v1/tags',
	token => $user{B}))[1]}), "B's tag still there");
my ($st, $ping) = $p->req(GET => '/api/v1/ping', key => $key{B}{key});
is($st, 200, "B's key still works");
is($ping->{facility_id}, $fac{B}, "B's key is of B");
($st, $ping) = $p->req(GET => '/api/v1/ping', key => $key{A}{key});
is($ping->{facility_id}, $fac{A}, "A's key is of A");

# A's own rows by id work for A.
ok_status(200, "A user reads A's device",
    $p->req(GET => "/api/v1/devices/$device{A}{id}", token => $user{A}));

# --- creating in B ---
for my $who (['admin', $admin{A}, 403], ['user', $user{A}, 403]) {
	my ($n, $t, $want) = @$who;
	ok_status($want, "A $n creates a key in B",
	    $p->req(POST => '/api/v1/api-keys', token => $t,
		json => {name => 'intruder', facility_id => $fac{B}}));
	ok_status($want, "A $n creates a device in B",
	    $p->req(POST => '/api/v1/devices', token => $t,
		json => {device_uid => 2, name => 'intruder',
		    facility_id => $fac{B}}));
	ok_status($want, "A $n creates a tag in B",
	    $p->req(POST => '/api/v1/tags', token => $t,
		json => {name => 'intruder', facility_id => $fac{B}}));
}
is($p->sql("SELECT (SELECT count(*) FROM api_keys WHERE name = 'intruder') "
	. "+ (SELECT count(*) FROM devices WHERE name = 'intruder') "
	. "+ (SELECT count(*) FROM tags WHERE name = 'intruder')"), 0,
    'nothing was created in B');

# --- the super_admin ---
for my $kind (['/api/v1/api-keys', \%key], ['/api/v1/devices', \%device],
    ['/api/v1/tags', \%tag]) {
	my ($path, $rows) = @$kind;
	my $ids = ids_of($super, $path);
	ok($ids->{$rows->{A}{id}} && $ids->{$rows->{B}{id}},
	    "super_admin: $path lists both facilities");
	$ids = ids_of($super, "$path?facility_id=$fac{B}");
	ok($ids->{$rows->{B}{id}} && !$ids->{$rows->{A}{id}},
	    "super_admin: $path?facility_id=B lists B's rows only");
	is_deeply([grep { $_ ne $fac{B} } values %$ids], [],
	    "super_admin: $path?facility_id=B: nothing else");
}
ok_status(200, "super_admin reads B's device",
    $p->req(GET => "/api/v1/devices/$device{B}{id}", token => $super));
ok_status(200, "super_admin reads A's device",
    $p->req(GET => "/api/v1/devices/$device{A}{id}", token => $super));
ok_status(200, "super_admin patches B's device",
    $p->req(PATCH => "/api/v1/devices/$device{B}{id}", token => $super,
	json => {firmware_version => '9'}));
ok_status(204, "super_admin deletes B's tag",
    $p->req(DELETE => "/api/v1/tags/$tag{B}{id}", token => $super));
ok_status(204, "super_admin revokes B's key",
    $p->req(DELETE => "/api/v1/api-keys/$key{B}{id}", token => $super));
($st) = $p->req(GET => '/api/v1/ping', key => $key{B}{key});
is($st, 401, "B's revoked key: 401");
($st) = $p->req(GET => '/api/v1/ping', key => $key{A}{key});
is($st, 200, "A's key unaffected: 200");

done_testing;
