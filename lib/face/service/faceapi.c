/* SPDX-License-Identifier: MIT */
/*
 * faceapi.c - the face service's FastCGI loop.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/clock.h"
#include "core/conf.h"
#include "core/log.h"
#include "core/jobmetrics.h"
#include "core/metrics.h"
#include "core/allow.h"
#include "web/app.h"
#include "web/authn.h"
#include "face/service/faceapi.h"
#include "face/service/faceapi_keys.h"
#include "face/service/faceapi_resp.h"
#include "face/service/faceapi_store.h"
#include "web/fcgiproc.h"

/*
 * HTTP Basic of the admin endpoints, with the lockout of an IP after
 * FACEAPI_LOCKOUT_FAILURES failures in a row; false with 401 or 429.
 */
static bool
admin_auth(struct app_ctx *ctx)
{
	struct faceapi *svc = faceapi_of(ctx);
	const char *ip = faceapi_client_ip(ctx);
	int retry = 0;

	if (faceapi_lockout_blocked(svc->limits, ip, clock_real_us(), &retry))
		goto locked;
	if (authn_basic(ctx->req->authorization, svc->conf.admin_user,
			svc->conf.admin_password, svc->conf.admin_hashed)) {
		faceapi_lockout_ok(svc->limits, ip);
		ctx->who.kind = ROUTE_BASIC;
		return true;
	}
	/* The failure that reaches the limit is still a 401; the next
	 * request is the first 429. */
	faceapi_lockout_fail(svc->limits, ip, clock_real_us(), &retry);
	http_header(ctx->resp, "WWW-Authenticate",
		    "Basic realm=\"face-api admin\", charset=\"UTF-8\"");
	http_error(ctx->resp, 401, "invalid admin credentials");
	return false;
locked:
	metrics_add(METRIC_RATE_LIMIT_ADMIN, 1);
	http_header(ctx->resp, "Retry-After", "%d", retry);
	http_error(ctx->resp, 429,
		   "too many failed logins from this address; retry later");
	return false;
}

static void
dispatch(struct app_ctx *ctx, const struct route *table, size_t n)
{
	struct faceapi *svc = faceapi_of(ctx);
	const struct route *r;

	if (faceapi_resp_cors(ctx->req, &svc->conf, ctx->resp))
		return;
	/* Asked as an authorizer, in front of the POSTs of the public
	 * routes, which all take a key (httpd-conf/programs): any program
	 * answers for them, the key is the question. */
	if (ctx->req->authorizer) {
		if (faceapi_keys_valid(ctx))
			app_authorized(ctx);
		return;
	}
	if ((r = app_route(ctx, table, n)) == NULL)
		return;
	if (r->auth == ROUTE_BASIC && !admin_auth(ctx))
		return;
	if (r->auth != ROUTE_PUBLIC && !svc->conf.storage) {
		http_error(ctx->resp, 501,
			   "storage is disabled (FACE_API_STORAGE_ENABLED)");
		return;
	}
	r->fn(ctx);
}

/*
 * Settings, (public program) the image worker, state files and storage.
 * The worker is started before the database connection and the store
 * exist, and exec'd with none of the settings (faceapi_worker.h).
 */
static bool
start(struct faceapi *svc, const char *name, enum faceapi_program prog)
{
	struct faceapi_conf *c = &svc->conf;
	char detail[512], path[FACEAPI_PATH_MAX + 16];

	log_init(name);
	if (!conf_init(detail, sizeof(detail)) ||
	    !faceapi_conf_load(c, detail, sizeof(detail)))
		goto fail;
	/* The metrics file is in the state directory: made before it is
	 * opened (the processes of a new stack start at once). */
	if (mkdir(c->state_dir, 0700) < 0 && errno != EEXIST) {
		log_error("%s: %s", c->state_dir, strerror(errno));
		return false;
	}
	snprintf(path, sizeof(path), "%s/metrics", c->state_dir);
	app_observe_init(name, true, path);
	if (!allow_parse(&svc->metrics_allowed,
			 conf_str("FACE_API_METRICS_ALLOW", ALLOW_LOOPBACK),
			 detail, sizeof(detail))) {
		log_error("FACE_API_METRICS_ALLOW: %s", detail);
		return false;
	}
	if (prog == FACEAPI_PUBLIC) {
		svc->worker = faceapi_worker_open(c, svc->model_note,
						  sizeof(svc->model_note),
						  detail, sizeof(detail));
		if (svc->worker == NULL) {
			snprintf(detail, sizeof(detail), "out of memory");
			goto fail;
		}
		if (!faceapi_worker_model(svc->worker)->loaded)
			log_warn("no face detection model loaded from %s: %s; "
				 "detect and mask answer 503",
				 c->model_dir, detail);
		else if (svc->model_note[0] != '\0')
			log_info("%s", svc->model_note);
	}
	if ((svc->limits = faceapi_limits_open(c->state_dir, c->max_requests,
					       c->max_inference, detail,
					       sizeof(detail))) == NULL ||
	    (c->limits_pg &&
	     !faceapi_limits_shared(svc->limits, c->database_url, detail,
				    sizeof(detail))) ||
	    !faceapi_store_open(svc, detail, sizeof(detail)))
		goto fail;
	return true;
fail:
	log_error("%s", detail);
	return false;
}

static const struct jobmetrics video_jobs = {
	.states = "xmhub_face_video_jobs",
	.durations = "xmhub_face_video_job_duration_seconds",
	.what = "video jobs (mask-video)",
	.states_sql = JOBMETRICS_STATES_SQL("face_video_jobs"),
	.durations_sql = JOBMETRICS_DURATIONS_SQL("face_video_jobs",
						  "started_at", "finished_at"),
};

void
faceapi_metrics(struct app_ctx *ctx)
{
	/* The video jobs are in the database, which storage brings. */
	const struct app_metrics_gate gate = {
		.allowed = &faceapi_of(ctx)->metrics_allowed,
		.setting = "FACE_API_METRICS",
		.refusal =
			"metrics are for FACE_API_METRICS_ALLOW addresses or "
			"the admin's credentials",
		.credentials = admin_auth,
		.jobs = &video_jobs,
	};

	app_metrics(ctx, &gate);
}

int
faceapi_main(const char *name, enum faceapi_program prog,
	     const struct route *table, size_t n)
{
	struct faceapi svc;
	FCGX_Request fcgi;
	int status = 1;

	memset(&svc, 0, sizeof(svc));
	/* fcgiproc_watch_parent(): ends with the web server (fcgiproc.h). */
	if (!fcgiproc_watch_parent() || !start(&svc, name, prog) ||
	    FCGX_Init() != 0 || FCGX_InitRequest(&fcgi, 0, 0) != 0 ||
	    !app_stop_on_signals())
		goto out;
	while (FCGX_Accept_r(&fcgi) >= 0) {
		struct http_req req;
		struct http_resp resp;
		struct app_ctx ctx;
		double t0 = clock_mono_s();
		bool usable;

		usable = app_request(&ctx, &req, &resp, &fcgi, svc.db);
		ctx.app = &svc;

		faceapi_resp_security(&resp);
		if (usable)
			dispatch(&ctx, table, n);
		/* Whatever a handler left held goes back. */
		faceapi_request_end(svc.limits);
		faceapi_inference_end(svc.limits);
		http_send(&resp, &fcgi);
		app_request_done(&req, &resp, t0);
		http_req_free(&req);
		http_resp_free(&resp);
		FCGX_Finish_r(&fcgi);
	}
	status = 0;
out:
	faceapi_worker_close(svc.worker);
	faceapi_store_close(&svc);
	faceapi_limits_close(svc.limits);
	return status;
}
