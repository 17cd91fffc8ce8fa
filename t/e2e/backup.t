#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# xmhub backup / xmhub restore end to end (doc/operations.md, "Backups"):
# a stack with an upload (transcoded) and a closed ingest session is
# backed up; the backup is refused by a stack that has data, restored
# into an empty database and store, and restored with --force into a
# fresh stack, which then streams the upload byte for byte and reads
# the session back as the first stack did.  Usage errors:
# t/e2e/cli-usage.t.
use strict;
use warnings;
use File::Temp qw(tempdir);
use JSON::PP;
use Test::More;
use Xmhub::Ingest;
use Xmhub::Platform;
use Xmhub::Stack;
use Xmhub::Test qw(run xmhub);

my $json = JSON::PP->new->utf8->canonical;
my $tmp = tempdir('xmhub-backup-XXXXXX', TMPDIR => 1, CLEANUP => 1);
chmod 0755, $tmp; # the stack's user reads the objects linked in here

# xmhub_env($stack, \%env, @args): the CLI with the stack's settings
# (and %env over them); (status, stdout, stderr).
sub xmhub_env {
	my ($stack, $env, @args) = @_;
	local %ENV = (%ENV, XMHUB_ENV_FILE => $stack->env_file, %$env);
	delete local $ENV{XMHUB_DATABASE_URL} unless $env->{XMHUB_DATABASE_URL};
	return xmhub(\@args);
}

# --- the first stack: an upload and an ingest session ---
my $p = Xmhub::Platform->start;
my $fac = $p->facility('Backup');
my $admin = $p->user('facility_admin', $fac);
my $t = $p->token($admin);
my $key = $p->api_key($t, 'upload', 'ingest');

my ($st, $out, $err) = run(['sox', '-n', '-r', '16000', '-b', '16', '-c',
	'1', "$tmp/in.wav", 'synth', '1.5', 'sine', '440']);
is($st, 0, 'sox made a WAV') or diag $err;
my $wav = do { local $/; open my $f, '<:raw', "$tmp/in.wav" or die; <$f> };
my $b = 'bAcKuP';
my ($ust, $u) = $p->req(POST => '/api/v1/uploads', key => $key,
	body => "--$b\r\nContent-Disposition: form-data; name=\"file\"; "
	    . "filename=\"in.wav\"\r\nContent-Type: audio/wav\r\n\r\n$wav\r\n"
	    . "--$b--\r\n",
	headers => {'Content-Type' => "multipart/form-data; boundary=$b"});
is($ust, 200, 'upload: 200') or diag explain $u;
my $up;
for (1 .. 600) {
	(undef, $up) = $p->req(GET => "/api/v1/uploads/$u->{id}", token => $t);
	last if ($up->{status} // '') =~ /^(completed|failed)$/;
	select(undef, undef, undef, 0.2);
}
is($up->{status}, 'completed', 'upload transcoded');
my (undef, undef, $s1) = $p->req(GET => "/api/v1/streams/$u->{id}",
	token => $t);
is($s1->{status}, 200, 'stream on the first stack: 200');
ok(length $s1->{content} > 1000, 'stream: some bytes');

my $in = Xmhub::Ingest->new($p, $key);
my $sess = $in->session(77, [0, 'f32'], [1, 'string']);
$in->send($sess->{id}, 1, [0, 'f32', [[1000, 1.5], [2000, -2.25]]],
	[1, 'string', [[1500, "it's"]]]);
$in->send($sess->{id}, 2, [0, 'f32', [[3000, 0.5]]]);
$in->close($sess->{id});
my @want0 = $in->read_all($t, $sess->{id}, 0);
my @want1 = $in->read_all($t, $sess->{id}, 1);
is(scalar @want0, 3, 'three samples on stream 0');
my (undef, $meta1) = $p->req(GET => "/api/v1/metadata/sessions/$sess->{id}",
	token => $t);
is($meta1->{id}, $sess->{id}, 'the session reads back');

# --- backup ---
my $bk = "$tmp/bk";
($st, $out, $err) = xmhub_env($p->stack, {}, 'backup', $bk);
is($st, 0, 'backup: exit 0') or diag $err;
my $r = eval { $json->decode($out) } // {};
ok($r->{backup}, 'backup: reported');
ok($r->{linked} + $r->{copied} >= 2, 'backup: the objects are in it')
    or diag $out;
is($r->{linked}, $r->{linked} + $r->{copied},
	'backup: hard links on the same filesystem');
ok(-s "$bk/xmhub.dump", 'backup: the dump');
my $orig = "$bk/objects/$fac/uploads/$u->{id}/original";
ok(-f $orig, 'backup: the original upload');
is(do { local $/; open my $f, '<:raw', $orig or die; <$f> }, $wav,
	'backup: the original byte for byte');
($st, undef, $err) = xmhub_env($p->stack, {}, 'backup', $bk);
is($st, 1, 'backup into a non-empty directory: refused');
like($err, qr/not empty/, 'backup: says why');
# Into an existing directory anyone may read: the dump (password
# hashes) is still its owner's alone.
{
	my $open = "$tmp/open";
	mkdir $open or die "$open: $!";
	chmod 0755, $open;
	my $old = umask 022;
	($st, $out, $err) = xmhub_env($p->stack, {}, 'backup', $open);
	umask $old;
	is($st, 0, 'backup into an existing 0755 directory: exit 0')
	    or diag $err;
	is((stat "$open/xmhub.dump")[2] & 07777, 0600,
		'backup into an existing directory: the dump is 0600');
}
# On another filesystem (the tmpfs at /dev/shm): copies.
{
	ok((stat '/dev/shm')[0] != (stat $tmp)[0],
		'/dev/shm is another filesystem than the stack');
	my $shm = tempdir('xmhub-backup-XXXXXX', DIR => '/dev/shm',
		CLEANUP => 1);
	($st, $out, $err) = xmhub_env($p->stack, {}, 'backup', "$shm/bk");
	is($st, 0, 'backup to another filesystem: exit 0') or diag $err;
	my $c = eval { $json->decode($out) } // {};
	ok($c->{copied} >= 2 && $c->{linked} == 0,
		'backup to another filesystem: copies') or diag $out;
	my $copy = "$shm/bk/objects/$fac/uploads/$u->{id}/original";
	is(do { local $/; open my $f, '<:raw', $copy or die; <$f> }, $wav,
		'backup to another filesystem: the original byte for byte');
}

# The password: a pg_dump of ours records what it was given.
{
	mkdir "$tmp/bin" or die;
	open my $fk, '>', "$tmp/bin/pg_dump" or die;
	print $fk "#!/bin/sh\nprintf '%s\\n' \"\$@\" >'$tmp/argv'\n"
	    . "printf '%s' \"\$PGPASSWORD\" >'$tmp/pgpassword'\n"
	    . "exit 0\n";
	close $fk;
	chmod 0755, "$tmp/bin/pg_dump";
	my $url = $p->stack->database_url . '&password=s3cret%27pw';
	local $ENV{PATH} = "$tmp/bin:$ENV{PATH}";
	($st, undef, $err) = xmhub_env($p->stack,
		{XMHUB_DATABASE_URL => $url}, 'backup', "$tmp/bk-pw");
	is($st, 0, 'backup with a password in the URL') or diag $err;
	my $argv = do { local $/; open my $f, '<', "$tmp/argv" or die; <$f> };
	unlike($argv, qr/s3cret/, 'the password is not in pg_dump\'s arguments');
	like($argv, qr/^--dbname\n(?=[^\n]*\buser=')[^\n]*\bdbname='/m,
		'pg_dump gets the rest of the URL as a conninfo');
	is(do { local $/; open my $f, '<', "$tmp/pgpassword" or die; <$f> },
		"s3cret'pw", 'the password is in its environment');
}

# --- a second, fresh stack ---
my $p2 = Xmhub::Platform->start;
my $s2 = $p2->stack;
($st, undef, $err) = xmhub_env($s2, {}, 'restore', $bk);
is($st, 1, 'restore over a database with tables: refused');
like($err, qr/database is not empty.*--force/, 'restore: says why');
($st, undef, $err) = xmhub_env($s2, {}, 'restore', "$tmp/nothing");
is($st, 1, 'restore of a directory without a backup: refused');
like($err, qr/no backup there/, 'restore: says there is no backup');

# Into an empty database and store, without --force.
my $url = $s2->create_database('restored');
my $store = "$tmp/store";
($st, $out, $err) = xmhub_env($s2, {XMHUB_DATABASE_URL => $url,
	XMHUB_STORAGE_DIR => $store}, 'restore', $bk);
is($st, 0, 'restore into an empty database and store') or diag $err;
my ($qst, $n) = $s2->psql('SELECT count(*) FROM uploads', 'restored');
is($n + 0, 1, 'restored: the upload row');
ok(-f "$store/$fac/uploads/$u->{id}/original",
	'restored: the original object');
($st, undef, $err) = xmhub_env($s2, {XMHUB_DATABASE_URL => $url,
	XMHUB_STORAGE_DIR => $store}, 'restore', $bk);
is($st, 1, 'restore again: refused');

# Into the second stack itself, stopped, with --force.
$s2->down;
($st, $out, $err) = xmhub_env($s2, {}, 'restore', '--force', $bk);
is($st, 0, 'restore --force into the fresh stack') or diag $err;
$s2->up;
my $t2 = $p2->token($admin);
my (undef, undef, $s2res) = $p2->req(GET => "/api/v1/streams/$u->{id}",
	token => $t2);
is($s2res->{status}, 200, 'stream after restore: 200');
ok($s2res->{content} eq $s1->{content},
	'stream after restore: byte-identical');
my $in2 = Xmhub::Ingest->new($p2, undef);
is_deeply([$in2->read_all($t2, $sess->{id}, 0)], \@want0,
	'session stream 0 reads back identically');
is_deeply([$in2->read_all($t2, $sess->{id}, 1)], \@want1,
	'session stream 1 reads back identically');
my (undef, $meta2) = $p2->req(GET => "/api/v1/metadata/sessions/$sess->{id}",
	token => $t2);
is_deeply($meta2, $meta1, 'the session object reads back identically');

done_testing();
