# SPDX-License-Identifier: MIT
package Xmhub::Test;

# Helpers for the Perl end-to-end tests: run a built program with given
# standard input and collect its exit status, standard output and error.

use strict;
use JSON::PP ();
use warnings;
use Exporter 'import';
use File::Temp qw(tempfile);
use Time::HiRes ();

our @EXPORT_OK = qw(run xmhub xmhub_json bin hexstr read_answer within);

# The built program of the given name, from the environment make sets.
sub bin {
	my ($name) = @_;
	my $path = $ENV{XMHUB_BIN} or die "XMHUB_BIN is not set (run via make check)\n";
	return $path if $name eq 'xmhub';
	die "unknown program $name\n";
}

# run(\@argv, $stdin) -> ($status, $stdout, $stderr); bytes in and out.
sub run {
	my ($argv, $stdin) = @_;
	my ($in, $inname) = tempfile(UNLINK => 1);
	my ($out, $outname) = tempfile(UNLINK => 1);
	my ($err, $errname) = tempfile(UNLINK => 1);
	binmode $in;
	print {$in} $stdin if defined $stdin;
	close $in;
	my $pid = fork() // die "fork: $!";
	if ($pid == 0) {
		open STDIN, '<', $inname or die;
		open STDOUT, '>', $outname or die;
		open STDERR, '>', $errname or die;
		exec { $argv->[0] } @$argv or die "exec $argv->[0]: $!";
	}
	waitpid($pid, 0);
	my $status = $? & 127 ? 128 + ($? & 127) : $? >> 8;
	local $/;
	binmode $out;
	binmode $err;
	my $o = <$out> // '';
	my $e = <$err> // '';
	return ($status, $o, $e);
}

# xmhub(\@args, $stdin): run the xmhub CLI.
sub xmhub {
	my ($args, $stdin) = @_;
	return run([bin('xmhub'), @$args], $stdin);
}

# xmhub_json(\@args, $stdin): the xmhub CLI's JSON answer, decoded; dies
# with its stderr when it fails.
sub xmhub_json {
	my ($args, $stdin) = @_;
	my ($st, $out, $err) = xmhub($args, $stdin);
	die "xmhub @$args: $err" if $st != 0;
	return JSON::PP->new->utf8->decode($out);
}

# within($secs, $cond): waits up to $secs seconds for $cond->() to be
# true, trying every 0.1 s; its last value.
sub within {
	my ($secs, $cond) = @_;
	my $end = Time::HiRes::time() + $secs;
	my $v;
	until (($v = $cond->()) || Time::HiRes::time() > $end) {
		Time::HiRes::sleep(0.1);
	}
	return $v;
}

# Lower-case hex of a byte string, for readable comparisons.
sub hexstr { return unpack('H*', $_[0]) }

# read_answer($socket, $sel) -> (status, {lower-case name => value}, body):
# an HTTP/1.1 answer read from a raw socket (IO::Select $sel on it) up to
# its close or 20 s of silence; status undef when none came.
sub read_answer {
	my ($c, $sel) = @_;
	my ($answer, %h) = ('');
	while ($sel->can_read(20)) {
		my $n = sysread($c, my $buf, 65536);
		last unless $n;
		$answer .= $buf;
	}
	$answer =~ /\AHTTP\/1\.1 (\d+)[^\n]*\r\n(.*?)\r\n\r\n(.*)\z/s
	    or return;
	my ($status, $body) = ($1, $3);
	for (split /\r\n/, $2) {
		my ($k, $v) = /^([^:]+):\s*(.*)$/ or next;
		$h{lc $k} = $v;
	}
	return ($status, \%h, $body);
}

1;
