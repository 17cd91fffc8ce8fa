/*
 * health.c - liveness and readiness probes.
 */
#include "config.h"

#include <stdio.h>
#include <time.h>

#include "api/health.h"
#include "core/conf.h"
#include "store/storage.h"

void
health_live(struct app_ctx *ctx)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "status", json_object_new_string("ok"));
	http_json(ctx->resp, 200, o);
}

/* Seconds a successful store probe stands for (XMHUB_READY_INTERVAL). */
static long long interval = 10;

bool
health_init(const char *name)
{
	if (!conf_get_int("XMHUB_READY_INTERVAL", &interval)) {
		fprintf(stderr,
			"%s: XMHUB_READY_INTERVAL must be 0 to 3600 "
			"(seconds)\n",
			name);
		return false;
	}
	return true;
}

/*
 * True when the store takes a write and gives it back (lib/store/storage's
 * store_check); why not goes to the log, never into the answer.  A success
 * stands for interval seconds, so that readiness, which anyone may ask,
 * writes to the store at most once per interval and process whatever the
 * request rate; a failure is probed again at once.
 */
static bool
storage_ok(struct store *store)
{
	static time_t ok_at;
	static bool ok;
	time_t now = time(NULL);
	char detail[256];

	if (store == NULL)
		return false;
	if (ok && now - ok_at < interval)
		return true;
	ok = store_check(store, detail, sizeof(detail)) == STORE_OK;
	if (!ok)
		fprintf(stderr, "health: %s\n", detail);
	ok_at = now;
	return ok;
}

void
health_ready(struct app_ctx *ctx)
{
	bool db = db_ping(ctx->db), st = storage_ok(ctx->store);
	json_object *o = json_object_new_object();

	json_object_object_add(
		o, "status",
		json_object_new_string(db && st ? "ready" : "not_ready"));
	json_object_object_add(
		o, "database",
		json_object_new_string(db ? "ok" : "unavailable"));
	json_object_object_add(
		o, "storage",
		json_object_new_string(st ? "ok" : "unavailable"));
	if (!db || !st)
		json_object_object_add(
			o, "detail",
			json_object_new_string(
				!db ? "the database is unavailable"
				    : "the object store is "
				      "unavailable"));
	http_json(ctx->resp, db && st ? 200 : 503, o);
}
