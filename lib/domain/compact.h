/* SPDX-License-Identifier: MIT */
/*
 * compact.h - merges the inline chunks of finished sessions into large
 * chunks in the object store (doc/compaction.md).
 *
 * A stream of a closed or errored session receives no more data, so its
 * inline chunks (one per committed batch block, in stored_chunks.data)
 * are final.  Compaction reads them all in time order (lib/domain/chunks: ties
 * in insertion order), cuts the samples into chunks of a target size,
 * writes each to the object store durably, then in ONE transaction
 * inserts the new rows (in order, so their seq keeps the order of ties)
 * and deletes exactly the rows it read, checking row and sample counts:
 * readers see all old rows or all new ones.  The stream's row is locked
 * (FOR NO KEY UPDATE SKIP LOCKED) for the whole run, so two compactors
 * never take the same stream.  Objects are announced in compact_pending
 * (sql/009) before they are written; compact_sweep() deletes those of
 * runs that died before their commit.
 */
#ifndef XMHUB_COMPACT_H
#define XMHUB_COMPACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/db.h"
#include "store/storage.h"

/* Memory budget of the inline chunks one run holds open (lib/domain/chunks). */
#define COMPACT_READ_MEMORY (256u << 20)

struct compact_opts {
	uint64_t target_samples; /* cut a chunk at this many samples */
	size_t target_bytes;	 /* ... or raw bytes (timestamps, values) */
	unsigned min_age; /* seconds a session has been finished, at least */
	/* Test hook: when set, after the objects are written and before
	 * the swap, create this file and wait to be killed. */
	const char *stall_file;
};

struct compact_result {
	uint64_t rows_in, rows_out, samples, bytes_out;
	char stream_id[37];
};

enum compact_status {
	COMPACT_DONE = 0, /* one stream compacted: see the result */
	COMPACT_NONE,	  /* no stream waits */
	COMPACT_FAILED	  /* logged on stderr; nothing changed */
};

/*
 * The settings: XMHUB_COMPACT_TARGET_SAMPLES (default 1000000),
 * XMHUB_COMPACT_TARGET_BYTES (default 8 MiB), XMHUB_COMPACT_MIN_AGE
 * (seconds since the session was closed, or last received data when it
 * errored; default 300), XMHUB_COMPACT_TEST_STALL (the test hook's file). False
 * with a reason in detail on a bad value.
 */
bool compact_opts_env(struct compact_opts *o, char *detail, size_t dlen);

/*
 * Compacts one waiting stream, not one of skip (a PostgreSQL array
 * literal of stream ids, "{}" for none).  db runs the swap transaction;
 * side (a second connection to the same database) commits the
 * announcements.  r->stream_id names the stream taken, also on failure
 * ("" when none was).
 */
enum compact_status compact_one(struct db *db, struct db *side,
				struct store *st, const struct compact_opts *o,
				const char *skip, struct compact_result *r);

/*
 * Deletes the objects of compaction runs that died before their commit
 * (announced in compact_pending, named by no chunk, their stream not
 * held by a live compactor) and their announcements.  *swept counts
 * them.  DB_OK, or the failing status (logged).
 */
enum db_status compact_sweep(struct db *db, struct store *st,
			     unsigned long *swept);

#endif
