/* SPDX-License-Identifier: MIT */
/*
 * faceapi_svc.h - the face service's process state and what every one of
 * its modules shares: filled once by faceapi_main (faceapi.h), read by
 * the handlers.  Its own header so that the loop and the modules it
 * calls do not include each other.
 */
#ifndef XMHUB_FACEAPI_SVC_H
#define XMHUB_FACEAPI_SVC_H

#include "face/face.h"
#include "face/service/faceapi_conf.h"
#include "face/service/faceapi_limits.h"
#include "face/service/faceapi_worker.h"
#include "store/storage.h"
#include "web/app.h"

/* Which program runs the loop. */
enum faceapi_program { FACEAPI_PUBLIC, FACEAPI_ADMIN_PROGRAM };

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
};

/* The process's service state (valid once faceapi_main has started). */
extern struct faceapi faceapi;

/* The client's address (REMOTE_ADDR; "-" when unknown). */
const char *faceapi_client_ip(const struct app_ctx *ctx);

#endif
