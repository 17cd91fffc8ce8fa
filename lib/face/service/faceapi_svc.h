/* SPDX-License-Identifier: MIT */
/*
 * faceapi_svc.h - the face service's process state and what every one of
 * its modules shares: made once by the start hook of faceapi.h, which
 * lib/web/app hands to each handler in ctx->app (faceapi_of); no module
 * keeps it in a global.  Its own header so that the loop and the modules it
 * calls do not include each other.
 */
#ifndef XMHUB_FACEAPI_SVC_H
#define XMHUB_FACEAPI_SVC_H

#include "face/face.h"
#include "face/service/faceapi_conf.h"
#include "face/service/faceapi_limits.h"
#include "face/service/faceapi_worker.h"
#include "store/storage.h"
#include "core/allow.h"
#include "web/app.h"

#define FACEAPI_URL_KEY_LEN 64 /* hex digits of a made URL key */

struct faceapi {
	struct faceapi_conf conf;
	struct faceapi_worker *worker; /* public program: decodes, detects,
					* masks, encodes (NULL: admin) */
	char model_note[256];	       /* why another model (or none) is used */
	struct faceapi_limits *limits;
	struct db *db;	      /* NULL unless storage is on */
	struct store *store;  /* NULL unless storage is on */
	struct store *public; /* S3 presigning for FACE_API_S3_PUBLIC_ENDPOINT
			       * (NULL: use store) */
	const char *url_key;  /* HMAC key of the filesystem store's signed
			       * URLs (lib/face/service/faceapi_store) */
	char url_key_made[FACEAPI_URL_KEY_LEN + 1]; /* url_key when made */
	struct allow metrics_allowed; /* FACE_API_METRICS_ALLOW: who reads
				       * /metrics without credentials */
};

/* The service state a handler runs with (ctx->app). */
static inline struct faceapi *
faceapi_of(const struct app_ctx *ctx)
{
	return ctx->app;
}

/* The client's address (REMOTE_ADDR; "-" when unknown). */
const char *faceapi_client_ip(const struct app_ctx *ctx);

#endif
