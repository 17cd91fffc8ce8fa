#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# The face service's /metrics (doc/metrics.md): promtool accepts it;
# detections, their latency, requests and rate-limit refusals move by
# exactly what was done; who may read it.
use strict;
use warnings;
use Test::More;
use MIME::Base64 qw(encode_base64);
use Xmhub::Prom qw(prom_samples prom_check);
use Xmhub::Face qw(photo);

my $f = Xmhub::Face->start(env => {FACE_API_MODEL => 'yunet',
	FACE_API_RATE_LIMIT_DETECT => '3/minute',
	FACE_API_ADMIN_PASSWORD => 'metrics-admin-pw'});

sub scrape {
	my (%h) = @_;
	my $r = $f->req(GET => '/metrics', headers => \%h);
	is($r->{status}, 200, 'scrape: 200') or diag $r->{content};
	return ($r, prom_samples($r->{content}));
}

my ($r, $m0) = scrape();
like($r->{headers}{'content-type'}, qr{^text/plain; version=0\.0\.4},
    'text format 0.0.4');
prom_check($r->{content}, 'promtool check metrics: no problem');

my $img = photo('messi5.jpg');
for (1 .. 3) {
	my $d = $f->post('/api/v1/detect', image => $img);
	is($d->{status}, 200, "detect $_: 200");
}
my $d = $f->post('/api/v1/detect', image => $img);
is($d->{status}, 429, 'the fourth: 429 (3/minute)');
my (undef, $m1) = scrape();
my $d0 = sub { ($m1->{$_[0]} // 0) - ($m0->{$_[0]} // 0) };
is($d0->('xmhub_face_inferences_total'), 3, 'inferences: +3');
is($d0->('xmhub_face_inference_duration_seconds_count'), 3,
    'inference latency: 3 observed');
cmp_ok($m1->{xmhub_face_inference_duration_seconds_sum}, '>', 0,
    'and their time');
is($d0->('xmhub_http_requests_total{group="face",status="200"}'), 4,
    'face 200: the 3 detections and the first scrape');
is($d0->('xmhub_http_requests_total{group="face",status="429"}'), 1,
    'face 429: +1');
is($d0->('xmhub_rate_limited_total{limit="detect"}'), 1,
    'rate-limit refusals: +1');
is($d0->('xmhub_rate_limited_total{limit="mask"}'), 0, 'mask: none');

$f->restart(FACE_API_METRICS_ALLOW => '10.0.0.0/8');
$r = $f->req(GET => '/metrics');
is($r->{status}, 403, 'another address, no credentials: 403');
$r = $f->req(GET => '/metrics', headers => {Authorization => 'Basic '
	. encode_base64('admin:wrong', '')});
is($r->{status}, 401, 'wrong admin credentials: 401');
my (undef, $m2) = scrape(Authorization => 'Basic '
	. encode_base64('admin:metrics-admin-pw', ''));
is($m2->{xmhub_face_inferences_total}, $m1->{xmhub_face_inferences_total},
    'the admin reads them; the restart kept the counts');
$f->restart(FACE_API_METRICS_ALLOW => undef);
done_testing;
