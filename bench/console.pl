#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/console - the web console (doc/console.md): bytes of a cold load
# of its first page as served (gzip by mod_deflate) against the files'
# own size, and the time to the first chart of a session of 10 million
# f32 samples against fetching a static file of the same server, and the
# overview's first paint with 50 devices and 10 active sessions fed by
# `xmhub sim` against the first paint of the Tags page (one small list)
# in the same tab, and the bytes of a first load that signs in and
# paints the overview, in the same browser and run (bench/console.mjs
# drives chromium).  Aims (issue 30): under 150 KB for the first load,
# the chart and the overview in under a second.
#
# Runs from a build tree (make bench-console): a throwaway stack through
# t/lib/Xmhub/Stack.pm, the samples posted as 153 full batches (fewer
# with BENCH_SAMPLES); 40 devices registered through the API and 10
# made by `xmhub sim --devices 10`, which feeds their sessions (2 f32
# streams at 100 Hz each) while the browser measures, and is stopped by
# its pid after.
use strict;
use warnings;
use HTTP::Tiny;
use JSON::PP;
use Time::HiRes qw(time sleep);
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Stack;
use Xmhub::Test qw(xmhub_json);
use Xmhub::XMBP qw(batch);

binmode STDOUT, ":encoding(UTF-8)";
my $samples = $ENV{BENCH_SAMPLES} || 10_000_000;
my $s = Xmhub::Stack->start;
$ENV{XMHUB_ENV_FILE} = $s->env_file;
delete $ENV{XMHUB_DATABASE_URL};

sub cli { my ($stdin, @args) = @_; return xmhub_json(\@args, $stdin) }
my $fac = cli(undef, qw(facility create --name Bench --slug bench))->{id};
cli("bench-password\n", 'user', 'create', '--email', 'bench@example.org',
	'--password', '-', '--role', 'facility_admin', '--facility', $fac);
my $key = cli(undef, 'api-key', 'create', '--facility', $fac, '--name',
	'bench')->{key};

my $http = HTTP::Tiny->new(timeout => 120);
my $r = $http->post($s->url('/api/v1/ingest/sessions'), {
	headers => {'content-type' => 'application/json', 'x-api-key' => $key},
	content => encode_json({device_uid => 1, name => 'ten million',
		streams => [{stream_index => 0, name => 'sine',
			value_type => 'f32'}]})});
die "session: $r->{status} $r->{content}\n" if $r->{status} != 201;
my $sid = decode_json($r->{content})->{id};

# 65535 samples a batch (the most a stream block holds), 1 kHz.
my $t0 = time;
my ($sent, $seq) = (0, 0);
while ($sent < $samples) {
	my $n = $samples - $sent < 65535 ? $samples - $sent : 65535;
	my @smp = map { my $ts = ($sent + $_) * 1000;
		[$ts, sin($ts / 3e7) + 0.1 * sin($ts / 1e5)] } 0 .. $n - 1;
	my $res = $http->post($s->url("/api/v1/ingest/sessions/$sid/data"), {
		headers => {'content-type' => 'application/octet-stream',
			'x-api-key' => $key},
		content => batch($seq++ % 65536, undef, [0, 'f32', \@smp])});
	die "batch $seq: $res->{status} $res->{content}\n" if $res->{status} != 200;
	$sent += $n;
}
my $ingest = time - $t0;
$r = $http->post($s->url("/api/v1/ingest/sessions/$sid/close"),
	{headers => {'x-api-key' => $key}});
die "close: $r->{status}\n" if $r->{status} != 200;

# Plain HTTP: one whole-stream bucketed read, as one bucket (added up
# from the chunks' stored aggregates), as the console's first read
# (buckets of 2^20 us from 0: on the grid of stored aggregates) and in
# buckets of 10^6 us (off the grid: every chunk decoded, as before the
# aggregates); the median of three each.
$r = $http->post($s->url('/api/auth/login'), {
	headers => {'content-type' => 'application/json'},
	content => encode_json({email => 'bench@example.org',
		password => 'bench-password'})});
die "login: $r->{status}\n" if $r->{status} != 200;
my $tok = decode_json($r->{content})->{access_token};
sub read_ms {
	my ($q) = @_;
	my @ms;
	for (1 .. 3) {
		my $t = time;
		my $res = $http->get($s->url("/api/v1/metadata/sessions/$sid/"
			. "streams/0/samples?$q"),
			{headers => {authorization => "Bearer $tok"}});
		die "read $q: $res->{status}\n" if $res->{status} != 200;
		push @ms, (time - $t) * 1000;
	}
	return (sort { $a <=> $b } @ms)[1];
}
my $one = read_ms('bucket_us=1099511627776');
my $fine = read_ms('bucket_us=1048576&limit=100000');
my $off = read_ms('bucket_us=1000000&limit=100000');

# The overview's fleet: 40 devices registered, 10 more made by `xmhub
# sim`, whose sessions stay active while the browser measures.
for my $i (1 .. 40) {
	$r = $http->post($s->url('/api/v1/devices'), {
		headers => {'content-type' => 'application/json',
			authorization => "Bearer $tok"},
		content => encode_json({device_uid => 5000 + $i,
			name => "bench device $i"})});
	die "device $i: $r->{status} $r->{content}\n" if $r->{status} != 201;
}
my $sim = fork // die "fork: $!";
if ($sim == 0) {
	open STDOUT, '>', '/dev/null' or die "/dev/null: $!";
	exec $ENV{XMHUB_BIN}, 'sim', '--url', $s->url(''), '--key', $key,
	    '--devices', 10, '--streams', 2, '--rate', 100, '--duration', 900,
	    '--device-uid', 6000 or die "exec: $!";
}
END { kill 'TERM', $sim if $sim; }
my $active = 0;
for (1 .. 300) {
	my $res = $http->get($s->url('/api/v1/metadata/sessions?status=active'),
		{headers => {authorization => "Bearer $tok"}});
	$active = decode_json($res->{content})->{total} if $res->{status} == 200;
	last if $active >= 10;
	sleep 0.2;
}
die "xmhub sim started $active sessions, not 10\n" if $active < 10;

local $ENV{CONSOLE_URL} = $s->url('');
local $ENV{CONSOLE_LOGIN} = 'bench@example.org bench-password';
local $ENV{CONSOLE_SESSION} = $sid;
local $ENV{XMHUB_NPM_DIR} = $ENV{XMHUB_NPM_DIR} // "$ENV{XMHUB_SRCDIR}/_build/npm";
open my $run, '-|', 'node', "$ENV{XMHUB_SRCDIR}/bench/console.mjs"
    or die "node: $!";
my $out = do { local $/; <$run> };
close $run or die "bench/console.mjs failed\n";
kill 'TERM', $sim;
waitpid $sim, 0;
$sim = 0;
my $b = decode_json($out);
my $fp = $b->{first_page};
printf "session: %d f32 samples in %d batches, posted in %.1f s\n",
    $samples, $seq, $ingest;
printf "first page, cold: %d requests, %.1f KB on the wire (%.1f KB of "
    . "files: %.2f of it), %.0f ms; aim < 150 KB\n", $fp->{requests},
    $fp->{wire} / 1000, $fp->{body} / 1000, $fp->{wire} / ($fp->{body} || 1),
    $fp->{ms};
printf "baseline, a static file cold (vendor/uplot.js): %.1f KB on the "
    . "wire, %.0f ms\n", $b->{static_file}{wire} / 1000, $b->{static_file}{ms};
printf "first chart of the session: %.0f ms the first time (uPlot "
    . "loaded), median %.0f ms of %d; aim < 1000 ms (%s)\n",
    $b->{chart_first_ms}, $b->{chart_median_ms}, scalar @{$b->{chart_ms}},
    $b->{chart_info};
printf "HTTP, the whole stream as one bucket (stored aggregates): %.0f ms; "
    . "in buckets of 2^20 us (on the grid): %.0f ms; in buckets of 10^6 "
    . "us (off the grid, decoded): %.0f ms; decoded / grid = %.1f\n",
    $one, $fine, $off, $off / ($fine || 1);
printf "static fetch in the same page (median): %.1f ms; chart / static "
    . "= %.1f\n", $b->{static_fetch_median_ms},
    $b->{chart_median_ms} / ($b->{static_fetch_median_ms} || 1);
my $ov = $b->{overview};
printf "overview, 50 devices and 10 active sessions (xmhub sim): first "
    . "paint after a reload, median %.0f ms of %d (%s); aim < 1000 ms\n",
    $ov->{median_ms}, scalar @{$ov->{ms}}, join(' ', map { sprintf '%.0f', $_ }
    @{$ov->{ms}});
printf "baseline, the Tags page after a reload in the same tab: median "
    . "%.0f ms; overview / tags = %.2f\n", $ov->{tags_median_ms},
    $ov->{median_ms} / ($ov->{tags_median_ms} || 1);
printf "first load, cold, signing in to the painted overview: %d requests, "
    . "%.1f KB on the wire (%.1f KB decoded), %.0f ms; aim < 150 KB\n",
    $ov->{first_load}{requests}, $ov->{first_load}{wire} / 1000,
    $ov->{first_load}{body} / 1000, $ov->{first_load}{ms};
