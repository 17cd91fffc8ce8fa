/* SPDX-License-Identifier: MIT */
/*
 * quota.c - what a facility stores against its storage quota.
 */
#include "config.h"

#include <stdlib.h>

#include "codec/xmch.h"
#include "domain/quota.h"

#define COLS "quota_bytes, upload_bytes, sample_bytes"

/* What the facility stores now (its row, its samples' deltas and its
 * active sessions' pending bytes: sql/023).  Without a quota the samples'
 * bytes are not summed (CASE evaluates only the branch taken): nothing
 * is checked against them, and the sums took an upload's read from 22 to
 * 99 µs of PostgreSQL CPU (doc/benchmarks.md "bench/bounds"). */
static const char read_sql[] =
	"SELECT quota_bytes, upload_bytes, CASE WHEN quota_bytes IS NULL "
	"THEN 0 ELSE sample_bytes END FROM facility_usage "
	"WHERE facility_id = $1::uuid";

/* The same, the deltas folded into the row, which stays locked until the
 * transaction ends (sql/019, sql/023: facility_storage_fold). */
static const char lock_sql[] = "SELECT " COLS " FROM "
			       "facility_storage_fold($1::uuid)";

/* The row of facility_id into *q, locked when lock is true. */
static enum db_status
fetch(struct db *db, bool lock, const char *facility_id, struct quota *q,
      bool *found)
{
	const char *p[1] = {facility_id};
	PGresult *res = NULL;
	enum db_status st;

	*found = false;
	*q = (struct quota){0};
	st = lock ? db_query(db, &res, lock_sql, 1, p)
		  : db_query_ro(db, &res, read_sql, 1, p);
	if (st == DB_OK && PQntuples(res) == 1) {
		*found = true;
		q->limited = !PQgetisnull(res, 0, 0);
		q->quota_bytes = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		q->upload_bytes = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
		q->sample_bytes = strtoll(PQgetvalue(res, 0, 2), NULL, 10);
	}
	PQclear(res);
	return st;
}

enum db_status
quota_read(struct db *db, const char *facility_id, struct quota *q, bool *found)
{
	return fetch(db, false, facility_id, q, found);
}

enum db_status
quota_lock(struct db *db, const char *facility_id, struct quota *q, bool *found)
{
	return fetch(db, true, facility_id, q, found);
}

int64_t
quota_left(const struct quota *q)
{
	int64_t used = q->upload_bytes + q->sample_bytes;

	if (!q->limited)
		return INT64_MAX;
	return used >= q->quota_bytes ? 0 : q->quota_bytes - used;
}

uint64_t
quota_batch_bound(const struct xmbp_batch *b)
{
	struct xmbp_stream s;
	uint64_t n = 0;

	for (uint16_t i = 0; i < b->stream_count; i++) {
		xmbp_stream_at(b, i, &s);
		if (s.sample_count > 0)
			n += XMCH_HEADER_SIZE + s.data_len +
			     2u * (uint64_t)s.sample_count;
	}
	return n;
}
