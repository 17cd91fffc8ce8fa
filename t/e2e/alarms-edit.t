#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Alarm rules and webhook endpoints changed in place (doc/alarms.md
# "Changing rules and endpoints"), on a real stack with a webhook
# receiver (t/lib/Xmhub/Webhook.pm):
# - a paused threshold rule raises nothing from data over its limit, and
#   raises again once resumed (ingest's cache of the rules sees both);
# - a threshold moved up: data over the old limit raises nothing, over
#   the new one an alarm;
# - the same checks as a creation (400), kind and facility fixed (409),
#   another facility's rule or endpoint 403 (as every route's, the API
#   contract's), a facility's user 403, no such rule 404;
# - an endpoint's new URL gets the next event, a rotated secret signs
#   it, a disabled endpoint gets nothing until it is enabled again;
# - `xmhub alarm rule-update` and `webhook-update`.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(sleep time);
use Xmhub::Ingest;
use Xmhub::Platform qw(is_error);
use Xmhub::Test qw(xmhub xmhub_json within);
use Xmhub::Webhook;

my %secret = ('/old' => 'old-secret-0000-0000', '/new' => 'new-secret-0000-0000');
my $hook = Xmhub::Webhook->new(secrets => \%secret);
$hook->start;
my $p = Xmhub::Platform->start(env => {XMHUB_ALARM_RETRY_BASE => 1,
	XMHUB_ALARM_PRIVATE_HOSTS => 'true'});
$ENV{XMHUB_ENV_FILE} = $p->stack->env_file;

my $fac = $p->facility('Edit A');
my $admin = $p->token($p->user('facility_admin', $fac));
my $in = Xmhub::Ingest->new($p, $p->api_key($admin, 'ingest'));
my $session = $in->session(7, [0, 'f64'])->{id};
my $other = $p->token($p->user('facility_admin', $p->facility('Edit B')));

my ($seq, $ts) = (0, 1_000_000);
# One sample of value $v to the session's stream s0.
sub sample { $in->send($session, ++$seq, [0, 'f64', [[$ts += 1000, $_[0]]]]) }

# The facility's alarms that are not cleared.
sub open_alarms {
	my (undef, $b) = $p->req(GET => '/api/v1/alarms', token => $admin);
	return grep { $_->{state} ne 'cleared' } @$b;
}

# Clears the open alarms, so that the next crossing raises a new one.
sub clear_all {
	$p->req(POST => "/api/v1/alarms/$_->{id}/clear", token => $admin)
	    for open_alarms();
}

sub patch_rule {
	my ($id, %json) = @_;
	return $p->req(PATCH => "/api/v1/alarm-rules/$id", token => $admin,
		json => \%json);
}

my ($st, $rule) = $p->req(POST => '/api/v1/alarm-rules', token => $admin,
	json => {name => 'hot', kind => 'threshold', stream_name => 's0',
		op => 'above', hi => 30});
is($st, 201, 'a threshold rule above 30');
my ($wst, $hookrow) = $p->req(POST => '/api/v1/webhooks', token => $admin,
	json => {name => 'pager', url => $hook->url('/old'),
		secret => $secret{'/old'}});
is($wst, 201, 'an endpoint');

# --- pause and resume ---
my $b;
($st, $b) = patch_rule($rule->{id}, enabled => JSON::PP::false);
is($st, 200, 'the rule paused: 200');
ok(!$b->{enabled}, 'enabled false');
sample(40);
sleep 1;
is(scalar(open_alarms()), 0, 'a paused rule raises nothing');
($st, $b) = patch_rule($rule->{id}, enabled => JSON::PP::true);
ok($b->{enabled}, 'resumed');
sample(41);
my @al = open_alarms();
is(scalar(@al), 1, 'a resumed rule raises again');
is($al[0]{rule_id}, $rule->{id}, 'its alarm');
ok(within(5, sub { scalar grep { $_->{path} eq '/old' } $hook->requests }),
	'the endpoint gets the event');
ok((grep { $_->{path} eq '/old' } $hook->requests)[0]{valid},
	'signed with its secret');

# --- a threshold moved ---
clear_all();
($st, $b) = patch_rule($rule->{id}, hi => 50, severity => 'critical',
	name => 'very hot');
is($st, 200, 'the limit moved to 50: 200');
is($b->{hi}, 50, 'hi 50');
is($b->{severity}, 'critical', 'severity changed');
is($b->{name}, 'very hot', 'name changed');
is($b->{op}, 'above', 'what was not given is kept');
sample(45);
is(scalar(open_alarms()), 0, 'over the old limit, under the new: nothing');
sample(55);
@al = open_alarms();
is(scalar(@al), 1, 'over the new limit: an alarm');
is($al[0]{severity}, 'critical', 'of the new severity');
my $requests = sub { grep { $_->{path} eq $_[0] } $hook->requests };
ok(within(5, sub { $requests->('/old') == 2 }), 'its event delivered');

# --- what a change may not do ---
is_error(patch_rule($rule->{id}, hi => 'high'), 400, 'hi no number');
is_error(patch_rule($rule->{id}, op => 'sideways'), 400, 'op of no name');
is_error(patch_rule($rule->{id}, op => 'outside', lo => 60), 400,
	'outside with lo over hi');
is_error(patch_rule($rule->{id}, name => ''), 400, 'an empty name');
is_error(patch_rule($rule->{id}, for_samples => 0), 400, 'for_samples 0');
is_error(patch_rule($rule->{id}, kind => 'silence'), 409, 'another kind');
($st) = patch_rule($rule->{id}, kind => 'threshold', name => 'hot');
is($st, 200, 'its own kind: 200');
is_error(patch_rule($rule->{id}, facility_id => $p->facility('Edit C')),
	409, 'another facility');
my (undef, $r2) = $p->req(POST => '/api/v1/alarm-rules', token => $admin,
	json => {name => 'quiet', kind => 'silence', silence_minutes => 5});
is_error(patch_rule($r2->{id}, name => 'hot'), 409, 'a name taken');
($st, $b) = patch_rule($r2->{id}, silence_minutes => 10);
is($b->{silence_minutes}, 10, "a silence rule's minutes");
is_error($p->req(PATCH => "/api/v1/alarm-rules/$rule->{id}", token => $other,
	json => {enabled => JSON::PP::false}), 403, "another facility's rule");
is_error($p->req(PATCH => "/api/v1/webhooks/$hookrow->{id}", token => $other,
	json => {enabled => JSON::PP::false}), 403, "another facility's endpoint");
my $user = $p->token($p->user('user', $fac));
is_error($p->req(PATCH => "/api/v1/alarm-rules/$rule->{id}", token => $user,
	json => {enabled => JSON::PP::false}), 403, 'a user changing a rule');
is_error($p->req(PATCH => "/api/v1/webhooks/$hookrow->{id}", token => $user,
	json => {enabled => JSON::PP::false}), 403, 'a user changing an endpoint');
is_error($p->req(PATCH => '/api/v1/alarm-rules/00000000-0000-4000-8000-000000000000',
	token => $admin, json => {}), 404, 'no such rule');

# --- an endpoint changed ---
sub patch_hook {
	return $p->req(PATCH => "/api/v1/webhooks/$hookrow->{id}",
		token => $admin, json => {@_});
}
is_error(patch_hook(url => 'ftp://example.org/x'), 400, 'an ftp URL');
is_error(patch_hook(url => "mailto:ops\@example.org\nBcc: x\@y"), 400,
	'a mailto: with a header');
is_error(patch_hook(secret => 'short'), 400, 'a short secret');
is_error(patch_hook(facility_id => $p->facility('Edit D')), 409,
	'another facility');
($st, $b) = patch_hook(url => $hook->url('/new'), name => 'pager 2');
is($st, 200, 'a new URL: 200');
is($b->{url}, $hook->url('/new'), 'the URL');
ok(!exists $b->{secret}, 'no secret in the answer');
clear_all();
sample(60);
ok(within(5, sub { scalar $requests->('/new') }), 'the new URL gets the event');
is(scalar($requests->('/old')), 2, 'the old one nothing more');
ok(!($requests->('/new'))[0]{valid}, 'signed with the old secret still');
($st, $b) = patch_hook(secret => $secret{'/new'});
is($st, 200, 'the secret rotated: 200');
ok(!exists $b->{secret}, 'the secret is never shown');
clear_all();
sample(61);
ok(within(5, sub { $requests->('/new') == 2 }), 'the next event');
ok(($requests->('/new'))[1]{valid}, 'signed with the new secret');

# --- an endpoint disabled ---
($st, $b) = patch_hook(enabled => JSON::PP::false);
ok($st == 200 && !$b->{enabled}, 'the endpoint disabled');
clear_all();
sample(62);
sleep 2;
is(scalar($requests->('/new')), 2, 'a disabled endpoint gets nothing');
my $pending = $p->sql("SELECT count(*) FROM alarm_deliveries "
	. "WHERE endpoint_id = '$hookrow->{id}' AND state = 'pending'");
is($pending, 0, 'no delivery made for it');
# A delivery it had pending when disabled waits for it.
$p->sql("INSERT INTO alarm_deliveries (event_id, endpoint_id) SELECT "
	. "e.id, '$hookrow->{id}' FROM alarm_events e ORDER BY created_at "
	. "DESC LIMIT 1");
sleep 2;
is(scalar($requests->('/new')), 2, 'nor are its pending ones posted');
($st) = patch_hook(enabled => JSON::PP::true);
ok(within(5, sub { $requests->('/new') == 3 }),
	'enabled again, they are');

# --- the CLI ---
my $r = xmhub_json(['alarm', 'rule-update', $rule->{id}, '--disable',
	'--hi', 70, '--for-samples', 2]);
ok(!$r->{enabled} && $r->{hi} == 70 && $r->{for_samples} == 2,
	'rule-update --disable --hi --for-samples');
$r = xmhub_json(['alarm', 'rule-update', $rule->{id}, '--enable']);
ok($r->{enabled}, 'rule-update --enable');
my ($cst, undef, $err) = xmhub(['alarm', 'rule-update', $rule->{id},
	'--for-samples', 0]);
is($cst, 1, 'rule-update --for-samples 0 is refused');
like($err, qr/invalid/, 'saying why');
$r = xmhub_json(['alarm', 'rule-update', $r2->{id}, '--device', '']);
is($r->{device_id}, undef, "--device '': every device");
$r = xmhub_json(['alarm', 'webhook-update', $hookrow->{id}, '--name', 'pg',
	'--url', $hook->url('/old'), '--secret', $secret{'/old'}, '--disable']);
ok($r->{name} eq 'pg' && $r->{url} eq $hook->url('/old') && !$r->{enabled},
	'webhook-update --name --url --secret --disable');
is($p->sql("SELECT secret FROM webhook_endpoints WHERE id = '$hookrow->{id}'"),
	$secret{'/old'}, 'the secret set');
($cst) = xmhub(['alarm', 'rule-update', $rule->{id}, '--enable', '--disable']);
is($cst, 2, '--enable and --disable together: a usage error');

$hook->stop;
done_testing;
