#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# The face service end to end through lighttpd (doc/face.md, the public
# endpoints of doc/face-www/openapi.json): every model present finds the faces
# of real photos and none on home.jpg, max_faces, every masking method and
# output format, pixels outside the masked regions unchanged, every bad input
# and parameter range, the security headers, CORS, the documentation pages, and
# the separation of the face origin from the platform's.
use strict;
use warnings;
use POSIX qw(floor ceil);
use Test::More;
use Xmhub::Face qw(photo model_names model_dir raw_pixels png_of);
use Xmhub::Test qw(run);

my @models = model_names();
ok(@models >= 1, 'face models present in ' . model_dir())
    or BAIL_OUT('no face model in ' . model_dir());

my $ORIGIN = 'https://app.example';
my $f = Xmhub::Face->start(env => {
	FACE_API_MODEL => $models[0],
	FACE_API_CORS_ORIGINS => "$ORIGIN, https://other.example",
	FACE_API_RATE_LIMIT_DETECT => '100000/minute',
	FACE_API_RATE_LIMIT_MASK => '100000/minute',
});

my %photo = map { $_ => photo($_) }
    qw(messi5.jpg basketball1.png home.jpg grace_hopper.jpg);

# Face regions (t/unit/face.c: SCRFD-2.5G's boxes, checked by eye).
my %region = (
	messi => [224, 90, 258, 133],
	front => [71, 92, 104, 135],
	grace => [178, 122, 352, 334],
);
# The spec's default confidence, right for every model once calibrated
# (doc/face-models.md, "Confidence").
my $c = 0.5;

sub iou {
	my ($x, $r) = @_;
	my $min = sub { $_[0] < $_[1] ? $_[0] : $_[1] };
	my $max = sub { $_[0] > $_[1] ? $_[0] : $_[1] };
	my $ix = $min->($x->{x2}, $r->[2]) - $max->($x->{x1}, $r->[0]);
	my $iy = $min->($x->{y2}, $r->[3]) - $max->($x->{y1}, $r->[1]);
	return 0 if $ix <= 0 || $iy <= 0;
	my $i = $ix * $iy;
	my $u = ($x->{x2} - $x->{x1}) * ($x->{y2} - $x->{y1})
	    + ($r->[2] - $r->[0]) * ($r->[3] - $r->[1]) - $i;
	return $i / $u;
}

sub found {
	my ($dets, $r) = @_;
	return grep { iou($_->{bbox}, $r) >= 0.4 } @$dets;
}

sub keys_of { return join ',', sort keys %{$_[0] // {}} }

sub detect {
	my (%opt) = @_;
	my $r = $f->post('/api/v1/detect', %opt);
	return ($r, $f->json($r));
}

my $DETECT = 'detections,image,image_id,job_id,processing,profiling,'
    . 'request_id,summary';
my $PROFILING = join ',', sort qw(decode_ms preprocess_ms blob_ms
    inference_ms postprocess_ms nms_ms mask_ms encode_ms storage_ms total_ms
    candidates_before_nms candidates_after_nms det_scale input_resolution
    det_resolution input_bytes output_bytes input_pixels model_name
    model_size_mb onnx_runtime_version opencv_version python_version
    worker_pid raw_scores);
my $DETECTION = 'area,bbox,center,confidence,index,landmarks,relative,size';

for my $i (0 .. $#models) {
	my $m = $models[$i];
	$f->restart(FACE_API_MODEL => $m) if $i > 0;

	my $r = $f->http->get($f->url('/health'));
	my $h = $f->json($r);
	is($r->{status}, 200, "$m: /health 200");
	is(keys_of($h), 'input_size,model,model_loaded,status,'
	    . 'storage_enabled,supports_landmarks', "$m: Health fields");
	is($h->{model}, $m, "$m: /health names the model");
	ok($h->{model_loaded}, "$m: model_loaded");
	ok($h->{supports_landmarks}, "$m: supports_landmarks");
	is($h->{status}, 'ok', "$m: status ok");
	ok(!$h->{storage_enabled}, "$m: storage disabled");
	is(scalar @{$h->{input_size}}, 2, "$m: input_size is a pair");

	my $d;
	($r, $d) = detect(image => $photo{'messi5.jpg'},
		fields => {confidence => $c});
	is($r->{status}, 200, "$m: detect messi5.jpg 200")
	    or diag $r->{content};
	is(keys_of($d), $DETECT, "$m: DetectResponse fields");
	is(scalar @{$d->{detections}}, 1, "$m: one face on messi5.jpg");
	ok(found($d->{detections}, $region{messi}), "$m: messi's face");
	my $det = $d->{detections}[0];
	is(keys_of($det), $DETECTION, "$m: Detection fields");
	{
		my $in = 1;
		for my $p (values %{$det->{landmarks}}) {
			$in &&= $p->{x} >= $det->{bbox}{x1} - 1
			    && $p->{x} <= $det->{bbox}{x2} + 1
			    && $p->{y} >= $det->{bbox}{y1} - 1
			    && $p->{y} <= $det->{bbox}{y2} + 1;
		}
		ok($in, "$m: the landmarks lie inside the box");
		is(keys_of($det->{landmarks}),
		    'left_eye,left_mouth,nose,right_eye,right_mouth',
		    "$m: five landmarks");
		ok($det->{landmarks}{left_eye}{x}
		    < $det->{landmarks}{right_eye}{x},
		    "$m: left eye left of the right eye in the image");
	}
	is($d->{processing}{model}, $m, "$m: processing.model");
	is($d->{profiling}{model_name}, $m, "$m: profiling.model_name");
	is(scalar @{$d->{profiling}{raw_scores}}, 1,
	    "$m: profiling.raw_scores, one per detection");
	# An integer for every model, YuNet's FaceDetectorYN included
	# (doc/face.md "Engine fields").
	like($d->{profiling}{candidates_before_nms} // 'null', qr/^\d+$/,
	    "$m: profiling.candidates_before_nms is an integer");
	cmp_ok($d->{profiling}{candidates_before_nms} // 0, '>=',
	    $d->{profiling}{candidates_after_nms},
	    "$m: no fewer candidates before NMS than after");
	is($d->{image}{width}, 548, "$m: image.width");
	is($d->{image}{height}, 342, "$m: image.height");

	($r, $d) = detect(image => $photo{'grace_hopper.jpg'},
		fields => {confidence => $c});
	is(scalar @{$d->{detections}}, 1, "$m: one face on grace_hopper.jpg");
	ok(found($d->{detections}, $region{grace}), "$m: grace's face");

	($r, $d) = detect(image => $photo{'basketball1.png'},
		fields => {confidence => $c});
	ok(found($d->{detections}, $region{front}),
	    "$m: the frontal face on basketball1.png (grayscale PNG)");

	($r, $d) = detect(image => $photo{'home.jpg'},
		fields => {confidence => $c});
	is($r->{status}, 200, "$m: detect home.jpg 200");
	is(scalar @{$d->{detections}}, 0, "$m: no face on home.jpg");
	is($d->{summary}{face_count}, 0, "$m: summary.face_count 0");

	# max_faces: many weak boxes at a low threshold, then capped.
	($r, $d) = detect(image => $photo{'home.jpg'},
		fields => {confidence => 0.01});
	my $many = scalar @{$d->{detections}};
	ok($many >= 2, "$m: $many boxes at confidence 0.01");
	my ($r1, $d1) = detect(image => $photo{'home.jpg'},
		fields => {confidence => 0.01, max_faces => 1});
	is(scalar @{$d1->{detections}}, 1, "$m: max_faces 1");
	is($d1->{detections}[0]{confidence}, $d->{detections}[0]{confidence},
	    "$m: max_faces keeps the most confident");
	($r1, $d1) = detect(image => $photo{'home.jpg'},
		query => {confidence => 0.01, max_faces => 2});
	is(scalar @{$d1->{detections}}, 2, "$m: max_faces 2 as query");

	$r = $f->post('/api/v1/mask', image => $photo{'messi5.jpg'},
		fields => {confidence => $c});
	is($r->{status}, 200, "$m: mask 200");
	is($r->{headers}{'x-model'}, $m, "$m: X-Model");
	is($r->{headers}{'x-face-count'}, 1, "$m: X-Face-Count 1");
	like($r->{content}, qr/^\xFF\xD8\xFF/, "$m: JPEG by default");
}

# --- the rest with the first model ---
$f->restart(FACE_API_MODEL => $models[0]);
my $m = $models[0];

my ($r, $d) = detect(image => $photo{'messi5.jpg'});
my $s = $d->{summary};
is(keys_of($s), 'avg_confidence,face_area_ratio,face_count,'
    . 'max_confidence,min_confidence,total_face_area', 'summary fields');
my $det = $d->{detections}[0];
is($s->{max_confidence}, $det->{confidence}, 'summary.max_confidence');
ok(abs($s->{total_face_area} - $det->{area}) < 0.02,
    'summary.total_face_area');
ok(abs($s->{face_area_ratio} - $det->{area} / (548 * 342)) < 1e-5,
    'summary.face_area_ratio');
ok(abs($det->{area} - $det->{size}{width} * $det->{size}{height}) < 1,
    'area = width x height');
ok(abs($det->{relative}{width} - $det->{size}{width} / 548) < 1e-5,
    'relative.width');
ok(abs($det->{center}{x} - ($det->{bbox}{x1} + $det->{bbox}{x2}) / 2)
    < 0.02, 'center.x');
is($det->{index}, 0, 'index 0');
my $p = $d->{profiling};
is(keys_of($p), $PROFILING, 'profiling fields');
is($p->{mask_ms}, undef, 'profiling.mask_ms null for detect');
is($p->{encode_ms}, undef, 'profiling.encode_ms null for detect');
is($p->{output_bytes}, undef, 'profiling.output_bytes null for detect');
is($p->{storage_ms}, undef, 'profiling.storage_ms null without storage');
is($p->{onnx_runtime_version}, undef, 'no ONNX Runtime in this build');
is($p->{python_version}, undef, 'no Python in this build');
like($p->{opencv_version}, qr/^4\.\d+\.\d+/, 'opencv_version');
is($p->{input_resolution}, '548x342', 'input_resolution');
like($p->{det_resolution}, qr/^\d+x\d+$/, 'det_resolution');
is($p->{input_bytes}, length $photo{'messi5.jpg'}, 'input_bytes');
is($p->{input_pixels}, 548 * 342, 'input_pixels');
ok($p->{model_size_mb} > 0, 'model_size_mb');
like($p->{worker_pid}, qr/^\d+$/, 'worker_pid');
ok($p->{total_ms} >= $p->{inference_ms}, 'total_ms covers inference');
ok($p->{candidates_after_nms} >= 1, 'candidates_after_nms');
is($d->{image_id}, undef, 'image_id null without storage');
is($d->{job_id}, undef, 'job_id null without storage');
like($d->{request_id}, qr/^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$/,
    'request_id is a UUID');
is($d->{image}{channels}, 3, 'image.channels of a colour JPEG');
is($d->{image}{size_bytes}, length $photo{'messi5.jpg'}, 'size_bytes');
is($d->{processing}{confidence_threshold}, 0.5, 'default confidence');
is($d->{processing}{nms_threshold}, 0.4, 'default nms_threshold');
($r, $d) = detect(image => $photo{'basketball1.png'});
is($d->{image}{channels}, 1, 'image.channels of a grayscale PNG');

# Other input formats, converted by ffmpeg.
my %magic = (jpeg => qr/^\xFF\xD8\xFF/, png => qr/^\x89PNG\r\n\x1A\n/,
	webp => qr/^RIFF....WEBP/s);
for my $fmt (qw(webp bmp tiff)) {
	my ($st, $out, $err) = run(['ffmpeg', '-v', 'error', '-i',
		'/usr/share/doc/opencv-doc/examples/data/messi5.jpg',
		'-f', 'image2pipe', '-vcodec', $fmt eq 'tiff' ? 'tiff'
		: $fmt eq 'bmp' ? 'bmp' : 'libwebp', '-']);
	is($st, 0, "ffmpeg made a $fmt") or diag $err;
	($r, $d) = detect(image => $out, fields => {confidence => $c});
	is($r->{status}, 200, "$fmt input: 200") or diag $r->{content};
	is(scalar @{$d->{detections} // []}, 1, "$fmt input: one face");
}

# --- masking: every method and format, pixels outside the regions ---
my $png = png_of($photo{'messi5.jpg'}, 'jpg');
my ($w, $h, $orig) = raw_pixels($png);
is("${w}x$h", '548x342', 'the PNG input decodes');

# The rectangles face_mask() may change (lib/face/face.h
# face_mask_region), one pixel wider for rounding.
sub regions {
	my ($dets, $pad) = @_;
	my @r;
	for my $x (@$dets) {
		my $bx = $x->{bbox};
		my ($bw, $bh) = ($bx->{x2} - $bx->{x1}, $bx->{y2} - $bx->{y1});
		my @q = (floor($bx->{x1} - $pad * $bw) - 1,
			floor($bx->{y1} - $pad * $bh) - 1,
			ceil($bx->{x2} + $pad * $bw) + 1,
			ceil($bx->{y2} + $pad * $bh) + 1);
		$q[0] = 0 if $q[0] < 0;
		$q[1] = 0 if $q[1] < 0;
		$q[2] = $w if $q[2] > $w;
		$q[3] = $h if $q[3] > $h;
		push @r, \@q;
	}
	return @r;
}

# (same outside, changed inside): compares two BGR images row by row.
sub compare {
	my ($old, $new, @regions) = @_;
	my ($same, $changed) = (1, 0);
	for my $y (0 .. $h - 1) {
		my @cut = sort { $a->[0] <=> $b->[0] }
		    grep { $y >= $_->[1] && $y < $_->[3] } @regions;
		my $x = 0;
		for my $q (@cut, [$w, 0, $w, 0]) {
			if ($q->[0] > $x) {
				my ($o, $n) = (3 * ($y * $w + $x),
					3 * ($q->[0] - $x));
				$same &&= substr($old, $o, $n) eq
				    substr($new, $o, $n);
			}
			if ($q->[2] > $q->[0]) {
				my ($o, $n) = (3 * ($y * $w + $q->[0]),
					3 * ($q->[2] - $q->[0]));
				$changed ||= substr($old, $o, $n) ne
				    substr($new, $o, $n);
			}
			$x = $q->[2] if $q->[2] > $x;
		}
	}
	return ($same, $changed);
}

($r, $d) = detect(image => $png, fields => {confidence => $c});
is(scalar @{$d->{detections}}, 1, 'one face on the PNG of messi5.jpg');
for my $method (qw(gaussian pixelate solid elliptical)) {
	for my $pad (0, 0.5) {
		$r = $f->post('/api/v1/mask', image => $png, fields => {
			confidence => $c, method => $method,
			padding => $pad, format => 'png', strength => 31});
		is($r->{status}, 200, "mask $method padding $pad: 200")
		    or diag $r->{content};
		is($r->{headers}{'x-blur-method'}, $method,
		    "mask $method: X-Blur-Method");
		like($r->{content}, $magic{png}, "mask $method: a PNG");
		my ($w2, $h2, $out) = raw_pixels($r->{content});
		is("${w2}x$h2", "${w}x$h", "mask $method: same size");
		my ($same, $changed) = compare($orig, $out,
			regions($d->{detections}, $pad));
		ok($same, "mask $method padding $pad: pixels outside the "
		    . 'padded box unchanged');
		ok($changed, "mask $method padding $pad: the face changed");
	}
}

# solid: the box itself is black.
$r = $f->post('/api/v1/mask', image => $png,
	fields => {confidence => $c, method => 'solid', format => 'png'});
my (undef, undef, $solid) = raw_pixels($r->{content});
my $bb = $d->{detections}[0]{bbox};
my ($cx, $cy) = (int(($bb->{x1} + $bb->{x2}) / 2),
	int(($bb->{y1} + $bb->{y2}) / 2));
is(substr($solid, 3 * ($cy * $w + $cx), 3), "\0\0\0",
    'solid: the centre of the face is black');

# No face: the image comes back unchanged (PNG, lossless).
my $home_png = png_of($photo{'home.jpg'}, 'jpg');
$r = $f->post('/api/v1/mask', image => $home_png,
	fields => {confidence => $c, format => 'png'});
is($r->{headers}{'x-face-count'}, 0, 'home.jpg: X-Face-Count 0');
is((raw_pixels($r->{content}))[2], (raw_pixels($home_png))[2],
    'home.jpg: no face, no pixel changed');

# Formats, quality and every mask header.
my %ctype = (jpeg => 'image/jpeg', png => 'image/png', webp => 'image/webp');
for my $fmt (qw(jpeg png webp)) {
	$r = $f->post('/api/v1/mask', image => $photo{'messi5.jpg'},
		fields => {format => $fmt, confidence => $c});
	is($r->{status}, 200, "format $fmt: 200");
	is($r->{headers}{'content-type'}, $ctype{$fmt},
	    "format $fmt: Content-Type");
	like($r->{content}, $magic{$fmt}, "format $fmt: magic bytes");
}
my %size;
for my $q (5, 100) {
	for my $fmt (qw(jpeg webp)) {
		$r = $f->post('/api/v1/mask', image => $photo{'messi5.jpg'},
			query => {format => $fmt, quality => $q});
		$size{$fmt}{$q} = length $r->{content};
	}
}
ok($size{jpeg}{5} < $size{jpeg}{100} / 2, 'jpeg quality 5 is smaller');
ok($size{webp}{5} < $size{webp}{100} / 2, 'webp quality 5 is smaller');

$r = $f->post('/api/v1/mask', image => $photo{'messi5.jpg'},
	fields => {method => 'pixelate', strength => 8});
my $hd = $r->{headers};
like($hd->{'x-request-id'}, qr/^[0-9a-f-]{36}$/, 'X-Request-Id');
is($hd->{'x-face-count'}, 1, 'X-Face-Count');
for my $k (qw(x-decode-ms x-inference-ms x-mask-ms x-encode-ms
    x-total-ms x-det-scale)) {
	like($hd->{$k}, qr/^\d+\.\d+$/, "$k is a number");
}
is($hd->{'x-image-width'}, 548, 'X-Image-Width');
is($hd->{'x-image-height'}, 342, 'X-Image-Height');
is($hd->{'x-blur-method'}, 'pixelate', 'X-Blur-Method');
is($hd->{'x-model'}, $m, 'X-Model');
ok(!exists $hd->{'x-image-id'} && !exists $hd->{'x-job-id'},
    'no X-Image-Id / X-Job-Id without storage');
ok($hd->{'x-total-ms'} >= $hd->{'x-inference-ms'}, 'X-Total-Ms covers');
$r = $f->post('/api/v1/mask', image => $photo{'messi5.jpg'},
	fields => {max_faces => 0, confidence => 0.01});
ok($r->{headers}{'x-face-count'} >= 1, 'max_faces 0 masks all');
$r = $f->post('/api/v1/mask', image => $photo{'messi5.jpg'},
	fields => {max_faces => 1, confidence => 0.01});
is($r->{headers}{'x-face-count'}, 1, 'mask max_faces 1');

# --- bad input ---
sub is_error {
	my ($r, $status, $name, $re) = @_;
	my $j = $f->json($r);
	is($r->{status}, $status, "$name: $status") or diag $r->{content};
	ok(defined $j && defined $j->{detail} && keys %$j == 1,
	    "$name: {detail}");
	like($j->{detail} // '', $re, "$name: the detail says why") if $re;
}

sub ffmpeg_png {
	my ($size) = @_;
	my ($st, $out, $err) = run(['ffmpeg', '-v', 'error', '-f', 'lavfi',
		'-i', "color=c=gray:s=$size,format=rgb24", '-frames:v', '1', '-f',
		'image2pipe', '-vcodec', 'png', '-']);
	die "ffmpeg: $err" if $st != 0;
	return $out;
}

for my $path ('/api/v1/detect', '/api/v1/mask') {
	is_error($f->post($path, image => 'this is not an image' x 10), 400,
	    "$path garbage", qr/format/);
	is_error($f->post($path, image => substr($photo{'messi5.jpg'}, 0,
	    20000)), 400, "$path truncated JPEG", qr/decode/);
	is_error($f->post($path, image => ffmpeg_png('5x5')), 400,
	    "$path 5x5", qr/5x5/);
	is_error($f->post($path, image => ffmpeg_png('10x9')), 400,
	    "$path 10x9", qr/10x9/);
	my $big = ffmpeg_png('6000x6000');
	ok(length $big < 2_000_000, 'a 36 MP PNG of ' . length($big)
	    . ' bytes');
	is_error($f->post($path, image => $big), 413,
	    "$path 36 MP", qr/pixels/);
	is_error($f->post($path, image => "\xFF\xD8\xFF" . ("x" x (25 << 20))),
	    413, "$path 25 MB", qr/larger/);
	is_error($f->post($path, fields => {confidence => 0.5}), 400,
	    "$path no image", qr/image/);
	is_error($f->post($path, image => ''), 400, "$path empty image");
	my $x = $f->http->request(POST => $f->url($path), {
		headers => {'Content-Type' => 'application/json'},
		content => '{}'});
	is_error($x, 400, "$path not multipart", qr/multipart/);
	is_error($f->req(GET => $path), 405, "GET $path");
}
# 10x10 is the smallest accepted.
($r, $d) = detect(image => ffmpeg_png('10x10'));
is($r->{status}, 200, '10x10: 200');
is($d->{image}{width}, 10, '10x10: width');

# Every range, as a form field and as a query parameter.
my @bad = (
	[confidence => [0, 0.001, 1.01, 'abc', '', '1e999', 'nan']],
	[nms_threshold => [0, 1.5, 'x']],
	[max_faces => [-1, 1.5, 'many', '']],
	[method => ['blur', 'Gaussian', '']],
	[strength => [0, 1000, 'strong', 2.5]],
	[padding => [-0.1, 2.01, 'wide']],
	[format => ['gif', 'JPEG', 'bmp']],
	[quality => [0, 101, 'best']],
);
my %mask_only = map { $_ => 1 } qw(method strength padding format quality);
for my $bad (@bad) {
	my ($name, $values) = @$bad;
	for my $v (@$values) {
		for my $how (qw(fields query)) {
			my $path = $mask_only{$name} ? '/api/v1/mask'
			    : '/api/v1/detect';
			is_error($f->post($path, image => $photo{'home.jpg'},
			    $how => {$name => $v}), 400,
			    "$name '$v' as $how", qr/^\Q$name\E must be/);
		}
	}
}
# Edges accepted.
for my $ok ([confidence => 0.01], [confidence => '1.0'],
    [nms_threshold => 1], [strength => 1], [strength => 999],
    [padding => 0], [padding => 2], [quality => 1], [quality => 100],
    [max_faces => 0]) {
	$r = $f->post('/api/v1/mask', image => $photo{'home.jpg'},
		fields => {@$ok});
	is($r->{status}, 200, "$ok->[0] $ok->[1] accepted")
	    or diag $r->{content};
}
# Mask parameters mean nothing to detect.
($r, $d) = detect(image => $photo{'home.jpg'}, fields => {method => 'x'});
is($r->{status}, 200, 'detect ignores mask parameters');
# A form field wins over the query parameter.
($r, $d) = detect(image => $photo{'home.jpg'},
	fields => {confidence => 0.7}, query => {confidence => 0.9});
is($d->{processing}{confidence_threshold}, 0.7, 'the form field wins');
($r, $d) = detect(image => $photo{'home.jpg'}, query => {nms_threshold => 0.3});
is($d->{processing}{nms_threshold}, 0.3, 'a query parameter is used');

# --- security headers on every answer ---
my %sec = (
	'x-content-type-options' => 'nosniff',
	'x-frame-options' => 'DENY',
	'referrer-policy' => 'strict-origin-when-cross-origin',
	'permissions-policy' => 'camera=(), microphone=()',
	'strict-transport-security' => 'max-age=63072000; includeSubDomains',
);
my @answers = (
	['GET /health', $f->req(GET => '/health')],
	['detect 200', $f->post('/api/v1/detect', image => $photo{'home.jpg'})],
	['mask 200', $f->post('/api/v1/mask', image => $photo{'home.jpg'})],
	['detect 400', $f->post('/api/v1/detect', image => 'junk')],
	['GET detect 405', $f->req(GET => '/api/v1/detect')],
	['unknown path 404', $f->req(GET => '/nothing/here')],
	['/health/x 404', $f->req(GET => '/api/v1/detectx')],
	['/docs', $f->req(GET => '/docs')],
	['/openapi.json', $f->req(GET => '/openapi.json')],
	['admin 501', $f->req(GET => '/api/v1/admin/stats')],
);
for my $a (@answers) {
	my ($name, $x) = @$a;
	my $all = 1;
	for my $k (sort keys %sec) {
		my $v = $x->{headers}{$k};
		$all &&= defined $v && !ref $v && $v eq $sec{$k};
	}
	ok($all, "$name ($x->{status}): the five security headers, once each")
	    or diag explain $x->{headers};
}

# --- CORS ---
$r = $f->req(GET => '/health', headers => {Origin => $ORIGIN});
is($r->{headers}{'access-control-allow-origin'}, $ORIGIN,
    'CORS: an allowed origin is echoed');
like($r->{headers}{vary} // '', qr/Origin/, 'CORS: Vary: Origin');
$r = $f->post('/api/v1/mask', image => $photo{'home.jpg'},
	headers => {Origin => 'https://other.example'});
is($r->{headers}{'access-control-allow-origin'}, 'https://other.example',
    'CORS: the second origin');
like($r->{headers}{'access-control-expose-headers'} // '',
    qr/X-Face-Count/, 'CORS: the mask headers are exposed');
$r = $f->req(GET => '/health', headers => {Origin => 'https://evil.example'});
ok(!exists $r->{headers}{'access-control-allow-origin'},
    'CORS: another origin gets no Allow-Origin');
is($r->{status}, 200, 'CORS: ... but its answer');
$r = $f->req(OPTIONS => '/api/v1/detect', headers => {Origin => $ORIGIN,
	'Access-Control-Request-Method' => 'POST',
	'Access-Control-Request-Headers' => 'X-API-Key'});
is($r->{status}, 200, 'preflight: 200');
is($r->{headers}{'access-control-allow-origin'}, $ORIGIN,
    'preflight: Allow-Origin');
like($r->{headers}{'access-control-allow-methods'} // '', qr/POST/,
    'preflight: Allow-Methods');
like($r->{headers}{'access-control-allow-headers'} // '', qr/X-API-Key/i,
    'preflight: Allow-Headers');
is($r->{headers}{'x-frame-options'}, 'DENY', 'preflight: security headers');
$r = $f->req(OPTIONS => '/api/v1/mask', headers => {
	Origin => 'https://evil.example',
	'Access-Control-Request-Method' => 'POST'});
is($r->{status}, 400, 'preflight of another origin: 400');
ok(!exists $r->{headers}{'access-control-allow-origin'},
    'preflight of another origin: no Allow-Origin');

# --- documentation ---
$r = $f->req(GET => '/docs');
is($r->{status}, 200, '/docs 200');
like($r->{headers}{'content-type'}, qr{^text/html}, '/docs is HTML');
like($r->{content}, qr{/static/swagger-ui/swagger-ui-bundle\.js},
    '/docs loads Swagger UI from this origin');
unlike($r->{content}, qr{https?://}, '/docs loads nothing from elsewhere');
$r = $f->req(GET => '/static/swagger-ui/swagger-ui-bundle.js');
is($r->{status}, 200, 'Swagger UI bundle served');
ok(length $r->{content} > 100_000, 'Swagger UI bundle is the real one');
$r = $f->req(GET => '/redoc');
is($r->{status}, 200, '/redoc 200');
like($r->{content}, qr{/static/redoc/redoc\.standalone\.js},
    '/redoc loads ReDoc from this origin');
$r = $f->req(GET => '/static/redoc/redoc.standalone.js');
is($r->{status}, 200, 'ReDoc bundle served');
$r = $f->req(GET => '/openapi.json');
my $api = $f->json($r);
is($r->{status}, 200, '/openapi.json 200');
like($api->{openapi} // '', qr/^3\./, 'an OpenAPI 3 document');
for my $path ('/health', '/api/v1/detect', '/api/v1/mask',
    '/api/v1/admin/stats', '/api/v1/admin/images',
    '/api/v1/admin/images/{image_id}',
    '/api/v1/admin/images/{image_id}/download', '/api/v1/admin/jobs',
    '/api/v1/admin/jobs/{job_id}', '/api/v1/admin/jobs/{job_id}/download',
    '/api/v1/admin/api-keys', '/api/v1/admin/api-keys/{key_id}') {
	ok($api->{paths}{$path}, "openapi: $path");
}
my $props = $api->{paths}{'/api/v1/mask'}{post}{requestBody}{content}
    {'multipart/form-data'}{schema}{properties};
is(join(',', sort keys %$props), 'confidence,format,image,max_faces,'
    . 'method,nms_threshold,padding,quality,strength',
    'openapi: every mask parameter as a form field');
my @q = map { $_->{name} } @{$api->{paths}{'/api/v1/detect'}{post}
    {parameters}};
is(join(',', sort @q), 'confidence,max_faces,nms_threshold',
    'openapi: detect parameters as query parameters');

# --- the two origins are apart ---
my $plat = HTTP::Tiny->new(timeout => 30, keep_alive => 0);
is($plat->get($f->stack->url('/health'))->{status}, 404,
    'platform port: no /health of the face service');
is($plat->post($f->stack->url('/api/v1/detect'),
    {content => 'x'})->{status}, 404, 'platform port: no detect');
is($plat->get($f->stack->url('/docs'))->{status}, 404,
    'platform port: no /docs');
is($f->req(GET => '/api/health')->{status}, 404,
    'face port: no platform /api/health');
is($f->req(GET => '/api/v1/devices')->{status}, 404,
    'face port: no platform route');

done_testing;
