# SPDX-License-Identifier: MIT
package Xmhub::Accounts;

# Helpers for the end-to-end tests of login, facilities and users
# (t/e2e/api-auth.t, t/e2e/api-facilities.t, t/e2e/api-users.t), over the stack and
# requests of Xmhub::Platform.  Users with real passwords come from
# `xmhub user create` (users_create() of lib/api/users.c): the first
# super_admin of a stack has nobody to create it through the API.
# Everything else goes through the API.
#
#   my $id = mkuser($p, 'root@example.org', 'password', 'super_admin');
#   my $l = login($p, 'root@example.org', 'password');  # login body
#   my $c = claims($l->{access_token});                  # JWT payload
#   my $t = jwt({alg => 'HS512'}, {...}, $secret);       # signed by hand
#   is_error($st, $body, 401, 'name');                    # {"detail"}
#   program_log($p)       # what the FastCGI programs wrote on stderr
#   log_is_clean($p)      # a test: no sanitizer report in it
#   login_addr($stack, $base, '127.0.0.3', '203.0.113.7')
#                         # the address a failed login to $base from a
#                         # local address, with that X-Forwarded-For,
#                         # was counted on (the login throttle's key)
#
# Core modules only.

use strict;
use warnings;
use Digest::SHA qw(hmac_sha256 hmac_sha384 hmac_sha512);
use Exporter 'import';
use HTTP::Tiny;
use JSON::PP;
use MIME::Base64 qw(encode_base64url decode_base64url);
use Test::More;
use Xmhub::Test qw(run bin);

our @EXPORT_OK = qw(mkuser login claims jwt is_error program_log
    log_is_clean login_addr);

my $json = JSON::PP->new->canonical;

# mkuser($p, $email, $password, $role, $facility_id): a new active user
# made by `xmhub user create` on the stack's database; its id.  Dies
# when that fails.
sub mkuser {
	my ($p, $email, $password, $role, $facility) = @_;
	local $ENV{XMHUB_ENV_FILE} = $p->stack->env_file;
	delete local $ENV{XMHUB_DATABASE_URL};
	my ($st, $out, $err) = run([bin('xmhub'), qw(user create), '--email',
		$email, '--password', '-', '--role', $role,
		defined $facility ? ('--facility', $facility) : ()],
		"$password\n");
	die "xmhub user create $email: exit $st: $err" if $st != 0;
	my $id = eval { $json->decode($out)->{id} };
	die "xmhub user create $email: no id in $out" unless defined $id;
	return $id;
}

# login($p, $email, $password): the 200 body of POST /api/auth/login;
# dies on any other answer.
sub login {
	my ($p, $email, $password) = @_;
	my ($st, $body) = $p->req(POST => '/api/auth/login',
		json => {email => $email, password => $password});
	die "login $email: $st " . ($body ? $json->encode($body) : '') . "\n"
	    if $st != 200;
	return $body;
}

# claims($token): the decoded payload of a JWT (not verified).
sub claims {
	my ($token) = @_;
	my (undef, $payload) = split /\./, $token;
	return $json->decode(decode_base64url($payload));
}

# jwt(\%header, \%claims, $secret): a token signed with HMAC as
# $header->{alg} says (HS256, HS384, HS512; anything else gets an empty
# signature, as alg "none" tokens have).
sub jwt {
	my ($header, $claims, $secret) = @_;
	my $h = encode_base64url($json->encode({typ => 'JWT', %$header}));
	my $c = encode_base64url($json->encode($claims));
	my %mac = (HS256 => \&hmac_sha256, HS384 => \&hmac_sha384,
		HS512 => \&hmac_sha512);
	my $f = $mac{$header->{alg} // ''};
	my $sig = $f ? encode_base64url($f->("$h.$c", $secret)) : '';
	return "$h.$c.$sig";
}

# is_error($status, $body, [$response,] $want, $name): the status is
# $want and the body is {"detail": "non-empty text"}.
sub is_error {
	my ($st, $body, $want, $name) = (@_[0, 1], @_[-2, -1]);
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is($st, $want, "$name: $want");
	ok(ref $body eq 'HASH' && defined $body->{detail}
	    && !ref $body->{detail} && length $body->{detail}
	    && keys %$body == 1, "$name: {\"detail\": ...}")
	    or diag explain $body;
}

# program_log($p): the standard error of the stack's FastCGI programs
# (lighttpd's server.breakagelog) so far.
sub program_log {
	my ($p) = @_;
	my $path = $p->stack->var . '/log/programs.log';
	open my $f, '<', $path or return '';
	local $/;
	return <$f> // '';
}

# log_is_clean($p): a test that no program reported a sanitizer error,
# a runtime error or a leak.
sub log_is_clean {
	my ($p) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $log = program_log($p);
	unlike($log, qr/Sanitizer|runtime error|leak/i,
	    'the programs reported no sanitizer errors');
}

# login_addr($stack, $base, $from, $xff): a failed login of a new e-mail
# sent to $base (http://host:port) from local address $from with
# X-Forwarded-For $xff (none when undef); the address the login
# throttle counted it on (sql/009), or what went wrong.
my $n_addr = 0;
sub login_addr {
	my ($stack, $base, $from, $xff) = @_;
	my $email = "fwd-$$-" . ++$n_addr . '@example.org';
	my $r = HTTP::Tiny->new(local_address => $from, timeout => 30)->post(
		"$base/api/auth/login", {headers => {
			'content-type' => 'application/json',
			defined $xff ? ('x-forwarded-for' => $xff) : ()},
		content => encode_json({email => $email,
			password => 'not the password'})});
	return "login: status $r->{status}" if $r->{status} != 401;
	my ($st, $out, $err) = $stack->psql("SELECT addr FROM "
		. "login_throttle WHERE email = login_throttle_key('$email') "
		. "AND addr <> ''");
	return $st ? "psql: $err" : $out =~ s/\n\z//r;
}

1;
