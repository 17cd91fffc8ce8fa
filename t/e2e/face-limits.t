#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# The face service's protections end to end (doc/face.md "Settings",
# "Shared state", "API keys"): per-IP rate limits (429 + Retry-After),
# the concurrency cap (503 + Retry-After: 1) held deterministically by a
# client that stops in the middle of its upload, and API keys (401
# missing or unknown, 403 revoked, use counted).
use strict;
use warnings;
use IO::Select;
use IO::Socket::INET;
use MIME::Base64 qw(encode_base64);
use Test::More;
use Time::HiRes qw(sleep);
use Xmhub::Face qw(photo);

my $home = photo('home.jpg');
my $f = Xmhub::Face->start(env => {
	FACE_API_RATE_LIMIT_DETECT => '3/minute',
	FACE_API_RATE_LIMIT_MASK => '2 per minute',
});

sub detail { return ($f->json($_[0]) // {})->{detail} // '' }

# --- rate limits ---
for my $n (1 .. 3) {
	my $r = $f->post('/api/v1/detect', image => 'not an image');
	is($r->{status}, 400, "detect $n of 3: counted, answered");
}
my $r = $f->post('/api/v1/detect', image => $home);
is($r->{status}, 429, 'detect 4: 429');
like($r->{headers}{'retry-after'} // '', qr/^\d+$/, 'Retry-After');
ok(($r->{headers}{'retry-after'} // 0) >= 1
    && $r->{headers}{'retry-after'} <= 20,
    'Retry-After within 60 s / 3');
like(detail($r), qr/rate limit/, '429 detail');
is($r->{headers}{'x-frame-options'}, 'DENY', '429 has security headers');
$r = $f->post('/api/v1/mask', image => $home);
is($r->{status}, 200, 'mask has its own budget');
$r = $f->post('/api/v1/mask', image => $home);
is($r->{status}, 200, 'mask 2 of 2');
$r = $f->post('/api/v1/mask', image => $home);
is($r->{status}, 429, 'mask 3: 429');
is($f->req(GET => '/health')->{status}, 200, '/health is not limited');

# --- the concurrency cap, across the service's processes ---
$f->restart(FACE_API_MAX_CONCURRENT_REQUESTS => 1,
	FACE_API_RATE_LIMIT_DETECT => '100000/minute',
	FACE_API_RATE_LIMIT_MASK => '100000/minute');

# A client sends its headers and half of its body, then waits: its
# request holds the only request slot until the rest arrives.
my ($body, $ct) = Xmhub::Face::multipart(image => $home);
my $half = int(length($body) / 2);
sub stall {
	my $sock = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
		PeerPort => $f->stack->face_port, Proto => 'tcp')
	    or die "connect: $!";
	binmode $sock;
	print $sock "POST /api/v1/detect HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    . "Content-Type: $ct\r\nContent-Length: " . length($body)
	    . "\r\nConnection: close\r\n\r\n" . substr($body, 0, $half);
	$sock->flush;
	return $sock;
}

# Until the program has taken the slot, others may still get through;
# then every other request is refused at once.  Should one of them have
# taken the slot first (the slow client then got the 503 itself), the
# slow client starts again.  No timing is asserted.
my $sock = stall();
my ($busy, $restarts) = (undef, 0);
for (1 .. 300) {
	$r = $f->post('/api/v1/detect', image => $home);
	if ($r->{status} == 503) {
		$busy = $r;
		last;
	}
	if (IO::Select->new($sock)->can_read(0)) {
		close $sock;
		$sock = stall();
		$restarts++;
	}
	sleep 0.05;
}
ok($busy, 'a request while the slot is held: 503');
note "the slow client started again $restarts times";
is($busy->{headers}{'retry-after'}, 1, '503: Retry-After: 1');
like(detail($busy), qr/concurrent/, '503 detail');
$r = $f->post('/api/v1/mask', image => $home);
is($r->{status}, 503, 'mask shares the cap');
is($f->req(GET => '/health')->{status}, 200, '/health is not capped');

local $SIG{PIPE} = 'IGNORE';
print $sock substr($body, $half);
$sock->flush;
my $answer = do { local $/; <$sock> };
close $sock;
like($answer, qr{^HTTP/1\.1 200 }, 'the slow client is answered 200');
like($answer, qr/"detections":\[\]/, '... with its DetectResponse');
$r = $f->post('/api/v1/detect', image => $home);
is($r->{status}, 200, 'the slot is free again: 200');

# --- API keys (they live in the database: storage on) ---
my $pw = 'face-admin-' . $$;
$f->restart(FACE_API_MAX_CONCURRENT_REQUESTS => 10,
	FACE_API_STORAGE_ENABLED => 'true', FACE_API_API_KEY_ENABLED => 'true',
	FACE_API_ADMIN_PASSWORD => $pw);
my %admin = (Authorization => 'Basic ' . encode_base64("admin:$pw", ''));
$r = $f->req(POST => '/api/v1/admin/api-keys', headers => {%admin},
	json => {name => 'camera 1'});
is($r->{status}, 201, 'key created');
my $key = $f->json($r);
like($key->{key}, qr/^face_[0-9A-Za-z]{43}$/, 'the key');

$r = $f->post('/api/v1/detect', image => $home);
is($r->{status}, 401, 'no key: 401');
like(detail($r), qr/API key/, '401 detail');
$r = $f->post('/api/v1/mask', image => $home);
is($r->{status}, 401, 'mask without a key: 401');
$r = $f->post('/api/v1/detect', image => $home,
	headers => {'X-API-Key' => 'face_' . ('x' x 43)});
is($r->{status}, 401, 'unknown key: 401');
$r = $f->post('/api/v1/detect', image => $home,
	headers => {'X-API-Key' => 'y' x 500});
is($r->{status}, 401, 'an over-long key: 401');
is($f->req(GET => '/health')->{status}, 200, '/health needs no key');
$r = $f->req(GET => "/api/v1/admin/api-keys/$key->{id}", headers => {%admin});
is($f->json($r)->{request_count}, 0, 'refused requests are not counted');
is($f->json($r)->{last_used_at}, undef, 'never used');

for my $n (1 .. 2) {
	$r = $f->post('/api/v1/detect', image => $home,
		headers => {'X-API-Key' => $key->{key}});
	is($r->{status}, 200, "with the key: 200 ($n)");
}
$r = $f->post('/api/v1/mask', image => $home,
	headers => {'X-API-Key' => $key->{key}});
is($r->{status}, 200, 'mask with the key: 200');
$r = $f->req(GET => "/api/v1/admin/api-keys/$key->{id}", headers => {%admin});
my $k = $f->json($r);
is($k->{request_count}, 3, 'request_count counts every accepted request');
like($k->{last_used_at} // '', qr/^\d{4}-\d\d-\d\dT/, 'last_used_at set');

$r = $f->req(PATCH => "/api/v1/admin/api-keys/$key->{id}",
	headers => {%admin}, json => {is_active => JSON::PP::false});
is($r->{status}, 200, 'revoked');
is($f->json($r)->{is_active}, JSON::PP::false, 'is_active false');
$r = $f->post('/api/v1/detect', image => $home,
	headers => {'X-API-Key' => $key->{key}});
is($r->{status}, 403, 'revoked key: 403');
like(detail($r), qr/revoked/, '403 detail');
$r = $f->req(PATCH => "/api/v1/admin/api-keys/$key->{id}",
	headers => {%admin}, json => {is_active => JSON::PP::true});
$r = $f->post('/api/v1/detect', image => $home,
	headers => {'X-API-Key' => $key->{key}});
is($r->{status}, 200, 'reactivated key: 200');
$r = $f->req(GET => "/api/v1/admin/api-keys/$key->{id}", headers => {%admin});
is($f->json($r)->{request_count}, 4, 'the refused request was not counted');
$r = $f->req(DELETE => "/api/v1/admin/api-keys/$key->{id}",
	headers => {%admin});
is($r->{status}, 204, 'key deleted');
$r = $f->post('/api/v1/detect', image => $home,
	headers => {'X-API-Key' => $key->{key}});
is($r->{status}, 401, 'deleted key: 401');

done_testing;
