/* SPDX-License-Identifier: MIT */
/*
 * faceapi.h - the face detection and masking service (doc/face.md): the
 * FastCGI loop its two programs run (cgi-bin/face, cgi-bin/face-admin).
 *
 * The face service is its own origin with its own settings, so it has
 * its own loop beside lib/web/app's: it needs no JWT secret and no database
 * unless storage is on, and every answer it gives, the 404s and 405s
 * included, carries the security headers and CORS of doc/face.md.  Routing
 * (lib/web/route), requests and answers (lib/web/http) are shared.
 *
 * The process's state is the struct faceapi of faceapi_svc.h, filled
 * once at start (faceapi_main) and read by the handlers (faceapi_run.c,
 * faceapi_admin.c, faceapi_keys.c, faceapi_store.c).
 */
#ifndef XMHUB_FACEAPI_H
#define XMHUB_FACEAPI_H

#include <stdbool.h>
#include <stddef.h>

#include "web/route.h"
#include "face/service/faceapi_svc.h"

/*
 * Runs the accept loop of program name (kind prog) with the n routes of
 * table.  Returns the exit status: 0 when the web server ends it, 1 when
 * it cannot start (a bad setting, the state directory, the database URL,
 * the store: said on stderr, which lighttpd keeps).  A model that cannot
 * be loaded does not stop the public program: /health says so and
 * detect/mask answer 503.  A ROUTE_BASIC route takes the admin's HTTP
 * Basic credentials (FACE_API_ADMIN_USER/_PASSWORD) with the IP lockout,
 * and storage (501 without); the public routes are ROUTE_PUBLIC and check
 * their API key themselves, after the rate limit (faceapi_keys_check).
 */
int faceapi_main(const char *name, enum faceapi_program prog,
		 const struct route *table, size_t n);

/*
 * GET /metrics: the face service's counters (lib/core/metrics, summed
 * over its processes) in Prometheus text format, for a client in
 * FACE_API_METRICS_ALLOW (default loopback) or with the admin's Basic
 * credentials; 403 without any, 401 or 429 as the admin endpoints for
 * bad ones; 503 with FACE_API_METRICS=off.  doc/metrics.md.
 */
void faceapi_metrics(struct app_ctx *ctx);

#endif
