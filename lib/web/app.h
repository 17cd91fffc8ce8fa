/* SPDX-License-Identifier: MIT */
/*
 * app.h - the FastCGI application every cgi-bin program runs.
 *
 * A cgi-bin main is one call: app_main() with its route table.  The
 * loop reads the settings once, keeps one database handle for the life
 * of the process, and for each request: parses it (lib/web/http), finds the
 * route (lib/web/route), authenticates the caller as the route asks, calls
 * the handler with a struct app_ctx, sends the answer and frees
 * everything the request allocated.  A program with settings of its own
 * (the face service's) changes the loop with hooks: app_main_hooks().
 */
#ifndef XMHUB_APP_H
#define XMHUB_APP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "core/auth.h"
#include "core/db.h"
#include "core/log.h"
#include "core/slots.h"
#include "web/authn.h"
#include "web/http.h"
#include "web/route.h"

struct allow;
struct jobmetrics;
struct store;

/* What a handler gets. */
struct app_ctx {
	struct http_req *req;
	struct http_resp *resp;
	struct db *db; /* the process's handle; NULL only when the start
			* hook gives none (struct app_hooks) */
	char params[ROUTE_MAX_PARAMS][ROUTE_UUID_LEN + 1];
	struct authn_who who;
	char facility_filter[AUTH_UUID_LEN +
			     1]; /* lib/web/scope's list filter */
	const char *jwt_secret;	 /* NULL when the program does no JWT */
	struct store *store;	 /* the process's object store (lib/store),
				  * opened once by app_main; NULL when its
				  * settings are bad (logged then) */
	pthread_mutex_t *lock;	 /* app_main_threads: held by the handler */
	bool locked;		 /* until app_unlock() */

	/* The program's own state: what its start hook made (struct
	 * app_hooks; lib/face/service/faceapi's struct faceapi). */
	void *app;
	/* The request's id (X-Request-Id of the answer, the log lines'). */
	char request_id[LOG_REQUEST_ID_MAX + 1];
};

/*
 * What a program with settings of its own (the face service: doc/face.md)
 * changes in app_main_hooks()'s loop.  Members left NULL do nothing.
 */
struct app_hooks {
	/*
	 * Starts the program once the settings are read (conf_init), in
	 * place of the platform's: without start, app_main reads
	 * XMHUB_DATABASE_URL, XMHUB_JWT_SECRET and the object store; with
	 * it none of them, nor XMHUB_ALIVE_DIR nor the XMHUB_ observability
	 * settings.  Sets *app (every ctx->app) and *db (every ctx->db, which
	 * may then be NULL).  False stops the program, which start has then
	 * logged and cleaned up.
	 */
	bool (*start)(const char *name, void **app, struct db **db);
	/* Frees what start made, when the loop ends. */
	void (*stop)(void *app);
	/*
	 * Every request, before it is routed, ctx->req NULL when it could
	 * not be read (ctx->resp then holds its 400): adds the headers every
	 * answer carries.  False when it answered the request itself (a CORS
	 * preflight, a FastCGI authorizer answered for any path).
	 */
	bool (*begin)(struct app_ctx *ctx);
	/* The credentials of a ROUTE_BASIC route (no program serves one
	 * without): false with the answer set. */
	bool (*basic)(struct app_ctx *ctx);
	/* Every request, after its handler, before its answer is sent:
	 * gives back what a handler left held. */
	void (*end)(struct app_ctx *ctx);
};

/*
 * Runs the accept loop of program name with the n routes of table.
 * init, when not NULL, runs once after the settings are loaded, before
 * the first request (a module reading its own settings); false from it
 * stops the program.  Started as a plain CGI (lib/web/cgi.h) it serves
 * that one request and returns.  Returns the exit status: 0 when the web
 * server ends it (or the CGI request was answered), 1 when it cannot
 * start (bad settings: logged to stderr, which lighttpd keeps).
 */
int app_main(const char *name, const struct route *table, size_t n,
	     bool (*init)(const char *name));

/* As app_main() (no init), changed by hooks (struct app_hooks). */
int app_main_hooks(const char *name, const struct route *table, size_t n,
		   const struct app_hooks *hooks);

/*
 * As app_main(), serving up to *threads requests at once (read after
 * init, which may set it from the settings): the main thread accepts, a
 * pool of threads serves.  One lock of the process is held while a
 * request is authenticated and while its handler runs, so handlers, the
 * database handle and the caches of lib/web/authn need no other care; a
 * handler that waits for long (lib/api/ingestapi's data: on the body and
 * on the group commit) calls app_unlock() first.  Under a web server
 * that sends one request at a time per process (Apache's mod_fcgid) it
 * serves one at a time; as a plain CGI, its one request in the main
 * thread.
 */
int app_main_threads(const char *name, const struct route *table, size_t n,
		     bool (*init)(const char *name), const int *threads);

/*
 * Lets the other requests of the process run while this handler goes on
 * (app_main_threads); from then on the handler must not use ctx->db or
 * anything else of the process but what it synchronises itself.  A
 * no-op under app_main().
 */
void app_unlock(struct app_ctx *ctx);

#define APP_SHARE_RETRY 5 /* seconds: Retry-After of a full share */

/*
 * Takes one of owner's slots of kind (lib/core/slots, under
 * XMHUB_SLOT_DIR) into *s, which the caller holds while the work lasts
 * and gives back with slots_release().  owner NULL is the caller's
 * facility (the super admins', who have none, share "all").  limit names the
 * INT setting of how many at once (0: no limit); what says what they are, for
 * the detail.  False with the answer given, *s holding none: 429 with
 * Retry-After APP_SHARE_RETRY when owner holds them all ("no slot" is a
 * 429 here only), 503 when the slot files can not be used (logged).
 */
bool app_share(struct app_ctx *ctx, const char *kind, const char *owner,
	       const char *limit, const char *what, struct slot *s);

/* app_share() of an on-demand render of the caller's facility
 * (XMHUB_RENDERS_PER_FACILITY). */
bool app_render_share(struct app_ctx *ctx, struct slot *s);

/* Answers a db_* failure: 503 when the database is unavailable, 500
 * otherwise (details only in the log). */
void app_db_error(struct app_ctx *ctx, enum db_status status);

/*
 * An init hook for programs whose handlers all need the object store:
 * while ctx->store is NULL (bad settings), their authenticated requests
 * get 503, as when the database is down; readiness names the store.
 * Always true.
 */
bool app_store_needed(const char *name);

/*
 * Starts one request read from fcgi: ctx zeroed with resp and db in it,
 * resp empty, req parsed and in ctx.  False when the request is unusable (resp
 * then holds the 400 to send).  req and resp are freed by the caller
 * with http_req_free() and http_resp_free() either way.  For loops of
 * their own (lib/api/wsgate) and app_main.
 */
bool app_request(struct app_ctx *ctx, struct http_req *req,
		 struct http_resp *resp, FCGX_Request *fcgi, struct db *db);

/*
 * The answer of a program asked as a FastCGI authorizer (req->authorizer)
 * whose credentials passed: 200 with a spool slot for the body the web
 * server receives next (lib/web/spoolcap.h), or 503 with Retry-After when
 * the host's slots are all held.  app_request() gives the slot back when
 * the body's request reaches a program.
 */
void app_authorized(struct app_ctx *ctx);

/*
 * Gives the route whose handler is fn a gate: asked as a FastCGI
 * authorizer about it, once the credentials passed, the program calls
 * gate before app_authorized(), and a false gate (its answer set, a
 * 413 say) refuses the request before the web server reads its body.
 * What the route's own rule knows from the headers alone (the
 * Content-Length) is checked there; the handler checks again.  One
 * gated route a program; an init hook calls it.
 */
void app_gate(void (*fn)(struct app_ctx *ctx),
	      bool (*gate)(struct app_ctx *ctx));

/* The platform's shared counters unless XMHUB_METRICS_FILE says. */
#define APP_METRICS_FILE "/dev/shm/xmhub-metrics"

/*
 * Reads the observability settings of program name, XMHUB_* ones or with
 * face FACE_API_* ones: LOG_REQUESTS (off: no line per request but for 5xx
 * ones), METRICS (off: no counting) and METRICS_FILE (the shared counters,
 * default file; lib/core/metrics).  A file that can not be used is logged
 * and the program runs without counting.
 */
void app_observe_init(const char *name, bool face, const char *file);

/* Who may scrape a program's /metrics, and what it adds. */
struct app_metrics_gate {
	const struct allow *allowed; /* read without credentials */
	const char *setting;	     /* the off switch: "XMHUB_METRICS" */
	const char *refusal;	     /* 403 detail: no credentials sent */
	/* Checks the Authorization sent; false with the answer set (401,
	 * 403, 429). */
	bool (*credentials)(struct app_ctx *ctx);
	const struct jobmetrics *jobs; /* a job table's figures, or NULL */
	/* More figures read from the database (appended to out), or NULL. */
	enum db_status (*more)(struct db *db, struct buf *out);
};

/*
 * Answers a scrape of the shared counters (lib/core/metrics): for a client
 * in g->allowed, or one whose credentials g->credentials accepts (403 with
 * g->refusal when none are sent), 200 text/plain; version=0.0.4 with
 * metrics_render()'s text, then g->jobs' and g->more's figures read from
 * ctx->db (none while ctx->db is NULL; a database failure is answered as
 * http_db_error).  503 naming g->setting when counting is off.
 */
void app_metrics(struct app_ctx *ctx, const struct app_metrics_gate *g);

/* Makes SIGTERM (what lighttpd sends at shutdown), SIGINT and SIGUSR1
 * end the accept loop cleanly: the request in progress runs on (a read or
 * write blocked at that moment fails with EINTR), then FCGX_Accept_r
 * returns < 0, so the program frees what it holds and exits 0 (and
 * LeakSanitizer runs).  Call after FCGX_Init.  False when a handler
 * cannot be installed (errno set). */
bool app_stop_on_signals(void);

#endif
