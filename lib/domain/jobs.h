/* SPDX-License-Identifier: MIT */
/*
 * jobs.h - the transcode job queue (table transcode_jobs).
 *
 * An upload gets a queued job (jobs_create, in the upload's
 * transaction).  Runners (jobs/transcode.c), one or many on several
 * machines, claim jobs one at a time with FOR UPDATE SKIP LOCKED, beat a
 * heartbeat while ffmpeg runs, and finish them with jobs_complete() or
 * jobs_fail().  A running job whose heartbeat is older than the lease
 * is claimed again by another runner (its first runner died); such a
 * lost run is not one of the job's attempts (a failure of the input
 * is), it counts in lost_runs, which fails the job at JOBS_LOST_MAX.
 * Every change a runner makes is guarded in SQL by the job's status,
 * worker_id, attempts and lost_runs, so a runner that lost its job
 * (lease taken over, cancelled, deleted) can not overwrite the new
 * owner's result: it gets JOBS_LOST and stops.
 */
#ifndef XMHUB_JOBS_H
#define XMHUB_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/db.h"
#include "core/probe.h"

#define JOBS_UUID_LEN 36
#define JOBS_WORKER_MAX 128 /* bytes of a worker id */
#define JOBS_ERROR_MAX 1000 /* bytes of an error_message */
/* Lost runs (lease expired) after which a job fails: an input that
 * crashes the runner itself (libsox reads headers in its process) must
 * not take runner after runner down forever. */
#define JOBS_LOST_MAX 3

/* A transcode target: what ffmpeg makes of an original. */
struct jobs_target {
	char format[8];	   /* "webm" or "mp4": the setting's value */
	char codec[8];	   /* "opus" or "aac" */
	char container[8]; /* "webm" or "mp4" */
	char bitrate[16];  /* ffmpeg's -b:a, e.g. "128k" */
	long sample_rate;  /* ffmpeg's -ar; 0 = keep / codec default */
	int max_attempts;  /* runs before a job fails for good */
};

/* A claimed job, as the runner needs it. */
struct jobs_claim {
	char id[JOBS_UUID_LEN + 1];
	char upload_id[JOBS_UUID_LEN + 1];
	char facility_id[JOBS_UUID_LEN + 1];
	char worker_id[JOBS_WORKER_MAX + 1];
	struct jobs_target target; /* the job's own, not the current one */
	int attempts;		   /* this run's number, from 1 */
	int lost_runs;		   /* earlier runs lost with their runner */
};

/* What a runner's update found. */
enum jobs_outcome {
	JOBS_DONE, /* the change was made */
	JOBS_LOST  /* the job is no longer ours (taken over, cancelled, gone) */
};

/* Reads XMHUB_TRANSCODE_FORMAT (webm = Opus in WebM, default; mp4 = AAC
 * in MP4), XMHUB_TRANSCODE_BITRATE (128k), XMHUB_TRANSCODE_SAMPLE_RATE
 * (unset = keep / codec default), XMHUB_TRANSCODE_MAX_ATTEMPTS (3),
 * XMHUB_TRANSCODE_LEASE (600 s) and XMHUB_TRANSCODE_BACKOFF (30 s).
 * False + detail on a bad value.  Call once at start-up. */
bool jobs_init(char *detail, size_t dlen);

/* The current target settings (after jobs_init); never NULL. */
const struct jobs_target *jobs_target(void);

/* The sample rates and channel counts a job transcodes: a 1 Hz header
 * would make hours of output from a few bytes, and libsox misreads
 * some of them (doc/transcoding.md "Bounds"). */
#define JOBS_RATE_MIN 1000
#define JOBS_RATE_MAX 768000
#define JOBS_CHANNELS_MAX 32

/*
 * Whether the probed input is one a run may transcode: its sample rate
 * and channels within the bounds above, its length at most
 * XMHUB_TRANSCODE_MAX_SECONDS.  False with the reason, fit for clients,
 * in msg.
 */
bool jobs_input_ok(const struct probe_info *in, char *msg, size_t mlen);

/* XMHUB_TRANSCODE_MAX_SECONDS: what a run may decode and write at most,
 * whatever the input's header claims (ffmpeg's -t). */
long long jobs_max_seconds(void);

/* The bytes an output of job's target may have at most (ffmpeg's -fs):
 * its bitrate for jobs_max_seconds(), twice over, plus 1 MiB. */
unsigned long long jobs_max_output_bytes(const struct jobs_target *t);

/* Queues a transcode job of upload_id with the current target settings,
 * inside whatever transaction db is in; writes the new job's id into
 * job_id. */
enum db_status jobs_create(struct db *db, const char *facility_id,
			   const char *upload_id, char job_id[37]);

/* The lease in seconds (XMHUB_TRANSCODE_LEASE). */
long long jobs_lease(void);

/*
 * Claims one job for worker (host:pid): a queued job whose run_after has
 * passed (attempts + 1), or a running job whose heartbeat is older than
 * the lease (its runner died: attempts as they were, lost_runs + 1).
 * Sets it running (worker_id, started_at, heartbeat_at) and its upload
 * processing, in one transaction.  Running jobs past the lease whose
 * lost run is their JOBS_LOST_MAX-th are failed first.  DB_OK with *got
 * false when there is nothing to do.
 */
enum db_status jobs_claim(struct db *db, const char *worker,
			  struct jobs_claim *job, bool *got);

/* Renews the lease; JOBS_LOST when the job is no longer this run's
 * (cancelled, taken over, deleted with its upload). */
enum db_status jobs_heartbeat(struct db *db, const struct jobs_claim *job,
			      enum jobs_outcome *out);

/*
 * Completes the run: the job completed with the output's size and
 * duration, the upload completed with the probe's fields (NULL members
 * stay NULL).  JOBS_LOST, changing nothing, when the run is not the
 * job's current one any more.
 */
enum db_status jobs_complete(struct db *db, const struct jobs_claim *job,
			     const struct probe_info *in, uint64_t out_size,
			     uint64_t out_duration_ms, enum jobs_outcome *out);

/*
 * Fails the run with message (at most JOBS_ERROR_MAX bytes kept): the
 * job is queued again after the backoff (XMHUB_TRANSCODE_BACKOFF doubled
 * at each attempt) while attempts < max_attempts; otherwise failed, and
 * its upload failed unless it has an earlier completed transcode.
 * *out as jobs_complete().
 */
enum db_status jobs_fail(struct db *db, const struct jobs_claim *job,
			 const char *message, enum jobs_outcome *out);

/*
 * Fails the job for good with message, whatever its attempts left: the
 * probe refused the input (jobs_input_ok()), an answer another run can
 * not change.  Its upload as jobs_fail()'s; *out as jobs_complete().
 */
enum db_status jobs_refuse(struct db *db, const struct jobs_claim *job,
			   const char *message, enum jobs_outcome *out);

/* Gives the run back without counting it (the runner is stopping): the
 * job is queued again at once with its attempts as before the claim. */
enum db_status jobs_release(struct db *db, const struct jobs_claim *job,
			    enum jobs_outcome *out);

/*
 * Gives the run back without counting it for a reason that is not the
 * input's (the object store full or unreachable, no temporary space):
 * the job is queued again with its attempts as before the claim, after
 * XMHUB_TRANSCODE_BACKOFF seconds, message in its error_message.  However
 * long the outage, the job runs once the store is back.
 */
enum db_status jobs_defer(struct db *db, const struct jobs_claim *job,
			  const char *message, enum jobs_outcome *out);

/* Which jobs a list shows (NULL members: any), and which page. */
struct jobs_filter {
	const char *facility_id;
	const char *status;
	const char *upload_id;
	const char *limit;  /* decimal text: LIMIT */
	const char *offset; /* decimal text: OFFSET */
};

/*
 * The page of jobs f names, newest first, in *rows (the caller
 * PQclear()s it; NULL on failure), as the API shows a job: id,
 * upload_id, facility_id, target_format, target_codec, target_container,
 * target_bitrate, target_sample_rate, output_size_bytes,
 * output_duration_ms, status, error_message, attempts, max_attempts,
 * queued_at, started_at, completed_at, worker_id (for lib/web/dbjson);
 * *total the number of jobs f matches on every page.
 */
enum db_status jobs_list(struct db *db, const struct jobs_filter *f,
			 PGresult **rows, long long *total);

/* Job id as jobs_list() shows it: one row, or none when there is none. */
enum db_status jobs_get(struct db *db, const char *id, PGresult **rows);

/*
 * Cancels job id if it is queued or running, in one transaction: *status
 * receives the job's status before ("" when there is no such job), so
 * the caller answers 409 for a job already over.  The upload leaves
 * processing when no other job of it is queued or running (completed if
 * it has a completed transcode, failed otherwise).  The caller checks
 * the job's facility first (lib/web/scope).
 */
enum db_status jobs_cancel(struct db *db, const char *id, char status[16]);

#endif
