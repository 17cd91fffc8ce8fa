/* SPDX-License-Identifier: MIT */
/*
 * facilities.c - the facilities and their endpoints.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "web/dbjson.h"
#include "api/facilities.h"
#include "store/storage.h"
#include "web/scope.h"
#include "web/valid.h"
#include "core/log.h"

/* The API's Facility, from a row of facilities. */
#define COLS "id, name, slug, description, is_active, created_at, updated_at"

static const char SQL_LIST[] =
	"SELECT " COLS " FROM facilities ORDER BY created_at, id";

static const char SQL_GET[] = "SELECT " COLS " FROM facilities WHERE id = $1";

static const char SQL_INSERT[] =
	"INSERT INTO facilities (name, slug, description) "
	"VALUES ($1, $2, $3) RETURNING " COLS;

/* $2, $5: the new name and is_active or NULL to keep them; $3: whether
 * to set the description to $4 (NULL clears it). */
static const char SQL_UPDATE[] =
	"UPDATE facilities SET name = coalesce($2, name), "
	"description = CASE WHEN $3::boolean THEN $4 ELSE description END, "
	"is_active = coalesce($5::boolean, is_active) "
	"WHERE id = $1 RETURNING " COLS;

/* The id as stored (lower case), for the prefix of its objects. */
static const char SQL_DELETE[] =
	"DELETE FROM facilities WHERE id::text = lower($1) OR slug = $1 "
	"RETURNING id";

/* Inserts a facility; on DB_OK *res holds its row (COLS). */
static enum db_status
insert(struct db *db, const char *name, const char *slug, const char *desc,
       PGresult **res)
{
	const char *p[3] = {name, slug, desc};

	return db_query(db, res, SQL_INSERT, 3, p);
}

enum db_status
facilities_create(struct db *db, const char *name, const char *slug,
		  const char *description, char id_out[AUTH_UUID_LEN + 1])
{
	PGresult *res;
	enum db_status st = insert(db, name, slug, description, &res);

	if (st == DB_OK) {
		snprintf(id_out, AUTH_UUID_LEN + 1, "%s",
			 PQgetvalue(res, 0, 0));
		PQclear(res);
	}
	return st;
}

/* Answers a query of at most one row (of facilities or facility_storage):
 * the row, or 404. */
static void
answer_one(struct app_ctx *ctx, enum db_status st, PGresult *res)
{
	if (st != DB_OK)
		app_db_error(ctx, st);
	else if (PQntuples(res) != 1)
		http_error(ctx->resp, 404, "facility not found");
	else
		http_json(ctx->resp, 200, dbjson_row(res, 0));
	PQclear(res);
}

void
facilities_list(struct app_ctx *ctx)
{
	PGresult *res;
	enum db_status st = db_query_ro(ctx->db, &res, SQL_LIST, 0, NULL);

	if (st != DB_OK) {
		app_db_error(ctx, st);
		return;
	}
	http_json(ctx->resp, 200, dbjson_rows(res));
	PQclear(res);
}

void
facilities_post(struct app_ctx *ctx)
{
	static const struct valid_field f[] = {
		{.name = "name",
		 .type = VALID_STRING,
		 .flags = VALID_REQUIRED,
		 .min = 1,
		 .max = FACILITY_NAME_MAX},
		{.name = "slug", .type = VALID_SLUG, .flags = VALID_REQUIRED},
		{.name = "description",
		 .type = VALID_STRING,
		 .flags = VALID_NULLABLE,
		 .min = 0,
		 .max = FACILITY_DESC_MAX},
	};
	struct valid_value v[3];
	json_object *body;
	PGresult *res = NULL;
	enum db_status st;

	if ((body = valid_json_body(ctx->req, f, 3, v, ctx->resp)) == NULL)
		return;
	st = insert(ctx->db, v[0].str, v[1].str, valid_text(&v[2]), &res);
	if (st == DB_CONFLICT)
		http_error(ctx->resp, 409, "a facility with slug %s exists",
			   v[1].str);
	else if (st != DB_OK)
		app_db_error(ctx, st);
	else
		http_json(ctx->resp, 200, dbjson_row(res, 0));
	PQclear(res);
	json_object_put(body);
}

void
facilities_get(struct app_ctx *ctx)
{
	PGresult *res = NULL;
	const char *p[1] = {ctx->params[0]};
	enum db_status st = db_query_ro(ctx->db, &res, SQL_GET, 1, p);

	answer_one(ctx, st, res);
}

void
facilities_patch(struct app_ctx *ctx)
{
	static const struct valid_field f[] = {
		{.name = "name",
		 .type = VALID_STRING,
		 .min = 1,
		 .max = FACILITY_NAME_MAX},
		{.name = "description",
		 .type = VALID_STRING,
		 .flags = VALID_NULLABLE,
		 .min = 0,
		 .max = FACILITY_DESC_MAX},
		{.name = "is_active", .type = VALID_BOOL},
	};
	struct valid_value v[3];
	json_object *body;
	PGresult *res = NULL;
	const char *p[5];
	enum db_status st;

	if ((body = valid_json_body(ctx->req, f, 3, v, ctx->resp)) == NULL)
		return;
	p[0] = ctx->params[0];
	if (!v[0].present && !v[1].present && !v[2].present) {
		/* Nothing to change: the facility as it is. */
		st = db_query_ro(ctx->db, &res, SQL_GET, 1, p);
	} else {
		p[1] = v[0].present ? v[0].str : NULL;
		p[2] = v[1].present ? "true" : "false";
		p[3] = valid_text(&v[1]);
		p[4] = v[2].present ? (v[2].b ? "true" : "false") : NULL;
		st = db_query(ctx->db, &res, SQL_UPDATE, 5, p);
	}
	answer_one(ctx, st, res);
	json_object_put(body);
}

enum db_status
facilities_remove(struct db *db, struct store *store, const char *id,
		  bool *found)
{
	PGresult *res;
	const char *p[1] = {id};
	char detail[256], prefix[AUTH_UUID_LEN + 2];
	enum db_status st;

	*found = false;
	if ((st = db_query(db, &res, SQL_DELETE, 1, p)) != DB_OK)
		return st;
	if (PQntuples(res) == 1) {
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

void
facilities_delete(struct app_ctx *ctx)
{
	enum db_status st;
	bool found;

	/* Without the store (bad settings, logged at start) the delete does
	 * not start. */
	if (ctx->store == NULL) {
		http_error(ctx->resp, 500,
			   "the object store is not configured");
		return;
	}
	if ((st = facilities_remove(ctx->db, ctx->store, ctx->params[0],
				    &found)) != DB_OK)
		app_db_error(ctx, st);
	else if (!found)
		http_error(ctx->resp, 404, "facility not found");
	else
		http_no_content(ctx->resp);
}

/* --- storage: usage, quota, retention -------------------------------- */

/* The API's FacilityStorage, from a row of facility_usage (sql/019: the
 * row with its samples' deltas), or of facility_storage with SAMPLES the
 * expression of its samples' bytes. */
#define STORAGE_COLS_OF(SAMPLES)                                               \
	"facility_id, quota_bytes, upload_bytes + " SAMPLES " AS used_bytes, " \
	"upload_bytes, " SAMPLES " AS sample_bytes, keep_samples_days, "       \
	"keep_uploads_days, updated_at"
#define STORAGE_COLS STORAGE_COLS_OF("sample_bytes")

static const char SQL_STORAGE_GET[] =
	"SELECT " STORAGE_COLS " FROM facility_usage "
	"WHERE facility_id = $1::uuid";

/* $2, $4, $6: whether to set the column to $3, $5, $7 (NULL: no limit). */
static const char SQL_STORAGE_SET[] =
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
		"0))");

void
facilities_storage_get(struct app_ctx *ctx)
{
	PGresult *res;

	if (scope_fetch(ctx, SQL_STORAGE_GET, 0, "facility", &res))
		answer_one(ctx, DB_OK, res);
}

/* A parameter pair of SQL_STORAGE_SET from v: whether it is given, and
 * its value (NULL for null) as text in buf. */
static void
set_param(const struct valid_value *v, const char **given, const char **val,
	  char buf[24])
{
	*given = v->present ? "true" : "false";
	*val = NULL;
	if (v->present && !v->is_null) {
		snprintf(buf, 24, "%lld", v->num);
		*val = buf;
	}
}

void
facilities_storage_patch(struct app_ctx *ctx)
{
	static const struct valid_field f[] = {
		{.name = "quota_bytes",
		 .type = VALID_INT,
		 .flags = VALID_NULLABLE,
		 .min = 0,
		 .max = INT64_MAX},
		{.name = "keep_samples_days",
		 .type = VALID_INT,
		 .flags = VALID_NULLABLE,
		 .min = 1,
		 .max = FACILITY_KEEP_DAYS_MAX},
		{.name = "keep_uploads_days",
		 .type = VALID_INT,
		 .flags = VALID_NULLABLE,
		 .min = 1,
		 .max = FACILITY_KEEP_DAYS_MAX},
	};
	struct valid_value v[3];
	char num[3][24];
	const char *p[7];
	json_object *body;
	PGresult *res = NULL;
	enum db_status st;

	if ((body = valid_json_body(ctx->req, f, 3, v, ctx->resp)) == NULL)
		return;
	p[0] = ctx->params[0];
	for (int i = 0; i < 3; i++)
		set_param(&v[i], &p[1 + 2 * i], &p[2 + 2 * i], num[i]);
	st = db_query(ctx->db, &res, SQL_STORAGE_SET, 7, p);
	answer_one(ctx, st, res);
	json_object_put(body);
}
