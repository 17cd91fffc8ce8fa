/* SPDX-License-Identifier: MIT */
/*
 * metricsapi.h - GET /api/metrics: the platform's metrics in Prometheus
 * text format (doc/metrics.md).
 */
#ifndef XMHUB_METRICSAPI_H
#define XMHUB_METRICSAPI_H

#include <stdbool.h>

#include "web/app.h"

/*
 * The program's init hook: reads XMHUB_METRICS_ALLOW (the client networks
 * that may read without a token, default "127.0.0.1/32 ::1/128") and
 * XMHUB_JWT_SECRET (for a super_admin token).  False with the reason
 * logged for a bad list.
 */
bool metricsapi_init(const char *name);

/*
 * 200 text/plain; version=0.0.4: the shared counters of every platform
 * program (lib/core/metrics) and, read from PostgreSQL now, transcode
 * jobs by state and the durations of finished ones.  For a client in
 * XMHUB_METRICS_ALLOW or one with a super_admin access token; otherwise
 * 403 (no Authorization) or authn_jwt's 401/403.  503 when the database
 * is down or metrics are off (XMHUB_METRICS=off).
 */
void metricsapi_get(struct app_ctx *ctx);

#endif
