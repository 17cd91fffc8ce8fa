# SPDX-License-Identifier: MIT
package Xmhub::S3;

# A throwaway S3 server for the end-to-end tests: s3rver (npm, installed
# by `./dev deps` into $XMHUB_NPM_DIR) on 127.0.0.1, a free port, a
# temporary data directory and one bucket.  Stopped and its directory
# removed at exit, also when a test dies.
#
#   use Xmhub::S3;
#   my $s3 = Xmhub::S3->start;          # dies saying why (e.g. s3rver is
#                                       # not installed: run ./dev deps)
#   my $s = Xmhub::Stack->start(env => { $s3->env });
#                                       # the stack stores objects in S3
#   my %env = $s3->env;                 # XMHUB_S3_ENDPOINT, _BUCKET,
#                                       # _ACCESS_KEY, _SECRET_KEY, _REGION
#   $s3->endpoint                       # http://127.0.0.1:PORT
#   $s3->bucket                         # "xmhub-test"
#   $s3->url($key)                      # endpoint/bucket/key (s3rver lets
#                                       # anyone read, no signature needed)
#   $s3->stop; $s3->start_again;        # down and up on the same port/data
#
# What s3rver checks and what not (doc/storage.md): it serves PUT, GET
# with Range, HEAD, DELETE, ListObjectsV2 and presigned URLs, checks the
# access key id, dates and expiry, but NOT signatures; t/unit/sigv4.c and
# t/e2e/storage-s3.t check the signing.  It runs with
# NODE_OPTIONS=--openssl-legacy-provider: s3rver 3.7.1 encrypts
# ListObjectsV2 continuation tokens with DES, which Node's OpenSSL 3
# refuses otherwise (every paginated listing would be a 500).

use strict;
use warnings;
use File::Path qw(remove_tree);
use File::Temp qw(tempdir);
use IO::Socket::INET;
use POSIX qw(WNOHANG);
use Xmhub::Stack;

my %live; # servers to stop at exit, by data directory

# The s3rver program, or die saying how to get it.
sub program {
	my $npm = $ENV{XMHUB_NPM_DIR}
	    or die "XMHUB_NPM_DIR is not set (run via make check)\n";
	my $bin = "$npm/node_modules/.bin/s3rver";
	-x $bin or die "s3rver is not installed ($bin missing): run ./dev deps\n";
	return $bin;
}

sub start {
	my ($class, %opt) = @_;
	my $self = bless {
		bin => program(),
		dir => tempdir('xmhub-s3-XXXXXX', TMPDIR => 1),
		port => Xmhub::Stack::free_port(),
		bucket => $opt{bucket} // 'xmhub-test',
		creator => $$,
	}, $class;
	$live{$self->{dir}} = $self;
	$SIG{$_} //= sub { exit 1 } for qw(INT TERM HUP);
	$self->start_again;
	return $self;
}

# Starts s3rver (again) and waits until it takes connections.
sub start_again {
	my ($self) = @_;
	my $log = "$self->{dir}/s3rver.log";
	my $pid = fork() // die "fork: $!\n";
	if ($pid == 0) {
		open STDIN, '<', '/dev/null' or die;
		open STDOUT, '>>', $log or die "$log: $!";
		open STDERR, '>&', \*STDOUT or die;
		$ENV{NODE_OPTIONS} = '--openssl-legacy-provider';
		exec { $self->{bin} } $self->{bin}, '-d', "$self->{dir}/data",
		    '-a', '127.0.0.1', '-p', $self->{port},
		    '--configure-bucket', $self->{bucket}
		    or die "exec $self->{bin}: $!";
	}
	$self->{pid} = $pid;
	for (1 .. 300) {
		my $sock = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
			PeerPort => $self->{port}, Proto => 'tcp');
		if ($sock) {
			close $sock;
			return;
		}
		if (waitpid($pid, WNOHANG) == $pid) {
			delete $self->{pid};
			my $out = do { local (@ARGV, $/) = ($log); <> // '' };
			die "s3rver exited at start:\n$out";
		}
		select(undef, undef, undef, 0.1);
	}
	die "s3rver did not listen on port $self->{port} within 30 s\n";
}

sub env {
	my ($self) = @_;
	return (XMHUB_S3_ENDPOINT => $self->endpoint,
		XMHUB_S3_BUCKET => $self->{bucket},
		XMHUB_S3_ACCESS_KEY => 'S3RVER',
		XMHUB_S3_SECRET_KEY => 'S3RVER',
		XMHUB_S3_REGION => 'us-east-1');
}

sub endpoint { return "http://127.0.0.1:$_[0]{port}" }
sub bucket { return $_[0]{bucket} }
sub url { return $_[0]->endpoint . "/$_[0]{bucket}/$_[1]" }

# Stops the server (its data stays for start_again).
sub stop {
	my ($self) = @_;
	my $pid = delete $self->{pid} or return;
	kill 'TERM', $pid;
	waitpid($pid, 0);
}

# Stops the server and removes its directory.
sub destroy {
	my ($self) = @_;
	return if $$ != $self->{creator} || !delete $live{$self->{dir}};
	$self->stop;
	remove_tree($self->{dir});
}

END {
	my $status = $?;
	$_->destroy for values %live;
	$? = $status;
}

1;
