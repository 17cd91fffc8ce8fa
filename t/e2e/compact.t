#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Compaction end to end (doc/compaction.md): sessions of many small
# batches (late ones, equal timestamps across batches) read back the same
# before and after; the inline rows become fewer large chunks in the
# object store; a second run changes nothing; an active session is left
# alone; a compactor killed with SIGKILL between writing its objects and
# its commit loses nothing, and the next run sweeps what it left.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep);
use Xmhub::Ingest;
use Xmhub::Platform;
use Xmhub::Test qw(run);

my $p = Xmhub::Platform->start;
my $stack = $p->stack;
# The stack's own compactor daemon makes one pass at start, then sleeps:
# this test runs its passes itself.  Small targets give several output
# chunks, cut inside runs of equal timestamps.
$stack->restart(env => {XMHUB_COMPACT_INTERVAL => 86400,
	XMHUB_COMPACT_MIN_AGE => 0, XMHUB_COMPACT_TARGET_SAMPLES => 250});
my $fac = $p->facility('Compact');
my $tu = $p->token($p->user('user', $fac));
my $in = Xmhub::Ingest->new($p, $p->api_key($p->token($p->user(
	'facility_admin', $fac)), 'ingest'));

my $compactor = "$ENV{XMHUB_BUILDDIR}/jobs/xmhub-ingest-compact";

# compact(%env): one `--once` run as the stack's services run (the
# service user when root); (status, output).
sub compact {
	my (%env) = @_;
	my @argv = ('env', 'XMHUB_ENV_FILE=' . $stack->env_file,
		map({ "$_=$env{$_}" } sort keys %env), $compactor, '--once');
	unshift @argv, 'runuser', '-u', 'xmhub', '--' if $> == 0;
	my ($s, $out, $err) = run(\@argv);
	return ($s, $out . $err);
}

# A session of $n batches on streams 0 (f32) and 1 (string): timestamps
# rise by 10 per sample, every fifth batch is late (earlier than the one
# before), and batches share timestamps at their edges.
sub fill {
	my ($uid, $n) = @_;
	my $s = $in->session($uid, [0, 'f32'], [1, 'string']);
	my (@f, @str);
	for my $b (0 .. $n - 1) {
		my $base = ($b % 5 == 4 ? $b - 3 : $b) * 200;
		my @fs = map { [$base + $_ * 10, ($b * 40 + $_) * 0.25] } 0 .. 20;
		my @ss = map { [$base + $_ * 50, "b$b-$_"] } 0 .. 4;
		push @f, \@fs;
		push @str, \@ss;
		$in->send($s->{id}, $b, [0, 'f32', \@fs], [1, 'string', \@ss]);
	}
	return ($s, $in->expected(@f), $in->expected(@str));
}

sub rows {
	my ($sid) = @_;
	return $p->sql("SELECT count(*) FILTER (WHERE c.data IS NOT NULL) "
		    . "|| ' ' || count(*) FILTER (WHERE c.object_key IS NOT NULL) "
		    . '|| \' \' || coalesce(sum(c.sample_count), 0) '
		    . 'FROM stored_chunks c JOIN ingest_streams t ON '
		    . "t.id = c.stream_id WHERE t.session_id = '$sid'");
}

sub chunk_ids {
	my ($sid) = @_;
	return $p->sql('SELECT c.id, c.object_key, c.seq FROM stored_chunks c '
		    . 'JOIN ingest_streams t ON t.id = c.stream_id '
		    . "WHERE t.session_id = '$sid' ORDER BY c.seq");
}

sub keys_of_session {
	my ($sid) = @_;
	return split /\n/, $p->sql('SELECT c.object_key FROM stored_chunks c '
		    . 'JOIN ingest_streams t ON t.id = c.stream_id '
		    . "WHERE t.session_id = '$sid' AND c.object_key IS NOT NULL");
}

sub slurp {
	open(my $fh, '<', $_[0]) or return undef;
	local $/;
	return <$fh>;
}

sub object_path { return $stack->var . "/objects/$_[0]" }

sub readback {
	my ($s, $name, $f, $str) = @_;
	is_deeply([$in->read_all($tu, $s->{id}, 0)], $f,
	    "$name: the f32 stream reads back identical");
	is_deeply([$in->read_all($tu, $s->{id}, 1, limit => 7)], $str,
	    "$name: the string stream reads back identical");
}

my ($a, $fa, $sa) = fill(1, 60);
my ($b, $fb, $sb) = fill(2, 12);
my ($c, $fc, $sc) = fill(3, 30);
$in->close($a->{id});
$in->close($c->{id});
is(rows($a->{id}), '120 0 1560', 'before: 120 inline chunks, 1560 samples');
readback($a, 'before', $fa, $sa);
{
	my ($s0, $o0) = compact(XMHUB_COMPACT_MIN_AGE => 3600);
	is($s0, 0, 'a run with XMHUB_COMPACT_MIN_AGE 3600: exit 0');
	is(rows($a->{id}) . ' ' . rows($c->{id}), '120 0 1560 60 0 780',
	    'sessions closed less than XMHUB_COMPACT_MIN_AGE ago are left alone');
}

# --- a run killed between its objects and its commit ---
my $stall = $stack->var . '/tmp/stall';
my $pid = fork() // die "fork: $!";
if ($pid == 0) {
	compact(XMHUB_COMPACT_TEST_STALL => $stall);
	exit 0;
}
my $waited = 0;
sleep(0.1), $waited++ until -e $stall || $waited > 600;
ok(-e $stall, 'the compactor reached the point before its commit');
# runuser's child is the compactor: kill the whole group of the fork.
# (The stack's daemon runs the same program with --loop.)
my @victims = grep { (readlink("/proc/$_/exe") // '') eq $compactor
	    && (slurp("/proc/$_/cmdline") // '') =~ /--once/ }
    map { m{/proc/(\d+)} ? $1 : () } glob('/proc/[0-9]*');
is(scalar @victims, 1, 'one compactor runs');
kill 'KILL', @victims;
waitpid($pid, 0);
# Its transaction ends when PostgreSQL sees the connection go.
$waited = 0;
sleep(0.1), $waited++ while $waited < 100 && $p->sql("SELECT count(*) "
    . "FROM pg_stat_activity WHERE state LIKE 'idle in transaction%'") > 0;
my $killed = $p->sql("SELECT t.session_id FROM compact_pending p JOIN "
    . 'ingest_streams t ON t.id = p.stream_id LIMIT 1');
ok($killed eq $a->{id} || $killed eq $c->{id},
    'the killed run announced objects of a closed session');
my ($ks, $kf, $kstr) = $killed eq $a->{id} ? ($a, $fa, $sa) : ($c, $fc, $sc);
my @orphans = split /\n/, $p->sql('SELECT object_key FROM compact_pending');
ok(@orphans > 0 && (grep { -e object_path($_) } @orphans) > 0,
    'its objects were written');
is(rows($ks->{id}), $ks eq $a ? '120 0 1560' : '60 0 780',
    'the killed run changed no row');
readback($ks, 'after the kill', $kf, $kstr);

# --- compaction ---
my ($s, $out) = compact();
is($s, 0, 'compact --once: exit 0') or diag $out;
note $out;
like($out, qr/swept \d+ object/, 'the run swept what the killed one left');
is($p->sql('SELECT count(*) FROM compact_pending'), 0,
    'no announcement left');
ok(!(grep { -e object_path($_) } @orphans), 'the orphaned objects are gone');

my ($inline, $objs, $n) = split / /, rows($a->{id});
is($inline, 0, 'after: no inline chunk left');
is($n, 1560, 'after: every sample still counted');
ok($objs > 1 && $objs < 120, "after: $objs chunks instead of 120");
my @keys = keys_of_session($a->{id});
ok(!(grep { !-s object_path($_) } @keys), 'every chunk is in the store');
ok(!(grep { !m{^$fac/ingest/$a->{id}/[01]/[0-9a-f-]{36}\.xmch$} } @keys),
    'keys: {facility}/ingest/{session}/{stream_index}/{chunk}.xmch');
readback($a, 'after', $fa, $sa);
readback($c, 'after (the killed session)', $fc, $sc);
like(rows($c->{id}), qr/^0 \d+ 780$/, 'the killed session is compacted too');
{
	my @w = $in->read_all($tu, $a->{id}, 0, from_us => 1000,
		to_us => 4000, limit => 3);
	is_deeply(\@w, [grep { $_->[0] >= 1000 && $_->[0] <= 4000 } @$fa],
	    'a window across compacted chunks, in pages of 3');
}

is(rows($b->{id}), '24 0 312', 'the active session is not compacted');
readback($b, 'active', $fb, $sb);

# --- a second run changes nothing ---
my $before = chunk_ids($a->{id}) . chunk_ids($c->{id});
($s, $out) = compact();
is($s, 0, 'second run: exit 0');
is(chunk_ids($a->{id}) . chunk_ids($c->{id}), $before,
    'second run: the same rows');

# --- an errored session is compacted; the active one still is not ---
$p->sql("UPDATE ingest_sessions SET status = 'error' WHERE id = '$b->{id}'");
($s, $out) = compact();
like(rows($b->{id}), qr/^0 \d+ 312$/, 'an errored session is compacted');
readback($b, 'errored, compacted', $fb, $sb);

done_testing;
