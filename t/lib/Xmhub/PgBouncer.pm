# SPDX-License-Identifier: MIT
package Xmhub::PgBouncer;

# PgBouncer in transaction mode in front of a test PostgreSQL cluster
# (doc/scaling.md "PgBouncer"): Debian's pgbouncer on 127.0.0.1 and a
# free port, every database of the cluster by the same name (a wildcard
# entry with the session settings xmhub needs: TimeZone UTC, ISO
# dates), trust authentication of the stacks' user, as that user when
# root (PgBouncer refuses to run as root).  Stopped at exit.
#
#   my $b = Xmhub::PgBouncer->start($pg, pool => 20);
#                                      # $pg: an Xmhub::Pg (its socket);
#                                      # pool: server connections of the
#                                      # database at most (default 20);
#                                      # session => 0: without the session
#                                      # settings xmhub checks
#   $b->url($db)                       # postgresql://xmhub@127.0.0.1:PORT/$db
#   $b->show('POOLS')                  # rows of the admin console's
#                                      # SHOW, as [{column => value}]
#   $b->stop                           # (also at exit)
#
#   my $b = Xmhub::PgBouncer->shared;  # one per test process in front of
#                                      # t/with-testdb's cluster
#   Xmhub::PgBouncer->run_test('t/e2e/revocation.t');
#                                      # that test file, in this process,
#                                      # with every stack's database
#                                      # reached through PgBouncer
#                                      # (t/e2e/pooled-*.t, Xmhub::Stack)

use strict;
use warnings;
use File::Temp qw(tempdir);
use IO::Socket::INET;
use Time::HiRes qw(sleep);
use Xmhub::Pg;
use Xmhub::Stack;
use Xmhub::Test qw(run);

my %live;

sub start {
	my ($class, $pg, %opt) = @_;
	my $bin = '/usr/sbin/pgbouncer';
	-x $bin or die "$bin not found: apt-get install pgbouncer\n";
	my $self = bless {port => Xmhub::Stack::free_port(), pid => $$,
		pg => $pg, dir => tempdir('xmhub-pgb-XXXXXX', TMPDIR => 1,
			CLEANUP => 1)}, $class;
	my $dir = $self->{dir};
	my $pool = $opt{pool} // 20;
	my $pgdir = $pg->dir;
	my $pgport = $pg->port;
	my $session = ($opt{session} // 1) ? ' timezone=UTC datestyle=ISO' : '';
	open my $u, '>', "$dir/users.txt" or die "$dir/users.txt: $!\n";
	print $u qq{"xmhub" ""\n};
	close $u;
	open my $c, '>', "$dir/pgbouncer.ini" or die "$dir/pgbouncer.ini: $!\n";
	print $c <<"EOF";
[databases]
* = host=$pgdir port=$pgport$session
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $self->{port}
unix_socket_dir =
auth_type = trust
auth_file = $dir/users.txt
admin_users = xmhub
pool_mode = transaction
default_pool_size = $pool
max_db_connections = $pool
max_client_conn = 2000
server_login_retry = 1
query_wait_timeout = 5
server_lifetime = 3600
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
EOF
	close $c;
	my @svc = Xmhub::Pg::svc();
	if (@svc) {
		my ($uid, $gid) = (getpwnam('xmhub'))[2, 3];
		chown $uid, $gid, $dir, "$dir/users.txt", "$dir/pgbouncer.ini";
	}
	my $pid = fork() // die "fork: $!\n";
	if ($pid == 0) {
		open STDIN, '<', '/dev/null';
		exec @svc, $bin, '-q', "$dir/pgbouncer.ini";
		die "exec pgbouncer: $!";
	}
	$self->{bouncer} = $pid;
	$live{$dir} = $self;
	for (1 .. 100) {
		return $self if IO::Socket::INET->new(PeerAddr => '127.0.0.1',
			PeerPort => $self->{port}, Proto => 'tcp');
		die "pgbouncer exited: " . $self->log
		    if waitpid($pid, 1) == $pid;
		sleep 0.05;
	}
	die "pgbouncer does not listen on port $self->{port}: " . $self->log;
}

# shared: one PgBouncer for this test process in front of the run's
# cluster (Xmhub::Pg->shared); undef outside t/with-testdb.
my $shared;
sub shared {
	my ($class) = @_;
	return $shared //= do {
		my $pg = Xmhub::Pg->shared;
		$pg ? $class->start($pg) : undef;
	};
}

# run_test($file): runs test file $file (under XMHUB_SRCDIR) here, with
# XMHUB_TEST_POOLED set; dies with its error.
sub run_test {
	my ($class, $file) = @_;
	$ENV{XMHUB_TEST_POOLED} = 1;
	my $path = "$ENV{XMHUB_SRCDIR}/$file";
	-r $path or die "$path: $!\n";
	local $0 = $path;
	do $path;
	die $@ if $@;
	# Its stacks still run (they stop at exit): each went through one.
	my @stacks = Xmhub::Stack::pooled();
	die "$file: no stack ran through PgBouncer\n" unless @stacks;
	for (@stacks) {
		die "$file: no transaction of " . $_->var
		    . " went through PgBouncer\n" unless $_->pooled_xacts;
	}
}

sub port { return $_[0]{port} }
sub dir { return $_[0]{dir} }
sub url { return "postgresql://xmhub\@127.0.0.1:$_[0]{port}/" . ($_[1] // 'xmhub') }

sub log {
	my ($self) = @_;
	open my $f, '<', "$self->{dir}/pgbouncer.log" or return '';
	local $/;
	return <$f> // '';
}

# show($what): the admin console's SHOW $what, one hash per row.
sub show {
	my ($self, $what) = @_;
	my ($st, $out, $err) = run([Xmhub::Pg::svc(), $self->{pg}->bin('psql'),
		'-X', '-A', '-F', "\t", '-P', 'footer=off', '-d',
		$self->url('pgbouncer'), '-c', "SHOW $what"]);
	die "SHOW $what: $err" if $st;
	my ($head, @rows) = split /\n/, $out;
	my @cols = split /\t/, $head;
	return [map { my %r; @r{@cols} = split /\t/, $_, -1; \%r } @rows];
}

sub stop {
	my ($self) = @_;
	return if $$ != $self->{pid} || !delete $live{$self->{dir}};
	kill 'TERM', $self->{bouncer};
	waitpid($self->{bouncer}, 0);
}

END {
	my $status = $?;
	$_->stop for values %live;
	$? = $status;
}

1;
