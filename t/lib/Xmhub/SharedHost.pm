# SPDX-License-Identifier: MIT
package Xmhub::SharedHost;

# An Apache configured as a classic shared host would be, serving a web
# root made by `xmhub httpd-conf htaccess` (doc/shared-hosting.md):
# AllowOverride All there, nothing else served, mod_fcgid or plain CGI,
# mod_deflate (the console's compression), suexec when asked.  For
# t/e2e/shared-hosting.t and bench/shared-hosting.pl.
#
#   my $h = Xmhub::SharedHost->start(mode => 'fcgid', public => $root,
#       dir => $scratch, user => 'xmhub-web', group => 'www-data',
#       suexec => $account, env => {HOME => $home});
#   $h->url('/api/health')       # http://127.0.0.1:PORT/api/health
#   $h->platform                 # an Xmhub::Platform whose req() goes here
#   $h->error_log                # its text
#   $h->stop                     # (also at exit)
#
# mode: fcgid (mod_fcgid, which a host raised FcgidMaxRequestLen of to
# take uploads) or cgi (mod_cgid and no mod_fcgid: every program serves
# one request per process).  user, group: the server's own when root.
# suexec: SuexecUserGroup ACCOUNT (the programs run as the account;
# root only).  env: variables the server gives the programs (SetEnv,
# FcgidInitialEnv), which a server without suexec can pass.

use strict;
use warnings;
use HTTP::Tiny;
use IO::Socket::INET;
use Time::HiRes qw(sleep);
use Xmhub::Platform;
use Xmhub::Stack;
use Xmhub::Test qw(run);

my $apache2 = '/usr/sbin/apache2';
my $modules = '/usr/lib/apache2/modules';
my %live;

sub spew { my $f; open($f, '>:raw', $_[0]) && print($f $_[1]) && close($f)
	    or die "$_[0]: $!\n" }
sub slurp { local $/; open my $f, '<:raw', $_[0] or return ''; <$f> }

# The server's configuration.
sub conf {
	my ($self, %o) = @_;
	my ($m, $d) = ($o{mode}, $o{dir});
	my @mods = (qw(mpm_event authz_core authn_core alias mime rewrite
	    headers env dir filter deflate), $m eq 'fcgid' ? 'fcgid' : 'cgid',
	    $o{suexec} ? 'suexec' : ());
	my %env = %{$o{env} // {}};
	my $host = $m eq 'fcgid'
	    ? "FcgidIPCDir $d/run/fcgid-$m\nFcgidProcessTableFile "
		. "$d/run/fcgid_shm-$m\nFcgidMaxRequestLen 2148532224\n"
		. "FcgidMaxRequestInMem 65536\n"
		. join('', map { "FcgidInitialEnv $_ $env{$_}\n" } sort keys %env)
	    : "ScriptSock $d/run/cgid-$m.sock\n"
		. join('', map { "SetEnv $_ $env{$_}\n" } sort keys %env);
	my $who = $> == 0 && $o{user}
	    ? "User $o{user}\nGroup " . ($o{group} // $o{user}) . "\n" : '';
	my $suexec = $o{suexec} ? "SuexecUserGroup $o{suexec} $o{suexec}\n" : '';
	return join('', map { "LoadModule ${_}_module $modules/mod_$_.so\n" }
	    @mods) . <<"EOF";
ServerRoot $d
ServerName 127.0.0.1
Listen 127.0.0.1:$self->{port}
PidFile $d/run/$m.pid
DefaultRuntimeDir $d/run
Mutex file:$d/run default
ErrorLog $d/log/$m-error.log
LogLevel warn
TypesConfig /etc/mime.types
$who$host
<Directory />
	AllowOverride None
	Require all denied
</Directory>
<Files ".ht*">
	Require all denied
</Files>
DocumentRoot $o{public}
$suexec<Directory $o{public}>
	AllowOverride All
	Require all granted
</Directory>
EOF
}

sub start {
	my ($class, %o) = @_;
	-x $apache2 or die "apache2 not found: apt-get install apache2 "
	    . "libapache2-mod-fcgid apache2-suexec-custom\n";
	my $self = bless {port => Xmhub::Stack::free_port(), mode => $o{mode},
		dir => $o{dir}, owner => $$}, $class;
	for ($o{dir}, "$o{dir}/run", "$o{dir}/log") {
		mkdir $_, 0755 or $!{EEXIST} or die "$_: $!\n";
	}
	chown((getpwnam($o{user}))[2], -1, "$o{dir}/run")
	    if $> == 0 && $o{user};
	my $conf = "$o{dir}/$o{mode}.conf";
	spew($conf, $self->conf(%o));
	my ($st, $out, $err) = run([$apache2, '-f', $conf, '-k', 'start']);
	die "apache2 ($o{mode}): $out$err" if $st;
	$live{$self} = $self;
	for (1 .. 100) {
		last if ($self->{pid} = slurp("$o{dir}/run/$o{mode}.pid"))
		    && IO::Socket::INET->new(PeerAddr => "127.0.0.1:$self->{port}");
		sleep 0.1;
	}
	chomp $self->{pid} if $self->{pid};
	die "apache2 ($o{mode}) does not listen:\n" . $self->error_log
	    unless $self->{pid};
	return $self;
}

sub port { return $_[0]{port} }
sub url { return "http://127.0.0.1:$_[0]{port}" . ($_[1] // '/') }
sub error_log { return slurp("$_[0]{dir}/log/$_[0]{mode}-error.log") }

# An Xmhub::Platform whose requests (req(), Xmhub::Ingest) come here.
sub platform {
	my ($self) = @_;
	return bless {stack => $self,
		http => HTTP::Tiny->new(timeout => 60, keep_alive => 0),
		n => 0}, 'Xmhub::Platform';
}

sub stop {
	my ($self) = @_;
	return if $$ != $self->{owner} || !delete $live{$self};
	my $pid = $self->{pid};
	return unless $pid && kill 0, $pid;
	kill 'TERM', $pid;
	for (1 .. 100) { last unless kill 0, $pid; sleep 0.1 }
}

END {
	my $status = $?;
	$_->stop for values %live;
	$? = $status;
}

1;
