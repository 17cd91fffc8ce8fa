#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Login throttling end to end (doc/auth.md "Login throttling", doc/api.md
# "Authentication"): failed logins counted per e-mail and address in
# PostgreSQL, 429 with Retry-After, another address not locked out, the
# account ceiling slows without locking, spraying from one address,
# state across a restart, clearing by the super admin and the CLI, the
# log lines.
#
# Requests come from several loopback addresses (127.0.0.1, 127.0.0.2,
# ...): the client socket is bound to the address, lighttpd (listening on
# 127.0.0.1 only) passes it on as REMOTE_ADDR.
use strict;
use warnings;
use Digest::SHA qw(sha256_hex);
use HTTP::Tiny;
use IO::Socket::INET;
use JSON::PP;
use POSIX ();
use Test::More;
use Time::HiRes qw(time sleep);
use Xmhub::Accounts qw(mkuser login is_error program_log log_is_clean);
use Xmhub::Cpu qw(tree_cpu);
use Xmhub::Platform;
use Xmhub::Test qw(run bin);

my $p = Xmhub::Platform->start;
my $s = $p->stack;
my $json = JSON::PP->new->canonical;

my $root_id = mkuser($p, 'root@example.org', 'root-password', 'super_admin');
my $tr = login($p, 'root@example.org', 'root-password')->{access_token};
my $fac = $p->facility('Throttle');
my $fa_token = $p->token($p->user('facility_admin', $fac));
my ($st, $b) = $p->req(POST => '/api/v1/users', token => $tr,
	json => {email => 'Alice@Example.org', password => 'alice-password',
	display_name => 'Alice', role => 'user', facility_id => $fac});
is($st, 200, 'alice made') or diag explain $b;
my $alice = $b->{id};
my $user_token = $p->token({id => $alice, role => 'user',
	facility_id => $fac});

# from($addr, $method, $path, %opt): one request whose client socket is
# bound to $addr; (status, decoded JSON body, HTTP::Tiny response).
my %ua;
sub from {
	my ($addr, $method, $path, %opt) = @_;
	my $ua = $ua{$addr} //= HTTP::Tiny->new(timeout => 30,
		keep_alive => 0, local_address => $addr);
	my %h;
	$h{Authorization} = "Bearer $opt{token}" if defined $opt{token};
	my %args = (headers => \%h);
	if ($opt{json}) {
		$args{content} = $json->encode($opt{json});
		$h{'Content-Type'} = 'application/json';
	}
	my $res = $ua->request($method, $s->url($path), \%args);
	my $body;
	$body = eval { $json->decode($res->{content}) }
	    if ($res->{headers}{'content-type'} // '') =~ m{^application/json};
	return ($res->{status}, $body, $res);
}

# attempt($addr, $email, $password): a login from $addr.
sub attempt {
	my ($addr, $email, $pw) = @_;
	return from($addr, POST => '/api/auth/login',
		json => {email => $email, password => $pw});
}

# retry_after($res): the Retry-After header when it is a number of
# seconds, else undef.
sub retry_after {
	my $ra = $_[0]{headers}{'retry-after'} // '';
	return $ra =~ /^[0-9]+$/ ? $ra : undef;
}

# is_throttled($st, $b, $res, $name): a 429 with a Retry-After of at
# least one second and {"detail"} saying when; the seconds.
sub is_throttled {
	my ($st, $b, $res, $name) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is_error($st, $b, 429, $name);
	my $ra = retry_after($res);
	ok(defined $ra && $ra > 0, "$name: Retry-After, seconds > 0")
	    or diag "Retry-After: " . ($res->{headers}{'retry-after'} // 'none');
	my $want = $ra // 'x';
	like($b->{detail} // '', qr/try again in \Q$want\E seconds/,
		"$name: the detail says the same wait");
	return $ra;
}

# The counters in the database: failures of (email, addr); '' for all.
sub failures {
	my ($email, $addr) = @_;
	my $k = $email eq '' ? '' : sha256_hex(lc $email);
	return $p->sql("SELECT coalesce(sum(failures), 0) FROM login_throttle "
		. "WHERE email = '$k' AND addr = '$addr'");
}

# The addresses really are the client's as lighttpd sees it, and
# lighttpd listens on 127.0.0.1 only.
ok(!IO::Socket::INET->new(PeerAddr => '127.0.0.2', PeerPort => $s->port,
	Proto => 'tcp', Timeout => 5), 'lighttpd does not listen on 127.0.0.2');
($st, $b) = from('127.0.0.2', GET => '/api/health');
is($st, 200, 'a request from 127.0.0.2 to 127.0.0.1 reaches the stack');

# --- not throttled: an unknown e-mail and a wrong password alike ---
# Alike in the work done: a missing account still costs one Argon2id
# verification (auth_password_dummy()).  Compared as the CPU the auth
# program's processes spend on each attempt, not as wall time: on this
# shared machine a load spike, or the stack's other programs still
# starting (the face models), moves one attempt's time fourfold, while a
# skipped verification would take its CPU to near nothing.  Both auth
# processes have done a login first (the dummy hash is made once per
# process).
my $httpd = $s->running('lighttpd') or BAIL_OUT('lighttpd is not running');
my @auth = grep { (readlink("/proc/$_/exe") // '') =~ m{/auth$} }
	Xmhub::Stack::descendants($httpd);
ok(@auth >= 1, 'the auth program runs');
attempt('127.0.0.5', 'warm-up@example.org', 'x') for 1 .. 4;
my (%cpu, %seen);
for (1 .. 5) {
	for my $case (['known', '127.0.0.3', 'alice@example.org'],
	    ['unknown', '127.0.0.4', 'nobody@example.org']) {
		my ($which, $addr, $email) = @$case;
		my $c0 = tree_cpu(@auth);
		my ($st, $b) = attempt($addr, $email, 'wrong-password');
		$cpu{$which} += tree_cpu(@auth) - $c0;
		$seen{$which}{"$st " . $json->encode($b)}++;
	}
}
my ($a_known, $a_unknown) = map { join('|', sort keys %{$seen{$_}}) }
	qw(known unknown);
is($a_known, '401 {"detail":"wrong email or password"}',
	'five wrong passwords: 401 "wrong email or password"');
is($a_unknown, $a_known, 'five unknown e-mails: the same status and body');
my $cpu = "CPU of five: wrong password $cpu{known} s, unknown e-mail "
    . "$cpu{unknown} s";
cmp_ok($cpu{unknown}, '>', $cpu{known} * 0.5,
	'an unknown e-mail costs about what a wrong password does') or diag $cpu;
cmp_ok($cpu{known}, '>', $cpu{unknown} * 0.5,
	'a wrong password costs about what an unknown e-mail does') or diag $cpu;
cmp_ok($cpu{known}, '>=', 0.05,
	'an Argon2id verification each (10 ms of CPU at least)') or diag $cpu;

# ... and throttled alike: after 5 failures, both get the same 429.
my %after;
for my $case (['127.0.0.3', 'alice@example.org'],
    ['127.0.0.4', 'nobody@example.org']) {
	my ($addr, $email) = @$case;
	my ($st, $b, $res) = attempt($addr, $email, 'wrong-password');
	my $ra = is_throttled($st, $b, $res, "$email: the 6th attempt");
	is($ra, 1, "$email: the first wait is 1 s");
	$after{$email} = "$st " . $json->encode($b);
}
is($after{'nobody@example.org'}, $after{'alice@example.org'},
	'throttled: an unknown e-mail and a known one answer the same');
is(failures('nobody@example.org', '127.0.0.4'), 5,
	'an unknown e-mail has a counter too: 5 failures');

# --- 200 wrong passwords from one address ---
my (%n, @bad, $res, $last_ra);
my $t0 = time;
for my $i (1 .. 200) {
	($st, $b, $res) = attempt('127.0.0.1', 'alice@example.org',
		"wrong-$i");
	$n{$st}++;
	if ($st == 429) {
		$last_ra = retry_after($res);
		push @bad, "$i: Retry-After " . ($res->{headers}{'retry-after'}
		    // 'none') unless defined $last_ra && $last_ra > 0
		    && ref $b eq 'HASH' && keys %$b == 1
		    && ($b->{detail} // '') =~ /try again in $last_ra seconds/;
	} elsif ($st != 401) {
		push @bad, "$i: $st";
	}
}
my $took = time - $t0;
note sprintf('200 wrong passwords in %.1f s: %s', $took,
	join(', ', map { "$_ x $n{$_}" } sort keys %n));
is_deeply(\@bad, [], '200 wrong passwords: each answer a 401, or a 429 '
	. 'with Retry-After (seconds > 0) and {"detail"}');
cmp_ok($n{401} // 0, '>=', 5, 'the first 5 are checked (401)');
cmp_ok($n{401} // 0, '<=', 5 + 1 + int($took), 'then at most one check '
	. 'per wait of 1, 2, 4 ... s');
cmp_ok($n{429} // 0, '>=', 200 - 5 - 1 - int($took),
	'the others are refused: 429');
is(failures('alice@example.org', '127.0.0.1'), $n{401},
	'the counter holds the checked attempts, not the refused ones');
# Make sure the wait left is long enough for what follows.
for (1 .. 20) {
	last if defined $last_ra && $last_ra >= 2;
	sleep 1;
	($st, $b, $res) = attempt('127.0.0.1', 'alice@example.org', 'wrong');
	$last_ra = $st == 429 ? retry_after($res) : undef;
}
($st, $b, $res) = attempt('127.0.0.1', 'alice@example.org', 'alice-password');
is_throttled($st, $b, $res,
	'the right password from the same address during the wait');
($st, $b) = attempt('127.0.0.2', 'alice@example.org', 'alice-password');
is($st, 200, 'the right password from another address logs in')
    or diag explain $b;
is($b->{user}{id}, $alice, 'as alice');
is(failures('alice@example.org', ''), 0,
	'the success set the account counter back to 0');
cmp_ok(failures('alice@example.org', '127.0.0.1'), '>=', 5,
	'... and left the other address\'s counter alone');
($st, $b, $res) = attempt('127.0.0.1', 'alice@example.org', 'alice-password');
is_throttled($st, $b, $res, 'the first address stays throttled');

# --- the state is in the database: it survives a restart ---
# A longer streak than the test can wait for: 8 more failures (2^8 s).
$p->sql("UPDATE login_throttle SET failures = failures + 8, "
	. "last_at = clock_timestamp() WHERE email = '"
	. sha256_hex('alice@example.org') . "' AND addr = '127.0.0.1'");
($st, $b, $res) = attempt('127.0.0.1', 'alice@example.org', 'alice-password');
my $before = is_throttled($st, $b, $res, 'before the restart');
cmp_ok($before, '>', 200, 'a wait of minutes');
$s->restart;
($st, $b, $res) = attempt('127.0.0.1', 'alice@example.org', 'alice-password');
my $after = is_throttled($st, $b, $res,
	'after a restart of the FastCGI programs');
cmp_ok($after, '<=', $before, 'the same wait, running on');
cmp_ok($after, '>', $before - 60, '... not restarted');

# --- clearing: the super admin only ---
my $path = "/api/v1/users/$alice/login-throttle";
($st, $b) = $p->req(DELETE => $path, token => $fa_token);
is_error($st, $b, 403, 'clear by a facility_admin');
($st, $b) = $p->req(DELETE => $path, token => $user_token);
is_error($st, $b, 403, 'clear by the user itself');
($st, $b) = $p->req(DELETE => $path);
is_error($st, $b, 401, 'clear without a token');
($st, $b) = $p->req(DELETE => '/api/v1/users/00000000-0000-4000-8000-'
	. '000000000000/login-throttle', token => $tr);
is_error($st, $b, 404, 'clear of an unknown user');
($st, $b) = $p->req(DELETE => '/api/v1/users/nope/login-throttle',
	token => $tr);
is_error($st, $b, 400, 'clear with an id that is not a UUID');
($st, $b) = $p->req(GET => $path, token => $tr);
is_error($st, $b, 405, 'GET of the throttle');
($st, $b, $res) = attempt('127.0.0.1', 'alice@example.org', 'alice-password');
is($st, 429, 'still throttled after the refused clears');
($st, $b, $res) = $p->req(DELETE => $path, token => $tr);
is($st, 204, 'clear by the super admin: 204');
is($res->{content} // '', '', '... with no body');
is($p->sql("SELECT count(*) FROM login_throttle WHERE email = '"
	. sha256_hex('alice@example.org') . "'"), 0,
	'... every counter of the e-mail gone');
($st, $b) = $p->req(DELETE => $path, token => $tr);
is($st, 204, 'clearing a user with nothing counted: 204 again');
($st, $b) = attempt('127.0.0.1', 'alice@example.org', 'alice-password');
is($st, 200, 'the right password from the first address works again');

# --- the CLI ---
sub cli {
	local $ENV{XMHUB_ENV_FILE} = $s->env_file;
	delete local $ENV{XMHUB_DATABASE_URL};
	return run([bin('xmhub'), 'user', 'unthrottle', @_]);
}
# Its wait of 1 s has passed: one more failure makes it 2 s.
($st) = attempt('127.0.0.4', 'nobody@example.org', 'x');
is($st, 401, 'nobody@example.org: a 6th failure at 127.0.0.4');
# On a loaded machine an attempt can outlast the 2 s: a failure then
# doubles the wait again, until one attempt falls inside it.
for (1 .. 4) {
	($st) = attempt('127.0.0.4', 'nobody@example.org', 'x');
	last if $st == 429;
}
is($st, 429, '... and it is throttled there');
my ($rc, $out, $err) = cli('--email', 'NOBODY@example.org');
is($rc, 0, 'xmhub user unthrottle --email: exit 0') or diag $err;
is_deeply(eval { decode_json($out) }, {cleared => 2},
	'... {"cleared": 2}: its pair and account counters') or diag $out;
($st, $b) = attempt('127.0.0.4', 'nobody@example.org', 'x');
is($st, 401, '... and the e-mail is checked again (401)');
($rc, $out, $err) = cli('--address', '127.0.0.4');
is($rc, 0, 'xmhub user unthrottle --address: exit 0') or diag $err;
is(failures('', '127.0.0.4'), 0, '... the address counter is gone');
($rc, $out, $err) = cli('--address', 'not-an-address');
is($rc, 1, '--address that is not one: exit 1');
like($err, qr/not-an-address/, '... saying which');
($rc, $out, $err) = cli();
is($rc, 2, 'neither --email nor --address: usage (2)');

# --- spraying: every e-mail from one address ---
my @spray;
for my $i (1 .. 100) {
	push @spray, (attempt('127.0.0.50', "user$i\@example.org", 'Summer2024'))[0];
}
is(scalar(grep { $_ == 401 } @spray), 100,
	'100 e-mails from one address, one password each: all checked');
($st, $b, $res) = attempt('127.0.0.50', 'user101@example.org', 'Summer2024');
is_throttled($st, $b, $res, 'the 101st e-mail from that address');
is($p->sql("SELECT count(*) FROM login_throttle WHERE email = '"
	. sha256_hex('user101@example.org') . "'"), 0,
	'a refused attempt writes nothing (no counter for its e-mail)');
($st, $b, $res) = attempt('127.0.0.50', 'alice@example.org', 'alice-password');
is($st, 429, 'the address is throttled for every e-mail, the right one too');
($st, $b) = attempt('127.0.0.51', 'alice@example.org', 'alice-password');
is($st, 200, 'another address is not');

# --- the account ceiling slows down, it does not lock ---
# 127.0.0.1 logged alice in above: a known address.  Four others fail 5
# times each: 20 failures of the account.
sub push_account {
	my ($first) = @_;
	my @st;
	for my $host ($first .. $first + 3) {
		push @st, (attempt("127.0.0.$host", 'alice@example.org',
			'guess'))[0] for 1 .. 5;
	}
	return join(' ', @st) eq join(' ', ('401') x 20);
}
ok(push_account(10), '20 failures of alice from 4 addresses: all checked');
($st, $b, $res) = attempt('127.0.0.20', 'alice@example.org',
	'alice-password');
my $ra = is_throttled($st, $b, $res,
	'a new address after 20 failures of the account');
cmp_ok($ra, '<=', 60, 'the account wait is short (at most 60 s)');
sleep $ra + 0.2;
($st, $b) = attempt('127.0.0.20', 'alice@example.org', 'alice-password');
is($st, 200, 'after the wait the right password works: slowed, not locked');
ok(push_account(30), '20 more failures from 4 other addresses');
($st, $b, $res) = attempt('127.0.0.40', 'alice@example.org',
	'alice-password');
is($st, 429, 'a new address waits again');
($st, $b) = attempt('127.0.0.1', 'alice@example.org', 'alice-password');
is($st, 200, 'an address that logged alice in before does not wait');

# --- concurrent attempts cannot all pass one opening ---
# 20 database sessions call the attempt function at the same instant for
# one fresh e-mail and address, with the rules of lib/domain/throttle.h:
# the function counts each attempt before it answers, under row locks,
# so exactly 5 (the free failures) may go on.
{
	my $at = int(time) + 6; # every session is waiting by then
	my @kids;
	for (1 .. 20) {
		pipe(my $r, my $w) or die "pipe: $!";
		my $pid = fork // die "fork: $!";
		if ($pid == 0) {
			close $r;
			my ($st, $out) = $s->psql("SELECT pg_sleep_until("
			    . "to_timestamp($at)); SELECT wait FROM "
			    . "login_throttle_attempt('race\@example.org', "
			    . "'198.51.100.7', 5, 900, 100, 900, 20, 60, 86400, "
			    . "2592000)");
			print {$w} $st == 0 ? $out : "failed\n";
			close $w;
			POSIX::_exit(0);
		}
		close $w;
		push @kids, [$pid, $r];
	}
	my @waits;
	for my $k (@kids) {
		my $fh = $k->[1];
		my @lines = grep { /\S/ } <$fh>;
		waitpid($k->[0], 0);
		push @waits, $lines[-1] // "none\n";
	}
	chomp @waits;
	is(scalar(grep { $_ eq '0' } @waits), 5,
		'20 attempts at once: exactly 5 go on')
	    or diag "@waits";
	is(scalar(grep { /^[1-9][0-9]*$/ } @waits), 15,
		'... the 15 others wait') or diag "@waits";
	is(failures('race@example.org', '198.51.100.7'), 5,
		'... and 5 failures are counted');
}

# --- old counters are pruned by the next attempts ---
$p->sql("INSERT INTO login_throttle (email, addr, failures, since, "
	. "last_at, expires_at) SELECT 'old' || i, '192.0.2.1', 7, "
	. "now() - interval '3 days', now() - interval '3 days', "
	. "now() - interval '2 days' FROM generate_series(1, 20) AS i");
attempt('127.0.0.60', 'nobody@example.org', 'x') for 1 .. 3;
is($p->sql("SELECT count(*) FROM login_throttle WHERE email LIKE 'old%'"),
	0, '20 expired counters deleted by 3 attempts (8 each at most)');

# --- the log: failures and refusals, with the address, no secrets ---
my $log = program_log($p);
my $ka = substr(sha256_hex('alice@example.org'), 0, 16);
my $kn = substr(sha256_hex('nobody@example.org'), 0, 16);
like($log, qr/ msg="auth: login failed for email#$ka from 127\.0\.0\.1"$/m,
	'a failed login is logged with the e-mail\'s key and the address');
like($log, qr/ msg="auth: login failed for email#$kn from 127\.0\.0\.4"$/m,
	'an unknown e-mail\'s failure too');
like($log, qr/ msg="auth: login throttled for email#$ka from 127\.0\.0\.1: pair limit, retry in \d+ s/m,
	'a refusal is logged with the rule');
like($log, qr/login throttled for email#\w+ from 127\.0\.0\.50: address limit/,
	'the address rule');
like($log, qr/login throttled for email#$ka from 127\.0\.0\.20: account limit/,
	'the account rule');
like($log, qr/\(\d+ more throttled attempts not logged\)/,
	'refusals beyond the log\'s rate are counted, not logged');
my $lines = () = $log =~ /login throttled/g;
cmp_ok($lines, '<', 100, "200 refusals did not make 200 lines ($lines)");
unlike($log, qr/alice\@example\.org|nobody\@example\.org|wrong-1\b|alice-password|Summer2024/i,
	'neither e-mails nor passwords in the log');

log_is_clean($p);

done_testing;
