/* SPDX-License-Identifier: MIT */
/*
 * retention.c - deletes what retention policies no longer keep.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/runner.h"
#include "domain/retention.h"

#define LIMIT_TEXT "500" /* RETENTION_BATCH as a parameter */

static const char policies_sql[] =
	"SELECT facility_id, keep_uploads_days, keep_samples_days "
	"FROM facility_storage WHERE keep_uploads_days IS NOT NULL "
	"OR keep_samples_days IS NOT NULL ORDER BY facility_id";

/* $1 the facility, $2 its keep_uploads_days, $3 the batch. */
static const char uploads_sql[] =
	"DELETE FROM uploads WHERE id IN (SELECT id FROM uploads "
	"WHERE facility_id = $1::uuid AND created_at < now() - "
	"make_interval(days => $2::integer) ORDER BY created_at "
	"LIMIT $3::integer FOR UPDATE SKIP LOCKED) RETURNING id";

/* Ended sessions of facility $1 whose last data is older than $2 days
 * (started_at is never later: it narrows by the index). */
static const char sessions_sql[] =
	"SELECT id FROM ingest_sessions WHERE facility_id = $1::uuid "
	"AND status IN ('closed', 'error') "
	"AND started_at < now() - make_interval(days => $2::integer) "
	"AND coalesce(closed_at, last_data_at, started_at) < "
	"now() - make_interval(days => $2::integer) "
	"ORDER BY started_at LIMIT $3::integer";

/* True when every stream of session $1 is locked here: none is being
 * compacted. */
static const char lock_sql[] =
	"SELECT (SELECT count(*) FROM ingest_streams WHERE session_id = "
	"$1::uuid) = (SELECT count(*) FROM (SELECT 1 FROM ingest_streams "
	"WHERE session_id = $1::uuid FOR UPDATE SKIP LOCKED) l)";

/* A batch of the session's chunks, deleted before the session so that
 * the trigger of sql/019 finds their facility. */
static const char chunks_sql[] =
	"DELETE FROM stored_chunks WHERE id IN (SELECT c.id FROM "
	"stored_chunks c JOIN ingest_streams t ON t.id = c.stream_id "
	"WHERE t.session_id = $1::uuid LIMIT $2::integer) "
	"RETURNING object_key";

static const char session_sql[] =
	"DELETE FROM ingest_sessions WHERE id = $1::uuid";

/* Face video jobs over for more than $1 days (finished_at is set when a
 * job ends; created_at stands in for rows without). */
static const char face_sql[] =
	"DELETE FROM face_video_jobs WHERE id IN (SELECT id FROM "
	"face_video_jobs WHERE status IN ('completed', 'failed', 'cancelled') "
	"AND coalesce(finished_at, created_at) < now() - "
	"make_interval(days => $1::integer) ORDER BY created_at "
	"LIMIT $2::integer FOR UPDATE SKIP LOCKED) "
	"RETURNING input_key, output_key";

/* Face images stored more than $1 days ago, with their detect and mask
 * jobs (as the face service's DELETE /admin/images/{id} does): the
 * object prefix of each, face/images/ID/ and face/jobs/ID/. */
static const char face_image_sql[] =
	"WITH i AS (DELETE FROM face_images WHERE id IN (SELECT id FROM "
	"face_images WHERE created_at < now() - make_interval(days => "
	"$1::integer) ORDER BY created_at, id LIMIT $2::integer FOR UPDATE "
	"SKIP LOCKED) RETURNING id), "
	"j AS (DELETE FROM face_jobs WHERE image_id IN (SELECT id FROM i) "
	"RETURNING id) "
	"SELECT 'images', id FROM i UNION ALL SELECT 'jobs', id FROM j";

/* Deletes object key (or every object under it, a prefix), counting a
 * failure as an orphan. */
static void
drop(struct store *st, const char *key, bool prefix,
     struct retention_counts *out)
{
	char detail[256];
	enum store_status s =
		prefix ? store_delete_prefix(st, key, detail, sizeof(detail))
		       : store_delete(st, key, detail, sizeof(detail));

	if (s != STORE_OK) {
		log_error("retention: deleting %s: %s", key, detail);
		out->orphans++;
	}
}

/* The uploads of facility fac older than days, a batch at a time. */
static enum db_status
uploads(struct db *db, struct store *st, const char *fac, const char *days,
	struct retention_counts *out)
{
	const char *p[3] = {fac, days, LIMIT_TEXT};
	char prefix[128];
	PGresult *res = NULL;
	enum db_status s;
	int n;

	do {
		if ((s = db_query(db, &res, uploads_sql, 3, p)) != DB_OK)
			return s;
		n = PQntuples(res);
		for (int i = 0; i < n; i++) {
			snprintf(prefix, sizeof(prefix), "%s/uploads/%s/", fac,
				 PQgetvalue(res, i, 0));
			drop(st, prefix, true, out);
		}
		out->uploads += (unsigned long)n;
		PQclear(res);
	} while (n == RETENTION_BATCH && !runner_stopping());
	return DB_OK;
}

/*
 * Deletes one batch of session id's chunks, and the session with the
 * last one, in one transaction; *done true when the session is gone or
 * left for later (a compactor holds a stream).
 */
static enum db_status
session_batch(struct db *db, struct store *st, const char *id, bool *done,
	      struct retention_counts *out)
{
	const char *p[2] = {id, LIMIT_TEXT};
	PGresult *res = NULL, *gone = NULL;
	enum db_status s;
	int n = 0;

	*done = true;
	if ((s = db_begin(db)) != DB_OK ||
	    (s = db_query(db, &res, lock_sql, 1, p)) != DB_OK)
		goto out;
	if (PQgetvalue(res, 0, 0)[0] != 't')
		goto out;
	PQclear(res);
	if ((s = db_query(db, &res, chunks_sql, 2, p)) != DB_OK)
		goto out;
	n = PQntuples(res);
	*done = n < RETENTION_BATCH;
	if (*done && (s = db_query(db, &gone, session_sql, 1, p)) != DB_OK)
		goto out;
	if ((s = db_commit(db)) != DB_OK)
		goto out;
	out->chunks += (unsigned long)n;
	out->sessions += *done;
	for (int i = 0; i < n; i++)
		if (!PQgetisnull(res, i, 0))
			drop(st, PQgetvalue(res, i, 0), false, out);
out:
	db_rollback(db);
	PQclear(gone);
	PQclear(res);
	return s;
}

/* The ended sessions of facility fac whose data is older than days. */
static enum db_status
sessions(struct db *db, struct store *st, const char *fac, const char *days,
	 struct retention_counts *out)
{
	const char *p[3] = {fac, days, LIMIT_TEXT};
	PGresult *res = NULL;
	enum db_status s;
	unsigned long before;
	bool done, more;

	do {
		if ((s = db_query(db, &res, sessions_sql, 3, p)) != DB_OK)
			return s;
		before = out->sessions;
		for (int i = 0; i < PQntuples(res) && s == DB_OK; i++)
			do
				s = session_batch(db, st, PQgetvalue(res, i, 0),
						  &done, out);
			while (s == DB_OK && !done && !runner_stopping());
		/* Another batch only when this one went whole: sessions left
		 * for a compactor would come back first. */
		more = out->sessions - before == RETENTION_BATCH;
		PQclear(res);
	} while (s == DB_OK && more && !runner_stopping());
	return s;
}

/* The face service's video jobs over for more than days, with their
 * input and output objects. */
static enum db_status
face_videos(struct db *db, struct store *st, const char *days,
	    struct retention_counts *out)
{
	const char *p[2] = {days, LIMIT_TEXT};
	PGresult *res = NULL;
	enum db_status s;
	int n;

	do {
		if ((s = db_query(db, &res, face_sql, 2, p)) != DB_OK)
			return s;
		n = PQntuples(res);
		for (int i = 0; i < n; i++)
			for (int k = 0; k < 2; k++)
				if (!PQgetisnull(res, i, k))
					drop(st, PQgetvalue(res, i, k), false,
					     out);
		out->face_videos += (unsigned long)n;
		PQclear(res);
	} while (n == RETENTION_BATCH && !runner_stopping());
	return DB_OK;
}

/* The face service's images stored more than days ago, with their jobs
 * and the objects of both. */
static enum db_status
face_images(struct db *db, struct store *st, const char *days,
	    struct retention_counts *out)
{
	const char *p[2] = {days, LIMIT_TEXT};
	PGresult *res = NULL;
	enum db_status s;
	char prefix[96];
	int n, images;

	do {
		if ((s = db_query(db, &res, face_image_sql, 2, p)) != DB_OK)
			return s;
		n = PQntuples(res);
		images = 0;
		for (int i = 0; i < n; i++) {
			snprintf(prefix, sizeof(prefix), "face/%s/%s/",
				 PQgetvalue(res, i, 0), PQgetvalue(res, i, 1));
			drop(st, prefix, true, out);
			images += strcmp(PQgetvalue(res, i, 0), "images") == 0;
		}
		out->face_images += (unsigned long)images;
		PQclear(res);
	} while (images == RETENTION_BATCH && !runner_stopping());
	return DB_OK;
}

/* Every facility's samples' deltas (its ended sessions', compaction's,
 * the deletes': sql/019, sql/023) folded into its row in one statement,
 * so that they do not pile up where nothing else folds them (the
 * facilities without a quota nor uploads). */
static const char fold_sql[] = "SELECT count(*) FROM facility_storage s, "
			       "LATERAL facility_storage_fold(s.facility_id) f";

enum db_status
retention_pass(struct db *db, struct store *st,
	       const struct retention_face *face, struct retention_counts *out)
{
	PGresult *res = NULL;
	enum db_status s;
	char days[24];

	if ((s = db_query(db, &res, fold_sql, 0, NULL)) != DB_OK)
		return s;
	PQclear(res);
	res = NULL;
	if ((s = db_query_ro(db, &res, policies_sql, 0, NULL)) != DB_OK)
		return s;
	for (int i = 0; i < PQntuples(res) && s == DB_OK && !runner_stopping();
	     i++) {
		const char *fac = PQgetvalue(res, i, 0);

		if (!PQgetisnull(res, i, 1))
			s = uploads(db, st, fac, PQgetvalue(res, i, 1), out);
		if (s == DB_OK && !PQgetisnull(res, i, 2))
			s = sessions(db, st, fac, PQgetvalue(res, i, 2), out);
	}
	PQclear(res);
	if (s == DB_OK && face->video_days > 0 && !runner_stopping()) {
		snprintf(days, sizeof(days), "%lld", face->video_days);
		s = face_videos(db, st, days, out);
	}
	if (s == DB_OK && face->image_days > 0 && !runner_stopping()) {
		snprintf(days, sizeof(days), "%lld", face->image_days);
		s = face_images(db, st, days, out);
	}
	return s;
}
