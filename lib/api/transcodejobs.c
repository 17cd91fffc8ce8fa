/* SPDX-License-Identifier: MIT */
/*
 * transcodejobs.c - reading and cancelling transcode jobs.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "web/dbjson.h"
#include "domain/jobs.h"
#include "web/page.h"
#include "web/scope.h"
#include "api/transcodejobs.h"
#include "web/valid.h"

#define COLUMNS                                                                \
	"id, upload_id, facility_id, target_format, target_codec, "            \
	"target_container, target_bitrate, target_sample_rate, "               \
	"output_size_bytes, output_duration_ms, status, error_message, "       \
	"attempts, max_attempts, queued_at, started_at, completed_at, "        \
	"worker_id"

static const char *const statuses[] = {"queued", "running",   "completed",
				       "failed", "cancelled", NULL};

#define LIST_WHERE                                                             \
	"WHERE ($1::uuid IS NULL OR facility_id = $1::uuid) "                  \
	"AND ($2::text IS NULL OR status = $2::text) "                         \
	"AND ($3::uuid IS NULL OR upload_id = $3::uuid) "

static const char count_sql[] =
	"SELECT count(*) FROM transcode_jobs " LIST_WHERE;

static const char list_sql[] =
	"SELECT " COLUMNS " FROM transcode_jobs " LIST_WHERE
	"ORDER BY queued_at DESC, id LIMIT $4::integer OFFSET $5::bigint";

void
transcodejobs_list(struct app_ctx *ctx)
{
	static const struct valid_field f[] = {
		{.name = "upload_id", .type = VALID_UUID},
	};
	struct valid_value upload;
	const char *params[5];
	PGresult *count = NULL, *rows = NULL;
	json_object *env;
	struct page pg;
	enum db_status st;

	if (!page_query(ctx, statuses, &pg) || !scope_list(ctx, &params[0]) ||
	    !valid_query(ctx->req, f, 1, &upload, ctx->resp))
		return;
	params[1] = pg.status;
	params[2] = valid_text(&upload);
	params[3] = pg.limit;
	params[4] = pg.offset;
	if ((st = db_query_ro(ctx->db, &count, count_sql, 3, params)) !=
		    DB_OK ||
	    (st = db_query_ro(ctx->db, &rows, list_sql, 5, params)) != DB_OK) {
		app_db_error(ctx, st);
		goto out;
	}
	if ((env = page_envelope(&pg, dbjson_rows(rows),
				 atoll(PQgetvalue(count, 0, 0)))) == NULL)
		http_error(ctx->resp, 500, "internal error");
	else
		http_json(ctx->resp, 200, env);
out:
	PQclear(count);
	PQclear(rows);
}

static const char get_sql[] =
	"SELECT " COLUMNS " FROM transcode_jobs WHERE id = $1::uuid";

void
transcodejobs_get(struct app_ctx *ctx)
{
	const char *params[1] = {ctx->params[0]};
	PGresult *res = NULL;
	enum db_status st;

	if ((st = db_query_ro(ctx->db, &res, get_sql, 1, params)) != DB_OK)
		app_db_error(ctx, st);
	else if (PQntuples(res) == 0)
		http_error(ctx->resp, 404, "transcode job not found");
	else if (scope_check(ctx, PQgetvalue(res, 0, 2)))
		http_json(ctx->resp, 200, dbjson_row(res, 0));
	PQclear(res);
}

static const char facility_sql[] =
	"SELECT facility_id FROM transcode_jobs WHERE id = $1::uuid";

void
transcodejobs_cancel(struct app_ctx *ctx)
{
	char status[16];
	enum db_status st;

	if (!scope_row(ctx, facility_sql, "transcode job"))
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
