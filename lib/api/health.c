/*
 * health.c - liveness and readiness probes.
 */
#include "config.h"

#include <stdio.h>

#include "api/health.h"
#include "store/storage.h"

void
health_live(struct app_ctx *ctx)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "status", json_object_new_string("ok"));
	http_json(ctx->resp, 200, o);
}

/* True when the store takes a write and gives it back (lib/store/storage's
 * store_check); why not goes to the log, never into the answer. */
static bool
storage_ok(struct store *store)
{
	char detail[256];

	if (store == NULL)
		return false;
	if (store_check(store, detail, sizeof(detail)) != STORE_OK) {
		fprintf(stderr, "health: %s\n", detail);
		return false;
	}
	return true;
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
