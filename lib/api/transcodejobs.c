/* SPDX-License-Identifier: MIT */
/*
 * transcodejobs.c - reading and cancelling transcode jobs.
 */
#include "config.h"

#include <string.h>

#include "web/dbjson.h"
#include "domain/jobs.h"
#include "web/page.h"
#include "web/scope.h"
#include "api/transcodejobs.h"
#include "web/valid.h"

static const char *const statuses[] = {"queued", "running",   "completed",
				       "failed", "cancelled", NULL};

void
transcodejobs_list(struct app_ctx *ctx)
{
	static const struct valid_field f[] = {
		{.name = "upload_id", .type = VALID_UUID},
	};
	struct valid_value upload;
	struct jobs_filter filter;
	PGresult *rows = NULL;
	json_object *env;
	struct page pg;
	long long total;
	enum db_status st;

	if (!page_query(ctx, statuses, &pg) ||
	    !scope_list(ctx, &filter.facility_id) ||
	    !valid_query(ctx->req, f, 1, &upload, ctx->resp))
		return;
	filter.status = pg.status;
	filter.upload_id = valid_text(&upload);
	filter.limit = pg.limit;
	filter.offset = pg.offset;
	if ((st = jobs_list(ctx->db, &filter, &rows, &total)) != DB_OK)
		app_db_error(ctx, st);
	else if ((env = page_envelope(&pg, dbjson_rows(rows), total)) == NULL)
		http_error(ctx->resp, 500, "internal error");
	else
		http_json(ctx->resp, 200, env);
	PQclear(rows);
}

void
transcodejobs_get(struct app_ctx *ctx)
{
	PGresult *res = NULL;
	enum db_status st = jobs_get(ctx->db, ctx->params[0], &res);

	if (scope_found(ctx, st, res, "transcode job"))
		http_json(ctx->resp, 200, dbjson_row(res, 0));
	PQclear(res);
}

void
transcodejobs_cancel(struct app_ctx *ctx)
{
	char status[16];
	enum db_status st;

	if (!scope_owned(ctx, jobs_get, "transcode job"))
		return;
	if ((st = jobs_cancel(ctx->db, ctx->params[0], status)) != DB_OK)
		app_db_error(ctx, st);
	else if (status[0] == '\0')
		http_error(ctx->resp, 404, "transcode job not found");
	else if (strcmp(status, "queued") != 0 &&
		 strcmp(status, "running") != 0)
		http_error(ctx->resp, 409,
			   "the job is %s: only a queued or running job can be "
			   "cancelled",
			   status);
	else
		http_no_content(ctx->resp);
}
