#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# /api/health/ready checks the object store (lib/store/storage's store_check) on
# the real stack: the filesystem store replaced by a file (a failure that
# holds for root too, unlike a chmod), then the S3 store (s3rver) stopped
# and started again; the database stays up and is reported ok.
use strict;
use warnings;
use Test::More;
use HTTP::Tiny;
use JSON::PP;
use File::Path qw(remove_tree);
use lib "$ENV{XMHUB_SRCDIR}/t/lib";
use Xmhub::Platform;
use Xmhub::S3;

my $p = Xmhub::Platform->start;
my $s = $p->stack;
my $http = HTTP::Tiny->new(timeout => 30);

# ready(): (status, decoded body)
sub ready {
	my $r = $http->get($s->url('/api/health/ready'));
	return ($r->{status}, eval { decode_json($r->{content}) } // {});
}

# The 503 of a failing store: named, database fine, no internals leaked.
sub store_down {
	my ($what) = @_;
	my ($st, $b) = ready();
	is($st, 503, "$what: ready 503");
	is($b->{storage}, 'unavailable', "$what: storage named unavailable");
	is($b->{database}, 'ok', "$what: database still ok");
	is($b->{status}, 'not_ready', "$what: status not_ready");
	like($b->{detail} // '', qr/object store/, "$what: detail says why");
	unlike($b->{detail} // '', qr{/|127\.0\.0\.1|S3RVER},
		"$what: no path, address or key in the answer");
}

my ($st, $b) = ready();
is($st, 200, 'filesystem store: ready 200');
is($b->{storage}, 'ok', 'filesystem store: storage ok');

# A file where the store's directory was: no write, as root or not.
my $objects = $s->setting('XMHUB_STORAGE_DIR');
sub break_store {
	rename($objects, "$objects.away") or die "$objects: $!";
	open my $f, '>', $objects or die "$objects: $!";
	close $f;
}
sub mend_store {
	unlink $objects;
	rename("$objects.away", $objects) or die "$objects: $!";
}

# Anyone may ask: a success stands for XMHUB_READY_INTERVAL (10 s by
# default), so asking again does not write to the store; a store broken
# just after a success is not probed within the interval.
ready() for 1 .. 20;
break_store();
($st) = ready();
is($st, 200, 'default interval: no store probe right after a success');
mend_store();

# Every request probes from here on.
$s->restart(env => { XMHUB_READY_INTERVAL => 0 });
($st) = ready();
is($st, 200, 'interval 0: ready 200');
break_store();
store_down('store directory replaced by a file');
mend_store();
($st) = ready();
is($st, 200, 'ready again with the directory back, same processes');
opendir my $d, "$objects/.health" or die "$objects/.health: $!";
my @left = grep { !/^\.\.?$/ } readdir $d;
is_deeply(\@left, [], 'the readiness probes leave no object behind');

# A filesystem store with less than XMHUB_READY_MIN_FREE_MB free is
# full: not ready, so that a balancer sends uploads elsewhere before
# they fail.  The threshold is set around what the store's filesystem
# really has free (statvfs): 1 GiB above it, then half of it.
sub free_mb {
	my ($line) = (`df -Pm '$objects'`)[1] // die "df $objects\n";
	return (split ' ', $line)[3];
}
$s->restart(env => {XMHUB_READY_INTERVAL => 0,
	XMHUB_READY_MIN_FREE_MB => free_mb() + 1024});
($st, $b) = ready();
is($st, 503, 'store under XMHUB_READY_MIN_FREE_MB free: ready 503');
is_deeply([@$b{qw(status storage database)}], ['not_ready', 'full', 'ok'],
	'... storage named full, the database ok');
like($b->{detail} // '', qr/object store is nearly full/, '... saying so');
$s->restart(env => {XMHUB_READY_MIN_FREE_MB => int(free_mb() / 2) || 1});
($st, $b) = ready();
is($st, 200, 'store above XMHUB_READY_MIN_FREE_MB free: ready 200')
    or diag explain $b;
$s->restart(env => {XMHUB_READY_MIN_FREE_MB => undef});

# The same stack on S3.
my $s3 = Xmhub::S3->start;
$s->restart(env => { $s3->env });
($st, $b) = ready();
is($st, 200, 'S3 store: ready 200') or diag explain $b;
is($b->{storage}, 'ok', 'S3 store: storage ok');
$s3->stop;
store_down('s3rver stopped');
$s3->start_again;
($st) = ready();
is($st, 200, 'ready again with s3rver back, same processes');

# Bad S3 settings: the programs still answer, readiness says storage.
$s->restart(env => { XMHUB_S3_BUCKET => 'Not A Bucket' });
store_down('bad S3 bucket setting');
my $live = $http->get($s->url('/api/health'));
is($live->{status}, 200, 'liveness does not need the store');
# The programs keep running: what needs the store answers 503, the rest
# works.
my $t = $p->token($p->user('facility_admin', $p->facility('h')));
my ($mst, $mb) = $p->req(GET => '/api/v1/metadata/sessions', token => $t);
is($mst, 503, 'bad S3 bucket setting: metadata 503');
like($mb->{detail} // '', qr/object store/, '... saying the object store');
($mst) = $p->req(GET => '/api/v1/devices', token => $t);
is($mst, 200, 'bad S3 bucket setting: devices still 200');

done_testing();
