#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# The platform's OpenAPI document (doc/platform-www/openapi.json, doc/api.md
# "The OpenAPI document") is true, not decorative:
#   - its schemas are valid JSON Schema 2020-12 (Ajv);
#   - it and the face service's document (doc/face-www/openapi.json)
#     are valid OpenAPI (the OpenAPI Initiative's schemas, t/lib/openapi-valid.mjs);
#   - every route of the route tables of cgi-bin/*.c (Xmhub::Routes) is
#     in it and nothing else is, but the WebSocket upgrade, which
#     websocketd serves; each with the security of its table entry (JWT,
#     API key, signed URL, none), minimum role and API-key scope;
#   - on a real stack one representative request per operation answers a
#     success status the document lists, and every answer of this test
#     is checked against the document's schemas (Xmhub::Platform with
#     XMHUB_OPENAPI_CHECK, t/lib/openapi-check.cjs);
#   - the checker catches an answer the document does not describe;
#   - /api/openapi.json, /api/docs (Swagger UI) and /api/redoc (ReDoc)
#     answer, the pages load nothing but local assets, and in Debian's
#     chromium (t/lib/openapi-pages.mjs) they render every operation
#     without a script error or a request to another origin.
use strict;
use warnings;
use Test::More;
use IPC::Open2 qw(open2);
use JSON::PP;
use MIME::Base64 qw(encode_base64);
use Time::HiRes qw(sleep time);
use Xmhub::Ingest;
use Xmhub::Objects;
use Xmhub::Platform qw(is_error);
use Xmhub::Routes qw(routes);
use Xmhub::WS;

my $src = $ENV{XMHUB_SRCDIR} or die "XMHUB_SRCDIR is not set\n";
$ENV{XMHUB_NPM_DIR} //= "$src/_build/npm";
$ENV{XMHUB_OPENAPI_CHECK} = 1;
my $json = JSON::PP->new->utf8->canonical;
my $file = "$src/doc/platform-www/openapi.json";
my $doc = do {
	open my $f, '<', $file or die "$file: $!\n";
	local $/;
	$json->decode(scalar <$f>);
};
like($doc->{openapi}, qr/^3\.1\.\d+$/, 'the document is OpenAPI 3.1');

# --- the schemas compile ---
{
	my $pid = open2(my $out, my $in, 'node', "$src/t/lib/openapi-check.cjs",
	    $file, '--schemas');
	close $in;
	my @lines = <$out>;
	waitpid $pid, 0;
	is($?, 0, 'every schema of the document is valid JSON Schema 2020-12')
	    or diag @lines;
}

# --- both services' documents are valid OpenAPI ---
# Against the OpenAPI Initiative's schemas of their versions (the face
# service's document is 3.0: `required: []` was an error there).
{
	my @docs = ($file, "$src/doc/face-www/openapi.json");
	my $out = qx(node "$src/t/lib/openapi-valid.mjs" @docs 2>&1);
	is($?, 0, 'both OpenAPI documents are valid OpenAPI') or diag $out;
	like($out, qr/^ok \Q$_\E /m, "$_: valid") for @docs;
}

# --- the route tables and the document, both ways ---
# The face service's programs have their own document (doc/face-www); the
# WebSocket authorizer is no route of its own.
my @SKIP = qw(face.c face-admin.c face-video.c ingest-authorizer.c);
my @routes = routes($src, skip => \@SKIP);
my %ROLE = (ROLE_USER => 'user', ROLE_FACILITY_ADMIN => 'facility_admin',
	ROLE_SUPER_ADMIN => 'super_admin');
my %table = map { ("$_->{method} $_->{pattern}" => $_) } @routes;
my (%op, @ws);
for my $path (sort keys %{$doc->{paths}}) {
	for my $m (sort keys %{$doc->{paths}{$path}}) {
		my $o = $doc->{paths}{$path}{$m};
		next unless ref $o eq 'HASH' && $o->{responses};
		if ($o->{'x-xmhub-websocket'}) {
			push @ws, uc($m) . " $path";
			next;
		}
		$op{uc($m) . " $path"} = $o;
	}
}
ok(scalar @routes > 40, scalar(@routes) . ' routes in the tables');
is_deeply(\@ws, ['GET /api/v1/ingest/ws'],
    'the one route not in a table is the WebSocket upgrade');
for my $k (sort keys %table) {
	ok($op{$k}, "$table{$k}{program}: $k is in the document");
}
for my $k (sort keys %op) {
	ok($table{$k}, "the document's $k is in a route table");
}
# Who may call: the document's security as the table's entry says.
sub has_req {
	my ($sec, @names) = @_;
	my %want = map { $_ => 1 } @names;
	return scalar grep { join(',', sort keys %$_) eq join(',', sort keys %want) }
	    @{$sec // []};
}
for my $k (sort grep { $op{$_} } keys %table) {
	my ($r, $o) = ($table{$k}, $op{$k});
	my $sec = $o->{security};
	if ($r->{auth} eq 'ROUTE_PUBLIC') {
		ok(has_req($sec), "$k: callable without credentials");
	} elsif ($r->{auth} eq 'ROUTE_JWT') {
		ok(has_req($sec, 'bearer') && @$sec == 1, "$k: bearer only");
	} elsif ($r->{auth} eq 'ROUTE_JWT_OR_SIGNED') {
		ok(has_req($sec, 'bearer') && has_req($sec, 'signedUrl')
		    && @$sec == 2, "$k: bearer or a signed URL");
	} elsif ($r->{auth} eq 'ROUTE_API_KEY') {
		ok(has_req($sec, 'apiKey') && @$sec == 1, "$k: API key only");
	} else {
		fail("$k: $r->{auth} has no rule here; add one");
	}
	is($o->{'x-xmhub-min-role'}, $ROLE{$r->{min_role}},
	    "$k: minimum role " . ($ROLE{$r->{min_role}} // 'none'));
	is($o->{'x-xmhub-scope'}, $r->{scope},
	    "$k: API key scope " . ($r->{scope} // 'none'));
	ok($o->{responses}{401}, "$k: 401 documented")
	    if $r->{auth} ne 'ROUTE_PUBLIC';
	ok($o->{responses}{400}, "$k: 400 documented")
	    if $k =~ /\{/ || $o->{requestBody} || $o->{parameters};
	ok($o->{responses}{404}, "$k: 404 documented") if $k =~ /\{id\}/;
}

# --- the checker catches what the document does not describe ---
{
	my $pid = open2(my $out, my $in, 'node', "$src/t/lib/openapi-check.cjs",
	    $file);
	my @cases = (
	    [1, {method => 'GET', path => '/api/health', status => 200,
		type => 'application/json', body => '{"status":"ok"}'}],
	    [0, {method => 'GET', path => '/api/health', status => 200,
		type => 'application/json', body => '{"status":1}'},
		'a member of another type'],
	    [0, {method => 'GET', path => '/api/health', status => 418,
		type => 'application/json', body => '{"detail":"x"}'},
		'a status not listed'],
	    [0, {method => 'GET', path => '/api/health', status => 200,
		type => 'text/html', body => '<p>'}, 'another Content-Type'],
	    [0, {method => 'GET', path => '/api/v1/users/x', status => 403,
		type => 'application/json', body => '{"error":"x"}'},
		'an error without detail'],
	    [0, {method => 'GET', path => '/api/v1/nowhere', status => 200,
		type => 'application/json', body => '{}'},
		'a path the document does not have'],
	    [0, {method => 'PUT', path => '/api/v1/tags', status => 200,
		type => 'application/json', body => '{}'},
		'a method the document does not have'],
	);
	print {$in} $json->encode($_->[1]), "\n" for @cases;
	close $in;
	for my $c (@cases) {
		my $r = $json->decode(scalar <$out>);
		is(!!$r->{ok}, !!$c->[0], $c->[0] ? 'the checker passes a true answer'
		    : "the checker refuses $c->[2]");
	}
	waitpid $pid, 0;
}

# --- one representative request per operation, on a real stack ---
my $p = Xmhub::Platform->start;
my $s = $p->stack;
my %done; # "METHOD template" => the success status answered

# call($method, $path, %opt, want => $status): the request, which must
# answer $status; a success (2xx) is recorded against the template of
# $path; (status, body, response).
sub call {
	my ($method, $path, %opt) = @_;
	my $want = delete $opt{want};
	my @r = $p->req($method, $path, %opt);
	(my $bare = $path) =~ s/\?.*//s;
	my ($k) = grep {
		my ($m, $t) = split / /, $_, 2;
		(my $re = quotemeta $t) =~ s/\\\{[^}]*\\\}/[^\/]+/g;
		$m eq $method && $bare =~ /^$re$/
	} sort { ($a =~ tr/{//) <=> ($b =~ tr/{//) } keys %op;
	if (is($r[0], $want, "$method $path: $want")) {
		$done{$k} //= $r[0] if $k && $r[0] =~ /^2/;
	} else {
		diag explain $r[1];
	}
	return @r;
}

my $super = $p->token($p->user('super_admin'));
my ($st, $b);
($st, $b) = call(POST => '/api/v1/facilities', token => $super, want => 200,
    json => {name => 'OpenAPI A', slug => 'openapi-a',
	description => 'documented'});
my $fac = $b->{id};
call(GET => '/api/v1/facilities', token => $super, want => 200);
call(GET => "/api/v1/facilities/$fac", token => $super, want => 200);
call(PATCH => "/api/v1/facilities/$fac", token => $super, want => 200,
    json => {description => undef});
call(PATCH => "/api/v1/facilities/$fac/storage", token => $super, want => 200,
    json => {quota_bytes => 1000000, keep_samples_days => 30});
call(GET => "/api/v1/facilities/$fac/storage", token => $super, want => 200);
my $gone = $p->facility('OpenAPI gone');
call(DELETE => "/api/v1/facilities/$gone", token => $super, want => 204);

my $admin_id = $p->user('facility_admin', $fac);
my $admin = $p->token($admin_id);
my $email = 'openapi-' . $p->uniq . '@example.org';
($st, $b) = call(POST => '/api/v1/users', token => $admin, want => 200,
    json => {email => $email, password => 'open sesame',
	display_name => 'Open API', role => 'user'});
my $user_id = $b->{id};
call(GET => '/api/v1/users', token => $admin, want => 200);
call(GET => "/api/v1/users/$user_id", token => $admin, want => 200);
call(PATCH => "/api/v1/users/$user_id", token => $admin, want => 200,
    json => {display_name => 'Open API 2'});

($st, $b) = call(POST => '/api/auth/login', want => 200,
    json => {email => $email, password => 'open sesame'});
my ($access, $refresh) = @$b{qw(access_token refresh_token)};
call(GET => '/api/auth/me', token => $access, want => 200);
($st, $b) = call(POST => '/api/auth/refresh', want => 200,
    json => {refresh_token => $refresh});
$refresh = $b->{refresh_token};
# Failed logins, then the throttle cleared.
$p->req(POST => '/api/auth/login', json => {email => $email,
    password => 'wrong'}) for 1 .. 2;
call(DELETE => "/api/v1/users/$user_id/login-throttle", token => $super,
    want => 204);
call(POST => '/api/auth/logout', want => 204,
    json => {refresh_token => $refresh}) if $table{'POST /api/auth/logout'};
call(DELETE => "/api/v1/users/$user_id", token => $admin, want => 204);
my $tu = $p->token($p->user('user', $fac));

($st, $b) = call(POST => '/api/v1/api-keys', token => $admin, want => 200,
    json => {name => 'openapi key', scopes => ['upload', 'ingest']});
my $key = $b->{key};
call(GET => '/api/v1/api-keys', token => $admin, want => 200);
call(GET => '/api/v1/ping', key => $key, want => 200);
($st, $b) = $p->req(POST => '/api/v1/api-keys', token => $admin,
    json => {name => 'revoked'});
call(DELETE => "/api/v1/api-keys/$b->{id}", token => $admin, want => 204);

($st, $b) = call(POST => '/api/v1/devices', token => $admin, want => 201,
    json => {device_uid => 77, name => 'openapi device'});
my $dev = $b->{id};
call(GET => '/api/v1/devices', token => $tu, want => 200);
call(GET => "/api/v1/devices/$dev", token => $tu, want => 200);
call(PATCH => "/api/v1/devices/$dev", token => $admin, want => 200,
    json => {firmware_version => '1.2'});

# Alarms (doc/alarms.md): an alarm raised as ingest or the runner raise
# them (sql/021 alarm_raise), acknowledged and cleared.
($st, $b) = call(POST => '/api/v1/alarm-rules', token => $admin, want => 201,
    json => {name => 'hot', kind => 'threshold', device_id => $dev,
	stream_name => 'temp', op => 'outside', lo => -10, hi => 40.5,
	for_samples => 3, severity => 'critical'});
my $rule = $b->{id};
call(GET => '/api/v1/alarm-rules', token => $tu, want => 200);
($st, $b) = call(POST => '/api/v1/webhooks', token => $admin, want => 201,
    json => {name => 'pager', url => 'http://127.0.0.1:9/hook',
	secret => 'sixteen bytes at least'});
call(GET => '/api/v1/webhooks', token => $admin, want => 200);
call(PATCH => "/api/v1/alarm-rules/$rule", token => $admin, want => 200,
    json => {severity => 'warning', enabled => JSON::PP::true});
call(PATCH => "/api/v1/webhooks/$b->{id}", token => $admin, want => 200,
    json => {enabled => JSON::PP::false, secret => 'another sixteen bytes'});
my $alarm = $p->sql("SELECT alarm FROM alarm_raise('$rule', '$dev', 41, "
    . "'temp outside the limits')");
call(GET => '/api/v1/alarms', token => $tu, want => 200);
call(GET => '/api/v1/webhook-deliveries', token => $admin, want => 200);
call(POST => "/api/v1/alarms/$alarm/acknowledge", token => $tu, want => 200);
call(POST => "/api/v1/alarms/$alarm/clear", token => $admin, want => 200);
call(DELETE => "/api/v1/webhooks/$b->{id}", token => $admin, want => 204);
call(DELETE => "/api/v1/alarm-rules/$rule", token => $admin, want => 204);

($st, $b) = call(POST => '/api/v1/tags', token => $admin, want => 200,
    json => {name => 'bird', color => '#A0b0C0'});
my $tag = $b->{id};
call(GET => '/api/v1/tags', token => $tu, want => 200);

# An upload, transcoded by the stack's runner.
($st, $b) = Xmhub::Objects::upload($p, $key, 'tone.wav',
    Xmhub::Objects::wav(8000));
is($st, 200, 'an upload: 200');
$done{'POST /api/v1/uploads'} = $st if $st == 200;
my $up = $b->{id};
my $t0 = time;
do {
	sleep 0.5;
	($st, $b) = $p->req(GET => "/api/v1/uploads/$up", token => $tu);
} while (($b->{status} // '') =~ /^(pending|processing)$/ && time - $t0 < 90);
is($b->{status}, 'completed', 'the upload is transcoded');
call(GET => "/api/v1/uploads/$up", token => $tu, want => 200);
call(GET => '/api/v1/uploads?per_page=5&status=completed', token => $tu,
    want => 200);
call(PATCH => "/api/v1/uploads/$up", token => $tu, want => 200,
    json => {metadata => {site => 'pond'}, tags => [$tag]});
call(GET => "/api/v1/uploads/$up/waveform.json?bits=8", token => $tu,
    want => 200);
call(GET => "/api/v1/uploads/$up/spectrogram.png", token => $tu, want => 200);
call(GET => "/api/v1/streams/$up", token => $tu, want => 200);
($st, $b) = call(POST => '/api/auth/media-url', token => $tu, want => 200,
    json => {path => "/api/v1/streams/$up"});
# The signed URL works without a token.
call(GET => $b->{url}, want => 200);
($st, $b) = call(GET => "/api/v1/transcode-jobs?upload_id=$up", token => $tu,
    want => 200);
my ($job) = grep { $_->{upload_id} eq $up } @{$b->{items}};
call(GET => "/api/v1/transcode-jobs/$job->{id}", token => $tu, want => 200);
# The runner stopped, so that the new job is still queued when cancelled.
ok($s->stop_daemon('transcode'), 'the transcode runner is stopped');
($st, $b) = call(POST => "/api/v1/uploads/$up/retranscode", token => $tu,
    want => 200);
call(POST => "/api/v1/transcode-jobs/$b->{job_id}/cancel", token => $admin,
    want => 204);
call(DELETE => "/api/v1/tags/$tag", token => $admin, want => 204);
call(DELETE => "/api/v1/uploads/$up", token => $tu, want => 204);

# An ingest session with an f32 stream and a PCM audio stream.
my $in = Xmhub::Ingest->new($p, $key);
($st, $b) = call(POST => '/api/v1/ingest/sessions', key => $key, want => 201,
    json => {device_uid => 78, name => 'walk', metadata => {a => 1},
	streams => [{stream_index => 0, name => 'temp', value_type => 'f32',
		unit => 'C', sample_rate_hz => 10},
	    {stream_index => 1, name => 'mic', value_type => 'bytes',
		audio => {codec => 'pcm_s16le', sample_rate_hz => 8000,
		    channels => 1}}]});
my $sid = $b->{id};
my $pcm = chr(1) . pack('s<*', map { int(8000 * sin($_ / 3)) } 0 .. 3999);
call(POST => "/api/v1/ingest/sessions/$sid/data", key => $key, want => 200,
    body => $in->encode(1, [0, 'f32', [[0, 1.5], [100000, 2.5]]],
	[1, 'bytes', [[0, encode_base64($pcm, '')]]]),
    headers => {'Content-Type' => 'application/octet-stream'});
my ($ws, $wst) = Xmhub::WS->connect($s->port,
    "/api/v1/ingest/ws?session_id=$sid", {'X-Api-Key' => $key});
is($wst, 101, 'GET /api/v1/ingest/ws upgrades (101, as documented)');
ok($doc->{paths}{'/api/v1/ingest/ws'}{get}{responses}{101},
    'the document lists 101 for the WebSocket');
$ws->close if $ws;
call(GET => '/api/v1/metadata/sessions?status=active', token => $tu,
    want => 200);
call(GET => "/api/v1/metadata/sessions/$sid", token => $tu, want => 200);
my $base = "/api/v1/metadata/sessions/$sid/streams";
call(GET => "$base/0/samples?limit=1", token => $tu, want => 200);
call(GET => "$base/0/samples?bucket_us=50000", token => $tu, want => 200);
call(GET => "$base/0/samples?format=csv", token => $tu, want => 200);
call(GET => "$base/1/samples?format=wav", token => $tu, want => 200);
call(GET => "$base/1/spectrogram.png", token => $tu, want => 200);
call(POST => "/api/v1/ingest/sessions/$sid/close", key => $key, want => 200);

call(GET => '/api/health', want => 200);
call(GET => '/api/health/ready', want => 200);
call(GET => '/api/metrics', want => 200) if $table{'GET /api/metrics'};

# Errors answer as documented too (checked by the hook).
is_error(call(GET => '/api/v1/devices/not-a-uuid', token => $tu, want => 400),
    400, 'a bad id');
is_error(call(GET => '/api/v1/facilities', token => $tu, want => 403), 403,
    'too low a role');
is_error(call(GET => '/api/v1/tags', want => 401), 401, 'no token');
is_error(call(GET => '/api/v1/ping', want => 401), 401, 'no key');
is_error(call(DELETE => '/api/v1/devices/' . $dev, token => $admin,
    want => 405), 405, 'a method the path does not have');

# Every operation of the tables was driven to a documented success.
for my $k (sort grep { $table{$_} } keys %op) {
	ok($done{$k}, "$k answered a documented success ("
	    . ($done{$k} // 'not driven') . ')');
}
ok($Xmhub::Platform::openapi_checked > 50,
    "$Xmhub::Platform::openapi_checked answers checked against the document");

# --- the document and its pages, served ---
my $http = $p->{http};
my $url = sub { $s->url($_[0]) };
my $res = $http->get($url->('/api/openapi.json'));
is($res->{status}, 200, '/api/openapi.json: 200');
like($res->{headers}{'content-type'} // '', qr{^application/json},
    '/api/openapi.json: application/json');
is_deeply(eval { $json->decode($res->{content}) }, $doc,
    '/api/openapi.json is the document');
for my $page (qw(/api/docs /api/redoc)) {
	$res = $http->get($url->($page));
	is($res->{status}, 200, "$page: 200");
	like($res->{headers}{'content-type'} // '', qr{^text/html},
	    "$page: text/html");
	my $html = $res->{content} // '';
	unlike($html, qr{(?:https?:)?//[a-z0-9.-]+\.[a-z]}i,
	    "$page names no other host");
	my $loads = $html =~ m{"/api/openapi\.json"};
	# data: URLs (an empty favicon) ask no server.
	my @assets = grep { !/^data:/ } $html =~ /(?:src|href)="([^"]+)"/g;
	ok(@assets >= 1, "$page loads assets");
	for my $a (@assets) {
		like($a, qr{^/api/www/}, "$page: $a is local");
		$res = $http->get($url->($a));
		is($res->{status}, 200, "$page: $a: 200");
		like($res->{headers}{'content-type'} // '',
		    $a =~ /\.css$/ ? qr{^text/css} : qr{^text/javascript},
		    "$page: $a: its type");
		ok(length($res->{content} // ''), "$page: $a has content");
		next unless $a =~ m{^/api/www/[a-z]+\.js$};
		unlike($res->{content}, qr{https?://}, "$a names no host");
		$loads ||= $res->{content} =~ m{"/api/openapi\.json"};
	}
	ok($loads, "$page (or its script) loads /api/openapi.json");
}

# In the browser.
my $nops = grep { ref $_ eq 'HASH' && $_->{responses} }
    map { values %$_ } values %{$doc->{paths}};
open my $run, '-|', 'node', "$src/t/lib/openapi-pages.mjs",
    $url->('') =~ s{/$}{}r, $nops or die "node: $!\n";
my $checks = 0;
while (my $line = <$run>) {
	my $c = eval { $json->decode($line) };
	unless ($c) {
		diag "openapi-pages.mjs: $line";
		next;
	}
	$checks++;
	ok($c->{ok}, $c->{name}) or diag $c->{diag};
}
close $run;
is($?, 0, 'openapi-pages.mjs ran to its end');
is($checks, 8, 'the browser made its 8 checks');

done_testing;
