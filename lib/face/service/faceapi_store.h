/* SPDX-License-Identifier: MIT */
/*
 * faceapi_store.h - what the face service keeps when
 * FACE_API_STORAGE_ENABLED: each detect or mask run as an image row and
 * a job row (sql/004_face.sql) with their objects under face/ in the
 * object store (lib/store/storage), and the expiring download URLs of those
 * objects.
 *
 * Downloads: the S3 store answers with its own presigned URL (through
 * FACE_API_S3_PUBLIC_ENDPOINT when set).  The filesystem store has none,
 * so the service signs its own: /api/v1/files/{images|jobs}/{id}
 * ?expires=UNIX&signature=HEX, HMAC-SHA256 over "{kind}/{id}\n{expires}"
 * with FACE_API_URL_SECRET, or when unset a random key generated once
 * into FACE_API_STATE_DIR/url-secret (0600), shared by every process.
 */
#ifndef XMHUB_FACEAPI_STORE_H
#define XMHUB_FACEAPI_STORE_H

#include <stdbool.h>
#include <stddef.h>

#include "web/app.h"
#include "face/service/faceapi_svc.h"
#include "face/service/faceapi_params.h"
#include "face/service/faceapi_resp.h"

#define FACEAPI_SIG_HEX 65 /* 64 hex digits + NUL */

/*
 * Opens what storage needs into f (after faceapi_conf_load): the
 * database handle, the store (and a second one for presigning with
 * FACE_API_S3_PUBLIC_ENDPOINT), the URL key.  False and detail on a bad
 * setting or an unusable state directory.
 */
bool faceapi_store_open(struct faceapi *f, char *detail, size_t dlen);

/* Frees what faceapi_store_open() made. */
void faceapi_store_close(struct faceapi *f);

/*
 * Records one run: the upload's image (and the mask output, when output
 * is not NULL, of format out_fmt) into the store, then the image and job
 * rows in one transaction; fills r->image_id and r->job_id.  key_id is
 * the API key used ("" for none).  False with 503 or 500 answered (the
 * objects written are removed again).
 */
bool faceapi_store_record(struct app_ctx *ctx, const struct faceapi_upload *up,
			  struct faceapi_result *r, const struct buf *output,
			  enum face_fmt out_fmt, const char *key_id);

/* The signature of kind ("images", "jobs"), id and expires (hex). */
void faceapi_store_sign(const char *key, const char *kind, const char *id,
			long long expires, char out[FACEAPI_SIG_HEX]);

/*
 * Answers 302 to a download URL of object key, valid FACE_API_URL_TTL
 * seconds: the S3 presigned URL, or the signed /api/v1/files/{kind}/{id}
 * of the filesystem store.
 */
void faceapi_store_redirect(struct app_ctx *ctx, const char *kind,
			    const char *id, const char *key);

/*
 * Checks the ?expires=&signature= of a signed file URL for kind and id.
 * False with 403 answered when missing, wrong or expired.
 */
bool faceapi_store_verify(struct app_ctx *ctx, const char *kind,
			  const char *id);

#endif
