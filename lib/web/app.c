/* SPDX-License-Identifier: MIT */
/*
 * app.c - the FastCGI application every cgi-bin program runs.
 */
#include "config.h"

#include <pthread.h>
#include <errno.h>
#include <fastcgi.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/allow.h"
#include "web/app.h"
#include "web/authn.h"
#include "web/cgi.h"
#include "web/mediaurl.h"
#include "web/fcgiproc.h"
#include "web/spoolcap.h"
#include "core/clock.h"
#include "core/conf.h"
#include "core/jobmetrics.h"
#include "core/log.h"
#include "core/metrics.h"
#include "store/storage.h"

/* The process's object store (ctx->store); whether its handlers need it
 * (app_store_needed). */
static struct store *store;
static bool store_needed;
/* XMHUB_LOG_REQUESTS: a line per request (5xx ones are always logged). */
static bool log_requests = true;
/* The random part of the process's request ids (app_observe_init). */
static char id_base[AUTH_UUID_LEN + 1] = "00000000-0000-4000-8000-000000000000";

void
app_db_error(struct app_ctx *ctx, enum db_status status)
{
	http_db_error(ctx->resp, status);
}

/* Finds the route of ctx's request in the n routes of table and fills
 * ctx->params.  NULL when there is none, with the answer set: 404, 405
 * (with Allow) or 400 (an {id} that is not a UUID). */
static const struct route *
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

/*
 * A new request id in *id: a UUID (version 4 form) whose first 80 bits are
 * random, drawn once per process, and whose last 48 count the process's
 * requests: unique without a getrandom(2) per request.  Thread-safe.
 */
static void
new_request_id(char id[AUTH_UUID_LEN + 1])
{
	static _Atomic unsigned long long n;

	memcpy(id, id_base, 24);
	/* The base's own last 48 bits, counted on. */
	snprintf(id + 24, AUTH_UUID_LEN + 1 - 24, "%012llx",
		 (strtoull(id_base + 24, NULL, 16) + n++) & 0xffffffffffffULL);
}

/*
 * Gives ctx's request its id: the client's X-Request-Id when it is sane
 * (log_request_id_valid: a proxy in front may set it), else a new one.  Sets
 * it on the thread's log lines and as X-Request-Id on resp (so lighttpd's
 * access log shows it).  After app_request().
 */
static void
request_id(struct app_ctx *ctx, FCGX_Request *fcgi, struct http_resp *resp)
{
	const char *in = FCGX_GetParam("HTTP_X_REQUEST_ID", fcgi->envp);

	if (in != NULL && log_request_id_valid(in))
		snprintf(ctx->request_id, sizeof(ctx->request_id), "%s", in);
	else
		new_request_id(ctx->request_id);
	log_request_id(ctx->request_id);
	http_header(resp, "X-Request-Id", "%s", ctx->request_id);
}

/* Ends a request begun at t0 (clock_mono_s()) after http_send(): counts
 * it (status, duration) and logs its line. */
static void
request_done(const struct http_req *req, const struct http_resp *resp,
	     double t0)
{
	double s = clock_mono_s() - t0;

	metrics_request(resp->status, s);
	if (log_requests || resp->status >= 500)
		log_request(req->method, req->path, resp->status, s * 1000);
	log_request_id(NULL);
}

/* What app_main_hooks() and the others set up before the first
 * request. */
struct setup {
	const struct app_hooks *hooks; /* never NULL (none: no_hooks) */
	const char *secret;
	struct db *db;
	void *app; /* hooks->start's */
};

static const struct app_hooks no_hooks;

/* app_gate()'s route handler and its gate, NULL when none. */
static void (*gated_fn)(struct app_ctx *ctx);
static bool (*gate_fn)(struct app_ctx *ctx);

void
app_gate(void (*fn)(struct app_ctx *ctx), bool (*gate)(struct app_ctx *ctx))
{
	gated_fn = fn;
	gate_fn = gate;
}

/* Routes, authenticates and runs one request. */
static void
dispatch(struct app_ctx *ctx, const struct route *table, size_t n,
	 const struct app_hooks *hooks)
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
	/* set_up() made sure a ROUTE_BASIC route has its hook. */
	if (r->auth == ROUTE_BASIC && !hooks->basic(ctx))
		return;
	/* Asked as an authorizer about a route with credentials: they
	 * were the question, the web server reads the body only now
	 * (http.h).  A public route's handler is the authorizer itself
	 * (cgi-bin/ingest-authorizer). */
	if (ctx->req->authorizer && r->auth != ROUTE_PUBLIC) {
		if (r->fn != gated_fn || gate_fn(ctx))
			app_authorized(ctx);
		return;
	}
	if (store_needed && store == NULL) {
		http_error(ctx->resp, 503, "the object store is unavailable");
		return;
	}
	r->fn(ctx);
}

/* The platform's settings for a program without a start hook: the JWT
 * secret when table needs it, the database, the object store, the
 * observability settings; then init.  False (logged) when it cannot. */
static bool
set_up_platform(const char *name, const struct route *table, size_t n,
		bool (*init)(const char *name), struct setup *su)
{
	char detail[256];
	const char *url;
	bool need_jwt = false;

	/* Only readiness needs it, which then says the groups can not be
	 * checked: the program serves on. */
	if (!fcgiproc_alive(name, detail, sizeof(detail)))
		log_error("liveness: %s", detail);
	for (size_t i = 0; i < n; i++)
		need_jwt |= table[i].auth == ROUTE_JWT ||
			    table[i].auth == ROUTE_JWT_OR_SIGNED;
	/* A JWT program without its secret would accept nothing; say so. */
	if (need_jwt && ((su->secret = conf_get("XMHUB_JWT_SECRET")) == NULL ||
			 strlen(su->secret) < AUTH_JWT_SECRET_MIN)) {
		log_error("XMHUB_JWT_SECRET must be set, %d characters or more",
			  AUTH_JWT_SECRET_MIN);
		return false;
	}
	if ((url = conf_get("XMHUB_DATABASE_URL")) == NULL) {
		log_error("XMHUB_DATABASE_URL is not set");
		return false;
	}
	/* Bad store settings stop only the programs that need the store
	 * (app_store_needed); readiness reports them. */
	if ((store = store_open_env(detail, sizeof(detail))) == NULL)
		log_error("object store: %s", detail);
	app_observe_init(name, false, APP_METRICS_FILE);
	if (init != NULL && !init(name))
		goto fail;
	if ((su->db = db_new(url)) != NULL)
		return true;
	log_error("cannot start");
fail:
	store_close(store);
	store = NULL;
	return false;
}

/* Frees what set_up() made. */
static void
tear_down(struct setup *su)
{
	if (su->hooks->start != NULL) {
		if (su->hooks->stop != NULL)
			su->hooks->stop(su->app);
		return;
	}
	db_free(su->db);
	store_close(store);
	store = NULL;
}

/* Reads the settings, starts the program (hooks->start, or the
 * platform's settings and init), makes FastCGI's library ready: false
 * (logged) when it cannot. */
static bool
set_up(const char *name, const struct route *table, size_t n,
       bool (*init)(const char *name), const struct app_hooks *hooks,
       struct setup *su)
{
	char detail[256];

	memset(su, 0, sizeof(*su));
	su->hooks = hooks;
	log_init(name);
	/* Dies with the web server: an orphan would keep its socket, and a
	 * web server started again would use it and never respawn it. */
	if (!fcgiproc_watch_parent()) {
		log_error("parent watch: %s", strerror(errno));
		return false;
	}
	if (!conf_init(detail, sizeof(detail))) {
		log_error("%s", detail);
		return false;
	}
	/* No credentials to check it with: refused, not let in. */
	for (size_t i = 0; i < n; i++)
		if (table[i].auth == ROUTE_BASIC && hooks->basic == NULL) {
			log_error("%s %s: ROUTE_BASIC is not served here",
				  table[i].method, table[i].pattern);
			return false;
		}
	if (hooks->start != NULL ? !hooks->start(name, &su->app, &su->db)
				 : !set_up_platform(name, table, n, init, su))
		return false;
	if (FCGX_Init() != 0 || !app_stop_on_signals()) {
		log_error("cannot start");
		tear_down(su);
		return false;
	}
	return true;
}

/*
 * Writes the held request lines (log_hold_requests()) when the process has
 * no other request: neither one its other threads serve (others) nor one
 * waiting to be accepted.  Called before an answer, a line is then on disk
 * before its client hears back, and lines wait to be written together only
 * under load.
 */
static void
settle_log(int others)
{
	struct pollfd pending = {.fd = FCGI_LISTENSOCK_FILENO,
				 .events = POLLIN};

	if (others == 0 && log_holding() && poll(&pending, 1, 0) != 1)
		log_flush();
}

/* Serves the request accepted in fcgi, which the caller then ends
 * (FCGX_Finish_r(), cgi_finish()); lock, when not NULL, is held while
 * the handler runs (up to app_unlock()) and around the checks of the
 * caller; nbusy counts the process's requests being served (NULL: one at
 * a time). */
static void
serve(FCGX_Request *fcgi, const struct route *table, size_t n,
      const struct setup *su, pthread_mutex_t *lock, atomic_int *nbusy)
{
	const struct app_hooks *hooks = su->hooks;
	struct http_req req;
	struct http_resp resp;
	struct app_ctx ctx;
	double t0 = clock_mono_s();
	bool ok;

	ok = app_request(&ctx, &req, &resp, fcgi, su->db);
	request_id(&ctx, fcgi, &resp);
	ctx.jwt_secret = su->secret;
	ctx.store = store;
	ctx.app = su->app;
	ctx.lock = lock;
	if (lock != NULL)
		pthread_mutex_lock(lock);
	ctx.locked = lock != NULL;
	if ((hooks->begin == NULL || hooks->begin(&ctx)) && ok)
		dispatch(&ctx, table, n, hooks);
	if (lock != NULL && !ctx.locked)
		pthread_mutex_lock(lock);
	if (hooks->end != NULL)
		hooks->end(&ctx);
	/* Before the answer: the client may ask another process next. */
	if (ok && hooks->start == NULL)
		authn_settle(su->db);
	if (lock != NULL)
		pthread_mutex_unlock(lock);
	http_send(&resp, fcgi);
	request_done(&req, &resp, t0);
	http_req_free(&req);
	http_resp_free(&resp);
	settle_log(nbusy != NULL ? atomic_load(nbusy) - 1 : 0);
}

/* Serves the one request of a program started as a plain CGI (lib/web/
 * cgi), as serve() would a FastCGI one; lock as there.  The exit
 * status: 0 once answered (a client that left included), 1 when the
 * request could not be set up. */
static int
serve_cgi(const struct route *table, size_t n, const struct setup *su,
	  pthread_mutex_t *lock)
{
	FCGX_Request fcgi;

	if (!cgi_request(&fcgi)) {
		log_error("the CGI request: %s", strerror(errno));
		return 1;
	}
	serve(&fcgi, table, n, su, lock, NULL);
	if (!cgi_finish(&fcgi))
		log_error("the answer could not be written whole: the client "
			  "left");
	return 0;
}

/* The next request, false when the program is to stop. */
static bool
accept_next(FCGX_Request *fcgi)
{
	settle_log(0);
	return FCGX_Accept_r(fcgi) >= 0;
}

/* The accept loop of app_main() and app_main_hooks(). */
static int
run(const char *name, const struct route *table, size_t n,
    bool (*init)(const char *name), const struct app_hooks *hooks)
{
	FCGX_Request fcgi;
	struct setup su;
	int rc = 0;

	if (!set_up(name, table, n, init, hooks, &su))
		return 1;
	if (cgi_is_cgi()) {
		rc = serve_cgi(table, n, &su, NULL);
		goto out;
	}
	if (FCGX_InitRequest(&fcgi, 0, 0) != 0) {
		log_error("cannot start");
		rc = 1;
		goto out;
	}
	log_hold_requests();
	while (accept_next(&fcgi)) {
		serve(&fcgi, table, n, &su, NULL, NULL);
		FCGX_Finish_r(&fcgi);
	}
out:
	tear_down(&su);
	return rc;
}

int
app_main(const char *name, const struct route *table, size_t n,
	 bool (*init)(const char *name))
{
	return run(name, table, n, init, &no_hooks);
}

int
app_main_hooks(const char *name, const struct route *table, size_t n,
	       const struct app_hooks *hooks)
{
	return run(name, table, n, NULL, hooks);
}

bool
app_share(struct app_ctx *ctx, const char *kind, const char *owner,
	  const char *limit, const char *what, struct slot *s)
{
	const char *dir = conf_get("XMHUB_SLOT_DIR");
	char detail[512];
	long long n;

	s->fd = -1;
	if (owner == NULL)
		owner = ctx->who.facility_id[0] != '\0' ? ctx->who.facility_id
							: "all";
	if (!conf_get_int(limit, &n)) {
		log_error("%s is not a number in range", limit);
		http_error(ctx->resp, 500, "internal error");
		return false;
	}
	switch (slots_take(dir, kind, owner, (int)n, s, detail,
			   sizeof(detail))) {
	case SLOTS_TAKEN:
		return true;
	case SLOTS_BUSY:
		http_header(ctx->resp, "Retry-After", "%d", APP_SHARE_RETRY);
		http_error(ctx->resp, 429,
			   "%lld %s at once at most (%s); try again later", n,
			   what, limit);
		return false;
	default:
		log_error("XMHUB_SLOT_DIR: %s", detail);
		http_error(ctx->resp, 503, "the service is unavailable");
		return false;
	}
}

bool
app_render_share(struct app_ctx *ctx, struct slot *s)
{
	return app_share(ctx, "render", NULL, "XMHUB_RENDERS_PER_FACILITY",
			 "renders of a facility", s);
}

/* The request threads of app_main_threads(). */
struct pool;

struct worker {
	struct pool *p;
	pthread_t thread;
	FCGX_Request fcgi;
	bool busy; /* it has a request to serve */
	pthread_cond_t go;
};

struct pool {
	const struct route *table;
	size_t n;
	struct setup su;
	pthread_mutex_t lock; /* the process's: su.db, caches, handlers */
	pthread_mutex_t mu;   /* busy, stop */
	pthread_cond_t idle;  /* a worker became idle */
	atomic_int nbusy;     /* workers serving a request */
	bool stop;
};

static void *
work(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->p;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!w->busy && !p->stop)
			pthread_cond_wait(&w->go, &p->mu);
		if (!w->busy)
			break;
		pthread_mutex_unlock(&p->mu);
		serve(&w->fcgi, p->table, p->n, &p->su, &p->lock, &p->nbusy);
		FCGX_Finish_r(&w->fcgi);
		atomic_fetch_sub(&p->nbusy, 1);
		pthread_mutex_lock(&p->mu);
		w->busy = false;
		pthread_cond_signal(&p->idle);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* An idle worker of the nw in ws, waiting for one (holding p->mu). */
static struct worker *
idle_worker(struct pool *p, struct worker *ws, int nw)
{
	for (;;) {
		for (int i = 0; i < nw; i++)
			if (!ws[i].busy)
				return &ws[i];
		pthread_cond_wait(&p->idle, &p->mu);
	}
}

int
app_main_threads(const char *name, const struct route *table, size_t n,
		 bool (*init)(const char *name), const int *threads)
{
	struct pool p = {.table = table, .n = n};
	struct worker *ws = NULL, *w;
	sigset_t all, old;
	int nw = 0, rc = 1;

	if (!set_up(name, table, n, init, &no_hooks, &p.su))
		return 1;
	pthread_mutex_init(&p.lock, NULL);
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.idle, NULL);
	/* One request, served by this thread (the handlers' lock held as
	 * in a worker). */
	if (cgi_is_cgi()) {
		rc = serve_cgi(table, n, &p.su, &p.lock);
		goto out;
	}
	if (*threads < 1 ||
	    (ws = calloc((size_t)*threads, sizeof(*ws))) == NULL)
		goto out;
	/* Before the workers start (log.h). */
	log_hold_requests();
	/* Signals go to this thread, which accepts: the workers block
	 * them. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (; nw < *threads; nw++) {
		ws[nw].p = &p;
		pthread_cond_init(&ws[nw].go, NULL);
		if (FCGX_InitRequest(&ws[nw].fcgi, 0, 0) != 0 ||
		    pthread_create(&ws[nw].thread, NULL, work, &ws[nw]) != 0) {
			pthread_cond_destroy(&ws[nw].go);
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (nw < *threads) {
		log_error("cannot start %d threads", *threads);
		goto stop;
	}
	rc = 0;
	pthread_mutex_lock(&p.mu);
	for (;;) {
		w = idle_worker(&p, ws, nw);
		pthread_mutex_unlock(&p.mu);
		/* A worker may have left lines held for a request that
		 * another process took. */
		if (atomic_load(&p.nbusy) == 0)
			settle_log(0);
		if (FCGX_Accept_r(&w->fcgi) < 0)
			break;
		pthread_mutex_lock(&p.mu);
		atomic_fetch_add(&p.nbusy, 1);
		w->busy = true;
		pthread_cond_signal(&w->go);
	}
stop:
	/* The requests being served are answered first. */
	pthread_mutex_lock(&p.mu);
	p.stop = true;
	for (int i = 0; i < nw; i++)
		pthread_cond_signal(&ws[i].go);
	pthread_mutex_unlock(&p.mu);
	for (int i = 0; i < nw; i++) {
		pthread_join(ws[i].thread, NULL);
		pthread_cond_destroy(&ws[i].go);
	}
out:
	if (rc != 0 && ws == NULL)
		log_error("cannot start");
	free(ws);
	pthread_cond_destroy(&p.idle);
	pthread_mutex_destroy(&p.mu);
	pthread_mutex_destroy(&p.lock);
	tear_down(&p.su);
	return rc;
}

void
app_unlock(struct app_ctx *ctx)
{
	if (ctx->lock != NULL && ctx->locked) {
		pthread_mutex_unlock(ctx->lock);
		ctx->locked = false;
	}
}

void
app_observe_init(const char *name, bool face, const char *file)
{
	/* Literal names: lib/core/settings.def lists them (t/settings.t). */
	const char *metrics = face ? "FACE_API_METRICS" : "XMHUB_METRICS";
	const char *log = face ? "FACE_API_LOG_REQUESTS" : "XMHUB_LOG_REQUESTS";
	const char *path =
		face ? "FACE_API_METRICS_FILE" : "XMHUB_METRICS_FILE";
	char detail[256];

	/* Before any request thread starts (new_request_id). */
	if (!auth_uuid(id_base))
		log_error("no random bytes: request ids are only counted");
	log_requests = strcasecmp(conf_str(log, "on"), "off") != 0;
	if (strcasecmp(conf_str(metrics, "on"), "off") != 0 &&
	    !metrics_init(conf_str(path, file), name, detail, sizeof(detail)))
		log_error("metrics: %s (not counted)", detail);
}

void
app_metrics(struct app_ctx *ctx, const struct app_metrics_gate *g)
{
	struct http_resp *resp = ctx->resp;
	enum db_status st;

	if (!allow_match(g->allowed, ctx->req->remote_addr)) {
		if (ctx->req->authorization == NULL) {
			http_error(resp, 403, "%s", g->refusal);
			return;
		}
		if (!g->credentials(ctx))
			return;
	}
	if (!metrics_on()) {
		http_error(resp, 503, "metrics are off (%s)", g->setting);
		return;
	}
	resp->body.len = 0;
	metrics_render(&resp->body);
	http_no_store(resp);
	resp->status = 200;
	resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
	if (ctx->db == NULL)
		return;
	if ((g->jobs != NULL &&
	     (st = jobmetrics_render(ctx->db, g->jobs, &resp->body)) !=
		     DB_OK) ||
	    (g->more != NULL &&
	     (st = g->more(ctx->db, &resp->body)) != DB_OK)) {
		resp->body.len = 0;
		http_db_error(resp, st);
	}
}

bool
app_store_needed(const char *name)
{
	(void)name; /* an init hook; app_main logged a bad store already */
	store_needed = true;
	return true;
}

void
app_authorized(struct app_ctx *ctx)
{
	char token[SPOOLCAP_TOKEN_MAX];

	switch (spoolcap_take(token)) {
	case SPOOLCAP_FULL:
		http_header(ctx->resp, "Retry-After", "%d", SPOOLCAP_RETRY_S);
		http_error(ctx->resp, 503,
			   "too many request bodies are being received "
			   "before their programs run (XMHUB_SPOOL_MAX); "
			   "retry shortly");
		return;
	case SPOOLCAP_ERROR:
		log_error("spool slots: %s", strerror(errno));
		http_header(ctx->resp, "Retry-After", "%d", SPOOLCAP_RETRY_S);
		http_error(ctx->resp, 503, "the spool slots can not be read");
		return;
	case SPOOLCAP_TAKEN:
		http_header(ctx->resp, "Variable-" SPOOLCAP_VARIABLE, "%s",
			    token);
		break;
	case SPOOLCAP_OFF:
		break;
	}
	http_json(ctx->resp, 200, json_object_new_object());
}

bool
app_request(struct app_ctx *ctx, struct http_req *req, struct http_resp *resp,
	    FCGX_Request *fcgi, struct db *db)
{
	const char *slot;

	/* The body the authorizer took a slot for has arrived. */
	if ((slot = FCGX_GetParam(SPOOLCAP_VARIABLE, fcgi->envp)) != NULL)
		spoolcap_give(slot);
	memset(ctx, 0, sizeof(*ctx));
	http_resp_init(resp);
	ctx->resp = resp;
	ctx->db = db;
	if (!http_req_init(req, fcgi, resp))
		return false;
	ctx->req = req;
	return true;
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
