#!/usr/bin/perl
# xmhub migrate, user create, facility create, api-key create against the
# real stack: what they create works through the API.
use strict;
use warnings;
use Test::More;
use HTTP::Tiny;
use JSON::PP;
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Stack;
use Xmhub::Test qw(run bin);

my $s = Xmhub::Stack->start;
my $http = HTTP::Tiny->new(timeout => 20);
# The CLI reads its settings from the stack's env file, as in production.
$ENV{XMHUB_ENV_FILE} = $s->env_file;
delete $ENV{XMHUB_DATABASE_URL};

sub xmhub { my ($stdin, @args) = @_; return run([bin('xmhub'), @args], $stdin) }

my ($st, $out, $err) = xmhub(undef, 'migrate', '--dir', "$ENV{XMHUB_SRCDIR}/sql");
is($st, 0, 'migrate on a migrated database exits 0') or diag($err);
like($out, qr/applied now\)|up to date/, 'and says it is up to date');

($st, $out, $err) = xmhub(undef, qw(facility create --name North --slug north));
is($st, 0, 'facility create') or diag($err);
my $fac = eval { decode_json($out)->{id} };
like($fac // '', qr/^[0-9a-f-]{36}$/, 'prints the new id');
($st, $out, $err) = xmhub(undef, qw(facility create --name North2 --slug north));
ok($st == 1 && $err =~ /already exists/, 'duplicate slug: exit 1, says so');

($st, $out, $err) = xmhub("s3cret-pass\n", qw(user create --email Root@Example.org
	--password - --role super_admin --name Root));
is($st, 0, 'super_admin created, password from standard input') or diag($err);
ok(eval { decode_json($out)->{created} }, 'created true');
($st, $out, $err) = xmhub(undef, qw(user create --email root@example.org
	--password another-one --role super_admin));
ok($st == 1 && $err =~ /already exists/, 'same e-mail in another case: exit 1');
($st, $out, $err) = xmhub(undef, qw(user create --email root@example.org
	--password another-one --role super_admin --if-absent));
is($st, 0, '--if-absent makes an existing user a success');
ok(eval { !decode_json($out)->{created} }, 'created false');
($st, $out, $err) = xmhub(undef, 'user', 'create', '--email', 'ann@example.org',
	'--password', 'ann-password', '--role', 'facility_admin',
	'--facility', $fac);
is($st, 0, 'facility_admin created in a facility') or diag($err);
($st, $out, $err) = xmhub(undef, qw(user create --email bob@example.org
	--password bob-password --role user));
is($st, 1, 'a user without a facility is refused');
($st, $out, $err) = xmhub(undef, qw(user create --email x@example.org
	--password short --role root));
is($st, 1, 'an unknown role is refused');
($st) = xmhub(undef, qw(user create --email x@example.org));
is($st, 2, 'missing options: usage, exit 2');
($st) = xmhub(undef, qw(user create --email x@example.org --password p
	--role user --bogus 1));
is($st, 2, 'unknown option: exit 2');

# The users log in through the API.
my $r = $http->post($s->url('/api/auth/login'), {
	headers => {'content-type' => 'application/json'},
	content => encode_json({email => 'root@example.org',
		password => 's3cret-pass'})});
is($r->{status}, 200, 'the CLI-made super_admin logs in') or diag($r->{content});

($st, $out, $err) = xmhub(undef, 'api-key', 'create', '--facility', $fac,
	'--name', 'gateway', '--scopes', 'ingest');
is($st, 0, 'api-key create') or diag($err);
my $k = eval { decode_json($out) } // {};
like($k->{key} // '', qr/^xmk_[0-9A-Za-z]{43}$/, 'prints the key once');
is($k->{key_prefix}, substr($k->{key} // '', 0, 12), 'and its prefix');
$r = $http->get($s->url('/api/v1/ping'), {headers => {'x-api-key' => $k->{key} // ''}});
is($r->{status}, 200, 'the key works with ping');
is(eval { decode_json($r->{content})->{facility_id} }, $fac, 'in its facility');
($st, $out, $err) = xmhub(undef, 'api-key', 'create', '--facility', $fac,
	'--name', 'x', '--scopes', 'upload,admin');
is($st, 1, 'an unknown scope is refused');
($st, $out, $err) = xmhub(undef, 'api-key', 'create', '--facility',
	'00000000-0000-4000-8000-000000000000', '--name', 'x');
is($st, 1, 'an unknown facility is refused');

done_testing();
