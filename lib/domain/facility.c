/* SPDX-License-Identifier: MIT */
/*
 * facility.c - the facilities: their SQL, storage settings and removal.
 */
#include "config.h"

#include <stdio.h>

#include "core/log.h"
#include "domain/facility.h"

/* The API's Facility, from a row of facilities. */
#define COLS "id, name, slug, description, is_active, created_at, updated_at"

static const char list_sql[] =
	"SELECT " COLS " FROM facilities ORDER BY created_at, id";

static const char get_sql[] = "SELECT " COLS " FROM facilities WHERE id = $1";

static const char insert_sql[] =
	"INSERT INTO facilities (name, slug, description) "
	"VALUES ($1, $2, $3) RETURNING " COLS;

/* $2, $5: the new name and is_active or NULL to keep them; $3: whether
 * to set the description to $4 (NULL clears it). */
static const char update_sql[] =
	"UPDATE facilities SET name = coalesce($2, name), "
	"description = CASE WHEN $3::boolean THEN $4 ELSE description END, "
	"is_active = coalesce($5::boolean, is_active) "
	"WHERE id = $1 RETURNING " COLS;

/* The id as stored (lower case), for the prefix of its objects. */
static const char delete_sql[] =
	"DELETE FROM facilities WHERE id::text = lower($1) OR slug = $1 "
	"RETURNING id";

/* The API's FacilityStorage, from a row of facility_usage (sql/019,
 * sql/023: the row with its samples' deltas and its active sessions'
 * pending bytes), or of facility_storage with SAMPLES the expression of
 * its samples' bytes. */
#define STORAGE_COLS_OF(SAMPLES)                                               \
	"facility_id, quota_bytes, upload_bytes + " SAMPLES " AS used_bytes, " \
	"upload_bytes, " SAMPLES " AS sample_bytes, keep_samples_days, "       \
	"keep_uploads_days, updated_at"
#define STORAGE_COLS STORAGE_COLS_OF("sample_bytes")

static const char storage_sql[] = "SELECT " STORAGE_COLS " FROM facility_usage "
				  "WHERE facility_id = $1::uuid";

/* $2, $4, $6: whether to set the column to $3, $5, $7 (NULL: no limit). */
static const char storage_set_sql[] =
	"UPDATE facility_storage SET "
	"quota_bytes = CASE WHEN $2::boolean THEN $3::bigint "
	"ELSE quota_bytes END, "
	"keep_samples_days = CASE WHEN $4::boolean THEN $5::integer "
	"ELSE keep_samples_days END, "
	"keep_uploads_days = CASE WHEN $6::boolean THEN $7::integer "
	"ELSE keep_uploads_days END, updated_at = now() "
	"WHERE facility_id = $1::uuid RETURNING " STORAGE_COLS_OF(
		"(sample_bytes + coalesce((SELECT sum(d.sample_bytes) "
		"FROM facility_storage_delta d WHERE d.facility_id = "
		"$1::uuid), "
		"0) + facility_storage_pending($1::uuid))");

enum db_status
facility_list(struct db *db, PGresult **rows)
{
	return db_query_ro(db, rows, list_sql, 0, NULL);
}

enum db_status
facility_get(struct db *db, const char *id, PGresult **rows)
{
	return db_query_ro(db, rows, get_sql, 1, &id);
}

enum db_status
facility_create(struct db *db, const char *name, const char *slug,
		const char *description, PGresult **rows)
{
	const char *p[3] = {name, slug, description};

	return db_query(db, rows, insert_sql, 3, p);
}

enum db_status
facility_update(struct db *db, const char *id, const struct facility_change *c,
		PGresult **rows)
{
	const char *p[5] = {
		id, c->name, c->set_description ? "true" : "false",
		c->description,
		c->is_active < 0 ? NULL : (c->is_active ? "true" : "false")};

	/* Nothing to change: the facility as it is. */
	if (c->name == NULL && !c->set_description && c->is_active < 0)
		return facility_get(db, id, rows);
	return db_query(db, rows, update_sql, 5, p);
}

enum db_status
facility_remove(struct db *db, struct store *store, const char *id, bool *found)
{
	PGresult *res = NULL;
	char detail[256], prefix[AUTH_UUID_LEN + 2];
	enum db_status st;

	*found = false;
	if ((st = db_query(db, &res, delete_sql, 1, &id)) == DB_OK &&
	    PQntuples(res) == 1) {
		*found = true;
		/* Every object of a facility is under its id (uploads,
		 * transcodes, sample chunks).  After the rows are gone,
		 * objects left by a failure are orphans: logged. */
		snprintf(prefix, sizeof(prefix), "%s/", PQgetvalue(res, 0, 0));
		if (store_delete_prefix(store, prefix, detail,
					sizeof(detail)) != STORE_OK)
			log_error("facilities: deleting %s: %s", prefix,
				  detail);
	}
	PQclear(res);
	return st;
}

enum db_status
facility_storage(struct db *db, const char *id, PGresult **rows)
{
	return db_query_ro(db, rows, storage_sql, 1, &id);
}

/* A setting's pair of storage_set_sql's parameters: whether it is set,
 * and its value (NULL for no limit) as text in buf. */
static void
limit_params(const struct facility_limit *l, const char **set, const char **val,
	     char buf[24])
{
	*set = l->set ? "true" : "false";
	*val = NULL;
	if (l->set && l->limited) {
		snprintf(buf, 24, "%lld", l->value);
		*val = buf;
	}
}

enum db_status
facility_storage_set(struct db *db, const char *id,
		     const struct facility_storage_change *c, PGresult **rows)
{
	const struct facility_limit *l[3] = {
		&c->quota_bytes, &c->keep_samples_days, &c->keep_uploads_days};
	char num[3][24];
	const char *p[7] = {id};

	for (int i = 0; i < 3; i++)
		limit_params(l[i], &p[1 + 2 * i], &p[2 + 2 * i], num[i]);
	return db_query(db, rows, storage_set_sql, 7, p);
}
