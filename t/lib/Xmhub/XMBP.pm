# SPDX-License-Identifier: MIT
package Xmhub::XMBP;

# XMBP batches for the ingest tests, built with pack() from the formats of
# doc/xmbp.md (independent of lib/codec/xmbp), and the samples of a session's
# stored chunks as `xmhub xmch dump` prints them, to compare with what
# `xmhub xmbp decode` reads in the batch sent.
#
#   my $b = batch($seq, $device_id_or_undef,
#       [$stream_id, 'f32', [[$ts, $v], ...]], ...);
#   is(stored($p, $session_id, $stream_index), sent($b), 'read back');

use strict;
use warnings;
use Exporter 'import';
use Xmhub::Test qw(xmhub);

our @EXPORT_OK = qw(batch stored sent samples_of %TAG);

our %TAG = (f64 => 0, f32 => 1, i64 => 2, i32 => 3, bool => 4,
	string => 5, bytes => 6, f64_array => 7, f32_array => 8,
	i32_array => 9, json => 10, i16 => 11, i8 => 12);
my %enc = (
	f64 => sub { pack('Q> d>', @_) },
	f32 => sub { pack('Q> f>', @_) },
	i64 => sub { pack('Q> q>', @_) },
	i32 => sub { pack('Q> l>', @_) },
	i16 => sub { pack('Q> s>', @_) },
	i8 => sub { pack('Q> c', @_) },
	bool => sub { pack('Q> C', @_) },
	string => sub { pack('Q> n/a*', @_) },
	bytes => sub { pack('Q> n/a*', @_) },
	json => sub { pack('Q> N/a*', @_) },
	f64_array => sub { my $ts = shift; pack('Q> n (d>)*', $ts, scalar @_, @_) },
	f32_array => sub { my $ts = shift; pack('Q> n (f>)*', $ts, scalar @_, @_) },
	i32_array => sub { my $ts = shift; pack('Q> n (l>)*', $ts, scalar @_, @_) },
);

# batch($seq, $device_id_or_undef, [$stream_id, $type, [[ts, v...], ...]], ...)
sub batch {
	my ($seq, $dev, @streams) = @_;
	my $b = pack('a4 C C n', 'XMBP', 1, defined $dev ? 1 : 0, $seq);
	$b .= pack('N', $dev) if defined $dev;
	$b .= pack('n', scalar @streams);
	for my $s (@streams) {
		my ($id, $type, $samples) = @$s;
		$b .= pack('n C n', $id, $TAG{$type}, scalar @$samples);
		$b .= $enc{$type}->(@$_) for @$samples;
	}
	return $b;
}

# The "samples" array text of JSON $text: xmbp decode of a one-stream
# batch (the array ends the stream, which ends the batch) or xmch dump
# of a chunk (the array ends the chunk).
sub samples_of {
	my ($text) = @_;
	return $1 if $text =~ /"samples":(\[.*\])\}\]\}\n?\z/s;
	return $text =~ /"samples":(\[.*\])\}\n?\z/s ? $1 : undef;
}

# stored($platform, $session_id, $index): the samples of the stream's
# stored chunks in time order, as the text of one JSON array.
sub stored {
	my ($p, $sid, $index) = @_;
	my $hex = $p->sql("SELECT encode(c.data, 'hex') FROM stored_chunks c "
		    . "JOIN ingest_streams t ON t.id = c.stream_id "
		    . "WHERE t.session_id = '$sid' AND t.stream_index = $index "
		    . "ORDER BY c.start_ts_us, c.seq");
	my @parts;
	for my $h (split /\n/, $hex) {
		my ($st, $out, $err) = xmhub(['xmch', 'dump', '-'],
			pack('H*', $h));
		die "xmch dump: $err" if $st != 0;
		my $s = samples_of($out);
		push @parts, substr($s, 1, -1) if length $s > 2;
	}
	return '[' . join(',', @parts) . ']';
}

# What xmhub xmbp decode reads in a one-stream batch.
sub sent {
	my ($bytes) = @_;
	my ($st, $out, $err) = xmhub(['xmbp', 'decode', '-'], $bytes);
	die "xmbp decode: $err" if $st != 0;
	return samples_of($out);
}

1;
