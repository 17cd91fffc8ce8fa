#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# bench/upload-body - where an upload body's CPU goes in lighttpd, and
# what its settings change (issue 27, doc/benchmarks.md "The streamed
# upload body").  This tree's stack is restarted in turns (the order
# rotated each round) under configurations made from a copy of
# httpd-conf/ for the measure only:
#   - default: as served (the uploads line's spool): every body after
#     the uploads' authorizer, then spooled whole;
#   - spooled: without spool nor the upload size line's stream (the body
#     received whole before the program runs, no authorizer: the
#     baseline of the measure, what a body cost before issue 27);
#   - gated: spooled, after the authorizer (the gate httpd-conf/gen puts
#     on chunked POSTs put on every request of the route, as before the
#     spool option): should equal default;
#   - streamed: without spool, a body with a Content-Length streamed to
#     the program (server.stream-request-body = 2), its key checked by
#     the program first (before the spool option);
# for each, BENCH_UPLOADS (200) uploads of 1 MiB with a Content-Length
# by one curl keeping its connection, and the CPU µs per upload of
# lighttpd itself, of its FastCGI programs, of PostgreSQL and of curl
# (t/lib/Xmhub/Cpu.pm), BENCH_ROUNDS (3) rounds; the ratios to spooled
# of the same round.  Then, once per configuration, lighttpd's system
# calls per upload (strace -c on its process, 50 uploads): the calls
# themselves, not their time, which strace changes.  The transcode and
# alarm runners are stopped (the uploads' jobs stay queued).
# Not a test: it prints figures, it asserts nothing.
use strict;
use warnings;
use File::Temp qw(tempdir);
use POSIX ();
use Xmhub::Cpu qw(own_cpu tree_cpu);
use Xmhub::Platform;
use Xmhub::Test qw(run);
use Xmhub::Variant qw(variant);

my $rounds = $ENV{BENCH_ROUNDS} || 3;
my $uploads = $ENV{BENCH_UPLOADS} || 200;
my $traced = 50;
my $strace = (grep { -x } map { "$_/strace" } split /:/, $ENV{PATH})[0]
    // die "strace not found (apt-get install strace)\n";
my $dir = tempdir(CLEANUP => 1);
chmod 0755, $dir;
run(['dd', 'if=/dev/urandom', "of=$dir/body.bin", 'bs=1M', 'count=1',
    'status=none']);

my $unspool = sub { $_[0] =~ s/^(fastcgi uploads .*) spool$/$1/m };
my $spool = sub { $unspool->(@_) && $_[0] =~ s/^(size upload \d+) stream$/$1/m };
my $gate_from = q|return "\$REQUEST_HEADER[\"Content-Length\"] == \"\" {\n"|;
my $gate_to = q|return "\$HTTP[\"request-method\"] =~ \"\" {\n"|;
my @configs = qw(spooled default gated streamed);
my %src = (
	default => $ENV{XMHUB_SRCDIR},
	spooled => variant("$dir/spooled", programs => $spool),
	gated => variant("$dir/gated", programs => $spool,
	    gen => sub { $_[0] =~ s/\Q$gate_from\E/$gate_to/ }),
	streamed => variant("$dir/streamed", programs => $unspool),
);

my $p = Xmhub::Platform->start(own_db => 1);
my $s = $p->stack;
my $key = $p->api_key($p->token($p->user('facility_admin',
    $p->facility('bench-upload-body')), 3600), 'upload');
my ($web, $pg);

# The stack restarted under $src's configuration, its runners stopped,
# every uploads process started.
sub start {
	my ($src) = @_;
	local $ENV{XMHUB_SRCDIR} = $src;
	$s->restart;
	for my $d ('transcode', 'alarm') {
		$s->stop_daemon($d) or die "$d runs\n";
	}
	$web = $s->running('lighttpd') // die "lighttpd is not running\n";
	$pg = $s->running('PostgreSQL') // die "PostgreSQL is not running\n";
	upload_run(8);
}

# $n uploads of body.bin, one after another by one curl (its connection
# kept); dies unless each is stored.
sub upload_run {
	my ($n) = @_;
	my @one = ('-sS', '-o', '/dev/null', '-w', '%{http_code}\n', '-H',
		"X-Api-Key: $key", '-F', "file=\@$dir/body.bin;filename=b.wav",
		$s->url('/api/v1/uploads'));
	my ($st, $out, $err) = run(['curl', @one,
		map { ('--next', @one) } 2 .. $n]);
	my $ok = () = $out =~ /^20[01]$/mg;
	die "uploads: $ok of $n stored\n$out$err" if $ok != $n;
}

# CPU seconds so far: lighttpd's own, its programs', PostgreSQL's, this
# process's reaped children's (curl).
sub cpu_now {
	my $own = own_cpu($web);
	return ($own, tree_cpu($web) - $own, tree_cpu($pg),
		(times)[2] + (times)[3]);
}

# [lighttpd, programs, postgres, curl, total] CPU µs per upload.
sub measure {
	my @c0 = cpu_now();
	upload_run($uploads);
	my @c1 = cpu_now();
	my @us = map { ($c1[$_] - $c0[$_]) * 1e6 / $uploads } 0 .. 3;
	my $total = 0;
	$total += $_ for @us;
	return [@us, $total];
}

# lighttpd's system calls per upload: {name => calls}.
sub syscalls {
	my $out = "$dir/strace.txt";
	my $pid = fork // die "fork: $!\n";
	if ($pid == 0) {
		open STDERR, '>', '/dev/null';
		exec $strace, '-c', '-o', $out, '-p', $web or POSIX::_exit(127);
	}
	sleep 1; # attached
	upload_run($traced);
	kill 'INT', $pid;
	waitpid $pid, 0;
	open my $in, '<', $out or die "$out: $!\n";
	my %calls;
	while (my $line = <$in>) {
		my @f = split ' ', $line;
		next unless @f >= 5 && $f[3] =~ /^\d+$/ && $f[-1] =~ /^[a-z]/;
		$calls{$f[-1]} = $f[3] / $traced if $f[-1] ne 'total';
	}
	return \%calls;
}

my (%got, %calls);
my @order = @configs;
for my $round (1 .. $rounds) {
	for my $c (@order) {
		start($src{$c});
		my $r = measure();
		$got{$c}[$round - 1] = $r;
		printf "round %d, %-9s: lighttpd %5.0f, programs %5.0f, postgres "
		    . "%5.0f, curl %5.0f, total %5.0f µs\n", $round, $c, @$r;
		$calls{$c} //= syscalls();
	}
	push @order, shift @order;
}
$s->stop;

sub median { my @v = sort { $a <=> $b } @_; return $v[int(@v / 2)] }

printf "\nbench/upload-body: %d rounds of %d uploads of 1 MiB; CPU µs per "
    . "upload, medians; ratios to spooled, median [range over the rounds]\n",
    $rounds, $uploads;
printf "%-10s %9s %9s %9s %9s %9s  %-22s %s\n", 'config', 'lighttpd',
    'programs', 'postgres', 'curl', 'total', 'lighttpd / spooled',
    'total / spooled';
for my $c (@configs) {
	my @m = map { my $i = $_; median(map { $_->[$i] } @{$got{$c}}) } 0 .. 4;
	my @ratio = map {
		my $i = $_;
		[sort { $a <=> $b } map {
			$got{$c}[$_][$i] / $got{spooled}[$_][$i]
		} 0 .. $rounds - 1]
	} 0, 4;
	printf "%-10s %9.0f %9.0f %9.0f %9.0f %9.0f  %-22s %s\n", $c, @m,
	    map { sprintf '%.3f [%.3f-%.3f]', median(@$_), $_->[0], $_->[-1] }
	    @ratio;
}
my @names = qw(read ioctl pwritev openat unlink close sendfile writev);
print "\nlighttpd's system calls per upload (strace -c, $traced uploads):\n";
printf "%-10s" . (' %8s' x (@names + 1)) . "\n", 'config', @names, 'all';
for my $c (@configs) {
	my $all = 0;
	$all += $_ for values %{$calls{$c}};
	printf "%-10s" . (' %8.1f' x (@names + 1)) . "\n", $c,
	    (map { $calls{$c}{$_} // 0 } @names), $all;
}
