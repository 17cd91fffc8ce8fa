/* SPDX-License-Identifier: MIT */
/*
 * health.h - liveness and readiness probes (GET /api/health*).
 */
#ifndef XMHUB_HEALTH_H
#define XMHUB_HEALTH_H

#include <stdbool.h>

#include "web/app.h"

/* 200 {"status":"ok"}: the program runs. */
void health_live(struct app_ctx *ctx);

/* The program's init hook: reads XMHUB_READY_INTERVAL (seconds a
 * successful store probe stands for, default 10, 0 to 3600).  False with
 * the reason on stderr for a bad value. */
bool health_init(const char *name);

/*
 * 200 {"status":"ready","database":"ok","storage":"ok"} when the
 * database answers and the object store takes a write and reads it back
 * (store_check on ctx->store, at most once per XMHUB_READY_INTERVAL
 * seconds and process while it succeeds; bad storage settings make it
 * 503, not
 * the program fail) and every endpoint group has a live process
 * (lib/web/fcgiproc, when XMHUB_ALIVE_DIR is set); otherwise 503 with the
 * failing part named ("unavailable"; "programs": the groups with no
 * process) and a detail.
 */
void health_ready(struct app_ctx *ctx);

#endif
