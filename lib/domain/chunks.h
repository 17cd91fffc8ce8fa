/* SPDX-License-Identifier: MIT */
/*
 * chunks.h - one stream's stored samples, read back in time order.
 *
 * A stream's samples are XMCH chunks in stored_chunks (sql/003): inline
 * rows (bytes in `data`, one per committed batch block) and compacted
 * rows (bytes in the object store under `object_key`).  Chunks may
 * overlap in time (late batches).  The reader merges them: rows are
 * fetched in pages in (start_ts_us, seq) order, a chunk is opened only
 * when its start could hold the next sample, and a heap of open chunk
 * cursors yields samples by (timestamp, chunk seq, position in chunk):
 * time order, ties in insertion order (seq is the insertion order of the
 * rows, and compaction keeps it).
 *
 * Memory: the open chunks (stored bytes plus their decompressed copy)
 * may not pass the budget given; a window where more overlap is refused
 * (CHUNKS_MEMORY) rather than loaded.  Compacted chunks never overlap
 * each other but at equal timestamps, so after compaction a read holds
 * at most two chunks (2 x 64 MiB for the largest) at once.
 *
 * Consistency: the caller runs the reader inside one transaction; for a
 * reader that must not see a compaction's commit halfway through, a
 * REPEATABLE READ one (chunks_snapshot()).
 */
#ifndef XMHUB_CHUNKS_H
#define XMHUB_CHUNKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/db.h"
#include "codec/sample.h"
#include "codec/sampleagg.h"
#include "store/storage.h"

enum chunks_status {
	CHUNKS_OK = 0,
	CHUNKS_END,	/* no more samples in the window */
	CHUNKS_AGG,	/* chunks_item(): a whole chunk's aggregates */
	CHUNKS_DB,	/* a query failed: see db_status */
	CHUNKS_STORE,	/* an object could not be read */
	CHUNKS_CORRUPT, /* a stored chunk does not decode */
	CHUNKS_MEMORY	/* the open chunks would pass the budget */
};

struct chunks_opts {
	const char *stream_id; /* ingest_streams.id */
	uint64_t from, to;     /* inclusive window of timestamps */
	bool inline_only;      /* only rows with data (compaction) */
	size_t mem_max;	       /* budget of the open chunks, bytes */
};

struct chunks_reader;

/*
 * Starts reading; st may be NULL when only inline rows are read.
 * Returns the reader (free it with chunks_close()), NULL when out of
 * memory.  Nothing is queried before the first chunks_next().
 */
struct chunks_reader *chunks_open(struct db *db, struct store *st,
				  const struct chunks_opts *opts);

/*
 * The next sample of the window into *ts and *v; v points into the
 * reader's memory and stays valid until the next call.  CHUNKS_END at
 * the end; any other status is sticky, with a reason in
 * chunks_detail() (for the log, not for clients).
 */
enum chunks_status chunks_next(struct chunks_reader *r, uint64_t *ts,
			       struct sample_value *v);

/*
 * Lets chunks_item() read chunks by their stored aggregates: buckets of
 * width bucket (1 or more) aligned to the window's from, of a numeric
 * stream of type.  A chunk inside the window and inside one bucket comes
 * as one aggregate; when bucket and from are multiples of
 * SAMPLEAGG_GRID_US, a chunk inside the window that overlaps no other
 * comes as its grid's cells (one aggregate each, *ts the cell's start or
 * the chunk's first timestamp).  Others are decoded.  Call it before the
 * first read.
 */
void chunks_buckets(struct chunks_reader *r, uint64_t bucket,
		    enum sample_type type);

/*
 * chunks_next(), or for a chunk that chunks_buckets() lets be read whole:
 * CHUNKS_AGG with its aggregates in *agg and its first
 * timestamp in *ts.  Items come in time order: every sample before *ts
 * came before, every one after comes after (those at *ts may come
 * either way), so a bucket reader adds *agg to the bucket of *ts.
 */
enum chunks_status chunks_item(struct chunks_reader *r, uint64_t *ts,
			       struct sample_value *v, struct sampleagg *agg);

/* The database status behind CHUNKS_DB. */
enum db_status chunks_db_status(const struct chunks_reader *r);

/* Why the reader stopped (static or reader-owned text). */
const char *chunks_detail(const struct chunks_reader *r);

/* Rows opened (or read whole as aggregates) so far, and the largest seq
 * among them (compaction). */
uint64_t chunks_rows(const struct chunks_reader *r);
long long chunks_max_seq(const struct chunks_reader *r);

/* Frees the reader and its chunks; NULL is fine. */
void chunks_close(struct chunks_reader *r);

/* Makes the open transaction of db a REPEATABLE READ, READ ONLY one
 * (call it right after db_begin()). */
enum db_status chunks_snapshot(struct db *db);

#endif
