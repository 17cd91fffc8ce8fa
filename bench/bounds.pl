#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# bench/bounds - what the tenant bounds cost (issue 27): the same work on
# two stacks in one run, this tree's (the bounds in place: quotas checked
# at upload and ingest, upload bodies authorized before they are read,
# per-facility slots, confined decoders) and a baseline tree's without
# them, measured in turns (A B B A ...) so that the machine's drift hits
# both alike:
#   - GET /api/auth/me with a token: wrk, 16 connections;
#   - uploads of 1 MiB with an API key, one after another (one curl, its
#     connection kept), with a Content-Length and chunked (this tree
#     asks the uploads' authorizer before lighttpd spools the body, the
#     uploads line's spool; the baseline spools it unasked);
#   - ingest batches of 2 streams x 500 f32 over HTTP from `xmhub sim`,
#     8 devices, unpaced.
# For each: the rate, and the CPU µs per request of each part, read from
# /proc (t/lib/Xmhub/Cpu.pm): the stack's lighttpd with its FastCGI
# programs (web), its PostgreSQL (the postmaster and its backends) and
# the load generator (wrk, curl or xmhub sim: this process's reaped
# children).  On this 2-core machine shared with other work a rate moves
# with the load by more than the aim; the CPU a request takes much less.
# The transcode runner of each stack is stopped: the uploads' jobs (of
# random bytes) stay queued, its work is no part of the measures.
# The medians per side and the ratios this/baseline are printed; the aim
# is within 3%.
#
# Then what each part of this tree's upload path costs, the uploads
# measured again on this tree's stack restarted in turns (their order
# rotated each round) with lighttpd's configuration made from a copy of
# httpd-conf/programs changed for the measure only:
#   - authorizer: the uploads' line without authorize=uploads nor spool,
#     the upload size line without stream (every body spooled unasked,
#     as the baseline does);
#   - streamed: the uploads' line without spool (a body with a
#     Content-Length streamed to the program, its key checked by the
#     program first: this tree before the spool option);
#   - uncounted: the default configuration, sql/019's uploads_storage
#     trigger disabled on this stack's database while it is measured (an
#     upload not counted into its facility's facility_storage row);
# and the quota read the uploads' authorizer makes for an upload with a
# Content-Length before its body (the program checks at the insert only,
# bench/upload-insert; lib/domain/quota.c read_sql: facility_usage, the
# samples' bytes summed only under a quota) run by pgbench, prepared, on
# this stack's database next to SELECT 1 and to the read that sums them
# for every facility (summed, as before): PostgreSQL's and pgbench's CPU
# per statement.
#
# The baseline is a source tree and its build, named by BENCH_BASE_SRC
# and BENCH_BASE_BUILD (a worktree of the commit before the bounds, built
# with the same flags: doc/benchmarks.md says which).  BENCH_ROUNDS (3),
# BENCH_SECONDS (5), BENCH_UPLOADS (100) per measure.
# Not a test: it prints figures, it asserts nothing.
use strict;
use warnings;
use File::Temp qw(tempdir);
use JSON::PP;
use Time::HiRes qw(time);
use Xmhub::Cpu qw(tree_cpu);
use Xmhub::Platform;
use Xmhub::Test qw(run);
use Xmhub::Variant qw(variant);
use Xmhub::Wrk qw(wrk wrk_program);

my $rounds = $ENV{BENCH_ROUNDS} || 3;
my $seconds = $ENV{BENCH_SECONDS} || 5;
my $uploads = $ENV{BENCH_UPLOADS} || 100;
my %tree = (
	this => [$ENV{XMHUB_SRCDIR}, $ENV{XMHUB_BUILDDIR}],
	base => [$ENV{BENCH_BASE_SRC} // die("BENCH_BASE_SRC is not set\n"),
		$ENV{BENCH_BASE_BUILD} // die("BENCH_BASE_BUILD is not set\n")],
);
wrk_program();
my ($pgbench) = glob '/usr/lib/postgresql/*/bin/pgbench';
die "pgbench not found (apt-get install postgresql)\n" unless $pgbench;
my $cli = "$ENV{XMHUB_BUILDDIR}/cli/xmhub";
my $dir = tempdir(CLEANUP => 1);
chmod 0755, $dir;
run(['dd', 'if=/dev/urandom', "of=$dir/body.bin", 'bs=1M', 'count=1',
    'status=none']);

my %variant = (
	default => $tree{this}[0],
	authorizer => variant("$dir/no-authorizer", programs => sub {
		$_[0] =~ s/^(fastcgi uploads .*?) authorize=uploads spool$/$1/m
		    && $_[0] =~ s/^(size upload \d+) stream$/$1/m }),
	streamed => variant("$dir/streamed", programs =>
	    sub { $_[0] =~ s/^(fastcgi uploads .*) spool$/$1/m }),
);

# Each side: its stack (its own PostgreSQL, migrated from its own sql/),
# a facility, a user's token, an API key for uploads and ingest.
my %side;
for my $name (sort keys %tree) {
	local $ENV{XMHUB_SRCDIR} = $tree{$name}[0];
	local $ENV{XMHUB_BUILDDIR} = $tree{$name}[1];
	my $p = Xmhub::Platform->start(own_db => 1);
	my $fac = $p->facility("bench-$name");
	my $token = $p->token($p->user('facility_admin', $fac), 3600);
	$side{$name} = {p => $p, name => $name, fac => $fac, token => $token,
		uid => 3_000_000,
		key => $p->api_key($token, 'upload', 'ingest')};
	settle($side{$name});
	warm($side{$name});
}

# settle($sd): the stack's transcode runner stopped, and its alarm
# runner where it has one (the baseline predates alarms: its passes, a
# second apart, are PostgreSQL CPU the bounds do not spend); the pids
# whose CPU is read: lighttpd's and the postmaster's.
sub settle {
	my ($sd) = @_;
	my $s = $sd->{p}->stack;
	for my $d ('transcode', $s->running('alarm') ? 'alarm' : ()) {
		$s->stop_daemon($d) or die "$sd->{name}: $d runs\n";
	}
	for (['web', 'lighttpd'], ['pg', 'PostgreSQL']) {
		$sd->{$_->[0]} = $s->running($_->[1])
		    // die "$sd->{name}: $_->[1] is not running\n";
	}
}

sub median { my @v = sort { $a <=> $b } @_; return $v[int(@v / 2)] }

# CPU seconds so far of the side's web server with its programs, of its
# PostgreSQL, and of this process's reaped children (the load generator).
sub cpu_now {
	my ($sd) = @_;
	return (tree_cpu($sd->{web}), tree_cpu($sd->{pg}),
		(times)[2] + (times)[3]);
}

# cpu_case($sd, $work): $work->() does the requests and returns (their
# rate, how many); [rate, CPU µs per request of web, postgres, client].
sub cpu_case {
	my ($sd, $work) = @_;
	my @c0 = cpu_now($sd);
	my ($rate, $n) = $work->();
	my @c1 = cpu_now($sd);
	return [$rate, map { ($c1[$_] - $c0[$_]) * 1e6 / $n } 0 .. 2];
}

# $n uploads (default $uploads) of body.bin, chunked or with a
# Content-Length, one after another by one curl (its connection kept);
# (per second, how many).
sub upload_run {
	my ($sd, $chunked, $n) = @_;
	$n //= $uploads;
	my @one = ('-sS', '-o', '/dev/null', '-w', '%{http_code}\n', '-H',
		"X-Api-Key: $sd->{key}",
		$chunked ? ('-H', 'Transfer-Encoding: chunked') : (),
		'-F', "file=\@$dir/body.bin;filename=b.wav",
		$sd->{p}->stack->url('/api/v1/uploads'));
	my $t0 = time;
	my ($st, $out, $err) = run(['curl', @one,
		map { ('--next', @one) } 2 .. $n]);
	my $t = time - $t0;
	my $ok = () = $out =~ /^20[01]$/mg;
	die "uploads ($sd->{name}): $ok of $n stored\n$out$err" if $ok != $n;
	return ($n / $t, $n);
}

# warm($sd): a few requests of each kind, so that every FastCGI process
# the measures use has started and connected to PostgreSQL.
sub warm {
	my ($sd) = @_;
	upload_run($sd, $_, 8) for 0, 1;
}

my @cases = (
	['me', 'GET /api/auth/me (wrk, 16 connections)'],
	['uploads', 'uploads of 1 MiB with a Content-Length'],
	['chunked', 'uploads of 1 MiB, chunked'],
	['batches', 'ingest batches (2 x 500 f32, 8 devices, xmhub sim)'],
);

# The cases on one side, once: {case => [rate, CPU µs of each part]}.
sub measure {
	my ($sd) = @_;
	my $s = $sd->{p}->stack;
	my %r;
	$r{me} = cpu_case($sd, sub {
		my ($rps) = wrk($s->url('/api/auth/me'), seconds => $seconds,
			args => ['-H', "Authorization: Bearer $sd->{token}"]);
		return ($rps, $rps * $seconds);
	});
	$r{uploads} = cpu_case($sd, sub { upload_run($sd, 0) });
	$r{chunked} = cpu_case($sd, sub { upload_run($sd, 1) });
	$r{batches} = cpu_case($sd, sub {
		my ($st, $out, $err) = run([$cli, 'sim', '--url', $s->url(''),
			'--key', $sd->{key}, '--devices', 8, '--streams', 2,
			'--rate', 0, '--batch', 500, '--duration', $seconds,
			'--device-uid', $sd->{uid}, '--json']);
		die "xmhub sim ($sd->{name}): $err" if $st != 0;
		$sd->{uid} += 8;
		my $j = decode_json($out);
		return ($j->{batches_per_s}, $j->{batches});
	});
	return \%r;
}

sub total { my ($r) = @_; my $t = 0; $t += $_ for @$r[1 .. 3]; return $t }

my %got;
for my $round (1 .. $rounds) {
	for my $name ($round % 2 ? qw(this base) : qw(base this)) {
		local $ENV{XMHUB_SRCDIR} = $tree{$name}[0];
		local $ENV{XMHUB_BUILDDIR} = $tree{$name}[1];
		my $r = measure($side{$name});
		push @{$got{$name}{$_}}, $r->{$_} for keys %$r;
		printf "round %d, %s: %s\n", $round, $name, join(', ',
		    map { sprintf '%s %.1f/s %.0f µs', $_->[0],
			$r->{$_->[0]}[0], total($r->{$_->[0]}) } @cases);
	}
}

# The upload path's parts: this tree's stack restarted with each
# variant's configuration in turns, the order rotated each round so that
# each takes each place (a place in the turn can cost of its own).
my $this = $side{this};
my %part;
my @configs = qw(default authorizer streamed uncounted);
$variant{uncounted} = $variant{default};
my @order = @configs;
sub counting {
	my ($how) = @_;
	$this->{p}->sql("ALTER TABLE uploads $how TRIGGER uploads_storage");
}
for my $round (1 .. $rounds) {
	for my $v (@order) {
		local $ENV{XMHUB_SRCDIR} = $variant{$v};
		$this->{p}->stack->restart;
		settle($this);
		counting('DISABLE') if $v eq 'uncounted';
		warm($this);
		for my $chunked (0, 1) {
			my $r = cpu_case($this, sub { upload_run($this, $chunked) });
			push @{$part{$v}[$chunked]}, $r;
			printf "round %d, %s, %s: %.1f/s, %.0f µs\n", $round, $v,
			    $chunked ? 'chunked' : 'Content-Length', $r->[0],
			    total($r);
		}
		counting('ENABLE') if $v eq 'uncounted';
	}
	push @order, shift @order;
}

# The quota read against SELECT 1, by pgbench on this side's database.
my $usage = "FROM facility_usage WHERE facility_id = '$this->{fac}'::uuid";
my %read = (floor => 'SELECT 1',
	summed => "SELECT quota_bytes, upload_bytes, sample_bytes $usage",
	quota => 'SELECT quota_bytes, upload_bytes, CASE WHEN quota_bytes IS '
	    . "NULL THEN 0 ELSE sample_bytes END $usage");
my @as = $> == 0 ? ('runuser', '-u', 'xmhub', '--') : ();
my $url = $this->{p}->stack->setting('XMHUB_DATABASE_URL');
my $statements = 5000;
my %stmt;
for my $round (1 .. $rounds) {
	for my $k (sort keys %read) {
		open my $f, '>', "$dir/$k.sql" or die "$dir/$k.sql: $!\n";
		print $f "$read{$k};\n";
		close $f;
		my $r = cpu_case($this, sub {
			my ($st, $out, $err) = run([@as, $pgbench, '-n', '-M',
				'prepared', '-c', 1, '-t', $statements, '-f',
				"$dir/$k.sql", $url]);
			die "pgbench ($k): $out$err" if $st != 0;
			return (0, $statements);
		});
		push @{$stmt{$k}}, $r;
	}
}
my ($deltas, $active) = split /\|/, $this->{p}->sql('SELECT (SELECT '
    . 'count(*) FROM facility_storage_delta WHERE facility_id = '
    . "'$this->{fac}'), (SELECT count(*) FROM ingest_sessions WHERE "
    . "facility_id = '$this->{fac}' AND status = 'active')");

# Medians of a list of [rate, web, postgres, client]: each column's, and
# the total's.
sub medians {
	my @runs = @_;
	return ((map { my $i = $_; median(map { $_->[$i] } @runs) } 0 .. 3),
		median(map { total($_) } @runs));
}

printf "\nbench/bounds: %d rounds, %d s per rate, %d uploads per measure; "
    . "medians, the ratios' range over the rounds in brackets\n", $rounds,
    $seconds, $uploads;
print "CPU µs per request (web: lighttpd and its FastCGI programs; "
    . "postgres: the postmaster and its backends; client: wrk, curl or "
    . "xmhub sim):\n";
printf "%-48s %-5s %9s %8s %8s %8s %8s\n", 'case', 'side', 'rate', 'web',
    'postgres', 'client', 'total';
for my $c (@cases) {
	my ($k, $what) = @$c;
	for my $name (qw(this base)) {
		printf "%-48s %-5s %9.1f %8.0f %8.0f %8.0f %8.0f\n", $what,
		    $name, medians(@{$got{$name}{$k}});
	}
	my @rate = map { $got{this}{$k}[$_][0] / $got{base}{$k}[$_][0] }
	    0 .. $rounds - 1;
	my @cpu = map { total($got{this}{$k}[$_]) / total($got{base}{$k}[$_]) }
	    0 .. $rounds - 1;
	my @r = (median(map { $_->[0] } @{$got{this}{$k}})
		/ median(map { $_->[0] } @{$got{base}{$k}}),
	    (sort { $a <=> $b } @rate)[0, -1],
	    median(map { total($_) } @{$got{this}{$k}})
		/ median(map { total($_) } @{$got{base}{$k}}),
	    (sort { $a <=> $b } @cpu)[0, -1]);
	printf "%-48s ratio this/base: rate %.3f [%.3f-%.3f], CPU per "
	    . "request %.3f [%.3f-%.3f]\n", '', @r;
}
print "\nthis tree's uploads, CPU µs per upload by configuration "
    . "(default; authorizer: without authorize=uploads, every body "
    . "spooled unasked; streamed: without spool, a body with a "
    . "Content-Length streamed; uncounted: without the "
    . "uploads_storage trigger):\n";
printf "%-15s %-11s %9s %8s %8s %8s %8s %8s\n", 'body', 'config', 'rate',
    'web', 'postgres', 'client', 'total', '-default';
for my $chunked (0, 1) {
	my @def = medians(@{$part{default}[$chunked]});
	for my $v (@configs) {
		my @m = medians(@{$part{$v}[$chunked]});
		printf "%-15s %-11s %9.1f %8.0f %8.0f %8.0f %8.0f %8.0f\n",
		    $chunked ? 'chunked' : 'Content-Length', $v, @m,
		    $m[4] - $def[4];
	}
}
printf "\nthe authorizer's quota read before an upload's body (pgbench, "
    . "prepared, one client; the facility has %d delta rows, %d active "
    . "sessions), CPU µs per statement:\n", $deltas, $active;
printf "%-10s %8s %8s %8s\n", 'statement', 'postgres', 'pgbench', 'total';
for my $k (qw(floor summed quota)) {
	my @m = medians(@{$stmt{$k}});
	printf "%-10s %8.0f %8.0f %8.0f\n", $k eq 'floor' ? 'SELECT 1' : $k,
	    @m[2, 3], $m[2] + $m[3];
}
for my $name (sort keys %side) {
	local $ENV{XMHUB_SRCDIR} = $tree{$name}[0];
	local $ENV{XMHUB_BUILDDIR} = $tree{$name}[1];
	$side{$name}{p}->stack->stop;
}
