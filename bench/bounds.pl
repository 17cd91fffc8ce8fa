#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# bench/bounds - what the tenant bounds cost (issue 27): the same work on
# two stacks in one run, this tree's (the bounds in place: quotas checked
# at upload and ingest, upload bodies authorized before they are read,
# per-facility slots, confined decoders) and a baseline tree's without
# them, measured in turns (A B B A ...) so that the machine's drift hits
# both alike:
#   - GET /api/auth/me with a token: wrk, 16 connections;
#   - uploads of 1 MiB with an API key, one after another (curl);
#   - ingest batches of 2 streams x 500 f32 over HTTP from `xmhub sim`,
#     8 devices, unpaced.
# The medians per side and the ratio this/baseline are printed; the aim
# is within 3%.  The baseline is a source tree and its build, named by
# BENCH_BASE_SRC and BENCH_BASE_BUILD (a worktree of the commit before
# the bounds, built with the same flags: doc/benchmarks.md says which).
# Not a test: it prints figures, it asserts nothing.
use strict;
use warnings;
use File::Temp qw(tempdir);
use JSON::PP;
use Time::HiRes qw(time);
use Xmhub::Platform;
use Xmhub::Test qw(run);
use Xmhub::Wrk qw(wrk wrk_program);

my $rounds = $ENV{BENCH_ROUNDS} || 3;
my $seconds = $ENV{BENCH_SECONDS} || 5;
my $uploads = $ENV{BENCH_UPLOADS} || 20;
my %tree = (
	this => [$ENV{XMHUB_SRCDIR}, $ENV{XMHUB_BUILDDIR}],
	base => [$ENV{BENCH_BASE_SRC} // die("BENCH_BASE_SRC is not set\n"),
		$ENV{BENCH_BASE_BUILD} // die("BENCH_BASE_BUILD is not set\n")],
);
wrk_program();
my $cli = "$ENV{XMHUB_BUILDDIR}/cli/xmhub";
my $dir = tempdir(CLEANUP => 1);
chmod 0755, $dir;
run(['dd', 'if=/dev/urandom', "of=$dir/body.bin", 'bs=1M', 'count=1',
    'status=none']);

# Each side: its stack (its own PostgreSQL, migrated from its own sql/),
# a facility, a user's token, an API key for uploads and ingest.
my %side;
for my $name (sort keys %tree) {
	local $ENV{XMHUB_SRCDIR} = $tree{$name}[0];
	local $ENV{XMHUB_BUILDDIR} = $tree{$name}[1];
	my $p = Xmhub::Platform->start(own_db => 1);
	my $fac = $p->facility("bench-$name");
	my $token = $p->token($p->user('facility_admin', $fac), 3600);
	$side{$name} = {p => $p, token => $token, uid => 3_000_000,
		key => $p->api_key($token, 'upload', 'ingest')};
}

sub median { my @v = sort { $a <=> $b } @_; return $v[int(@v / 2)] }

# The three measures of one side, once.
sub measure {
	my ($name) = @_;
	my $sd = $side{$name};
	my $s = $sd->{p}->stack;
	my %r;
	($r{me}) = wrk($s->url('/api/auth/me'), seconds => $seconds,
		args => ['-H', "Authorization: Bearer $sd->{token}"]);
	my $t0 = time;
	for (1 .. $uploads) {
		my ($st, $out) = run(['curl', '-sS', '-o', '/dev/null', '-w',
			'%{http_code}', '-H', "X-Api-Key: $sd->{key}", '-F',
			"file=\@$dir/body.bin;filename=b.wav",
			$s->url('/api/v1/uploads')]);
		die "upload ($name): $out\n" if $out !~ /^20[01]$/;
	}
	$r{uploads} = $uploads / (time - $t0);
	# Their transcodes (random bytes: each fails at its probe) are the
	# runner's work, not the next measure's: they end before it starts.
	for (1 .. 1200) {
		last if $sd->{p}->sql('SELECT count(*) FROM transcode_jobs '
		    . "WHERE status IN ('queued', 'running') AND run_after "
		    . '<= now()') == 0;
		select(undef, undef, undef, 0.1);
	}
	my ($st, $out, $err) = run([$cli, 'sim', '--url', $s->url(''), '--key',
		$sd->{key}, '--devices', 8, '--streams', 2, '--rate', 0,
		'--batch', 500, '--duration', $seconds, '--device-uid',
		$sd->{uid}, '--json']);
	die "xmhub sim ($name): $err" if $st != 0;
	$sd->{uid} += 8;
	$r{batches} = decode_json($out)->{batches_per_s};
	return \%r;
}

my %got;
for my $round (1 .. $rounds) {
	for my $name ($round % 2 ? qw(this base) : qw(base this)) {
		my $r = measure($name);
		push @{$got{$name}{$_}}, $r->{$_} for keys %$r;
		printf "round %d, %s: auth/me %.0f req/s, uploads %.1f/s, "
		    . "ingest %.0f batches/s\n", $round, $name, $r->{me},
		    $r->{uploads}, $r->{batches};
	}
}
for my $m (['me', 'GET /api/auth/me, req/s'],
    ['uploads', 'uploads of 1 MiB, per s'],
    ['batches', 'ingest batches (2 x 500 f32, 8 devices), per s']) {
	my ($k, $what) = @$m;
	my ($a, $b) = (median(@{$got{this}{$k}}), median(@{$got{base}{$k}}));
	printf "%s: with the bounds %.1f, baseline %.1f, ratio %.3f\n", $what,
	    $a, $b, $b > 0 ? $a / $b : 0;
}
for my $name (sort keys %side) {
	local $ENV{XMHUB_SRCDIR} = $tree{$name}[0];
	local $ENV{XMHUB_BUILDDIR} = $tree{$name}[1];
	$side{$name}{p}->stack->stop;
}
