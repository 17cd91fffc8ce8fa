#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Slow uploads hold no uploads program (httpd-conf/programs spool,
# doc/security.md "Bodies read after the credentials"): three uploads
# with a Content-Length whose clients send slowly, more than the uploads
# program's two processes, are received by lighttpd (VAR/tmp grows)
# while another facility's GET /api/v1/uploads, served by the same
# program, is answered at once; once their bodies are in, each is stored.
# Streamed to the program, each would hold a process while its client
# sends, and the GET would wait for one.
use strict;
use warnings;
use File::Find qw(find);
use HTTP::Tiny;
use IO::Select;
use IO::Socket::INET;
use JSON::PP;
use Test::More;
use Time::HiRes qw(sleep time);
use Xmhub::Platform;
use Xmhub::Test qw(read_answer);

my $p = Xmhub::Platform->start;
my $s = $p->stack;
my $json = JSON::PP->new->utf8;
my ($fa, $fb) = ($p->facility('Slow A'), $p->facility('Slow B'));
my $key = $p->api_key($p->token($p->user('facility_admin', $fa)));
my $tb = $p->token($p->user('user', $fb));
my $B = 'SlOwBoUnDaRy';
my $MiB = 1024 * 1024;

sub spooled {
	my $n = 0;
	find(sub { $n += -s $_ if -f $_ }, $s->var . '/tmp');
	return $n;
}

# The uploads: a form of one 2 MiB file, of which only the head and the
# first 64 KiB are sent for now.
my $file = 'w' x (2 * $MiB);
my $body = "--$B\r\nContent-Disposition: form-data; name=\"file\"; "
    . "filename=\"slow.wav\"\r\nContent-Type: audio/wav\r\n\r\n$file\r\n"
    . "--$B--\r\n";
my $first = 64 * 1024 + 200;
my @slow;
for (1 .. 3) {
	my $c = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
		PeerPort => $s->port) or die "connect: $!\n";
	print {$c} "POST /api/v1/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    . "Connection: close\r\nX-Api-Key: $key\r\n"
	    . "Content-Type: multipart/form-data; boundary=$B\r\n"
	    . 'Content-Length: ' . length($body) . "\r\n\r\n"
	    . substr($body, 0, $first);
	$c->flush;
	push @slow, $c;
}
my $t = time + 10;
sleep 0.05 while spooled() < 3 * 64 * 1024 && time < $t;
cmp_ok(spooled(), '>=', 3 * 64 * 1024,
    'three slow uploads are being received by lighttpd (' . spooled()
    . ' bytes in VAR/tmp)');

# The uploads program serves another facility meanwhile.
my $t0 = time;
my $res = HTTP::Tiny->new(timeout => 10)->request(GET =>
    $s->url('/api/v1/uploads'), {headers => {Authorization => "Bearer $tb"}});
my $took = time - $t0;
is($res->{status}, 200, "another facility's upload list while they send")
    or diag $res->{content};
cmp_ok($took, '<', 5, sprintf('answered at once (%.2f s)', $took));
ok(!grep({ IO::Select->new($_)->can_read(0) } @slow),
    'the slow uploads are still open, unanswered');

# Their bodies arrive: each is stored whole.
print {$_} substr($body, $first) for @slow;
for my $i (0 .. $#slow) {
	my ($st, undef, $b) = read_answer($slow[$i], IO::Select->new($slow[$i]));
	is($st, 200, "slow upload $i: stored") or diag $b;
	is((eval { $json->decode($b // '') } // {})->{original_size_bytes},
	    length $file, "slow upload $i: the whole file");
}
is(spooled(), 0, 'the spool files are gone');

done_testing();
