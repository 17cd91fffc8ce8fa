#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Alarms end to end (doc/alarms.md), with a webhook receiver started here
# (t/lib/Xmhub/Webhook.pm) that checks each request's signature and
# records its Idempotency-Key:
# - a threshold crossed by `xmhub send` data, and by `xmhub sim`'s sine:
#   one alarm, one delivery with a valid signature; more data over the
#   limit raises no second alarm;
# - the runner killed with SIGKILL while the receiver holds its POST (no
#   transaction open meanwhile): after the supervisor restarts it and the
#   claim's lease is over the event is posted again with the same key,
#   and delivered once;
# - the receiver down for 5 s: the delivery fails, is retried with
#   backoff, and arrives once it is back;
# - an endpoint that never answers: dead after XMHUB_ALARM_MAX_ATTEMPTS;
# - a device that stops sending: no silence alarm while it is within the
#   rule's minute; once its last contact is set a minute and more back,
#   its silence alarm within a runner period or two;
# - a facility over a storage rule's percent of its quota: an alarm of
#   no device, cleared when the quota grows;
# - a mailto: endpoint: the event mailed through the local MTA's sendmail
#   (a stand-in program here) as a message a person reads (its headers
#   once each, the subject and the body's lines in words, the event's
#   JSON after them), a header in the address refused, a rule name's
#   CR LF making no header, a name not ASCII in RFC 2047 encoded-words;
# - a second facility with the same rule and its own endpoint sees
#   nothing of the first's, and its data under the limit raises nothing.
use strict;
use warnings;
use Test::More;
use Encode ();
use File::Temp qw(tempdir);
use JSON::PP;
use Time::HiRes qw(sleep time);
use Xmhub::Ingest;
use HTTP::Tiny;
use Xmhub::Platform;
use Xmhub::Prom qw(prom_samples prom_check);
use Xmhub::Test qw(xmhub xmhub_json within);
use Xmhub::Webhook;

my $json = JSON::PP->new->utf8->canonical;
my %secret = ('/a' => 'a-secret-of-facility-a', '/b' => 'b-secret-of-b-0000',
	'/c' => 'c-secret-of-c-0000', '/d' => 'd-secret-of-d-0000');
my $hook = Xmhub::Webhook->new(secrets => \%secret);
$hook->start;

# The local MTA's sendmail, as the runner spawns it: a program that keeps
# its arguments and its environment (mail.PID) and the message it reads
# (msg.PID), in a directory the stack's user (xmhub, as root) may write.
my $mta = tempdir(CLEANUP => 1);
chmod 0777, $mta;
{
	open my $f, '>', "$mta/sendmail" or die "$mta/sendmail: $!";
	print $f "#!/bin/sh\n{ printf '%s\\n' \"\$*\"; env; } "
	    . ">\"$mta/mail.\$\$\"\ncat >\"$mta/msg.\$\$\"\n";
	close $f;
	chmod 0755, "$mta/sendmail";
}

# Retries after 1, 2, 4, 8, 16 and 32 s: dead at the 7th failure, 63 s on.
# The receiver is on 127.0.0.1: XMHUB_ALARM_PRIVATE_HOSTS lets the runner
# reach it (t/e2e/alarmrun-db.c proves the refusal).
# Four rules and three webhook endpoints a facility at most: the API's
# caps are tried below.
my $p = Xmhub::Platform->start(env => {XMHUB_ALARM_RETRY_BASE => 1,
	XMHUB_ALARM_RULES_MAX => 4, XMHUB_ALARM_ENDPOINTS_MAX => 3,
	XMHUB_ALARM_PRIVATE_HOSTS => 'true',
	XMHUB_ALARM_MAX_ATTEMPTS => 5, XMHUB_ALARM_TIMEOUT => 5,
	XMHUB_ALARM_SENDMAIL => "$mta/sendmail"});
my $stack = $p->stack;
$ENV{XMHUB_ENV_FILE} = $stack->env_file;
my $dir = tempdir(CLEANUP => 1);
my $url = $stack->url('');

# A facility with an admin, an ingest key and a session of one f64
# stream (named s0) on device $uid.
sub tenant {
	my ($name, $uid) = @_;
	my $fac = $p->facility($name);
	my $token = $p->token($p->user('facility_admin', $fac));
	my $key = $p->api_key($token, 'ingest');
	my $in = Xmhub::Ingest->new($p, $key);
	my $t = {fac => $fac, token => $token, key => $key, in => $in};
	session($t, $uid);
	return $t;
}

# A new session of $t on device $uid, its --streams file and device id.
sub session {
	my ($t, $uid) = @_;
	my $s = $t->{in}->session($uid, [0, 'f64']);
	my $f = "$dir/session-$s->{id}.json";
	open my $fh, '>', $f or die "$f: $!";
	print $fh $json->encode($s);
	close $fh;
	$t->{session} = $s;
	$t->{streams} = $f;
	$t->{device} = $p->sql("SELECT device_id FROM ingest_sessions "
		. "WHERE id = '$s->{id}'");
	return $t;
}

my $ts = 1_000_000;
# send($t, @values): the values to $t's session, one sample each, 1 ms
# apart, through `xmhub send`; dies unless all are acknowledged.
sub send_values {
	my ($t, @v) = @_;
	my $csv = join '', map { '0,' . ($ts += 1000) . ",$_\n" } @v;
	my ($st, $out, $err) = xmhub(['send', '--url', $url, '--key', $t->{key},
		'--session', $t->{session}{id}, '--streams', "\@$t->{streams}",
		'--spool', "$dir/spool-$t->{session}{id}", '-'], $csv);
	die "send: $st $err" if $st != 0;
}

sub alarms { return @{xmhub_json(['alarm', 'list', '--facility', $_[0]{fac}])} }
sub deliveries {
	return @{xmhub_json(['alarm', 'deliveries', '--facility', $_[0]{fac}])};
}
sub requests_to { my ($path) = @_; return grep { $_->{path} eq $path } $hook->requests }

my $a = tenant('Alarm A', 7);
my $b = tenant('Alarm B', 7);
my $c = tenant('Alarm C', 7);
for my $t ([$a, '/a'], [$b, '/b'], [$c, '/c']) {
	my ($tt, $path) = @$t;
	xmhub_json(['alarm', 'rule-create', '--facility', $tt->{fac},
		'--name', 'hot', '--kind', 'threshold', '--stream', 's0',
		'--op', 'above', '--hi', 30, '--for-samples', 3,
		'--severity', 'critical']);
	xmhub_json(['alarm', 'webhook-create', '--facility', $tt->{fac},
		'--name', 'hook', '--secret', $secret{$path},
		'--url', $path eq '/c' ? 'http://127.0.0.1:' . Xmhub::Stack::free_port()
		    . '/c' : $hook->url($path)]);
}

# A device that sends once and then stops, under a silence rule of one
# minute: checked at the end.
my $quiet = {%$a};
session($quiet, 8);
send_values($quiet, 1);
my $silence_rule = xmhub_json(['alarm', 'rule-create', '--facility', $a->{fac},
	'--name', 'quiet', '--kind', 'silence', '--device', $quiet->{device},
	'--silence-minutes', 1]);
my $quiet_since = time;

# An alarm of the third facility, whose endpoint no one answers: its
# delivery is checked dead at the end (5 attempts, 1 + 2 + 4 + 8 s apart).
send_values($c, 90, 91, 92);

# --- a threshold crossed ---
send_values($a, 20, 25, 31, 32);
is(scalar(alarms($a)), 0, 'two samples over the limit of three: no alarm');
send_values($a, 33, 29);
my @al = alarms($a);
is(scalar(@al), 1, 'the third sample over the limit raises one alarm');
is($al[0]{state}, 'active', 'active');
is($al[0]{severity}, 'critical', "with its rule's severity");
is($al[0]{value}, 33, 'the value that raised it');
is($al[0]{device_id}, $a->{device}, 'on the device');
ok(within(5, sub { scalar requests_to('/a') }), 'a webhook request came');
my @r = requests_to('/a');
is(scalar(@r), 1, 'one request');
ok($r[0]{valid}, 'its signature is the HMAC-SHA256 of timestamp and body');
cmp_ok(abs($r[0]{ts} - time), '<', 30, 'its timestamp is now');
my $ev = $json->decode($r[0]{body});
is($r[0]{key}, $ev->{id}, "the Idempotency-Key is the event's id");
is($ev->{type}, 'alarm.raised', 'type alarm.raised');
is($ev->{alarm}{id}, $al[0]{id}, 'the alarm');
is($ev->{alarm}{rule_name}, 'hot', 'its rule');
ok(within(5, sub { (grep { $_->{state} eq 'delivered' } deliveries($a)) == 1 }),
	'the delivery is delivered');
# The runner's pass that delivered it also looked for silent devices.
my $silenced = sub { grep { $_->{rule_id} eq $silence_rule->{id} } alarms($a) };
ok(!$silenced->(), 'the quiet device, within its minute: no silence alarm')
	or diag(time - $quiet_since, ' s after its last batch');

send_values($a, 40, 41, 42, 43);
sleep 2;
@al = alarms($a);
is(scalar(@al), 1, 'more data over the limit: still one alarm');
is($al[0]{value}, 43, 'its value and last_seen_at move');
is(scalar(requests_to('/a')), 1, 'and no second webhook request');

# --- e-mail through the local MTA (a mailto: endpoint) ---
{
	my $d = tenant('Alarm D', 7);
	my ($st) = $p->req(POST => '/api/v1/webhooks', token => $d->{token},
		json => {name => 'bad', url => "mailto:ops\@example.org\nBcc: x\@y",
			secret => 'mail-secret-0000-0000'});
	is($st, 400, 'a mailto: address with a header in it is refused');
	# Three rules that one sample breaks: a plain name, a name with a
	# header in it, a name not ASCII (UTF-8 bytes).
	my %rule = (plain => 'hot', inject => "hot\r\nBcc: x\@example.org",
		utf8 => "F\xc3\xbcllstand \xe2\x86\x91");
	for my $name (sort values %rule) {
		xmhub_json(['alarm', 'rule-create', '--facility', $d->{fac},
			'--name', $name, '--kind', 'threshold', '--stream', 's0',
			'--op', 'below', '--lo', 0, '--severity', 'critical']);
	}
	xmhub_json(['alarm', 'webhook-create', '--facility', $d->{fac},
		'--name', 'ops', '--url', 'mailto:ops@example.org',
		'--secret', 'mail-secret-0000-0000']);
	send_values($d, -1);
	ok(within(10, sub {
		(grep { $_->{state} eq 'delivered' } deliveries($d)) == 3 }),
		'the three e-mails are delivered');
	my @runs = glob("$mta/mail.*");
	is(scalar(@runs), 3, 'sendmail ran three times');
	my $slurp = sub { local $/; open my $f, '<', $_[0] or die "$_[0]: $!"; <$f> };
	my @args = map { $slurp->($_) } @runs;
	is(scalar(grep { /^-i -- ops\@example\.org\n/ } @args), 3,
		'as sendmail -i -- ADDRESS');
	ok(!(grep { /XMHUB_|postgres/i } @args),
		'its environment has nothing of the settings');
	# Each message by its rule's name (as the JSON in its body has it).
	my (%msg, %ids);
	for my $f (glob("$mta/msg.*")) {
		my $raw = $slurp->($f);
		my ($head, $body) = split /\n\n/, $raw, 2;
		(my $unfolded = $head) =~ s/\n(?=[ \t])//g;
		my %h;
		push @{$h{lc $1}}, $2 while $unfolded =~ /^([^:\n]+): ?(.*)$/mg;
		my ($line) = $body =~ /^(\{.*\})$/m;
		my $ev = $json->decode($line // '{}');
		my $name = Encode::encode('UTF-8', $ev->{alarm}{rule_name} // '');
		$msg{$name} = {raw => $raw, head => $head, h => \%h,
			body => $body, ev => $ev};
		$ids{$h{'message-id'}[0] // ''}++;
	}
	is_deeply([sort keys %msg], [sort values %rule],
		"one message of each alarm, its event's JSON in its body");
	is(scalar(keys %ids), 3, 'each with a Message-ID of its own');
	my $m = $msg{hot};
	my $h = $m->{h};
	is_deeply([grep { @{$h->{$_} // []} != 1 } qw(to subject date
		message-id mime-version content-type content-transfer-encoding
		x-xmhub-event)], [], 'each header present once');
	is($h->{to}[0], 'ops@example.org', 'to the address');
	is($h->{subject}[0],
		'[xmhub] critical alarm raised: hot - s0 below 0 (Alarm D)',
		'the subject: severity, rule, raised, condition, facility');
	like($h->{date}[0], qr/^\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d \+0000$/,
		'an RFC 5322 date');
	like($h->{'message-id'}[0], qr/^<alarm\.[0-9a-f-]{36}\@[A-Za-z0-9.-]+>$/,
		'a Message-ID at the host');
	ok($h->{'mime-version'}[0] eq '1.0'
		&& $h->{'content-type'}[0] eq 'text/plain; charset=utf-8'
		&& $h->{'content-transfer-encoding'}[0] eq '8bit',
		'MIME text in UTF-8, 8bit');
	is($h->{'x-xmhub-event'}[0], $m->{ev}{id}, 'X-Xmhub-Event: the event');
	my $stored = $p->sql("SELECT payload::text FROM alarm_events "
		. "WHERE id = '$m->{ev}{id}'");
	is_deeply($m->{ev}, $json->decode($stored),
		'the JSON in the body parses and is the event');
	(my $prose = $m->{body}) =~ s/\n {8}/ /g;
	my $alarm = $m->{ev}{alarm}{id};
	like($prose, qr/^The critical alarm "hot" was raised in facility Alarm D\.$/m,
		'the body: what happened first');
	like($prose, qr/^What:   s0 below 0 \(a threshold rule\)$/m,
		'what: the condition in words');
	like($prose, qr/^Where:  facility Alarm D, device device 7 \(\Q$d->{device}\E\), stream s0$/m,
		'where: facility, device, stream');
	like($prose, qr/^Value:  -1, first seen at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m,
		'the value and when, in UTC');
	like($prose, qr/^Alarm:  active, id \Q$alarm\E$/m, "the alarm's state and id");
	is_deeply([grep { !/^\{/ && length(Encode::decode('UTF-8', $_)) >= 78 }
		split /\n/, $m->{body}], [], 'the prose under 78 columns');
	# A rule name with CR LF and a header after it.
	$m = $msg{$rule{inject}};
	ok(!$m->{h}{bcc} && $m->{head} !~ /^Bcc/mi,
		"a rule name's CR LF makes no header");
	is($m->{h}{subject}[0],
		'[xmhub] critical alarm raised: hot  Bcc: x@example.org - s0 below 0 (Alarm D)',
		'they are spaces in the subject');
	# A rule name not ASCII: RFC 2047.
	$m = $msg{$rule{utf8}};
	like($m->{h}{subject}[0], qr/^=\?utf-8\?B\?/,
		'a rule name not ASCII: the subject in encoded-words');
	is(Encode::encode('UTF-8', Encode::decode('MIME-Header', $m->{h}{subject}[0])),
		"[xmhub] critical alarm raised: $rule{utf8} - s0 below 0 (Alarm D)",
		'which decode to the subject');
	my ($subject) = $m->{head} =~ /^(Subject: .*(?:\n[ \t].*)*)/m;
	ok($m->{head} !~ /[^\x00-\x7f]/
		&& !(grep { length > 76 } split /\n/, $subject),
		'its header ASCII, the lines of its subject 76 columns at most');
}

# --- the runner killed between claim and delivery ---
xmhub_json(['alarm', 'clear', $al[0]{id}]);
$hook->hold(1);
send_values($a, 50, 51, 52);
ok(within(10, sub { requests_to('/a') == 2 }), 'the new alarm is posted');
# The claim is a lease, committed before the POST: nothing of the
# database is held while the receiver takes its time.
is($p->sql("SELECT count(*) FROM pg_stat_activity WHERE datname = "
	. "current_database() AND state LIKE 'idle in transaction%'"), 0,
	'while the POST waits, no transaction is open');
my $runner = $stack->running('alarm');
ok($runner, 'the alarm runner runs');
kill 'KILL', $runner;
$hook->hold(0);
ok(within(20, sub { my $n = $stack->running('alarm'); $n && $n != $runner }),
	'the supervisor starts the runner again');
# Posted again once its lease (XMHUB_ALARM_TIMEOUT + 5 s) is over.
ok(within(30, sub { (grep { $_->{state} eq 'delivered' } deliveries($a)) == 2 }),
	'the delivery is delivered after the restart');
@r = requests_to('/a');
my %keys;
$keys{$_->{key}}++ for @r[1 .. $#r];
is(scalar(keys %keys), 1, 'every request after the kill has the same key');
cmp_ok(scalar(@r) - 1, '>=', 2, 'it was posted again after the kill');
ok(!(grep { !$_->{valid} } @r), 'every signature is valid');

# --- the receiver down for 5 s (retries 1, 2, 4 and 8 s apart: the 5th
# attempt, the last, is due 15 s after the first) ---
@al = grep { $_->{state} ne 'cleared' } alarms($a);
xmhub_json(['alarm', 'clear', $al[0]{id}]);
$hook->stop;
my $before = () = requests_to('/a');
send_values($a, 60, 61, 62);
ok(within(10, sub { grep { $_->{state} eq 'pending' && $_->{attempts} >= 1
	&& defined $_->{last_error} } deliveries($a) }),
	'the delivery failed and is pending');
sleep 5;
$hook->start;
ok(within(20, sub { (grep { $_->{state} eq 'delivered' } deliveries($a)) == 3 }),
	'delivered once the receiver is back');
@r = requests_to('/a');
is(scalar(@r) - $before, 1, 'received once');
ok($r[-1]{valid}, 'with a valid signature');


# --- storage over a rule's percent of the quota ---
{
	my $used = $p->sql('SELECT upload_bytes + sample_bytes FROM '
		. "facility_usage WHERE facility_id = '$c->{fac}'");
	cmp_ok($used, '>', 0, 'the third facility stores samples');
	my $rule = xmhub_json(['alarm', 'rule-create', '--facility', $c->{fac},
		'--name', 'full', '--kind', 'storage', '--storage-percent', 40]);
	my $super = $p->token($p->user('super_admin'));
	my ($st) = $p->req(PATCH => "/api/v1/facilities/$c->{fac}/storage",
		token => $super, json => {quota_bytes => 2 * $used});
	is($st, 200, 'a quota of twice what it stores');
	my $open = sub { grep { $_->{rule_id} eq $rule->{id}
		&& $_->{state} eq 'active' } alarms($c) };
	ok(within(10, $open), 'at 50% of the quota: the storage alarm');
	my ($al) = $open->();
	cmp_ok(abs(($al->{value} // 0) - 50), '<', 1, 'its value: the percent');
	is($al->{device_id}, undef, 'of no device');
	($st) = $p->req(PATCH => "/api/v1/facilities/$c->{fac}/storage",
		token => $super, json => {quota_bytes => 100 * $used});
	ok(within(10, sub { !$open->() }), 'back under: cleared');
}

# --- an endpoint that never answers: dead ---
ok(within(30, sub { grep { $_->{state} eq 'dead' } deliveries($c) }),
	'a delivery no one takes ends dead');
my ($dead) = grep { $_->{state} eq 'dead' } deliveries($c);
is($dead->{attempts}, 5, 'after XMHUB_ALARM_MAX_ATTEMPTS attempts');
like($dead->{last_error}, qr/connect|refused/i, 'saying why');

# --- a device that stopped ---
# Its last contact put back as the minute's passing would (the runner
# compares it with now()).
$p->sql("UPDATE devices SET last_seen_at = now() - interval '61 seconds' "
	. "WHERE id = '$quiet->{device}'");
ok(within(30, $silenced), 'the silent device raises its silence alarm');
ok(within(10, sub { grep { index($_->{body}, $silence_rule->{id}) >= 0 }
	requests_to('/a') }), 'and it is delivered');

# --- a threshold crossed by `xmhub sim` data (its sine, amplitude 1) ---
{
	my $fac = $p->facility('Alarm D');
	my $key = $p->api_key($p->token($p->user('facility_admin', $fac)),
		'ingest');
	my $d = {fac => $fac};
	xmhub_json(['alarm', 'rule-create', '--facility', $fac, '--name',
		'sine', '--kind', 'threshold', '--stream', 'sine0', '--op',
		'above', '--hi', 0.5, '--for-samples', 3]);
	xmhub_json(['alarm', 'webhook-create', '--facility', $fac, '--name',
		'hook', '--secret', $secret{'/d'}, '--url', $hook->url('/d')]);
	my ($st, $out, $err) = xmhub(['sim', '--url', $url, '--key', $key,
		'--device-uid', 4343, '--streams', 1, '--rate', 100,
		'--duration', 3]);
	is($st, 0, 'xmhub sim sends 3 s of a sine') or diag $err;
	ok(within(10, sub { scalar requests_to('/d') }),
		'its crossing is posted to the webhook');
	sleep 2;
	my @dr = requests_to('/d');
	is(scalar(@dr), 1, 'once, however often the sine crosses again');
	ok($dr[0]{valid}, 'with a valid signature');
	is(scalar(alarms($d)), 1, 'one alarm');
}

# --- the second facility ---
send_values($b, 1, 2, 3, 4);
sleep 2;
is(scalar(alarms($b)), 0, 'the second facility: no alarm');
is(scalar(requests_to('/b')), 0, 'and no webhook request');
is(scalar(deliveries($b)), 0, 'and no delivery');
ok(!(grep { $_->{body} =~ /\Q$b->{fac}\E/ } requests_to('/a')),
	"no request names the second facility");

# --- a new alarm wakes the runner ---
# A runner that would sleep an hour between passes: the NOTIFY of
# alarm_raise() (sql/021) starts its next pass, so the second facility's
# first alarm reaches its webhook in moments.  The supervised runner
# stays stopped after this.
{
	ok($stack->stop_daemon('alarm'), 'the supervised runner is stopped');
	my $log = "$dir/alarm-hour.log";
	my @as = $> == 0 ? ('runuser', '-u', 'xmhub', '--') : ();
	my $pid = fork() // die "fork: $!";
	if ($pid == 0) {
		open STDOUT, '>', $log or die "$log: $!";
		open STDERR, '>&', \*STDOUT;
		exec(@as, 'env', 'XMHUB_ENV_FILE=' . $stack->env_file,
			'XMHUB_ALARM_INTERVAL=3600',
			"$ENV{XMHUB_BUILDDIR}/jobs/xmhub-alarm", '--loop')
		    or die "exec: $!";
	}
	# Its first pass is over once it says it sleeps.
	ok(within(20, sub { open(my $f, '<', $log) or return 0;
		local $/; (<$f> // '') =~ /heartbeat/ }),
		'a runner of an hour between passes started');
	send_values($b, 31, 32, 33);
	ok(within(5, sub { scalar requests_to('/b') }),
		'the alarm reached the webhook within 5 s, not an hour');
	kill 'TERM', $pid;
	is(waitpid($pid, 0), $pid, 'that runner stopped on SIGTERM');
}

# --- the API: roles and isolation ---
{
	my $user_a = $p->token($p->user('user', $a->{fac}));
	my ($st, $body) = $p->req(GET => '/api/v1/alarms', token => $user_a);
	is($st, 200, 'a user of the facility lists its alarms');
	ok((grep { $_->{rule_id} eq $silence_rule->{id} } @$body),
		'the silence alarm among them');
	my ($open) = grep { $_->{state} eq 'active' } @$body;
	($st) = $p->req(POST => '/api/v1/alarm-rules', token => $user_a,
		json => {name => 'x', kind => 'silence', silence_minutes => 5});
	is($st, 403, 'a user may not create rules');
	($st) = $p->req(POST => "/api/v1/alarms/$open->{id}/clear",
		token => $user_a);
	is($st, 403, 'nor clear an alarm');
	($st) = $p->req(POST => "/api/v1/alarms/$open->{id}/acknowledge",
		token => $b->{token});
	is($st, 403, "another facility's admin may not acknowledge it");
	($st, $body) = $p->req(POST => "/api/v1/alarms/$open->{id}/acknowledge",
		token => $user_a);
	is($st, 200, 'a user of the facility acknowledges it');
	is($body->{state}, 'acknowledged', 'acknowledged');
	($st) = $p->req(POST => "/api/v1/alarms/$open->{id}/acknowledge",
		token => $user_a);
	is($st, 409, 'not twice');
	($st, $body) = $p->req(POST => "/api/v1/alarms/$open->{id}/clear",
		token => $a->{token});
	is($body->{state}, 'cleared', 'its admin clears it');
	# The second facility has its one rule: three more, then the cap.
	my @made = map { ($p->req(POST => '/api/v1/alarm-rules',
		token => $b->{token}, json => {name => "errors $_",
		kind => 'session_error'}))[0] } 1 .. 4;
	is("@made", '201 201 201 409', 'rules up to XMHUB_ALARM_RULES_MAX, '
	    . 'then 409');
	($st, $body) = $p->req(POST => '/api/v1/alarm-rules',
		token => $b->{token}, json => {name => 'errors 5',
		kind => 'session_error'});
	like($body->{detail}, qr/as many alarm rules as allowed \(XMHUB_ALARM_RULES_MAX\)/,
		'the detail says why');
	# And its one webhook endpoint: two more, then the cap.
	@made = map { ($p->req(POST => '/api/v1/webhooks',
		token => $b->{token}, json => {name => "more $_",
		url => 'https://example.com/', secret => 'sixteen bytes at least'}))[0] }
	    1 .. 3;
	is("@made", '201 201 409', 'webhooks up to XMHUB_ALARM_ENDPOINTS_MAX, '
	    . 'then 409');
	for my $path (qw(/api/v1/alarms /api/v1/alarm-rules /api/v1/webhooks
	    /api/v1/webhook-deliveries)) {
		($st, $body) = $p->req(GET => $path, token => $b->{token});
		is($st, 200, "$path of the second facility");
		ok(!(grep { $_->{facility_id} && $_->{facility_id} ne $b->{fac} }
			@$body), 'shows nothing of the first');
	}
	($st, $body) = $p->req(GET => '/api/v1/webhooks', token => $a->{token});
	ok(!(grep { exists $_->{secret} } @$body), 'no secret is shown');
	my $hist = $p->sql("SELECT string_agg(state, ',' ORDER BY id) FROM "
		. "alarm_history WHERE alarm_id = '$open->{id}'");
	is($hist, 'active,acknowledged,cleared', 'the history of the alarm');
}

# --- the metrics ---
{
	my $r = HTTP::Tiny->new->get($stack->url('/api/metrics'));
	is($r->{status}, 200, '/api/metrics');
	my $m = prom_samples($r->{content});
	cmp_ok($m->{xmhub_alarms_raised_total} // 0, '>=', 4,
		'the alarms raised at ingest are counted');
	cmp_ok($m->{xmhub_alarm_rule_checks_total} // 0, '>', 0,
		'and the samples checked');
	cmp_ok($m->{'xmhub_alarm_deliveries{state="dead"}'} // 0, '>=', 1,
		'the dead delivery');
	cmp_ok($m->{'xmhub_alarm_deliveries{state="delivered"}'} // 0, '>=', 4,
		'the delivered ones');
	cmp_ok($m->{xmhub_alarm_delivery_failures} // 0, '>=', 6,
		'the failed attempts');
	cmp_ok($m->{'xmhub_alarms{state="cleared"}'} // 0, '>=', 3,
		'alarms by state');
	prom_check($r->{content}, 'the scrape');
}

# What the runner said, when something failed.
if (!Test::More->builder->is_passing) {
	open my $f, '<', $stack->var . '/log/alarm.log' or die;
	my @l = <$f>;
	diag 'alarm.log: ', @l[-20 < -@l ? 0 : -20 .. -1];
	diag 'deliveries: ', $json->encode([deliveries($_)]) for $a, $c;
}
done_testing();
