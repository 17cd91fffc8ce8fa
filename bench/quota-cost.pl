#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# bench/quota-cost - what counting the samples' bytes for the storage
# quotas costs PostgreSQL per ingest statement (issue 27; doc/benchmarks.md
# "bench/quota-cost"): pgbench runs an ingest round's shape of statement,
# an INSERT of two 4 KB chunk rows and the UPDATE of their session's
# counters, into its own stack's database, prepared, in turns
# (A B C ..., ... C B A), under six ways of counting:
#   none     nothing counted (the floor);
#   trigger  sql/019's statement trigger on INSERT, which sql/020 dropped
#            (made again here): its delta row from the transition table;
#   inline   sql/020: the statement inserts its delta row itself (a CTE),
#            the facility found through the chunks' streams and session;
#   nofk     inline, and facility_storage_delta without its foreign key;
#   params   the delta row from parameter arrays (the round knows each
#            session's facility and bytes): no joins;
#   session  sql/023, as lib/domain/ingest.c does: the session's UPDATE
#            adds the bytes to its pending_bytes, no row more.
# The figure is the CPU of the cluster's processes (the postmaster's own
# and its reaped children's included) per statement, medians of the
# rounds, and each one's ratio to none.  After each run, what an upload's
# quota check then meets: the CPU of facility_storage_fold() of the
# facility (BENCH_FOLDS, 100, each rolled back, so that each meets the
# run's delta rows), with how many there are; then they are folded.  BENCH_CLIENTS (1) pgbench
# clients, BENCH_ROUNDS (5), BENCH_STATEMENTS (3000) per run and client.
# Not a test: it prints figures, it asserts nothing.
use strict;
use warnings;
use File::Temp ();
use Xmhub::Ingest;
use Xmhub::Platform;
use Xmhub::Stack;
use Xmhub::Test qw(run);

my $clients = $ENV{BENCH_CLIENTS} || 1;
my $rounds = $ENV{BENCH_ROUNDS} || 5;
my $n = $ENV{BENCH_STATEMENTS} || 3000;
my $folds = $ENV{BENCH_FOLDS} || 100;
my ($pgbench) = glob '/usr/lib/postgresql/*/bin/pgbench';
die "pgbench not found (apt-get install postgresql)\n" unless $pgbench;

my $p = Xmhub::Platform->start(own_db => 1);
my $s = $p->stack;
my $fac = $p->facility('quota-cost');
my $key = $p->api_key($p->token($p->user('facility_admin', $fac)), 'ingest');
my $sess = Xmhub::Ingest->new($p, $key)->session(7, [0, 'f32'], [1, 'f32']);
my @streams = split /\n/, $p->sql('SELECT id FROM ingest_streams WHERE '
    . "session_id = '$sess->{id}' ORDER BY stream_index");
my $dir = File::Temp::tempdir(CLEANUP => 1);
chmod 0755, $dir;

# Chunk bytes do not compress (XMCH is compressed already): random.
my $hex = join '', map { sprintf '%02x', int(rand(256)) } 1 .. 4000;
my $insert = 'INSERT INTO stored_chunks (stream_id, start_ts_us, end_ts_us, '
    . 'sample_count, byte_size, data) SELECT x.id, x.t, x.t, 500, x.len, '
    . "decode('$hex', 'hex') FROM unnest(ARRAY['$streams[0]', "
    . "'$streams[1]']::uuid[], ARRAY[:t, :t]::numeric[], "
    . 'ARRAY[4000, 4000]::bigint[]) AS x(id, t, len)';
# The session's counters, as a round's statement updates them; $add is
# what else it sets.
sub round {
	my ($add, $delta) = @_;
	return "WITH c AS ($insert RETURNING stream_id, byte_size), "
	    . 's AS (UPDATE ingest_sessions t SET total_samples = '
	    . 't.total_samples + 1000, total_bytes = t.total_bytes + 8100, '
	    . "last_data_at = now()$add FROM unnest(ARRAY['$sess->{id}']::uuid[], "
	    . 'ARRAY[8000]::bigint[]) AS y(id, stored) WHERE t.id = y.id)'
	    . ($delta ? ", q AS ($delta)" : '') . ' SELECT 1';
}
my $none = round('');
my $inline = round('', 'INSERT INTO facility_storage_delta (facility_id, '
    . 'sample_bytes) SELECT e.facility_id, sum(c.byte_size) FROM c '
    . 'JOIN ingest_streams v ON v.id = c.stream_id JOIN ingest_sessions e '
    . 'ON e.id = v.session_id GROUP BY e.facility_id');
my $params = round('', 'INSERT INTO facility_storage_delta (facility_id, '
    . "sample_bytes) SELECT * FROM unnest(ARRAY['$fac']::uuid[], "
    . 'ARRAY[8000]::bigint[])');
my $session = round(', pending_bytes = t.pending_bytes + y.stored');
my %way = (none => $none, trigger => $none, inline => $inline,
	nofk => $inline, params => $params, session => $session);
$way{fold} = "BEGIN;\nSELECT * FROM facility_storage_fold('$fac');\nROLLBACK";
for my $w (keys %way) {
	open my $f, '>', "$dir/$w.sql" or die "$dir/$w.sql: $!\n";
	print $f "\\set t random(1, 1000000000)\n$way{$w};\n";
	close $f;
}

# sql/019's trigger on INSERT, as it was.
$p->sql(q{CREATE FUNCTION bench_chunks_019() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO facility_storage_delta (facility_id, sample_bytes)
	SELECT s.facility_id, sum(c.byte_size)
	FROM new_chunks c
	JOIN ingest_streams t ON t.id = c.stream_id
	JOIN ingest_sessions s ON s.id = t.session_id
	GROUP BY s.facility_id;
	RETURN NULL;
END
$$});
$p->sql('CREATE TRIGGER bench_chunks_019 AFTER INSERT ON stored_chunks '
    . 'REFERENCING NEW TABLE AS new_chunks FOR EACH STATEMENT EXECUTE '
    . 'FUNCTION bench_chunks_019()');

my $fk = 'facility_storage_delta_facility_id_fkey';
sub set_way {
	my ($w) = @_;
	$p->sql('ALTER TABLE stored_chunks ' . ($w eq 'trigger' ? 'ENABLE'
	    : 'DISABLE') . ' TRIGGER bench_chunks_019');
	$p->sql("ALTER TABLE facility_storage_delta DROP CONSTRAINT IF EXISTS $fk");
	$p->sql("ALTER TABLE facility_storage_delta ADD CONSTRAINT $fk "
	    . 'FOREIGN KEY (facility_id) REFERENCES facilities ON DELETE '
	    . 'CASCADE NOT VALID') if $w ne 'nofk';
}

# Clock ticks of the cluster: its processes and what the postmaster
# reaped (backends that ended).
open my $pf, '<', $s->var . '/pg/postmaster.pid' or die "postmaster.pid: $!\n";
chomp(my $pm = <$pf>);
sub ticks {
	my $t = 0;
	for my $pid ($pm, Xmhub::Stack::descendants($pm)) {
		open my $f, '<', "/proc/$pid/stat" or next;
		my @v = split ' ', ((<$f> // '') =~ /\) (.*)/)[0];
		$t += $v[11] + $v[12] + ($pid == $pm ? $v[13] + $v[14] : 0);
	}
	return $t;
}
my $hz = `getconf CLK_TCK` + 0 || 100;
my @as = $> == 0 ? ('runuser', '-u', 'xmhub', '--') : ();
my $url = $s->setting('XMHUB_DATABASE_URL');

# The cluster's CPU, us, for $n transactions of each of $c clients of
# script $name.
sub pgbench {
	my ($c, $n, $name) = @_;
	my $t0 = ticks();
	my ($st, $out, $err) = run([@as, $pgbench, '-n', '-M', 'prepared',
		'-c', $c, '-j', $c, '-t', $n, '-f', "$dir/$name.sql", $url]);
	die "pgbench ($name): $out$err" if $st != 0;
	return (ticks() - $t0) / $hz * 1e6;
}

my @order = qw(none trigger inline nofk params session);
my (%us, %fold);
for my $r (1 .. $rounds) {
	for my $w ($r % 2 ? @order : reverse @order) {
		set_way($w);
		my $us = pgbench($clients, $n, $w) / ($n * $clients);
		push @{$us{$w}}, $us;
		my $rows = $p->sql('SELECT count(*) FROM facility_storage_delta '
		    . "WHERE facility_id = '$fac'");
		my $fus = pgbench(1, $folds, 'fold') / $folds;
		$p->sql("SELECT count(*) FROM facility_storage_fold('$fac')");
		push @{$fold{$w}}, $fus;
		printf "round %d, %-7s: %.0f us of CPU per statement; the fold: "
		    . "%d delta rows, %.0f us\n", $r, $w, $us, $rows, $fus;
	}
}
sub median { my @v = sort { $a <=> $b } @_; return $v[int(@v / 2)] }
my $floor = median(@{$us{none}});
printf "%-7s: %.0f us of CPU per statement, %.2fx none; the fold %.0f us\n",
    $_, median(@{$us{$_}}), median(@{$us{$_}}) / $floor, median(@{$fold{$_}})
    for @order;
$s->stop;
