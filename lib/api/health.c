/* SPDX-License-Identifier: MIT */
/*
 * health.c - liveness and readiness probes.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/health.h"
#include "core/conf.h"
#include "store/storage.h"
#include "web/fcgiproc.h"
#include "core/log.h"

void
health_live(struct app_ctx *ctx)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "status", json_object_new_string("ok"));
	http_json(ctx->resp, 200, o);
}

/* Seconds a successful store probe stands for (XMHUB_READY_INTERVAL). */
static long long interval = 10;
/* MiB a filesystem store keeps free while ready (XMHUB_READY_MIN_FREE_MB). */
static long long min_free_mb = 1024;

bool
health_init(const char *name)
{
	(void)name; /* lib/core/log names the program */
	if (!conf_get_int("XMHUB_READY_INTERVAL", &interval)) {
		log_error("XMHUB_READY_INTERVAL must be 0 to 3600 (seconds)");
		return false;
	}
	if (!conf_get_int("XMHUB_READY_MIN_FREE_MB", &min_free_mb)) {
		log_error("XMHUB_READY_MIN_FREE_MB must be a number of MiB, "
			  "0 or more");
		return false;
	}
	return true;
}

/* What the store is for readiness. */
enum store_state { ST_READY, ST_FULL, ST_DOWN };

/*
 * ST_READY when the store takes a write and gives it back (lib/store/
 * storage's store_check) and, on a filesystem, keeps min_free_mb free:
 * a balancer stops sending uploads to a host whose store fills before
 * every upload fails.  Why not goes to the log, never into the answer.
 * A success stands for interval seconds, so that readiness, which anyone
 * may ask, writes to the store at most once per interval and process
 * whatever the request rate; a failure is probed again at once.
 */
static enum store_state
storage_state(struct store *store)
{
	static time_t ok_at;
	static bool ok;
	time_t now = time(NULL);
	char detail[256];
	uint64_t free_bytes;

	if (store == NULL)
		return ST_DOWN;
	if (!ok || now - ok_at >= interval) {
		ok = store_check(store, detail, sizeof(detail)) == STORE_OK;
		if (!ok) {
			log_error("health: %s", detail);
			return ST_DOWN;
		}
		ok_at = now;
	}
	if (min_free_mb > 0 && store_free_bytes(store, &free_bytes) &&
	    free_bytes / (1024 * 1024) < (uint64_t)min_free_mb) {
		log_error("health: the object store has %llu MiB free, under "
			  "XMHUB_READY_MIN_FREE_MB (%lld)",
			  (unsigned long long)(free_bytes / (1024 * 1024)),
			  min_free_mb);
		return ST_FULL;
	}
	return ST_READY;
}

/*
 * The endpoint groups without a live process (lib/web/fcgiproc): how
 * many, their names into dead (comma-separated) and the log; -1 when
 * they can not be checked (why only in the log: it names a path).
 */
static int
programs_dead(char *dead, size_t len)
{
	int n = fcgiproc_dead_groups(dead, len);

	if (n < 0)
		log_error("health: endpoint groups: %s", dead);
	else if (n > 0)
		log_error("health: no process of %s runs", dead);
	return n;
}

void
health_ready(struct app_ctx *ctx)
{
	enum store_state sst = storage_state(ctx->store);
	bool db = db_ping(ctx->db), st = sst == ST_READY;
	static const char *const store_word[] = {"ok", "full", "unavailable"};
	char dead[256];
	int ndead = programs_dead(dead, sizeof(dead));
	bool progs = ndead == 0;
	json_object *o = json_object_new_object(), *list;
	const char *detail = NULL;

	json_object_object_add(o, "status",
			       json_object_new_string(db && st && progs
							      ? "ready"
							      : "not_ready"));
	json_object_object_add(
		o, "database",
		json_object_new_string(db ? "ok" : "unavailable"));
	json_object_object_add(o, "storage",
			       json_object_new_string(store_word[sst]));
	/* Named only when one is dead, so that the ready answer keeps its
	 * shape; never a path (an unreadable directory is only logged). */
	if (ndead > 0) {
		list = json_object_new_array();
		for (char *save, *g = strtok_r(dead, ",", &save); g != NULL;
		     g = strtok_r(NULL, ",", &save))
			json_object_array_add(list, json_object_new_string(g));
		json_object_object_add(o, "programs", list);
	}
	if (!db)
		detail = "the database is unavailable";
	else if (sst == ST_FULL)
		detail = "the object store is nearly full";
	else if (!st)
		detail = "the object store is unavailable";
	else if (ndead > 0)
		detail = "an endpoint group has no running process";
	else if (!progs)
		detail = "the endpoint groups can not be checked";
	if (detail != NULL)
		json_object_object_add(o, "detail",
				       json_object_new_string(detail));
	http_json(ctx->resp, detail == NULL ? 200 : 503, o);
}
