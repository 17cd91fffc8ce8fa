/* SPDX-License-Identifier: MIT */
/*
 * uploads.h - audio uploads (/api/v1/uploads): the multipart upload of
 * devices (API key with the upload scope) and the reading, changing,
 * deleting and retranscoding of uploads by users (JWT).
 *
 * The file part of an upload goes from the request body through
 * lib/codec/multipart straight into the object store (lib/store/storage) under
 * "{facility_id}/uploads/{upload_id}/original", never held whole in
 * memory; the whole body is capped by XMHUB_MAX_UPLOAD_BYTES (413).  The
 * object is written first; the upload row, its tag links and its
 * transcode job (lib/domain/jobs) are then inserted in one transaction
 * (their SQL: lib/domain/upload).  A
 * refused upload leaves nothing behind, stored object included.  Rules
 * and decisions: doc/uploads.md.
 */
#ifndef XMHUB_UPLOADS_H
#define XMHUB_UPLOADS_H

#include <stdbool.h>

#include "domain/upload.h"
#include "web/app.h"

#define UPLOADS_MAX_DEFAULT 2147483648LL /* XMHUB_MAX_UPLOAD_BYTES */
#define UPLOADS_FIELD_MAX 65536 /* bytes of the metadata or tags field */
#define UPLOADS_TAGS_MAX UPLOAD_TAGS_MAX /* tags of one upload */
#define UPLOADS_FORMAT_MAX 16		 /* bytes of original_format */

/*
 * Start-up of the uploads program (app_main's init): reads
 * XMHUB_MAX_UPLOAD_BYTES and the transcode settings (jobs_init), and
 * needs the object store (app_store_needed).  False, with the reason on
 * stderr, when a setting is bad.
 */
bool uploads_init(const char *name);

/*
 * The original_format of filename into out: the lower-cased extension of
 * its last path segment ('/' or '\' separated) when it is 1 to
 * UPLOADS_FORMAT_MAX ASCII letters and digits, else "".
 */
void uploads_format(const char *filename, char out[UPLOADS_FORMAT_MAX + 1]);

/*
 * POST /api/v1/uploads (API key, upload scope): multipart/form-data with
 * file (required), metadata (a JSON object) and tags (a JSON array of
 * tag ids of the key's facility); other fields are ignored.  200 with
 * the Upload (status pending); 400 for a missing file field, invalid
 * multipart or bad metadata or tags; 413 for a body over the limit.
 */
void uploads_post(struct app_ctx *ctx);

/* GET /api/v1/uploads?page=&per_page=&status=: the pagination envelope
 * of upload list items, newest first (a super_admin: every facility's,
 * or ?facility_id=). */
void uploads_list(struct app_ctx *ctx);

/* GET /api/v1/uploads/{id}: 200 the full Upload with its tags; 403
 * another facility's; 404. */
void uploads_get(struct app_ctx *ctx);

/* PATCH /api/v1/uploads/{id}: {metadata?, tags?}, each replacing the
 * whole previous value; 200 Upload; 400 for tags not of the upload's
 * facility; 403; 404. */
void uploads_patch(struct app_ctx *ctx);

/* DELETE /api/v1/uploads/{id}: removes the row, its jobs and tag links
 * (cascade), then every stored object of the upload; 204; 403; 404. */
void uploads_delete(struct app_ctx *ctx);

/* POST /api/v1/uploads/{id}/retranscode: queues a new transcode job
 * with the current settings; 200 {"job_id"}; 403; 404. */
void uploads_retranscode(struct app_ctx *ctx);

#endif
