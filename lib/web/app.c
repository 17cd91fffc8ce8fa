/*
 * app.c - the FastCGI application every cgi-bin program runs.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "web/app.h"
#include "web/authn.h"
#include "core/conf.h"
#include "core/log.h"
#include "core/metrics.h"
#include "store/storage.h"

/* The process's object store (ctx->store); whether its handlers need it
 * (app_store_needed). */
static struct store *store;
static bool store_needed;
/* XMHUB_LOG_REQUESTS: a line per request (5xx ones are always logged). */
static bool log_requests = true;

void
app_db_error(struct app_ctx *ctx, enum db_status status)
{
	http_db_error(ctx->resp, status);
}

/* Routes, authenticates and runs one request. */
static void
dispatch(struct app_ctx *ctx, const struct route *table, size_t n)
{
	const struct route *r = app_route(ctx, table, n);

	if (r == NULL)
		return;
	if (r->auth == ROUTE_JWT &&
	    !authn_jwt(ctx->req, ctx->db, ctx->jwt_secret, r->min_role,
		       &ctx->who, ctx->resp))
		return;
	if (r->auth == ROUTE_API_KEY &&
	    !authn_api_key(ctx->req, ctx->db, r->scope, &ctx->who, ctx->resp))
		return;
	if (store_needed && store == NULL) {
		http_error(ctx->resp, 503, "the object store is unavailable");
		return;
	}
	r->fn(ctx);
}

int
app_main(const char *name, const struct route *table, size_t n,
	 bool (*init)(const char *name))
{
	FCGX_Request fcgi;
	struct db *db;
	char detail[256];
	const char *secret = NULL, *url;
	bool need_jwt = false;

	log_init(name);
	if (!conf_init(detail, sizeof(detail))) {
		log_error("%s", detail);
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		need_jwt |= table[i].auth == ROUTE_JWT;
	/* A JWT program without its secret would accept nothing; say so. */
	if (need_jwt &&
	    ((secret = conf_str("XMHUB_JWT_SECRET", NULL)) == NULL ||
	     strlen(secret) < AUTH_JWT_SECRET_MIN)) {
		log_error("XMHUB_JWT_SECRET must be set, %d characters or "
			  "more",
			  AUTH_JWT_SECRET_MIN);
		return 1;
	}
	if ((url = conf_str("XMHUB_DATABASE_URL", NULL)) == NULL) {
		log_error("XMHUB_DATABASE_URL is not set");
		return 1;
	}
	/* Bad store settings stop only the programs that need the store
	 * (app_store_needed); readiness reports them. */
	if ((store = store_open_env(detail, sizeof(detail))) == NULL)
		log_error("object store: %s", detail);
	app_observe_init(name, "XMHUB_", APP_METRICS_FILE);
	if (init != NULL && !init(name)) {
		store_close(store);
		return 1;
	}
	if ((db = db_new(url)) == NULL || FCGX_Init() != 0 ||
	    FCGX_InitRequest(&fcgi, 0, 0) != 0 || !app_stop_on_signals()) {
		log_error("cannot start");
		db_free(db);
		store_close(store);
		return 1;
	}
	while (FCGX_Accept_r(&fcgi) >= 0) {
		struct http_req req;
		struct http_resp resp;
		struct app_ctx ctx;
		struct timespec t0;

		bool ok;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		ok = app_request(&ctx, &req, &resp, &fcgi, db);
		app_request_id(&fcgi, &resp);
		if (ok) {
			ctx.jwt_secret = secret;
			ctx.store = store;
			dispatch(&ctx, table, n);
			/* Before the answer: the client may ask another
			 * process next. */
			authn_settle(db);
		}
		http_send(&resp, &fcgi);
		app_request_done(&req, &resp, &t0);
		http_req_free(&req);
		http_resp_free(&resp);
		FCGX_Finish_r(&fcgi);
	}
	db_free(db);
	store_close(store);
	return 0;
}

void
app_observe_init(const char *name, const char *prefix, const char *file)
{
	char detail[256], metrics[64], log[64], path[64];

	snprintf(metrics, sizeof(metrics), "%sMETRICS", prefix);
	snprintf(log, sizeof(log), "%sLOG_REQUESTS", prefix);
	snprintf(path, sizeof(path), "%sMETRICS_FILE", prefix);
	log_requests = strcasecmp(conf_str(log, "on"), "off") != 0;
	if (strcasecmp(conf_str(metrics, "on"), "off") != 0 &&
	    !metrics_init(conf_str(path, file), name, detail, sizeof(detail)))
		log_error("metrics: %s (not counted)", detail);
}

/*
 * A new request id in *id: a UUID (version 4 form) whose first 80 bits are
 * random, drawn once per process, and whose last 48 count the process's
 * requests: unique without a getrandom(2) per request.
 */
static void
new_request_id(char id[AUTH_UUID_LEN + 1])
{
	static char base[AUTH_UUID_LEN + 1];
	static unsigned long long n;

	if (base[0] == '\0' && !auth_uuid(base))
		snprintf(base, sizeof(base), "%s",
			 "00000000-0000-4000-8000-000000000000");
	memcpy(id, base, 24);
	/* The base's own last 48 bits, counted on. */
	snprintf(id + 24, AUTH_UUID_LEN + 1 - 24, "%012llx",
		 (strtoull(base + 24, NULL, 16) + n++) & 0xffffffffffffULL);
}

void
app_request_id(FCGX_Request *fcgi, struct http_resp *resp)
{
	const char *in = FCGX_GetParam("HTTP_X_REQUEST_ID", fcgi->envp);
	char id[AUTH_UUID_LEN + 1];

	if (in == NULL || !log_request_id_valid(in)) {
		new_request_id(id);
		in = id;
	}
	log_request_id(in);
	http_header(resp, "X-Request-Id", "%s", in);
}

void
app_request_done(const struct http_req *req, const struct http_resp *resp,
		 const struct timespec *t0)
{
	struct timespec t1;
	double s;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0->tv_sec) +
	    (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
	metrics_request(resp->status, s);
	if (log_requests || resp->status >= 500)
		log_request(req->method, req->path, resp->status, s * 1000);
	log_request_id(NULL);
}

bool
app_metrics(struct http_resp *resp, const char *setting)
{
	if (!metrics_on()) {
		http_error(resp, 503, "metrics are off (%s)", setting);
		return false;
	}
	resp->body.len = 0;
	metrics_render(&resp->body);
	http_no_store(resp);
	resp->status = 200;
	resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
	return true;
}

bool
app_store_needed(const char *name)
{
	(void)name; /* an init hook; app_main logged a bad store already */
	store_needed = true;
	return true;
}

bool
app_request(struct app_ctx *ctx, struct http_req *req, struct http_resp *resp,
	    FCGX_Request *fcgi, struct db *db)
{
	memset(ctx, 0, sizeof(*ctx));
	http_resp_init(resp);
	if (!http_req_init(req, fcgi, resp))
		return false;
	ctx->req = req;
	ctx->resp = resp;
	ctx->db = db;
	return true;
}

const struct route *
app_route(struct app_ctx *ctx, const struct route *table, size_t n)
{
	const struct route *r = NULL;
	char allow[64];

	switch (route_find(table, n, ctx->req->method, ctx->req->path, &r,
			   ctx->params, allow, sizeof(allow))) {
	case ROUTE_FOUND:
		return r;
	case ROUTE_NO_METHOD:
		http_header(ctx->resp, "Allow", "%s", allow);
		http_error(ctx->resp, 405, "method %s not allowed here",
			   ctx->req->method);
		return NULL;
	case ROUTE_BAD_PARAM:
		http_error(ctx->resp, 400, "the id in the path is not a UUID");
		return NULL;
	default:
		http_error(ctx->resp, 404, "not found");
		return NULL;
	}
}

/* libfcgi's accept loop checks this flag when accept() fails with EINTR. */
static void
app_stop(int sig)
{
	(void)sig;
	FCGX_ShutdownPending();
}

bool
app_stop_on_signals(void)
{
	static const int sigs[] = {SIGTERM, SIGINT, SIGUSR1};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = app_stop;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocking accept() must return to see the flag. */
	sa.sa_flags = 0;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) != 0)
			return false;
	return true;
}
