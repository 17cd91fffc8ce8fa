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
#include "web/allow.h"

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

void
metricsapi_get(struct app_ctx *ctx)
{
	struct http_resp *resp = ctx->resp;
	enum db_status st;

	if (!allow_match(&allowed, ctx->req->remote_addr)) {
		if (ctx->req->authorization == NULL) {
			http_error(resp, 403,
				   "metrics are for XMHUB_METRICS_ALLOW "
				   "addresses or a super_admin token");
			return;
		}
		if (!authn_jwt(ctx->req, ctx->db, secret, ROLE_SUPER_ADMIN,
			       &ctx->who, resp))
			return;
	}
	if (!app_metrics(resp, "XMHUB_METRICS"))
		return;
	if ((st = jobmetrics_render(ctx->db, &transcode_jobs, &resp->body)) !=
		    DB_OK ||
	    (st = alarms_metrics(ctx->db, &resp->body)) != DB_OK) {
		resp->body.len = 0;
		http_db_error(resp, st);
	}
}
