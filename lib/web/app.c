/*
 * app.c - the FastCGI application every cgi-bin program runs.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "web/app.h"
#include "web/authn.h"
#include "web/mediaurl.h"
#include "core/conf.h"
#include "store/storage.h"

/* The process's object store (ctx->store); whether its handlers need it
 * (app_store_needed). */
static struct store *store;
static bool store_needed;

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
	/* A signed URL stands for the bearer token only where the route
	 * allows it and no token was sent. */
	if (r->auth == ROUTE_JWT_OR_SIGNED && ctx->req->authorization == NULL &&
	    mediaurl_present(ctx->req)) {
		if (!mediaurl_check(ctx->req, ctx->jwt_secret, r->min_role,
				    time(NULL), &ctx->who, ctx->resp))
			return;
	} else if ((r->auth == ROUTE_JWT || r->auth == ROUTE_JWT_OR_SIGNED) &&
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

	if (!conf_init(detail, sizeof(detail))) {
		fprintf(stderr, "%s: %s\n", name, detail);
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		need_jwt |= table[i].auth == ROUTE_JWT ||
			    table[i].auth == ROUTE_JWT_OR_SIGNED;
	/* A JWT program without its secret would accept nothing; say so. */
	if (need_jwt &&
	    ((secret = conf_str("XMHUB_JWT_SECRET", NULL)) == NULL ||
	     strlen(secret) < AUTH_JWT_SECRET_MIN)) {
		fprintf(stderr,
			"%s: XMHUB_JWT_SECRET must be set, %d characters "
			"or more\n",
			name, AUTH_JWT_SECRET_MIN);
		return 1;
	}
	if ((url = conf_str("XMHUB_DATABASE_URL", NULL)) == NULL) {
		fprintf(stderr, "%s: XMHUB_DATABASE_URL is not set\n", name);
		return 1;
	}
	/* Bad store settings stop only the programs that need the store
	 * (app_store_needed); readiness reports them. */
	if ((store = store_open_env(detail, sizeof(detail))) == NULL)
		fprintf(stderr, "%s: object store: %s\n", name, detail);
	if (init != NULL && !init(name)) {
		store_close(store);
		return 1;
	}
	if ((db = db_new(url)) == NULL || FCGX_Init() != 0 ||
	    FCGX_InitRequest(&fcgi, 0, 0) != 0 || !app_stop_on_signals()) {
		fprintf(stderr, "%s: cannot start\n", name);
		db_free(db);
		store_close(store);
		return 1;
	}
	while (FCGX_Accept_r(&fcgi) >= 0) {
		struct http_req req;
		struct http_resp resp;
		struct app_ctx ctx;

		if (app_request(&ctx, &req, &resp, &fcgi, db)) {
			ctx.jwt_secret = secret;
			ctx.store = store;
			dispatch(&ctx, table, n);
			/* Before the answer: the client may ask another
			 * process next. */
			authn_settle(db);
		}
		http_send(&resp, &fcgi);
		http_req_free(&req);
		http_resp_free(&resp);
		FCGX_Finish_r(&fcgi);
	}
	db_free(db);
	store_close(store);
	return 0;
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
