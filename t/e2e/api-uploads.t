#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Uploads end to end (doc/uploads.md): the multipart upload over real
# HTTP (byte-identical original, multipart edge cases, metadata and tags checks
# that store nothing when they refuse, the size limit), list, get, PATCH,
# DELETE, retranscode, who may call what, tenant isolation on every route, a
# facility's deletion removing its objects, and the same upload against S3
# (s3rver).
use strict;
use warnings;
use Digest::SHA qw(sha256_hex);
use File::Find;
use HTTP::Tiny;
use JSON::PP;
use Test::More;
use Xmhub::Platform qw(keys_of is_error);

# Every answer is checked against doc/platform-www/openapi.json.
$ENV{XMHUB_OPENAPI_CHECK} = 1;
use Xmhub::S3;

my $p = Xmhub::Platform->start;
my $stack = $p->stack;
my $var = $stack->var;
my $http = HTTP::Tiny->new(timeout => 60, keep_alive => 0);
my $json = JSON::PP->new->utf8->canonical;

# Uploads stay as made: the stack's transcode runner would move them on.
ok($stack->stop_daemon('transcode'), 'the transcode runner is stopped');

my $fac = $p->facility('Uploads A');
my $other = $p->facility('Uploads B');
my $admin = $p->user('facility_admin', $fac);
my $user = $p->user('user', $fac);
my $admin_b = $p->user('facility_admin', $other);
my $user_b = $p->user('user', $other);
my $super = $p->user('super_admin', undef);
my ($ta, $tu, $tab, $tub, $ts) =
    map { $p->token($_) } $admin, $user, $admin_b, $user_b, $super;

my $UPLOAD = 'api_key_id,bit_depth,channels,codec,created_at,duration_ms,'
    . 'facility_id,id,metadata,original_filename,original_format,'
    . 'original_size_bytes,sample_rate_hz,status,tags,updated_at,uploaded_by';
my $ITEM = 'created_at,facility_id,id,original_filename,original_format,'
    . 'original_size_bytes,status,tags,updated_at';
my $NOBODY = '00000000-0000-4000-8000-000000000000';
my $B = 'BoUnDaRy';
my $FORM = "multipart/form-data; boundary=$B";

sub new_tag {
	my ($token, $name) = @_;
	my ($st, $t) = $p->req(POST => '/api/v1/tags', token => $token,
		json => {name => $name, color => '#00aa11'});
	die "tag: $st\n" if $st != 200;
	return $t->{id};
}

my $ka = $p->api_key($ta);
my $ka_ingest = $p->api_key($ta, 'ingest');
my $kb = $p->api_key($tab);
my $tag1 = new_tag($ta, 'birds');
my $tag2 = new_tag($ta, 'alpha');
my $tag_b = new_tag($tab, 'elsewhere');

# A form: each part [name, filename or undef, Content-Type or undef,
# data] or a string (the part's header lines and content, raw).
sub form {
	my ($boundary, @parts) = @_;
	my $s = '';
	for my $pt (@parts) {
		if (!ref $pt) {
			$s .= "--$boundary\r\n$pt\r\n";
			next;
		}
		my ($name, $file, $type, $data) = @$pt;
		$s .= "--$boundary\r\nContent-Disposition: form-data; "
		    . "name=\"$name\""
		    . (defined $file ? "; filename=\"$file\"" : '') . "\r\n"
		    . (defined $type ? "Content-Type: $type\r\n" : '')
		    . "\r\n$data\r\n";
	}
	return "$s--$boundary--\r\n";
}

sub post_raw {
	my ($key, $body, $type) = @_;
	return $p->req(POST => '/api/v1/uploads', key => $key, body => $body,
		headers => {'Content-Type' => $type // $FORM});
}

sub upload {
	my ($key, @parts) = @_;
	return post_raw($key, form($B, @parts));
}

sub file_part {
	my ($data, $name) = @_;
	return ['file', $name // 'take.wav', 'audio/wav', $data];
}

# Sends body in chunks of $size bytes without a Content-Length.
sub post_chunked {
	my ($key, $body, $size) = @_;
	my $at = 0;
	my $res = $http->request(POST => $stack->url('/api/v1/uploads'), {
		headers => {'X-Api-Key' => $key, 'Content-Type' => $FORM},
		content => sub {
			return undef if $at >= length $body;
			my $c = substr($body, $at, $size);
			$at += $size;
			return $c;
		}});
	my $b = eval { $json->decode($res->{content}) };
	return ($res->{status}, $b, $res);
}

# The object store's files (its readiness probes aside).
sub objects {
	my @f;
	find({no_chdir => 1, wanted => sub {
		push @f, $File::Find::name
		    if -f $File::Find::name && !m{/\.health(/|$)};
	}}, "$var/objects") if -d "$var/objects";
	return sort @f;
}

sub nobjects {
	my @f = objects();
	return scalar @f;
}

sub slurp {
	my ($path) = @_;
	open my $f, '<:raw', $path or return undef;
	local $/;
	return <$f>;
}

# What an upload leaves behind: rows, links, jobs, objects.
sub state {
	my @n;
	# Not map over qw(): Stack.pm's setting() reads into $_.
	for my $t (qw(uploads upload_tags transcode_jobs)) {
		push @n, $p->sql("SELECT count(*) FROM $t");
	}
	return join ' ', @n, nobjects();
}

sub original { return "$var/objects/$_[0]{facility_id}/uploads/$_[0]{id}/original" }

sub get_upload {
	my ($token, $id) = @_;
	return $p->req(GET => "/api/v1/uploads/$id", token => $token);
}

srand(42);
# Binary content with near misses of the delimiter in it.
my $data = join '', map {
	pack('N', int rand 2**32) . ($_ % 97 ? '' : "\r\n--BoUnDaRx\r\n--BoUnDa")
} 1 .. 65536;
# Random again: File::Temp names its files with rand(), and fixed names
# collide with those of another run of this test.
srand();

# --- a good upload ---
my $before = state();
my ($st, $u) = upload($ka,
	['metadata', undef, undef, '{"site": "north", "depth": 3}'],
	file_part($data, 'dawn chorus.WAV'),
	['tags', undef, 'application/json', qq{["$tag1", "\U$tag2\E", "$tag1"]}]);
is($st, 200, 'upload: 200') or diag explain $u;
is(keys_of($u), $UPLOAD, 'upload: exactly the Upload fields');
is($u->{status}, 'pending', 'upload: status pending');
is($u->{facility_id}, $fac, "upload: the key's facility");
is($u->{uploaded_by}, undef, 'upload: uploaded_by null for a device');
is($p->sql("SELECT api_key_id FROM uploads WHERE id = '$u->{id}'"),
    $u->{api_key_id}, 'upload: api_key_id');
is($p->sql("SELECT count(*) FROM api_keys WHERE id = '$u->{api_key_id}' "
    . "AND key_prefix = '" . substr($ka, 0, 12) . "'"), 1,
    'upload: api_key_id is the key used');
is($u->{original_filename}, 'dawn chorus.WAV', 'upload: original_filename');
is($u->{original_format}, 'wav', 'upload: original_format lower-cased');
is($u->{original_size_bytes}, length $data, 'upload: original_size_bytes');
is_deeply($u->{metadata}, {site => 'north', depth => 3}, 'upload: metadata');
is($u->{$_}, undef, "upload: $_ null before transcoding")
    for qw(duration_ms sample_rate_hz channels bit_depth codec);
is_deeply([map { $_->{id} } @{$u->{tags}}], [$tag2, $tag1],
    'upload: the tags, each once, by name');
my (undef, $all_tags) = $p->req(GET => '/api/v1/tags', token => $tu);
is_deeply($u->{tags}, [grep { $_->{id} ne $tag_b } @$all_tags],
    'upload: tags are Tag objects as GET /api/v1/tags has them');
is(sha256_hex(slurp(original($u)) // ''), sha256_hex($data),
    'the stored original is byte-identical (SHA-256)');
is($p->sql("SELECT status || ' ' || target_format FROM transcode_jobs "
    . "WHERE upload_id = '$u->{id}'"), 'queued webm',
    'a transcode job is queued with the default target');
my ($b_up, $b_links, $b_jobs, $b_obj) = split ' ', $before;
is(state(), join(' ', $b_up + 1, $b_links + 2, $b_jobs + 1, $b_obj + 1),
    'one row, two links, one job, one object');
my ($st2, $g) = get_upload($tu, $u->{id});
is($st2, 200, 'get: 200');
is_deeply($g, $u, 'get: the upload as answered at creation');
my $first = $u;

# --- multipart over real HTTP ---
($st, $u) = upload($ka, file_part('abc', 'a \"quoted\" name\\\\x.Flac'));
is($st, 200, 'quoted filename with escapes: 200') or diag explain $u;
is($u->{original_filename}, 'a "quoted" name\\x.Flac',
    'quoted filename: unescaped');
is($u->{original_format}, 'flac', 'quoted filename: format');
is_deeply($u->{metadata}, {}, 'no metadata field: {}');
is_deeply($u->{tags}, [], 'no tags field: []');

($st, $u) = upload($ka, file_part('x', 'C:\\\\Users\\\\me\\\\rec.v1.MP3'));
is($u->{original_filename}, 'C:\\Users\\me\\rec.v1.MP3',
    'a path as filename is kept');
is($u->{original_format}, 'mp3', 'the extension of its last segment');
($st, $u) = upload($ka, file_part('x', "caf\xc3\xa9 \xe2\x99\xaa.ogg"));
is($u->{original_filename}, "caf\x{e9} \x{266a}.ogg", 'a UTF-8 filename');
($st, $u) = upload($ka, file_part('x', 'recording'));
is($u->{original_format}, '', 'no extension: empty original_format');
($st, $u) = upload($ka, file_part('', 'empty.wav'));
is($st, 200, 'an empty file: 200');
is($u->{original_size_bytes}, 0, 'an empty file: size 0');
is(-s original($u), 0, 'an empty file: stored empty') if $st == 200;

# Preamble, unknown parts around the file, padding, header case, a
# quoted boundary with a space, the file first and metadata after it.
my $qb = "odd b'(+_,-./:=?";
my $raw = "this preamble is ignored\r\n--$qb \t\r\n"
    . "content-disposition: FORM-DATA; name=comment\r\n\r\nhello\r\n"
    . "--$qb\r\nContent-Disposition: form-data; name=\"file\"; "
    . "filename=\"late.wav\"\r\nContent-Type: audio/x-wav\r\n"
    . "X-Unknown: yes\r\n\r\n$data\r\n"
    . "--$qb\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n"
    . "{\"after\": true}\r\n"
    . "--$qb\r\nContent-Disposition: form-data; name=\"extra\"; "
    . "filename=\"ignored.bin\"\r\n\r\nnot stored\r\n"
    . "--$qb--\r\nthis epilogue is ignored too\r\n";
($st, $u) = post_raw($ka, $raw, "multipart/form-data; boundary=\"$qb\"");
is($st, 200, 'preamble, unknown parts, quoted boundary: 200')
    or diag explain $u;
is_deeply($u->{metadata}, {after => JSON::PP::true},
    'metadata after the file applies');
is(sha256_hex(slurp(original($u)) // ''), sha256_hex($data),
    'the file among unknown parts: byte-identical');
is(scalar(() = glob("$var/objects/$fac/uploads/$u->{id}/*")), 1,
    'unknown parts store nothing');

($st, $u) = post_chunked($ka, form($B, file_part($data)), 7000);
is($st, 200, 'chunked body (no Content-Length): 200') or diag explain $u;
is(sha256_hex(slurp(original($u)) // ''), sha256_hex($data),
    'chunked body: byte-identical');

# --- refusals store nothing ---
sub refused {
	my ($want, $re, $name, @req) = @_;
	my $s = state();
	my ($code, $body) = ref $req[0] eq 'CODE' ? $req[0]->() : upload(@req);
	is_error($code, $body, $want, $name);
	like($body->{detail} // '', $re, "$name: says why");
	is(state(), $s, "$name: nothing stored");
}

my $file = file_part($data);
refused(400, qr/missing file field/, 'only metadata', $ka,
    ['metadata', undef, undef, '{}']);
refused(400, qr/missing file field/, 'no part at all',
    sub { post_raw($ka, "--$B--\r\n") });
refused(400, qr/missing file field/, 'the file field misnamed', $ka,
    ['File', 'a.wav', undef, 'x']);
refused(400, qr/filename/, 'a file field without filename', $ka,
    ['file', undef, undef, 'x']);
refused(400, qr/filename/, 'a file field with filename ""', $ka,
    ['file', '', undef, 'x']);
refused(400, qr/more than one file field/, 'two files', $ka,
    $file, file_part('second'));
refused(400, qr/UTF-8/, 'a filename not UTF-8', $ka,
    ['file', "bad\xff.wav", undef, 'x']);
refused(400, qr/multipart/, 'JSON instead of a form',
    sub { post_raw($ka, '{}', 'application/json') });
refused(400, qr/boundary/, 'no boundary',
    sub { post_raw($ka, form($B, $file), 'multipart/form-data') });
refused(400, qr/ended before the closing boundary/, 'cut off in the file',
    sub { post_raw($ka, substr(form($B, $file), 0, 200000)) });
refused(400, qr/neither CRLF nor/, 'the boundary inside the file',
    sub { post_raw($ka, form($B, file_part("x\r\n--${B}y"))) });
refused(400, qr/LF without CR/, 'bare LF in part headers',
    sub { post_raw($ka, "--$B\r\nContent-Disposition: form-data; "
	. "name=file; filename=a\n\r\n\r\nx\r\n--$B--") });
refused(400, qr/form-data/, 'a part that is not form-data',
    sub { post_raw($ka, "--$B\r\nContent-Disposition: attachment; "
	. "filename=a\r\n\r\nx\r\n--$B--") });

my @bad_fields = (
	['metadata', '[1]', 400, qr/metadata must be a JSON object/],
	['metadata', 'null', 400, qr/metadata must be a JSON object/],
	['metadata', '"text"', 400, qr/metadata must be a JSON object/],
	['metadata', '{"a": ', 400, qr/metadata must be a JSON object/],
	['metadata', '', 400, qr/metadata must be a JSON object/],
	['metadata', '{} {}', 400, qr/metadata must be a JSON object/],
	['metadata', '{"a": "\u0000"}', 400, qr/\\u0000/],
	['metadata', '{"a": "' . ('x' x 70000) . '"}', 413, qr/65536/],
	['tags', '{}', 400, qr/tags must be a JSON array/],
	['tags', 'tags', 400, qr/tags must be a JSON array/],
	['tags', '[1]', 400, qr/tags\[0\] is not a UUID/],
	['tags', qq{["$tag1", "nope"]}, 400, qr/tags\[1\] is not a UUID/],
	['tags', qq{["$NOBODY"]}, 400, qr/$NOBODY is not a tag of this/],
	['tags', qq{["$tag1", "$tag_b"]}, 400,
	    qr/$tag_b is not a tag of this facility/],
	['tags', '[' . join(',', ('"' . $tag1 . '"') x 101) . ']', 400,
	    qr/at most 100 tags/],
);
for my $bf (@bad_fields) {
	my ($name, $text, $want, $re) = @$bf;
	my $short = length $text > 40 ? substr($text, 0, 40) . '...' : $text;
	refused($want, $re, "$name '$short' before the file", $ka,
	    [$name, undef, undef, $text], $file);
	refused($want, $re, "$name '$short' after the file", $ka,
	    $file, [$name, undef, undef, $text]);
}
refused(400, qr/more than one metadata field/, 'two metadata fields', $ka,
    $file, ['metadata', undef, undef, '{}'],
    ['metadata', undef, undef, '{}']);
refused(400, qr/more than one tags field/, 'two tags fields', $ka,
    ['tags', undef, undef, '[]'], $file, ['tags', undef, undef, '[]']);

# --- who may upload ---
is_error(upload(undef, $file), 401, 'no key');
is_error(upload('xmk_' . 'A' x 43, $file), 401, 'an unknown key');
is_error(upload($ka_ingest, $file), 403, 'a key without the upload scope');
is_error($p->req(POST => '/api/v1/uploads', token => $tu,
    body => form($B, $file), headers => {'Content-Type' => $FORM}), 401,
    'a JWT instead of a key');
is_error($p->req(GET => '/api/v1/uploads', key => $ka), 401,
    'list with a key instead of a JWT');
is_error($p->req(GET => "/api/v1/uploads/$first->{id}", key => $ka), 401,
    'get with a key instead of a JWT');
is_error($p->req(PATCH => "/api/v1/uploads/$first->{id}", key => $ka,
    json => {}), 401, 'patch with a key instead of a JWT');
is_error($p->req(DELETE => "/api/v1/uploads/$first->{id}", key => $ka), 401,
    'delete with a key instead of a JWT');
is_error($p->req(POST => "/api/v1/uploads/$first->{id}/retranscode",
    key => $ka), 401, 'retranscode with a key instead of a JWT');
is_error($p->req(PUT => '/api/v1/uploads', token => $tu), 405, 'PUT');
is_error($p->req(GET => '/api/v1/uploadsX', token => $tu), 404,
    '/api/v1/uploadsX');
is_error(get_upload($tu, 'not-a-uuid'), 400, 'get, id not a UUID');
is_error(get_upload($tu, $NOBODY), 404, 'get an unknown upload');

# --- list ---
my $lfac = $p->facility('Uploads lists');
my $luser = $p->user('user', $lfac);
my $tl = $p->token($luser);
my $kl = $p->api_key($p->token($p->user('facility_admin', $lfac)));
my @made;
for my $i (1 .. 5) {
	my (undef, $x) = upload($kl, file_part("n$i", "f$i.wav"));
	push @made, $x->{id};
}
my @newest = reverse @made;
my %set = ($made[0] => 'completed', $made[1] => 'completed',
	$made[2] => 'failed', $made[3] => 'processing');
$p->sql("UPDATE uploads SET status = '$set{$_}' WHERE id = '$_'")
    for keys %set;

sub list {
	my ($token, $q) = @_;
	return $p->req(GET => '/api/v1/uploads' . ($q // ''), token => $token);
}

($st, my $l) = list($tl);
is($st, 200, 'list: 200');
is(keys_of($l), 'items,page,per_page,total', 'list: the pagination envelope');
is_deeply([@$l{qw(total page per_page)}], [5, 1, 20],
    'list: total, page 1, per_page 20 by default');
is_deeply([map { $_->{id} } @{$l->{items}}], \@newest, 'list: newest first');
is(keys_of($l->{items}[0]), $ITEM, 'list items: exactly their fields');
is_deeply($l->{items}[0]{tags}, [], 'list items: tags');
my @pages;
for my $pg (1 .. 4) {
	($st, $l) = list($tl, "?per_page=2&page=$pg");
	is($st, 200, "page $pg of 2: 200");
	is($l->{total}, 5, "page $pg: total 5");
	is($l->{page}, $pg, "page $pg: page");
	is($l->{per_page}, 2, "page $pg: per_page");
	push @pages, map { $_->{id} } @{$l->{items}};
}
is_deeply(\@pages, \@newest, 'pages of 2: every upload once, in order');
is(scalar @{$l->{items}}, 0, 'a page beyond the end: no items');
($st, $l) = list($tl, '?per_page=100');
is(scalar @{$l->{items}}, 5, 'per_page 100: 200');
for my $q (qw(per_page=0 per_page=101 per_page=-1 per_page=x per_page=
	page=0 page=-1 page=x page=1.5 status=done status=PENDING status=)) {
	is_error(list($tl, "?$q"), 400, "list ?$q");
}
($st, $l) = list($tl, '?status=completed');
is_deeply([sort map { $_->{id} } @{$l->{items}}], [sort @made[0, 1]],
    'status=completed: those');
is($l->{total}, 2, 'status=completed: total 2');
for my $s (qw(pending processing failed)) {
	($st, $l) = list($tl, "?status=$s&per_page=1");
	is($l->{total}, 1, "status=$s: total 1");
	is($l->{items}[0]{status}, $s, "status=$s: its upload");
}
($st, $l) = list($tub);
is($st, 200, 'another facility lists: 200');
ok(!grep({ $_->{facility_id} ne $other } @{$l->{items}}),
    "another facility's list holds only its own uploads");
($st, $l) = list($ts, "?facility_id=$lfac");
is($l->{total}, 5, "super_admin: ?facility_id filters");
($st, $l) = list($ts, '?per_page=100');
is($l->{total}, $p->sql('SELECT count(*) FROM uploads'),
    'super_admin: every facility');
is_error(list($ts, '?facility_id=x'), 400, 'super_admin: bad facility_id');

# --- PATCH replaces ---
my $id = $first->{id};
sub patch {
	my ($token, $uid, $body) = @_;
	return $p->req(PATCH => "/api/v1/uploads/$uid", token => $token,
		json => $body);
}
($st, $u) = patch($tu, $id, {metadata => {c => [1, 2]}});
is($st, 200, 'patch metadata: 200');
is(keys_of($u), $UPLOAD, 'patch: an Upload');
is_deeply($u->{metadata}, {c => [1, 2]}, 'patch: metadata replaced, not merged');
is_deeply([map { $_->{id} } @{$u->{tags}}], [$tag2, $tag1],
    'patch without tags: tags kept');
ok($u->{updated_at} gt $first->{updated_at}, 'patch: updated_at moves');
($st, $u) = patch($tu, $id, {tags => [$tag1]});
is_deeply([map { $_->{id} } @{$u->{tags}}], [$tag1], 'patch tags: replaced');
is_deeply($u->{metadata}, {c => [1, 2]}, 'patch tags: metadata kept');
($st, $u) = patch($tu, $id, {tags => [], metadata => {}});
is_deeply([$u->{tags}, $u->{metadata}], [[], {}], 'patch: both emptied');
($st, $u) = patch($tu, $id, {tags => [$tag2, $tag2], metadata => {d => 1}});
is_deeply([map { $_->{id} } @{$u->{tags}}], [$tag2], 'patch: a repeat once');
my $kept = $u;
for my $bad ([{metadata => [1]}, 'metadata an array'],
	[{metadata => undef}, 'metadata null'],
	[{metadata => 'x'}, 'metadata a string'],
	[{tags => {}}, 'tags an object'],
	[{tags => ['x']}, 'tags not UUIDs'],
	[{tags => [$tag_b]}, "another facility's tag"],
	[{tags => [$NOBODY]}, 'an unknown tag'],
	[{tags => [$tag1], metadata => {z => "\x{0}"}}, 'metadata with NUL']) {
	is_error(patch($tu, $id, $bad->[0]), 400, "patch, $bad->[1]");
}
($st, $u) = get_upload($tu, $id);
is_deeply($u, $kept, 'refused patches changed nothing');
($st, $u) = patch($tu, $id, {});
is($st, 200, 'empty patch: 200');
is_deeply($u, $kept, 'empty patch: nothing changed, updated_at neither');
is_error(patch($tu, $NOBODY, {}), 404, 'patch an unknown upload');
is_error($p->req(PATCH => "/api/v1/uploads/$id", token => $tu, body => '{'),
    400, 'patch, malformed JSON');

# --- retranscode ---
my $jobs = $p->sql("SELECT count(*) FROM transcode_jobs WHERE upload_id = '$id'");
($st, my $r) = $p->req(POST => "/api/v1/uploads/$id/retranscode", token => $tu);
is($st, 200, 'retranscode: 200');
is(keys_of($r), 'job_id', 'retranscode: {job_id}');
is($p->sql("SELECT upload_id || ' ' || status FROM transcode_jobs "
    . "WHERE id = '$r->{job_id}'"), "$id queued",
    'retranscode: a queued job of the upload');
is($p->sql("SELECT count(*) FROM transcode_jobs WHERE upload_id = '$id'"),
    $jobs + 1, 'retranscode: one job more');
is_error($p->req(POST => "/api/v1/uploads/$NOBODY/retranscode", token => $tu),
    404, 'retranscode an unknown upload');

# --- tenant isolation, every route ---
my $snap = state();
is_error(get_upload($tub, $id), 403, "get another facility's upload");
is_error(patch($tub, $id, {metadata => {x => 1}}), 403,
    "patch another facility's upload");
is_error(patch($tab, $id, {tags => [$tag_b]}), 403,
    "patch another facility's upload with one's own tags");
is_error($p->req(DELETE => "/api/v1/uploads/$id", token => $tub), 403,
    "delete another facility's upload");
is_error($p->req(POST => "/api/v1/uploads/$id/retranscode", token => $tab),
    403, "retranscode another facility's upload");
is_error(upload($kb, $file, ['tags', undef, undef, qq{["$tag1"]}]), 400,
    "upload with another facility's tag");
is(state(), $snap, 'other facilities changed nothing');
($st, $u) = get_upload($tu, $id);
is_deeply($u, $kept, 'the upload is as it was');
($st, $u) = get_upload($ts, $id);
is($st, 200, "super_admin reads any facility's upload");
($st, $u) = patch($ts, $id, {metadata => {by => 'super'}});
is($st, 200, "super_admin patches any facility's upload");
is_error(patch($ts, $id, {tags => [$tag_b]}), 400,
    "super_admin: tags must be of the upload's facility");
($st, $u) = patch($ts, $id, {tags => [$tag1]});
is_deeply([map { $_->{id} } @{$u->{tags}}], [$tag1],
    "super_admin: the upload's facility's tags");

# --- DELETE removes the original, every output, jobs and links ---
my $dir = "$var/objects/$fac/uploads/$id";
my $job = $p->sql("SELECT id FROM transcode_jobs WHERE upload_id = '$id' LIMIT 1");
# A transcode output as the runner would leave it.
open my $out, '>', "$dir/$job.webm" or die "$dir/$job.webm: $!";
print $out 'webm';
close $out;
my $all = nobjects();
is_error($p->req(DELETE => "/api/v1/uploads/$id", token => $tub), 403,
    'delete by another facility');
ok(-e "$dir/original", 'refused delete: the original stays');
($st) = $p->req(DELETE => "/api/v1/uploads/$id", token => $tu);
is($st, 204, 'delete: 204');
is_deeply([glob("$dir/*")], [], 'delete: original and outputs gone');
is(nobjects(), $all - 2, 'delete: only its objects gone');
is($p->sql("SELECT count(*) FROM uploads WHERE id = '$id'") . ' '
    . $p->sql("SELECT count(*) FROM transcode_jobs WHERE upload_id = '$id'")
    . ' ' . $p->sql("SELECT count(*) FROM upload_tags WHERE upload_id = '$id'"),
    '0 0 0', 'delete: row, jobs and tag links gone');
is($p->sql("SELECT count(*) FROM tags WHERE id IN ('$tag1', '$tag2')"), 2,
    'delete: the tags stay');
is_error(get_upload($tu, $id), 404, 'get after delete');
is_error($p->req(DELETE => "/api/v1/uploads/$id", token => $tu), 404,
    'delete again');

# --- deleting a facility removes its objects ---
my $gone = $p->facility('Uploads gone');
my $kg = $p->api_key($p->token($p->user('facility_admin', $gone)));
($st, $u) = upload($kg, $file);
ok(-e original($u), "a facility's upload is stored");
$all = nobjects();
($st) = $p->req(DELETE => "/api/v1/facilities/$gone", token => $ts);
is($st, 204, 'delete the facility: 204');
ok(!-e "$var/objects/$gone" || !grep({ m{/\Q$gone\E/} } objects()),
    "the facility's objects are gone");
is(nobjects(), $all - 1, "only the facility's objects are gone");

# --- the size limit ---
$stack->restart(env => {XMHUB_MAX_UPLOAD_BYTES => 100000});
$stack->stop_daemon('transcode');
my $head = form($B, ['file', 'lim.wav', undef, '']);
my $fit = form($B, ['file', 'lim.wav', undef, 'z' x (100000 - length $head)]);
is(length $fit, 100000, 'a body of exactly the limit');
($st, $u) = post_raw($ka, $fit);
is($st, 200, 'exactly XMHUB_MAX_UPLOAD_BYTES: 200') or diag explain $u;
my $over = form($B, ['file', 'lim.wav', undef, 'z' x (100001 - length $head)]);
refused(413, qr/larger than 100000 bytes/, 'one byte over the limit',
    sub { post_raw($ka, $over) });
refused(413, qr/larger than 100000 bytes/, '5 MB over the limit',
    sub { post_raw($ka, form($B, file_part('q' x 5e6))) });
refused(413, qr/larger than 100000 bytes/, 'chunked, over the limit',
    sub { post_chunked($ka, form($B, file_part('q' x 5e5)), 10000) });
refused(413, qr/larger than 100000 bytes/,
    'metadata first, then too much file',
    sub { post_raw($ka, form($B, ['metadata', undef, undef, '{}'],
	file_part('q' x 2e5))) });
$stack->restart(env => {XMHUB_MAX_UPLOAD_BYTES => undef});
$stack->stop_daemon('transcode');
($st) = post_raw($ka, $over);
is($st, 200, 'the default limit takes the same body');

# --- the same against S3 ---
my $s3 = Xmhub::S3->start;
$stack->restart(env => {$s3->env});
$stack->stop_daemon('transcode');
$all = nobjects();
($st, $u) = upload($ka, ['metadata', undef, undef, '{"s3": true}'],
    file_part($data, 's3.flac'));
is($st, 200, 'S3: upload 200') or diag explain $u;
# The object's address in s3rver, which lets anyone read.
my $obj_url = $s3->endpoint . '/' . $s3->bucket . "/$fac/uploads/$u->{id}/original";
my $got = $http->get($obj_url);
is($got->{status}, 200, 'S3: the original is in the bucket');
is(sha256_hex($got->{content}), sha256_hex($data),
    'S3: the original is byte-identical (SHA-256)');
is(nobjects(), $all, 'S3: nothing in the filesystem store');
($st, $g) = get_upload($tu, $u->{id});
is_deeply($g, $u, 'S3: get');
refused(400, qr/metadata must be a JSON object/, 'S3: refused after the file',
    $ka, file_part('refused'), ['metadata', undef, undef, '[]']);

# The keys under the facility's uploads in the bucket (ListObjectsV2).
sub s3_keys {
	my $res = $http->get($s3->endpoint . '/' . $s3->bucket
	    . "?list-type=2&prefix=$fac%2Fuploads%2F");
	is($res->{status}, 200, 'S3: the bucket lists');
	return [$res->{content} =~ m{<Key>([^<]*)</Key>}g];
}
is_deeply(s3_keys(), ["$fac/uploads/$u->{id}/original"],
    'S3: only the accepted original is there (the refused one is not)');
($st) = $p->req(DELETE => "/api/v1/uploads/$u->{id}", token => $tu);
is($st, 204, 'S3: delete 204');
is($http->get($obj_url)->{status}, 404, 'S3: the original is gone');
is_deeply(s3_keys(), [], 'S3: no object of the facility left');

done_testing();
