#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# `xmhub send` against a real stack (doc/sender.md): CSV lines of every
# kind of value, streams named by index and by name, read back identical;
# a bad line stops it with its number and nothing after it is sent; a
# refused session is exit 3; store-and-forward: while lighttpd is down for
# 5 s (over HTTP, and over WebSocket with 4 in flight) and while `xmhub
# send` itself is killed with SIGKILL and started again (WebSocket, 8 in
# flight), every sample arrives exactly once and missed_batches stays 0;
# the spool's line count after a bad line and after a finished run.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use JSON::PP;
use MIME::Base64 ();
use POSIX qw(WNOHANG);
use Time::HiRes qw(sleep time);
use Xmhub::Ingest;
use Xmhub::Platform;
use Xmhub::Pty qw(stderr_on_tty);
use Xmhub::Test qw(xmhub);

my $json = JSON::PP->new->utf8->canonical;
$SIG{PIPE} = 'IGNORE'; # a sender that died must fail a test, not end them
my $p = Xmhub::Platform->start;
my $stack = $p->stack;
my $fac = $p->facility('Sender');
my $token = $p->token($p->user('facility_admin', $fac));
my $key = $p->api_key($token, 'ingest');
my $in = Xmhub::Ingest->new($p, $key);
my $dir = tempdir(CLEANUP => 1);
my $url = $stack->url('');
my $uid = 500;

# session(@[index, type]): a new session, its JSON written to a file for
# --streams @FILE; (session, file).
sub session {
	my $s = $in->session($uid++, @_);
	my $f = "$dir/session-$s->{id}.json";
	open my $fh, '>', $f or die "$f: $!";
	print $fh $json->encode($s);
	close $fh;
	return ($s, $f);
}

sub write_file {
	my ($name, $text) = @_;
	open my $fh, '>', "$dir/$name" or die "$name: $!";
	print $fh $text;
	close $fh;
	return "$dir/$name";
}

sub send_args {
	my ($s, $f, @more) = @_;
	return ['send', '--url', $url, '--key', $key, '--session', $s->{id},
		'--streams', "\@$f", '--spool', "$dir/spool-$s->{id}", @more];
}

# Read-back values, bools as 0/1.
sub values_of {
	my ($sid, $index) = @_;
	return [map { [$_->[0], JSON::PP::is_bool($_->[1]) ? 0 + $_->[1]
		: $_->[1]] } $in->read_all($token, $sid, $index)];
}

sub meta {
	my ($sid) = @_;
	my ($st, $b) = $p->req(GET => "/api/v1/metadata/sessions/$sid",
		token => $token);
	die "metadata: $st\n" if $st != 200;
	return $b;
}

# Every kind of value, by index and by name, with a header line.
{
	my ($s, $f) = session([0, 'f32'], [1, 'i64'], [2, 'string'],
		[3, 'bytes'], [4, 'f64_array'], [5, 'bool'], [6, 'i8']);
	my (@csv, %want);
	push @csv, 'stream,ts_us,value';
	for my $k (1 .. 300) {
		my $ts = 1000 + $k;
		push @csv, "0,$ts," . ($k / 4 - 20);
		push @{$want{0}}, [$ts, $k / 4 - 20];
		push @csv, "s1,$ts," . ($k * 1000003 - 2**40);
		push @{$want{1}}, [$ts, $k * 1000003 - 2**40];
		push @csv, "2,$ts,note $k, with a comma";
		push @{$want{2}}, [$ts, "note $k, with a comma"];
		my $b64 = MIME::Base64::encode_base64("blob\0$k", '');
		push @csv, "s3,$ts,$b64";
		push @{$want{3}}, [$ts, $b64];
		push @csv, "4,$ts,1.5;-2;$k";
		push @{$want{4}}, [$ts, [1.5, -2, $k]];
		push @csv, "5,$ts," . ($k % 2 ? 'true' : '0');
		push @{$want{5}}, [$ts, $k % 2];
		push @csv, "s6,$ts," . ($k % 256 - 128);
		push @{$want{6}}, [$ts, $k % 256 - 128];
	}
	my $file = write_file('all.csv', join("\r\n", @csv) . "\r\n");
	my ($st, $out, $err) = xmhub(send_args($s, $f, '--batch-samples', 250,
		$file));
	is($st, 0, 'every kind of value: exit 0') or diag $err;
	is($err, '', 'no progress line when standard error is not a terminal');
	my $sum = eval { $json->decode($out) } // {};
	is($sum->{samples}, 2100, 'the summary counts 2100 samples');
	is($sum->{batches}, 9, '250 samples a batch: 9 batches');
	is($sum->{missed_batches}, 0, 'missed_batches 0 in the last answer');
	for my $i (0 .. 6) {
		is_deeply(values_of($s->{id}, $i), $want{$i},
			"stream $i read back as sent");
	}
	opendir my $dh, "$dir/spool-$s->{id}" or die;
	is_deeply([sort grep { !/^\./ } readdir $dh], ['state'],
		'the spool holds no batch once all are acknowledged');
}

# A bad line: everything before it is sent, nothing after it.
{
	my ($s, $f) = session([0, 'i32']);
	my @csv = map { "0,$_,$_" } 1 .. 10;
	push @csv, '0,11,eleven', map { "0,$_,$_" } 12 .. 20;
	my ($st, $out, $err) = xmhub(send_args($s, $f, '--batch-samples', 4,
		write_file('bad.csv', join("\n", @csv) . "\n")));
	is($st, 1, 'a bad line: exit 1');
	like($err, qr/line 11: value for i32 stream 0/, 'it names line 11 and why');
	is_deeply(values_of($s->{id}, 0), [map { [$_, $_] } 1 .. 10],
		'the 10 lines before it are stored, none after it');
	($st, $out, $err) = xmhub(send_args($s, $f,
		write_file('again.csv', join("\n", @csv[0 .. 9], '0,11,11',
			'0,12,12') . "\n")));
	is($st, 0, 'the same spool again, the input fixed: exit 0') or diag $err;
	is_deeply(values_of($s->{id}, 0), [map { [$_, $_] } 1 .. 12],
		'it went on at line 11: lines 1 to 10 were not sent again');
	($st, $out, $err) = xmhub(send_args($s, $f,
		write_file('unknown.csv', "0,21,21\n9,22,22\n")));
	is($st, 1, 'an undeclared stream: exit 1');
	like($err, qr/line 2: stream '9' is not one of the session/,
		'it names the line and the stream');
	is_deeply(values_of($s->{id}, 0), [(map { [$_, $_] } 1 .. 12), [21, 21]],
		'after a run that finished, the next starts at line 1');
	($st, $out, $err) = xmhub(['send', '--url', $url, '--key', $key,
		'--session', $s->{id}, '--streams', '0:i32:bogus',
		'--spool', "$dir/x", '/dev/null']);
	is($st, 2, 'a bad --streams is a usage error');
}

# Refused by the server: an unknown session, a closed one.
{
	my ($s, $f) = session([0, 'i32']);
	my $file = write_file('one.csv', "0,1,1\n");
	my ($st, $out, $err) = xmhub(['send', '--url', $url, '--key', $key,
		'--session', '00000000-0000-4000-8000-000000000000',
		'--streams', '0:i32', '--spool', "$dir/none", $file]);
	is($st, 3, 'an unknown session: exit 3');
	like($err, qr/refused .*404/, 'it says the server refused (404)');
	$in->close($s->{id});
	($st, $out, $err) = xmhub(send_args($s, $f, '--ws', $file));
	is($st, 3, 'a closed session over WebSocket: exit 3');
	like($err, qr/409/, 'the refused upgrade says 409');
}

# start_send(\@args, $stdin_from): xmhub send in the background, its
# standard input a pipe (returned) or the file named; output to files.
sub start_send {
	my ($args, $tag, $file) = @_;
	my ($r, $w);
	pipe($r, $w) or die "pipe: $!" unless defined $file;
	my $pid = fork() // die "fork: $!";
	if ($pid == 0) {
		if (defined $file) {
			open STDIN, '<', $file or die;
		} else {
			close $w;
			open STDIN, '<&', $r or die;
		}
		open STDOUT, '>', "$dir/$tag.out" or die;
		open STDERR, '>', "$dir/$tag.err" or die;
		exec $ENV{XMHUB_BIN}, @$args or die "exec: $!";
	}
	close $r if defined $r;
	if (defined $w) {
		my $old = select $w;
		$| = 1;
		select $old;
	}
	return ($pid, $w);
}

sub slurp { local (@ARGV, $/) = @_; return <> // '' }

sub wait_exit {
	my ($pid, $secs) = @_;
	my $end = time + $secs;
	while (time < $end) {
		return $? >> 8 if waitpid($pid, WNOHANG) == $pid;
		sleep 0.1;
	}
	kill 'KILL', $pid;
	waitpid($pid, 0);
	return -1;
}

# Outage: lighttpd (and the daemons) down for 5 s while lines keep
# coming, over HTTP and over a WebSocket with 4 batches in flight.
for my $ws (0, 1) {
	my $how = $ws ? 'WebSocket' : 'HTTP';
	my ($s, $f) = session([0, 'i64']);
	my ($pid, $w) = start_send(send_args($s, $f, '--batch-samples', 20,
		'--linger-ms', 50, $ws ? ('--ws', '--in-flight', 4) : (), '-'),
		"outage$ws");
	my $n = 0;
	my $feed = sub {
		my ($secs) = @_;
		my $end = time + $secs;
		while (time < $end) {
			print $w join('', map { $n++; "0,$n," . ($n * 7) . "\n" } 1 .. 10);
			sleep 0.02;
		}
	};
	$feed->(1.5);
	my $before = $n;
	$stack->down;
	$feed->(5);
	$stack->up;
	$feed->(1.5);
	close $w;
	is(wait_exit($pid, 120), 0, "$how through a 5 s outage of lighttpd: exit 0")
		or diag slurp("$dir/outage$ws.err");
	ok($before > 100 && $n > $before + 500, "$how: lines came before "
		. "($before) and during the outage (" . ($n - $before) . ')');
	is_deeply(values_of($s->{id}, 0), [map { [$_, $_ * 7] } 1 .. $n],
		"$how: all $n samples read back exactly once, in order");
	my $m = meta($s->{id});
	is($m->{missed_batches}, 0, "$how: missed_batches 0");
	is($m->{total_samples}, $n, "$how: total_samples counts each once");
}

# SIGKILL of xmhub send, over a WebSocket with 8 batches in flight, then
# the same command again: it resumes from the spool.
{
	my ($s, $f) = session([0, 'i64'], [1, 'f64']);
	my $lines = 60000;
	my $file = write_file('kill.csv', join('', map {
		"0,$_,$_\n1,$_," . ($_ / 8) . "\n" } 1 .. $lines));
	my @args = @{send_args($s, $f, '--ws', '--in-flight', 8,
		'--batch-samples', 100, $file)};
	# A round that ends by itself has sent the rest (a run that ends
	# with exit 0 starts the next at line 1: no run after it).
	my ($kills, $exit) = (0);
	for my $round (1 .. 3) {
		my ($pid) = start_send(\@args, "kill$round");
		sleep 0.3 + rand 0.4;
		my $st = meta($s->{id})->{total_samples};
		if (waitpid($pid, WNOHANG) == $pid) {
			$exit = $? >> 8;
			last;
		}
		kill 'KILL', $pid;
		waitpid($pid, 0);
		$kills++;
		diag "killed after $st samples were stored";
	}
	ok($kills >= 1, "xmhub send was killed ($kills times) while sending");
	if (!defined $exit) {
		my ($pid) = start_send(\@args, 'kill-final');
		$exit = wait_exit($pid, 300);
	}
	is($exit, 0, 'started again after the kills, it finishes: exit 0')
		or diag slurp("$dir/kill-final.err");
	is_deeply(values_of($s->{id}, 0), [map { [$_, $_] } 1 .. $lines],
		"stream 0: all $lines samples exactly once");
	is_deeply(values_of($s->{id}, 1), [map { [$_, $_ / 8] } 1 .. $lines],
		"stream 1: all $lines samples exactly once");
	my $m = meta($s->{id});
	is($m->{missed_batches}, 0, 'missed_batches 0');
	is($m->{total_samples}, 2 * $lines, 'total_samples counts each once');
}

# On a terminal: the progress line.
{
	my ($s, $f) = session([0, 'i32']);
	my $file = write_file('tty.csv', join('', map { "0,$_,$_\n" } 1 .. 3000));
	my ($st, $text) = stderr_on_tty([$ENV{XMHUB_BIN}, @{send_args($s, $f,
		'--batch-samples', 100, $file)}], 60);
	is($st, 0, 'on a terminal: exit 0');
	like($text, qr/\rxmhub send: 30 batches acked \([\d.]+\/s\), 3000 samples, spool 0 *\r?\n/,
		'the progress line ends with the totals and a new line');
}

done_testing;
