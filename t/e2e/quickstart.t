#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# doc/quickstart.md stays true: every ```sh block of it runs, in order,
# in one bash (set -e, pipefail) against a live stack with the face
# service, with the variables the page documents (XMHUB_URL, FACE_URL,
# ADMIN_EMAIL, ADMIN_PASSWORD) pointing at the stack; each block must
# finish (exit status 0) and print what the page says it prints.
use strict;
use warnings;
use File::Temp qw(tempdir);
use Test::More;
use Xmhub::Face;
use Xmhub::Test qw(run xmhub);

my $doc = "$ENV{XMHUB_SRCDIR}/doc/quickstart.md";
open my $fh, '<', $doc or die "$doc: $!\n";
my $text = do { local $/; <$fh> };
my @blocks = $text =~ /^```sh\n(.*?)^```$/msg;

# What each block prints (its last lines), in the page's order.
my @want = (
	[qr/^\{"status":"ok"\}$/m, 'health'],
	[qr/^super_admin$/m, 'logged in as the super admin'],
	[qr/^\{"pong":true,"api_key_name":"recorder 1","facility_id":"[0-9a-f-]{36}"\}$/m,
		'the key pings'],
	[qr/^completed$/m, 'the upload is transcoded'],
	[qr/^opus$/m, 'the stream is Opus'],
	[qr/^\{"batches":1,"samples":3,"accepted_samples":3,"missed_batches":0\}\n+closed$/m,
		'xmhub send delivered three samples; the session is closed'],
	[qr/^\[\[1000000,21\.5\],\[2000000,21\.75\],\[3000000,22\]\]$/m,
		'the samples read back'],
	[qr/^\S+\n\{"faces":1,"bbox":(?:\{[^{}]+\}|\[[^\]]+\])\}\nmjpeg$/m,
		'face model named, one face with its box, a JPEG masked'],
);
is(scalar @blocks, scalar @want, 'the page has the blocks this test knows');

my $f = Xmhub::Face->start;
my $s = $f->stack;
my $password = 'quick-start-' . int(rand(1e9));
{
	local $ENV{XMHUB_ENV_FILE} = $s->env_file;
	my ($st, undef, $err) = xmhub(['user', 'create', '--email',
		'admin@xmhub.local', '--password', '-', '--role', 'super_admin'],
		"$password\n");
	is($st, 0, 'a super admin, as ./dev up makes') or diag $err;
}

my $dir = tempdir('xmhub-quickstart-XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $script = "set -e -o pipefail\ncd '$dir'\n";
for my $i (0 .. $#blocks) {
	$script .= "printf '\\n\@\@\@ block $i\\n'\n$blocks[$i]";
}
$script .= "printf '\\n\@\@\@ end\\n'\n";
my ($st, $out, $err);
{
	local $ENV{XMHUB_URL} = $s->url('');
	local $ENV{FACE_URL} = $s->face_url('');
	local $ENV{ADMIN_EMAIL} = 'admin@xmhub.local';
	local $ENV{ADMIN_PASSWORD} = $password;
	local $ENV{PATH} = "$ENV{XMHUB_BUILDDIR}/cli:$ENV{PATH}";
	delete local $ENV{XMHUB_API_KEY};
	($st, $out, $err) = run(['timeout', '300', 'bash', '-c', $script]);
}
is($st, 0, 'every command exits 0') or diag "$out\n$err";
# A marker on a line of its own, after output that may lack a newline.
my @parts = split /\n\@\@\@ (?:block \d+|end)\n/, $out;
shift @parts; # before the first marker
ok($out =~ /\n\@\@\@ end\n\z/, 'every block ran') or diag $out;
for my $i (0 .. $#want) {
	like($parts[$i] // '', $want[$i][0], "block $i: $want[$i][1]");
}

done_testing();
