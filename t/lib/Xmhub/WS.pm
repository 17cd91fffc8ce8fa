# SPDX-License-Identifier: MIT
package Xmhub::WS;

# A small WebSocket client (RFC 6455) for the end-to-end tests: the
# opening handshake, masked frames of any opcode (a message may be cut
# into several frames, several frames may go out in one write), reading
# frames and whole messages (fragmented ones joined), the end of the
# connection.  Core modules only.
#
#   my ($ws, $st, $head, $body) = Xmhub::WS->connect($port,
#       '/api/v1/ingest/ws?session_id=...', {'X-Api-Key' => $key});
#   # $ws undef: the upgrade was refused with HTTP status $st
#   $ws->send_binary($bytes);                  # one frame
#   $ws->send_binary($bytes, frames => 3);     # one message, 3 frames
#   $ws->write_raw(join '', map { Xmhub::WS::frame(2, $_) } @batches);
#   $ws->write_raw(Xmhub::WS::head(2, 150 << 20));  # announce, send later
#   my ($type, $payload) = $ws->read_message(10);
#       # type: binary, text, ping, pong, close; 'eof' when the server
#       # dropped the connection, 'timeout' after that many seconds
#   my ($rate, $lat) = $ws->pipeline(32, 10, sub { $batches[$_[0]] });
#       # the benchmarks' sender: 32 batches in flight for 10 s

use strict;
use warnings;
use Digest::SHA qw(sha1);
use IO::Select;
use IO::Socket::IP;
use MIME::Base64 qw(encode_base64);
use Time::HiRes qw(time);

my $GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
my %NAME = (0 => 'continuation', 1 => 'text', 2 => 'binary', 8 => 'close',
	9 => 'ping', 10 => 'pong');

sub rand_bytes { return join '', map { chr int rand 256 } 1 .. $_[0] }

# head($opcode, $len, $fin, $mask): the header of a client frame of $len
# payload bytes (fin defaults to 1), masked with the 4 bytes $mask
# (random by default; '' for none).
sub head {
	my ($op, $len, $fin, $mask) = @_;
	$fin //= 1;
	$mask //= rand_bytes(4);
	my $bit = length $mask ? 0x80 : 0;
	my $head = chr(($fin ? 0x80 : 0) | $op);
	if ($len < 126) {
		$head .= chr($bit | $len);
	} elsif ($len < 65536) {
		$head .= chr($bit | 126) . pack('n', $len);
	} else {
		$head .= chr($bit | 127) . pack('Q>', $len);
	}
	return $head . $mask;
}

# frame($opcode, $payload, $fin): one masked client frame (fin defaults
# to 1).
sub frame {
	my ($op, $payload, $fin) = @_;
	my $len = length $payload;
	my $mask = rand_bytes(4);
	my $keys = substr($mask x (int($len / 4) + 1), 0, $len);
	return head($op, $len, $fin, $mask) . ($payload ^ $keys);
}

# frames($opcode, $payload, $n): the message as $n frames (the first of
# $opcode, then continuations), as bytes.
sub frames {
	my ($op, $payload, $n) = @_;
	my $len = length $payload;
	my $step = int(($len + $n - 1) / $n) || 1;
	my @parts;
	for (my $off = 0; $off < $len || !@parts; $off += $step) {
		push @parts, substr($payload, $off, $step);
	}
	my $out = '';
	for my $i (0 .. $#parts) {
		$out .= frame($i == 0 ? $op : 0, $parts[$i], $i == $#parts);
	}
	return $out;
}

# connect($port, $path, \%headers): (client) after a 101; (undef,
# status, head, body) when the server answered anything else.
sub connect {
	my ($class, $port, $path, $headers) = @_;
	my $sock = IO::Socket::IP->new(PeerHost => '127.0.0.1',
		PeerPort => $port, Proto => 'tcp')
	    or die "connect 127.0.0.1:$port: $@\n";
	binmode $sock;
	my $key = encode_base64(rand_bytes(16), '');
	my $req = "GET $path HTTP/1.1\r\nHost: 127.0.0.1:$port\r\n"
	    . "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    . "Sec-WebSocket-Key: $key\r\nSec-WebSocket-Version: 13\r\n";
	$req .= "$_: $headers->{$_}\r\n" for sort keys %{$headers // {}};
	my $self = bless {sock => $sock, buf => ''}, $class;
	$self->write_raw("$req\r\n");
	my $end;
	until (($end = index $self->{buf}, "\r\n\r\n") >= 0) {
		$self->fill(30) > 0 or die "no answer to the upgrade\n";
	}
	my $head = substr($self->{buf}, 0, $end + 4, '');
	my ($st) = $head =~ m{^HTTP/1\.\d (\d{3})} or die "bad answer: $head\n";
	if ($st != 101) {
		my ($cl) = $head =~ /^Content-Length:\s*(\d+)/mi;
		$self->fill(30) while defined $cl && length $self->{buf} < $cl
		    && $self->{open};
		close $sock;
		return (undef, $st, $head, $self->{buf});
	}
	my ($accept) = $head =~ /^Sec-WebSocket-Accept:\s*(\S+)/mi;
	die "bad Sec-WebSocket-Accept\n"
	    unless ($accept // '') eq encode_base64(sha1($key . $GUID), '');
	return ($self, $st, $head, '');
}

# fill($timeout): reads what arrives within $timeout seconds into the
# buffer; the bytes read, 0 at the end of the connection, -1 on timeout.
sub fill {
	my ($self, $timeout) = @_;
	$self->{open} //= 1;
	return 0 unless $self->{open};
	return -1 unless IO::Select->new($self->{sock})->can_read($timeout);
	my $n = sysread $self->{sock}, $self->{buf}, 65536, length $self->{buf};
	if (!$n) {
		$self->{open} = 0;
		return 0;
	}
	return $n;
}

sub write_raw {
	my ($self, $bytes) = @_;
	local $SIG{PIPE} = 'IGNORE';
	my $off = 0;
	while ($off < length $bytes) {
		my $n = syswrite $self->{sock}, $bytes, 1 << 20, $off;
		return 0 unless defined $n;
		$off += $n;
	}
	return 1;
}

# send_binary($payload, frames => N): one binary message, in N frames.
sub send_binary {
	my ($self, $payload, %opt) = @_;
	return $self->write_raw(frames(2, $payload, $opt{frames} // 1));
}

sub ping { return $_[0]->write_raw(frame(9, $_[1] // '')) }

# close_frame($code): sends a Close frame.
sub close_frame {
	my ($self, $code) = @_;
	return $self->write_raw(frame(8, pack('n', $code // 1000)));
}

# read_frame($timeout): (opcode name, payload, fin), ('eof') or
# ('timeout').
sub read_frame {
	my ($self, $timeout) = @_;
	my $deadline = time + $timeout;
	for (;;) {
		my $b = $self->{buf};
		if (length $b >= 2) {
			my ($b0, $b1) = unpack 'CC', $b;
			my $len = $b1 & 0x7f;
			my $need = $len == 126 ? 4 : $len == 127 ? 10 : 2;
			if (length $b >= $need) {
				$len = unpack('n', substr $b, 2, 2) if $need == 4;
				$len = unpack('Q>', substr $b, 2, 8) if $need == 10;
				# Servers do not mask; be lenient anyway.
				my $off = $need + ($b1 & 0x80 ? 4 : 0);
				if (length $b >= $off + $len) {
					my $payload = substr $b, $off, $len;
					$payload ^= substr(substr($b, $need, 4)
					    x (int($len / 4) + 1), 0, $len)
					    if $b1 & 0x80;
					substr($self->{buf}, 0, $off + $len, '');
					return ($NAME{$b0 & 0x0f} // 'op' . ($b0 & 0x0f),
						$payload, $b0 & 0x80 ? 1 : 0);
				}
			}
		}
		my $left = $deadline - time;
		return ('timeout') if $left <= 0;
		my $n = $self->fill($left);
		return ('eof') if $n == 0;
		return ('timeout') if $n < 0;
	}
}

# read_message($timeout): (type, payload) of the next message, the
# frames of a fragmented one joined; control frames come as they are.
sub read_message {
	my ($self, $timeout) = @_;
	my ($type, $payload, $fin) = $self->read_frame($timeout);
	return ($type, $payload) if $type eq 'eof' || $type eq 'timeout'
	    || $fin || $type !~ /^(?:binary|text)$/;
	for (;;) {
		my ($t, $p, $f) = $self->read_frame($timeout);
		return ($t, $p) if $t eq 'eof' || $t eq 'timeout';
		die "unexpected $t frame inside a message\n"
		    if $t ne 'continuation';
		$payload .= $p;
		return ($type, $payload) if $f;
	}
}

# pipeline($window, $seconds, $batch_of, $check): sends $batch_of->($n)
# for n = 0, 1, ... as a binary message each, keeping $window of them
# unacknowledged, for $seconds, then takes the acks still due.  Every
# answer must be one 4-byte message; $check->($n, $ack), when given, may
# die on the n-th.  Returns (acks per second, the ack latencies in ms,
# sorted).
sub pipeline {
	my ($self, $window, $seconds, $batch_of, $check) = @_;
	my ($sent, $acked, $t0) = (0, 0, time);
	my (@at, @lat);
	while (time - $t0 < $seconds || $acked < $sent) {
		while ($sent - $acked < $window && time - $t0 < $seconds) {
			$self->write_raw(frame(2, $batch_of->($sent)))
			    or die "websocket: write failed\n";
			push @at, time;
			$sent++;
		}
		my ($type, $payload) = $self->read_message(30);
		die "websocket: $type " . ($payload // '') . "\n"
		    if $type ne 'binary' || length $payload != 4;
		$check->($acked, $payload) if $check;
		push @lat, (time - shift @at) * 1000;
		$acked++;
	}
	return ($acked / (time - $t0), [sort { $a <=> $b } @lat]);
}

sub close {
	my ($self) = @_;
	close $self->{sock} if $self->{sock};
	delete $self->{sock};
}

1;
