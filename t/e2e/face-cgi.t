#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# The face programs started as a plain CGI (lib/web/cgi): they run
# lib/web/app's loop with the face service's hooks (lib/face/service/
# faceapi.h), so their one request is answered as under FastCGI: the
# security headers and X-Request-Id on every answer, the admin's HTTP
# Basic (ROUTE_BASIC), the 404 of an unknown path. No web server, no
# database: storage is off.
use strict;
use warnings;
use File::Temp qw(tempdir);
use Test::More;
use Xmhub::Test qw(run);

my $state = tempdir(CLEANUP => 1);

# cgi($program, $method, $path, %headers): (status, headers hash, body)
# of one request to cgi-bin/$program, in an environment of its own.
sub cgi {
	my ($prog, $method, $path, %h) = @_;
	my @env = ('GATEWAY_INTERFACE=CGI/1.1', "REQUEST_METHOD=$method",
		"SCRIPT_NAME=$path", "REQUEST_URI=$path",
		'SERVER_PROTOCOL=HTTP/1.1', 'REMOTE_ADDR=127.0.0.1',
		"FACE_API_STATE_DIR=$state", 'FACE_API_STORAGE_ENABLED=false',
		"PATH=$ENV{PATH}", map { "$_=$h{$_}" } sort keys %h);
	push @env, map { "$_=$ENV{$_}" } grep { /^(A|L|UB)SAN_OPTIONS$/ }
	    keys %ENV;
	my ($st, $out, $err) = run(['env', '-i', @env,
		"$ENV{XMHUB_BUILDDIR}/cgi-bin/$prog"]);
	is($st, 0, "$prog $method $path: exit status 0") or diag $err;
	my ($head, $body) = split /\r?\n\r?\n/, $out, 2;
	my %hd;
	for (split /\r?\n/, $head // '') {
		my ($k, $v) = /^([^:]+):\s*(.*)$/ or next;
		$hd{lc $k} = $v;
	}
	my ($code) = ($hd{status} // '') =~ /^(\d{3})/;
	return ($code // 0, \%hd, $body // '');
}

my $uuid = qr/^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$/;

my ($code, $hd, $body) = cgi('face-admin', 'GET', '/api/v1/admin/stats');
is($code, 401, 'admin endpoint without credentials: 401');
like($hd->{'www-authenticate'} // '', qr/^Basic realm="face-api admin"/,
    'WWW-Authenticate: Basic');
is($hd->{'x-content-type-options'}, 'nosniff', 'security headers');
like($hd->{'x-request-id'} // '', $uuid, 'X-Request-Id');

($code, $hd) = cgi('face-admin', 'GET', '/api/v1/admin/stats',
	HTTP_AUTHORIZATION => 'Basic YWRtaW46d3Jvbmc=');
is($code, 401, 'wrong admin password: 401');

($code, $hd) = cgi('face-video', 'GET', '/api/v1/nowhere',
	HTTP_X_REQUEST_ID => 'client-id-42');
is($code, 404, 'unknown path: 404');
is($hd->{'x-frame-options'}, 'DENY', 'the 404 carries the security headers');
is($hd->{'x-request-id'}, 'client-id-42', "the client's X-Request-Id kept");

done_testing();
