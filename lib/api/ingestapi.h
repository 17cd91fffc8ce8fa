/* SPDX-License-Identifier: MIT */
/*
 * ingestapi.h - the ingest endpoint group (/api/v1/ingest/...): a device
 * (API key with the ingest scope) opens a session naming its device_uid
 * and typed streams, sends XMBP batches, and closes it.  The sessions and
 * batches themselves are lib/domain/ingest; limits and errors:
 * doc/ingest.md.
 */
#ifndef XMHUB_INGESTAPI_H
#define XMHUB_INGESTAPI_H

#include "domain/ingest.h"
#include "web/app.h"

#define INGESTAPI_HTTP_MAX (1u << 20) /* bytes of one batch POSTed */

/* The number of request threads (app_main_threads), set by
 * ingestapi_init(). */
extern int ingestapi_threads;

/* The init hook of the ingest program: reads the settings and starts the
 * process's group commit (lib/domain/ingestq); false (logged) when it
 * cannot.  ingestapi_finish() stops it. */
bool ingestapi_init(const char *name);
void ingestapi_finish(void);

/* The HTTP status of st: 200, 400, 403, 404, 409, 413 (INGEST_QUOTA), 503
 * or 500. */
int ingestapi_status(enum ingest_status st);

/* Answers st (not INGEST_OK) with its status and detail. */
void ingestapi_error(struct http_resp *resp, enum ingest_status st,
		     const char *detail);

/* POST /api/v1/ingest/sessions: {device_uid, name?, streams, metadata?};
 * 201 with the session (the device created when unknown); 403 when the
 * device is deactivated. */
void ingestapi_post_session(struct app_ctx *ctx);

/* POST /api/v1/ingest/sessions/{id}/data: one XMBP batch (at most
 * INGESTAPI_HTTP_MAX bytes, else 413); 200 {accepted_samples,
 * missed_batches} once committed in the process's next round; errors as
 * ingest_commit(); 503 with Retry-After when the queue is full. */
void ingestapi_post_data(struct app_ctx *ctx);

/* POST /api/v1/ingest/sessions/{id}/close: 200 with the closed session
 * (also when it was closed already); 403 another facility's; 404; 409
 * when the session ended in error. */
void ingestapi_post_close(struct app_ctx *ctx);

#endif
