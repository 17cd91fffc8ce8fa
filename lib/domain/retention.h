/* SPDX-License-Identifier: MIT */
/*
 * retention.h - deletes what a facility's retention policy no longer
 * keeps (doc/storage.md "Quotas and retention"): the uploads created, and
 * the ended ingest sessions whose last data came, more than its
 * keep_uploads_days or keep_samples_days ago (facility_storage, sql/019).
 *
 * Work is cut in short transactions of at most RETENTION_BATCH rows: a
 * session's chunks go a batch at a time, then the session in the last
 * one.  The rows go first and their objects after the commit (as DELETE
 * of an upload does): an object that can not be deleted then is an orphan,
 * logged, no longer counted.  Each statement names one facility and its
 * own policy, so a pass never touches another facility's data or data
 * newer than the policy.  A session whose streams a compactor holds is
 * left for the next pass.
 *
 * The face service's video jobs and stored images name no facility: one
 * age for all of them deletes the video jobs that are over, with their
 * input and output objects (XMHUB_RETENTION_FACE_VIDEO_DAYS), and the
 * images stored that long ago, with their detect and mask jobs and their
 * objects (XMHUB_RETENTION_FACE_IMAGE_DAYS).
 */
#ifndef XMHUB_RETENTION_H
#define XMHUB_RETENTION_H

#include "core/db.h"
#include "store/storage.h"

#define RETENTION_BATCH 500 /* rows per transaction */

/* What a pass deleted. */
struct retention_counts {
	unsigned long uploads, sessions, chunks, face_videos, face_images;
	unsigned long orphans; /* objects that could not be deleted */
};

/* The face service's ages, in days (0: kept for ever). */
struct retention_face {
	long long video_days; /* video jobs, once over */
	long long image_days; /* stored images, with their jobs */
};

/*
 * One pass: every facility's samples' deltas folded into its storage
 * row (sql/019), every facility with a policy, then the face video jobs
 * and images older than face's ages, until nothing is left to delete or
 * runner_stopping(); counts added to *out.  DB_OK, or the database's
 * failure (what was committed before stays deleted).
 */
enum db_status retention_pass(struct db *db, struct store *st,
			      const struct retention_face *face,
			      struct retention_counts *out);

#endif
