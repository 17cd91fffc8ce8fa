/* SPDX-License-Identifier: MIT */
/*
 * faceapi_admin.h - the face service's admin endpoints (doc/face.md):
 * statistics, stored images and jobs, their downloads, and the
 * signed-URL file answers of the filesystem store.
 *
 * Every handler here runs behind HTTP Basic with storage on
 * (lib/face/service/faceapi checks both first), except faceapi_admin_file,
 * whose URL carries its own signature (lib/face/service/faceapi_store).
 */
#ifndef XMHUB_FACEAPI_ADMIN_H
#define XMHUB_FACEAPI_ADMIN_H

#include <stdbool.h>

#include <libpq-fe.h>

#include "web/app.h"

/* A checked ?page=&per_page= (page >= 1, per_page 1..100, default 20). */
struct faceapi_page {
	long long page, per_page;
	char limit[24], offset[24]; /* SQL parameters */
};

/* Reads the paging query parameters; false with a 400 answered. */
bool faceapi_page_query(struct app_ctx *ctx, struct faceapi_page *pg);

/*
 * Answers 200 {"items": rows of res, "total", "page", "per_page"} plus
 * "pages" when with_pages.  total is the count of all rows.
 */
void faceapi_page_answer(struct app_ctx *ctx, const struct faceapi_page *pg,
			 const PGresult *res, long long total, bool with_pages);

/*
 * Runs count_sql (no parameters; one row, one count) and list_sql ($1
 * limit, $2 offset, then the nextra parameters of extra) and answers the
 * page; extra goes to count_sql too when count_extra.
 */
void faceapi_page_rows(struct app_ctx *ctx, const char *count_sql,
		       const char *list_sql, const char *const *extra,
		       int nextra, bool with_pages);

/* GET /api/v1/admin/stats: the Stats object. */
void faceapi_admin_stats(struct app_ctx *ctx);

/* GET /api/v1/admin/images: paginated stored image items. */
void faceapi_admin_images(struct app_ctx *ctx);

/* GET /api/v1/admin/images/{id}: the item and its "jobs". */
void faceapi_admin_image(struct app_ctx *ctx);

/* DELETE /api/v1/admin/images/{id}: the image, its jobs and objects. */
void faceapi_admin_image_delete(struct app_ctx *ctx);

/* GET /api/v1/admin/images/{id}/download: 302 to the original. */
void faceapi_admin_image_download(struct app_ctx *ctx);

/* GET /api/v1/admin/jobs?page&per_page&job_type&method: paginated. */
void faceapi_admin_jobs(struct app_ctx *ctx);

/* GET /api/v1/admin/jobs/{id}: the job with its "detections". */
void faceapi_admin_job(struct app_ctx *ctx);

/* GET /api/v1/admin/jobs/{id}/download: 302 to the processed image
 * (404 for a detect job, which has none). */
void faceapi_admin_job_download(struct app_ctx *ctx);

/* GET /api/v1/files/images/{id} and /api/v1/files/jobs/{id} with
 * ?expires=&signature=: the object (X-Sendfile), 403 when the signature
 * is wrong or expired. */
void faceapi_admin_file_image(struct app_ctx *ctx);
void faceapi_admin_file_job(struct app_ctx *ctx);

#endif
