/* SPDX-License-Identifier: MIT */
/*
 * upload.c - audio uploads: their SQL.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/paged.h"
#include "domain/quota.h"
#include "domain/upload.h"

/* A PostgreSQL array literal of up to UPLOAD_TAGS_MAX UUIDs. */
#define IDS_LIT_MAX (UPLOAD_TAGS_MAX * (UUID_LEN + 1) + 2)

#define FULL_COLUMNS                                                           \
	"id, facility_id, api_key_id, uploaded_by, original_filename, "        \
	"original_format, original_size_bytes, duration_ms, sample_rate_hz, "  \
	"channels, bit_depth, codec, metadata, status, created_at, updated_at"

#define ITEM_COLUMNS                                                           \
	"id, facility_id, original_filename, original_format, "                \
	"original_size_bytes, status, created_at, updated_at"

#define LIST_WHERE                                                             \
	"WHERE ($1::uuid IS NULL OR facility_id = $1::uuid) "                  \
	"AND ($2::text IS NULL OR status = $2::text) "

static const char ref_sql[] =
	"SELECT id, facility_id, status, duration_ms FROM uploads "
	"WHERE id = $1::uuid";

static const char get_sql[] =
	"SELECT " FULL_COLUMNS " FROM uploads WHERE id = $1::uuid";

static const char count_sql[] = "SELECT count(*) FROM uploads " LIST_WHERE;

static const char list_sql[] =
	"SELECT " ITEM_COLUMNS " FROM uploads " LIST_WHERE
	"ORDER BY created_at DESC, id DESC LIMIT $3::integer OFFSET $4::bigint";

/* The Tag objects of uploads $1, by name (as GET /api/v1/tags). */
static const char tags_of_sql[] =
	"SELECT ut.upload_id, t.id, t.facility_id, t.name, t.color, "
	"t.created_at FROM upload_tags ut JOIN tags t ON t.id = ut.tag_id "
	"WHERE ut.upload_id = ANY($1::uuid[]) ORDER BY t.name, t.id";

/* The first of tags $2 that is not a tag of facility $1. */
static const char foreign_tag_sql[] =
	"SELECT u::text FROM unnest($2::uuid[]) AS u WHERE NOT EXISTS "
	"(SELECT 1 FROM tags t WHERE t.id = u AND t.facility_id = $1::uuid) "
	"LIMIT 1";

#define INSERT_INTO                                                            \
	"INSERT INTO uploads (id, facility_id, api_key_id, "                   \
	"original_filename, original_format, original_size_bytes, metadata) "
#define INSERT_VALUES                                                          \
	"$1::uuid, $2::uuid, $3::uuid, $4::text, $5::text, $6::bigint, "       \
	"$7::jsonb"

static const char insert_sql[] = INSERT_INTO "VALUES (" INSERT_VALUES ")";

/* The row only when its facility has no quota: the check of most
 * uploads folded into their INSERT, no statement more (bench/upload-insert:
 * doc/benchmarks.md).  A facility with a quota, or none, inserts nothing. */
static const char insert_free_sql[] =
	"WITH s AS (SELECT quota_bytes FROM facility_storage "
	"WHERE facility_id = $2::uuid) " INSERT_INTO "SELECT " INSERT_VALUES
	" FROM s WHERE s.quota_bytes IS NULL";

static const char link_sql[] =
	"INSERT INTO upload_tags (upload_id, tag_id, facility_id) "
	"SELECT $1::uuid, id, facility_id FROM tags "
	"WHERE facility_id = $2::uuid AND id = ANY($3::uuid[])";

/* $2 NULL keeps the metadata; the update also moves updated_at. */
static const char update_sql[] =
	"UPDATE uploads SET metadata = COALESCE($2::jsonb, metadata) "
	"WHERE id = $1::uuid";

static const char unlink_sql[] =
	"DELETE FROM upload_tags WHERE upload_id = $1::uuid";

/* Jobs and tag links go with the row (ON DELETE CASCADE). */
static const char delete_sql[] =
	"DELETE FROM uploads WHERE id = $1::uuid RETURNING id";

static const char stream_sql[] =
	"SELECT u.id, u.facility_id, COALESCE(j.id::text, '') AS job_id, "
	"COALESCE(j.target_container, '') AS container FROM uploads u "
	"LEFT JOIN LATERAL (SELECT id, target_container FROM transcode_jobs "
	"WHERE upload_id = u.id AND status = 'completed' ORDER BY "
	"completed_at DESC, id LIMIT 1) j ON true WHERE u.id = $1::uuid";

/* Column name of res's first row into out ("" for SQL NULL). */
static void
col(const PGresult *res, const char *name, char *out, size_t len)
{
	int c = PQfnumber(res, name);

	snprintf(out, len, "%s",
		 PQgetisnull(res, 0, c) ? "" : PQgetvalue(res, 0, c));
}

/* The n ids as a PostgreSQL array literal into lit (IDS_LIT_MAX bytes);
 * false when they do not fit. */
static bool
ids_literal(const char *const *ids, size_t n, char *lit, size_t len)
{
	size_t at = 1;

	lit[0] = '{';
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(lit + at, len - at, "%s%s", i > 0 ? "," : "",
				 ids[i]);

		if (w < 0 || (size_t)w >= len - at)
			return false;
		at += (size_t)w;
	}
	if (at + 2 > len)
		return false;
	memcpy(lit + at, "}", 2);
	return true;
}

/* The tags of t as an array literal into lit (IDS_LIT_MAX bytes). */
static void
tags_literal(const struct upload_tags *t, char lit[IDS_LIT_MAX])
{
	const char *ids[UPLOAD_TAGS_MAX];
	size_t n = t->n < UPLOAD_TAGS_MAX ? t->n : UPLOAD_TAGS_MAX;

	for (size_t i = 0; i < n; i++)
		ids[i] = t->ids[i];
	/* UPLOAD_TAGS_MAX UUIDs always fit. */
	ids_literal(ids, n, lit, IDS_LIT_MAX);
}

enum db_status
upload_ref(struct db *db, const char *id, struct upload_ref *u, bool *found)
{
	PGresult *res = NULL;
	enum db_status st;
	char ms[24];

	memset(u, 0, sizeof(*u));
	*found = false;
	if ((st = db_query_ro(db, &res, ref_sql, 1, &id)) == DB_OK &&
	    PQntuples(res) > 0) {
		*found = true;
		col(res, "id", u->id, sizeof(u->id));
		col(res, "facility_id", u->facility_id, sizeof(u->facility_id));
		col(res, "status", u->status, sizeof(u->status));
		col(res, "duration_ms", ms, sizeof(ms));
		u->duration_ms = ms[0] == '\0' ? -1 : strtoll(ms, NULL, 10);
	}
	PQclear(res);
	return st;
}

enum db_status
upload_get(struct db *db, const char *id, PGresult **rows)
{
	return db_query_ro(db, rows, get_sql, 1, &id);
}

enum db_status
upload_list(struct db *db, const struct upload_filter *f, PGresult **rows,
	    long long *total)
{
	const char *p[4] = {f->facility_id, f->status, f->limit, f->offset};

	return paged_list(db, count_sql, list_sql, 2, p, rows, total);
}

enum db_status
upload_tags_of(struct db *db, const char *const *ids, size_t n, PGresult **rows)
{
	size_t len = n * (UUID_LEN + 1) + 3;
	char *lit = malloc(len);
	const char *param = lit;
	enum db_status st = DB_ERROR;

	*rows = NULL;
	if (lit != NULL && ids_literal(ids, n, lit, len))
		st = db_query_ro(db, rows, tags_of_sql, 1, &param);
	free(lit);
	return st;
}

enum db_status
upload_tags_check(struct db *db, const char *facility_id,
		  const struct upload_tags *t, char foreign[UUID_LEN + 1])
{
	char lit[IDS_LIT_MAX];
	const char *p[2] = {facility_id, lit};
	PGresult *res = NULL;
	enum db_status st = DB_OK;

	foreign[0] = '\0';
	if (t->n == 0)
		return DB_OK;
	tags_literal(t, lit);
	if ((st = db_query_ro(db, &res, foreign_tag_sql, 2, p)) == DB_OK &&
	    PQntuples(res) > 0)
		snprintf(foreign, UUID_LEN + 1, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return st;
}

/* The 7 parameters of the INSERTs of n into p, its size written into
 * size. */
static void
insert_params(const struct upload_new *n, char size[24], const char *p[7])
{
	snprintf(size, 24, "%llu", (unsigned long long)n->size);
	p[0] = n->id;
	p[1] = n->facility_id;
	p[2] = n->api_key_id;
	p[3] = n->filename;
	p[4] = n->format;
	p[5] = size;
	p[6] = n->metadata;
}

enum db_status
upload_insert(struct db *db, const struct upload_new *n)
{
	char size[24];
	const char *p[7];

	insert_params(n, size, p);
	return db_exec(db, insert_sql, 7, p);
}

enum db_status
upload_insert_within(struct db *db, const struct upload_new *n, bool *taken,
		     int64_t *room)
{
	char size[24];
	const char *p[7];
	PGresult *res = NULL;
	struct quota q;
	enum db_status st;
	bool found;

	*taken = false;
	*room = INT64_MAX;
	insert_params(n, size, p);
	if ((st = db_query(db, &res, insert_free_sql, 7, p)) != DB_OK)
		goto out;
	if ((*taken = strtoull(PQcmdTuples(res), NULL, 10) == 1))
		goto out;
	/* A quota (or no row: the plain INSERT then finds no facility). */
	if ((st = quota_lock(db, n->facility_id, &q, &found)) != DB_OK)
		goto out;
	*room = quota_left(&q);
	if (n->size > (uint64_t)*room)
		goto out;
	if ((st = upload_insert(db, n)) == DB_OK)
		*taken = true;
out:
	PQclear(res);
	return st;
}

enum db_status
upload_tags_link(struct db *db, const char *id, const char *facility_id,
		 const struct upload_tags *t, bool *linked)
{
	char lit[IDS_LIT_MAX];
	const char *p[3] = {id, facility_id, lit};
	PGresult *res = NULL;
	enum db_status st;

	*linked = true;
	if (t->n == 0)
		return DB_OK;
	tags_literal(t, lit);
	if ((st = db_query(db, &res, link_sql, 3, p)) == DB_OK)
		*linked = strtoull(PQcmdTuples(res), NULL, 10) == t->n;
	PQclear(res);
	return st;
}

enum db_status
upload_change(struct db *db, const char *id, const char *facility_id,
	      const char *metadata, const struct upload_tags *t, bool *linked)
{
	const char *p[2] = {id, metadata};
	enum db_status st;

	*linked = true;
	if ((st = db_begin(db)) != DB_OK)
		return st;
	if ((st = db_exec(db, update_sql, 2, p)) == DB_OK && t != NULL &&
	    (st = db_exec(db, unlink_sql, 1, p)) == DB_OK)
		st = upload_tags_link(db, id, facility_id, t, linked);
	if (st != DB_OK || !*linked) {
		db_rollback(db);
		return st;
	}
	return db_commit(db);
}

enum db_status
upload_delete(struct db *db, const char *id, bool *found)
{
	PGresult *res = NULL;
	enum db_status st = db_query(db, &res, delete_sql, 1, &id);

	*found = st == DB_OK && PQntuples(res) > 0;
	PQclear(res);
	return st;
}

enum db_status
upload_stream(struct db *db, const char *id, struct upload_stream *s,
	      bool *found)
{
	PGresult *res = NULL;
	enum db_status st;

	memset(s, 0, sizeof(*s));
	*found = false;
	if ((st = db_query_ro(db, &res, stream_sql, 1, &id)) == DB_OK &&
	    PQntuples(res) > 0) {
		*found = true;
		col(res, "id", s->id, sizeof(s->id));
		col(res, "facility_id", s->facility_id, sizeof(s->facility_id));
		col(res, "job_id", s->job_id, sizeof(s->job_id));
		col(res, "container", s->container, sizeof(s->container));
	}
	PQclear(res);
	return st;
}
