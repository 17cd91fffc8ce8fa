# SPDX-License-Identifier: MIT
package Xmhub::Png;

# A small PNG reader for the tests: 8-bit palette images (what libsox's
# spectrogram effect writes), non-interlaced, decoded to rows of
# luminance (0-255) through the palette.  Dies on anything else.

use strict;
use warnings;
use Exporter 'import';
use Compress::Zlib qw(uncompress);

our @EXPORT_OK = qw(png_rows brightest_row);

# png_rows($bytes) -> ($width, $height, \@rows), each row an array ref of
# luminances.
sub png_rows {
	my ($png) = @_;
	die "not a PNG\n" unless substr($png, 0, 8) eq "\x89PNG\r\n\x1a\n";
	my ($pos, $idat, @pal, $w, $h) = (8, '');
	while ($pos + 8 <= length $png) {
		my ($len, $type) = unpack 'N a4', substr($png, $pos, 8);
		my $data = substr($png, $pos + 8, $len);
		$pos += 12 + $len;
		if ($type eq 'IHDR') {
			my ($depth, $ctype, $inter);
			($w, $h, $depth, $ctype, undef, undef, $inter) =
				unpack 'N N C C C C C', $data;
			die "only 8-bit palette PNGs ($depth, $ctype)\n"
				unless $depth == 8 && $ctype == 3 && !$inter;
		} elsif ($type eq 'PLTE') {
			for (my $i = 0; $i + 3 <= length $data; $i += 3) {
				my ($r, $g, $b) = unpack 'C3', substr($data, $i, 3);
				push @pal, 0.299 * $r + 0.587 * $g + 0.114 * $b;
			}
		} elsif ($type eq 'IDAT') {
			$idat .= $data;
		}
		last if $type eq 'IEND';
	}
	my $raw = uncompress($idat) // die "bad IDAT\n";
	die "short image data\n" unless length $raw == $h * ($w + 1);
	my (@rows, @prev);
	@prev = (0) x $w;
	for my $y (0 .. $h - 1) {
		my ($f, @b) = unpack 'C*', substr($raw, $y * ($w + 1), $w + 1);
		for my $x (0 .. $w - 1) {
			my $a = $x > 0 ? $b[$x - 1] : 0;
			my $c = $x > 0 ? $prev[$x - 1] : 0;
			my $u = $prev[$x];
			my $add = $f == 0 ? 0
				: $f == 1 ? $a
				: $f == 2 ? $u
				: $f == 3 ? int(($a + $u) / 2)
				: paeth($a, $u, $c);
			$b[$x] = ($b[$x] + $add) & 0xff;
		}
		@prev = @b;
		push @rows, [map { $pal[$_] // die "index $_ outside the palette\n" } @b];
	}
	return ($w, $h, \@rows);
}

sub paeth {
	my ($a, $b, $c) = @_;
	my $p = $a + $b - $c;
	my ($pa, $pb, $pc) = (abs($p - $a), abs($p - $b), abs($p - $c));
	return $a if $pa <= $pb && $pa <= $pc;
	return $b if $pb <= $pc;
	return $c;
}

# brightest_row(\@rows) -> the index (from the top) of the row with the
# highest mean luminance.
sub brightest_row {
	my ($rows) = @_;
	my ($best, $bi) = (-1, -1);
	for my $i (0 .. $#$rows) {
		my $s = 0;
		$s += $_ for @{ $rows->[$i] };
		($best, $bi) = ($s, $i) if $s > $best;
	}
	return $bi;
}

1;
