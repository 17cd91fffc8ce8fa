#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# /api/health and /api/health/ready on the real stack (lighttpd, the
# health FastCGI program, PostgreSQL), including the database stopped
# mid-run and recovery without restarting lighttpd.
use strict;
use warnings;
use Test::More;
use HTTP::Tiny;
use JSON::PP;
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Stack;

# Every readiness request probes the store here (t/e2e/api-health-storage.t
# checks the default interval).
my $s = Xmhub::Stack->start(own_db => 1, # stops PostgreSQL
	env => { XMHUB_READY_INTERVAL => 0 });
my $http = HTTP::Tiny->new(timeout => 20);

# get($path, $method): (status, decoded body or undef, response)
sub call {
	my ($path, $method) = @_;
	my $r = $http->request($method // 'GET', $s->url($path));
	my $body = eval { decode_json($r->{content}) };
	return ($r->{status}, $body, $r);
}

my ($st, $b, $r) = call('/api/health');
is($st, 200, 'liveness 200');
is_deeply($b, {status => 'ok'}, 'liveness body');
like($r->{headers}{'content-type'}, qr{^application/json}, 'JSON content type');

($st, $b) = call('/api/health/ready');
is($st, 200, 'ready 200');
is_deeply($b, {status => 'ready', database => 'ok', storage => 'ok'},
	  'ready body names both parts');

($st, $b) = call('/api/healthz');
is($st, 404, 'a longer path under the prefix is 404');
ok(defined $b && $b->{detail}, '404 has a detail');
($st, $b, $r) = call('/api/health', 'POST');
is($st, 405, 'POST is 405');
is($r->{headers}{allow}, 'GET', 'Allow: GET');
ok(defined $b && $b->{detail}, '405 has a detail');

# Errors lighttpd answers itself have the API's shape too.
for my $c (['/no/such/path', 404], ['/api/health?x=%00', 400]) {
	my ($path, $want) = @$c;
	($st, $b, $r) = call($path);
	is($st, $want, "$path: $want from lighttpd");
	ok(defined $b && $b->{detail}, "$path: a JSON detail");
	like($r->{headers}{'content-type'} // '', qr{^application/json},
	     "$path: JSON content type");
}

# The database goes away while lighttpd and the programs keep running.
$s->stop_db;
($st, $b) = call('/api/health/ready');
is($st, 503, 'ready 503 with the database stopped');
is($b->{database}, 'unavailable', 'database named as unavailable');
is($b->{storage}, 'ok', 'storage still ok');
like($b->{detail} // '', qr/database/, 'detail says why');
($st) = call('/api/health');
is($st, 200, 'liveness does not need the database');

$s->start_db;
my $back = 0;
for (1 .. 20) {
	($st) = call('/api/health/ready');
	last if ($back = $st == 200);
	select(undef, undef, undef, 0.25);
}
ok($back, 'ready again after the database restarts, same processes');

# The object store goes away.
my $objects = $s->setting('XMHUB_STORAGE_DIR');
rename($objects, "$objects.gone") or die "$objects: $!";
($st, $b) = call('/api/health/ready');
is($st, 503, 'ready 503 without the object store');
is($b->{storage}, 'unavailable', 'storage named as unavailable');
rename("$objects.gone", $objects) or die "$objects: $!";
($st) = call('/api/health/ready');
is($st, 200, 'ready again with the store back');

done_testing();
