# SPDX-License-Identifier: MIT
package Xmhub::Ingest;

# Helpers for the tests of stored samples (t/e2e/api-metadata.t,
# t/e2e/compact.t; sessions for t/e2e/api-ingest.t and t/e2e/api-ws.t too): ingest
# sessions made through the ingest endpoints with an API key, batches
# written in the CLI's JSON form and encoded by `xmhub xmbp encode`, and
# samples read back through /api/v1/metadata/.../samples, paging
# included.
#
#   my $in = Xmhub::Ingest->new($platform, $api_key);
#   my $s = $in->session(7, [0, 'f32'], [1, 'string']);
#   my $a = $in->audio_session(5, 'pcm_s16le', 192000, 8); # stream 0
#   $in->send($s->{id}, 3, [0, 'f32', [[1000, 1.5], [1001, 'NaN']]]);
#   $in->close($s->{id});
#   my @all = $in->read_all($token, $s->{id}, 0, limit => 7);

use strict;
use warnings;
use JSON::PP;
use Xmhub::Test qw(xmhub);

my $json = JSON::PP->new->utf8->canonical->allow_nonref;

sub new {
	my ($class, $p, $key) = @_;
	return bless {p => $p, key => $key}, $class;
}

# encode($seq, [$stream_id, $type, [[ts, value], ...]], ...): the binary
# batch (no device_id).
sub encode {
	my ($self, $seq, @streams) = @_;
	my $text = $json->encode({version => 1, flags => 0, batch_seq => $seq,
		device_id => undef, streams => [map { {stream_id => $_->[0],
			value_type => $_->[1], samples => $_->[2]} } @streams]});
	my ($st, $out, $err) = xmhub(['xmbp', 'encode', '-'], $text);
	die "xmbp encode: $err" if $st != 0;
	return $out;
}

# session($device_uid, [$index, $type], ...): a new session's object.
sub session {
	my ($self, $uid, @streams) = @_;
	my ($st, $s) = $self->{p}->req(POST => '/api/v1/ingest/sessions',
		key => $self->{key}, json => {device_uid => $uid,
			streams => [map { {stream_index => $_->[0],
				name => "s$_->[0]", value_type => $_->[1]} }
				@streams]});
	die "session: $st\n" . JSON::PP->new->encode($s // {}) if $st != 201;
	return $s;
}

# audio_session($device_uid, $codec, $rate, $channels): a new session's
# object, its one stream (index 0) bytes declared as audio
# (doc/xmbp-audio.md).
sub audio_session {
	my ($self, $uid, $codec, $rate, $ch) = @_;
	my ($st, $s) = $self->{p}->req(POST => '/api/v1/ingest/sessions',
		key => $self->{key}, json => {device_uid => $uid, streams => [{
			stream_index => 0, name => 'audio', value_type => 'bytes',
			audio => {codec => $codec, sample_rate_hz => $rate,
				channels => $ch}}]});
	die "audio session: $st\n" if $st != 201;
	return $s;
}

# send($session_id, $seq, @streams as for encode): the batch, which must
# be acknowledged.
sub send {
	my ($self, $sid, @batch) = @_;
	my ($st, $b) = $self->{p}->req(POST => "/api/v1/ingest/sessions/$sid/data",
		key => $self->{key}, body => $self->encode(@batch),
		headers => {'Content-Type' => 'application/octet-stream'});
	die "data: $st\n" . JSON::PP->new->encode($b // {}) if $st != 200;
	return $b;
}

sub close {
	my ($self, $sid) = @_;
	my ($st, $b) = $self->{p}->req(POST => "/api/v1/ingest/sessions/$sid/close",
		key => $self->{key});
	die "close: $st\n" if $st != 200;
	return $b;
}

# samples($token, $sid, $index, %query): (status, JSON body, response).
sub samples {
	my ($self, $token, $sid, $index, %q) = @_;
	my $qs = join '&', map { "$_=$q{$_}" } sort keys %q;
	return $self->{p}->req(GET => "/api/v1/metadata/sessions/$sid/streams/"
		    . "$index/samples" . ($qs ne '' ? "?$qs" : ''),
		token => $token);
}

# read_all($token, $sid, $index, %query): every sample of the window,
# following next_from_us/next_skip; dies on anything but 200.
sub read_all {
	my ($self, $token, $sid, $index, %q) = @_;
	my @all;
	for (my $n = 0; ; $n++) {
		my ($st, $b) = $self->samples($token, $sid, $index, %q);
		die "samples: $st\n" if $st != 200;
		push @all, @{$b->{samples}};
		return @all unless defined $b->{next_from_us};
		die "read_all: no end after $n pages\n" if $n > 100000;
		$q{from_us} = $b->{next_from_us};
		$q{skip} = $b->{next_skip};
	}
}

# expected(@batches): what the stream's samples read back as, from the
# [[ts, value], ...] lists sent in order: time order, ties in the order
# sent.
sub expected {
	my ($self, @lists) = @_;
	my @all = map { @$_ } @lists;
	my @order = sort { $all[$a][0] <=> $all[$b][0] || $a <=> $b } 0 .. $#all;
	return [@all[@order]];
}

1;
