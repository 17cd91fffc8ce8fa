# SPDX-License-Identifier: MIT
package Xmhub::Pg;

# A throwaway PostgreSQL cluster reached over TCP on 127.0.0.1, for
# stacks that share one database (t/e2e/multi-host.t, bench/scale.pl):
# initdb on a temporary directory, trust authentication (loopback only,
# a throwaway cluster), run as the stacks' user xmhub when root
# (PostgreSQL refuses root).  Stopped and removed at exit.
#
#   my $pg = Xmhub::Pg->start(fsync => 0);  # fsync off: a test that
#                                            # kills web hosts, not it
#   $pg->url                                 # postgresql://xmhub@...
#   $pg->socket_url($db)                     # database $db through the
#                                            # cluster's socket
#   $pg->migrate($db)                        # the tree's migrations on it
#   $pg->port; $pg->bin('pgbench')           # its programs
#   $pg->stop                                # (also at exit)
#   my $rep = $pg->replica;                  # a hot standby of it, by
#                                            # streaming replication (an
#                                            # Xmhub::Pg: url, psql, stop)
#
# t/with-testdb starts one such cluster for a whole test run; the stacks
# of the run make their databases in it (Xmhub::Stack, doc/development.md):
#
#   my $db = Xmhub::Pg->shared;              # undef outside t/with-testdb
#   my $url = $db->create('name');           # a copy of the migrated
#                                            # template database
#   $db->drop('name');
#
#   my $url = Xmhub::Pg->test_database;     # for a test that needs SQL and
#                                            # no stack: that copy under
#                                            # t/with-testdb, else a cluster
#                                            # of its own, migrated; gone at
#                                            # exit
#   exit Xmhub::Pg->run_db_program('jobs-db'); # a C test (t/e2e/jobs-db.c)
#                                            # on such a database

use strict;
use warnings;
use File::Path qw(remove_tree);
use File::Temp qw(tempdir tempfile);
use Xmhub::Stack;
use Xmhub::Test qw(run);

my %live;

# The command prefix that runs a program as the stacks' user (created
# when missing, as httpd-conf/stack does) when root; empty otherwise.
sub svc {
	return () if $> != 0;
	if (!getpwnam('xmhub')) {
		my ($st, $o, $e) = run(['useradd', '--system', '--user-group',
			'--no-create-home', '--home-dir', '/nonexistent', '--shell',
			'/usr/sbin/nologin', 'xmhub']);
		die "useradd: $e" if $st;
	}
	return ('setpriv', '--reuid=xmhub', '--regid=xmhub', '--init-groups');
}

sub as_svc {
	my ($st, $out, $err) = run([svc(), @_]);
	die "@_: exit $st\n$out$err" if $st;
	return $out;
}

sub start {
	my ($class, %opt) = @_;
	my ($bin) = grep { -x "$_/initdb" }
	    sort { ($b =~ /(\d+)/)[0] <=> ($a =~ /(\d+)/)[0] }
	    glob '/usr/lib/postgresql/*/bin';
	die "no PostgreSQL server programs: apt-get install postgresql\n"
	    unless $bin;
	my $self = bless {bin => $bin, port => Xmhub::Stack::free_port(),
		max_connections => $opt{max_connections} // 200,
		dir => tempdir('xmhub-pg-XXXXXX', TMPDIR => 1), pid => $$},
	    $class;
	$live{$self->{dir}} = $self;
	if (svc()) {
		my ($uid, $gid) = (getpwnam('xmhub'))[2, 3];
		chown $uid, $gid, $self->{dir};
	}
	as_svc("$bin/initdb", '-D', "$self->{dir}/data", '-U', 'xmhub', '-E',
		'UTF8', '--locale=C.UTF-8', '--auth=trust');
	as_svc("$bin/pg_ctl", '-D', "$self->{dir}/data", '-l',
		"$self->{dir}/log", '-w', '-t', '60', '-s', '-o',
		"-c listen_addresses=127.0.0.1 -c port=$self->{port} "
		    . "-c unix_socket_directories=$self->{dir} "
		    . "-c max_connections=$self->{max_connections}"
		    . (($opt{fsync} // 1) ? '' : ' -c fsync=off'), 'start');
	$self->{up} = 1;
	as_svc("$bin/psql", '-X', '-q', '-h', '127.0.0.1', '-p', $self->{port},
		'-U', 'xmhub', '-d', 'postgres', '-c', 'CREATE DATABASE xmhub');
	return $self;
}

# replica: a streaming replica of this cluster (pg_basebackup over its
# TCP port, hot_standby), started on a port of its own.
sub replica {
	my ($self) = @_;
	my $r = bless {bin => $self->{bin}, port => Xmhub::Stack::free_port(),
		dir => tempdir('xmhub-pgr-XXXXXX', TMPDIR => 1), pid => $$},
	    ref $self;
	$live{$r->{dir}} = $r;
	if (svc()) {
		my ($uid, $gid) = (getpwnam('xmhub'))[2, 3];
		chown $uid, $gid, $r->{dir};
	}
	as_svc("$r->{bin}/pg_basebackup", '-D', "$r->{dir}/data", '-R',
		'--checkpoint=fast', '-X',
		'stream', '-h', '127.0.0.1', '-p', $self->{port}, '-U', 'xmhub');
	eval {
		as_svc("$r->{bin}/pg_ctl", '-D', "$r->{dir}/data", '-l',
			"$r->{dir}/log", '-w', '-t', '60', '-s', '-o',
			"-c listen_addresses=127.0.0.1 -c port=$r->{port} "
			    . "-c unix_socket_directories=$r->{dir} "
			    . "-c max_connections=$self->{max_connections} "
			    . '-c hot_standby=on', 'start');
		1;
	} or die $@ . (do { local (@ARGV, $/) = "$r->{dir}/log"; <> } // '');
	$r->{up} = 1;
	return $r;
}

sub port { return $_[0]{port} }
sub bin { return "$_[0]{bin}/$_[1]" }
sub url { return "postgresql://xmhub\@127.0.0.1:$_[0]{port}/xmhub" }
sub dir { return $_[0]{dir} }
sub bindir { return $_[0]{bin} }

# socket_url($db): database $db (default xmhub) through the socket, in
# the shape httpd-conf/stack gives its own cluster's.
sub socket_url {
	my ($self, $db) = @_;
	(my $dir = $self->{dir}) =~ s/([^A-Za-z0-9_.~\/-])/sprintf '%%%02X', ord $1/ge;
	return 'postgresql:///' . ($db // 'xmhub')
	    . "?host=$dir&port=$self->{port}&user=xmhub";
}

# The name of the template database t/with-testdb migrates.
our $TEMPLATE = 'xmhub_template';

# shared: the cluster of t/with-testdb (XMHUB_TEST_PG names its socket
# directory, port and server programs), or undef outside of it.  Never
# stopped here: the wrapper owns it.
sub shared {
	my ($class) = @_;
	my ($dir, $port, $bin) = split /\t/, $ENV{XMHUB_TEST_PG} // '';
	return undef unless defined $bin;
	return bless {dir => $dir, port => $port, bin => $bin, pid => -1},
	    $class;
}

# create($name): a new database copied from the migrated template; its
# URL.  Dies saying why it could not.
sub create {
	my ($self, $name) = @_;
	my ($st, $out, $err) = $self->psql(
		qq{CREATE DATABASE "$name" TEMPLATE $TEMPLATE}, 'postgres');
	die "CREATE DATABASE $name: $err" if $st;
	return $self->socket_url($name);
}

# drop($name): removes database $name, closing what is still connected.
sub drop {
	my ($self, $name) = @_;
	my ($st, $out, $err) = $self->psql(
		qq{DROP DATABASE IF EXISTS "$name" WITH (FORCE)}, 'postgres');
	die "DROP DATABASE $name: $err" if $st;
}

# psql($sql, $db): ($status, $stdout, $stderr) of $sql on database $db
# (default xmhub), unaligned without headers.
sub psql {
	my ($self, $sql, $db) = @_;
	return run([svc(), $self->bin('psql'), '-X', '-q', '-A', '-t', '-v',
		'ON_ERROR_STOP=1', '-d', $self->socket_url($db), '-c', $sql]);
}

# migrate($db): `xmhub migrate` of the tree (XMHUB_BIN, XMHUB_SRCDIR/sql)
# on database $db (default xmhub), no settings of the machine's; dies
# with its output when it fails.
sub migrate {
	my ($self, $db) = @_;
	local $ENV{XMHUB_ENV_FILE} = '/dev/null';
	local $ENV{XMHUB_DATABASE_URL} = $self->socket_url($db);
	my ($st, $out, $err) = run([$ENV{XMHUB_BIN}, 'migrate', '--dir',
		"$ENV{XMHUB_SRCDIR}/sql"]);
	die "xmhub migrate: exit $st\n$out$err" if $st;
}

# test_database: see above.  Needs XMHUB_BIN and XMHUB_SRCDIR (make
# check sets them) outside t/with-testdb, for the migrations.
my @made; # [cluster, database] to drop at exit
sub test_database {
	my ($class) = @_;
	if (my $shared = $class->shared) {
		my $name = "t_${$}_" . time;
		my $url = $shared->create($name);
		push @made, [$shared, $name, $$];
		return $url;
	}
	my $pg = $class->start;
	$pg->migrate;
	return $pg->socket_url;
}

# run_db_program('NAME'): runs the C test t/e2e/NAME of the build on a
# test_database of its own (XMHUB_TEST_DATABASE_URL), its TAP on
# stdout; what it logs on stderr (lib/core/db's refusals the test
# provokes) is shown only when it fails.  Returns its exit status, for
# the script's own.
sub run_db_program {
	my ($class, $name) = @_;
	local $ENV{XMHUB_TEST_DATABASE_URL} = $class->test_database;
	my ($logf, $log) = tempfile(UNLINK => 1);
	open my $stderr, '>&', \*STDERR or die "dup: $!";
	open STDERR, '>', $log or die "$log: $!";
	system("$ENV{XMHUB_BUILDDIR}/t/e2e/$name");
	my $status = $? == -1 ? 1 : ($? >> 8) || ($? & 127 ? 1 : 0);
	open STDERR, '>&', $stderr or die "dup: $!";
	if ($status != 0) {
		seek $logf, 0, 0;
		print "# $_" while <$logf>;
	}
	return $status;
}

sub stop {
	my ($self) = @_;
	return if $$ != $self->{pid} || !delete $live{$self->{dir}};
	run([svc(), $self->bin('pg_ctl'), '-D', "$self->{dir}/data", '-m',
		'immediate', '-s', 'stop']) if $self->{up};
	remove_tree($self->{dir});
}

END {
	my $status = $?;
	for (grep { $_->[2] == $$ } @made) {
		warn $@ unless eval { $_->[0]->drop($_->[1]); 1 };
	}
	$_->stop for values %live;
	$? = $status;
}

1;
