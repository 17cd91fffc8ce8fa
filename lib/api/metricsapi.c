/*
 * metricsapi.c - GET /api/metrics (metricsapi.h).
 */
#include "config.h"

#include "api/metricsapi.h"
#include "core/conf.h"
#include "core/log.h"
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

/* Transcode jobs by state; every state is listed, 0 included. */
static const char states_sql[] =
	"SELECT s, (SELECT count(*) FROM transcode_jobs j WHERE j.status = s) "
	"FROM unnest(ARRAY['queued','running','completed','failed',"
	"'cancelled']) AS s";

/* Run time of finished jobs, from their start to their end, in buckets
 * (cumulative, as Prometheus wants them), then the sum and count. */
static const double job_le[] = {1, 5, 10, 30, 60, 120, 300, 600, 1800};
static const char durations_sql[] =
	"SELECT count(*) FILTER (WHERE d <= 1), count(*) FILTER (WHERE d <= 5),"
	" count(*) FILTER (WHERE d <= 10), count(*) FILTER (WHERE d <= 30),"
	" count(*) FILTER (WHERE d <= 60), count(*) FILTER (WHERE d <= 120),"
	" count(*) FILTER (WHERE d <= 300), count(*) FILTER (WHERE d <= 600),"
	" count(*) FILTER (WHERE d <= 1800), count(*), coalesce(sum(d), 0) "
	"FROM (SELECT extract(epoch FROM completed_at - started_at)::float8 "
	"AS d FROM transcode_jobs WHERE status IN ('completed', 'failed') "
	"AND started_at IS NOT NULL AND completed_at IS NOT NULL) f";

/* Appends the PostgreSQL-read metrics to out. */
static enum db_status
render_jobs(struct db *db, struct buf *out)
{
	PGresult *res = NULL;
	enum db_status st;
	size_t nle = sizeof(job_le) / sizeof(job_le[0]);

	if ((st = db_query_ro(db, &res, states_sql, 0, NULL)) != DB_OK)
		goto out;
	buf_puts(out, "# HELP xmhub_transcode_jobs Transcode jobs by state "
		      "(read from PostgreSQL).\n"
		      "# TYPE xmhub_transcode_jobs gauge\n");
	for (int i = 0; i < PQntuples(res); i++)
		buf_printf(out, "xmhub_transcode_jobs{state=\"%s\"} %s\n",
			   PQgetvalue(res, i, 0), PQgetvalue(res, i, 1));
	PQclear(res);
	res = NULL;
	if ((st = db_query_ro(db, &res, durations_sql, 0, NULL)) != DB_OK)
		goto out;
	buf_puts(out,
		 "# HELP xmhub_transcode_job_duration_seconds Run time of "
		 "finished transcode jobs (read from PostgreSQL).\n"
		 "# TYPE xmhub_transcode_job_duration_seconds histogram\n");
	for (size_t i = 0; i < nle; i++)
		buf_printf(out,
			   "xmhub_transcode_job_duration_seconds_bucket"
			   "{le=\"%g\"} %s\n",
			   job_le[i], PQgetvalue(res, 0, (int)i));
	buf_printf(out,
		   "xmhub_transcode_job_duration_seconds_bucket{le=\"+Inf\"} "
		   "%s\nxmhub_transcode_job_duration_seconds_sum %s\n"
		   "xmhub_transcode_job_duration_seconds_count %s\n",
		   PQgetvalue(res, 0, (int)nle),
		   PQgetvalue(res, 0, (int)nle + 1),
		   PQgetvalue(res, 0, (int)nle));
out:
	PQclear(res);
	return st;
}

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
	if ((st = render_jobs(ctx->db, &resp->body)) != DB_OK) {
		resp->body.len = 0;
		http_db_error(resp, st);
	}
}
