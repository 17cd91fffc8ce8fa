#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# The face service's admin endpoints end to end (doc/face.md "Admin
# authentication", "API keys", "Storage", "Downloads"): HTTP Basic, 501 without
# storage, runs kept in the database and the object store, stats, pagination,
# details, downloads through expiring signed URLs (tampered or expired ones
# refused), deletion, API key administration, and the lockout of an address
# after 10 failures.
use strict;
use warnings;
use Digest::SHA qw(hmac_sha256_hex);
use HTTP::Tiny;
use MIME::Base64 qw(encode_base64);
use Test::More;
use Xmhub::Face qw(photo);
use Xmhub::S3;
use Xmhub::Test qw(run);

my $pw = 'admin-pw-' . $$;
my $secret = 'face-url-secret-for-the-tests-' . ('x' x 16);
my $f = Xmhub::Face->start(env => {FACE_API_ADMIN_PASSWORD => $pw,
	FACE_API_URL_SECRET => $secret});
my $noredirect = HTTP::Tiny->new(max_redirect => 0, timeout => 60);

sub basic { return {Authorization => 'Basic ' . encode_base64($_[0], '')} }
my $admin = basic("admin:$pw");
sub get { return $f->req(GET => $_[0], headers => $_[1] // $admin) }
sub detail { return ($f->json($_[0]) // {})->{detail} // '' }
sub keys_of { return join ',', sort keys %{$_[0] // {}} }

# --- storage disabled: 501 after authentication ---
my $r = get('/api/v1/admin/stats');
is($r->{status}, 501, 'storage disabled: 501');
like(detail($r), qr/storage/i, '501 detail');
is(get('/api/v1/admin/api-keys')->{status}, 501, 'keys: 501 too');
is(get('/api/v1/admin/stats', {})->{status}, 401,
    'without credentials: 401 first');

$f->restart(FACE_API_STORAGE_ENABLED => 'true');

# --- HTTP Basic ---
$r = get('/api/v1/admin/stats', {});
is($r->{status}, 401, 'no credentials: 401');
like($r->{headers}{'www-authenticate'} // '', qr/^Basic /,
    'WWW-Authenticate: Basic');
is(get('/api/v1/admin/stats', basic("admin:$pw-"))->{status}, 401,
    'wrong password: 401');
is(get('/api/v1/admin/stats', basic("root:$pw"))->{status}, 401,
    'wrong user: 401');
is(get('/api/v1/admin/stats', {Authorization => 'Basic !!!'})->{status},
    401, 'malformed Basic: 401');
is(get('/api/v1/admin/stats', {Authorization => "Bearer $pw"})->{status},
    401, 'another scheme: 401');
$r = get('/api/v1/admin/stats');
is($r->{status}, 200, 'right credentials: 200');
is_deeply($f->json($r), {total_images => 0, total_jobs => 0,
	total_faces_detected => 0, avg_inference_ms => 0,
	storage_used_bytes => 0, jobs_by_type => {}, jobs_by_method => {}},
    'empty stats');

# --- runs are kept ---
my $messi = photo('messi5.jpg');
my $home = photo('home.jpg');
$r = $f->post('/api/v1/detect', image => $messi, filename => 'messi.jpg');
my $d1 = $f->json($r);
is($r->{status}, 200, 'detect with storage: 200');
like($d1->{image_id} // '', qr/^[0-9a-f-]{36}$/, 'image_id');
like($d1->{job_id} // '', qr/^[0-9a-f-]{36}$/, 'job_id');
ok(defined $d1->{profiling}{storage_ms}, 'profiling.storage_ms');
$r = $f->post('/api/v1/mask', image => $messi, filename => 'messi.jpg',
	fields => {method => 'pixelate', format => 'png'});
is($r->{status}, 200, 'mask with storage: 200');
my $masked = $r->{content};
my ($img2, $job2) = @{$r->{headers}}{qw(x-image-id x-job-id)};
like($img2 // '', qr/^[0-9a-f-]{36}$/, 'X-Image-Id');
like($job2 // '', qr/^[0-9a-f-]{36}$/, 'X-Job-Id');
$r = $f->post('/api/v1/mask', image => $home, filename => 'home.jpg',
	fields => {method => 'solid'});
my $img3 = $r->{headers}{'x-image-id'};

$r = get('/api/v1/admin/stats');
my $st = $f->json($r);
is($st->{total_images}, 3, 'stats: total_images');
is($st->{total_jobs}, 3, 'stats: total_jobs');
is($st->{total_faces_detected}, 2, 'stats: total_faces_detected');
is_deeply($st->{jobs_by_type}, {detect => 1, mask => 2},
    'stats: jobs_by_type');
is_deeply($st->{jobs_by_method}, {pixelate => 1, solid => 1},
    'stats: jobs_by_method');
ok($st->{avg_inference_ms} > 0, 'stats: avg_inference_ms');
ok($st->{storage_used_bytes} >= 2 * length($messi) + length($home)
    + length($masked), 'stats: storage_used_bytes counts originals '
    . 'and outputs');

# --- images: pagination, detail ---
$r = get('/api/v1/admin/images');
my $page = $f->json($r);
is(keys_of($page), 'items,page,pages,per_page,total', 'image page fields');
is($page->{total}, 3, 'total 3');
is($page->{page}, 1, 'page 1');
is($page->{per_page}, 20, 'per_page 20 by default');
is($page->{pages}, 1, 'pages 1');
is(scalar @{$page->{items}}, 3, 'three items');
my $item = (grep { $_->{id} eq $d1->{image_id} } @{$page->{items}})[0];
is(keys_of($item), 'content_type,created_at,filename,height,id,job_count,'
    . 'original_url,size_bytes,width', 'image item fields');
is($item->{filename}, 'messi.jpg', 'filename');
is($item->{content_type}, 'image/jpeg', 'content_type');
is($item->{size_bytes}, length $messi, 'size_bytes');
is("$item->{width}x$item->{height}", '548x342', 'width, height');
is($item->{job_count}, 1, 'job_count');
like($item->{created_at}, qr/^\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:?\d\d)$/,
    'created_at with an offset');
is($item->{original_url}, "/api/v1/admin/images/$d1->{image_id}/download",
    'original_url');
$r = get('/api/v1/admin/images?per_page=2&page=2');
$page = $f->json($r);
is(scalar @{$page->{items}}, 1, 'page 2 of 2: one item');
is($page->{pages}, 2, 'pages 2');
is($page->{total}, 3, 'total still 3');
my %seen;
for my $p (1 .. 3) {
	my $x = $f->json(get("/api/v1/admin/images?per_page=1&page=$p"));
	$seen{$_->{id}}++ for @{$x->{items}};
}
is(scalar keys %seen, 3, 'pages of one cover every image once');
is(scalar @{$f->json(get('/api/v1/admin/images?page=9'))->{items}}, 0,
    'a page past the end is empty');
for my $q ('per_page=0', 'per_page=101', 'page=0', 'page=x') {
	is(get("/api/v1/admin/images?$q")->{status}, 400, "images?$q: 400");
}
$r = get("/api/v1/admin/images/$d1->{image_id}");
my $img = $f->json($r);
is($r->{status}, 200, 'image detail');
is(scalar @{$img->{jobs}}, 1, 'image detail: its job');
is($img->{jobs}[0]{id}, $d1->{job_id}, 'image detail: the job id');
is(get('/api/v1/admin/images/00000000-0000-4000-8000-000000000000')
    ->{status}, 404, 'unknown image: 404');
is(get('/api/v1/admin/images/nope')->{status}, 400, 'non-UUID: 400');

# --- jobs ---
$r = get('/api/v1/admin/jobs');
$page = $f->json($r);
is(keys_of($page), 'items,page,per_page,total', 'job page fields');
is($page->{total}, 3, 'three jobs');
is($f->json(get('/api/v1/admin/jobs?job_type=mask'))->{total}, 2,
    'job_type=mask');
is($f->json(get('/api/v1/admin/jobs?job_type=detect'))->{total}, 1,
    'job_type=detect');
is($f->json(get('/api/v1/admin/jobs?method=pixelate'))->{total}, 1,
    'method=pixelate');
is($f->json(get('/api/v1/admin/jobs?job_type=mask&method=gaussian'))
    ->{total}, 0, 'method=gaussian: none');
is(scalar @{$f->json(get('/api/v1/admin/jobs?per_page=1'))->{items}}, 1,
    'jobs per_page=1');
is(get('/api/v1/admin/jobs?job_type=x')->{status}, 400, 'job_type=x: 400');
is(get('/api/v1/admin/jobs?method=blur')->{status}, 400, 'method=blur: 400');
$r = get("/api/v1/admin/jobs/$job2");
my $job = $f->json($r);
is($r->{status}, 200, 'job detail');
is($job->{job_type}, 'mask', 'job_type');
is($job->{method}, 'pixelate', 'method');
is($job->{output_format}, 'png', 'output_format');
is($job->{face_count}, 1, 'face_count');
is(scalar @{$job->{detections}}, 1, 'full detection data');
ok($job->{detections}[0]{bbox}{x2} > $job->{detections}[0]{bbox}{x1},
    'a Detection object');
$r = get("/api/v1/admin/jobs/$d1->{job_id}");
is_deeply($f->json($r)->{detections}, $d1->{detections},
    'the stored detections are the answered ones');
is(get('/api/v1/admin/jobs/00000000-0000-4000-8000-000000000000')
    ->{status}, 404, 'unknown job: 404');

# --- downloads through signed URLs ---
sub follow {
	my ($path) = @_;
	my $x = $noredirect->request(GET => $f->url($path),
		{headers => $admin});
	return ($x, $x->{headers}{location});
}
my ($x, $loc) = follow("/api/v1/admin/images/$d1->{image_id}/download");
is($x->{status}, 302, 'image download: 302');
like($loc // '', qr{^/api/v1/files/images/$d1->{image_id}\?expires=\d+&signature=[0-9a-f]{64}$},
    'to a signed URL');
$r = $noredirect->get($f->url($loc));
is($r->{status}, 200, 'the signed URL needs no credentials');
ok($r->{content} eq $messi, 'the original, byte for byte');
is($r->{headers}{'content-type'}, 'image/jpeg', 'its content type');
is($r->{headers}{'x-frame-options'}, 'DENY', 'security headers too');
(my $bad = $loc) =~ s/signature=(.)/'signature=' . ($1 eq 'a' ? 'b' : 'a')/e;
is($noredirect->get($f->url($bad))->{status}, 403, 'tampered signature: 403');
($bad = $loc) =~ s/expires=(\d+)/'expires=' . ($1 + 1000)/e;
is($noredirect->get($f->url($bad))->{status}, 403, 'tampered expiry: 403');
($bad = $loc) =~ s/$d1->{image_id}/$img3/;
is($noredirect->get($f->url($bad))->{status}, 403,
    "another image's id: 403");
(my $plain = $loc) =~ s/\?.*//;
is($noredirect->get($f->url($plain))->{status}, 403, 'unsigned: 403');
my $past = time - 10;
my $sig = hmac_sha256_hex("images/$d1->{image_id}\n$past", $secret);
$r = $noredirect->get($f->url("/api/v1/files/images/$d1->{image_id}"
    . "?expires=$past&signature=$sig"));
is($r->{status}, 403, 'a well-signed expired link: 403');
like(detail($r), qr/expired/, '... said to be expired');
my $later = time + 100;
$sig = hmac_sha256_hex("images/$d1->{image_id}\n$later", $secret);
is($noredirect->get($f->url("/api/v1/files/images/$d1->{image_id}"
    . "?expires=$later&signature=$sig"))->{status}, 200,
    'the signature is HMAC-SHA256 with FACE_API_URL_SECRET');

($x, $loc) = follow("/api/v1/admin/jobs/$job2/download");
is($x->{status}, 302, 'job download: 302');
$r = $noredirect->get($f->url($loc));
is($r->{status}, 200, 'the processed image');
ok($r->{content} eq $masked, 'the mask output, byte for byte');
is($r->{headers}{'content-type'}, 'image/png', 'image/png');
($x) = follow("/api/v1/admin/jobs/$d1->{job_id}/download");
is($x->{status}, 404, 'a detect job has nothing to download');

# --- deletion ---
my $objects = $f->stack->var . '/objects/face';
ok(-d "$objects/images/$img2", 'the original is in the store');
ok(-d "$objects/jobs/$job2", 'the output is in the store');
$r = $f->req(DELETE => "/api/v1/admin/images/$img2", headers => $admin);
is($r->{status}, 204, 'image deleted');
is(get("/api/v1/admin/images/$img2")->{status}, 404, 'gone');
is(get("/api/v1/admin/jobs/$job2")->{status}, 404, 'its job is gone');
ok(!-e "$objects/images/$img2/original", 'its original object is gone');
ok(!-e "$objects/jobs/$job2/output", 'its output object is gone');
is($f->req(DELETE => "/api/v1/admin/images/$img2", headers => $admin)
    ->{status}, 404, 'deleting again: 404');
is($f->json(get('/api/v1/admin/stats'))->{total_images}, 2,
    'stats follow');

# --- API key administration ---
$r = $f->req(POST => '/api/v1/admin/api-keys', headers => $admin,
	json => {name => 'kiosk'});
is($r->{status}, 201, 'key: 201');
my $key = $f->json($r);
is(keys_of($key), 'created_at,id,is_active,key,last_used_at,name,'
    . 'request_count', 'API key object fields');
is($key->{request_count}, 0, 'request_count starts at 0');
is($key->{is_active}, JSON::PP::true, 'active');
for my $body ({}, {name => ''}, {name => 'x' x 201}, {name => 5}) {
	is($f->req(POST => '/api/v1/admin/api-keys', headers => $admin,
	    json => $body)->{status}, 400, 'bad key name: 400');
}
$f->req(POST => '/api/v1/admin/api-keys', headers => $admin,
	json => {name => "k$_"}) for 1 .. 3;
$page = $f->json(get('/api/v1/admin/api-keys?per_page=2'));
is($page->{total}, 4, 'key list: total');
is(scalar @{$page->{items}}, 2, 'key list: per_page');
is(get("/api/v1/admin/api-keys/$key->{id}")->{status}, 200, 'get key');
is($f->json(get("/api/v1/admin/api-keys/$key->{id}"))->{key}, $key->{key},
    'the key stays visible to admins (doc/face.md)');
$r = $f->req(PATCH => "/api/v1/admin/api-keys/$key->{id}",
	headers => $admin, json => {name => 'lobby'});
is($f->json($r)->{name}, 'lobby', 'renamed');
is($f->json($r)->{is_active}, JSON::PP::true, 'still active');
is($f->req(PATCH => "/api/v1/admin/api-keys/$key->{id}", headers => $admin,
    json => {is_active => 'no'})->{status}, 400, 'is_active must be boolean');
is($f->req(PATCH => '/api/v1/admin/api-keys/00000000-0000-4000-8000-'
    . '000000000000', headers => $admin, json => {})->{status}, 404,
    'unknown key: 404');
is($f->req(DELETE => "/api/v1/admin/api-keys/$key->{id}",
    headers => $admin)->{status}, 204, 'key deleted');
is(get("/api/v1/admin/api-keys/$key->{id}")->{status}, 404, 'gone');

# --- the S3 store: downloads are presigned URLs of the store ---
my $s3 = Xmhub::S3->start;
my %s3 = $s3->env;
(my $public = $s3{XMHUB_S3_ENDPOINT}) =~ s/127\.0\.0\.1/localhost/;
$f->restart(FACE_API_S3_ENDPOINT => $s3{XMHUB_S3_ENDPOINT},
	FACE_API_S3_BUCKET => $s3{XMHUB_S3_BUCKET},
	FACE_API_S3_ACCESS_KEY => $s3{XMHUB_S3_ACCESS_KEY},
	FACE_API_S3_SECRET_KEY => $s3{XMHUB_S3_SECRET_KEY},
	FACE_API_S3_REGION => $s3{XMHUB_S3_REGION},
	FACE_API_S3_PUBLIC_ENDPOINT => $public);
$r = $f->post('/api/v1/mask', image => $messi, fields => {format => 'webp'});
is($r->{status}, 200, 'S3: mask kept');
my ($s3img, $s3job) = @{$r->{headers}}{qw(x-image-id x-job-id)};
my $s3out = $r->{content};
($x, $loc) = follow("/api/v1/admin/images/$s3img/download");
is($x->{status}, 302, 'S3: image download 302');
like($loc // '', qr{^\Q$public/$s3{XMHUB_S3_BUCKET}/face/images/$s3img/original?\E.*X-Amz-Signature=},
    'S3: a presigned URL through FACE_API_S3_PUBLIC_ENDPOINT');
like($loc // '', qr/X-Amz-Expires=300\b/, 'S3: valid FACE_API_URL_TTL');
$r = $noredirect->get($loc);
ok($r->{status} == 200 && $r->{content} eq $messi,
    'S3: the original from the store');
($x, $loc) = follow("/api/v1/admin/jobs/$s3job/download");
$r = $noredirect->get($loc);
ok($r->{status} == 200 && $r->{content} eq $s3out,
    'S3: the mask output from the store');
is($f->req(DELETE => "/api/v1/admin/images/$s3img", headers => $admin)
    ->{status}, 204, 'S3: image deleted');
is($noredirect->get($s3->url("face/images/$s3img/original"))->{status}, 404,
    'S3: its object is gone');

$f->restart(map { ($_ => undef) } qw(FACE_API_S3_ENDPOINT FACE_API_S3_BUCKET
	FACE_API_S3_ACCESS_KEY FACE_API_S3_SECRET_KEY FACE_API_S3_REGION
	FACE_API_S3_PUBLIC_ENDPOINT));

# --- the password as an Argon2id hash (xmhub hash-password) ---
my ($hst, $hash, $herr) = run([$ENV{XMHUB_BIN}, 'hash-password'], "$pw\n");
is($hst, 0, 'xmhub hash-password') or diag $herr;
chomp $hash;
like($hash, qr/^\$argon2id\$v=19\$m=\d+,t=\d+,p=\d+\$[^\$]+\$[^\$]+$/,
    'it prints the libargon2 encoded form');
unlike($hash, qr/\Q$pw\E/, 'without the password');
$f->restart(FACE_API_ADMIN_PASSWORD => $hash);
is(get('/api/v1/admin/stats')->{status}, 200,
    'hash configured: the right password is accepted');
is(get('/api/v1/admin/stats', basic("admin:$pw-"))->{status}, 401,
    'a wrong one is refused');
is(get('/api/v1/admin/stats', basic("admin:$hash"))->{status}, 401,
    'the hash itself is no password');
is(get('/api/v1/admin/stats', basic("root:$pw"))->{status}, 401,
    'a wrong user is refused');
is(get('/api/v1/admin/stats')->{status}, 200,
    'a success resets the count of failures');

# --- lockout, with the hash (last: it locks this test's address out) ---
for my $n (1 .. 10) {
	$r = get('/api/v1/admin/stats', basic("admin:wrong$n"));
	is($r->{status}, 401, "failure $n: 401");
}
$r = get('/api/v1/admin/stats');
is($r->{status}, 429, 'after 10 failures even the right password: 429');
ok(($r->{headers}{'retry-after'} // 0) > 880
    && $r->{headers}{'retry-after'} <= 900, 'Retry-After about 15 minutes');
is(get('/api/v1/admin/stats', basic('admin:wrong'))->{status}, 429,
    'and wrong ones');
# An expiry of its own: the link made above may have expired by now on a
# loaded machine (its 100 s against the restarts and hashing since).
my $hour = time + 3600;
$r = $noredirect->get($f->url("/api/v1/files/images/$d1->{image_id}"
    . "?expires=$hour&signature="
    . hmac_sha256_hex("images/$d1->{image_id}\n$hour", $secret)));
is($r->{status}, 200, 'signed links do not depend on the login');
is($f->post('/api/v1/detect', image => $home)->{status}, 200,
    'the public endpoints are not locked');

done_testing;
