#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# One meaning of confidence (doc/face-models.md, "Confidence"): at the
# spec's default confidence 0.5, every model finds every face it can see on
# the held-out photos of t/data/face-photos.tsv and nothing else, through
# the face service.  The models come from FACE_TEST_MODEL_DIR; the shipped
# YuNet from models/ of the source tree, with FACE_API_MODEL unset (the
# default choice of a fresh machine).  The calibration photos are checked
# too: the knots were fitted on them, so they must hold there as well.
use strict;
use warnings;
use Test::More;
use Xmhub::Face qw(model_dir slurp);

my $src = $ENV{XMHUB_SRCDIR} // die "XMHUB_SRCDIR not set\n";
my $tsv = "$src/t/data/face-photos.tsv";

# path => {package, set, faces, profile, small}
my (%photo, @order);
open my $fh, '<', $tsv or die "$tsv: $!\n";
while (<$fh>) {
	next if /^#/ || !/\S/;
	chomp;
	my ($pkg, $path, $set, $faces, $profile, $small) = split /\t/;
	die "$tsv:$.: bad line\n" if !defined $small || $small !~ /^\d+$/;
	$photo{$path} = {package => $pkg, set => $set, faces => $faces,
		profile => $profile, small => $small};
	push @order, $path;
}
close $fh;
my @heldout = grep { $photo{$_}{set} eq 'heldout' } @order;
ok(@heldout >= 10, scalar(@heldout) . ' held-out photos');
ok((grep { $photo{$_}{faces} == 0 } @heldout) >= 5,
    'no-face photos among them');
ok((grep { $photo{$_}{faces} > 0 } @heldout) >= 3,
    'face photos among them');
for my $p (@order) {
	ok(-r $p, "$p readable") or diag "apt-get install $photo{$p}{package}";
}

# Models as the shim names them, with the files that make them present.
my @models = (
	[scrfd_10g => qw(scrfd_10g_bnkps.onnx det_10g.onnx
	    det_10g_static640.onnx)],
	['scrfd_2.5g' => qw(scrfd_2.5g_bnkps.onnx det_2.5g.onnx
	    det_2.5g_static640.onnx)],
	[scrfd_500m => qw(scrfd_500m_bnkps.onnx det_500m.onnx
	    det_500m_static640.onnx)],
	[yunet_2023mar => qw(face_detection_yunet_2023mar.onnx)],
	[yunet => qw(face_detection_yunet_2022mar.onnx)],
	[blazeface => qw(face_detection_back_256x256_barracuda.onnx)],
	[blazeface_front => qw(face_detection_front_128x128_barracuda.onnx)],
);
my $dir = model_dir();
my @runs = ({name => 'yunet', label => 'shipped yunet', dir => "$src/models",
	env => {}});
for my $m (@models) {
	my ($name, @files) = @$m;
	next if !grep { -f "$dir/$_" } @files;
	push @runs, {name => $name, label => $name, dir => $dir,
		env => {FACE_API_MODEL => $name}};
}
ok(@runs >= 5, 'the shipped YuNet and ' . (@runs - 1) . " models of $dir")
    or diag 'FACE_TEST_MODEL_DIR=/work/shared/models?';

# The faces a model must find on a photo: SCRFD all, YuNet and BlazeFace
# no profile, the short-range BlazeFace no small face either
# (doc/face-models.md); never more than there are.
sub least {
	my ($model, $p) = @_;
	my $n = $p->{faces};
	$n -= $p->{profile} if $model !~ /^scrfd/;
	$n -= $p->{small} if $model eq 'blazeface_front';
	return $n;
}

my $f;
for my $run (@runs) {
	my %env = (FACE_API_MODEL_DIR => $run->{dir}, %{$run->{env}});
	if ($f) {
		$f->restart(%env);
	} else {
		$f = Xmhub::Face->start(
			env => {%env, FACE_API_RATE_LIMIT_DETECT => '1000/second'});
	}
	my $l = $run->{label};
	my $h = $f->json($f->http->get($f->url('/health')));
	is($h->{model}, $run->{name}, "$l: /health names $run->{name}");
	ok($h->{model_loaded} && $h->{supports_landmarks},
	    "$l: loaded, with landmarks");
	for my $path (@order) {
		my $p = $photo{$path};
		my $img = slurp($path) // next;
		my $r = $f->post('/api/v1/detect', image => $img);
		my $d = $f->json($r) // {};
		my @dets = @{$d->{detections} // []};
		my $n = @dets;
		my $least = least($run->{name}, $p);
		my ($name) = $path =~ m{([^/]+)$};
		my $raw = join ' ', @{$d->{profiling}{raw_scores} // []};
		ok($r->{status} == 200 && $n >= $least && $n <= $p->{faces},
		    "$l: $p->{set} $name: $n faces ($least..$p->{faces})")
		    or diag "$r->{status} $r->{content}" x ($r->{status} != 200)
		    . "raw scores: $raw; confidences: "
		    . join ' ', map { $_->{confidence} } @dets;
		is($d->{processing}{confidence_threshold}, 0.5,
		    "$l: $name: at the default confidence 0.5")
		    if $path eq $order[0];
		# the calibration: monotone, the default 0.5 at the knot
		my @raw = @{$d->{profiling}{raw_scores} // []};
		my $mono = @raw == $n;
		for my $i (1 .. $#dets) {
			$mono &&= ($raw[$i] <= $raw[$i - 1])
			    == ($dets[$i]{confidence}
				<= $dets[$i - 1]{confidence});
		}
		ok($mono && !grep({ $_->{confidence} < 0.5 } @dets),
		    "$l: $name: confidences >= 0.5, ordered as raw scores")
		    if $n > 0;
	}
}

done_testing();
