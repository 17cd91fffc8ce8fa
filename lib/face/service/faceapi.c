/* SPDX-License-Identifier: MIT */
/*
 * faceapi.c - the face service's hooks in lib/web/app's loop.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

/*
 * Every request (app_hooks.begin): the security headers on every answer;
 * CORS, and the preflights answered; asked as an authorizer, in front of
 * the POSTs of the public routes, which all take a key
 * (httpd-conf/programs): any program answers for them, the key is the
 * question.
 */
static bool
begin(struct app_ctx *ctx)
{
	struct faceapi *svc = faceapi_of(ctx);

	faceapi_resp_security(ctx->resp);
	if (ctx->req == NULL ||
	    faceapi_resp_cors(ctx->req, &svc->conf, ctx->resp))
		return false;
	if (ctx->req->authorizer) {
		if (faceapi_keys_valid(ctx))
			app_authorized(ctx);
		return false;
	}
	return true;
}

/* A ROUTE_BASIC route (app_hooks.basic): the admin's, with storage
 * (501 without). */
static bool
admin_route(struct app_ctx *ctx)
{
	if (!admin_auth(ctx))
		return false;
	if (!faceapi_of(ctx)->conf.storage) {
		http_error(ctx->resp, 501,
			   "storage is disabled (FACE_API_STORAGE_ENABLED)");
		return false;
	}
	return true;
}

/* After every request (app_hooks.end): whatever a handler left held goes
 * back. */
static void
end(struct app_ctx *ctx)
{
	struct faceapi *svc = faceapi_of(ctx);

	faceapi_request_end(svc->limits);
	faceapi_inference_end(svc->limits);
}

static void
stop(void *app)
{
	struct faceapi *svc = app;

	faceapi_worker_close(svc->worker);
	faceapi_store_close(svc);
	faceapi_limits_close(svc->limits);
	free(svc);
}

/*
 * Settings, the image worker (public program), state files and storage
 * (app_hooks.start, after conf_init).  The worker is started before the
 * database connection and the store exist, and exec'd with none of the
 * settings (faceapi_worker.h).
 */
static bool
start(const char *name, bool image_worker, void **app, struct db **db)
{
	struct faceapi *svc;
	struct faceapi_conf *c;
	char detail[512], why[256], path[FACEAPI_PATH_MAX + 16];

	if ((svc = calloc(1, sizeof(*svc))) == NULL) {
		log_error("out of memory");
		return false;
	}
	c = &svc->conf;
	if (!faceapi_conf_load(c, detail, sizeof(detail)))
		goto fail;
	/* The metrics file is in the state directory: made before it is
	 * opened (the processes of a new stack start at once). */
	if (mkdir(c->state_dir, 0700) < 0 && errno != EEXIST) {
		snprintf(detail, sizeof(detail), "%.256s: %s", c->state_dir,
			 strerror(errno));
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/metrics", c->state_dir);
	app_observe_init(name, true, path);
	if (!allow_parse(&svc->metrics_allowed,
			 conf_str("FACE_API_METRICS_ALLOW", ALLOW_LOOPBACK),
			 why, sizeof(why))) {
		snprintf(detail, sizeof(detail), "FACE_API_METRICS_ALLOW: %s",
			 why);
		goto fail;
	}
	if (image_worker) {
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
	*app = svc;
	*db = svc->db;
	return true;
fail:
	log_error("%s", detail);
	stop(svc);
	return false;
}

static bool
start_public(const char *name, void **app, struct db **db)
{
	return start(name, true, app, db);
}

static bool
start_admin(const char *name, void **app, struct db **db)
{
	return start(name, false, app, db);
}

const struct app_hooks faceapi_public = {
	.start = start_public,
	.stop = stop,
	.begin = begin,
	.basic = admin_route,
	.end = end,
};

const struct app_hooks faceapi_admin = {
	.start = start_admin,
	.stop = stop,
	.begin = begin,
	.basic = admin_route,
	.end = end,
};

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
