#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# xmhub migrate and sql/ against a real PostgreSQL (t/lib/Xmhub/Stack.pm):
# each file once, in order, atomically, also with concurrent runs; then
# the schema's constraints, through psql.
use strict;
use warnings;
use Test::More;
use File::Basename qw(basename);
use File::Copy qw(copy);
use File::Temp qw(tempdir tempfile);
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Test qw(xmhub bin);
use Xmhub::Stack;

my $s = Xmhub::Stack->start;
my $sqldir = "$ENV{XMHUB_SRCDIR}/sql";
my @versions = map { basename($_) =~ s/\.sql\z//r }
	sort glob("$sqldir/[0-9][0-9][0-9]*_*.sql");
ok(@versions >= 1, 'sql/ holds migrations: ' . join(' ', @versions));

# The settings of the machine are not the test's.
$ENV{XMHUB_ENV_FILE} = '/dev/null';
delete $ENV{XMHUB_SQL_DIR};

my $ndb = 0;
sub fresh_db { return $s->create_database('m' . ++$ndb) }

# migrate($url, @args): xmhub migrate on the database at $url.
sub migrate {
	my ($url, @args) = @_;
	local $ENV{XMHUB_DATABASE_URL} = $url;
	return xmhub(['migrate', @args]);
}

# sql($url, $sql): the output of $sql on the database at $url.
sub sql {
	my ($url, $sql) = @_;
	my $db = $url =~ m{^postgresql:///([^?]+)} ? $1 : die "url $url";
	my ($st, $out, $err) = $s->psql($sql, $db);
	die "psql: $err" if $st;
	chomp $out;
	return $out;
}

sub applied_lines { return [map { /^migrate: applied (\S+)$/ ? $1 : () } split /\n/, $_[0]] }

# The stack applied them already.
is(sql($s->database_url, 'SELECT version FROM schema_migrations ORDER BY 1'),
	join("\n", @versions), 'stack up applied every migration');

# An empty database, twice.
my $db = fresh_db();
my ($st, $out, $err) = migrate($db, '--dir', $sqldir);
is($st, 0, 'first run exits 0') or diag($err);
is_deeply(applied_lines($out), \@versions, 'first run applies every file, in order');
like($out, qr/^migrate: up to date \(\d+ migrations?, ${\ scalar @versions} applied now\)$/m,
	'first run says so');
is(sql($db, 'SELECT version FROM schema_migrations ORDER BY 1'),
	join("\n", @versions), 'schema_migrations has one row per file');
($st, $out, $err) = migrate($db, '--dir', $sqldir);
is($st, 0, 'second run exits 0') or diag($err);
is_deeply(applied_lines($out), [], 'second run applies nothing');
like($out, qr/0 applied now/, 'second run says so');
is(sql($db, 'SELECT count(*) FROM schema_migrations'), scalar @versions,
	'still one row per file');

# --check: changes nothing, 1 while a file is pending (the units' check
# before they start), 0 when none is or the server can not be reached.
{
	my $c = fresh_db();
	my $part = tempdir(CLEANUP => 1);
	copy("$sqldir/$_.sql", "$part/$_.sql") or die "copy: $!"
	    for @versions[0 .. $#versions - 1];
	($st, $out, $err) = migrate($c, '--dir', $sqldir, '--check');
	is($st, 1, '--check on an empty database: 1');
	is_deeply([map { /^migrate: pending (\S+)$/ ? $1 : () } split /\n/, $out],
	    \@versions, '--check: every file pending, in order');
	like($err, qr/${\ scalar @versions} migrations pending: the programs must not run/,
	    '--check says why');
	is(sql($c, "SELECT to_regclass('schema_migrations') IS NULL"), 't',
	    '--check created nothing');
	($st, $out, $err) = migrate($c, '--dir', $part);
	is($st, 0, 'all but the newest applied') or diag $err;
	($st, $out, $err) = migrate($c, '--dir', $sqldir, '--check');
	is($st, 1, '--check with the newest pending: 1');
	like($out, qr/^migrate: pending \Q$versions[-1]\E$/m, '--check names it');
	unlike($out, qr/^migrate: pending \Q$versions[0]\E$/m,
	    '--check: the applied ones are not pending');
	($st, $out, $err) = migrate($c, '--dir', $sqldir);
	is($st, 0, 'the newest applied') or diag $err;
	($st, $out, $err) = migrate($c, '--dir', $sqldir, '--check');
	is($st, 0, '--check up to date: 0') or diag $err;
	like($out, qr/^migrate: up to date \(\d+ migrations?\)$/m, '--check says so');
	($st, $out, $err) = migrate('postgresql:///none?host=/nonexistent',
	    '--dir', $sqldir, '--check');
	is($st, 0, '--check with the server unreachable: 0, the units start');
	like($err, qr/the database is unavailable: not checked/, '--check says so');
	($st, $out, $err) = migrate($c, '--check', '--bogus');
	is($st, 2, '--check with an unknown option: usage (2)');
}

# Where the files come from: XMHUB_SQL_DIR, from the environment or from
# the env file (the stack's names the source tree's sql/).
$db = fresh_db();
{
	local $ENV{XMHUB_SQL_DIR} = $sqldir;
	($st, $out, $err) = migrate($db);
	is_deeply(applied_lines($out), \@versions, 'XMHUB_SQL_DIR names the directory');
}
{
	local $ENV{XMHUB_ENV_FILE} = $s->env_file;
	delete local $ENV{XMHUB_DATABASE_URL};
	($st, $out, $err) = xmhub(['migrate']);
	is($st, 0, 'settings from the env file') or diag($err);
	like($out, qr/0 applied now/, 'the env file names the migrated database');
}

# A work directory of migrations: the real ones and more.
sub sqldir {
	my (%extra) = @_;
	my $dir = tempdir(CLEANUP => 1);
	copy($_, $dir) or die "copy $_: $!" for glob("$sqldir/*.sql");
	for my $name (keys %extra) {
		open my $f, '>', "$dir/$name" or die;
		print {$f} $extra{$name};
		close $f;
	}
	return $dir;
}

# Concurrent runs: start both, then wait for both.
sub migrate_together {
	my ($url, $dir, $n) = @_;
	my @runs;
	for (1 .. $n) {
		my ($out, $outname) = tempfile(UNLINK => 1);
		my ($errf, $errname) = tempfile(UNLINK => 1);
		my $pid = fork() // die "fork: $!";
		if ($pid == 0) {
			$ENV{XMHUB_DATABASE_URL} = $url;
			open STDOUT, '>', $outname or die;
			open STDERR, '>', $errname or die;
			exec bin('xmhub'), 'migrate', '--dir', $dir or die;
		}
		push @runs, [$pid, $outname, $errname];
	}
	my ($ok, @applied) = (1);
	for my $r (@runs) {
		waitpid($r->[0], 0);
		$ok &&= $? == 0;
		local @ARGV = ($r->[1]);
		local $/;
		my $o = <> // '';
		@ARGV = ($r->[2]);
		my $e = <> // '';
		diag("run $r->[0]: $e") if $? != 0 || $e ne '';
		push @applied, @{applied_lines($o)};
	}
	return ($ok, [sort @applied]);
}

# 000_slow holds its lock for a second: the other run must wait for it,
# then find it applied.
my $slow = sqldir('000_slow.sql' => "SELECT pg_sleep(1);\n"
	. "CREATE TABLE slow_marker (n integer);\n"
	. "INSERT INTO slow_marker VALUES (1);\n");
$db = fresh_db();
my ($ok, $applied) = migrate_together($db, $slow, 2);
ok($ok, 'two concurrent runs both exit 0');
is_deeply($applied, ['000_slow', @versions], 'together they applied each file once');
is(sql($db, 'SELECT count(*) FROM slow_marker'), 1, 'the slow file ran once');
is(sql($db, 'SELECT count(*) FROM schema_migrations'), 1 + @versions,
	'schema_migrations has one row per file');
for my $round (1 .. 3) {
	$db = fresh_db();
	($ok, $applied) = migrate_together($db, $sqldir, 3);
	ok($ok && "@$applied" eq "@versions",
		"three concurrent runs on a fresh database, round $round")
	    or diag("applied: @$applied");
}

# A file that fails leaves nothing behind and stops the run.
my $bad = sqldir('900_bad.sql' => "CREATE TABLE half_done (n integer);\n"
	. "INSERT INTO half_done VALUES (1);\n"
	. "SELECT no_such_function();\n"
	. "CREATE TABLE never (n integer);\n",
	'901_after.sql' => "CREATE TABLE after_bad (n integer);\n");
$db = fresh_db();
($st, $out, $err) = migrate($db, '--dir', $bad);
is($st, 1, 'a failing migration: exit 1');
like($err, qr/^migrate: 900_bad\.sql: .*no_such_function/m,
	'the failing file and the server\'s reason are named');
is_deeply(applied_lines($out), \@versions, 'the files before it are applied');
is(sql($db, q{SELECT to_regclass('half_done') IS NULL AND to_regclass('never') IS NULL}),
	't', 'the failing file was rolled back completely');
is(sql($db, q{SELECT to_regclass('after_bad') IS NULL}), 't',
	'the files after it did not run');
is(sql($db, q{SELECT count(*) FROM schema_migrations WHERE version >= '900'}), 0,
	'schema_migrations does not list the failed file');
($st, $out, $err) = migrate($db, '--dir', $bad);
ok($st == 1 && @{applied_lines($out)} == 0, 'a second run fails the same way, applying nothing');
open my $fix, '>', "$bad/900_bad.sql" or die;
print {$fix} "CREATE TABLE half_done (n integer);\n";
close $fix;
($st, $out, $err) = migrate($db, '--dir', $bad);
is($st, 0, 'once mended, the run succeeds') or diag($err);
is_deeply(applied_lines($out), ['900_bad', '901_after'], 'and applies the rest only');

# Files that can not be applied as they are.
my $dup = sqldir('002_a.sql' => "SELECT 1;\n", '0002_b.sql' => "SELECT 1;\n");
$db = fresh_db();
($st, $out, $err) = migrate($db, '--dir', $dup);
ok($st == 1 && $err =~ /002_a\.sql.*0002_b\.sql|0002_b\.sql.*002_a\.sql/,
	'two files with one number are refused') or diag($err);
is(sql($db, q{SELECT to_regclass('schema_migrations') IS NULL}), 't', 'before anything runs');
my $commit = sqldir('950_commit.sql' => "COMMIT;\nCREATE TABLE c1 (n integer);\n");
($st, $out, $err) = migrate($db, '--dir', $commit);
ok($st == 1 && $err =~ /950_commit\.sql: .*transaction/,
	'a file that commits by itself is reported') or diag($err);
my $ignored = sqldir('README' => "notes\n", '12_short.sql' => "bad sql\n",
	'003x.sql' => "bad sql\n", '004_notsql.txt' => "bad sql\n");
$db = fresh_db();
($st, $out, $err) = migrate($db, '--dir', $ignored);
ok($st == 0 && "@{applied_lines($out)}" eq "@versions",
	'other names in the directory are ignored') or diag($err);

# Usage and failures of the command itself.
($st, $out, $err) = migrate($db, '--dir', '/nonexistent/sql');
ok($st == 1 && $err =~ m{^migrate: /nonexistent/sql: }m, 'missing directory: exit 1');
{
	delete local $ENV{XMHUB_DATABASE_URL};
	($st, $out, $err) = xmhub(['migrate', '--dir', $sqldir]);
	ok($st == 1 && $err =~ /XMHUB_DATABASE_URL is not set/, 'no database: exit 1');
}
($st, $out, $err) = migrate('postgresql:///xmhub?host=/nonexistent', '--dir', $sqldir);
ok($st == 1 && $err =~ /^migrate: connect: /m, 'unreachable database: exit 1');
($st, $out, $err) = migrate($db, '--frobnicate');
ok($st == 2 && $err =~ /usage:.*xmhub migrate \[--dir DIR\]/s, 'bad option: usage, exit 2');

# The schema's constraints bite.  Statements run on the stack's database.
sub accepted {
	my ($sql, $name) = @_;
	my ($st, $out, $err) = $s->psql($sql);
	ok($st == 0, "accepted: $name") or diag($err);
	chomp $out;
	return $out;
}
sub refused {
	my ($sql, $why, $name) = @_;
	my ($st, $out, $err) = $s->psql($sql);
	ok($st != 0 && $err =~ $why, "refused: $name") or diag("status $st: $err");
}

my $fa = accepted(q{INSERT INTO facilities (name, slug) VALUES ('A', 'fac-a') RETURNING id}, 'facility A');
my $fb = accepted(q{INSERT INTO facilities (name, slug, description) VALUES ('B', 'fac-b', 'second') RETURNING id}, 'facility B');
refused(q{INSERT INTO facilities (name, slug) VALUES ('A again', 'fac-a')},
	qr/facilities_slug_key/, 'duplicate facility slug');
refused(q{INSERT INTO facilities (name, slug) VALUES ('C', 'Fac C')},
	qr/check constraint "facilities_slug_check"/, 'slug that is not URL-friendly');

my $ua = accepted(qq{INSERT INTO users (facility_id, email, password_hash, display_name, role)
	VALUES ('$fa', 'Ann\@Example.com', 'x', 'Ann', 'facility_admin') RETURNING id}, 'user');
refused(qq{INSERT INTO users (facility_id, email, password_hash, display_name, role)
	VALUES ('$fb', 'ann\@example.COM', 'x', 'Ann B', 'user')},
	qr/users_email_key/, 'the same e-mail in another case, even in another facility');
accepted(q{INSERT INTO users (email, password_hash, display_name, role)
	VALUES ('root@example.com', 'x', 'Root', 'super_admin')}, 'super_admin without facility');
refused(qq{INSERT INTO users (facility_id, email, password_hash, display_name, role)
	VALUES ('$fa', 'sa\@example.com', 'x', 'SA', 'super_admin')},
	qr/users_facility_iff_not_super/, 'super_admin with a facility');
refused(q{INSERT INTO users (email, password_hash, display_name, role)
	VALUES ('u@example.com', 'x', 'U', 'user')},
	qr/users_facility_iff_not_super/, 'user without a facility');
refused(qq{INSERT INTO users (facility_id, email, password_hash, display_name, role)
	VALUES ('$fa', 'r\@example.com', 'x', 'R', 'root')},
	qr/users_role_check/, 'unknown role');

my $da = accepted(qq{INSERT INTO devices (facility_id, device_uid, name) VALUES ('$fa', 4294967295, 'd') RETURNING id},
	'device_uid 4294967295');
refused(qq{INSERT INTO devices (facility_id, device_uid, name) VALUES ('$fa', 4294967295, 'd2')},
	qr/devices_facility_id_device_uid_key/, 'device_uid twice in a facility');
my $db_dev = accepted(qq{INSERT INTO devices (facility_id, device_uid, name) VALUES ('$fb', 4294967295, 'd') RETURNING id},
	'the same device_uid in another facility');
refused(qq{INSERT INTO devices (facility_id, device_uid, name) VALUES ('$fa', 4294967296, 'd')},
	qr/devices_device_uid_check/, 'device_uid 4294967296');
refused(qq{INSERT INTO devices (facility_id, device_uid, name) VALUES ('$fa', -1, 'd')},
	qr/devices_device_uid_check/, 'device_uid -1');

my $ta = accepted(qq{INSERT INTO tags (facility_id, name, color) VALUES ('$fa', 'loud', '#a0B1c2') RETURNING id}, 'tag');
refused(qq{INSERT INTO tags (facility_id, name) VALUES ('$fa', 'loud')},
	qr/tags_facility_id_name_key/, 'tag name twice in a facility');
my $tb = accepted(qq{INSERT INTO tags (facility_id, name) VALUES ('$fb', 'loud') RETURNING id},
	'the same tag name in another facility, no color');
refused(qq{INSERT INTO tags (facility_id, name, color) VALUES ('$fa', 'c', '#12345G')},
	qr/tags_color_check/, 'color that is not #RRGGBB');
refused(qq{INSERT INTO tags (facility_id, name, color) VALUES ('$fa', 'c', 'red')},
	qr/tags_color_check/, 'color name');

my $ka = accepted(qq{INSERT INTO api_keys (facility_id, name, key_prefix, key_hash, created_by)
	VALUES ('$fa', 'k', 'xmk_abcdefgh', repeat('a', 64), '$ua') RETURNING id}, 'api key');
is(accepted(qq{SELECT array_to_string(scopes, ',') FROM api_keys WHERE id = '$ka'}, 'scopes'),
	'upload,ingest', 'api key scopes default to all');
refused(qq{INSERT INTO api_keys (facility_id, name, key_prefix, key_hash) VALUES ('$fa', 'k2', 'xmk_abcdefgh', repeat('a', 64))},
	qr/api_keys_key_hash_key/, 'the same key hash twice');
refused(qq{INSERT INTO api_keys (facility_id, name, key_prefix, key_hash, scopes) VALUES ('$fa', 'k3', 'xmk_abcdefgh', repeat('b', 64), '{admin}')},
	qr/api_keys_scopes_check/, 'unknown scope');
my $kb = accepted(qq{INSERT INTO api_keys (facility_id, name, key_prefix, key_hash) VALUES ('$fb', 'kb', 'xmk_bbbbbbbb', repeat('c', 64)) RETURNING id},
	'api key without creator (CLI)');
accepted(qq{INSERT INTO refresh_tokens (user_id, family_id, token_hash, expires_at)
	VALUES ('$ua', gen_random_uuid(), repeat('d', 64), now() + interval '30 days')}, 'refresh token');

my $upa = accepted(qq{INSERT INTO uploads (facility_id, api_key_id, original_filename, original_format, original_size_bytes)
	VALUES ('$fa', '$ka', 'a.wav', 'wav', 10) RETURNING id}, 'upload');
is(accepted(qq{SELECT status || ' ' || metadata::text FROM uploads WHERE id = '$upa'}, 'upload defaults'),
	'pending {}', 'an upload starts pending with empty metadata');
refused(qq{INSERT INTO uploads (facility_id, api_key_id, original_filename, original_format, original_size_bytes)
	VALUES ('$fa', '$kb', 'a.wav', 'wav', 10)}, qr/foreign key/, 'upload with a key of another facility');
refused(qq{UPDATE uploads SET status = 'done' WHERE id = '$upa'}, qr/uploads_status_check/, 'upload status done');
refused(qq{UPDATE uploads SET metadata = '[1]' WHERE id = '$upa'}, qr/uploads_metadata_check/, 'metadata not an object');
accepted(qq{INSERT INTO upload_tags (upload_id, tag_id, facility_id) VALUES ('$upa', '$ta', '$fa')}, 'tag link');
refused(qq{INSERT INTO upload_tags (upload_id, tag_id, facility_id) VALUES ('$upa', '$tb', '$fa')},
	qr/foreign key/, 'tag link to a tag of another facility');
accepted(qq{INSERT INTO transcode_jobs (upload_id, facility_id, target_format, target_codec, target_container, target_bitrate)
	VALUES ('$upa', '$fa', 'webm', 'opus', 'webm', '128k')}, 'transcode job');
refused(qq{UPDATE transcode_jobs SET status = 'paused'}, qr/transcode_jobs_status_check/, 'transcode job status paused');
for my $status (qw(queued running completed failed cancelled)) {
	accepted(qq{UPDATE transcode_jobs SET status = '$status'}, "transcode job status $status");
}

my $sa = accepted(qq{INSERT INTO ingest_sessions (facility_id, device_id) VALUES ('$fa', '$da') RETURNING id}, 'ingest session');
refused(qq{INSERT INTO ingest_sessions (facility_id, device_id) VALUES ('$fa', '$db_dev')},
	qr/foreign key/, 'session with a device of another facility');
refused(qq{UPDATE ingest_sessions SET status = 'open' WHERE id = '$sa'}, qr/ingest_sessions_status_check/, 'session status open');
for my $status (qw(closing closed error active)) {
	accepted(qq{UPDATE ingest_sessions SET status = '$status' WHERE id = '$sa'}, "session status $status");
}
my $stream = accepted(qq{INSERT INTO ingest_streams (session_id, stream_index, name, value_type)
	VALUES ('$sa', 65535, 'temp', 'f32_array') RETURNING id}, 'stream 65535');
refused(qq{INSERT INTO ingest_streams (session_id, stream_index, name, value_type) VALUES ('$sa', 65535, 'x', 'f32')},
	qr/ingest_streams_session_id_stream_index_key/, 'stream index twice in a session');
refused(qq{INSERT INTO ingest_streams (session_id, stream_index, name, value_type) VALUES ('$sa', 65536, 'x', 'f32')},
	qr/ingest_streams_stream_index_check/, 'stream index 65536');
refused(qq{INSERT INTO ingest_streams (session_id, stream_index, name, value_type) VALUES ('$sa', 1, 'x', 'f16')},
	qr/ingest_streams_value_type_check/, 'value type f16');
my @types = qw(f32 f64 i32 i64 bool string bytes f64_array f32_array i32_array json i16 i8);
accepted(qq{INSERT INTO ingest_streams (session_id, stream_index, name, value_type) VALUES }
	. join(', ', map { "('$sa', $_, 's$_', '$types[$_]')" } 0 .. $#types), 'all 13 value types');
accepted(qq{INSERT INTO stored_chunks (stream_id, start_ts_us, end_ts_us, sample_count, byte_size, object_key)
	VALUES ('$stream', 0, 18446744073709551615, 4294967295, 32, 'chunks/a')}, 'chunk spanning all u64 timestamps');
refused(qq{INSERT INTO stored_chunks (stream_id, start_ts_us, end_ts_us, sample_count, byte_size, object_key)
	VALUES ('$stream', 0, 18446744073709551616, 1, 32, 'chunks/b')}, qr/stored_chunks_end_ts_us_check/, 'timestamp 2^64');
refused(qq{INSERT INTO stored_chunks (stream_id, start_ts_us, end_ts_us, sample_count, byte_size, object_key)
	VALUES ('$stream', 2, 1, 1, 32, 'chunks/c')}, qr/stored_chunks_check/, 'chunk ending before it starts');

is(accepted(qq{UPDATE facilities SET description = 'changed' WHERE id = '$fa';
	SELECT updated_at > created_at FROM facilities WHERE id = '$fa'}, 'update'), 't',
	'updated_at follows an update');

# Deleting a facility takes everything of it, and only of it.
my @tables = qw(users refresh_tokens api_keys devices tags uploads upload_tags
	transcode_jobs ingest_sessions ingest_streams stored_chunks);
my $counts = join(' || \' \' || ', map { "(SELECT count(*) FROM $_)" } @tables);
my $before = accepted("SELECT $counts", 'counting rows');
accepted(qq{DELETE FROM facilities WHERE id = '$fa'}, 'deleting facility A');
is(accepted("SELECT $counts", 'counting rows'), '1 0 1 1 1 0 0 0 0 0 0',
	"facility A's rows are gone, B's and the super_admin stay (@tables; before: $before)");

done_testing;
