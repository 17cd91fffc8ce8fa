#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Four web hosts on one PgBouncer (doc/scaling.md "PgBouncer"): four
# stacks on 127.0.0.1-4, each with every program of httpd-conf/programs,
# reach one PostgreSQL of max_connections 50 through PgBouncer in
# transaction mode with a pool of 20 server connections, objects in one
# S3.  All four serve ingest, uploads, logins and authenticated reads at
# once: every answer is a success, PostgreSQL never refuses a connection
# and never serves more than the pool; a user deactivated through one
# host is refused on the next request through each other host; a pooler
# without the session settings is refused by the programs.
use strict;
use warnings;
use HTTP::Tiny;
use JSON::PP;
use POSIX ();
use Test::More;
use Time::HiRes qw(sleep);
use Xmhub::Accounts qw(mkuser);
use Xmhub::Ingest;
use Xmhub::Pg;
use Xmhub::PgBouncer;
use Xmhub::Platform;
use Xmhub::S3;
use Xmhub::Stack;
use Xmhub::Test qw(run xmhub);

my $POOL = 20;
my $pg = Xmhub::Pg->start(fsync => 0, max_connections => 50);
my $bouncer = Xmhub::PgBouncer->start($pg, pool => $POOL);
my @stacks;
END {
	my $status = $?;
	$_->stop for @stacks;
	$bouncer->stop if $bouncer;
	$pg->stop if $pg;
	$? = $status;
}

my $s3 = Xmhub::S3->start;
my $secret = join '', map { sprintf '%02x', int rand 256 } 1 .. 32;
my %env = ($s3->env, XMHUB_JWT_SECRET => $secret,
	XMHUB_DATABASE_POOLED => 'true');
push @stacks, Xmhub::Stack->start(addr => "127.0.0.$_",
	database_url => $bouncer->url, env => \%env) for 1 .. 4;

sub platform {
	my ($stack) = @_;
	return bless {stack => $stack, secret => $secret, n => 0,
		http => HTTP::Tiny->new(timeout => 60, keep_alive => 0)},
	    'Xmhub::Platform';
}
my @p = map { platform($_) } @stacks;
my $fac = $p[0]->facility('pooled');
my $admin = $p[0]->user('facility_admin', $fac);
my $ta = $p[0]->token($admin);
my $key = $p[0]->api_key($ta, 'upload', 'ingest');
mkuser($p[0], 'login@example.org', 'login-password', 'user', $fac);

# A short WAV (a file: on a pipe a WAV has no length in its header).
my $dir = $stacks[0]->var;
my ($st, undef, $e) = run(['ffmpeg', '-v', 'error', '-f', 'lavfi', '-i',
	'sine=frequency=440:duration=1', '-y', "$dir/take.wav"]);
die "ffmpeg: $e" if $st;
my $wav = do { local (@ARGV, $/) = "$dir/take.wav"; <> };

# --- every host at once: ingest, uploads, logins, reads ---
# Three clients per host, each 10 rounds of a batch (a session of its
# own), a read of the device list and of /api/auth/me; an upload in the
# first round, a login in the sixth.  What was not a success
# is written to the client's file, one line each.
my @clients = map { my $h = $_; map { [$h, $_] } 0 .. 2 } 0 .. 3;
my @sessions = map { Xmhub::Ingest->new($p[$_->[0]], $key)->session(
	100 + 3 * $_->[0] + $_->[1], [0, 'i32']) } @clients;
my @kids;
for my $c (0 .. $#clients) {
	my $h = $clients[$c][0];
	my $pid = fork() // die "fork: $!\n";
	if ($pid == 0) {
		my $p = $p[$h];
		my $in = Xmhub::Ingest->new($p, $key);
		open my $log, '>', "$dir/failed-$c" or POSIX::_exit(2);
		$log->autoflush(1);
		my $check = sub {
			my ($what, $want, $got) = @_;
			print $log "host $h: $what: $got\n" if $got != $want;
		};
		for my $i (0 .. 9) {
			my $sid = $sessions[$c]{id};
			my $ok = eval { $in->send($sid, $i, [0, 'i32', [[$i, $i]]]); 1 };
			print $log "host $h: batch $i: $@" unless $ok;
			$check->('devices', 200,
				($p->req(GET => '/api/v1/devices', token => $ta))[0]);
			$check->('me', 200,
				($p->req(GET => '/api/auth/me', token => $ta))[0]);
			$check->('upload', 200, ($p->req(POST => '/api/v1/uploads',
				key => $key, body => "--b\r\nContent-Disposition: "
				    . "form-data; name=\"file\"; filename=\"t$c-$i.wav\""
				    . "\r\nContent-Type: audio/wav\r\n\r\n$wav\r\n--b--\r\n",
				headers => {'Content-Type' =>
					'multipart/form-data; boundary=b'}))[0])
			    if $i == 0;
			$check->('login', 200, ($p->req(POST => '/api/auth/login',
				json => {email => 'login@example.org',
					password => 'login-password'}))[0])
			    if $i == 5;
		}
		POSIX::_exit(0);
	}
	push @kids, $pid;
}
# While they run: what PostgreSQL serves and what PgBouncer holds.
my ($max_backends, $max_clients, $max_servers) = (0, 0, 0);
while (grep { waitpid($_, POSIX::WNOHANG()) == 0 } @kids) {
	my (undef, $n) = $pg->psql("SELECT count(*) FROM pg_stat_activity "
		. "WHERE backend_type = 'client backend' AND datname = 'xmhub'");
	chomp $n;
	$max_backends = $n if $n && $n > $max_backends;
	my ($cl, $sv) = (0, 0);
	for (@{$bouncer->show('POOLS')}) {
		next if $_->{database} ne 'xmhub';
		$cl += $_->{cl_active} + $_->{cl_waiting};
		$sv += $_->{sv_active} + $_->{sv_idle} + $_->{sv_used}
		    + $_->{sv_tested} + $_->{sv_login};
	}
	$max_clients = $cl if $cl > $max_clients;
	$max_servers = $sv if $sv > $max_servers;
	sleep 0.2;
}
my $failed = join '', map {
	open my $f, '<', "$dir/failed-$_" or die "$dir/failed-$_: $!\n";
	local $/;
	<$f> // '';
} 0 .. $#clients;
is($failed, '', 'four hosts at once: every batch, read, upload and login '
    . 'succeeded');
is($p[0]->sql("SELECT count(*) FROM ingest_sessions s WHERE s.facility_id "
	. "= '$fac' AND s.total_samples = 10"), 12,
    'each of the 12 sessions counts its 10 samples');
is($p[0]->sql("SELECT count(*) FROM uploads WHERE facility_id = '$fac'"),
    12, 'the 12 uploads are stored');
ok($max_servers > 0 && $max_servers <= $POOL,
    "PgBouncer's server connections: at most $max_servers of a pool of $POOL");
ok($max_backends > 0 && $max_backends <= $POOL,
    "PostgreSQL served at most $max_backends connections of xmhub");
note("client connections to PgBouncer at most: $max_clients");
my $pglog = do { local (@ARGV, $/) = $pg->dir . '/log'; <> } // '';
unlike($pglog, qr/too many clients|remaining connection slots/,
    'PostgreSQL refused no connection');
my $programs = join '', map {
	local (@ARGV, $/) = $_->var . '/log/programs.log'; <> // '' } @stacks;
unlike($programs, qr/too many clients|remaining connection slots|prepared statement/,
    'no program met a refused connection or a missing prepared statement');

# --- a user deactivated through host 1, refused through the others ---
{
	my $u = $p[0]->user('user', $fac);
	my $tu = $p[0]->token($u);
	# Every process serving the route on each host caches the user.
	my @st = map { my $p = $_; map { ($p->req(GET => '/api/v1/devices',
		token => $tu))[0] } 1 .. 4 } @p;
	is("@st", join(' ', (200) x 16), 'a user served by all four hosts');
	($st) = $p[0]->req(PATCH => "/api/v1/users/$u->{id}", token => $ta,
		json => {is_active => JSON::PP::false});
	is($st, 200, 'deactivated through host 1');
	@st = map { ($_->req(GET => '/api/v1/devices', token => $tu))[0] }
	    @p[1 .. 3];
	is("@st", '401 401 401', 'refused on the next request through hosts 2-4');
}

# --- a pooler without timezone=UTC datestyle=ISO is refused ---
{
	my $bare = Xmhub::PgBouncer->start($pg, pool => 2, session => 0);
	local $ENV{XMHUB_ENV_FILE} = '/dev/null';
	local $ENV{XMHUB_DATABASE_POOLED} = 'true';
	local $ENV{XMHUB_DATABASE_URL} = $bare->url;
	local $ENV{PGTZ} = 'Europe/Paris';
	my ($st, $out, $err) = xmhub(['facility', 'list']);
	isnt($st, 0, 'xmhub through a pooler without the session settings fails');
	like($err, qr/TimeZone is \S+ and DateStyle .* not UTC and ISO/,
	    'saying which settings the pooler lacks');
	$bare->stop;
}

done_testing;
