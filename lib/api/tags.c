/* SPDX-License-Identifier: MIT */
/*
 * tags.c - tags of a facility.
 */
#include "config.h"

#include "web/dbjson.h"
#include "web/scope.h"
#include "api/tags.h"
#include "web/valid.h"

static const char list_sql[] =
	"SELECT id, facility_id, name, color, created_at FROM tags "
	"WHERE $1::uuid IS NULL OR facility_id = $1::uuid "
	"ORDER BY name, id";

void
tags_list(struct app_ctx *ctx)
{
	scope_list_rows(ctx, list_sql);
}

enum { F_NAME, F_COLOR, F_FACILITY, NFIELDS };

static const struct valid_field post_fields[NFIELDS] = {
	[F_NAME] = {.name = "name",
		    .type = VALID_STRING,
		    .flags = VALID_REQUIRED,
		    .min = 1,
		    .max = TAGS_NAME_MAX},
	[F_COLOR] = {.name = "color",
		     .type = VALID_COLOR,
		     .flags = VALID_NULLABLE},
	[F_FACILITY] = {.name = "facility_id",
			.type = VALID_UUID,
			.flags = VALID_NULLABLE},
};

static const char insert_sql[] =
	"INSERT INTO tags (facility_id, name, color) "
	"VALUES ($1::uuid, $2::text, $3::text) "
	"RETURNING id, facility_id, name, color, created_at";

void
tags_post(struct app_ctx *ctx)
{
	struct valid_value v[NFIELDS];
	const char *params[3];
	PGresult *res = NULL;
	json_object *body;
	enum db_status st;

	if ((body = valid_json_body(ctx->req, post_fields, NFIELDS, v,
				    ctx->resp)) == NULL)
		return;
	if (!scope_create(ctx, &v[F_FACILITY], &params[0]))
		goto out;
	params[1] = v[F_NAME].str;
	params[2] = valid_text(&v[F_COLOR]);
	if ((st = db_query(ctx->db, &res, insert_sql, 3, params)) == DB_OK)
		http_json(ctx->resp, 200, dbjson_row(res, 0));
	else
		scope_write_error(ctx, st,
				  "a tag of that name exists in this facility");
out:
	PQclear(res);
	json_object_put(body);
}

static const char facility_sql[] =
	"SELECT facility_id FROM tags WHERE id = $1::uuid";
/* upload_tags rows go with it (ON DELETE CASCADE); uploads stay. */
static const char delete_sql[] = "DELETE FROM tags WHERE id = $1::uuid";

void
tags_delete(struct app_ctx *ctx)
{
	const char *params[1] = {ctx->params[0]};
	PGresult *res = NULL;
	enum db_status st;

	if (!scope_row(ctx, facility_sql, "tag"))
		return;
	if ((st = db_query(ctx->db, &res, delete_sql, 1, params)) != DB_OK) {
		app_db_error(ctx, st);
		return;
	}
	PQclear(res);
	http_no_content(ctx->resp);
}
