/* SPDX-License-Identifier: MIT */
/*
 * tags.c - tags of a facility.
 */
#include "config.h"

#include "domain/tag.h"
#include "web/dbjson.h"
#include "web/scope.h"
#include "api/tags.h"
#include "web/valid.h"

void
tags_list(struct app_ctx *ctx)
{
	scope_list_answer(ctx, tag_list);
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

void
tags_post(struct app_ctx *ctx)
{
	struct valid_value v[NFIELDS];
	const char *facility_id;
	PGresult *res = NULL;
	json_object *body;
	enum db_status st;

	if ((body = valid_json_body(ctx->req, post_fields, NFIELDS, v,
				    ctx->resp)) == NULL)
		return;
	if (!scope_create(ctx, &v[F_FACILITY], &facility_id))
		goto out;
	if ((st = tag_create(ctx->db, facility_id, v[F_NAME].str,
			     valid_text(&v[F_COLOR]), &res)) == DB_OK)
		http_json(ctx->resp, 200, dbjson_row(res, 0));
	else
		scope_write_error(ctx, st,
				  "a tag of that name exists in this facility");
out:
	PQclear(res);
	json_object_put(body);
}

void
tags_delete(struct app_ctx *ctx)
{
	enum db_status st;

	if (!scope_owned(ctx, tag_facility, "tag"))
		return;
	if ((st = tag_delete(ctx->db, ctx->params[0])) != DB_OK)
		app_db_error(ctx, st);
	else
		http_no_content(ctx->resp);
}
