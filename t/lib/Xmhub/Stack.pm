package Xmhub::Stack;

# A throwaway xmhub stack for the end-to-end tests: PostgreSQL and
# lighttpd started by httpd-conf/stack (the script behind ./dev) on a
# temporary var directory and a free port, with the programs of the build
# tree that make check names in XMHUB_BUILDDIR.  Every stack started is
# stopped and its directory removed at exit, also when a test dies or is
# interrupted.
#
#   my $s = Xmhub::Stack->start;       # dies saying why it could not
#   $s->url('/api/health')             # http://127.0.0.1:PORT/api/health
#   $s->psql($sql)                     # ($status, $stdout, $stderr)
#   $s->stop_db; $s->start_db;         # PostgreSQL only
#
# The stack always has a PostgreSQL of its own: an XMHUB_DATABASE_URL of
# the caller is ignored, so that tests never touch a real database.

use strict;
use warnings;
use File::Path qw(remove_tree);
use File::Temp qw(tempdir);
use IO::Socket::INET;
use Xmhub::Test qw(run);

my %live; # stacks to stop at exit, by var directory

# A TCP port on 127.0.0.1 that nothing listens on now.
sub free_port {
	my $sock = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
		LocalPort => 0, Proto => 'tcp', Listen => 1)
	    or die "no free port: $!\n";
	my $port = $sock->sockport;
	close $sock;
	return $port;
}

sub script { return "$ENV{XMHUB_SRCDIR}/httpd-conf/stack" }

# stack(@args): runs httpd-conf/stack with the stack's environment; dies
# with its output when it fails.
sub stack {
	my ($self, @args) = @_;
	local $ENV{XMHUB_SQL_DIR} = "$ENV{XMHUB_SRCDIR}/sql";
	delete local $ENV{XMHUB_DATABASE_URL};
	delete local $ENV{XMHUB_ENV_FILE};
	my ($st, $out, $err) = run([script(), @args]);
	die "httpd-conf/stack @args: exit $st\n$out$err" if $st != 0;
	return $out;
}

sub start {
	my ($class) = @_;
	my $build = $ENV{XMHUB_BUILDDIR}
	    or die "XMHUB_BUILDDIR is not set (run via make check)\n";
	$ENV{XMHUB_SRCDIR} or die "XMHUB_SRCDIR is not set\n";
	my $self = bless {
		var => tempdir('xmhub-t-XXXXXX', TMPDIR => 1),
		port => free_port(),
		pid => $$,
	}, $class;
	$live{$self->{var}} = $self;
	$SIG{$_} //= sub { exit 1 } for qw(INT TERM HUP);
	$self->stack('up', $self->{var}, $build, $self->{port});
	return $self;
}

sub var { return $_[0]{var} }
sub port { return $_[0]{port} }
sub env_file { return "$_[0]{var}/xmhub.env" }

# url($path): the address of $path on this stack's lighttpd.
sub url {
	my ($self, $path) = @_;
	return "http://127.0.0.1:$self->{port}" . ($path // '/');
}

# The value of a setting in the stack's env file.
sub setting {
	my ($self, $name) = @_;
	open my $f, '<', $self->env_file or die $self->env_file . ": $!\n";
	my $v;
	while (<$f>) {
		$v = $1 if /^\Q$name\E=(.*)$/;
	}
	return $v;
}

# database_url($db): the URL of database $db (default: the stack's own)
# in the stack's cluster.
sub database_url {
	my ($self, $db) = @_;
	my $url = $self->setting('XMHUB_DATABASE_URL');
	$url =~ s{^(postgresql://[^/]*/)[^?]*}{$1$db} if defined $db;
	return $url;
}

# psql($sql, $db): runs $sql (several statements are one transaction) on
# $db (default: the stack's own database) as the database user of the
# stack; ($status, $stdout, $stderr), output unaligned without headers.
sub psql {
	my ($self, $sql, $db) = @_;
	return run([script(), 'psql', $self->{var}, '-q', '-A', '-t',
		'-v', 'ON_ERROR_STOP=1', '-d', $self->database_url($db),
		'-c', $sql]);
}

# create_database($name): a new empty database in the cluster.
sub create_database {
	my ($self, $name) = @_;
	my ($st, $out, $err) = $self->psql(qq{CREATE DATABASE "$name"},
		'postgres');
	die "CREATE DATABASE $name: $err" if $st != 0;
	return $self->database_url($name);
}

sub stop_db { $_[0]->stack('db-stop', $_[0]{var}) }
sub start_db { $_[0]->stack('db-start', $_[0]{var}) }

# Stops everything and removes the var directory (kept if stopping
# failed, to look at its logs).
sub stop {
	my ($self) = @_;
	return if $$ != $self->{pid} || !delete $live{$self->{var}};
	if (eval { $self->stack('down', $self->{var}); 1 }) {
		remove_tree($self->{var});
	} else {
		warn "$@(kept $self->{var})\n";
	}
}

END {
	my $status = $?;
	$_->stop for values %live;
	$? = $status;
}

1;
