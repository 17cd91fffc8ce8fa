/*
 * faceapi.h - the face detection and masking service (spec 3): the
 * FastCGI loop its two programs run (cgi-bin/face, cgi-bin/face-admin).
 *
 * The face service is its own origin with its own settings, so it has
 * its own loop beside lib/app's: it needs no JWT secret and no database
 * unless storage is on, and every answer it gives, the 404s and 405s
 * included, carries the security headers and CORS of spec 3.  Routing
 * (lib/route), requests and answers (lib/http) are shared.
 *
 * The process's state is the struct faceapi below, filled once at start
 * (faceapi_main) and read by the handlers (lib/faceapi_run.c,
 * faceapi_admin.c, faceapi_keys.c).
 */
#ifndef XMHUB_FACEAPI_H
#define XMHUB_FACEAPI_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"
#include "face/face.h"
#include "faceapi_conf.h"
#include "faceapi_limits.h"
#include "storage.h"

/*
 * Route auth of the admin endpoints: HTTP Basic with
 * FACE_API_ADMIN_USER/_PASSWORD, the IP lockout, and storage required
 * (501 without).  lib/route has no such kind; in a face program's table
 * ROUTE_JWT means this.  The public endpoints are ROUTE_PUBLIC and check
 * their API key themselves, after the rate limit (faceapi_keys_check).
 */
#define FACEAPI_ADMIN ROUTE_JWT

/* Which program runs the loop. */
enum faceapi_program { FACEAPI_PUBLIC, FACEAPI_ADMIN_PROGRAM };

struct faceapi {
	struct faceapi_conf conf;
	struct face_model *model; /* public program; NULL when none loaded */
	char model_note[256];	  /* why another model (or none) is used */
	struct faceapi_limits *limits;
	struct db *db;	      /* NULL unless storage is on */
	struct store *store;  /* NULL unless storage is on */
	struct store *public; /* S3 presigning for FACE_API_S3_PUBLIC_ENDPOINT
			       * (NULL: use store) */
	const char *url_key;  /* HMAC key of the filesystem store's signed
			       * URLs (lib/faceapi_store) */
};

/* The process's service state (valid once faceapi_main has started). */
extern struct faceapi faceapi;

/*
 * Runs the accept loop of program name (kind prog) with the n routes of
 * table.  Returns the exit status: 0 when the web server ends it, 1 when
 * it cannot start (a bad setting, the state directory, the database URL,
 * the store: said on stderr, which lighttpd keeps).  A model that cannot
 * be loaded does not stop the public program: /health says so and
 * detect/mask answer 503.
 */
int faceapi_main(const char *name, enum faceapi_program prog,
		 const struct route *table, size_t n);

/* The client's address (REMOTE_ADDR; "-" when unknown). */
const char *faceapi_client_ip(const struct app_ctx *ctx);

#endif
