/*
 * health.c - liveness and readiness probes.
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "health.h"

void
health_live(struct app_ctx *ctx)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "status", json_object_new_string("ok"));
	http_json(ctx->resp, 200, o);
}

/* True when a file can be created in dir: the store takes writes. */
static bool
storage_ok(const char *dir)
{
	char path[PATH_MAX];
	int fd;

	if (dir == NULL || snprintf(path, sizeof(path), "%s/.ready-XXXXXX",
				    dir) >= (int)sizeof(path))
		return false;
	if ((fd = mkstemp(path)) < 0)
		return false;
	close(fd);
	unlink(path);
	return true;
}

void
health_ready(struct app_ctx *ctx)
{
	bool db = db_ping(ctx->db), st = storage_ok(ctx->storage_dir);
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
