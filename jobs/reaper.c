/* SPDX-License-Identifier: MIT */
/*
 * xmhub-ingest-reaper - moves ingest sessions that went silent to error.
 *
 *   xmhub-ingest-reaper --once   one pass (cron), exit 0, 1 on failure
 *   xmhub-ingest-reaper --loop   a pass every timeout/4 seconds (at most
 *                                60, at least 1) until SIGTERM or SIGINT
 *
 * Settings: XMHUB_DATABASE_URL, XMHUB_SESSION_TIMEOUT (seconds without
 * data, default 300), from the environment or the env file (lib/core/conf).
 */
#include "config.h"

#include <stdio.h>

#include "core/conf.h"
#include "core/db.h"
#include "domain/ingest.h"
#include "core/runner.h"
#include "core/log.h"

/* One pass; false when the database failed. */
static bool
pass(struct db *db, long long timeout)
{
	unsigned long moved;
	enum db_status st = ingest_reap(db, timeout, &moved);

	if (st != DB_OK) {
		log_error("the database failed (see above); will retry");
		return false;
	}
	if (moved > 0)
		printf("xmhub-ingest-reaper: %lu session(s) silent for %llds "
		       "moved to error\n",
		       moved, timeout);
	fflush(stdout);
	return true;
}

int
main(int argc, char **argv)
{
	char detail[256];
	const char *url;
	long long timeout, interval;
	struct db *db;
	bool loop, ok;

	if (!runner_args(argc, argv, "xmhub-ingest-reaper", &loop))
		return 2;
	if (!conf_init(detail, sizeof(detail))) {
		log_error("%s", detail);
		return 1;
	}
	if (!conf_get_int("XMHUB_SESSION_TIMEOUT", &timeout)) {
		log_error("XMHUB_SESSION_TIMEOUT must be seconds from 1 to "
			  "2592000");
		return 1;
	}
	if ((url = conf_get("XMHUB_DATABASE_URL")) == NULL) {
		log_error("XMHUB_DATABASE_URL is not set");
		return 1;
	}
	if ((db = db_new(url)) == NULL) {
		log_error("out of memory");
		return 1;
	}
	runner_signals();
	ok = pass(db, timeout);
	interval = timeout / 4 > 60 ? 60 : timeout / 4 < 1 ? 1 : timeout / 4;
	while (loop && runner_sleep(interval))
		ok = pass(db, timeout);
	db_free(db);
	return ok || loop ? 0 : 1;
}
