#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# The device example of doc/device.md (examples/device-posix.c, built
# with libxmbp alone) against a real stack: it sends a session's worth of
# batches over its own HTTP/1.1 client, and every sample reads back
# through /api/v1/metadata exactly once, with the acks it printed
# matching the session's counters; it keeps sending through a PostgreSQL
# outage by retrying (503), again with every sample once and no gap; a
# batch the server refuses (a device_id that is not the session's) ends
# it with status 1 and nothing stored.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep);
use Xmhub::Ingest;
use Xmhub::Platform;
use Xmhub::Test qw(run);

my $prog = "$ENV{XMHUB_BUILDDIR}/examples/device-posix";
ok(-x $prog, 'the example is built') or BAIL_OUT("no $prog");

my $p = Xmhub::Platform->start(own_db => 1); # stops PostgreSQL
my $fac = $p->facility('Device example');
my $ta = $p->token($p->user('facility_admin', $fac));
my $key = $p->api_key($ta, 'ingest');
my $in = Xmhub::Ingest->new($p, $key);
my @where = ('127.0.0.1', $p->stack->port, $key);

my $UID = 7001;
my $T0 = 1_700_000_000_000_000;
my $PER_BATCH = 50;
my $BATCH_BYTES = 14 + 2 * (5 + $PER_BATCH * 12); # envelope + 2 f32/i32 blocks

# What the example's simulated sensors give for $n batches from $t0.
sub want {
	my ($n, $t0) = @_;
	my @i = 0 .. $n * $PER_BATCH - 1;
	return ([map { [$t0 + $_ * 10000, 20 + ($_ % 40) * 0.25] } @i],
	    [map { [$t0 + $_ * 10000, $_] } @i]);
}

# acks($stdout): [seq, accepted_samples, missed_batches] per acked batch.
sub acks {
	my @a;
	push @a, [$1, $2, $3] while $_[0] =~
	    /^batch (\d+) acked: accepted_samples (\d+) missed_batches (\d+)$/mg;
	return \@a;
}

# check($name, $sid, $batches, $t0): the session's samples and counters.
sub check {
	my ($name, $sid, $n, $t0) = @_;
	my ($temp, $count) = want($n, $t0);
	my @got0 = $in->read_all($ta, $sid, 0);
	my @got1 = $in->read_all($ta, $sid, 1);
	is(scalar @got0, $n * $PER_BATCH, "$name: every f32 sample, once");
	is_deeply(\@got0, $temp, "$name: the f32 stream reads back as sent");
	is_deeply(\@got1, $count, "$name: the i32 stream reads back as sent");
	my $s = $in->close($sid);
	is($s->{total_samples}, 2 * $n * $PER_BATCH, "$name: total_samples");
	is($s->{total_bytes}, $n * $BATCH_BYTES, "$name: total_bytes");
	is($s->{missed_batches}, 0, "$name: missed_batches 0");
}

# --- a refused batch: status 1, the answer shown, nothing stored ---
my $s = $in->session($UID, [0, 'f32'], [1, 'i32']);
my ($st, $out, $err) = run([$prog, '-n', 3, '-i', 0, '-t', $T0,
    '-u', $UID + 1, @where, $s->{id}]);
is($st, 1, 'a refused batch: exit 1');
like($err, qr/^batch 0 refused: 400 .*device/m,
    'a refused batch: the status and detail on stderr') or diag $err;
is($out, '', 'a refused batch: no ack');

# --- a session's worth: 40 batches (2000 samples per stream) ---
($st, $out, $err) = run([$prog, '-n', 40, '-i', 0, '-t', $T0, '-u', $UID,
    @where, $s->{id}]);
is($st, 0, 'a session: exit 0') or diag $err;
is($err, '', 'a session: no retries');
is_deeply(acks($out), [map { [$_, ($_ + 1) * 2 * $PER_BATCH, 0] } 0 .. 39],
    'a session: batch_seq 0 to 39, each acked with the running totals')
    or diag $out;
check('a session', $s->{id}, 40, $T0);

# --- through a PostgreSQL outage: the batches wait and are resent ---
my $T1 = $T0 + 3_600_000_000;
$s = $in->session($UID, [0, 'f32'], [1, 'i32']);
my $errfile = "$ENV{XMHUB_BUILDDIR}/device-example.$$.err";
my $pid = open(my $fh, '-|') // die "fork: $!";
if ($pid == 0) {
	open STDERR, '>', $errfile or die "$errfile: $!";
	exec $prog, '-n', 12, '-i', 400, '-t', $T1, '-u', $UID, @where,
	    $s->{id}
	    or die "exec: $!";
}
$out = '';
while (my $line = <$fh>) {
	$out .= $line;
	last if $line =~ /^batch 2 acked/;
}
$p->stack->stop_db;
sleep 2.5;
$p->stack->start_db;
$out .= $_ while <$fh>;
close $fh;
$st = $? >> 8;
$err = do { local (@ARGV, $/) = ($errfile); <> // '' };
unlink $errfile;
is($st, 0, 'an outage: exit 0') or diag $err;
like($err, qr/^batch \d+: status 503, retry in 250 ms$/m,
    'an outage: a batch was answered 503 and retried') or diag $err;
is_deeply([map { $_->[0] } @{acks($out)}], [0 .. 11],
    'an outage: each batch acked once, in order') or diag $out;
check('an outage', $s->{id}, 12, $T1);

done_testing;
