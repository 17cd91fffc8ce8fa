# SPDX-License-Identifier: MIT
package Xmhub::Prom;

# Prometheus text for the metrics tests (t/e2e/metrics.t,
# t/e2e/face-metrics.t): the samples of a scrape, and promtool's verdict.
#
#   my $m = prom_samples($text);     # {'name{labels}' => value}
#   prom_check($text, 'promtool');   # a test: promtool check metrics

use strict;
use warnings;
use Exporter 'import';
use File::Temp qw(tempfile);
use Test::More;

our @EXPORT_OK = qw(prom_samples prom_check);

sub prom_samples {
	my ($text) = @_;
	my %m;
	for (split /\n/, $text // '') {
		$m{$1} = $2 if !/^#/ && /^(\S+) (\S+)$/;
	}
	return \%m;
}

# prom_check($text, $name): a test that `promtool check metrics` finds no
# problem in $text (promtool from the Debian package prometheus).
sub prom_check {
	my ($text, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my ($fh, $file) = tempfile(UNLINK => 1);
	print $fh $text;
	close $fh;
	my $out = `promtool check metrics < $file 2>&1`;
	is($?, 0, $name) or diag $out;
}

1;
