#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Metrics and request logs end to end (doc/metrics.md, doc/deploy.md):
# /api/metrics passes `promtool check metrics`; requests and ingest move
# the counters by exactly what was done, across the FastCGI processes and
# a kill -9 of them; the request id is answered, logged by the program and
# by lighttpd's access log; a 5xx leaves a line saying why; the endpoint
# is for the allowed addresses or a super_admin token.
use strict;
use warnings;
use Test::More;
use Xmhub::Platform qw(is_error);
use Xmhub::Prom qw(prom_samples prom_check);
use Xmhub::XMBP qw(batch);

my $p = Xmhub::Platform->start(own_db => 1); # stops PostgreSQL
my $stack = $p->stack;
my $fac = $p->facility('Metrics A');
my $admin = $p->user('facility_admin', $fac);
my $ta = $p->token($admin);
my $super = $p->token($p->user('super_admin', undef));
my $key = $p->api_key($ta, 'ingest');

# scrape(%opt): the metrics text and a hash "name{labels}" => value.
sub scrape {
	my (%opt) = @_;
	my ($st, undef, $res) = $p->req(GET => '/api/metrics', %opt);
	is($st, 200, 'scrape: 200') or diag $res->{content};
	return ($res, prom_samples($res->{content}));
}

sub log_of {
	my ($name) = @_;
	open my $f, '<', $stack->var . "/log/$name" or return '';
	local $/;
	return <$f> // '';
}

# --- the format, checked by promtool ---
my ($res, $m0) = scrape();
like($res->{headers}{'content-type'}, qr{^text/plain; version=0\.0\.4},
    'text format 0.0.4');
prom_check($res->{content}, 'promtool check metrics: no problem');
for my $name (qw(xmhub_http_requests_total xmhub_ingest_batches_total
    xmhub_ingest_samples_total xmhub_ingest_bytes_total xmhub_db_errors_total
    xmhub_rate_limited_total xmhub_ingest_queue_depth xmhub_transcode_jobs
    xmhub_transcode_job_duration_seconds xmhub_ingest_commit_samples
    xmhub_http_request_duration_seconds xmhub_face_inferences_total)) {
	like($res->{content}, qr/^# TYPE \Q$name\E /m, "$name is there");
}
is($m0->{'xmhub_transcode_jobs{state="queued"}'}, 0,
    'transcode jobs by state, from PostgreSQL');

# --- requests by group and status, exactly ---
my $ok = 'xmhub_http_requests_total{group="auth",status="200"}';
my $no = 'xmhub_http_requests_total{group="auth",status="401"}';
my $cnt = 'xmhub_http_request_duration_seconds_count{group="auth"}';
my (undef, $m1) = scrape();
for (1 .. 7) {
	my ($st) = $p->req(GET => '/api/auth/me', token => $ta);
	die "me: $st\n" if $st != 200;
}
for (1 .. 3) {
	my ($st) = $p->req(GET => '/api/auth/me');
	die "me: $st\n" if $st != 401;
}
my (undef, $m2) = scrape();
is(($m2->{$ok} // 0) - ($m1->{$ok} // 0), 7, 'auth 200: +7');
is(($m2->{$no} // 0) - ($m1->{$no} // 0), 3, 'auth 401: +3');
is(($m2->{$cnt} // 0) - ($m1->{$cnt} // 0), 10, 'auth latency count: +10');
my $sc = 'xmhub_http_requests_total{group="metrics",status="200"}';
is($m2->{$sc} - $m1->{$sc}, 1, 'the scrape counts itself, once');

# --- ingest: batches, samples, bytes, commit sizes ---
my ($st, $s) = $p->req(POST => '/api/v1/ingest/sessions', key => $key,
	json => {device_uid => 77, streams => [{stream_index => 0,
		name => 't', value_type => 'f32'}]});
is($st, 201, 'ingest session created');
my ($bytes, $samples) = (0, 0);
for my $seq (0 .. 2) {
	my $b = batch($seq, undef,
	    [0, 'f32', [map { [$seq * 100 + $_, $_ / 2] } 1 .. $seq + 2]]);
	my ($bst) = $p->req(POST => "/api/v1/ingest/sessions/$s->{id}/data",
		key => $key, body => $b,
		headers => {'Content-Type' => 'application/octet-stream'});
	is($bst, 200, "batch $seq acknowledged");
	$bytes += length $b;
	$samples += $seq + 2;
}
my (undef, $m3) = scrape();
is($m3->{xmhub_ingest_batches_total} - $m2->{xmhub_ingest_batches_total},
    3, 'ingest batches: +3');
is($m3->{xmhub_ingest_samples_total} - $m2->{xmhub_ingest_samples_total},
    $samples, "ingest samples: +$samples");
is($m3->{xmhub_ingest_bytes_total} - $m2->{xmhub_ingest_bytes_total},
    $bytes, "ingest bytes: +$bytes");
is($m3->{xmhub_ingest_commit_samples_count}
    - $m2->{xmhub_ingest_commit_samples_count}, 3, 'commit sizes: +3');
is($m3->{xmhub_ingest_commit_batches_sum}
    - $m2->{xmhub_ingest_commit_batches_sum}, 3,
    'batches per commit: 3 in all');
is($m3->{xmhub_ingest_commit_samples_sum}
    - $m2->{xmhub_ingest_commit_samples_sum}, $samples,
    'commit sizes: the sum of samples');

# --- counts survive a kill -9 of the processes that made them ---
sub children {
	my ($name) = @_;
	open my $f, '<', $stack->var . '/run/lighttpd.pid' or return ();
	chomp(my $lpid = <$f> // '');
	my @pids;
	for my $stat (glob '/proc/[0-9]*/stat') {
		open my $sf, '<', $stat or next;
		my $line = <$sf> // '';
		push @pids, $1 if $line =~ /^(\d+) \(\Q$name\E\) \S+ (\d+)/
		    && $2 == $lpid;
	}
	return @pids;
}
my @pids = children('auth');
ok(@pids > 0, 'the auth processes found');
kill 'KILL', @pids;
my $back = 0;
for (1 .. 80) {	# lighttpd starts them again
	last if ($back = ($p->req(GET => '/api/auth/me', token => $ta))[0])
	    == 200;
	select(undef, undef, undef, 0.25);
}
is($back, 200, 'auth answers again after kill -9');
my (undef, $m4) = scrape();
cmp_ok($m4->{$ok}, '>=', $m3->{$ok} + 1,
    'the killed processes\' counts are kept');
is($m4->{$ok} - $m3->{$ok}, 1, 'and the new process counts on: +1');

# --- the request id: answered, in the program's log and the access log ---
my (undef, undef, $r) = $p->req(GET => '/api/auth/me', token => $ta);
my $id = $r->{headers}{'x-request-id'} // '';
like($id, qr/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    'a new random UUID as X-Request-Id');
(undef, undef, $r) = $p->req(GET => '/api/auth/me', token => $ta,
	headers => {'X-Request-Id' => 'proxy-42.a:b_c'});
is($r->{headers}{'x-request-id'}, 'proxy-42.a:b_c',
    'a sane incoming X-Request-Id is kept');
for my $bad ('a b', 'x' x 65, "a\"b", 'a=b') {
	(undef, undef, $r) = $p->req(GET => '/api/auth/me', token => $ta,
		headers => {'X-Request-Id' => $bad});
	like($r->{headers}{'x-request-id'} // '', qr/^[0-9a-f-]{36}$/,
	    "an insane one ('" . substr($bad, 0, 8) . "') is replaced");
}
my $plog = '';
for (1 .. 15) {	# written before the answer when idle, else within a second
	last if ($plog = log_of('programs.log')) =~ /request_id=\Q$id\E$/m;
	select(undef, undef, undef, 0.2);
}
like($plog, qr/^time=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=info program=auth pid=\d+ msg=request method=GET path=\/api\/auth\/me status=200 duration_ms=\d+\.\d{3} request_id=\Q$id\E$/m,
    'the program logged the request with its id');
my $alog = '';
for (1 .. 100) {	# lighttpd writes its access log every few seconds
	last if ($alog = log_of('access.log')) =~ /\Q$id\E/;
	select(undef, undef, undef, 0.2);
}
like($alog, qr{"GET /api/auth/me HTTP/1\.1" 200 .* \Q$id\E$}m,
    'the access log line carries the same id');

# --- a 5xx always leaves a line saying why ---
# The device list: a program with no connection yet, whose request needs
# the database (/api/auth/me may answer from its account cache).
$stack->stop_db;
my ($down, $dbody, $dres) = $p->req(GET => '/api/v1/devices', token => $ta);
is_error($down, $dbody, 503, 'database down: 503');
my $did = $dres->{headers}{'x-request-id'} // 'none';
$stack->start_db;
$plog = log_of('programs.log');
like($plog, qr/^time=\S+ level=error program=devices pid=\d+ request_id=\Q$did\E msg="answered 503: the database is unavailable"$/m,
    'the 503 is logged with its reason and request id');
like($plog, qr/^time=\S+ level=error program=devices pid=\d+ request_id=\Q$did\E msg="db: connect: /m,
    'and the database error that caused it');
like($plog, qr/^time=\S+ level=error .* msg=request method=GET path=\/api\/v1\/devices status=503 .*request_id=\Q$did\E$/m,
    'and the request line');
my (undef, $m5);
for (1 .. 20) {	# the first request after the restart may find a dead connection
	my ($sst, undef, $sres) = $p->req(GET => '/api/metrics');
	if ($sst == 200) { (undef, $m5) = scrape(); last }
	select(undef, undef, undef, 0.25);
}
cmp_ok($m5->{xmhub_db_errors_total}, '>', $m4->{xmhub_db_errors_total},
    'PostgreSQL errors counted');

# --- who may read them ---
$stack->restart(env => {XMHUB_METRICS_ALLOW => '10.0.0.0/8, fd00::/8'});
my ($fst, $fbody) = $p->req(GET => '/api/metrics');
is_error($fst, $fbody, 403, 'another address, no token: 403');
($fst, $fbody) = $p->req(GET => '/api/metrics', token => $ta);
is_error($fst, $fbody, 403, 'a facility_admin token: 403');
($fst, $fbody) = $p->req(GET => '/api/metrics', token => 'x.y.z');
is_error($fst, $fbody, 401, 'a bad token: 401');
my ($m6res, $m6) = scrape(token => $super);
# Since $m4: the id's request, the sane id's and the four insane ones.
is($m6->{$ok}, $m4->{$ok} + 6,
    'a super_admin token reads them; the restart kept the counts');

# --- off: no counting, no request lines but 5xx ones ---
$stack->restart(env => {XMHUB_METRICS_ALLOW => undef, XMHUB_METRICS => 'off',
	XMHUB_LOG_REQUESTS => 'off'});
my $before = length log_of('programs.log');
(undef, undef, $r) = $p->req(GET => '/api/auth/me', token => $ta);
my $offid = $r->{headers}{'x-request-id'} // '';
like($offid, qr/^[0-9a-f-]{36}$/, 'off: the request id is still answered');
unlike(substr(log_of('programs.log'), $before), qr/\Q$offid\E/,
    'off: no request line');
($fst, $fbody) = $p->req(GET => '/api/metrics');
is_error($fst, $fbody, 503, 'off: /api/metrics says so (503)');
$stack->restart(env => {XMHUB_METRICS => undef, XMHUB_LOG_REQUESTS => undef});

unlike(log_of('programs.log'), qr/Sanitizer|runtime error|leak/i,
    'the programs reported no sanitizer errors');
done_testing;
