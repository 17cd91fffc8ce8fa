#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Several web hosts on one PostgreSQL and one S3 (doc/scaling.md): two
# stacks, on 127.0.0.1 and 127.0.0.2, share a PostgreSQL cluster reached
# over TCP and one s3rver, behind a round-robin lighttpd mod_proxy.
# Uploads are transcoded by the runners of both hosts, each job once; an
# ingest session fed through both keeps exact counters; the face
# service's rate limit and admin lockout count both hosts' requests
# together; a user deactivated through one host is refused on the next
# request through the other; one host killed mid-load: the other keeps
# serving and every acknowledged batch is stored.
use strict;
use warnings;
use HTTP::Tiny;
use JSON::PP;
use MIME::Base64 ();
use POSIX ();
use Test::More;
use Time::HiRes qw(sleep time);
use Xmhub::Ingest;
use Xmhub::LB;
use Xmhub::Pg;
use Xmhub::Platform;
use Xmhub::S3;
use Xmhub::Stack;
use Xmhub::Test qw(run);

# One PostgreSQL over TCP (fsync off: this test kills web hosts, not the
# database); the stacks and the balancer are stopped before it at exit.
my $pg = Xmhub::Pg->start(fsync => 0);
my $dburl = $pg->url;
my (@stacks, $lb);
END {
	my $status = $?;
	$lb->stop if $lb;
	$_->stop for @stacks;
	$pg->stop if $pg;
	$? = $status;
}

# --- one S3, two hosts of one installation (one JWT secret) ---
my $s3 = Xmhub::S3->start;
my $secret = join '', map { sprintf '%02x', int rand 256 } 1 .. 32;
my %env = ($s3->env, XMHUB_JWT_SECRET => $secret, XMHUB_MULTI_HOST => 1,
	FACE_API_LIMITS => 'postgres', FACE_API_RATE_LIMIT_DETECT => '6/hour',
	FACE_API_ADMIN_PASSWORD => 'the admin password');
for my $addr ('127.0.0.1', '127.0.0.2') {
	push @stacks, Xmhub::Stack->start(addr => $addr,
		database_url => $dburl, env => \%env);
}
my ($A, $B) = @stacks;
is($A->setting('XMHUB_DATABASE_URL'), $dburl, 'host A: the shared database');
is($B->setting('XMHUB_DATABASE_URL'), $dburl, 'host B: the shared database');

# --- the load balancer: lighttpd mod_proxy, round-robin ---
$lb = Xmhub::LB->start(@stacks);
my $lbdir = $lb->dir;

sub platform {
	my ($stack) = @_;
	return bless {stack => $stack, secret => $secret, n => 0,
		http => HTTP::Tiny->new(timeout => 30, keep_alive => 0)},
	    'Xmhub::Platform';
}
my ($pa, $pb, $pl) = map { platform($_) } $A, $B, $lb;
my $fac = $pa->facility('scale');
my $admin = $pa->user('facility_admin', $fac);
my $ta = $pa->token($admin);
my $key = $pa->api_key($ta, 'upload', 'ingest');

# --- accounts: a change through one host, the next request through the
# other ---
{
	my ($refused, $served) = (0, 0);
	for my $i (1 .. 8) {
		my ($via, $next) = $i % 2 ? ($pa, $pb) : ($pb, $pa);
		my $u = $pa->user('user', $fac);
		my $tu = $pa->token($u);
		# Every process of the other host serving the route caches it.
		for (1 .. 4) {
			my ($st) = $next->req(GET => '/api/v1/devices', token => $tu);
			$served++ if $st == 200;
		}
		my ($st) = $via->req(PATCH => "/api/v1/users/$u->{id}",
			token => $ta, json => {is_active => JSON::PP::false});
		is($st, 200, "user $i deactivated through host "
		    . ($i % 2 ? 'A' : 'B'));
		($st) = $next->req(GET => '/api/v1/devices', token => $tu);
		$refused++ if $st == 401;
	}
	is($served, 32, 'the users were served by the other host before');
	is($refused, 8, 'each was refused on the next request through the other host');

	# The counter alone (sql/016): a change whose notification never
	# comes (triggers off for the UPDATE, the counter bumped by hand) is
	# still seen by the next check of every process of both hosts.
	my $u = $pa->user('user', $fac);
	my $tu = $pa->token($u);
	my @st = map { ($_->req(GET => '/api/v1/devices', token => $tu))[0] }
	    ($pa, $pb) x 4;
	is("@st", join(' ', (200) x 8), 'a user cached by both hosts');
	$pa->sql("SET session_replication_role = replica; UPDATE users SET "
		. "is_active = false WHERE id = '$u->{id}'; SET "
		. "session_replication_role = origin; UPDATE authn_epoch SET n = n + 1");
	@st = map { ($_->req(GET => '/api/v1/devices', token => $tu))[0] }
	    ($pb, $pa) x 4;
	is("@st", join(' ', (401) x 8),
	    'deactivated without a notification: refused through both hosts '
	    . '(the change counter)');

	# /api/auth/me answers from the check's cache (sql/022): a new
	# display name given through one host is on the next /me through
	# the other, whose processes all cached the old one.
	my $v = $pa->user('user', $fac);
	my $tv = $pa->token($v);
	my $name = sub {
		my ($st, $b) = $_[0]->req(GET => '/api/auth/me', token => $tv);
		return $st == 200 ? $b->{display_name} : $st;
	};
	my @n = map { $name->($_) } ($pa, $pb) x 4;
	is("@n", join(' ', ('Test user') x 8), '/me: cached by both hosts');
	for my $i (1 .. 4) {
		my ($via, $next) = $i % 2 ? ($pa, $pb) : ($pb, $pa);
		is(($via->req(PATCH => "/api/v1/users/$v->{id}", token => $ta,
		    json => {display_name => "Name $i"}))[0], 200,
		    "display name $i given");
		@n = map { $name->($_) } $next, $via, $next;
		is("@n", join(' ', ("Name $i") x 3),
		    "/me: name $i on the next requests through both hosts");
	}
}

# --- face: one rate limit and one lockout for both hosts ---
{
	my $http = HTTP::Tiny->new(timeout => 30, keep_alive => 0);
	my (%ok, %limited);
	for my $i (1 .. 12) {
		my $h = $stacks[$i % 2];
		my $r = $http->request(POST => $h->face_url('/api/v1/detect'), {
			headers => {'Content-Type' => 'multipart/form-data; boundary=b'},
			content => "--b\r\nContent-Disposition: form-data; "
			    . "name=\"file\"; filename=\"x.png\"\r\n\r\nnot an image"
			    . "\r\n--b--\r\n"});
		($r->{status} == 429 ? $limited{$h->addr} : $ok{$h->addr})++;
	}
	my $passed = ($ok{'127.0.0.1'} // 0) + ($ok{'127.0.0.2'} // 0);
	is($passed, 6, 'detect at 6/hour through two hosts: 6 pass, not 12');
	ok($limited{'127.0.0.1'} && $limited{'127.0.0.2'},
	    'both hosts refuse with 429');

	my $bad = 'Basic ' . MIME::Base64::encode_base64('admin:wrong', '');
	my @st;
	for my $i (1 .. 11) {
		my $h = $stacks[$i % 2];
		push @st, $http->get($h->face_url('/api/v1/admin/stats'),
			{headers => {Authorization => $bad}})->{status};
	}
	is(join(' ', @st[0 .. 9]), join(' ', (401) x 10),
	    '10 failed admin logins spread over both hosts: 401');
	is($st[10], 429, 'the 11th, on host A, is locked out (429)');
	is($http->get($B->face_url('/api/v1/admin/stats'),
		{headers => {Authorization => $bad}})->{status}, 429,
	    'host B locks the address out too');

	# Another client address (127.0.0.3): a success through one host
	# forgets the failures counted through both.
	my $c3 = HTTP::Tiny->new(timeout => 30, keep_alive => 0,
		local_address => '127.0.0.3');
	my $good = 'Basic '
	    . MIME::Base64::encode_base64('admin:the admin password', '');
	my @seen;
	for my $i (1 .. 9) {
		push @seen, $c3->get($stacks[$i % 2]->face_url('/api/v1/admin/stats'),
			{headers => {Authorization => $bad}})->{status};
	}
	push @seen, $c3->get($A->face_url('/api/v1/admin/stats'),
		{headers => {Authorization => $good}})->{status};
	for my $i (1 .. 9) {
		push @seen, $c3->get($stacks[$i % 2]->face_url('/api/v1/admin/stats'),
			{headers => {Authorization => $bad}})->{status};
	}
	is("@seen[0 .. 8]", join(' ', (401) x 9),
	    'another address: 9 failures through both hosts, 401');
	isnt($seen[9], 401, 'its good login through host A is let in');
	isnt($seen[9], 429, '(not locked out)');
	is("@seen[10 .. 18]", join(' ', (401) x 9),
	    '9 more failures: still 401, the count started again');
}

# --- ingest: one session through both hosts ---
my $ingest_a = Xmhub::Ingest->new($pa, $key);
my $ingest_b = Xmhub::Ingest->new($pb, $key);
{
	my $s = $ingest_a->session(71, [0, 'i32']);
	# In order with gaps and late batches, alternating hosts: the model
	# of doc/ingest.md gives the counters.
	my @seqs = (0, 1, 2, 5, 6, 3, 7, 11, 12, 4, 13, 20, 21, 22, 30);
	my ($last, $missed, $ack) = (undef, 0);
	for my $i (0 .. $#seqs) {
		my $q = $seqs[$i];
		if (!defined $last) {
			$last = $q;
		} elsif ((my $d = ($q - $last - 1) % 65536) < 32768) {
			$missed += $d;
			$last = $q;
		}
		$ack = ($i % 2 ? $ingest_b : $ingest_a)->send($s->{id}, $q,
			[0, 'i32', [[$q * 10, $q]]]);
	}
	is($ack->{missed_batches}, $missed,
	    "in-order feed through both hosts: missed_batches $missed");
	# Concurrently through both hosts: no counter update is lost.
	my @kids;
	for my $k (0, 1) {
		my $pid = fork() // die "fork: $!\n";
		if ($pid == 0) {
			my $in = $k ? $ingest_b : $ingest_a;
			for my $j (0 .. 39) {
				my $q = 100 + 2 * $j + $k;
				eval { $in->send($s->{id}, $q,
					[0, 'i32', [[$q * 10, $q], [$q * 10 + 1, $q]]]); 1 }
				    or POSIX::_exit(1);
			}
			POSIX::_exit(0);
		}
		push @kids, $pid;
	}
	my $failed = 0;
	for (@kids) { waitpid($_, 0); $failed++ if $? }
	is($failed, 0, '80 batches sent at once through both hosts: all acked');
	is($pa->sql("SELECT total_samples FROM ingest_sessions "
		    . "WHERE id = '$s->{id}'"), @seqs + 160,
	    'total_samples counts every sample of both hosts');
	$ingest_b->close($s->{id});
	my @got = $ingest_a->read_all($ta, $s->{id}, 0);
	is(scalar @got, @seqs + 160, 'every sample reads back');
}

# --- uploads: the runners of both hosts, each job once ---
{
	# A file, not a pipe: a WAV on a pipe has no length in its header.
	my ($st, undef, $e) = run(['ffmpeg', '-v', 'error', '-f', 'lavfi', '-i',
		'sine=frequency=440:duration=4', '-y', "$lbdir/take.wav"]);
	die "ffmpeg: $e" if $st;
	my $o = slurp("$lbdir/take.wav");
	# The runners wait while the uploads queue, then both start at
	# once: they race for the same jobs.
	ok($_->stop_daemon('transcode'), 'host ' . $_->addr
	    . ': its transcode runner stopped') for @stacks;
	my $n = 10;
	for my $i (1 .. $n) {
		my $body = "--b\r\nContent-Disposition: form-data; name=\"file\"; "
		    . "filename=\"take$i.wav\"\r\nContent-Type: audio/wav\r\n\r\n"
		    . "$o\r\n--b--\r\n";
		my ($s) = $pl->req(POST => '/api/v1/uploads', key => $key,
			body => $body,
			headers => {'Content-Type' => 'multipart/form-data; boundary=b'});
		is($s, 200, "upload $i through the balancer") or last;
	}
	$_->up for @stacks;
	my $done;
	for (1 .. 600) {
		$done = $pa->sql("SELECT count(*) FROM transcode_jobs "
			    . "WHERE facility_id = '$fac' AND status IN "
			    . "('completed', 'failed')");
		last if $done == $n;
		sleep 0.2;
	}
	is($done, $n, "the $n jobs ended");
	is($pa->sql("SELECT count(*) FROM transcode_jobs WHERE facility_id = "
		    . "'$fac' AND status = 'completed' AND attempts = 1 "
		    . "AND lost_runs = 0"), $n,
	    'each completed at its first attempt, claimed once')
	    or diag $pa->sql("SELECT status, attempts, lost_runs, error_message "
		    . "FROM transcode_jobs WHERE facility_id = '$fac'");
	my %pid = map { (slurp($_->var . '/run/transcode.pid') =~ /(\d+)/)[0]
		    => $_->addr } @stacks;
	my %ran;
	for my $w (split /\n/, $pa->sql("SELECT worker_id FROM transcode_jobs "
		    . "WHERE facility_id = '$fac'")) {
		my ($p) = $w =~ /:(\d+)$/;
		$ran{$pid{$p // ''} // "another runner ($w)"}++;
	}
	is(join(',', sort keys %ran), '127.0.0.1,127.0.0.2',
	    'the runners of both hosts ran jobs') or diag explain \%ran;
}

sub slurp {
	open my $f, '<', $_[0] or die "$_[0]: $!\n";
	local $/;
	return <$f>;
}

# --- one host killed mid-load ---
{
	my $s = $ingest_a->session(72, [0, 'i32']);
	my $lbi = Xmhub::Ingest->new($pl, $key);
	my $log = "$lbdir/acked";
	my $pid = fork() // die "fork: $!\n";
	if ($pid == 0) {
		# A device: each batch resent until acknowledged (a lost ack
		# resends the same bytes: stored once, doc/ingest.md).
		open my $f, '>', $log or POSIX::_exit(2);
		$f->autoflush(1);
		for my $q (0 .. 199) {
			my $body = $lbi->encode($q, [0, 'i32', [[$q * 10, $q]]]);
			my $t0 = time;
			while (1) {
				my ($st) = $pl->req(POST =>
					"/api/v1/ingest/sessions/$s->{id}/data",
					key => $key, body => $body, headers =>
					    {'Content-Type' => 'application/octet-stream'});
				last if $st == 200;
				POSIX::_exit(3) if time - $t0 > 30;
				sleep 0.05;
			}
			print $f "$q\n";
		}
		POSIX::_exit(0);
	}
	# Mid-load, host B dies: its supervisor first (it would start
	# lighttpd again), then lighttpd, the daemons and all under them.
	for (1 .. 200) {
		last if -s $log && (() = slurp($log) =~ /\n/g) >= 40;
		sleep 0.05;
	}
	my @run = map { (slurp($_) =~ /(\d+)/)[0] // () }
	    grep { !/supervisor/ } glob($B->var . '/run/*.pid');
	my ($sv) = slurp($B->var . '/run/supervisor.pid') =~ /(\d+)/;
	kill 'KILL', $sv;
	kill 'KILL', map { ($_, Xmhub::Stack::descendants($_)) } @run;
	my $acked_at_kill = () = slurp($log) =~ /\n/g;
	ok($acked_at_kill >= 40 && $acked_at_kill < 200,
	    "host B killed mid-load ($acked_at_kill of 200 batches acked)");
	waitpid($pid, 0);
	is($? >> 8, 0, 'the device had all 200 batches acknowledged');
	my @health = map { ($pl->req(GET => '/api/health'))[0] } 1 .. 6;
	is("@health", join(' ', (200) x 6), 'the balancer keeps serving');
	my @acked = split /\n/, slurp($log);
	$ingest_a->close($s->{id});
	my %got;
	$got{$_->[1]}++ for $ingest_a->read_all($ta, $s->{id}, 0);
	is(scalar(grep { !$got{$_} } @acked), 0, 'every acknowledged batch is stored');
	is(scalar(grep { $_ > 1 } values %got), 0, 'none is stored twice');
}

done_testing;
