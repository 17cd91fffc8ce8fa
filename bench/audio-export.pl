#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/audio-export - WAV export of a 1-hour IMA-ADPCM stream
# (GET .../samples?format=wav, doc/xmbp-audio.md), next to sox decoding the
# same hour from an IMA-ADPCM WAV file to a PCM WAV, in one run on
# loopback (this machine is shared and noisy: the ratio means more than
# the figures).
#
# - The stream: 16 kHz mono, a 1 kHz tone encoded by the device-side
#   encoder (t/e2e/audio-enc), frames of 4096 sample frames, 16 a batch,
#   sent over HTTP: 57.6 M sample frames, 115 MB of WAV.
# - Throughput: MB/s of WAV received by curl, for the fresh session
#   (one inline chunk per batch) and after close and compaction; the
#   baseline is `sox in.wav -e signed -b 16 out.wav` on the same hour.
# - Memory: the resident size (VmRSS) of the metadata FastCGI program,
#   polled every 20 ms during the export of the hour and of one minute:
#   flat means the hour needs no more than the minute.
#
# Runs from a build tree (make bench-audio-export): a throwaway stack
# through t/lib/Xmhub/Platform.pm.  AUDIO_SECONDS (3600) sets the length.
use strict;
use warnings;
use File::Temp qw(tempdir);
use POSIX qw(WNOHANG);
use Time::HiRes qw(time sleep);
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Platform;
use Xmhub::Test qw(run);

my $seconds = $ENV{AUDIO_SECONDS} || 3600;
my $build = $ENV{XMHUB_BUILDDIR};
my ($RATE, $N, $PER) = (16000, 4096, 16);
my $frames = int($seconds * $RATE / $N);

my $p = Xmhub::Platform->start;
my $fac = $p->facility('Bench audio');
my $tok = $p->token($p->user('user', $fac));
my $key = $p->api_key($p->token($p->user('facility_admin', $fac)), 'ingest');
my $dir = tempdir(DIR => $p->stack->var . '/tmp', CLEANUP => 1);

my ($st, $s) = $p->req(POST => '/api/v1/ingest/sessions', key => $key,
	json => {device_uid => 1, streams => [{stream_index => 0, name => 'mic',
		value_type => 'bytes', audio => {codec => 'ima_adpcm',
			sample_rate_hz => $RATE, channels => 1}}]});
die "session: $st\n" if $st != 201;
my ($est, undef, $eerr) = run(["$build/t/e2e/audio-enc", 'adpcm', $RATE, 1,
	$frames, $N, $PER, 1_700_000_000_000_000, 'tone', $dir]);
die "audio-enc: $eerr" if $est != 0;
opendir(my $dh, $dir) or die;
my @batches = sort grep { /^batch-/ } readdir $dh;
my $t0 = time;
for my $b (@batches) {
	open(my $fh, '<:raw', "$dir/$b") or die;
	local $/;
	my $body = <$fh>;
	my ($pst) = $p->req(POST => "/api/v1/ingest/sessions/$s->{id}/data",
		key => $key, body => $body,
		headers => {'Content-Type' => 'application/octet-stream'});
	die "data: $pst\n" if $pst != 200;
	unlink "$dir/$b";
}
my $ingest_s = time - $t0;

# The metadata program's processes.
sub metadata_pids {
	return grep {
		(readlink("/proc/$_/exe") // '') eq "$build/cgi-bin/metadata"
	} map { s{^/proc/}{}r } glob('/proc/[0-9]*');
}

sub rss_mb {
	my $kb = 0;
	for my $pid (@_) {
		open(my $f, '<', "/proc/$pid/status") or next;
		while (<$f>) { $kb += $1 if /^VmRSS:\s+(\d+) kB/ }
	}
	return $kb / 1024;
}

# export(%query): (MB, seconds, max RSS MB of the metadata program).
sub export {
	my (%q) = @_;
	my $qs = join '&', 'format=wav', map { "$_=$q{$_}" } sort keys %q;
	my $out = "$dir/out.txt";
	my $pid = fork() // die "fork: $!";
	if ($pid == 0) {
		open(STDOUT, '>', $out) or die;
		exec('curl', '-sS', '-o', '/dev/null', '-H',
			"Authorization: Bearer $tok", '-w',
			'%{http_code} %{size_download} %{time_total}',
			$p->stack->url("/api/v1/metadata/sessions/$s->{id}/"
			    . "streams/0/samples?$qs")) or die "curl: $!";
	}
	my $max = 0;
	while (waitpid($pid, WNOHANG) == 0) {
		my $r = rss_mb(metadata_pids());
		$max = $r if $r > $max;
		sleep 0.02;
	}
	open(my $fh, '<', $out) or die;
	my ($code, $size, $secs) = split ' ', scalar <$fh>;
	die "export: $code\n" if $code != 200;
	return ($size / 1e6, $secs, $max);
}

my @rows;
my $minute = {from_us => 1_700_000_000_000_000 + 600_000_000,
	to_us => 1_700_000_000_000_000 + 660_000_000};
export(%$minute); # warm: the program started, its caches filled
my @m = export(%$minute);
my @h = export();
push @rows, ['inline chunks (fresh session)', @h];
$p->req(POST => "/api/v1/ingest/sessions/$s->{id}/close", key => $key);
my @compact = ('env', 'XMHUB_ENV_FILE=' . $p->stack->env_file,
	"$build/jobs/xmhub-ingest-compact", '--once');
unshift @compact, 'runuser', '-u', 'xmhub', '--' if $> == 0;
my ($cst, $cout, $cerr) = run(\@compact);
die "compact: $cout$cerr" if $cst != 0;
my @hc = export();
push @rows, ['compacted chunks', @hc];

# The baseline: sox on the same hour as an IMA-ADPCM WAV file.
my $raw = "$dir/original.raw";
my ($xst, undef, $xerr) = run(['sox', '-t', 'raw', '-r', $RATE, '-e',
	'signed', '-b', 16, '-c', 1, $raw, '-e', 'ima-adpcm', "$dir/in.wav"]);
die "sox: $xerr" if $xst != 0;
unlink $raw;
$t0 = time;
($xst, undef, $xerr) = run(['sox', "$dir/in.wav", '-e', 'signed', '-b', 16,
	"$dir/out.wav"]);
die "sox: $xerr" if $xst != 0;
my $sox_s = time - $t0;
my $sox_mb = (-s "$dir/out.wav") / 1e6;
unlink "$dir/out.wav";

printf "%d s of 16 kHz mono IMA-ADPCM in %d batches (ingest %.1f s); "
    . "WAV %.1f MB\n\n", $frames * $N / $RATE, scalar @batches, $ingest_s,
    $h[0];
print "| export | MB/s | vs sox decode | max RSS of metadata, MB |\n";
print "|---|---:|---:|---:|\n";
my $sox_rate = $sox_mb / $sox_s;
printf "| %s | %.1f | %.2fx | %.1f |\n", $_->[0], $_->[1] / $_->[2],
    $_->[1] / $_->[2] / $sox_rate, $_->[3] for @rows;
printf "| sox in.wav out.wav (baseline) | %.1f | 1.00x | |\n", $sox_rate;
printf "\nRSS flat: one minute's export %.1f MB, the hour's %.1f MB "
    . "(inline), %.1f MB (compacted)\n", $m[2], $h[2], $hc[2];
