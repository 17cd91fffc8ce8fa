/* SPDX-License-Identifier: MIT */
/*
 * faceapi_admin.c - the face service's admin endpoints.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web/dbjson.h"
#include "face/service/faceapi_svc.h"
#include "face/service/faceapi_admin.h"
#include "face/service/faceapi_store.h"
#include "web/valid.h"
#include "core/log.h"

enum { PG_PAGE, PG_PER_PAGE, NPAGE };

static const struct valid_field page_fields[NPAGE] = {
	[PG_PAGE] = {.name = "page",
		     .type = VALID_INT,
		     .min = 1,
		     .max = 1000000000LL},
	[PG_PER_PAGE] = {.name = "per_page",
			 .type = VALID_INT,
			 .min = 1,
			 .max = 100},
};

bool
faceapi_page_query(struct app_ctx *ctx, struct faceapi_page *pg)
{
	struct valid_value v[NPAGE];

	if (!valid_query(ctx->req, page_fields, NPAGE, v, ctx->resp))
		return false;
	pg->page = v[PG_PAGE].present ? v[PG_PAGE].num : 1;
	pg->per_page = v[PG_PER_PAGE].present ? v[PG_PER_PAGE].num : 20;
	snprintf(pg->limit, sizeof(pg->limit), "%lld", pg->per_page);
	snprintf(pg->offset, sizeof(pg->offset), "%lld",
		 (pg->page - 1) * pg->per_page);
	return true;
}

void
faceapi_page_answer(struct app_ctx *ctx, const struct faceapi_page *pg,
		    const PGresult *res, long long total, bool with_pages)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "items", dbjson_rows(res));
	json_object_object_add(o, "total", json_object_new_int64(total));
	json_object_object_add(o, "page", json_object_new_int64(pg->page));
	json_object_object_add(o, "per_page",
			       json_object_new_int64(pg->per_page));
	if (with_pages)
		json_object_object_add(
			o, "pages",
			json_object_new_int64((total + pg->per_page - 1) /
					      pg->per_page));
	http_json(ctx->resp, 200, o);
}

void
faceapi_page_rows(struct app_ctx *ctx, const char *count_sql,
		  const char *list_sql, const char *const *extra, int nextra,
		  bool with_pages)
{
	struct faceapi_page pg;
	const char *params[8];
	PGresult *count = NULL, *res = NULL;
	enum db_status st;

	if (!faceapi_page_query(ctx, &pg))
		return;
	params[0] = pg.limit;
	params[1] = pg.offset;
	for (int i = 0; i < nextra && i < 6; i++)
		params[2 + i] = extra[i];
	if ((st = db_query_ro(ctx->db, &count, count_sql, nextra, extra)) !=
		    DB_OK ||
	    (st = db_query_ro(ctx->db, &res, list_sql, 2 + nextra, params)) !=
		    DB_OK)
		app_db_error(ctx, st);
	else
		faceapi_page_answer(ctx, &pg, res,
				    strtoll(PQgetvalue(count, 0, 0), NULL, 10),
				    with_pages);
	PQclear(count);
	PQclear(res);
}

static const char stats_sql[] =
	"SELECT (SELECT count(*) FROM face_images) AS total_images, "
	"(SELECT count(*) FROM face_jobs) AS total_jobs, "
	"(SELECT coalesce(sum(face_count), 0) FROM face_jobs) "
	"AS total_faces_detected, "
	"(SELECT coalesce(round(avg(inference_ms)::numeric, 2), 0)::float8 "
	"FROM face_jobs) AS avg_inference_ms, "
	"((SELECT coalesce(sum(size_bytes), 0) FROM face_images) + "
	"(SELECT coalesce(sum(output_bytes), 0) FROM face_jobs))::bigint "
	"AS storage_used_bytes, "
	"(SELECT coalesce(jsonb_object_agg(job_type, n), '{}') FROM "
	"(SELECT job_type, count(*) AS n FROM face_jobs GROUP BY job_type) t) "
	"AS jobs_by_type, "
	"(SELECT coalesce(jsonb_object_agg(method, n), '{}') FROM "
	"(SELECT method, count(*) AS n FROM face_jobs WHERE method IS NOT NULL "
	"GROUP BY method) m) AS jobs_by_method";

void
faceapi_admin_stats(struct app_ctx *ctx)
{
	PGresult *res = NULL;
	enum db_status st;

	if ((st = db_query_ro(ctx->db, &res, stats_sql, 0, NULL)) != DB_OK)
		app_db_error(ctx, st);
	else
		http_json(ctx->resp, 200, dbjson_row(res, 0));
	PQclear(res);
}

#define IMAGE_COLUMNS                                                          \
	"i.id, i.filename, i.content_type, i.size_bytes, i.width, i.height, "  \
	"'/api/v1/admin/images/' || i.id || '/download' AS original_url, "     \
	"(SELECT count(*) FROM face_jobs j WHERE j.image_id = i.id) "          \
	"AS job_count, i.created_at"

#define JOB_COLUMNS                                                            \
	"j.id, j.image_id, j.job_type, j.method, j.strength, j.padding, "      \
	"j.output_format, j.quality, j.confidence_threshold, "                 \
	"j.nms_threshold, j.max_faces, j.model, j.face_count, "                \
	"j.inference_ms, j.total_ms, j.output_bytes, "                         \
	"CASE WHEN j.output_key IS NULL THEN NULL ELSE "                       \
	"'/api/v1/admin/jobs/' || j.id || '/download' END AS output_url, "     \
	"j.api_key_id, j.created_at"

void
faceapi_admin_images(struct app_ctx *ctx)
{
	faceapi_page_rows(ctx, "SELECT count(*) FROM face_images",
			  "SELECT " IMAGE_COLUMNS " FROM face_images i "
			  "ORDER BY i.created_at DESC, i.id LIMIT $1 OFFSET $2",
			  NULL, 0, true);
}

/* Runs sql with the route's {id} and answers its first row (or 404
 * "what not found"); make, when not NULL, adds to the object and may
 * fail with its own answer. */
static void
one_row(struct app_ctx *ctx, const char *sql, const char *what,
	bool (*make)(struct app_ctx *ctx, json_object *o))
{
	const char *params[1] = {ctx->params[0]};
	PGresult *res = NULL;
	enum db_status st;
	json_object *o;

	if ((st = db_query_ro(ctx->db, &res, sql, 1, params)) != DB_OK)
		app_db_error(ctx, st);
	else if (PQntuples(res) == 0)
		http_error(ctx->resp, 404, "%s not found", what);
	else {
		o = dbjson_row(res, 0);
		if (make == NULL || make(ctx, o))
			http_json(ctx->resp, 200, o);
		else
			json_object_put(o);
	}
	PQclear(res);
}

/* Adds the image's jobs to its detail. */
static bool
add_jobs(struct app_ctx *ctx, json_object *o)
{
	const char *params[1] = {ctx->params[0]};
	PGresult *res = NULL;
	enum db_status st;

	st = db_query_ro(ctx->db, &res,
			 "SELECT " JOB_COLUMNS " FROM face_jobs j "
			 "WHERE j.image_id = $1::uuid "
			 "ORDER BY j.created_at, j.id",
			 1, params);
	if (st != DB_OK)
		app_db_error(ctx, st);
	else
		json_object_object_add(o, "jobs", dbjson_rows(res));
	PQclear(res);
	return st == DB_OK;
}

void
faceapi_admin_image(struct app_ctx *ctx)
{
	one_row(ctx,
		"SELECT " IMAGE_COLUMNS " FROM face_images i "
		"WHERE i.id = $1::uuid",
		"image", add_jobs);
}

void
faceapi_admin_image_delete(struct app_ctx *ctx)
{
	struct faceapi *svc = faceapi_of(ctx);
	const char *params[1] = {ctx->params[0]};
	PGresult *res = NULL;
	enum db_status st;
	char prefix[96], detail[256];

	/* Rows first: an object left by a crash is garbage, a row
	 * without its object would be a broken download. */
	st = db_query(ctx->db, &res,
		      "WITH j AS (DELETE FROM face_jobs WHERE image_id = "
		      "$1::uuid RETURNING id), i AS (DELETE FROM face_images "
		      "WHERE id = $1::uuid RETURNING id) "
		      "SELECT 'images', id FROM i UNION ALL "
		      "SELECT 'jobs', id FROM j",
		      1, params);
	if (st != DB_OK) {
		app_db_error(ctx, st);
		goto out;
	}
	if (PQntuples(res) == 0) {
		http_error(ctx->resp, 404, "image not found");
		goto out;
	}
	for (int i = 0; i < PQntuples(res); i++) {
		snprintf(prefix, sizeof(prefix), "face/%s/%s/",
			 PQgetvalue(res, i, 0), PQgetvalue(res, i, 1));
		if (store_delete_prefix(svc->store, prefix, detail,
					sizeof(detail)) != STORE_OK)
			log_error("face-admin: deleting %s: %s", prefix,
				  detail);
	}
	http_no_content(ctx->resp);
out:
	PQclear(res);
}

/* Answers a 302 to the object named by sql's one column for {id}. */
static void
download(struct app_ctx *ctx, const char *sql, const char *kind,
	 const char *what)
{
	const char *params[1] = {ctx->params[0]};
	PGresult *res = NULL;
	enum db_status st;

	if ((st = db_query_ro(ctx->db, &res, sql, 1, params)) != DB_OK)
		app_db_error(ctx, st);
	else if (PQntuples(res) == 0)
		http_error(ctx->resp, 404, "%s not found", what);
	else if (PQgetisnull(res, 0, 0))
		http_error(ctx->resp, 404,
			   "a detect job has no processed image");
	else
		faceapi_store_redirect(ctx, kind, ctx->params[0],
				       PQgetvalue(res, 0, 0));
	PQclear(res);
}

void
faceapi_admin_image_download(struct app_ctx *ctx)
{
	download(ctx, "SELECT object_key FROM face_images WHERE id = $1::uuid",
		 "images", "image");
}

enum { J_PAGE, J_PER_PAGE, J_TYPE, J_METHOD, NJOBQ };

static const struct valid_field job_fields[NJOBQ] = {
	[J_PAGE] = {.name = "page",
		    .type = VALID_INT,
		    .min = 1,
		    .max = 1000000000LL},
	[J_PER_PAGE] = {.name = "per_page",
			.type = VALID_INT,
			.min = 1,
			.max = 100},
	[J_TYPE] = {.name = "job_type",
		    .type = VALID_STRING,
		    .min = 1,
		    .max = 32},
	[J_METHOD] = {.name = "method",
		      .type = VALID_STRING,
		      .min = 1,
		      .max = 32},
};

void
faceapi_admin_jobs(struct app_ctx *ctx)
{
	struct valid_value v[NJOBQ];
	enum face_method m;
	const char *extra[2];

	if (!valid_query(ctx->req, job_fields, NJOBQ, v, ctx->resp))
		return;
	extra[0] = valid_text(&v[J_TYPE]);
	extra[1] = valid_text(&v[J_METHOD]);
	if (extra[0] != NULL && strcmp(extra[0], "detect") != 0 &&
	    strcmp(extra[0], "mask") != 0) {
		http_error(ctx->resp, 400, "job_type must be detect or mask");
		return;
	}
	if (extra[1] != NULL && !faceapi_method_parse(extra[1], &m)) {
		http_error(ctx->resp, 400,
			   "method must be gaussian, pixelate, solid or "
			   "elliptical");
		return;
	}
	faceapi_page_rows(ctx,
			  "SELECT count(*) FROM face_jobs WHERE "
			  "($1::text IS NULL OR job_type = $1) AND "
			  "($2::text IS NULL OR method = $2)",
			  "SELECT " JOB_COLUMNS " FROM face_jobs j WHERE "
			  "($3::text IS NULL OR j.job_type = $3) AND "
			  "($4::text IS NULL OR j.method = $4) "
			  "ORDER BY j.created_at DESC, j.id LIMIT $1 OFFSET $2",
			  extra, 2, false);
}

void
faceapi_admin_job(struct app_ctx *ctx)
{
	one_row(ctx,
		"SELECT " JOB_COLUMNS ", j.detections FROM face_jobs j "
		"WHERE j.id = $1::uuid",
		"job", NULL);
}

void
faceapi_admin_job_download(struct app_ctx *ctx)
{
	download(ctx, "SELECT output_key FROM face_jobs WHERE id = $1::uuid",
		 "jobs", "job");
}

/* Serves the object of sql's row (key, content type) through the web
 * server's X-Sendfile, after the signature check. */
static void
file(struct app_ctx *ctx, const char *kind, const char *sql)
{
	struct faceapi *svc = faceapi_of(ctx);
	const char *params[1] = {ctx->params[0]};
	PGresult *res = NULL;
	enum db_status st;
	char path[4096];

	if (!svc->conf.storage) {
		http_error(ctx->resp, 501,
			   "storage is disabled (FACE_API_STORAGE_ENABLED)");
		return;
	}
	if (!faceapi_store_verify(ctx, kind, ctx->params[0]))
		return;
	if ((st = db_query_ro(ctx->db, &res, sql, 1, params)) != DB_OK)
		app_db_error(ctx, st);
	else if (PQntuples(res) == 0 || PQgetisnull(res, 0, 0))
		http_error(ctx->resp, 404, "not found");
	else if (!store_local_path(svc->store, PQgetvalue(res, 0, 0), path,
				   sizeof(path)))
		http_error(ctx->resp, 404, "not a file of this store");
	else {
		http_header(ctx->resp, "Content-Type", "%s",
			    PQgetvalue(res, 0, 1));
		http_header(ctx->resp, "Cache-Control", "private, no-store");
		http_header(ctx->resp, "X-Sendfile", "%s", path);
		ctx->resp->status = 200;
	}
	PQclear(res);
}

void
faceapi_admin_file_image(struct app_ctx *ctx)
{
	file(ctx, "images",
	     "SELECT object_key, content_type FROM face_images "
	     "WHERE id = $1::uuid");
}

void
faceapi_admin_file_job(struct app_ctx *ctx)
{
	file(ctx, "jobs",
	     "SELECT output_key, output_content_type FROM face_jobs "
	     "WHERE id = $1::uuid");
}
