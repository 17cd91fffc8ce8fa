# SPDX-License-Identifier: MIT
package Xmhub::Face;

# Helpers for the face service's end-to-end tests: a stack whose face
# service reads the test models, multipart requests to it, the sample
# photos of Debian packages, and raw pixels of PNG files (through ffmpeg).
#
#   my $f = Xmhub::Face->start(env => {FACE_API_MODEL => 'yunet'});
#   my $r = $f->post('/api/v1/detect', image => $bytes,
#           fields => {confidence => 0.5}, query => {max_faces => 1});
#   $r->{status}, $r->{headers}{'x-face-count'}, $f->json($r)
#   $f->stack                      # the Xmhub::Stack
#   $f->workers                    # pids of the stack's image workers
#   photo('messi5.jpg')            # bytes of a sample photo
#   model_names()                  # the models FACE_TEST_MODEL_DIR holds

use strict;
use warnings;
use Exporter 'import';
use File::Temp qw(tempfile);
use HTTP::Tiny;
use JSON::PP;
use Xmhub::Stack;
use Xmhub::Test qw(run);

our @EXPORT_OK = qw(photo model_names model_dir raw_pixels png_of slurp);

my %photos = (
	'messi5.jpg' => '/usr/share/doc/opencv-doc/examples/data/messi5.jpg',
	'basketball1.png' =>
	    '/usr/share/doc/opencv-doc/examples/data/basketball1.png',
	'home.jpg' => '/usr/share/doc/opencv-doc/examples/data/home.jpg',
	'grace_hopper.jpg' =>
	    '/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg',
);

# Model names and their files (any one present makes the model present),
# in the service's fallback order.
my @models = (
	[scrfd_10g => qw(scrfd_10g_bnkps.onnx det_10g_static640.onnx)],
	[scrfd_2_5g => qw(scrfd_2.5g_bnkps.onnx det_2.5g_static640.onnx)],
	[scrfd_500m => qw(scrfd_500m_bnkps.onnx det_500m_static640.onnx)],
	[yunet => qw(face_detection_yunet_2022mar.onnx)],
	[blazeface => qw(face_detection_back_256x256_barracuda.onnx)],
);

sub model_dir {
	my $d = $ENV{FACE_TEST_MODEL_DIR}
	    // "$ENV{XMHUB_SRCDIR}/../shared/models";
	return $d;
}

# The models present, best first (scrfd_2_5g is spelled scrfd_2.5g).
sub model_names {
	my $d = model_dir();
	my @have;
	for my $m (@models) {
		my ($name, @files) = @$m;
		$name =~ s/_5g$/.5g/;
		push @have, $name if grep { -f "$d/$_" } @files;
	}
	return @have;
}

sub photo {
	my ($name) = @_;
	my $path = $photos{$name} or die "no photo $name\n";
	open my $f, '<:raw', $path or die "$path: $! (apt-get install "
	    . ($name eq 'grace_hopper.jpg' ? 'python-matplotlib-data'
		: 'opencv-doc') . ")\n";
	local $/;
	return scalar <$f>;
}

sub start {
	my ($class, %opt) = @_;
	# The service's own default, storage off, unless a test turns it on
	# (the stack turns it on for ./dev up).
	my %env = (FACE_API_MODEL_DIR => model_dir(),
		FACE_API_STORAGE_ENABLED => 'false', %{$opt{env} // {}});
	my $self = bless {
		stack => Xmhub::Stack->start(env => \%env),
		http => HTTP::Tiny->new(timeout => 120, keep_alive => 0),
	}, $class;
	return $self;
}

sub stack { return $_[0]{stack} }
sub http { return $_[0]{http} }
sub url { return $_[0]{stack}->face_url($_[1]) }

# workers: the process ids of this stack's image workers (children of
# its face processes: argv[1] --face-worker, the parent started with this
# stack's env file), sorted.
sub workers {
	my ($self) = @_;
	my $env_file = $self->{stack}->env_file;
	my @pids;
	for my $dir (glob '/proc/[0-9]*') {
		my ($pid) = $dir =~ m{(\d+)$};
		my $cmd = slurp("$dir/cmdline") // next;
		next if ((split /\0/, $cmd)[1] // '') ne '--face-worker';
		my ($ppid) = (slurp("$dir/stat") // '') =~ /\)\s+\S+\s+(\d+)/
		    or next;
		my $penv = slurp("/proc/$ppid/environ") // next;
		push @pids, $pid
		    if grep { $_ eq "XMHUB_ENV_FILE=$env_file" } split /\0/, $penv;
	}
	return sort { $a <=> $b } @pids;
}

# slurp($path): the file's bytes, undef when it cannot be read.
sub slurp {
	my ($path) = @_;
	open my $fh, '<:raw', $path or return undef;
	local $/;
	return scalar <$fh>;
}

# restart(%env): the stack again with these settings changed.
sub restart {
	my ($self, %env) = @_;
	$self->{stack}->restart(env => \%env);
}

# A query string of a hash (sorted, form-encoded).
sub query {
	my ($q) = @_;
	return '' if !$q || !%$q;
	return '?' . HTTP::Tiny->www_form_urlencode($q);
}

# multipart(%opt): (body, content type) of a form with fields (hash or
# array of pairs) and the file image (bytes; filename, type optional).
sub multipart {
	my (%opt) = @_;
	my $b = 'xmhubFaceBoundary' . int(rand(1e9));
	my $body = '';
	my $f = $opt{fields} // {};
	my @pairs = ref $f eq 'HASH' ? map { ($_, $f->{$_}) } sort keys %$f
	    : @$f;
	while (my ($k, $v) = splice @pairs, 0, 2) {
		$body .= "--$b\r\nContent-Disposition: form-data; "
		    . "name=\"$k\"\r\n\r\n$v\r\n";
	}
	if (defined $opt{image}) {
		my $fn = $opt{filename} // 'photo.jpg';
		my $ct = $opt{type} // 'application/octet-stream';
		$body .= "--$b\r\nContent-Disposition: form-data; "
		    . "name=\"image\"; filename=\"$fn\"\r\n"
		    . "Content-Type: $ct\r\n\r\n$opt{image}\r\n";
	}
	$body .= "--$b--\r\n";
	return ($body, "multipart/form-data; boundary=$b");
}

# post($path, image => BYTES, fields => {...}, query => {...},
# headers => {...}): the HTTP::Tiny response.
sub post {
	my ($self, $path, %opt) = @_;
	my ($body, $ct) = multipart(%opt);
	return $self->{http}->request(POST => $self->url($path . query($opt{query})),
		{headers => {'Content-Type' => $ct, %{$opt{headers} // {}}},
		 content => $body});
}

# get($path, headers => {...}) and other methods: req(METHOD, $path, ...).
sub req {
	my ($self, $method, $path, %opt) = @_;
	my %o = (headers => $opt{headers} // {});
	if (exists $opt{json}) {
		$o{content} = encode_json($opt{json});
		$o{headers}{'Content-Type'} = 'application/json';
	}
	return $self->{http}->request($method, $self->url($path), \%o);
}

# The decoded JSON body of a response (undef when it is not JSON).
sub json {
	my ($self, $r) = @_;
	return eval { decode_json($r->{content}) };
}

# raw_pixels($png_bytes): (width, height, BGR bytes) as ffmpeg decodes
# a PNG (lossless: the same pixels as any other decoder).
sub raw_pixels {
	my ($png) = @_;
	my ($fh, $name) = tempfile(SUFFIX => '.png', UNLINK => 1);
	binmode $fh;
	print $fh $png;
	close $fh;
	my ($st, $out, $err) = run(['ffprobe', '-v', 'error', '-select_streams',
		'v:0', '-show_entries', 'stream=width,height', '-of', 'csv=p=0',
		$name]);
	die "ffprobe: $err" if $st != 0;
	my ($w, $h) = $out =~ /(\d+),(\d+)/ or die "ffprobe: $out";
	($st, $out, $err) = run(['ffmpeg', '-v', 'error', '-i', $name, '-f',
		'rawvideo', '-pix_fmt', 'bgr24', '-']);
	die "ffmpeg: $err" if $st != 0;
	return ($w, $h, $out);
}

# png_of($bytes, $ext): a photo converted to PNG by ffmpeg (for JPEG
# input, so that input and output pixels are compared losslessly).
sub png_of {
	my ($bytes, $ext) = @_;
	my ($fh, $in) = tempfile(SUFFIX => ".$ext", UNLINK => 1);
	binmode $fh;
	print $fh $bytes;
	close $fh;
	my ($st, $out, $err) = run(['ffmpeg', '-v', 'error', '-i', $in,
		'-pix_fmt', 'rgb24', '-f', 'image2pipe', '-vcodec', 'png', '-']);
	die "ffmpeg: $err" if $st != 0;
	return $out;
}

1;
