/*
 * health.h - liveness and readiness probes (GET /api/health*).
 */
#ifndef XMHUB_HEALTH_H
#define XMHUB_HEALTH_H

#include "web/app.h"

/* 200 {"status":"ok"}: the program runs. */
void health_live(struct app_ctx *ctx);

/*
 * 200 {"status":"ready","database":"ok","storage":"ok"} when the
 * database answers and the object store takes a write and reads it back
 * (store_check on ctx->store; bad storage settings make it 503, not
 * the program fail); otherwise 503
 * with the failing part named ("unavailable") and a detail.
 */
void health_ready(struct app_ctx *ctx);

#endif
