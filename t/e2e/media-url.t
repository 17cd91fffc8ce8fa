#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Signed URLs (doc/auth.md "Signed URLs"): POST /api/auth/media-url signs
# a GET path for the caller; GET /api/v1/streams/{id}, which takes them,
# answers the audio without a bearer token, Range included; a changed
# path, expiry, identity or signature, an expired URL and a route that
# does not take them are 401; the caller's rights still hold.
use strict;
use warnings;
use Digest::SHA qw(hmac_sha256 hmac_sha256_hex);
use Test::More;
use Time::HiRes qw(sleep);
use Xmhub::Objects;
use Xmhub::Platform qw(is_error);

my $p = Xmhub::Platform->start;
my $fa = $p->facility('Media A');
my $fb = $p->facility('Media B');
my $ua = $p->user('user', $fa);
my $ta = $p->token($ua);
my $tb = $p->token($p->user('user', $fb));
my $admin = $p->token($p->user('facility_admin', $fa));
my $key = $p->api_key($admin, 'upload');

my ($st, $up) = Xmhub::Objects::upload($p, $key, 'tone.wav',
	Xmhub::Objects::wav(16000));
is($st, 200, 'a WAV is uploaded') or diag explain $up;
my $id = $up->{id};
my $end = time + 180;
my $u;
while (time < $end) {
	(undef, $u) = $p->req(GET => "/api/v1/uploads/$id", token => $ta);
	last if ($u->{status} // '') =~ /^(completed|failed)$/;
	sleep 0.2;
}
is($u->{status}, 'completed', 'its transcode completes');

my $path = "/api/v1/streams/$id";
sub issue {
	my ($token, $pth) = @_;
	return $p->req(POST => '/api/auth/media-url', token => $token,
		json => {path => $pth});
}

# --- issuing ---
is_error($p->req(POST => '/api/auth/media-url', json => {path => $path}),
	401, 'issuing without a token');
for my $bad ('/etc/passwd', '/api/v1/../auth/me', "$path?x=1",
    '/api/v1//streams', "/api/v1/streams/$id%2f", '') {
	is_error(issue($ta, $bad), 400, "a path of '$bad'");
}
is_error($p->req(POST => '/api/auth/media-url', token => $ta, json => {}),
	400, 'no path');
($st, my $m, my $res) = issue($ta, $path);
is($st, 200, 'a signed URL is issued');
like($m->{url}, qr{^\Q$path\E\?mu_exp=\d+&mu_user=\Q$ua->{id}\E&mu_fac=\Q$fa\E&mu_role=0&mu_sig=[0-9a-f]{64}$},
	'it is the path with the signed query');
like($m->{expires_at}, qr/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'expires_at');
like($res->{headers}{'cache-control'} // '', qr/no-store/,
	'the answer is not cached');
my ($exp) = $m->{url} =~ /mu_exp=(\d+)/;
ok($exp > time + 500 && $exp <= time + 601, 'it lives 600 seconds');

# --- using ---
($st, undef, $res) = $p->req(GET => $m->{url});
is($st, 200, 'the signed URL answers without a bearer token');
like($res->{headers}{'content-type'}, qr{^audio/}, 'audio');
my $whole = $res->{content};
($st, undef, $res) = $p->req(GET => $m->{url},
	headers => {Range => 'bytes=4-13'});
is($st, 206, 'a Range of it: 206');
is($res->{content}, substr($whole, 4, 10), 'the bytes of the range');

# The same signing in Perl, so that each field can be changed alone.
my $secret = $p->stack->setting('XMHUB_JWT_SECRET');
my $k = hmac_sha256('xmhub signed media URL v1', $secret);
sub signed {
	my (%f) = @_;
	my $sig = hmac_sha256_hex("GET\n$f{path}\n$f{exp}\n$f{user}\n$f{fac}\n"
		    . "$f{role}", $k);
	return "$f{path}?mu_exp=$f{exp}&mu_user=$f{user}&mu_fac=$f{fac}"
	    . "&mu_role=$f{role}&mu_sig=" . ($f{sig} // $sig);
}
my %good = (path => $path, exp => $exp, user => $ua->{id}, fac => $fa,
	role => 0);
is(($p->req(GET => signed(%good)))[0], 200, 'the Perl signature matches');
(my $tampered = $m->{url}) =~ s/mu_exp=(\d+)/'mu_exp=' . ($1 - 1)/e;
is_error($p->req(GET => $tampered), 401, 'another expiry, same signature');
($tampered = $m->{url}) =~ s/mu_role=0/mu_role=2/;
is_error($p->req(GET => $tampered), 401, 'another role, same signature');
($tampered = $m->{url}) =~ s/mu_fac=[^&]+/mu_fac=$fb/;
is_error($p->req(GET => $tampered), 401, 'another facility, same signature');
($tampered = $m->{url}) =~ s/mu_sig=(.)/'mu_sig=' . ($1 eq 'a' ? 'b' : 'a')/e;
is_error($p->req(GET => $tampered), 401, 'one hex digit changed');
($tampered = $m->{url}) =~ s/mu_sig=[0-9a-f]+/mu_sig=abc/;
is_error($p->req(GET => $tampered), 401, 'a short signature');
($tampered = $m->{url}) =~ s/&mu_user=[^&]+//;
is_error($p->req(GET => $tampered), 401, 'no user');
my $other = (Xmhub::Objects::upload($p, $key, 'b.wav',
	Xmhub::Objects::wav(8)))[1]{id};
($tampered = $m->{url}) =~ s/\Q$id\E/$other/;
is_error($p->req(GET => $tampered), 401, 'the query on another path');
is_error($p->req(GET => signed(%good, exp => time - 1)), 401, 'expired');
is_error($p->req(GET => signed(%good, exp => time + 3600)), 401,
	'an expiry further than the lifetime');
is_error($p->req(GET => signed(%good, exp => 'x1')), 401,
	'an expiry that is not a number');
(my $q = $m->{url}) =~ s/^[^?]+//;
is_error($p->req(GET => "/api/v1/uploads/$id$q"), 401,
	'a route that does not take signed URLs');

# The rights of whom it was issued for still hold.
($st, my $mb) = issue($tb, $path);
is($st, 200, 'a user of B gets a URL for the path');
is_error($p->req(GET => $mb->{url}), 403, 'which gives 403 on A\'s upload');
# A bearer token, when sent, is what counts.
is_error($p->req(GET => $m->{url}, token => 'not.a.token'), 401,
	'a bad bearer token with a good signed URL');

# Revocation: no database check, the URL lives out its short life.
$p->sql("UPDATE users SET is_active = false WHERE id = '$ua->{id}'");
is_error($p->req(GET => $path, token => $ta), 401,
	'the deactivated user\'s token is refused');
is(($p->req(GET => $m->{url}))[0], 200,
	'its signed URL works until it expires (doc/auth.md)');

done_testing;
