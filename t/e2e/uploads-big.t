#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# A 1 GiB upload end to end (doc/uploads.md "Limits"): the body is generated on
# the fly and streamed by this client (never held whole here either),
# lighttpd spools it (httpd-conf/programs spool), then hands it to
# cgi-bin/uploads, which writes it to the object store piece by piece.  The FastCGI processes' peak resident memory
# (VmHWM) must stay under 32 MB, and the stored original must have the
# size and SHA-256 of what was sent.
use strict;
use warnings;
use Digest::SHA;
use HTTP::Tiny;
use JSON::PP;
use Test::More;
use Xmhub::Platform;

my $SIZE = 1 << 30;     # bytes of the file
my $PIECE = 1 << 20;    # bytes generated at a time
my $LIMIT_KB = 32 * 1024;

my $p = Xmhub::Platform->start;
my $stack = $p->stack;
# The runner would spend minutes of CPU on 1 GiB of noise.
ok($stack->stop_daemon('transcode'), 'the transcode runner is stopped');
my $fac = $p->facility('Big');
my (undef, $k) = $p->req(POST => '/api/v1/api-keys',
	token => $p->token($p->user('facility_admin', $fac)),
	json => {name => 'big'});

# A field of /proc/PID/status ("VmHWM" in kB, "PPid").
sub status_of {
	my ($pid, $field) = @_;
	open my $f, '<', "/proc/$pid/status" or return undef;
	while (my $line = <$f>) {
		return $1 if $line =~ /^\Q$field\E:\s+(\d+)/;
	}
	return undef;
}

# The cgi-bin/uploads processes this stack's lighttpd runs.
my $prog = "$ENV{XMHUB_BUILDDIR}/cgi-bin/uploads";
my $lighttpd = do {
	open my $f, '<', $stack->var . '/run/lighttpd.pid' or die "pid: $!";
	<$f> =~ /(\d+)/ ? $1 : die "no lighttpd pid\n";
};
sub uploads_pids {
	my @pids;
	for my $dir (glob '/proc/[0-9]*') {
		my ($pid) = $dir =~ m{(\d+)$};
		open my $f, '<', "$dir/cmdline" or next;
		my $argv0 = (split /\0/, <$f> // '')[0] // '';
		push @pids, $pid if $argv0 eq $prog
		    && (status_of($pid, 'PPid') // 0) == $lighttpd;
	}
	return @pids;
}

my @pids = uploads_pids();
ok(@pids > 0, 'lighttpd runs cgi-bin/uploads') or diag "no $prog";

# The body: a form with one file part of $SIZE bytes, made of a random
# MiB that every piece varies by its number, hashed as it goes.
my $B = 'big-upload-boundary';
my $head = "--$B\r\nContent-Disposition: form-data; name=\"file\"; "
    . "filename=\"big.wav\"\r\nContent-Type: audio/wav\r\n\r\n";
my $tail = "\r\n--$B--\r\n";
my $block = join '', map { pack 'N', int rand 2**32 } 1 .. $PIECE / 4;
my $sha = Digest::SHA->new(256);
my ($sent, $n, $done) = (0, 0, 0);
my $body = sub {
	return $head if $n++ == 0;
	return undef if $done;
	if ($sent == $SIZE) {
		$done = 1;
		return $tail;
	}
	my $piece = $block;
	substr($piece, ($n * 7919) % ($PIECE - 8), 8) = pack 'Q>', $n;
	$sha->add($piece);
	$sent += length $piece;
	return $piece;
};
my $res = HTTP::Tiny->new(timeout => 600, keep_alive => 0)->request(
	POST => $stack->url('/api/v1/uploads'), {
	headers => {
		'X-Api-Key' => $k->{key},
		'Content-Type' => "multipart/form-data; boundary=$B",
		'Content-Length' => length($head) + $SIZE + length($tail),
	},
	content => $body});
is($res->{status}, 200, '1 GiB upload: 200')
    or diag substr($res->{content} // '', 0, 500);
is($sent, $SIZE, 'the whole file was sent');
my $u = eval { JSON::PP->new->decode($res->{content}) } // {};
is($u->{original_size_bytes}, $SIZE, 'original_size_bytes is 1 GiB');

my $path = $stack->var . "/objects/$fac/uploads/" . ($u->{id} // 'none')
    . '/original';
is(-s $path, $SIZE, 'the stored original has the size sent');
my $stored = Digest::SHA->new(256);
$stored->addfile($path) if -e $path;
is($stored->hexdigest, $sha->hexdigest,
    'the stored original has the SHA-256 sent');

# Every uploads process, the one that took the upload among them.
my $peak = 0;
for my $pid (uploads_pids()) {
	my $hwm = status_of($pid, 'VmHWM') // next;
	$peak = $hwm if $hwm > $peak;
	note("cgi-bin/uploads pid $pid: VmHWM $hwm kB");
}
ok($peak > 0, 'the peak memory of the uploads processes was read');
cmp_ok($peak, '<', $LIMIT_KB,
    "peak resident memory of cgi-bin/uploads under 32 MB ($peak kB)");

done_testing();
