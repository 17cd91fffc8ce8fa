/* SPDX-License-Identifier: MIT */
/*
 * faceapi.h - the face detection and masking service (doc/face.md): what
 * its programs (cgi-bin/face, face-admin, face-video) change in
 * lib/web/app's loop.
 *
 * The face service is its own origin with its own settings: it needs no
 * JWT secret and no database unless storage is on, and every answer it
 * gives, the 404s and 405s included, carries the security headers and
 * CORS of doc/face.md.  The loop, routing (lib/web/route), requests and
 * answers (lib/web/http) are the platform's.
 *
 * The process's state is the struct faceapi of faceapi_svc.h, made once
 * at start (the start hook) and read by the handlers (faceapi_run.c,
 * faceapi_admin.c, faceapi_keys.c, faceapi_store.c) through ctx->app.
 */
#ifndef XMHUB_FACEAPI_H
#define XMHUB_FACEAPI_H

#include <stdbool.h>
#include <stddef.h>

#include "web/app.h"
#include "web/route.h"
#include "face/service/faceapi_svc.h"

/*
 * The face programs' hooks in lib/web/app's loop (app_main_hooks):
 * faceapi_public for cgi-bin/face (which starts the image worker),
 * faceapi_admin for cgi-bin/face-admin and face-video.  A program cannot
 * start on a bad setting, the state directory, the database URL or the
 * store (said on stderr, which lighttpd keeps); a model that cannot be
 * loaded does not stop the public program: /health says so and
 * detect/mask answer 503.  A ROUTE_BASIC route takes the admin's HTTP
 * Basic credentials (FACE_API_ADMIN_USER/_PASSWORD) with the IP lockout,
 * and storage (501 without); the public routes are ROUTE_PUBLIC and check
 * their API key themselves, after the rate limit (faceapi_keys_check).
 */
extern const struct app_hooks faceapi_public;
extern const struct app_hooks faceapi_admin;

/*
 * GET /metrics: the face service's counters (lib/core/metrics, summed
 * over its processes) in Prometheus text format, for a client in
 * FACE_API_METRICS_ALLOW (default loopback) or with the admin's Basic
 * credentials; 403 without any, 401 or 429 as the admin endpoints for
 * bad ones; 503 with FACE_API_METRICS=off.  doc/metrics.md.
 */
void faceapi_metrics(struct app_ctx *ctx);

#endif
