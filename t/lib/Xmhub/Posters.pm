# SPDX-License-Identifier: MIT
package Xmhub::Posters;

# Concurrent ingest clients for the load and fault tests
# (t/e2e/ingest-load.t, t/e2e/ingest-faults.t): one forked process per
# poster sends its batches over HTTP or over one WebSocket connection,
# resends the same bytes after any failure until they are acknowledged
# (a device that lost an ack), and logs every answer; then the read-back
# check: every acknowledged batch stored exactly once, nothing else
# stored, the counters equal to what is stored, and missed_batches equal
# to the gap accounting replayed in the order the batches were committed
# (stored_chunks.seq, then the samples' order in a chunk).
#
#   my @log = Xmhub::Posters::http($p, $key, [[$sid, $poster, [$seq, ...]], ...]);
#   my @log = Xmhub::Posters::ws($p, $key, $plan, window => 8);
#   my $h = Xmhub::Posters::start_http(...);  # faults meanwhile, then
#   my @log = Xmhub::Posters::finish($h);
#   Xmhub::Posters::check($p, $sid, \@log, $name);  # runs the Test::More tests
#
# A batch is one i32 stream (index 0) of 3 samples at timestamps
# poster * 1e6 + i * 10 + (0, 1, 2): its first timestamp names it.

use strict;
use warnings;
use File::Temp qw(tempfile);
use HTTP::Tiny;
use Test::More;
use Time::HiRes qw(sleep time);
use Xmhub::WS;
use Xmhub::XMBP qw(batch);

# Seconds a poster keeps resending one batch before it gives up.
my $GIVE_UP = 90;

sub ts_of { return $_[0] * 1_000_000 + $_[1] * 10 }

sub bytes_of {
	my ($poster, $i, $seq) = @_;
	my $t = ts_of($poster, $i);
	return batch($seq, undef,
		[0, 'i32', [map { [$t + $_, $poster * 1000 + $i] } 0 .. 2]]);
}

# Runs $body->($k, $log_fh) in a child per poster, $k from 0; returns
# a handle for finish().
sub fork_all {
	my ($n, $body) = @_;
	my (@pids, @files);
	for my $k (0 .. $n - 1) {
		my ($fh, $file) = tempfile(UNLINK => 1);
		push @files, $file;
		my $pid = fork // die "fork: $!";
		if ($pid == 0) {
			$fh->autoflush(1);
			$body->($k, $fh);
			POSIX::_exit(0);
		}
		close $fh;
		push @pids, $pid;
	}
	return {pids => \@pids, files => \@files};
}

# finish($handle): waits for the posters of a start_* call; the log
# lines of all of them, split on blanks.
sub finish {
	my ($h) = @_;
	waitpid($_, 0) for @{$h->{pids}};
	my @log;
	for my $f (@{$h->{files}}) {
		open(my $in, '<', $f) or die "$f: $!";
		push @log, map { chomp; [split / /] } <$in>;
	}
	return @log;
}

# http(...): finish(start_http(...)).
sub http { return finish(start_http(@_)) }

# ws(...): finish(start_ws(...)).
sub ws { return finish(start_ws(@_)) }

# start_http($platform, $key, [[$sid, $poster, [$seq, ...]], ...]): one
# process per poster sending its batches one after the other.  Log
# lines: "try sid poster i seq status retry_after" per answer, "ack sid
# poster i seq accepted missed" per acknowledgement, "gaveup ..." when it
# gave up.
sub start_http {
	my ($p, $key, $plan) = @_;
	my $url = $p->stack->url('');
	return fork_all(scalar @$plan, sub {
		my ($k, $out) = @_;
		my ($sid, $poster, $seqs) = @{$plan->[$k]};
		my $ua = HTTP::Tiny->new(timeout => 30, keep_alive => 1);
		for my $i (0 .. $#$seqs) {
			my $bytes = bytes_of($poster, $i, $seqs->[$i]);
			my $t0 = time;
			for (;;) {
				my $r = $ua->post("$url/api/v1/ingest/sessions/$sid/data",
					{headers => {'X-Api-Key' => $key,
					    'Content-Type' => 'application/octet-stream'},
					 content => $bytes});
				print $out join(' ', 'try', $sid, $poster, $i,
				    $seqs->[$i], $r->{status},
				    $r->{headers}{'retry-after'} // '-'), "\n";
				if ($r->{status} == 200) {
					my ($acc) = $r->{content} =~ /"accepted_samples":(\d+)/;
					my ($mis) = $r->{content} =~ /"missed_batches":(\d+)/;
					print $out "ack $sid $poster $i $seqs->[$i] $acc $mis\n";
					last;
				}
				if (time - $t0 > $GIVE_UP) {
					print $out "gaveup $sid $poster $i $seqs->[$i]\n";
					last;
				}
				sleep 0.05 + rand 0.1;
			}
		}
	});
}

# start_ws($platform, $key, $plan, window => N): one process per poster, one
# WebSocket connection (to the front) with N batches in flight; after
# any end of the connection it connects again and resends every batch
# not acknowledged.  Log lines: "ack sid poster i seq accepted -" and
# "conn sid poster status" per connection attempt.
sub start_ws {
	my ($p, $key, $plan, %o) = @_;
	my $window = $o{window} // 8;
	my $port = $p->stack->ws_port;
	return fork_all(scalar @$plan, sub {
		my ($k, $out) = @_;
		my ($sid, $poster, $seqs) = @{$plan->[$k]};
		my ($next, $t0) = (0, time); # the first batch not acknowledged
		while ($next < @$seqs && time - $t0 < $GIVE_UP) {
			my ($c, $st) = Xmhub::WS->connect($port,
				"/api/v1/ingest/ws?session_id=$sid",
				{'X-Api-Key' => $key});
			print $out "conn $sid $poster $st\n";
			if (!$c) {
				sleep 0.1;
				next;
			}
			my $sent = $next;
			while ($next < @$seqs) {
				while ($sent < @$seqs && $sent - $next < $window) {
					last unless $c->write_raw(Xmhub::WS::frame(2,
					    bytes_of($poster, $sent, $seqs->[$sent])));
					$sent++;
				}
				my ($type, $payload) = $c->read_message(30);
				last if $type ne 'binary' || length $payload != 4;
				print $out "ack $sid $poster $next $seqs->[$next] ",
				    unpack('N', $payload), " -\n";
				$next++;
			}
			$c->close;
		}
		print $out "gaveup $sid $poster $next -\n" if $next < @$seqs;
	});
}

# check($platform, $sid, \@log, $name): the read-back tests of session
# $sid against the log lines of its posters.
sub check {
	my ($p, $sid, $log, $name) = @_;
	my @acks = grep { $_->[0] eq 'ack' && $_->[1] eq $sid } @$log;
	my @gaveup = grep { $_->[0] eq 'gaveup' && $_->[1] eq $sid } @$log;
	is(scalar @gaveup, 0, "$name: every batch acknowledged in the end");
	my %seq_of = map { (ts_of($_->[2], $_->[3]) => $_->[4]) } @acks;
	# A round stores a stream's blocks as one chunk while their
	# timestamps ascend (doc/ingest.md "Storage"): the batches are read
	# back from the chunks' samples, in commit order (chunk seq, then
	# place in the chunk), each named by its first timestamp.
	my (@firsts, $samples);
	for my $hex (split /\n/, $p->sql('SELECT encode(c.data, \'hex\') '
		. 'FROM stored_chunks c JOIN ingest_streams t ON t.id = '
		. "c.stream_id WHERE t.session_id = '$sid' ORDER BY c.seq")) {
		my $c = pack('H*', $hex);
		die "not a plain chunk\n" unless substr($c, 0, 4) eq 'XMCH';
		my $n = unpack('N', substr($c, 8, 4));
		$samples += $n;
		push @firsts, grep { $_ % 10 == 0 }
		    unpack("Q>$n", substr($c, 32, 8 * $n));
	}
	$samples //= 0;
	my %count;
	$count{$_}++ for @firsts;
	my @missing = grep { !$count{$_} } keys %seq_of;
	my @twice = grep { $count{$_} > 1 } keys %count;
	my @unknown = grep { !exists $seq_of{$_} } keys %count;
	is(scalar @missing, 0, "$name: no acknowledged batch missing")
	    or diag "missing: @missing[0 .. ($#missing < 9 ? $#missing : 9)]";
	is(scalar @twice, 0, "$name: no batch stored twice")
	    or diag "twice: @twice[0 .. ($#twice < 9 ? $#twice : 9)]";
	is(scalar @unknown, 0, "$name: nothing stored that was not sent");
	is($samples, 3 * @firsts,
	    "$name: every stored batch whole (" . scalar(@firsts) . ')');
	# The gap accounting of doc/ingest.md, in commit order.
	my ($last, $missed);
	for my $first (@firsts) {
		my $q = $seq_of{$first} // next;
		if (!defined $last) {
			($last, $missed) = ($q, 0);
			next;
		}
		my $d = ($q - ($last + 1)) % 65536;
		($missed, $last) = ($missed + $d, $q) if $d < 32768;
	}
	my ($total, $db_missed) = split /\|/, $p->sql('SELECT total_samples, '
		. "missed_batches FROM ingest_sessions WHERE id = '$sid'");
	is($total, $samples, "$name: total_samples = the samples stored");
	my ($max) = sort { $b <=> $a } map { $_->[5] } @acks;
	is($max, $samples,
	    "$name: the last accepted_samples = the samples stored");
	is($db_missed, $missed // 0,
	    "$name: missed_batches = the gaps replayed in commit order ("
	    . ($missed // 0) . ')');
	return scalar @firsts;
}

1;
