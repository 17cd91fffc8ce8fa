#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/shared-hosting - the platform behind a shared host's Apache
# (doc/shared-hosting.md: the web root of `xmhub httpd-conf htaccess`)
# under mod_fcgid and as plain CGIs (mod_cgid), next to the lighttpd stack
# in the same run, with the same programs, settings and database:
# authenticated reads (GET /api/auth/me) and HTTP ingest batches (4
# streams of 250 f32), each as a ratio to lighttpd's rate.  Rounds
# alternate the servers (this machine is shared and noisy).
#
# No suexec here (it would need an account of its own): the servers run
# the programs as the stack's user, with its env file named by the
# server (SetEnv, FcgidInitialEnv).  Under mod_fcgid suexec costs one
# exec per process started, under plain CGI one per request.
use strict;
use warnings;
use File::Temp qw(tempdir);
use JSON::PP;
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Ingest;
use Xmhub::SharedHost;
use Xmhub::Stack;
use Xmhub::Test qw(run xmhub_json);
use Xmhub::Wrk qw(wrk wrk_program);

my $seconds = $ENV{BENCH_SECONDS} || 10;
my $rounds = $ENV{BENCH_ROUNDS} || 3;
my $conns = $ENV{BENCH_CONNECTIONS} || 16;
my $build = $ENV{XMHUB_BUILDDIR};
wrk_program();

my $s = Xmhub::Stack->start;
$ENV{XMHUB_ENV_FILE} = $s->env_file;
delete $ENV{XMHUB_DATABASE_URL};
my $user = $> == 0 ? 'xmhub' : undef;

# The web root: the build's programs through a libexec/xmhub of its own.
my $tmp = tempdir('xmhub-bench-host-XXXXXX', TMPDIR => 1, CLEANUP => 1);
chmod 0755, $tmp;
mkdir "$tmp/$_", 0755 for qw(libexec public);
symlink $build, "$tmp/libexec/xmhub" or die "symlink: $!";
my ($st, $out, $err) = run(["$ENV{XMHUB_SRCDIR}/httpd-conf/gen", 'site',
	'htaccess', "--libexecdir=$tmp/libexec", "--pkgdatadir=$tmp",
	"--sysconfdir=$tmp", "--public=$tmp/public"]);
die "htaccess: $out$err" if $st;
my %front = (lighttpd => $s);
for my $mode (qw(fcgid cgi)) {
	$front{$mode} = Xmhub::SharedHost->start(mode => $mode,
		public => "$tmp/public", dir => "$tmp/apache", user => $user,
		env => {XMHUB_ENV_FILE => $s->env_file});
}

# A facility, its admin's token, an ingest key, a session per server
# and connection (a session's batches are answered in order).
my $fac = xmhub_json([qw(facility create --name Bench --slug bench)])->{id};
xmhub_json(['user', 'create', '--email', 'bench@example.org', '--password',
	'-', '--role', 'facility_admin', '--facility', $fac], "bench-password\n");
my $key = xmhub_json(['api-key', 'create', '--facility', $fac, '--name',
	'bench', '--scopes', 'ingest'])->{key};
my $p = $front{fcgid}->platform;
my ($lst, $login) = $p->req(POST => '/api/auth/login',
	json => {email => 'bench@example.org', password => 'bench-password'});
die "login: $lst\n" if $lst != 200;
my $token = $login->{access_token};
my $in = Xmhub::Ingest->new($p, $key);
my %sessions = map { my $f = $_; ($f => [map { $in->session(7,
	map { [$_, 'f32'] } 0 .. 3)->{id} } 1 .. $conns]) } sort keys %front;

# One batch of 4 x 250 samples; wrk's Lua gives each connection a
# session and counts its batch_seq (bytes 6 and 7).
my $batch = $in->encode(1, map { my $ch = $_;
	[$ch, 'f32', [map { [1_000_000 + $_ * 10_000, $_ * 0.5] } 0 .. 249]] }
	0 .. 3);
open(my $bf, '>:raw', "$tmp/batch.bin") or die "$tmp/batch.bin: $!";
print $bf $batch;
close $bf or die "$tmp/batch.bin: $!";

# The Lua of the ingest case of $front: the batches go round the
# sessions of $front, each session's with batch_seq 1, 2, ...
sub ingest_lua {
	my ($front) = @_;
	my $file = "$tmp/ingest-$front.lua";
	open(my $f, '>', $file) or die "$file: $!";
	print $f "local paths = {\n", map({ "\"/api/v1/ingest/sessions/$_/data\",\n" }
	    @{$sessions{$front}}), "}\n", <<"LUA", <<'LUA';
local bf = assert(io.open("$tmp/batch.bin", "rb"))
local key = "$key"
LUA
local body = bf:read("*a")
bf:close()
-- wrk's two threads take every other session each.
local threads = 0
function setup(thread)
	thread:set("tid", threads)
	threads = threads + 1
end
function init(args)
	seq, k = {}, 0
end
function request()
	local i = (k * 2 + tid) % #paths + 1
	k = k + 1
	seq[i] = ((seq[i] or 0) + 1) % 65536
	local b = body:sub(1, 6) .. string.char(math.floor(seq[i] / 256),
		seq[i] % 256) .. body:sub(9)
	return wrk.format("POST", paths[i], {["X-Api-Key"] = key,
		["Content-Type"] = "application/octet-stream"}, b)
end
LUA
	close $f or die "$file: $!";
	return $file;
}

my (%rate, @order);
for my $round (1 .. $rounds) {
	# Alternating: lighttpd first in odd rounds, last in even ones.
	my @fronts = ('lighttpd', 'fcgid', 'cgi');
	@fronts = reverse @fronts if $round % 2 == 0;
	for my $front (@fronts) {
		my $url = $front{$front}->url('/api/auth/me');
		my ($rps) = wrk($url, conns => $conns, seconds => $seconds,
			name => "$front /api/auth/me",
			args => ['-H', "Authorization: Bearer $token"]);
		push @{$rate{me}{$front}}, $rps;
		($rps) = wrk($front{$front}->url('/'), conns => $conns,
			seconds => $seconds, name => "$front ingest",
			args => ['-s', ingest_lua($front)]);
		push @{$rate{ingest}{$front}}, $rps;
	}
}

# The median of a list.
sub median { my @v = sort { $a <=> $b } @_; return $v[$#v / 2] }

my %json;
for my $case (qw(me ingest)) {
	my $base = median(@{$rate{$case}{lighttpd}});
	printf "%-7s lighttpd %8.0f/s", $case, $base;
	for my $front (qw(fcgid cgi)) {
		my $m = median(@{$rate{$case}{$front}});
		printf "  %s %8.0f/s (%.2fx; rounds %s)", $front, $m, $m / $base,
		    join(' ', map { sprintf '%.2fx', $rate{$case}{$front}[$_]
			    / $rate{$case}{lighttpd}[$_] } 0 .. $rounds - 1);
		$json{$case}{$front} = $m / $base;
	}
	print "\n";
	$json{$case}{lighttpd} = $base;
}
print JSON::PP->new->canonical->encode(\%json), "\n";
