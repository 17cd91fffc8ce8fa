#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# lib/core/db.c against a real PostgreSQL: runs the C program t/db (from
# t/e2e/db.c) on a stack of t/lib/Xmhub/Stack.pm, stops and restarts the
# server when it asks ("# driver: WHAT" on its output, answered with a
# line on its input), and reports its TAP lines as this script's.  Then
# checks what lib/core/db.c logged.
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempfile);
use IO::Handle;
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Stack;

my $s = Xmhub::Stack->start(own_db => 1); # stops PostgreSQL
my $prog = "$ENV{XMHUB_BUILDDIR}/t/e2e/db";
my %driver = (
	'stop-db' => sub { $s->stop_db },
	'start-db' => sub { $s->start_db },
	'restart-db' => sub { $s->stop_db; $s->start_db },
);

my ($logf, $log) = tempfile(UNLINK => 1);
pipe(my $from_child, my $child_out) or die "pipe: $!";
pipe(my $child_in, my $to_child) or die "pipe: $!";
my $pid = fork() // die "fork: $!";
if ($pid == 0) {
	close $from_child;
	close $to_child;
	open STDIN, '<&', $child_in or die;
	open STDOUT, '>&', $child_out or die;
	open STDERR, '>', $log or die;
	$ENV{XMHUB_TEST_DATABASE_URL} = $s->database_url;
	exec $prog or die "exec $prog: $!";
}
close $child_in;
close $child_out;
$to_child->autoflush(1);

my ($planned, $ran) = (undef, 0);
while (my $line = <$from_child>) {
	chomp $line;
	if ($line =~ /^(not )?ok \d+ - (.*)$/) {
		ok(!$1, $2);
		$ran++;
	} elsif ($line =~ /^# driver: (\S+)$/) {
		my $what = $1;
		eval { $driver{$what}->(); 1 } or diag("driver $what: $@");
		print {$to_child} "done\n";
	} elsif ($line =~ /^1\.\.(\d+)/) {
		$planned = $1;
	} elsif ($line =~ /^# (.*)$/) {
		diag($1);
	} else {
		fail("unexpected output of t/db: $line");
	}
}
waitpid($pid, 0);
is($? >> 8, 0, 't/db exits 0');
is($planned, $ran, 't/db ran all its tests');

# What went to the log: one line per failure with the SQLSTATE and the
# server's message, never a value (the DETAIL of a unique violation
# quotes the key).
# Each is a logfmt line of lib/core/log.h; its msg is what is checked.
my $logged = do { local $/; <$logf> } // '';
my @lines = split /\n/, $logged;
my @msgs = map {
	/^time=\S+ level=\w+ program=\S+ pid=\d+ msg="((?:[^"\\]|\\.)*)"$/
	    ? $1 =~ s/\\(.)/$1/gr : "(not a log line) $_"
} @lines;
my $text = join '', map { "$_\n" } @msgs;
cmp_ok(scalar @lines, '>', 0, 'the log has lines');
like($text, qr/^db: 23505: duplicate key value violates unique constraint "dbt_name_key"$/m,
	'a conflict is logged with its SQLSTATE');
like($text, qr/^db: connect: .*\S$/m, 'a failed connection is logged');
like($text, qr/^db: connected again$/m, 'so is the way back');
unlike($text, qr/secret-value-7f3a/, 'values are not logged');
unlike($text, qr/^(?!db: )/m, 'each message is one logfmt line, its msg starting db:');
my $connect_lines = () = $text =~ /^db: connect: /mg;
cmp_ok($connect_lines, '<=', 2, 'an outage is logged once, not once a query');

done_testing;
