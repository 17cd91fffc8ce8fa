/* SPDX-License-Identifier: MIT */
/*
 * facilities.c - the facilities and their endpoints.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "domain/facility.h"
#include "web/dbjson.h"
#include "api/facilities.h"
#include "web/scope.h"
#include "web/valid.h"
#include "core/log.h"

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
	PGresult *res = NULL;
	enum db_status st = facility_list(ctx->db, &res);

	if (st != DB_OK)
		app_db_error(ctx, st);
	else
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
	st = facility_create(ctx->db, v[0].str, v[1].str, valid_text(&v[2]),
			     &res);
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
	enum db_status st = facility_get(ctx->db, ctx->params[0], &res);

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
	struct facility_change c;
	json_object *body;
	PGresult *res = NULL;
	enum db_status st;

	if ((body = valid_json_body(ctx->req, f, 3, v, ctx->resp)) == NULL)
		return;
	c.name = v[0].present ? v[0].str : NULL;
	c.set_description = v[1].present;
	c.description = valid_text(&v[1]);
	c.is_active = v[2].present ? v[2].b : -1;
	st = facility_update(ctx->db, ctx->params[0], &c, &res);
	answer_one(ctx, st, res);
	json_object_put(body);
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
	if ((st = facility_remove(ctx->db, ctx->store, ctx->params[0],
				  &found)) != DB_OK)
		app_db_error(ctx, st);
	else if (!found)
		http_error(ctx->resp, 404, "facility not found");
	else
		http_no_content(ctx->resp);
}

/* --- storage: usage, quota, retention -------------------------------- */

void
facilities_storage_get(struct app_ctx *ctx)
{
	PGresult *res = NULL;
	enum db_status st = facility_storage(ctx->db, ctx->params[0], &res);

	if (scope_found(ctx, st, res, "facility"))
		http_json(ctx->resp, 200, dbjson_row(res, 0));
	PQclear(res);
}

/* A storage setting of a change from v (absent: not set; null: no
 * limit). */
static struct facility_limit
limit_of(const struct valid_value *v)
{
	return (struct facility_limit){.set = v->present,
				       .limited = v->present && !v->is_null,
				       .value = v->num};
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
	struct facility_storage_change c;
	json_object *body;
	PGresult *res = NULL;
	enum db_status st;

	if ((body = valid_json_body(ctx->req, f, 3, v, ctx->resp)) == NULL)
		return;
	c.quota_bytes = limit_of(&v[0]);
	c.keep_samples_days = limit_of(&v[1]);
	c.keep_uploads_days = limit_of(&v[2]);
	st = facility_storage_set(ctx->db, ctx->params[0], &c, &res);
	answer_one(ctx, st, res);
	json_object_put(body);
}
