#!/usr/bin/env perl
# SPDX-License-Identifier: MIT
# Retention end to end (doc/storage.md "Quotas and retention"): two
# facilities with the same old and new data, a policy on one of them,
# timestamps set back in the database to make data old; one run of
# xmhub-retention deletes that facility's old uploads and ended sessions
# (rows and objects, compacted chunks included) and nothing else: not the
# new data, not an active session however old, not the other facility's;
# the usage follows.  The face service's video jobs over for longer than
# XMHUB_RETENTION_FACE_VIDEO_DAYS go with their objects, no other job;
# its images stored longer ago than XMHUB_RETENTION_FACE_IMAGE_DAYS go
# with their detect and mask jobs and the objects of both, no newer one.
use strict;
use warnings;
use Test::More;
use Xmhub::Ingest;
use Xmhub::Objects;
use Xmhub::Platform;

my $p = Xmhub::Platform->start;
my $stack = $p->stack;
ok($stack->stop_daemon('transcode'), 'the transcode runner is stopped');
my $ts = $p->token($p->user('super_admin', undef));



sub usage {
	my ($f) = @_;
	return $p->sql('SELECT upload_bytes, sample_bytes FROM '
	    . "facility_usage WHERE facility_id = '$f'");
}

sub rows_bytes {
	my ($f) = @_;
	return $p->sql('SELECT coalesce((SELECT sum(original_size_bytes) FROM '
	    . "uploads WHERE facility_id = '$f'), 0), coalesce((SELECT "
	    . 'sum(c.byte_size) FROM stored_chunks c JOIN ingest_streams t ON '
	    . 't.id = c.stream_id JOIN ingest_sessions s ON s.id = t.session_id '
	    . "WHERE s.facility_id = '$f'), 0)");
}

# The same data in both facilities: an old and a new upload, an old and
# a new closed session, an old active one.
my %d;
for my $name ('A', 'B') {
	my $f = $p->facility("Retention $name");
	my $ta = $p->token($p->user('facility_admin', $f));
	my $key = $p->api_key($ta);
	my $in = Xmhub::Ingest->new($p, $key);
	my %o = (fac => $f);
	for my $age ('old', 'new') {
		my ($st, $u) = Xmhub::Objects::upload($p, $key, "$age.wav",
			Xmhub::Objects::wav(100));
		die "upload: $st\n" if $st != 200;
		$o{"upload_$age"} = $u->{id};
		my $s = $in->session(1, [0, 'f32']);
		$in->send($s->{id}, $_, [0, 'f32', [map { [$_ * 10, $_] } 1 .. 50]])
		    for 1 .. 3;
		$in->close($s->{id});
		$o{"session_$age"} = $s->{id};
	}
	my $s = $in->session(2, [0, 'f32']);
	$in->send($s->{id}, 1, [0, 'f32', [[1, 1]]]);
	$o{session_active} = $s->{id};
	$d{$name} = \%o;
}
# The old sessions' chunks as compaction leaves them: objects.
$p->job('xmhub-ingest-compact', '--once', 'XMHUB_COMPACT_MIN_AGE=0');
for my $o (values %d) {
	$p->sql("UPDATE uploads SET created_at = now() - interval '40 days' "
	    . "WHERE id = '$o->{upload_old}'");
	$p->sql('UPDATE ingest_sessions SET started_at = now() - interval '
	    . "'41 days', last_data_at = now() - interval '40 days', closed_at "
	    . "= now() - interval '40 days' WHERE id = '$o->{session_old}'");
	$p->sql('UPDATE ingest_sessions SET started_at = now() - interval '
	    . "'41 days' WHERE id = '$o->{session_active}'");
}
my ($a, $b) = @d{'A', 'B'};
ok($p->objects($a->{fac}) > 2,
	'A has objects of uploads and compacted chunks');
my ($st, $body) = $p->req(PATCH => "/api/v1/facilities/$a->{fac}/storage",
	token => $ts, json => {keep_uploads_days => 30, keep_samples_days => 30});
is($st, 200, 'A keeps 30 days');
my $usage_b = usage($b->{fac});
my $objects_b = $p->objects($b->{fac});
my $chunks_old = $p->sql('SELECT count(*), count(object_key) FROM '
    . 'stored_chunks c JOIN ingest_streams t ON t.id = c.stream_id WHERE '
    . "t.session_id = '$a->{session_old}'");
like($chunks_old, qr/^[1-9]\d*\|[1-9]\d*$/, "A's old session has chunk objects ($chunks_old)");
my $old_keys = $p->sql('SELECT object_key FROM stored_chunks c JOIN '
    . "ingest_streams t ON t.id = c.stream_id WHERE t.session_id = "
    . "'$a->{session_old}' AND object_key IS NOT NULL");

# Face video jobs: one old and over, one new, one old but running.
my $dir = $stack->setting('XMHUB_STORAGE_DIR');
my %face;
for my $j (['old', 'completed', 40], ['new', 'completed', 1],
    ['running', 'running', 40]) {
	my ($name, $status, $age) = @$j;
	my $id = $p->sql('INSERT INTO face_video_jobs (status, input_key, '
	    . 'input_bytes, width, height, duration_ms, frames_total, method, '
	    . 'strength, padding, confidence_threshold, nms_threshold, '
	    . "max_faces, output_key, created_at, finished_at) VALUES ('$status', "
	    . "'face/videos/x/input', 1, 2, 2, 1, 1, 'gaussian', 1, 0, 0.5, 0.3, "
	    . "10, 'face/videos/x/output', now() - interval '$age days', "
	    . ($status eq 'running' ? 'NULL' : "now() - interval '$age days'")
	    . ') RETURNING id');
	$p->sql("UPDATE face_video_jobs SET input_key = 'face/videos/$id/input', "
	    . "output_key = 'face/videos/$id/output' WHERE id = '$id'");
	system('mkdir', '-p', "$dir/face/videos/$id") == 0 or die;
	for my $k ('input', 'output') {
		open my $fh, '>', "$dir/face/videos/$id/$k" or die "$k: $!";
		print {$fh} "video\n";
		close $fh;
	}
	system('chown', '-R', 'xmhub', "$dir/face") if $> == 0;
	$face{$name} = $id;
}

# Face images, an old one and a new one, each with a detect and a mask
# job; the objects where the face service puts them (face/images/ID/,
# face/jobs/ID/).
my %img;
sub face_object {
	my ($key) = @_;
	system('mkdir', '-p', "$dir/" . ($key =~ s{/[^/]+$}{}r)) == 0 or die;
	open my $fh, '>', "$dir/$key" or die "$key: $!";
	print {$fh} "face object\n";
	close $fh;
}
for my $i (['old', 40], ['new', 1]) {
	my ($name, $age) = @$i;
	my $id = $p->sql('INSERT INTO face_images (content_type, size_bytes, '
	    . "width, height, object_key, created_at) VALUES ('image/jpeg', 12, "
	    . "2, 2, 'x', now() - interval '$age days') RETURNING id");
	$p->sql("UPDATE face_images SET object_key = 'face/images/$id/original' "
	    . "WHERE id = '$id'");
	face_object("face/images/$id/original");
	my @jobs;
	for my $type ('detect', 'mask') {
		my $job = $p->sql('INSERT INTO face_jobs (image_id, job_type, '
		    . 'method, confidence_threshold, nms_threshold, max_faces, '
		    . 'model, face_count, detections, inference_ms, total_ms, '
		    . "created_at) VALUES ('$id', '$type', "
		    . ($type eq 'mask' ? "'gaussian'" : 'NULL')
		    . ", 0.5, 0.3, 10, 'yunet', 0, '[]', 1, 1, "
		    . "now() - interval '$age days') RETURNING id");
		if ($type eq 'mask') {
			$p->sql("UPDATE face_jobs SET output_key = "
			    . "'face/jobs/$job/output.jpg' WHERE id = '$job'");
			face_object("face/jobs/$job/output.jpg");
		}
		push @jobs, $job;
	}
	$img{$name} = {id => $id, jobs => \@jobs};
}
system('chown', '-R', 'xmhub', "$dir/face") if $> == 0;

my $out = $p->job('xmhub-retention', '--once',
	'XMHUB_RETENTION_FACE_VIDEO_DAYS=30', 'XMHUB_RETENTION_FACE_IMAGE_DAYS=30');
like($out, qr/deleted 1 upload\(s\), 1 session\(s\) with \d+ chunk row\(s\), 1 face video job\(s\), 1 face image\(s\)/,
	'it says what it deleted');
is($p->sql("SELECT count(*) FROM face_images WHERE id = '$img{old}{id}'")
    . '|' . $p->sql("SELECT count(*) FROM face_jobs WHERE image_id = "
    . "'$img{old}{id}'"), '0|0', 'the old face image is gone with its jobs');
ok(!-e "$dir/face/images/$img{old}{id}" && !-e "$dir/face/jobs/$img{old}{jobs}[1]",
	'with its object and its mask output');
is($p->sql("SELECT count(*) FROM face_images WHERE id = '$img{new}{id}'")
    . '|' . $p->sql("SELECT count(*) FROM face_jobs WHERE image_id = "
    . "'$img{new}{id}'"), '1|2', 'the new face image stays with its jobs');
ok(-e "$dir/face/images/$img{new}{id}/original"
    && -e "$dir/face/jobs/$img{new}{jobs}[1]/output.jpg",
	'with its object and its mask output');
is($p->sql("SELECT count(*) FROM face_video_jobs WHERE id = '$face{old}'"), 0,
	'the old face video job is gone');
ok(!-e "$dir/face/videos/$face{old}/output"
    && !-e "$dir/face/videos/$face{old}/input", 'with its objects');
for my $k ('new', 'running') {
	is($p->sql("SELECT count(*) FROM face_video_jobs WHERE id = '$face{$k}'"),
		1, "the $k face video job stays");
	ok(-e "$dir/face/videos/$face{$k}/output", 'with its output');
}

sub exists_row {
	my ($table, $id) = @_;
	return $p->sql("SELECT count(*) FROM $table WHERE id = '$id'");
}
is(exists_row('uploads', $a->{upload_old}), 0, "A's old upload is gone");
is($p->objects("$a->{fac}/uploads/$a->{upload_old}"), 0, 'with its objects');
is(exists_row('uploads', $a->{upload_new}), 1, "A's new upload stays");
ok($p->objects("$a->{fac}/uploads/$a->{upload_new}") > 0, 'with its objects');
is(exists_row('ingest_sessions', $a->{session_old}), 0,
	"A's old session is gone");
is(scalar(grep { -e "$dir/$_" } split /\n/, $old_keys), 0,
	'its compacted chunks\' objects too');
is(exists_row('ingest_sessions', $a->{session_new}), 1,
	"A's new session stays");
is(exists_row('ingest_sessions', $a->{session_active}), 1,
	"A's old but active session stays");
for my $k (qw(upload_old upload_new)) {
	is(exists_row('uploads', $b->{$k}), 1, "B's $k stays");
}
for my $k (qw(session_old session_new session_active)) {
	is(exists_row('ingest_sessions', $b->{$k}), 1, "B's $k stays");
}
is(usage($b->{fac}), $usage_b, "B's usage did not move");
is($p->objects($b->{fac}), $objects_b, "B's objects are all there");
is(usage($a->{fac}), rows_bytes($a->{fac}), "A's usage is what is left");
$out = $p->job('xmhub-retention', '--once', 'XMHUB_RETENTION_FACE_VIDEO_DAYS=30',
	'XMHUB_RETENTION_FACE_IMAGE_DAYS=30');
unlike($out, qr/deleted/, 'a second run finds nothing');

ok(!$stack->sanitizer_reports, 'no sanitizer reports');
done_testing;
