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
#   $pg->port; $pg->bin('pgbench')           # its programs
#   $pg->stop                                # (also at exit)

use strict;
use warnings;
use File::Path qw(remove_tree);
use File::Temp qw(tempdir);
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
		    . '-c max_connections=' . ($opt{max_connections} // 200)
		    . (($opt{fsync} // 1) ? '' : ' -c fsync=off'), 'start');
	$self->{up} = 1;
	as_svc("$bin/psql", '-X', '-q', '-h', '127.0.0.1', '-p', $self->{port},
		'-U', 'xmhub', '-d', 'postgres', '-c', 'CREATE DATABASE xmhub');
	return $self;
}

sub port { return $_[0]{port} }
sub bin { return "$_[0]{bin}/$_[1]" }
sub url { return "postgresql://xmhub\@127.0.0.1:$_[0]{port}/xmhub" }

# psql($sql): ($status, $stdout, $stderr) of $sql on the database,
# unaligned without headers.
sub psql {
	my ($self, $sql) = @_;
	return run([svc(), $self->bin('psql'), '-X', '-q', '-A', '-t', '-v',
		'ON_ERROR_STOP=1', '-d', $self->url, '-c', $sql]);
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
	$_->stop for values %live;
	$? = $status;
}

1;
