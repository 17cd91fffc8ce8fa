#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Forged, altered and outlived tokens (doc/auth.md "Tokens", doc/api.md
# "Authentication", lib/web/authn.c): a table of forgeries made from a
# real login's tokens, each tried as an access token on a JWT route
# (GET /api/v1/devices) and as a refresh token at /api/auth/refresh; then
# the tokens that were good once: type swaps, a reused refresh token (its
# whole login revoked), a deleted user's, one from before a password
# change (its "ver" below the user's token version), a role change or its
# facility's deactivation, and a well-signed one with an unknown claim,
# which is accepted.  Every refusal is 401 with a {"detail"} body.
use strict;
use warnings;
use Digest::SHA qw(hmac_sha256);
use JSON::PP;
use MIME::Base64 qw(encode_base64url decode_base64url);
use Test::More;
use Time::HiRes qw(sleep time);
use Xmhub::Accounts qw(mkuser login claims jwt is_error);
use Xmhub::Platform;

my $p = Xmhub::Platform->start;
# The stack's signing secret, from its env file.
my $secret = $p->stack->setting('XMHUB_JWT_SECRET');
ok(defined $secret && length $secret >= 32, 'the JWT secret of the stack');
my $json = JSON::PP->new->canonical;

my $fac = $p->facility('Forgery');
my $other = $p->facility('Forgery other');
mkuser($p, 'root@example.org', 'root password', 'super_admin');
my $root = login($p, 'root@example.org', 'root password');
my %id;
for my $who (qw(alice bob carol dave erin frank)) {
	$id{$who} = mkuser($p, "$who\@example.org", "$who password", 'user',
		$fac);
}
my $closed = $p->facility('Forgery closed');
$id{gina} = mkuser($p, 'gina@example.org', 'gina password', 'user', $closed);
my $alice = login($p, 'alice@example.org', 'alice password');

sub devices { return $p->req(GET => '/api/v1/devices', token => $_[0]) }

sub refresh {
	return $p->req(POST => '/api/auth/refresh',
		json => {refresh_token => $_[0]});
}

# ok_200($st, $body, [$response,] $name): a 200 with the device list.
sub ok_200 {
	my ($st, $body, $name) = (@_[0, 1], $_[-1]);
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is($st, 200, "$name: 200") or diag explain $body;
	is(ref $body, 'ARRAY', "$name: the list");
}

my $CHANGED = 'the access token is no longer valid: the account changed; '
    . 'log in again';

# refused_next($name, [$st, $body, $response]): the answer to the first
# request after a change of the token's account made through the API:
# refused at once (doc/auth.md "Account state on every request": a change
# made through this host is seen by the very next request).
sub refused_next {
	my ($name, @answer) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is_error(@answer, 401, "$name, the very next request");
	is(ref $answer[1] eq 'HASH' && $answer[1]{detail}, $CHANGED,
	    "$name: the detail of doc/auth.md");
}

# refused_soon($name, $request): a token refused after a change of its
# account made in SQL, which doc/auth.md promises "as soon as its
# notification arrives", not on the very next request (a notification
# takes a moment to reach another backend): refused within 2 s, then 6
# times in a row (the program runs in more than one process).  The first
# answer is noted, not asserted.
sub refused_soon {
	my ($name, $request) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($first) = $request->();
	my ($t, $row, @last) = (time, 0);
	while ($row < 6 && time - $t < 2) {
		@last = $request->();
		$row = $last[0] == 401 ? $row + 1 : 0;
		sleep 0.01 unless $row;
	}
	ok($row == 6, "$name: refused within 2 s, 6 times in a row")
	    or diag "last answer: $last[0]";
	is_error(@last, 401, $name);
	is(ref $last[1] eq 'HASH' && $last[1]{detail}, $CHANGED,
	    "$name: the detail of doc/auth.md");
	note "$name: the first request after the change got $first";
}

# --- helpers on the three parts of a token ---
sub parts { return split /\./, $_[0], -1 }
sub part { return encode_base64url($json->encode($_[0])) }
sub header_of { return $json->decode(decode_base64url((parts($_[0]))[0])) }

# $token with its claims changed as %set says, the signature kept.
sub tampered {
	my ($token, %set) = @_;
	my ($h, undef, $s) = parts($token);
	return join '.', $h, part({%{claims($token)}, %set}), $s;
}

# $token with its header changed as %set says, signed HS256 with the real
# secret: a good signature under a header that lies about it.
sub relabelled {
	my ($token, %set) = @_;
	my (undef, $c) = parts($token);
	my $h = part({%{header_of($token)}, %set});
	return "$h.$c." . encode_base64url(hmac_sha256("$h.$c", $secret));
}

# The claims of $token changed as %set says, signed anew with $key
# (default the real secret) by the algorithm $alg (default HS256).
sub resigned {
	my ($token, $key, $alg, %set) = @_;
	return jwt({alg => $alg // 'HS256'}, {%{claims($token)}, %set},
		$key // $secret);
}

# --- the controls: the real tokens work ---
my ($st, $b) = devices($alice->{access_token});
ok_200($st, $b, 'the real access token');
ok(exists claims($alice->{access_token})->{ver},
    'login tokens carry the ver claim');

# --- forgeries, as access and as refresh token ---
my $now = time;
my @forgeries = (
	['alg none, no signature', sub {
		my (undef, $c) = parts($_[0]);
		return part({alg => 'none', typ => 'JWT'}) . ".$c.";
	}],
	['alg none, the original signature', sub {
		my (undef, $c, $s) = parts($_[0]);
		return part({alg => 'none', typ => 'JWT'}) . ".$c.$s";
	}],
	['alg HS512 in the header, an HS256 signature',
	    sub { relabelled($_[0], alg => 'HS512') }],
	['alg RS256 in the header, an HS256 signature',
	    sub { relabelled($_[0], alg => 'RS256') }],
	['alg HS512, signed HS512 with the real secret',
	    sub { resigned($_[0], undef, 'HS512') }],
	['signed with another key',
	    sub { resigned($_[0], 'k' x 48) }],
	['role raised to super_admin, the original signature',
	    sub { tampered($_[0], role => 'super_admin', facility_id => '') }],
	['facility_id changed, the original signature',
	    sub { tampered($_[0], facility_id => $other) }],
	['sub changed, the original signature',
	    sub { tampered($_[0], sub => $id{bob}) }],
	['exp extended, the original signature',
	    sub { tampered($_[0], exp => claims($_[0])->{exp} + 86400) }],
	['the signature of another token',
	    sub { join '.', (parts($_[0]))[0, 1],
		(parts($root->{access_token}))[2] }],
	['expired, signed with the real secret',
	    sub { resigned($_[0], undef, undef, iat => $now - 960,
		exp => $now - 60) }],
);
for my $f (@forgeries) {
	my ($name, $make) = @$f;
	is_error(devices($make->($alice->{access_token})), 401,
	    "access token: $name");
	is_error(refresh($make->($alice->{refresh_token})), 401,
	    "refresh token: $name");
}
# What was forged from is still good: the 401s were the forgeries'.
($st, $b) = devices($alice->{access_token});
ok_200($st, $b, 'the real access token after the forgeries');
($st, my $pair) = refresh($alice->{refresh_token});
is($st, 200, 'the real refresh token after the forgeries: 200')
    or diag explain $pair;

# --- type swaps ---
is_error(devices($pair->{refresh_token}), 401,
    'a refresh token as access token');
is_error(refresh($pair->{access_token}), 401,
    'an access token at /api/auth/refresh');

# --- a reused refresh token: its whole login is revoked ---
my $bob1 = login($p, 'bob@example.org', 'bob password');
my $bob2 = login($p, 'bob@example.org', 'bob password'); # another login
($st, my $rot) = refresh($bob1->{refresh_token});
is($st, 200, 'bob: the first refresh rotates: 200') or diag explain $rot;
is_error(refresh($bob1->{refresh_token}), 401,
    'bob: the same refresh token again');
is_error(refresh($rot->{refresh_token}), 401,
    'bob: the token of the first rotation is revoked with its login');
($st, $b) = refresh($bob2->{refresh_token});
is($st, 200, "bob: his other login's refresh token still works: 200")
    or diag explain $b;

# --- a deleted user ---
my $carol = login($p, 'carol@example.org', 'carol password');
ok_200(devices($carol->{access_token}), 'carol before her deletion');
($st, $b) = $p->req(DELETE => "/api/v1/users/$id{carol}",
	token => $root->{access_token});
is($st, 204, 'carol deleted (soft: inactive)') or diag explain $b;
refused_next("a deleted user's access token",
    devices($carol->{access_token}));
is_error(refresh($carol->{refresh_token}), 401,
    "a deleted user's refresh token");
my $dave = login($p, 'dave@example.org', 'dave password');
ok_200(devices($dave->{access_token}), 'dave before his row is removed');
is($p->sql("DELETE FROM users WHERE id = '$id{dave}' RETURNING id"),
    $id{dave}, "dave's row removed");
refused_soon('the access token of a user whose row is gone',
    sub { devices($dave->{access_token}) });
is_error(refresh($dave->{refresh_token}), 401,
    "the refresh token of a user whose row is gone");
is_error(devices(resigned($alice->{access_token}, undef, undef,
	sub => '00000000-0000-4000-8000-000000000000')), 401,
    'a well-signed token of a user that never was');

# --- a token from before a password change ("ver" too low) ---
my $erin = login($p, 'erin@example.org', 'erin password');
ok_200(devices($erin->{access_token}), 'erin before the new password');
my $ver = claims($erin->{access_token})->{ver};
($st, $b) = $p->req(PATCH => "/api/v1/users/$id{erin}",
	token => $root->{access_token}, json => {password => 'erin new one'});
is($st, 200, "erin's password changed through the API") or diag explain $b;
refused_next('an access token from before the new password',
    devices($erin->{access_token}));
is_error(refresh($erin->{refresh_token}), 401,
    'a refresh token from before the new password');
my $erin2 = login($p, 'erin@example.org', 'erin new one');
cmp_ok(claims($erin2->{access_token})->{ver}, '>', $ver,
    'the new login has a higher ver');
ok_200(devices($erin2->{access_token}), 'the new access token');
# Well signed and otherwise the new token: only its ver is old.
is_error(devices(resigned($erin2->{access_token}, undef, undef,
	ver => $ver)), 401, 'a well-signed token of the old ver');

# --- a role changed, a facility deactivated ---
my $frank = login($p, 'frank@example.org', 'frank password');
ok_200(devices($frank->{access_token}), 'frank before his new role');
($st, $b) = $p->req(PATCH => "/api/v1/users/$id{frank}",
	token => $root->{access_token}, json => {role => 'facility_admin'});
is($st, 200, 'frank made a facility_admin') or diag explain $b;
refused_next('an access token from before a role change',
    devices($frank->{access_token}));
my $gina = login($p, 'gina@example.org', 'gina password');
ok_200(devices($gina->{access_token}), 'gina before her facility closes');
($st, $b) = $p->req(PATCH => "/api/v1/facilities/$closed",
	token => $root->{access_token}, json => {is_active => JSON::PP::false});
is($st, 200, "gina's facility deactivated") or diag explain $b;
refused_next('an access token of a user of an inactive facility',
    devices($gina->{access_token}));
is_error(refresh($gina->{refresh_token}), 401,
    'a refresh token of a user of an inactive facility');

# --- unknown claims are ignored (doc/auth.md, check 4) ---
my $extra = resigned($alice->{access_token}, undef, undef,
	xmhub_note => 'hello', admin => JSON::PP::true, scopes => ['all']);
ok_200(devices($extra), 'a well-signed access token with unknown claims');
# A refresh token is also looked up by its hash: one re-signed with
# extra claims is not a token we issued (and the one it was made from
# stays good).
is_error(refresh(resigned($pair->{refresh_token}, undef, undef,
	xmhub_note => 'hello')), 401,
    'a re-signed refresh token with unknown claims');
($st, $b) = refresh($pair->{refresh_token});
is($st, 200, 'the refresh token it was made from: 200') or diag explain $b;

done_testing;
