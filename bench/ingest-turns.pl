#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# bench/ingest-turns - the HTTP ingest shapes of bench/ingest.pl (the
# cellular batch, 4 streams x 250 f32, 12 KB, posted by wrk at 8, 32 and
# 128 connections, a session per connection and 64 sessions at least,
# and 2 sessions written by 4 connections each), on two stacks in one
# run, this tree's and a baseline tree's, taking turns case by case (the
# order of the two sides swapped each round) so that the shared
# machine's drift hits both alike.  For each case and side: batches/s,
# batches per commit (the stack's xmhub_ingest_commit_batches histogram:
# its sum over its count, moved by the case) and the CPU µs per batch of
# the stack's lighttpd with its FastCGI programs (web), of its PostgreSQL
# (pg) and of wrk; then each round's ratio this/baseline, their median,
# and the medians of each side.
#
# The baseline is a source tree and its build, named by BENCH_BASE_SRC
# and BENCH_BASE_BUILD (main's plain build, say).  BENCH_ENV (NAME=VALUE
# ...) is set on this tree's stack only, BENCH_BASE_ENV on the
# baseline's.  BENCH_ROUNDS (4), BENCH_SECONDS (6) per case.
# Not a test: it prints figures, it asserts nothing.
use strict;
use warnings;
use Xmhub::Cpu qw(tree_cpu);
use Xmhub::Platform;
use Xmhub::Prom qw(prom_samples);
use Xmhub::Test qw(run);
use Xmhub::Wrk qw(wrk_program wrk_turns);

my $rounds = $ENV{BENCH_ROUNDS} || 4;
my $seconds = $ENV{BENCH_SECONDS} || 6;
my %tree = (
	this => [$ENV{XMHUB_SRCDIR}, $ENV{XMHUB_BUILDDIR},
		$ENV{BENCH_ENV} // ''],
	base => [$ENV{BENCH_BASE_SRC} // die("BENCH_BASE_SRC is not set\n"),
		$ENV{BENCH_BASE_BUILD} // die("BENCH_BASE_BUILD is not set\n"),
		$ENV{BENCH_BASE_ENV} // ''],
);
wrk_program();

sub loadavg {
	open(my $f, '<', '/proc/loadavg') or die "/proc/loadavg: $!";
	return (split ' ', scalar <$f>)[0];
}

sub write_file {
	my ($path, $text) = @_;
	open(my $f, '>:raw', $path) or die "$path: $!";
	print $f $text;
	close $f or die "$path: $!";
}

# The cellular batch of bench/ingest.pl: device_id 7, 4 streams of 250
# f32 at 100 Hz from t0; a device's 64 batches 2.5 s apart.
sub cellular {
	my ($t0) = @_;
	my $b = pack('a4 C C n N n', 'XMBP', 1, 1, 1, 7, 4);
	for my $ch (0 .. 3) {
		$b .= pack('n C n', $ch, 1, 250);
		$b .= pack('Q> f>', $t0 + $_ * 10_000, $_ * 0.5) for 0 .. 249;
	}
	return $b;
}
my @batches = map { cellular(1_700_000_000_000_000 + $_ * 2_500_000) }
    0 .. 63;
my $size = length $batches[0];

# The shapes: [name, connections, sessions].
my @shapes = ((map { ["http$_", $_, $_ < 64 ? 64 : $_] } 8, 32, 128),
	['http2x4', 8, 2]);

# Each side: its stack (its own PostgreSQL), a facility, an ingest key,
# the shapes' sessions, and per shape a wrk script whose requests go to
# the sessions in turn as bench/ingest.pl's do (wrk's two threads on
# sessions of their own), a session's n-th request its n-th batch with
# batch_seq base + n, base moved by 4096 each round (never a retry).
my %side;
for my $name (sort keys %tree) {
	my ($src, $build, $env) = @{$tree{$name}};
	local $ENV{XMHUB_SRCDIR} = $src;
	local $ENV{XMHUB_BUILDDIR} = $build;
	my $p = Xmhub::Platform->start(own_db => 1,
		env => {map { split /=/, $_, 2 } split ' ', $env});
	my $fac = $p->facility("bench-$name");
	my $token = $p->token($p->user('facility_admin', $fac), 3600);
	my $key = $p->api_key($token, 'ingest');
	my $s = $p->stack;
	my $tmp = $s->var . '/tmp';
	write_file("$tmp/batches.bin", join '', @batches);
	my %sd = (p => $p, name => $name, key => $key, tmp => $tmp,
		web => $s->running('lighttpd') // die("$name: no lighttpd\n"),
		pg => $s->running('PostgreSQL') // die("$name: no PostgreSQL\n"));
	for my $shape (@shapes) {
		my ($case, $conns, $nses) = @$shape;
		my @sids = map {
			my ($st, $b) = $p->req(POST => '/api/v1/ingest/sessions',
			    key => $key, json => {device_uid => 7, streams => [
				map { {stream_index => $_, name => "ch$_",
				    value_type => 'f32', sample_rate_hz => 100} }
				0 .. 3]});
			die "$name: session: $st\n" if $st != 201;
			$b->{id};
		} 1 .. $nses;
		$sd{paths}{$case} = join '', map {
			"\"/api/v1/ingest/sessions/$_/data\",\n" } @sids;
		$sd{nses}{$case} = $nses;
	}
	$side{$name} = \%sd;
}

# The wrk script of a case on side $sd with batch_seq base $base.
sub script {
	my ($sd, $case, $base) = @_;
	my $path = "$sd->{tmp}/$case.lua";
	write_file($path, <<"LUA" . wrk_turns() . <<'LUA');
local paths = {
$sd->{paths}{$case}}
local nses, size, base = $sd->{nses}{$case}, $size, $base
local file = "$sd->{tmp}/batches.bin"
LUA
-- The 64 bodies, cut from the file of them.
local bodies = {}
local all = assert(io.open(file, "rb")):read("*a")
for j = 0, 63 do
	bodies[j + 1] = all:sub(j * size + 1, (j + 1) * size)
end
function request()
	local s, b = turn()
	local seq = (base + b) % 65536
	local one = bodies[b % 64 + 1]
	return wrk.format("POST", paths[s + 1], nil, one:sub(1, 6)
		.. string.char(math.floor(seq / 256), seq % 256) .. one:sub(9))
end
LUA
	return $path;
}

# The stack's commit histogram now: (commits, batches).
sub commits {
	my ($sd) = @_;
	my ($st, undef, $res) = $sd->{p}->req(GET => '/api/metrics');
	die "$sd->{name}: /api/metrics: $st\n" if $st != 200;
	my $m = prom_samples($res->{content});
	return ($m->{xmhub_ingest_commit_batches_count} // 0,
		$m->{xmhub_ingest_commit_batches_sum} // 0);
}

# One case on one side: {rate, per_commit, web, pg, wrk} (CPU µs per
# batch).
sub measure {
	my ($sd, $case, $conns, $base) = @_;
	my $lua = script($sd, $case, $base);
	my @m0 = commits($sd);
	my @c0 = (tree_cpu($sd->{web}), tree_cpu($sd->{pg}),
		(times)[2] + (times)[3]);
	my ($st, $out, $err) = run([wrk_program(), '-t2', "-c$conns",
		"-d${seconds}s", '-H', 'Content-Type: application/octet-stream',
		'-H', "X-Api-Key: $sd->{key}", '-s', $lua,
		$sd->{p}->stack->url('/')]);
	my @c1 = (tree_cpu($sd->{web}), tree_cpu($sd->{pg}),
		(times)[2] + (times)[3]);
	my @m1 = commits($sd);
	die "wrk: $err" if $st != 0;
	my ($bad) = $out =~ /Non-2xx or 3xx responses: (\d+)/;
	die "$sd->{name} $case: $bad failed answers\n$out" if $bad;
	my ($n) = $out =~ /(\d+) requests in/ or die "wrk: $out";
	my ($rps) = $out =~ /Requests\/sec:\s+([\d.]+)/;
	my %r = (rate => $rps,
		per_commit => $m1[0] > $m0[0]
		    ? ($m1[1] - $m0[1]) / ($m1[0] - $m0[0]) : 0);
	@r{qw(web pg wrk)} = map { ($c1[$_] - $c0[$_]) * 1e6 / $n } 0 .. 2;
	return \%r;
}

sub median {
	my @v = sort { $a <=> $b } @_;
	return @v % 2 ? $v[$#v / 2] : ($v[@v / 2 - 1] + $v[@v / 2]) / 2;
}

printf "%s UTC, load average %s; %d rounds of %d s a case\n",
    scalar gmtime, loadavg(), $rounds, $seconds;
my %got;
for my $round (1 .. $rounds) {
	for my $shape (@shapes) {
		my ($case, $conns) = @$shape;
		for my $name ($round % 2 ? qw(this base) : qw(base this)) {
			local $ENV{XMHUB_SRCDIR} = $tree{$name}[0];
			local $ENV{XMHUB_BUILDDIR} = $tree{$name}[1];
			my $r = measure($side{$name}, $case, $conns, $round * 4096);
			push @{$got{$case}{$name}}, $r;
			printf "round %d %s %s: %.0f/s, %.1f a commit, CPU µs a "
			    . "batch web %.0f pg %.0f wrk %.0f (load %s)\n", $round,
			    $case, $name, @$r{qw(rate per_commit web pg wrk)},
			    loadavg();
		}
	}
}

printf "\n%s UTC, load average %s\n\n", scalar gmtime, loadavg();
print "| case | this/base per round | median | batches/s this / base | "
    . "batches per commit this / base | CPU µs a batch this / base "
    . "(web + pg + wrk) |\n|---|---|---:|---|---|---|\n";
for my $shape (@shapes) {
	my $case = $shape->[0];
	my ($t, $b) = map { $got{$case}{$_} } qw(this base);
	my @ratio = map { $t->[$_]{rate} / $b->[$_]{rate} } 0 .. $#$t;
	my %med = map { my $side = $got{$case}{$_}; ($_ => {map {
		my $k = $_; ($k => median(map { $_->{$k} } @$side)) }
		qw(rate per_commit web pg wrk)}) } qw(this base);
	printf "| %s | %s | %.2f | %.0f / %.0f | %.1f / %.1f | %.0f / %.0f "
	    . "(%.0f + %.0f + %.0f / %.0f + %.0f + %.0f) |\n", $case,
	    join(' ', map { sprintf '%.2f', $_ } @ratio), median(@ratio),
	    $med{this}{rate}, $med{base}{rate}, $med{this}{per_commit},
	    $med{base}{per_commit},
	    (map { $_->{web} + $_->{pg} + $_->{wrk} } @med{qw(this base)}),
	    @{$med{this}}{qw(web pg wrk)}, @{$med{base}}{qw(web pg wrk)};
}
