#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Tags end to end (doc/api.md "Tags"): creation, names unique per
# facility, colors, listing, deletion keeping the uploads.
use strict;
use warnings;
use Test::More;
use Xmhub::Platform qw(keys_of is_error);

my $p = Xmhub::Platform->start(own_db => 1); # stops PostgreSQL
my $fac = $p->facility('Tags A');
my $other = $p->facility('Tags B');
my $admin = $p->user('facility_admin', $fac);
my $user = $p->user('user', $fac);
my $super = $p->user('super_admin', undef);
my $ta = $p->token($admin);
my $tu = $p->token($user);
my $ts = $p->token($super);

my $TAG = 'color,created_at,facility_id,id,name';
my $NOBODY = '00000000-0000-4000-8000-000000000000';

sub post {
	my ($token, $body) = @_;
	return $p->req(POST => '/api/v1/tags', token => $token, json => $body);
}

sub list {
	my ($token, $q) = @_;
	my ($st, $l) = $p->req(GET => '/api/v1/tags' . ($q // ''),
		token => $token);
	is($st, 200, 'list: 200');
	return $l // [];
}

# --- creation ---
my ($st, $t) = post($ta, {name => 'bird', color => '#A1b2C3'});
is($st, 200, 'create: 200') or diag explain $t;
is(keys_of($t), $TAG, 'create: exactly the Tag fields');
is($t->{name}, 'bird', 'create: name');
is($t->{color}, '#A1b2C3', 'create: color as given');
is($t->{facility_id}, $fac, "create: the admin's facility");
like($t->{created_at}, qr/^\d{4}-\d\d-\d\dT[\d:.]+Z$/, 'create: created_at');
my $bird = $t;

($st, $t) = post($ta, {name => 'wind'});
is($st, 200, 'no color: 200');
is($t->{color}, undef, 'no color: null');
($st, $t) = post($ta, {name => 'rain', color => undef, facility_id => $fac});
is($st, 200, 'color null, own facility_id: 200');
is($t->{color}, undef, 'color null: null');
($st, $t) = post($ta, {name => 'Bird', color => '#000000'});
is($st, 200, 'names differing in case are different tags');
($st, $t) = post($ta, {name => 'x' x 100, color => '#ffffff'});
is($st, 200, 'a name of 100 bytes: 200');
($st, $t) = post($ta, {name => "\x{e9}t\x{e9} \x{1F426}"});
is($st, 200, 'a UTF-8 name: 200');
is($t->{name}, "\x{e9}t\x{e9} \x{1F426}", 'a UTF-8 name read back');

is_error(post($ta, {name => 'bird'}), 409, 'duplicate name');
is_error(post($ta, {name => 'bird', color => '#123456'}), 409,
    'duplicate name, other color');
($st, $t) = post($ts, {name => 'bird', facility_id => $other});
is($st, 200, 'the same name in another facility: 200');
is($t->{facility_id}, $other, 'super_admin: the facility named');

my @bad = (
	[{}, 'no name'],
	[{name => ''}, 'empty name'],
	[{name => 'x' x 101}, 'name of 101 bytes'],
	[{name => 1}, 'name a number'],
	[{name => undef}, 'name null'],
	[{name => ['a']}, 'name an array'],
	[{name => 'c', color => 'red'}, 'color red'],
	[{name => 'c', color => '#12345'}, 'color of 5 digits'],
	[{name => 'c', color => '#1234567'}, 'color of 7 digits'],
	[{name => 'c', color => '#GGGGGG'}, 'color not hex'],
	[{name => 'c', color => '123456'}, 'color without #'],
	[{name => 'c', color => '#fff'}, 'color #RGB'],
	[{name => 'c', color => ' #123456'}, 'color with a space'],
	[{name => 'c', color => ''}, 'color empty'],
	[{name => 'c', color => 123456}, 'color a number'],
	[{name => 'c', facility_id => 'x'}, 'facility_id not a UUID'],
);
is_error(post($ta, $_->[0]), 400, "create, $_->[1]") for @bad;
for my $raw ('{', '', '[]', '"bird"', '{"name": "c", "color": #123456}') {
	is_error($p->req(POST => '/api/v1/tags', token => $ta, body => $raw),
	    400, "create, body '$raw'");
}
is($p->sql("SELECT count(*) FROM tags WHERE name = 'c'"), 0,
    'no bad request stored anything');
is_error(post($tu, {name => 'u'}), 403, 'user creates');
is_error(post(undef, {name => 'u'}), 401, 'no token');
is_error(post($ts, {name => 's'}), 400,
    'super_admin creates without facility_id');
is_error(post($ts, {name => 's', facility_id => $NOBODY}), 400,
    'super_admin creates in no facility');

# --- listing ---
my $l = list($tu);
is_deeply([map { $_->{name} } @$l],
    ['Bird', 'bird', 'rain', 'wind', 'x' x 100, "\x{e9}t\x{e9} \x{1F426}"],
    "user lists the facility's tags, by name");
is(keys_of($l->[0]), $TAG, 'list items are Tags');
is_deeply((grep { $_->{id} eq $bird->{id} } @$l)[0], $bird,
    'listed as created');
is_error($p->req(GET => '/api/v1/tags'), 401, 'list without a token');
is_error($p->req(PATCH => "/api/v1/tags/$bird->{id}", token => $ta,
	json => {}), 405, 'PATCH a tag');
is_error($p->req(GET => "/api/v1/tags/$bird->{id}", token => $ta), 405,
    'GET one tag');

# --- deletion keeps uploads ---
my $key = $p->sql("INSERT INTO api_keys (facility_id, name, key_prefix, "
	. "key_hash) VALUES ('$fac', 'k', 'xmk_AAAAAAAA', repeat('a', 64)) "
	. "RETURNING id");
my $up = $p->sql("INSERT INTO uploads (facility_id, api_key_id, "
	. "original_filename, original_format, original_size_bytes) VALUES "
	. "('$fac', '$key', 'a.wav', 'wav', 10) RETURNING id");
my ($wind) = grep { $_->{name} eq 'wind' } @$l;
$p->sql("INSERT INTO upload_tags (upload_id, tag_id, facility_id) VALUES "
	. "('$up', '$bird->{id}', '$fac'), ('$up', '$wind->{id}', '$fac')");

is_error($p->req(DELETE => "/api/v1/tags/$bird->{id}", token => $tu), 403,
    'user deletes');
($st, undef, my $res) = $p->req(DELETE => "/api/v1/tags/$bird->{id}",
	token => $ta);
is($st, 204, 'delete: 204');
is($res->{content} // '', '', 'delete: empty body');
ok(!grep({ $_->{id} eq $bird->{id} } @{list($tu)}), 'deleted: not listed');
is($p->sql("SELECT count(*) FROM uploads WHERE id = '$up'"), 1,
    'deleted: the upload stays');
is($p->sql("SELECT string_agg(tag_id::text, ',') FROM upload_tags "
	. "WHERE upload_id = '$up'"), $wind->{id},
    'deleted: only its link is gone');
is_error($p->req(DELETE => "/api/v1/tags/$bird->{id}", token => $ta), 404,
    'delete again');
is_error($p->req(DELETE => "/api/v1/tags/$NOBODY", token => $ta), 404,
    'delete an unknown tag');
is_error($p->req(DELETE => '/api/v1/tags/zzz', token => $ta), 400,
    'delete, id not a UUID');
($st, $t) = post($ta, {name => 'bird'});
is($st, 200, 'a deleted name can be used again');

# --- database down ---
$p->stack->stop_db;
is_error($p->req(GET => '/api/v1/tags', token => $tu), 503,
    'list with the database down');
is_error($p->req(DELETE => "/api/v1/tags/$t->{id}", token => $ta), 503,
    'delete with the database down');
$p->stack->start_db;
($st) = $p->req(GET => '/api/v1/tags', token => $tu);
is($st, 200, 'the database back: 200');

done_testing;
