# SPDX-License-Identifier: MIT
package Xmhub::Platform;

# Helpers for the end-to-end tests of the platform API (api keys,
# devices, tags, isolation): a stack of Xmhub::Stack, facilities and
# users made with SQL on its database, access tokens signed with its JWT
# secret (so these tests do not depend on the login endpoint), and
# requests answered as (status, decoded JSON body, raw response).
#
#   my $p = Xmhub::Platform->start;
#   my $fac = $p->facility('a');               # id
#   my $admin = $p->user('facility_admin', $fac);
#   my $t = $p->token($admin);
#   my $key = $p->api_key($t, 'ingest');      # X-Api-Key
#   my ($st, $body, $res) = $p->req(POST => '/api/v1/tags',
#       token => $t, json => {name => 'x'});
#
# With XMHUB_OPENAPI_CHECK set, every answer of req() is checked against
# the OpenAPI document (doc/platform-www/openapi.json) by
# t/lib/openapi-check.cjs (Ajv, from $XMHUB_NPM_DIR): an answer the
# document does not describe is a failed test naming the mismatch.
#
# Core modules only.

use strict;
use warnings;
use Digest::SHA qw(hmac_sha256);
use Exporter 'import';
use HTTP::Tiny;
use IPC::Open2 qw(open2);
use JSON::PP;
use Test::More;
use File::Find ();
use MIME::Base64 qw(encode_base64url);
use Xmhub::Stack;
use Xmhub::Test ();

our @EXPORT_OK = qw(iso keys_of is_error);

my $json = JSON::PP->new->utf8->canonical->allow_nonref;

# start(%opt): %opt goes to Xmhub::Stack->start (own_db => 1 for a test
# that stops PostgreSQL).
sub start {
	my ($class, %opt) = @_;
	my $stack = Xmhub::Stack->start(%opt);
	return bless {
		stack => $stack,
		http => HTTP::Tiny->new(timeout => 30, keep_alive => 0),
		secret => $stack->setting('XMHUB_JWT_SECRET'),
		n => 0,
	}, $class;
}

sub stack { return $_[0]{stack} }

# sql($sql): runs $sql on the stack's database and returns its output
# without the final newline; dies on failure.
sub sql {
	my ($self, $sql) = @_;
	my ($st, $out, $err) = $self->{stack}->psql($sql);
	die "psql failed ($st): $err\n$sql\n" if $st != 0;
	chomp $out;
	return $out;
}

# A quoted SQL string literal.
sub lit {
	my ($s) = @_;
	return 'NULL' unless defined $s;
	$s =~ s/'/''/g;
	return "'$s'";
}

sub uniq { my ($self) = @_; return "$$-" . ++$self->{n} }

# facility($name): a new active facility; its id.
sub facility {
	my ($self, $name) = @_;
	my $slug = lc("$name-" . $self->uniq);
	$slug =~ s/[^a-z0-9]+/-/g;
	return $self->sql('INSERT INTO facilities (name, slug) VALUES ('
		    . lit($name) . ', ' . lit($slug) . ') RETURNING id');
}

# user($role, $facility_id): a new user (its password hash is a dummy:
# tests sign their own tokens); a hash of id, role, facility_id.
sub user {
	my ($self, $role, $facility) = @_;
	my $email = "$role-" . $self->uniq . '@example.org';
	my $id = $self->sql('INSERT INTO users (facility_id, email, '
		    . 'password_hash, display_name, role) VALUES ('
		    . lit($facility) . ', ' . lit($email) . ", 'x', "
		    . lit("Test $role") . ', ' . lit($role) . ') RETURNING id');
	return {id => $id, role => $role, facility_id => $facility};
}

# token($user, $ttl): an HS256 access token for $user, as login makes
# them (doc/auth.md), valid for $ttl seconds (default 900), of the
# user's token version $user->{ver} (default 0, a new user's).
sub token {
	my ($self, $user, $ttl) = @_;
	my $now = time;
	my $header = encode_base64url($json->encode({alg => 'HS256',
		typ => 'JWT'}));
	my $claims = encode_base64url($json->encode({
		sub => $user->{id},
		role => $user->{role},
		facility_id => $user->{facility_id} // '',
		type => 'access',
		iat => $now,
		exp => $now + ($ttl // 900),
		ver => $user->{ver} // 0,
	}));
	my $sig = encode_base64url(hmac_sha256("$header.$claims",
		$self->{secret}));
	return "$header.$claims.$sig";
}

# req($method, $path, %opt): one request.  Options: token (bearer), key
# (X-Api-Key), json (a Perl value sent as JSON), body (raw bytes),
# headers (a hash).  Returns (status, decoded JSON body or undef, the
# HTTP::Tiny response).
sub req {
	my ($self, $method, $path, %opt) = @_;
	my %h = %{$opt{headers} // {}};
	$h{Authorization} = "Bearer $opt{token}" if defined $opt{token};
	$h{'X-Api-Key'} = $opt{key} if defined $opt{key};
	my %args = (headers => \%h);
	if (exists $opt{json}) {
		$args{content} = $json->encode($opt{json});
		$h{'Content-Type'} //= 'application/json';
	} elsif (defined $opt{body}) {
		$args{content} = $opt{body};
		$h{'Content-Type'} //= 'application/json';
	}
	my $res = $self->{http}->request($method, $self->{stack}->url($path),
		\%args);
	openapi_check($method, $path, $res) if $ENV{XMHUB_OPENAPI_CHECK};
	my $body;
	if (length($res->{content} // '')
	    && ($res->{headers}{'content-type'} // '') =~ m{^application/json}) {
		$body = eval { $json->decode($res->{content}) };
	}
	return ($res->{status}, $body, $res);
}

# The checker, started at the first answer and kept for the process.
my ($check_pid, $check_in, $check_out);
our $openapi_checked = 0; # answers checked (t/e2e/openapi.t counts them)

# openapi_check($method, $path, $res): fails a test when the answer $res
# to $method $path is not as the OpenAPI document says.
sub openapi_check {
	my ($method, $path, $res) = @_;
	my $src = $ENV{XMHUB_SRCDIR} or die "XMHUB_SRCDIR is not set\n";
	$ENV{XMHUB_NPM_DIR} //= "$src/_build/npm";
	$check_pid //= open2($check_out, $check_in, 'node',
	    "$src/t/lib/openapi-check.cjs",
	    "$src/doc/platform-www/openapi.json");
	(my $p = $path) =~ s/[?#].*//s;
	print {$check_in} $json->encode({method => $method, path => $p,
	    status => 0 + $res->{status},
	    type => $res->{headers}{'content-type'} // '',
	    body => $res->{content} // ''}), "\n";
	$check_in->flush;
	my $line = <$check_out>;
	die "openapi-check.cjs ended\n" unless defined $line;
	my $r = $json->decode($line);
	$openapi_checked++;
	return if $r->{ok};
	fail("OpenAPI: $method $p answered $res->{status} as documented");
	diag(join "\n", @{$r->{errors}});
}

# api_key($token, @scopes): the secret of a new API key of the token's
# facility with these scopes (the default ones when none); dies unless
# created.
sub api_key {
	my ($self, $token, @scopes) = @_;
	my ($st, $k) = $self->req(POST => '/api/v1/api-keys', token => $token,
		json => {name => 'test key', @scopes ? (scopes => \@scopes) : ()});
	die "api key: $st\n" if $st != 200;
	return $k->{key};
}

# ISO 8601 UTC of the epoch second $t.
sub iso {
	my ($t) = @_;
	my @g = gmtime($t);
	return sprintf('%04d-%02d-%02dT%02d:%02d:%02dZ', $g[5] + 1900,
		$g[4] + 1, @g[3, 2, 1, 0]);
}

# job($name, $mode, @env): runs the runner jobs/$name once ($mode --once
# or --drain) with the stack's env file and @env (NAME=value), as the
# stack's user when root; a test of its exit status; its standard output.
sub job {
	my ($self, $name, $mode, @env) = @_;
	my @argv = ('env', 'XMHUB_ENV_FILE=' . $self->{stack}->env_file, @env,
		"$ENV{XMHUB_BUILDDIR}/jobs/$name", $mode);
	unshift @argv, 'runuser', '-u', 'xmhub', '--' if $> == 0;
	my ($st, $out, $err) = Xmhub::Test::run(\@argv);
	is($st, 0, "$name ran") or diag "$out$err";
	return $out;
}

# objects($prefix): how many objects the stack's filesystem store holds
# under $prefix (a facility id, "{facility}/uploads/{id}", ...).
sub objects {
	my ($self, $prefix) = @_;
	my $dir = $self->{stack}->setting('XMHUB_STORAGE_DIR') . "/$prefix";
	my $n = 0;
	File::Find::find({no_chdir => 1, wanted => sub { $n++ if -f }}, $dir)
	    if -d $dir;
	return $n;
}

# The sorted keys of a hash, joined by commas (for shape checks).
sub keys_of { return join ',', sort keys %{$_[0] // {}} }

# is_error($status, $body, [$response,] $want, $name): the status and a
# {"detail": "..."} body, as every error answer of the API has.
sub is_error {
	my ($st, $body, $want, $name) = (@_[0, 1], @_[-2, -1]);
	is($st, $want, "$name: $want");
	ok(ref $body eq 'HASH' && defined $body->{detail}
	    && !ref $body->{detail} && length $body->{detail},
	    "$name: {\"detail\": ...}")
	    or diag explain $body;
}

1;
