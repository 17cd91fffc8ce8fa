#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# Runs each libFuzzer target for a while from the seed corpus.  Only run
# when configured with --enable-fuzz, which builds the targets, so a
# missing target is a failure, not a reason to skip.
#
# Environment (set by make): XMHUB_FUZZ_DIR holds xmbp-fuzz and
# xmch-fuzz, XMHUB_SRCDIR the source tree (for fuzz/corpus/NAME), and
# XMHUB_FUZZ_SECONDS the time per target (default 30), XMHUB_FUZZ_JOBS
# how many run at once (default 2).
use strict;
use warnings;
use Test::More;
use File::Temp qw(tempdir);
use File::Copy qw(copy);

# XMHUB_FUZZ_TARGETS names them (make passes its FUZZ_TARGETS).
my @targets = split ' ', ($ENV{XMHUB_FUZZ_TARGETS} // 'xmbp xmch');
my $dir = $ENV{XMHUB_FUZZ_DIR};
my $src = $ENV{XMHUB_SRCDIR};
my $seconds = $ENV{XMHUB_FUZZ_SECONDS} || 30;
my $jobs = $ENV{XMHUB_FUZZ_JOBS} || 2;

# A target that ran a few hundred inputs has not been fuzzed at all.
my $min_runs = 1000;

ok(defined $dir && -d $dir, 'XMHUB_FUZZ_DIR names a directory')
	or diag('run via make fuzz or make check (--enable-fuzz)');
ok(defined $src && -d "$src/fuzz/corpus", 'XMHUB_SRCDIR has fuzz/corpus');
$dir //= '.';
$src //= '.';

# The names of the files in a directory, sorted; () if it cannot be read.
sub files {
	my ($d) = @_;
	opendir(my $dh, $d) or return ();
	my @f = sort grep { !/^\.\.?$/ } readdir $dh;
	closedir $dh;
	return @f;
}

# start_logged($log, @argv): starts argv with standard output and error
# into $log; its pid.
sub start_logged {
	my ($log, @argv) = @_;
	my $pid = fork() // die "fork: $!";
	if ($pid == 0) {
		open STDIN, '<', '/dev/null' or die;
		open STDOUT, '>', $log or die "$log: $!";
		open STDERR, '>&', \*STDOUT or die;
		exec { $argv[0] } @argv or die "exec $argv[0]: $!";
	}
	return $pid;
}

# Keeps what a failed run left where make clean (fuzz/work) finds it;
# the temporary directories go away when the test ends.
sub keep {
	my ($name, $log, @found) = @_;
	my $keep = "$dir/work/$name";
	mkdir "$dir/work";
	mkdir $keep;
	copy($log, "$keep/log");
	copy($_, $keep) for @found;
	diag("$name: log and artifacts kept in $keep");
}

# Each target in a directory of its own; $jobs of them at a time, the
# time of each its own (a fixed budget: targets x seconds / jobs of
# wall time).
my %run;
for my $name (@targets) {
	my $tmp = tempdir("fuzz-$name-XXXXXX", TMPDIR => 1, CLEANUP => 1);
	$run{$name} = {bin => "$dir/$name-fuzz",
		seeds => "$src/fuzz/corpus/$name", corpus => "$tmp/corpus",
		art => "$tmp/artifacts", log => "$tmp/log"};
	$run{$name}{seed_files} = [files($run{$name}{seeds})];
}
my %running; # pid => name
# UBSan only prints by default; make its findings crashes.
local $ENV{UBSAN_OPTIONS} = join(':', grep { defined } $ENV{UBSAN_OPTIONS},
	'halt_on_error=1', 'print_stacktrace=1');
for my $name (@targets, (undef) x $jobs) {
	if (keys %running >= $jobs || !defined $name) {
		my $pid = wait;
		last if $pid < 0;
		$run{delete $running{$pid}}{status} = $?;
	}
	next unless defined $name;
	my $r = $run{$name};
	next unless -x $r->{bin} && @{$r->{seed_files}};
	mkdir $r->{corpus} or die "$r->{corpus}: $!";
	mkdir $r->{art} or die "$r->{art}: $!";
	# New inputs go to the first directory: the seeds stay as they are.
	$running{start_logged($r->{log}, $r->{bin},
		"-max_total_time=$seconds", '-print_final_stats=1',
		"-artifact_prefix=$r->{art}/", $r->{corpus}, $r->{seeds})} = $name;
}

for my $name (@targets) {
	my $r = $run{$name};
	subtest $name => sub {
		# Failing here, not skipping: the build was asked for it.
		ok(-x $r->{bin}, "$name-fuzz is built") or return;
		ok(@{$r->{seed_files}} > 0, "seed corpus $r->{seeds} is not empty")
		    or return;

		open(my $fh, '<', $r->{log}) or die "$r->{log}: $!";
		my $out = do { local $/; <$fh> };
		close $fh;
		my ($runs) = $out =~ /^Done (\d+) runs/m;
		my @found = grep { /^(crash|leak|timeout|oom)-/ } files($r->{art});

		my @ok;
		push @ok, is($r->{status}, 0, "$name-fuzz exits 0");
		push @ok, ok(defined $runs && $runs > $min_runs,
			"$name-fuzz ran more than $min_runs inputs");
		diag('runs: ' . ($runs // 'no "Done N runs" line')) if !$ok[-1];
		push @ok, is_deeply(\@found, [], "$name-fuzz wrote no artifacts");
		push @ok, unlike($out, qr/runtime error:/,
			"$name-fuzz: no UBSan report");
		is_deeply([files($r->{seeds})], $r->{seed_files},
			"$name-fuzz left the seed corpus alone");
		note("$name: $runs runs in $seconds s") if defined $runs;
		if (grep { !$_ } @ok) {
			my @tail = (split /\n/, $out)[-30 .. -1];
			diag(join("\n", grep { defined } @tail));
			keep($name, $r->{log}, map { "$r->{art}/$_" } @found);
		}
	};
}

done_testing();
