#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Who may call what, for every route of the platform API: a matrix
# generated from the route tables in cgi-bin/*.c (Xmhub::Routes), so a
# route added later is covered without a test written by hand.  Every
# route is called by every kind of caller (a super_admin, a facility_admin
# and a user of facility A, A's API keys with each scope, a revoked key,
# no credentials, a garbage bearer token, a key as a bearer token), a
# {id} naming an object of facility B of the kind the path names; A's
# callers also call it on A's object of that kind, which shows that their
# refusals on B's come from the facility and not from the route.  The
# status each cell must get comes from the rules below (route.h,
# doc/api.md, doc/auth.md), never from recorded answers:
#   - no credentials, a bad token, a JWT on an API-key route, a key on a
#     JWT route, a revoked key: 401;
#   - a role below the route's minimum, a key without the route's scope:
#     403;
#   - a caller of facility A on B's object: the documented refusal (403,
#     doc/api.md "Common to API keys, devices and tags", lib/web/scope.h;
#     the exceptions are in %REFUSAL), and the answer never shows B's data;
#   - anyone else passed authentication: one of %ALLOWED (the request
#     bodies are minimal, so 400 and 404 count as passed too).
# The face service's programs and the WebSocket authorizer are no platform
# API routes and are left out.
use strict;
use warnings;
use Test::More;
use Time::HiRes qw(time);
use Xmhub::Objects;
use Xmhub::Platform;
use Xmhub::Routes qw(routes parse_routes enum_values);
use Xmhub::XMBP qw(batch);

my $src = $ENV{XMHUB_SRCDIR} or die "XMHUB_SRCDIR is not set\n";
# The face service's programs (its own port and keys, t/e2e/face-*.t) and
# the WebSocket authorizer (t/e2e/api-ws.t) are not the platform's API.
my @SKIP = qw(face.c face-admin.c face-video.c ingest-authorizer.c);
my $t0 = time;

# --- the route tables ---
my @routes = eval { routes($src, skip => \@SKIP) };
ok(!$@ && @routes, 'every route table of cgi-bin/*.c parses')
    or diag $@;
# A table of a shape the parser does not know must fail, not vanish.
for my $bad (['an entry of five fields', 'static const struct route '
	. 'routes[] = { {"GET", "/api/v1/x", ROUTE_JWT, ROLE_USER, f}, };'],
    ['no table', 'int main(void) { return 0; }'],
    ['an entry with a call in it', 'static const struct route routes[] '
	. '= { {"GET", "/a", ROUTE_JWT, role(1), NULL, f}, };'],
    ['two tables', 'static const struct route a[] = { {"GET", "/a", '
	. 'ROUTE_PUBLIC, 0, NULL, f} }; static const struct route b[] = '
	. '{ {"GET", "/b", ROUTE_PUBLIC, 0, NULL, f} };']) {
	ok(!eval { parse_routes($bad->[1], 'x.c'); 1 },
	    "the parser refuses $bad->[0]");
}
my %role = enum_values("$src/lib/core/auth.h", 'auth_role');
my %auth = enum_values("$src/lib/web/route.h", 'route_auth');
my %RULE = map { $_ => 1 } qw(ROUTE_PUBLIC ROUTE_JWT ROUTE_JWT_OR_SIGNED ROUTE_API_KEY);
for my $r (@routes) {
	my $what = "$r->{program}: $r->{method} $r->{pattern}";
	die "$what: auth $r->{auth} is not in enum route_auth\n"
	    unless exists $auth{$r->{auth}};
	# A new kind of caller needs a rule below before it can be tested.
	die "$what: no rule for $r->{auth}\n" unless $RULE{$r->{auth}};
	my $min = $r->{min_role};
	$r->{min} = $min =~ /^\d+$/ ? $min : $role{$min}
	    // die "$what: $min is not in enum auth_role\n";
}
if (!@routes) {
	done_testing;
	exit 1;
}

# The kind of object a path's {id} names, by the segment before it.
my %KIND = (facilities => 'facility', users => 'user',
	'api-keys' => 'api_key', devices => 'device', tags => 'tag',
	uploads => 'upload', 'transcode-jobs' => 'job',
	sessions => 'session', # ingest/sessions, metadata/sessions
	'alarm-rules' => 'alarm_rule', alarms => 'alarm', webhooks => 'webhook',
	streams => 'upload');  # doc/streams.md: /streams/{upload_id}

# A facility A caller on B's object: 403 (doc/api.md, lib/web/scope.h)
# except where the route's document says otherwise.
my %REFUSAL = (
	# doc/ingest.md "Sending a batch": 404 "no such session, or another
	# facility's" (ingest_data looks the session up in the key's facility).
	'POST /api/v1/ingest/sessions/{id}/data' => 404,
);
my %ALLOWED = map { $_ => 1 } 200, 201, 204, 400, 404, 409, 422;

# --- facilities, callers, B's objects ---
my $p = Xmhub::Platform->start;
# The upload's transcode job stays queued: nothing moves under the matrix.
ok($p->stack->stop_daemon('transcode'), 'the transcode runner is stopped');
my $fa = $p->facility('Matrix A');
my $mark = "mxb$$";
my $fb = $p->facility("Matrix B $mark");
my $super = $p->token($p->user('super_admin', undef));
my $admin_a = $p->token($p->user('facility_admin', $fa));
my $user_a = $p->token($p->user('user', $fa));
my $admin_b = $p->token($p->user('facility_admin', $fb));
my %obj = (B => Xmhub::Objects->make($p, $fb, $admin_b, $mark),
	A => Xmhub::Objects->make($p, $fa, $admin_a, "mxa$$"));

my ($st, $revoked) = $p->req(POST => '/api/v1/api-keys', token => $admin_a,
	json => {name => 'revoked'});
is($st, 200, 'a key of A to revoke');
($st) = $p->req(DELETE => "/api/v1/api-keys/$revoked->{id}",
	token => $admin_a);
is($st, 204, 'the key is revoked');

my @callers = (
	{name => 'super_admin', token => $super,
	    role => $role{ROLE_SUPER_ADMIN}, super => 1},
	{name => 'facility_admin of A', token => $admin_a,
	    role => $role{ROLE_FACILITY_ADMIN}, of_a => 1},
	{name => 'user of A', token => $user_a, role => $role{ROLE_USER},
	    of_a => 1},
	(map { {name => "key of A [@$_]", key => $p->api_key($admin_a, @$_),
		scopes => $_, of_a => 1} } ['upload'], ['ingest'],
	    ['upload', 'ingest']),
	{name => 'revoked key of A', key => $revoked->{key},
	    scopes => ['upload', 'ingest'], revoked => 1, of_a => 1},
	{name => 'no credentials'},
	{name => 'garbage bearer token', bad_token => 'not.a-token'},
	# doc/api.md "Using a key": a key as a bearer token is not looked at.
	{name => 'key of A as a bearer token',
	    bad_token => $p->api_key($admin_a, 'upload', 'ingest')},
);

# --- the rules ---
# expected($route, $caller, $target): the status of a cell ('allowed' for
# any of %ALLOWED); $target is the facility of the path's object, if any.
sub expected {
	my ($r, $c, $target) = @_;
	return 'allowed' if $r->{auth} eq 'ROUTE_PUBLIC';
	if ($r->{auth} =~ /^ROUTE_JWT/) { # a signed URL is media-url.t's
		return 401 unless defined $c->{token};
		return 403 if $c->{role} < $r->{min};
	} else { # ROUTE_API_KEY
		return 401 unless defined $c->{key} && !$c->{revoked};
		return 403 if defined $r->{scope}
		    && !grep { $_ eq $r->{scope} } @{$c->{scopes}};
	}
	return $REFUSAL{"$r->{method} $r->{pattern}"} // 403
	    if ($target // 'A') eq 'B' && !$c->{super};
	return 'allowed';
}

# The request of a route: its path with the object of facility $f (A or
# B), its kind (undef without {id}), and the options of a minimal body.
sub request_of {
	my ($r, $f) = @_;
	my $path = $r->{pattern};
	my @ids = $path =~ /\{id\}/g;
	die "$r->{pattern}: more than one {id}: teach the matrix\n" if @ids > 1;
	my $kind;
	if (@ids) {
		$path =~ m{/([^/]+)/\{id\}}
		    or die "$r->{pattern}: {id} without a segment before it\n";
		$kind = $KIND{$1}
		    // die "$r->{pattern}: which object does /$1/{id} name? "
		    . "add it to %KIND\n";
		$path =~ s/\{id\}/$obj{$f}{id}{$kind}/;
	}
	$path =~ s/\{n\}/0/g; # the sessions have stream 0
	die "$r->{pattern}: an unknown placeholder\n" if $path =~ /[{}]/;
	my %opt;
	if ($r->{method} =~ /^(?:POST|PUT|PATCH)$/) {
		if ($r->{pattern} =~ m{/ingest/sessions/\{id\}/data$}) {
			# The batch is decoded before the session is looked
			# up: only a good one reaches the facility check.
			%opt = (body => batch(1, undef, [0, 'f32', [[1000, 1.5]]]),
			    headers => {'Content-Type' =>
				'application/octet-stream'});
		} else {
			%opt = (json => {});
		}
	}
	return ($path, $kind, %opt);
}

my @cells;
for my $r (@routes) {
	my $has_id = $r->{pattern} =~ /\{id\}/;
	for my $f ($has_id ? qw(B A) : (undef)) {
		my ($path, $kind, %opt) = eval { request_of($r, $f // 'B') };
		if ($@) {
			fail("$r->{method} $r->{pattern}: $@");
			last;
		}
		for my $c (@callers) {
			next if ($f // '') eq 'A' && !$c->{of_a};
			my $want = expected($r, $c, $f);
			# Requests that change things last: DELETE after the
			# others, and a facility's DELETE, which removes all of
			# it, at the very end.
			my $order = $want ne 'allowed' ? 0
			    : $r->{method} ne 'DELETE' ? 1
			    : ($kind // '') ne 'facility' ? 2 : 3;
			push @cells, {route => $r, caller => $c, path => $path,
				target => $f, opt => \%opt, order => $order,
				want => $want};
		}
	}
}
@cells = sort { $a->{order} <=> $b->{order} } @cells; # stable

my @leaks = grep { defined && length } @{$obj{B}{texts}};
my $leak = join '|', map { quotemeta } sort { length $b <=> length $a }
    $mark, @leaks;
my %tally;
for my $cell (@cells) {
	my ($r, $c, $want) = @$cell{qw(route caller want)};
	my %h;
	$h{Authorization} = "Bearer $c->{bad_token}" if $c->{bad_token};
	my ($st, $body, $res) = $p->req($r->{method} => $cell->{path},
		token => $c->{token}, key => $c->{key},
		%{$cell->{opt}}, headers => {%h, %{$cell->{opt}{headers} // {}}});
	my $name = "$r->{method} $r->{pattern}"
	    . (defined $cell->{target} ? " on $cell->{target}'s" : '')
	    . " as $c->{name}";
	$tally{$want}++;
	if ($want eq 'allowed') {
		ok($ALLOWED{$st}, "$name: passes ($st)")
		    or diag explain $res->{content};
	} else {
		is($st, $want, "$name: $want") or diag explain $res->{content};
		ok(ref $body eq 'HASH' && defined $body->{detail}
		    && !ref $body->{detail} && length $body->{detail},
		    "$name: {\"detail\": ...}") or diag explain $res->{content};
	}
	next if $c->{super};
	# Nobody but the super_admin ever sees B's data, lists included.
	my $all = join "\n", $res->{content} // '',
	    map { ref $_ ? @$_ : $_ } values %{$res->{headers}};
	my ($seen) = $all =~ /($leak)/i;
	ok(!defined $seen, "$name: shows nothing of B")
	    or diag "it shows '$seen'";
}

my %programs = map { $_->{program} => 1 } @routes;
my $with_id = grep { $_->{pattern} =~ /\{id\}/ } @routes;
diag sprintf('%d routes (%d with {id}) of %d programs x %d callers '
    . '(on B\'s objects; on A\'s too for the %d of A) = %d requests; '
    . 'expected %s; %.1f s', scalar @routes, $with_id,
    scalar keys %programs, scalar @callers,
    scalar(grep { $_->{of_a} } @callers), scalar @cells,
    join(', ', map { "$_ $tally{$_}" } sort keys %tally), time - $t0);
done_testing;
