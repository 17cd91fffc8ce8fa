# SPDX-License-Identifier: MIT
package Xmhub::Stack;

# A throwaway xmhub stack for the end-to-end tests: PostgreSQL and
# lighttpd started by httpd-conf/stack (the script behind ./dev) on a
# temporary var directory and a free port, with the programs of the build
# tree that make check names in XMHUB_BUILDDIR.  Every stack started is
# stopped and its directory removed at exit, also when a test dies or is
# interrupted.  A sanitizer report in its programs' log (ASan build) is
# printed and fails the test file; the directory is then kept.
#
#   my $s = Xmhub::Stack->start;       # dies saying why it could not
#   my $s = Xmhub::Stack->start(env => { XMHUB_SESSION_TIMEOUT => 2 });
#                                      # settings written to its env file
#   $s->url('/api/health')             # http://127.0.0.1:PORT/api/health
#   $s->face_url('/health')            # the face service's port
#   $s->ws_port                        # the WebSocket front's port (behind
#                                      # lighttpd: ws/xmhub-ws-guard)
#   $s->wsd_port                       # websocketd's (behind the front)
#   $s->restart(env => {...})          # lighttpd and daemons again, with
#                                      # these settings changed
#   $s->down; $s->up                   # lighttpd and daemons stopped, then
#                                      # started (an outage of the front)
#   $s->psql($sql)                     # ($status, $stdout, $stderr)
#   $s->stop_db; $s->start_db;         # PostgreSQL only
#   $s->stop_daemon('transcode')       # one daemon of the stack
#   Xmhub::Stack->start(ports => { ws_port => 8082 })
#                                      # a port chosen (port, face_port,
#                                      # ws_port, wsd_port), not a free one
#   $s->status                         # ($exit, $output) of `stack status`
#   $s->running('websocketd')          # the pid of lighttpd, a daemon or
#                                      # 'supervisor' when it runs, else undef
#   Xmhub::Stack::descendants($pid)    # the processes under $pid
#   Xmhub::Stack::alive($pid)          # runs (a zombie does not)
#   my $s = Xmhub::Stack->start(addr => '127.0.0.2',
#           database_url => $url);     # lighttpd on that loopback address
#                                      # (XMHUB_LISTEN_ADDR), PostgreSQL
#                                      # of $url: no cluster of its own
#
#   Xmhub::Stack->start(own_db => 1)   # a PostgreSQL cluster of its own,
#                                      # for a test that stops it
#
# Under t/with-testdb (make check), a stack's database is a copy of the
# run's migrated template in the run's one cluster (Xmhub::Pg->shared),
# made at start and dropped at stop; a test that stops or restarts
# PostgreSQL (stop_db, start_db) asks for own_db, and a stack started
# outside t/with-testdb has a cluster of its own too.  A test that
# passes database_url (a cluster the test made, e.g.
# t/e2e/multi-host.t) gets that.  An XMHUB_DATABASE_URL of the caller is
# ignored, so that tests never touch a real database.
#
# With XMHUB_TEST_POOLED=1 (t/e2e/pooled-*.t, Xmhub::PgBouncer->run_test)
# every stack reaches its database through PgBouncer in transaction mode:
# the run's cluster through one PgBouncer of the test process, a cluster
# of the stack's own through the one httpd-conf/stack starts
# (XMHUB_PGBOUNCER).

use strict;
use warnings;
use Cwd qw(realpath);
use File::Path qw(remove_tree);
use File::Temp qw(tempdir);
use IO::Socket::INET;
use Xmhub::Pg;
use Xmhub::PgBouncer;
use Xmhub::Test qw(run);

my %live; # stacks to stop at exit, by var directory
# What httpd-conf/stack says when a port it was given is taken.
my $PORT_TAKEN = join '|', map { quotemeta } 'exited without listening',
    'another process holds that port', 'is in use by another process';
my $sanitizer_failed; # a stopped stack's programs reported an error

# A TCP port on 127.0.0.1 that nothing listens on now (the stacks of one
# test take distinct ports, whatever their addresses).
# Never the same one twice in a process: the kernel may hand a port that
# was closed out again, and a stack's ports must differ.
my %handed_out;
sub free_port {
	for (1 .. 100) {
		my $sock = IO::Socket::INET->new(LocalAddr => '127.0.0.1',
			LocalPort => 0, Proto => 'tcp', Listen => 1)
		    or die "no free port: $!\n";
		my $port = $sock->sockport;
		close $sock;
		return $port unless $handed_out{$port}++;
	}
	die "no free port: the kernel keeps handing out used ones\n";
}

sub script { return "$ENV{XMHUB_SRCDIR}/httpd-conf/stack" }

# stack(@args): runs httpd-conf/stack with the stack's environment; dies
# with its output when it fails.
sub stack {
	my ($self, @args) = @_;
	local $ENV{XMHUB_SQL_DIR} = "$ENV{XMHUB_SRCDIR}/sql";
	local $ENV{XMHUB_LISTEN_ADDR} = $self->{addr};
	delete local $ENV{XMHUB_DATABASE_URL};
	$ENV{XMHUB_DATABASE_URL} = $self->{database_url}
	    if defined $self->{database_url};
	delete local $ENV{XMHUB_ENV_FILE};
	my ($st, $out, $err) = run([script(), @args]);
	die "httpd-conf/stack @args: exit $st\n$out$err" if $st != 0;
	return $out;
}

sub start {
	my ($class, %opt) = @_;
	my $build = $ENV{XMHUB_BUILDDIR}
	    or die "XMHUB_BUILDDIR is not set (run via make check)\n";
	$ENV{XMHUB_SRCDIR} or die "XMHUB_SRCDIR is not set\n";
	my $self = bless {
		var => tempdir('xmhub-t-XXXXXX', TMPDIR => 1),
		port => free_port(),
		face_port => free_port(),
		ws_port => free_port(),
		wsd_port => free_port(),
		%{$opt{ports} // {}},
		build => $build,
		pid => $$,
		addr => $opt{addr} // '127.0.0.1',
		database_url => $opt{database_url},
	}, $class;
	$live{$self->{var}} = $self;
	$SIG{$_} //= sub { exit 1 } for qw(INT TERM HUP);
	my $shared = Xmhub::Pg->shared;
	my %env = %{$opt{env} // {}};
	if (!$opt{own_db} && !defined $self->{database_url} && $shared) {
		$self->{shared} = $shared;
		$self->{database_url} = $self->shared_db('xmhub');
		if ($ENV{XMHUB_TEST_POOLED}) {
			$self->{database_url} = Xmhub::PgBouncer->shared->url(
				$self->{dbs}{xmhub});
			$env{XMHUB_DATABASE_POOLED} = 'true';
			$self->{pooled} = 1;
		}
	} elsif ($ENV{XMHUB_TEST_POOLED} && !defined $self->{database_url}) {
		$env{XMHUB_PGBOUNCER} = 'true';
		$self->{pooled} = 1;
	}
	$self->set_env(\%env) if %env;
	# A port free when chosen can be bound by another test's stack
	# before this one binds it (tests run side by side and choose from
	# the same range): then once more, on ports chosen again.
	if (!eval { $self->up; 1 }) {
		my $err = $@;
		die $err if $opt{ports} || $err !~ /$PORT_TAKEN/;
		$self->stack('down', $self->{var}, 'keep-db');
		$self->{$_} = free_port() for qw(port face_port ws_port wsd_port);
		$self->up;
	}
	return $self;
}

sub up {
	my ($self) = @_;
	$self->stack('up', @$self{qw(var build port face_port ws_port wsd_port)});
}

# set_env({NAME => VALUE}): writes the settings into the env file (the
# stack keeps lines it does not write itself); undef removes one.
sub set_env {
	my ($self, $env) = @_;
	my @keep;
	if (open my $in, '<', $self->env_file) {
		@keep = grep { !/^(\w+)=/ || !exists $env->{$1} } <$in>;
	}
	open my $out, '>', $self->env_file or die $self->env_file . ": $!\n";
	print $out @keep;
	for my $k (sort keys %$env) {
		print $out "$k=$env->{$k}\n" if defined $env->{$k};
	}
	close $out or die $self->env_file . ": $!\n";
	chmod 0600, $self->env_file;
	if ($> == 0) {
		my ($uid, $gid) = (getpwnam('xmhub'))[2, 3];
		chown $uid, $gid, $self->env_file if defined $uid;
	}
}

# restart(env => {...}): stops lighttpd and the daemons (PostgreSQL keeps
# running), changes the settings, starts them again.
sub restart {
	my ($self, %opt) = @_;
	$self->stack('down', $self->{var}, 'keep-db');
	$self->set_env($opt{env}) if $opt{env};
	$self->up;
}

# down: stops lighttpd and the daemons (PostgreSQL keeps running); up
# starts them again.
sub down { $_[0]->stack('down', $_[0]{var}, 'keep-db') }

sub var { return $_[0]{var} }
sub port { return $_[0]{port} }
sub face_port { return $_[0]{face_port} }
sub ws_port { return $_[0]{ws_port} }
sub wsd_port { return $_[0]{wsd_port} }
sub addr { return $_[0]{addr} }
sub face_url { return "http://$_[0]{addr}:$_[0]{face_port}" . ($_[1] // '/') }
sub env_file { return "$_[0]{var}/xmhub.env" }

# url($path): the address of $path on this stack's lighttpd.
sub url {
	my ($self, $path) = @_;
	return "http://$self->{addr}:$self->{port}" . ($path // '/');
}

# The value of a setting in the stack's env file.
sub setting {
	my ($self, $name) = @_;
	open my $f, '<', $self->env_file or die $self->env_file . ": $!\n";
	my $v;
	while (my $line = <$f>) {
		$v = $1 if $line =~ /^\Q$name\E=(.*)$/;
	}
	return $v;
}

# shared_db($name): a copy of the run's template database for this
# stack, named after it (the run's test files share the cluster); its
# URL.
sub shared_db {
	my ($self, $name) = @_;
	return $self->{shared}->create($self->shared_name($name));
}

# shared_name($name): the name in the run's cluster of the stack's
# database $name, remembered for database_url and stop.
sub shared_name {
	my ($self, $name) = @_;
	my $real = lc("${name}_" . ($self->{var} =~ s{.*/}{}r)) =~ s/-/_/gr;
	return $self->{dbs}{$name} = $real;
}

# database_url($db): the URL of database $db (default: the stack's own)
# in the stack's cluster; in the run's cluster, $db is a name the stack
# made (create_database) or 'postgres'.
sub database_url {
	my ($self, $db) = @_;
	$db = $self->{dbs}{$db} // $db if defined $db;
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
	my $real = $self->{shared} ? $self->shared_name($name) : $name;
	my ($st, $out, $err) = $self->psql(qq{CREATE DATABASE "$real"},
		'postgres');
	die "CREATE DATABASE $real: $err" if $st != 0;
	return $self->database_url($name);
}

# The run's cluster is every test file's: only a cluster of the stack's
# own is stopped.
sub own_cluster {
	die "a test that stops PostgreSQL starts its stack with own_db => 1\n"
	    if $_[0]{shared};
}
sub stop_db { $_[0]->own_cluster; $_[0]->stack('db-stop', $_[0]{var}) }
sub start_db { $_[0]->own_cluster; $_[0]->stack('db-start', $_[0]{var}) }

# stop_daemon($name): stops one daemon of httpd-conf/programs (its
# process group, as `stack down` does, after the same check of its pid
# file), e.g. the transcode runner when a test wants uploads to stay as
# they are; restart starts it again.  True once it is stopped; dies when
# the stack script fails.
sub stop_daemon {
	my ($self, $name) = @_;
	$self->stack('daemon-stop', $self->{var}, $name);
	return !-e "$self->{var}/run/$name.pid";
}

# status: ($exit, $output) of `stack status` (0: all runs, 1: a part
# does, 3: nothing does).
sub status {
	my ($self) = @_;
	my ($st, $out) = run([script(), 'status', $self->{var}]);
	return ($st, $out);
}

# running($name): the pid of lighttpd, of daemon $name or of the
# supervisor while `stack status` says it runs; undef otherwise.
sub running {
	my ($self, $name) = @_;
	my (undef, $out) = $self->status;
	return $out =~ /^stack: \Q$name\E: running, pid (\d+)/m ? $1 : undef;
}

# alive($pid): $pid runs (a zombie, which no one may reap, does not).
sub alive {
	my ($pid) = @_;
	open my $f, '<', "/proc/$pid/stat" or return 0;
	my $stat = <$f> // '';
	return $stat =~ /\) ([A-Za-z]) / && $1 ne 'Z';
}

# descendants($pid): the pids of every process under $pid (children,
# their children...), zombies left out.
sub descendants {
	my ($top) = @_;
	my %kids;
	for my $stat (glob '/proc/[0-9]*/stat') {
		open my $f, '<', $stat or next;
		my $line = <$f> // '';
		push @{$kids{$3}}, $1 if $line =~ /^(\d+) \(.*\) (\S) (\d+) / && $2 ne 'Z';
	}
	my (@all, @todo);
	@todo = ($top);
	while (defined(my $p = shift @todo)) {
		for (@{$kids{$p} // []}) {
			push @all, $_;
			push @todo, $_;
		}
	}
	return @all;
}

# Stops everything and removes the var directory (kept if stopping
# failed, to look at its logs).  A sanitizer report in the programs' log
# is printed, keeps the directory and fails the test file (see END).
sub stop {
	my ($self) = @_;
	return if $$ != $self->{pid} || !delete $live{$self->{var}};
	if (!eval { $self->stack('down', $self->{var}); 1 }) {
		warn "$@(kept $self->{var})\n";
		return;
	}
	for my $db (values %{$self->{dbs} // {}}) {
		warn $@ unless eval { $self->{shared}->drop($db); 1 };
	}
	if ($self->sanitizer_reports) {
		$sanitizer_failed = 1;
	} else {
		remove_tree($self->{var});
	}
}

# pooled: the running stacks that reach their database through PgBouncer
# (XMHUB_TEST_POOLED).
sub pooled { return grep { $_->{pooled} } values %live }

# pooled_xacts: the transactions PgBouncer passed to the stack's
# databases so far (its admin console's SHOW STATS).
sub pooled_xacts {
	my ($self) = @_;
	my ($st, $out, $err) = $self->psql('SHOW STATS', 'pgbouncer');
	die "SHOW STATS: $err" if $st;
	my $n = 0;
	for (split /\n/, $out) {
		my ($db, $xacts) = split /\|/;
		$n += $xacts if $db ne 'pgbouncer';
	}
	return $n;
}

# The processes that have $file open (lighttpd does not wait for its
# FastCGI programs: they write their leak report after it is gone).
sub holders {
	my ($file) = @_;
	my @pids;
	for my $fd (glob '/proc/[0-9]*/fd/*') {
		my $to = readlink $fd;
		push @pids, $fd =~ m{^/proc/(\d+)/} if defined $to && $to eq $file;
	}
	return @pids;
}

# sanitizer_reports: once the programs have exited, prints the sanitizer
# reports of VAR/log/programs.log to STDERR; true when there was one.
sub sanitizer_reports {
	my ($self) = @_;
	my $log = realpath("$self->{var}/log/programs.log") // return 0;
	for (1 .. 300) {
		last unless holders($log);
		select(undef, undef, undef, 0.1);
	}
	open my $f, '<', $log or return 0;
	# From the first report to the end: the programs exit together and
	# their reports interleave.
	my @report;
	while (my $line = <$f>) {
		push @report, $line
		    if @report || $line =~ /ERROR: \w*Sanitizer|runtime error:/;
	}
	return 0 unless @report;
	print STDERR "# $_" for @report;
	print STDERR "# sanitizer reports in $log (kept $self->{var})\n";
	return 1;
}

END {
	my $status = $?;
	$_->stop for values %live;
	# prove counts a test file that exits non-zero as failed.
	$? = $status || ($sanitizer_failed ? 1 : 0);
}

1;
