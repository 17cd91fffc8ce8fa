#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/alarms - what threshold rules cost ingest, and how long an alarm
# takes from its batch's commit to the webhook (doc/alarms.md, issue 31).
#
# Ingest: `xmhub sim --devices D --streams 4 --rate 0` over HTTP for S
# seconds into a facility without rules (the baseline) and into one with
# 100 enabled threshold rules on the session's streams (25 per stream, on
# every device, none crossed: the cost of loading and checking them every
# round), in alternating order, BENCH_ROUNDS rounds; reported: batches/s
# of each and the ratio rules/none (aim >= 0.9).
#
# Latency: BENCH_ALARMS times, a new device's session gets one batch over
# its limit; from the batch's 200 (committed) to the webhook request's
# arrival at a receiver in this process's child (t/lib/Xmhub/Webhook.pm),
# through the alarm runner's passes (XMHUB_ALARM_INTERVAL, 1 s);
# reported: p50, p99 and max, and p99 against the aim of 2 s.
#
# Runs from a build tree (make bench-alarms) on a throwaway stack.
# BENCH_DEVICES (16), BENCH_SECONDS (8), BENCH_ROUNDS (3), BENCH_ALARMS
# (50).
use strict;
use warnings;
use JSON::PP;
use Time::HiRes qw(time sleep);
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Ingest;
use Xmhub::Platform;
use Xmhub::Test qw(xmhub_json);
use Xmhub::Webhook;

my $devices = $ENV{BENCH_DEVICES} || 16;
my $secs = $ENV{BENCH_SECONDS} || 8;
my $rounds = $ENV{BENCH_ROUNDS} || 3;
my $nalarms = $ENV{BENCH_ALARMS} || 50;

my $hook = Xmhub::Webhook->new(secrets => {'/l' => 'latency-secret-0000'});
$hook->start;
# The receiver is on 127.0.0.1 (doc/alarms.md "Where webhooks may go").
my $p = Xmhub::Platform->start(env => {XMHUB_ALARM_PRIVATE_HOSTS => 'true'});
my $s = $p->stack;
$ENV{XMHUB_ENV_FILE} = $s->env_file;
my $url = $s->url('');

sub key_of {
	my ($fac) = @_;
	return xmhub_json(['api-key', 'create', '--facility', $fac, '--name',
		'bench', '--scopes', 'ingest'])->{key};
}

my %fac = (none => $p->facility('Bench none'), rules => $p->facility('Bench rules'));
my %key = map { $_ => key_of($fac{$_}) } keys %fac;
my @streams = qw(sine0 noise1 walk2 counter3);
for my $i (0 .. 99) {
	xmhub_json(['alarm', 'rule-create', '--facility', $fac{rules},
		'--name', "rule $i", '--kind', 'threshold',
		'--stream', $streams[$i % 4], '--op', 'outside',
		'--lo', -1e12 - $i, '--hi', 1e12 + $i, '--for-samples', 3]);
}

my $uid = 1000;
sub sim {
	my ($which) = @_;
	my $r = xmhub_json(['sim', '--url', $url, '--key', $key{$which},
		'--devices', $devices, '--streams', 4, '--rate', 0,
		'--duration', $secs, '--json', '--device-uid', $uid]);
	$uid += $devices;
	die "sim: $r->{errors} errors\n" if $r->{errors};
	return $r->{batches_per_s};
}

my %rate = (none => [], rules => []);
for my $round (1 .. $rounds) {
	for my $which ($round % 2 ? qw(none rules) : qw(rules none)) {
		push @{$rate{$which}}, sim($which);
	}
}
sub median { my @v = sort { $a <=> $b } @_; return $v[$#v / 2] }
my ($none, $rules) = (median(@{$rate{none}}), median(@{$rate{rules}}));
printf "ingest, %d devices x 4 streams, %d s, median of %d rounds:\n",
    $devices, $secs, $rounds;
printf "  no rules   %8.1f batches/s (%s)\n", $none, join(', ', @{$rate{none}});
printf "  100 rules  %8.1f batches/s (%s)\n", $rules, join(', ', @{$rate{rules}});
printf "  ratio      %.3fx (aim >= 0.9x: %s)\n", $rules / $none,
    $rules / $none >= 0.9 ? 'met' : 'not met';
my $checks = $p->sql("SELECT count(*) FROM alarm_rule_state");
print "  (rules in a run afterwards: $checks; alarms: ",
    $p->sql('SELECT count(*) FROM alarms'), ")\n";

# --- commit to webhook ---
my $lf = $p->facility('Bench latency');
my $lt = $p->token($p->user('facility_admin', $lf));
my $in = Xmhub::Ingest->new($p, key_of($lf));
xmhub_json(['alarm', 'rule-create', '--facility', $lf, '--name', 'hot',
	'--kind', 'threshold', '--stream', 's0', '--op', 'above', '--hi', 10]);
xmhub_json(['alarm', 'webhook-create', '--facility', $lf, '--name', 'l',
	'--url', $hook->url('/l'), '--secret', 'latency-secret-0000']);
my @lat;
for my $k (1 .. $nalarms) {
	my $sess = $in->session(5000 + $k, [0, 'f64']);
	my $before = () = $hook->requests;
	$in->send($sess->{id}, $k, [0, 'f64', [[1000, 20]]]);
	my $t0 = time;
	my @r;
	until ((@r = $hook->requests) > $before) {
		die "no webhook request in 30 s\n" if time - $t0 > 30;
		sleep 0.002;
	}
	push @lat, $r[-1]{at} - $t0;
	# Spread the batches over the runner's period.
	sleep rand 0.5;
}
@lat = sort { $a <=> $b } @lat;
my $p99 = $lat[int(0.99 * $#lat + 0.5)];
printf "commit to webhook, %d alarms: p50 %.0f ms, p99 %.0f ms, max %.0f ms; "
    . "p99 / aim (2 s) %.2fx: %s\n", scalar @lat, 1000 * $lat[$#lat / 2],
    1000 * $p99, 1000 * $lat[-1], $p99 / 2, $p99 < 2 ? 'met' : 'not met';
