# SPDX-License-Identifier: MIT
package Xmhub::Webhook;

# A webhook receiver for the alarm tests (doc/alarms.md "Webhooks"): an
# HTTP/1.1 server on 127.0.0.1 in a child process that records every
# POST it reads, checks its signature with the secret of its path, and
# answers 200 (or holds the answer while a hold file exists: the test
# kills the sender meanwhile).
#
#   my $w = Xmhub::Webhook->new(secrets => {'/a' => 'secret...'});
#   $w->start;                  # listens on $w->port
#   my @r = $w->requests;       # [{path, key, valid, ts, body, at}], in order
#   $w->hold(1); $w->hold(0);   # hold the next answers, or not
#   $w->stop;                   # connection refused until start again
#
# Core modules only.

use strict;
use warnings;
use Digest::SHA qw(hmac_sha256_hex);
use File::Temp qw(tempdir);
use IO::Socket::INET;
use JSON::PP;
use POSIX ();
use Time::HiRes qw(sleep time);
use Xmhub::Stack;

my $json = JSON::PP->new->utf8->canonical;

sub new {
	my ($class, %opt) = @_;
	my $dir = tempdir(CLEANUP => 1);
	return bless {secrets => $opt{secrets}, dir => $dir,
		port => Xmhub::Stack::free_port()}, $class;
}

sub port { return $_[0]{port} }
sub url { return "http://127.0.0.1:$_[0]{port}$_[1]" }

# Records one request: its path, Idempotency-Key, whether the signature
# is the HMAC-SHA256 of "TIMESTAMP." and the body with the path's
# secret, its timestamp and body, and when it was read (at, epoch
# seconds with a fraction).
sub record {
	my ($self, $path, $h, $body) = @_;
	my $secret = $self->{secrets}{$path} // '';
	my $ts = $h->{'x-xmhub-timestamp'} // '';
	my $want = 'sha256=' . hmac_sha256_hex("$ts.$body", $secret);
	my $rec = {path => $path, key => $h->{'idempotency-key'} // '',
		valid => ($h->{'x-xmhub-signature'} // '') eq $want ? 1 : 0,
		ts => $ts, body => $body, at => time};
	open my $f, '>>', "$self->{dir}/log" or die "log: $!";
	print $f $json->encode($rec), "\n";
	close $f;
}

# One connection: one request, recorded, then the answer.
sub serve {
	my ($self, $c) = @_;
	local $/ = "\r\n";
	my $line = <$c> // return;
	my ($path) = $line =~ m{^POST (\S+) HTTP/1\.[01]\r\n$} or return;
	my %h;
	while (defined(my $l = <$c>)) {
		last if $l eq "\r\n";
		$h{lc $1} = $2 if $l =~ /^([^:]+):\s*(.*?)\r\n$/;
	}
	my $body = '';
	read($c, $body, $h{'content-length'} // 0);
	$self->record($path, \%h, $body);
	sleep 0.05 while -e "$self->{dir}/hold";
	print $c "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
	    . "Connection: close\r\n\r\n";
}

sub start {
	my ($self) = @_;
	my $l = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
		LocalPort => $self->{port}, Proto => 'tcp', Listen => 16,
		ReuseAddr => 1) or die "webhook listen: $!\n";
	my $pid = fork() // die "fork: $!\n";
	if ($pid == 0) {
		$SIG{PIPE} = 'IGNORE';
		while (my $c = $l->accept) {
			$self->serve($c);
			close $c;
		}
		POSIX::_exit(0);
	}
	close $l;
	$self->{pid} = $pid;
}

sub stop {
	my ($self) = @_;
	return unless $self->{pid};
	# From DESTROY after the test's END: keep its exit status.
	local $?;
	kill 'KILL', $self->{pid};
	waitpid($self->{pid}, 0);
	delete $self->{pid};
}

sub hold {
	my ($self, $on) = @_;
	my $f = "$self->{dir}/hold";
	if ($on) {
		open my $h, '>', $f or die "$f: $!";
		close $h;
	} else {
		unlink $f;
	}
}

sub requests {
	my ($self) = @_;
	open my $f, '<', "$self->{dir}/log" or return ();
	return map { $json->decode($_) } <$f>;
}

sub DESTROY { $_[0]->stop }

1;
