#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# bench/upload-insert - what an upload's quota check costs PostgreSQL at
# its insert (issue 27; doc/benchmarks.md "bench/upload-insert"): pgbench
# runs the statements of an upload's insert, each transaction rolled back
# (the quota never fills, no row is left), prepared, in turns (A B C ...,
# ... C B A), for a facility without a quota and for one with a quota,
# in these shapes:
#   base      the INSERT alone, as the baseline before the bounds made it
#             (sql/019's uploads_storage trigger included: this tree's);
#   before    the quota read of facility_usage the program made before
#             the body, then the INSERT (with a quota: the read, the fold
#             under the locked row, the INSERT);
#   cte       the INSERT from a CTE reading the facility's quota_bytes,
#             which inserts only without a quota (lib/domain/upload.c);
#             with a quota it inserts nothing, then the fold and the
#             INSERT;
#   function  one call of a PL/pgSQL function (made here) that reads
#             quota_bytes, folds and checks under a quota, and inserts.
# The figure is the CPU of the cluster's processes (the postmaster's own
# and its reaped children's included) per transaction (BEGIN and ROLLBACK
# included alike), medians of the rounds, and each one's ratio to base.
# BENCH_ROUNDS (5), BENCH_STATEMENTS (10000) per run.
# Not a test: it prints figures, it asserts nothing.
use strict;
use warnings;
use File::Temp ();
use Xmhub::Cpu qw(tree_cpu);
use Xmhub::Platform;
use Xmhub::Stack;
use Xmhub::Test qw(run);

my $rounds = $ENV{BENCH_ROUNDS} || 5;
my $n = $ENV{BENCH_STATEMENTS} || 10000;
my ($pgbench) = glob '/usr/lib/postgresql/*/bin/pgbench';
die "pgbench not found (apt-get install postgresql)\n" unless $pgbench;

my $p = Xmhub::Platform->start(own_db => 1);
my $s = $p->stack;
my %fac = (free => $p->facility('insert-free'),
	quota => $p->facility('insert-quota'));
my %key;
for my $f (keys %fac) {
	$p->api_key($p->token($p->user('facility_admin', $fac{$f})), 'upload');
	$key{$f} = $p->sql("SELECT id FROM api_keys WHERE facility_id = "
	    . "'$fac{$f}'");
}
$p->sql("UPDATE facility_storage SET quota_bytes = 1000000000000 WHERE "
    . "facility_id = '$fac{quota}'");
my $dir = File::Temp::tempdir(CLEANUP => 1);
chmod 0755, $dir;

$p->sql(q{CREATE FUNCTION bench_upload_insert(i uuid, f uuid, k uuid,
	name text, fmt text, size bigint, meta jsonb) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	r facility_storage;
	room bigint;
BEGIN
	IF (SELECT quota_bytes FROM facility_storage WHERE facility_id = f)
		IS NOT NULL THEN
		SELECT * INTO r FROM facility_storage_fold(f);
		room := greatest(r.quota_bytes - r.upload_bytes
			- r.sample_bytes, 0);
		IF size > room THEN
			RETURN room;
		END IF;
	END IF;
	INSERT INTO uploads (id, facility_id, api_key_id, original_filename,
		original_format, original_size_bytes, metadata)
	VALUES (i, f, k, name, fmt, size, meta);
	RETURN NULL;
END
$$});

my $cols = 'INSERT INTO uploads (id, facility_id, api_key_id, '
    . 'original_filename, original_format, original_size_bytes, metadata) ';
my $vals = "gen_random_uuid(), '%s'::uuid, '%s'::uuid, 'a.wav'::text, "
    . "'wav'::text, 1044::bigint, '{}'::jsonb";
my $read = 'SELECT quota_bytes, upload_bytes, CASE WHEN quota_bytes IS NULL '
    . "THEN 0 ELSE sample_bytes END FROM facility_usage WHERE facility_id = "
    . "'%s'::uuid";
my $fold = "SELECT quota_bytes, upload_bytes, sample_bytes FROM "
    . "facility_storage_fold('%s'::uuid)";
my %shape = (
	base => ["${cols}VALUES ($vals)"],
	before => [$read, "${cols}VALUES ($vals)"],
	cte => ["WITH s AS (SELECT quota_bytes FROM facility_storage WHERE "
	    . "facility_id = '%s'::uuid) ${cols}SELECT $vals FROM s WHERE "
	    . 's.quota_bytes IS NULL'],
	function => ["SELECT bench_upload_insert($vals)"],
);
my @order = qw(base before cte function);
for my $f (keys %fac) {
	for my $w (@order) {
		my @st = @{$shape{$w}};
		# Under a quota the read is followed by the fold, and the CTE
		# that inserted nothing by the fold and the plain INSERT.
		@st = ($st[0], $fold, $st[1]) if $f eq 'quota' && $w eq 'before';
		@st = (@st, $fold, "${cols}VALUES ($vals)")
		    if $f eq 'quota' && $w eq 'cte';
		my @sql = map {
			my $t = $_;
			my $c = () = $t =~ /%s/g;
			# Each %s names the facility, but the INSERT's second
			# names the key.
			$c == 1 ? sprintf($t, $fac{$f})
			    : $c == 2 ? sprintf($t, $fac{$f}, $key{$f})
			    : sprintf($t, $fac{$f}, $fac{$f}, $key{$f});
		} @st;
		open my $fh, '>', "$dir/$f-$w.sql" or die "$dir/$f-$w.sql: $!\n";
		print $fh join('', "BEGIN;\n", map({ "$_;\n" } @sql),
			"ROLLBACK;\n");
		close $fh;
	}
}

# The cluster's postmaster: tree_cpu() of it is the CPU of its processes
# and of what it reaped (backends that ended).
open my $pf, '<', $s->var . '/pg/postmaster.pid' or die "postmaster.pid: $!\n";
chomp(my $pm = <$pf>);
my @as = $> == 0 ? ('runuser', '-u', 'xmhub', '--') : ();
my $url = $s->setting('XMHUB_DATABASE_URL');

# The cluster's CPU, us per transaction, of $n transactions of script
# $name.  pgbench's backend is counted once the postmaster reaped it (its
# CPU then moves into the postmaster's children's): it is waited for.
sub pgbench {
	my ($name) = @_;
	my %was = map { $_ => 1 } Xmhub::Stack::descendants($pm);
	my $t0 = tree_cpu($pm);
	my ($st, $out, $err) = run([@as, $pgbench, '-n', '-M', 'prepared',
		'-c', 1, '-t', $n, '-f', "$dir/$name.sql", $url]);
	die "pgbench ($name): $out$err" if $st != 0;
	for (1 .. 100) {
		select(undef, undef, undef, 0.05);
		last unless grep { !$was{$_} } Xmhub::Stack::descendants($pm);
	}
	select(undef, undef, undef, 0.1); # a zombie the postmaster reaps
	return (tree_cpu($pm) - $t0) * 1e6 / $n;
}

my %us;
for my $r (1 .. $rounds) {
	for my $f (sort keys %fac) {
		for my $w ($r % 2 ? @order : reverse @order) {
			my $us = pgbench("$f-$w");
			push @{$us{$f}{$w}}, $us;
			printf "round %d, %-5s %-8s: %.0f us of CPU per "
			    . "transaction\n", $r, $f, $w, $us;
		}
	}
}
sub median { my @v = sort { $a <=> $b } @_; return $v[int(@v / 2)] }
for my $f (sort keys %fac) {
	my $floor = median(@{$us{$f}{base}});
	printf "%-5s %-8s: %.0f us of CPU per transaction, %.3fx base\n", $f,
	    $_, median(@{$us{$f}{$_}}), median(@{$us{$f}{$_}}) / $floor
	    for @order;
}
$s->stop;
