/* SPDX-License-Identifier: MIT */
/*
 * faceapi_vqueue.h - the queue of video anonymization jobs (table
 * face_video_jobs, sql/013_face_video.sql; doc/face-video.md) and its
 * settings.
 *
 * POST /api/v1/mask-video queues a job (faceapi_video.c).  Runners
 * (jobs/face-video.c), one or many on several machines, claim jobs one
 * at a time with FOR UPDATE SKIP LOCKED, report progress (which renews
 * the lease) and finish them.  A running job whose heartbeat is older
 * than the lease is claimed again (its runner died) without counting an
 * attempt; FACEAPI_VLOST_MAX such runs fail it.  Every change a runner
 * makes is guarded by the job's status, worker, attempts and lost runs:
 * a runner that lost its job (cancelled, taken over) gets lost = true
 * and stops.
 */
#ifndef XMHUB_FACEAPI_VQUEUE_H
#define XMHUB_FACEAPI_VQUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include <stdint.h>

#include "core/db.h"
#include "face/face.h"
#include "store/storage.h"

#define FACEAPI_VUUID_LEN 36
#define FACEAPI_VWORKER_MAX 128
#define FACEAPI_VERROR_MAX 1000 /* bytes of an error kept */
#define FACEAPI_VLOST_MAX 3

/* The video settings (doc/face-video.md "Settings"). */
struct faceapi_vconf {
	long long max_bytes;   /* FACE_API_VIDEO_MAX_BYTES */
	long long max_seconds; /* FACE_API_VIDEO_MAX_SECONDS */
	long long max_pixels;  /* FACE_API_VIDEO_MAX_PIXELS, per frame */
	int detect_every;      /* FACE_API_VIDEO_DETECT_EVERY */
	int lease_s;	       /* FACE_API_VIDEO_LEASE */
	int max_attempts;      /* FACE_API_VIDEO_MAX_ATTEMPTS */
	int backoff_s;	       /* FACE_API_VIDEO_BACKOFF */
};

/* Reads the settings into c (call conf_init() first); false with the
 * bad setting named in detail. */
bool faceapi_vconf_load(struct faceapi_vconf *c, char *detail, size_t dlen);

/* Puts the file at path into st as key, its size into *size.  False with
 * detail when it can not be read or stored (nothing is left then). */
bool faceapi_vput_file(struct store *st, const char *path, const char *key,
		       const char *type, uint64_t *size, char *detail,
		       size_t dlen);

/* A claimed job as its runner needs it. */
struct faceapi_vclaim {
	char id[FACEAPI_VUUID_LEN + 1];
	char worker[FACEAPI_VWORKER_MAX + 1];
	char input_key[128];
	double confidence, nms, padding;
	int max_faces, strength;
	enum face_method method;
	int attempts, lost_runs;
	bool taken_over; /* claimed from a runner that died */
};

/*
 * Claims one job for worker: a queued one whose run_after has passed
 * (attempts + 1) or a running one past the lease (lost_runs + 1); jobs
 * whose lost run would be their FACEAPI_VLOST_MAX-th are failed first.
 * DB_OK with *got false when there is nothing to do.
 */
enum db_status faceapi_vjob_claim(struct db *db, const struct faceapi_vconf *c,
				  const char *worker, struct faceapi_vclaim *j,
				  bool *got);

/* Progress (renews the lease): frames done, the rate, the frame count
 * when known (< 0: unchanged).  *lost when the job is not ours. */
enum db_status faceapi_vjob_progress(struct db *db,
				     const struct faceapi_vclaim *j,
				     long long frames_done, double fps,
				     long long frames_total, bool *lost);

/* Completes the run with its output object and what was done. */
enum db_status faceapi_vjob_complete(struct db *db,
				     const struct faceapi_vclaim *j,
				     const char *model, const char *key,
				     const char *content_type, long long bytes,
				     long long frames, double fps,
				     long long faces, bool *lost);

/*
 * Fails the run with message: for good when final (the input can not be
 * processed) or attempts are used up, else queued again after the
 * backoff (doubled at each attempt).
 */
enum db_status faceapi_vjob_fail(struct db *db, const struct faceapi_vconf *c,
				 const struct faceapi_vclaim *j,
				 const char *message, bool final, bool *lost);

/* Gives the run back uncounted (the runner is stopping). */
enum db_status faceapi_vjob_release(struct db *db,
				    const struct faceapi_vclaim *j, bool *lost);

#endif
