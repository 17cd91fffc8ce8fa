/* SPDX-License-Identifier: MIT */
/*
 * quota.h - what a facility stores against its storage quota
 * (doc/storage.md "Quotas and retention").
 *
 * The counts live in facility_storage (sql/019_storage_quota.sql) and are
 * moved in the transaction that writes or deletes the bytes' rows, by
 * triggers except for inserted chunks: an ingest round adds their bytes
 * to its session's pending_bytes (sql/023), compaction inserts a delta
 * row (lib/domain/compact.c); a new statement that inserts chunks must
 * count them too.  A check reads one row, its deltas and the pending
 * bytes of its facility's active sessions.  A writer that must not pass
 * the quota locks the row (quota_lock) in its transaction before it
 * writes, so two writers of one facility can not both take the last
 * bytes; the trigger then updates the row it holds.  Everything here counts
 * bytes as stored, never as a request claims them.
 */
#ifndef XMHUB_QUOTA_H
#define XMHUB_QUOTA_H

#include <stdbool.h>
#include <stdint.h>

#include "codec/xmbp.h"
#include "core/db.h"

/* What facility_storage says of one facility. */
struct quota {
	bool limited;	      /* false: quota_bytes is NULL, no limit */
	int64_t quota_bytes;  /* when limited */
	int64_t upload_bytes; /* originals and transcode outputs */
	int64_t sample_bytes; /* stored chunks of ingest sessions */
};

/*
 * Reads facility_id's row into *q (no lock): DB_OK with *found false when
 * the facility has none (it does not exist).  Without a limit,
 * sample_bytes is 0 (not summed: quota_left() needs none).  Statuses as
 * db_query().
 */
enum db_status quota_read(struct db *db, const char *facility_id,
			  struct quota *q, bool *found);

/*
 * As quota_read(), locking the row until the caller's transaction ends
 * (FOR UPDATE): what the caller then writes is checked against the
 * counts no other writer can move meanwhile.
 */
enum db_status quota_lock(struct db *db, const char *facility_id,
			  struct quota *q, bool *found);

/* The bytes q may still take: INT64_MAX without a limit, 0 when the
 * quota is used up (or was lowered below what is stored). */
int64_t quota_left(const struct quota *q);

/*
 * The most bytes the stored chunks of the decoded batch b may take
 * (doc/storage.md "What counts"): per block with samples, the XMCH
 * header and the block's data, with the 2 bytes per sample by which
 * XMCH's u32 length prefixes outgrow XMBP's u16 ones.  The ingest check
 * charges a batch this before it is stored; the counts then hold what
 * was really stored, never more.
 */
uint64_t quota_batch_bound(const struct xmbp_batch *b);

#endif
