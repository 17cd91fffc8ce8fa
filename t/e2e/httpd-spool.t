#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Bodies read after the credentials (doc/security.md), on a real stack
# through lighttpd: a chunked body, which lighttpd spools whole before
# its program runs, is refused on an absent, unknown or under-scoped key
# with the programs' own JSON 401/403 while lighttpd's spool folder
# (VAR/tmp, server.upload-dirs) stays empty; a chunked body with another
# method is cut at 64 KiB; an authenticated chunked upload still works;
# the face service's mask-video and detect the same with its own keys.
use strict;
use warnings;
use File::Find;
use IO::Select;
use IO::Socket::INET;
use JSON::PP;
use MIME::Base64 qw(encode_base64);
use Test::More;
use Time::HiRes qw(sleep time);
use Xmhub::Face;
use Xmhub::Platform;
use Xmhub::Test qw(read_answer);

my $pw = 'admin-pw-' . $$;
my $p = Xmhub::Platform->start(env => {
	FACE_API_MODEL_DIR => Xmhub::Face::model_dir(),
	FACE_API_STORAGE_ENABLED => 'true',
	FACE_API_API_KEY_ENABLED => 'true',
	FACE_API_ADMIN_PASSWORD => $pw,
	XMHUB_SPOOL_MAX => 1,
	XMHUB_MAX_UPLOAD_BYTES => 32 * 1024 * 1024,
});
my $s = $p->stack;
my $var = $s->var;
my $json = JSON::PP->new->utf8;
my $KiB = 1024;
my $MiB = 1024 * $KiB;
my $B = 'BoUnDaRy';

# Bytes of the files lighttpd spools request bodies to.
sub spooled {
	my $n = 0;
	find(sub { $n += -s $_ if -f $_ }, "$var/tmp");
	return $n;
}

# The head of a form request, chunked or of $length bytes, and the
# form's first part's.
sub head {
	my ($method, $path, $h, $length) = @_;
	my $framing = defined $length ? "Content-Length: $length"
	    : 'Transfer-Encoding: chunked';
	return "$method $path HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    . "Connection: close\r\n$framing\r\n"
	    . "Content-Type: multipart/form-data; boundary=$B\r\n"
	    . join('', map { "$_: $h->{$_}\r\n" } sort keys %$h) . "\r\n";
}
my $FORM_HEAD = "--$B\r\nContent-Disposition: form-data; name=\"file\"; "
    . "filename=\"a.wav\"\r\n\r\n";
my $PIECE = 256 * $KiB;

# chunked($port, $method, $path, \%headers, $bytes[, $length]): sends a
# chunked body of up to $bytes (a form's head first) as fast as the
# server takes it, sampling VAR/tmp after each piece, until the server
# answers or closes; with $length, the same body unframed after
# Content-Length: $length (the form's head and $bytes in whole pieces).
# Returns a hash: status, detail, sent (body bytes), spooled (the most
# seen in VAR/tmp).
sub chunked {
	my ($port, $method, $path, $h, $bytes, $length) = @_;
	my $c = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
		PeerPort => $port) or die "connect: $!\n";
	local $SIG{PIPE} = 'IGNORE';
	my $sel = IO::Select->new($c);
	my %r = (sent => 0, spooled => 0);
	defined syswrite($c, head($method, $path, $h, $length))
	    or die "write: $!\n";
	$c->blocking(0);
	my $piece = $FORM_HEAD . ('x' x $PIECE);
	my ($pending, $ended) = ('', 0);
	my $end = time + 30;
	while (time < $end && !$sel->can_read(0)) {
		if ($pending eq '') {
			last if $ended;
			if ($r{sent} >= $bytes) {
				# The last chunk: an accepted body ends.
				($pending, $ended) = (defined $length ? ''
				    : "0\r\n\r\n", 1);
			} elsif (defined $length) {
				$pending = $piece;
			} else {
				$pending = sprintf("%x\r\n%s\r\n",
				    length $piece, $piece);
			}
			$piece = 'x' x $PIECE;
		}
		next unless $sel->can_write(0.05);
		my $w = syswrite($c, $pending);
		if (!defined $w) {
			next if $!{EAGAIN};
			last; # closed under us
		}
		$r{sent} += $w;
		substr($pending, 0, $w) = '';
		my $n = spooled();
		$r{spooled} = $n if $n > $r{spooled};
	}
	my ($status, $hd, $body) = read_answer($c, $sel);
	my $b = eval { $json->decode($body // '') };
	@r{qw(status headers detail)} =
	    ($status, $hd, ref $b eq 'HASH' ? $b->{detail} : undef);
	return \%r;
}

# refused($label, $want, $detail_re, $port, $method, $path, \%headers
# [, 'length' [, $pieces]]): a body of 64 MiB (or $pieces of 256 KiB),
# chunked or with its Content-Length, refused with $want and a JSON
# detail, nothing of it spooled.
sub refused {
	my ($label, $want, $re, $port, $method, $path, $h, $framing, $n) =
	    @_;
	my $len = length($FORM_HEAD) + ($n // 256) * $PIECE;
	my $r = chunked($port, $method, $path, $h, $len,
	    ($framing // '') eq 'length' ? $len : undef);
	is($r->{status}, $want, "$label: $want") or diag explain $r;
	like($r->{detail} // '', $re, "$label: the program's detail");
	cmp_ok($r->{spooled}, '<', 64 * $KiB,
	    "$label: nothing spooled (peak $r->{spooled} bytes in VAR/tmp, "
	    . "$r->{sent} bytes sent)");
	return $r;
}

my $fac = $p->facility('Spool');
my $ta = $p->token($p->user('facility_admin', $fac));
my $key = $p->api_key($ta);
my $ingest_key = $p->api_key($ta, 'ingest');

# --- the platform's uploads ---
my $port = $s->port;
refused('upload without a key', 401, qr/X-Api-Key/, $port, POST =>
    '/api/v1/uploads', {});
refused('upload with an unknown key', 401, qr/key/, $port, POST =>
    '/api/v1/uploads', {'X-Api-Key' => 'xmh_' . ('A' x 40)});
refused('upload with a key without the upload scope', 403, qr/scope/,
    $port, POST => '/api/v1/uploads', {'X-Api-Key' => $ingest_key});
refused('retranscode without a token', 401, qr/token|Authorization/i,
    $port, POST => '/api/v1/uploads/00000000-0000-4000-8000-000000000000'
    . '/retranscode', {});
# Every upload is spooled (httpd-conf/programs spool): one with a
# Content-Length goes through the same checks before a byte is read.
refused('a Content-Length upload without a key', 401, qr/X-Api-Key/, $port,
    POST => '/api/v1/uploads', {}, 'length');
refused('a Content-Length upload with an unknown key', 401, qr/key/, $port,
    POST => '/api/v1/uploads', {'X-Api-Key' => 'xmh_' . ('A' x 40)},
    'length');
refused('a Content-Length upload past XMHUB_MAX_UPLOAD_BYTES', 413,
    qr/larger than 33554432 bytes/, $port, POST => '/api/v1/uploads',
    {'X-Api-Key' => $key}, 'length');
my $full = $p->facility('Spool full');
my $full_key = $p->api_key($p->token($p->user('facility_admin', $full)));
my ($qst) = $p->req(PATCH => "/api/v1/facilities/$full/storage",
    token => $p->token($p->user('super_admin', undef)),
    json => {quota_bytes => $MiB});
is($qst, 200, 'a facility with a 1 MiB quota');
refused('a Content-Length upload past the quota', 413,
    qr/storage quota is used up: 1048576 bytes are left/, $port,
    POST => '/api/v1/uploads', {'X-Api-Key' => $full_key}, 'length', 64);
my $r = chunked($port, PATCH => '/api/v1/uploads/00000000-0000-4000-8000-'
    . '000000000000', {}, 4 * $MiB);
is($r->{status}, 413, 'a chunked PATCH body past 64 KiB: 413')
    or diag explain $r;
cmp_ok($r->{spooled}, '<=', 64 * $KiB, 'a chunked PATCH body: not spooled');

# An authenticated chunked upload is spooled, then stored.
$r = chunked($port, POST => '/api/v1/uploads', {'X-Api-Key' => $key},
    $MiB);
is($r->{status}, 400, 'an authenticated chunked upload reaches the program')
    or diag explain $r;
like($r->{detail} // '', qr/multipart|boundary|body/,
    'the program read the (unfinished) form');
my $body = "--$B\r\nContent-Disposition: form-data; name=\"file\"; "
    . "filename=\"a.wav\"\r\nContent-Type: audio/wav\r\n\r\n"
    . ('y' x (3 * $MiB)) . "\r\n--$B--\r\n";
my $at = 0;
my $res = $p->{http}->request(POST => $s->url('/api/v1/uploads'), {
	headers => {'X-Api-Key' => $key,
		'Content-Type' => "multipart/form-data; boundary=$B"},
	content => sub {
		return undef if $at >= length $body;
		$at += 65536;
		return substr($body, $at - 65536, 65536);
	}});
is($res->{status}, 200, 'an authenticated chunked upload: 200')
    or diag $res->{content};
is(($json->decode($res->{content}) // {})->{original_size_bytes},
    3 * $MiB, 'the whole file stored');
is(spooled(), 0, 'the spool file is gone');

# --- the cap on chunked bodies being spooled (XMHUB_SPOOL_MAX 1) ---
my $hold = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port)
    or die "connect: $!\n";
my $part = $FORM_HEAD . ('z' x $MiB);
print {$hold} head(POST => '/api/v1/uploads', {'X-Api-Key' => $key})
    . sprintf("%x\r\n%s\r\n", length $part, $part);
my $t = time + 10;
sleep 0.05 while spooled() < $MiB && time < $t;
my $held = spooled();
cmp_ok($held, '>=', $MiB, 'a chunked upload being spooled');
$r = chunked($port, POST => '/api/v1/uploads', {'X-Api-Key' => $key},
    16 * $MiB);
is($r->{status}, 503, 'one more chunked upload meanwhile: 503')
    or diag explain $r;
like($r->{detail} // '', qr/XMHUB_SPOOL_MAX/, 'the detail names the cap');
is($r->{headers}{'retry-after'}, 5, 'with Retry-After');
cmp_ok($r->{spooled} - $held, '<', 64 * $KiB, 'and nothing of it spooled');
print {$hold} "0\r\n\r\n";
my ($hst) = read_answer($hold, IO::Select->new($hold));
is($hst, 400, 'the first one ends (an unfinished form)');
$r = chunked($port, POST => '/api/v1/uploads', {'X-Api-Key' => $key},
    $MiB);
is($r->{status}, 400, 'its slot was given back: the next one is read')
    or diag explain $r;

# A body with a Content-Length takes a slot as well.
$hold = IO::Socket::INET->new(PeerAddr => '127.0.0.1', PeerPort => $port)
    or die "connect: $!\n";
my $len = length($part) + $MiB;
print {$hold} head(POST => '/api/v1/uploads', {'X-Api-Key' => $key}, $len)
    . $part;
$t = time + 10;
sleep 0.05 while spooled() < $MiB && time < $t;
$held = spooled();
cmp_ok($held, '>=', $MiB, 'a Content-Length upload being spooled');
$len = length($FORM_HEAD) + 64 * $PIECE;
$r = chunked($port, POST => '/api/v1/uploads', {'X-Api-Key' => $key}, $len,
    $len);
is($r->{status}, 503, 'one more Content-Length upload meanwhile: 503')
    or diag explain $r;
like($r->{detail} // '', qr/^too many request bodies are being received .*XMHUB_SPOOL_MAX\); retry shortly$/,
    'the detail names the cap, not a Content-Length');
is($r->{headers}{'retry-after'}, 5, 'with Retry-After');
cmp_ok($r->{spooled} - $held, '<', 64 * $KiB, 'and nothing of it spooled');
print {$hold} 'z' x $MiB;
($hst) = read_answer($hold, IO::Select->new($hold));
is($hst, 400, 'the first one ends (an unfinished form)');

# --- the face service: its own keys ---
my $fport = $s->face_port;
refused('mask-video without a key', 401, qr/API key/, $fport, POST =>
    '/api/v1/mask-video', {});
refused('mask-video with an unknown key', 401, qr/invalid API key/, $fport,
    POST => '/api/v1/mask-video', {'X-API-Key' => 'face_nope'});
refused('detect without a key', 401, qr/API key/, $fport, POST =>
    '/api/v1/detect', {});
my $admin = {Authorization => 'Basic ' . encode_base64("admin:$pw", ''),
	'Content-Type' => 'application/json'};
$res = $p->{http}->request(POST => $s->face_url('/api/v1/admin/api-keys'),
    {headers => $admin, content => '{"name":"spool"}'});
is($res->{status}, 201, 'a face key') or diag $res->{content};
my $fkey = ($json->decode($res->{content}) // {})->{key} // '';
$r = chunked($fport, POST => '/api/v1/mask-video', {'X-API-Key' => $fkey},
    $MiB);
isnt($r->{status}, 401, "a face key's chunked video reaches the program "
    . "($r->{status}: " . ($r->{detail} // '') . ')');
$res = $p->{http}->request(GET => $s->face_url('/api/v1/admin/api-keys'),
    {headers => $admin});
my ($k) = grep { $_->{key} eq $fkey }
    @{($json->decode($res->{content}) // {})->{items} // []};
is($k->{request_count}, 1, 'the use is counted once (the authorizer '
    . 'does not count)');

done_testing();
