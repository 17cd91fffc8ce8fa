#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/console - the web console (doc/console.md): bytes of a cold load
# of its first page as served (gzip by mod_deflate) against the files'
# own size, and the time to the first chart of a session of 10 million
# f32 samples against fetching a static file of the same server, in the
# same browser and run (bench/console.mjs drives chromium).  Aims: under
# 150 KB for the first page, the chart in under a second.
#
# Runs from a build tree (make bench-console): a throwaway stack through
# t/lib/Xmhub/Stack.pm, the samples posted as 153 full batches.
use strict;
use warnings;
use HTTP::Tiny;
use JSON::PP;
use Time::HiRes qw(time);
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

local $ENV{CONSOLE_URL} = $s->url('');
local $ENV{CONSOLE_LOGIN} = 'bench@example.org bench-password';
local $ENV{CONSOLE_SESSION} = $sid;
local $ENV{XMHUB_NPM_DIR} = $ENV{XMHUB_NPM_DIR} // "$ENV{XMHUB_SRCDIR}/_build/npm";
open my $run, '-|', 'node', "$ENV{XMHUB_SRCDIR}/bench/console.mjs"
    or die "node: $!";
my $out = do { local $/; <$run> };
close $run or die "bench/console.mjs failed\n";
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
