/* SPDX-License-Identifier: MIT */
/*
 * metricsapi.c - GET /api/metrics (metricsapi.h).
 */
#include "config.h"

#include "api/metricsapi.h"
#include "core/conf.h"
#include "core/jobmetrics.h"
#include "core/log.h"
#include "domain/alarms.h"
#include "core/allow.h"

static struct allow allowed;
static const char *secret;

bool
metricsapi_init(const char *name)
{
	char detail[128];

	(void)name;
	secret = conf_str("XMHUB_JWT_SECRET", NULL);
	if (!allow_parse(&allowed,
			 conf_str("XMHUB_METRICS_ALLOW", ALLOW_LOOPBACK),
			 detail, sizeof(detail))) {
		log_error("XMHUB_METRICS_ALLOW: %s", detail);
		return false;
	}
	return true;
}

static const struct jobmetrics transcode_jobs = {
	.states = "xmhub_transcode_jobs",
	.durations = "xmhub_transcode_job_duration_seconds",
	.what = "transcode jobs",
	.states_sql = JOBMETRICS_STATES_SQL("transcode_jobs"),
	.durations_sql = JOBMETRICS_DURATIONS_SQL("transcode_jobs",
						  "started_at", "completed_at"),
};

/* A super_admin's access token. */
static bool
super_admin(struct app_ctx *ctx)
{
	return authn_jwt(ctx->req, ctx->db, secret, ROLE_SUPER_ADMIN, &ctx->who,
			 ctx->resp);
}

void
metricsapi_get(struct app_ctx *ctx)
{
	static const struct app_metrics_gate gate = {
		.allowed = &allowed,
		.setting = "XMHUB_METRICS",
		.refusal = "metrics are for XMHUB_METRICS_ALLOW addresses or a "
			   "super_admin token",
		.credentials = super_admin,
		.jobs = &transcode_jobs,
		.more = alarms_metrics,
	};

	app_metrics(ctx, &gate);
}
