# SPDX-License-Identifier: MIT
package Xmhub::LB;

# A round-robin load balancer in front of stacks (t/e2e/multi-host.t,
# bench/scale.pl): lighttpd's mod_proxy on 127.0.0.1 and a free port,
# as the stacks' user when root.  A backend that refuses connections is
# left out for a while (lighttpd answers that request 503; the client
# retries).  Stopped at exit.
#
#   my $lb = Xmhub::LB->start($stack_a, $stack_b);
#   $lb->url('/api/health')            # as Xmhub::Stack's, so that
#                                      # Xmhub::Platform can use it

use strict;
use warnings;
use File::Temp qw(tempdir);
use HTTP::Tiny;
use Time::HiRes qw(sleep);
use Xmhub::Pg;
use Xmhub::Stack;

my %live;

sub start {
	my ($class, @stacks) = @_;
	my $self = bless {port => Xmhub::Stack::free_port(), pid => $$,
		dir => tempdir('xmhub-lb-XXXXXX', TMPDIR => 1, CLEANUP => 1)},
	    $class;
	my $dir = $self->{dir};
	my $backends = join ', ', map {
		'("host" => "' . $_->addr . '", "port" => ' . $_->port . ')' }
	    @stacks;
	open my $c, '>', "$dir/lb.conf" or die "$dir/lb.conf: $!\n";
	print $c <<"EOF";
server.modules = ("mod_proxy")
server.bind = "127.0.0.1"
server.port = $self->{port}
server.document-root = "$dir"
server.errorlog = "$dir/error.log"
server.max-request-size = 65536
server.max-connections = 1024
proxy.balance = "round-robin"
proxy.server = ("" => ($backends))
EOF
	close $c;
	chmod 0755, $dir;
	my @svc = Xmhub::Pg::svc(); # the user exists when root
	if (@svc) {
		my ($uid, $gid) = (getpwnam('xmhub'))[2, 3];
		chown $uid, $gid, $dir;
	}
	my ($lighttpd) = grep { -x } map { "$_/lighttpd" }
	    qw(/usr/sbin /usr/bin /sbin);
	$lighttpd or die "lighttpd not found: apt-get install lighttpd\n";
	my $pid = fork() // die "fork: $!\n";
	if ($pid == 0) {
		open STDIN, '<', '/dev/null';
		exec @svc, $lighttpd, '-D', '-f', "$dir/lb.conf";
		die "exec lighttpd: $!";
	}
	$self->{lighttpd} = $pid;
	$live{$dir} = $self;
	my $http = HTTP::Tiny->new(timeout => 5);
	for (1 .. 100) {
		return $self
		    if $http->get($self->url('/api/health'))->{status} == 200;
		sleep 0.1;
	}
	die "the balancer does not answer on port $self->{port}\n";
}

sub port { return $_[0]{port} }
sub dir { return $_[0]{dir} }
sub url { return "http://127.0.0.1:$_[0]{port}" . ($_[1] // '/') }

sub stop {
	my ($self) = @_;
	return if $$ != $self->{pid} || !delete $live{$self->{dir}};
	kill 'TERM', $self->{lighttpd};
	waitpid($self->{lighttpd}, 0);
}

END {
	my $status = $?;
	$_->stop for values %live;
	$? = $status;
}

1;
