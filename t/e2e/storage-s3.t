#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# lib/store/storage end to end: the same suite (t/e2e/storage-drv.c) against the
# filesystem and against a real S3 server (s3rver, Xmhub::S3), presigned
# URLs fetched over HTTP, store_check with the server stopped, and the
# SigV4 Authorization header libcurl sends recomputed here from the
# captured request (s3rver does not verify signatures).
use strict;
use warnings;
use Test::More;
use HTTP::Tiny;
use Digest::SHA qw(sha256_hex hmac_sha256 hmac_sha256_hex);
use File::Temp qw(tempdir);
use IO::Socket::INET;
use POSIX ();
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::S3;
use Xmhub::Test qw(run);

my $drv = "$ENV{XMHUB_BUILDDIR}/t/e2e/storage-drv";
-x $drv or die "$drv is not built (run via make check)\n";
my $s3 = Xmhub::S3->start;
my $http = HTTP::Tiny->new(timeout => 20);
my $fsdir = tempdir('xmhub-drv-XXXXXX', TMPDIR => 1, CLEANUP => 1);

# Small pages, so delete_prefix must follow continuation tokens.
my %s3env = ($s3->env, XMHUB_S3_PAGE_KEYS => 5);
my %fsenv = (XMHUB_STORAGE_DIR => $fsdir, XMHUB_S3_PAGE_KEYS => 5);

# drv(\%env, @args): the driver with exactly these XMHUB_ settings.
sub drv {
	my ($env, @args) = @_;
	local %ENV = %ENV;
	delete $ENV{$_} for grep { /^XMHUB_(S3_|STORAGE_DIR)/ } keys %ENV;
	$ENV{$_} = $env->{$_} for keys %$env;
	return run([$drv, @args]);
}

# The driver's TAP lines become assertions of this test.
for my $c (['filesystem', \%fsenv], ['S3', \%s3env]) {
	my ($name, $env) = @$c;
	my ($st, $out, $err) = drv($env, 'suite');
	my ($plan, $n) = (0, 0);
	for (split /\n/, $out) {
		if (/^(not )?ok \d+ - (.*)$/) {
			ok(!defined $1, "$name: $2");
			$n++;
		} elsif (/^1\.\.(\d+)$/) {
			$plan = $1;
		} elsif (/^# (.*)/) {
			diag("$name: $1");
		}
	}
	is($st, 0, "$name: driver exit status") or diag($err);
	ok($n > 30 && $n == $plan, "$name: every assertion ran ($n)");
}

# Presigned GET: fetched over plain HTTP by someone without the keys.
my ($st, $url) = drv(\%s3env, 'presign', 'f/uploads/u/original',
	"presigned bytes \x{1}\x{2}");
chomp $url;
is($st, 0, 'presign: URL made');
like($url, qr{^\Q${\ $s3->endpoint}\E/xmhub-test/f/uploads/u/original\?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=S3RVER%2F\d{8}%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=\d{8}T\d{6}Z&X-Amz-Expires=300&X-Amz-SignedHeaders=host&X-Amz-Signature=[0-9a-f]{64}$},
	'presign: path-style URL with the X-Amz-* query');
my $r = $http->get($url);
is($r->{status}, 200, 'presigned GET: 200');
is($r->{content}, "presigned bytes \x{1}\x{2}", 'presigned GET: the object');
(my $bad = $url) =~ s/Credential=S3RVER/Credential=NOBODY/;
is($http->get($bad)->{status}, 403, 'presigned GET: another key id is 403');
(my $old = $url) =~ s/X-Amz-Date=(\d{4})/'X-Amz-Date=' . ($1 - 1)/e;
is($http->get($old)->{status}, 403, 'presigned GET: expired is 403');
($st) = drv(\%fsenv, 'presign', 'f/x', 'x');
is($st, 1, 'presign: none on the filesystem');

# Readiness against S3: a missing bucket, the server stopped, back.
($st) = drv(\%s3env, 'check');
is($st, 0, 'check passes against s3rver');
my $err;
($st, undef, $err) = drv({%s3env, XMHUB_S3_BUCKET => 'no-such-bucket'},
	'check');
is($st, 1, 'check fails without the bucket');
like($err, qr/takes no write: S3 answered 404/, 'detail names the 404');
$s3->stop;
($st, undef, $err) = drv(\%s3env, 'check');
is($st, 1, 'check fails with s3rver stopped');
like($err, qr/object store takes no write: S3 request failed/,
	'detail says the request failed');
$s3->start_again;
($st) = drv(\%s3env, 'check');
is($st, 0, 'check passes with s3rver back');

# --- The Authorization header, recomputed from the captured request ---

# capture([status, body], @driver_args): runs the driver against an HTTP
# listener answering one request; (request hash, driver status).  With
# [[status, body], ...] it answers one request per reply, and the third
# value lists every request.
sub capture {
	my ($reply, @args) = @_;
	my @replies = ref $reply->[0] ? @$reply : ($reply);
	my $srv = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
		LocalPort => 0, Proto => 'tcp', Listen => 5, ReuseAddr => 1)
	    or die "listen: $!";
	my $port = $srv->sockport;
	my $pid = fork() // die "fork: $!";
	if ($pid == 0) {
		my ($st, undef, $e) = drv({%s3env,
			XMHUB_S3_ENDPOINT => "http://127.0.0.1:$port",
			XMHUB_S3_SECRET_KEY => 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'},
			@args);
		print STDERR $e if $st > 1;
		POSIX::_exit($st);
	}
	my @reqs;
	for my $rep (@replies) {
		my $c = $srv->accept or die "accept: $!";
		my %req = (headers => {});
		my $line = <$c>;
		$line =~ s/\r?\n$//;
		@req{qw(method target)} = split / /, $line;
		while (defined($line = <$c>)) {
			$line =~ s/\r?\n$//;
			last if $line eq '';
			my ($k, $v) = split /:\s*/, $line, 2;
			$req{headers}{lc $k} = $v =~ s/\s+$//r;
		}
		print $c "HTTP/1.1 100 Continue\r\n\r\n"
		    if lc($req{headers}{expect} // '') eq '100-continue';
		my $len = $req{headers}{'content-length'} // 0;
		$req{body} = '';
		read($c, $req{body}, $len - length $req{body},
			length $req{body})
		    while length $req{body} < $len;
		print $c "HTTP/1.1 $rep->[0] X\r\nContent-Length: "
		    . length($rep->[1])
		    . "\r\nConnection: close\r\n\r\n$rep->[1]";
		close $c;
		push @reqs, \%req;
	}
	waitpid($pid, 0);
	return ($reqs[0], $? >> 8, \@reqs);
}

# A key as a URL path: each segment RFC 3986 encoded.
sub enc_path { join '/', map { enc($_) } split m{/}, $_[0] }

# RFC 3986 encoding as SigV4 wants it.
sub enc {
	my ($s) = @_;
	$s =~ s/([^A-Za-z0-9\-._~])/sprintf('%%%02X', ord $1)/ge;
	return $s;
}

# The signature AWS computes for %req (the query canonicalized as S3
# does: decoded, re-encoded, sorted), and the signature sent.
sub signatures {
	my ($req, $secret) = @_;
	my $auth = $req->{headers}{authorization} // '';
	my ($ak, $date, $region, $service) =
	    $auth =~ m{Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request};
	my ($signed) = $auth =~ /SignedHeaders=([^,\s]+)/;
	my ($sig) = $auth =~ /Signature=([0-9a-f]{64})/;
	return ('', 'no Authorization header') unless defined $sig;
	my ($path, $query) = split /\?/, $req->{target}, 2;
	my @q = map {
		my ($k, $v) = split /=/, $_, 2;
		$v //= '';
		s/%([0-9A-Fa-f]{2})/chr hex $1/ge for $k, $v;
		[enc($k), enc($v)];
	} grep { length } split /&/, $query // '';
	my $cq = join '&', map { "$_->[0]=$_->[1]" }
	    sort { $a->[0] cmp $b->[0] || $a->[1] cmp $b->[1] } @q;
	my @names = split /;/, $signed;
	my $canon = join "\n", $req->{method}, $path, $cq,
	    (map { "$_:" . ($req->{headers}{$_} // '') } @names), '',
	    $signed, $req->{headers}{'x-amz-content-sha256'} // '';
	my $sts = join "\n", 'AWS4-HMAC-SHA256', $req->{headers}{'x-amz-date'},
	    "$date/$region/$service/aws4_request", sha256_hex($canon);
	my $k = hmac_sha256($date, "AWS4$secret");
	$k = hmac_sha256($_, $k) for $region, $service, 'aws4_request';
	return (hmac_sha256_hex($sts, $k), $sig);
}

my $secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
my ($req, $dst) = capture([200, ''], 'presign', 'f/sig/obj.txt',
	'signed body');
is($dst, 0, 'PUT through the capturing listener');
is($req->{method}, 'PUT', 'captured a PUT');
is($req->{target}, '/xmhub-test/f/sig/obj.txt', 'path-style target');
is($req->{body}, 'signed body', 'body sent with its length');
is($req->{headers}{'x-amz-content-sha256'}, sha256_hex('signed body'),
	'x-amz-content-sha256 is the body\'s SHA-256');
like($req->{headers}{authorization} // '',
	qr/SignedHeaders=[^,]*content-type;host;x-amz-content-sha256;x-amz-date/,
	'content type, host, payload hash and date are signed');
my ($want, $got) = signatures($req, $secret);
is($got, $want, 'PUT: the signature AWS would compute');

($req, $dst) = capture([404, ''], 'size', 'f/sig/none');
is($req->{method}, 'HEAD', 'size is a HEAD');
($want, $got) = signatures($req, $secret);
is($got, $want, 'HEAD: the signature AWS would compute');

my $list = '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult>'
    . '<IsTruncated>false</IsTruncated></ListBucketResult>';
($req, $dst) = capture([200, $list], 'delete-prefix', 'f/sig-dir/');
is($dst, 0, 'delete_prefix through the capturing listener');
is($req->{target},
	'/xmhub-test?encoding-type=url&list-type=2&max-keys=5&prefix=f%2Fsig-dir%2F',
	'listing query sorted and encoded');
($want, $got) = signatures($req, $secret);
is($got, $want, 'ListObjectsV2: the signature AWS would compute');

# encoding-type=url answered (as AWS does): the keys are %-encoded, '+'
# is a space, and an XML reference inside stays the key's own text.
$list = '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult>'
    . '<EncodingType>url</EncodingType><IsTruncated>false</IsTruncated>'
    . '<Contents><Key>f%2Fsig-dir%2Fit%27s+a%26%2339%3B%2B1</Key></Contents>'
    . '</ListBucketResult>';
my $reqs;
($req, $dst, $reqs) = capture([[200, $list], [204, '']], 'delete-prefix',
	'f/sig-dir/');
is($dst, 0, 'delete_prefix of a URL-encoded listing');
is($reqs->[1]{method} . ' ' . $reqs->[1]{target},
	'DELETE /xmhub-test/f/sig-dir/it%27s%20a%26%2339%3B%2B1',
	"the key decoded: it's a&#39;+1");
$list =~ s/%27s/%00s/;
($req, $dst) = capture([200, $list], 'delete-prefix', 'f/sig-dir/');
is($dst, 1, 'an escaped NUL in a listed key is refused');

# s3rver ignores encoding-type and writes quotes as numeric references
# (&#x27;): keys holding them, '&', '+' and a literal "&#38;" are
# deleted under their own names.
my @odd = ("drv/odd/it's", 'drv/odd/a&#38;b', 'drv/odd/1+1 "q"',
	'drv/odd/<x>');
for my $k (@odd) {
	my $r = $http->put($s3->url(enc_path($k)), {content => "x"});
	ok($r->{success}, "s3rver holds $k") or diag $r->{content};
}
($st, undef, $err) = drv(\%s3env, 'delete-prefix', 'drv/odd/');
is($st, 0, 'delete_prefix over the odd keys') or diag $err;
for my $k (@odd) {
	is($http->get($s3->url(enc_path($k)))->{status}, 404,
		"$k deleted");
}

done_testing();
