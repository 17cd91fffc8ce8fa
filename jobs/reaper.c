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
 * The rest of the main: lib/domain/jobmain.
 */
#include "config.h"

#include <stdio.h>

#include "core/conf.h"
#include "core/db.h"
#include "core/log.h"
#include "domain/ingest.h"
#include "domain/jobmain.h"

static bool
setup(struct jobmain *m)
{
	long long *timeout = m->arg;

	if (!conf_get_int("XMHUB_SESSION_TIMEOUT", timeout)) {
		log_error("XMHUB_SESSION_TIMEOUT must be seconds from 1 to "
			  "2592000");
		return false;
	}
	m->interval = *timeout / 4 > 60	 ? 60
		      : *timeout / 4 < 1 ? 1
					 : *timeout / 4;
	return true;
}

/* One pass; false when the database failed. */
static bool
pass(struct jobmain *m)
{
	const long long *timeout = m->arg;
	unsigned long moved;
	enum db_status st = ingest_reap(m->db, *timeout, &moved);

	if (st != DB_OK) {
		log_error("the database failed (see above); will retry");
		return false;
	}
	if (moved > 0)
		printf("xmhub-ingest-reaper: %lu session(s) silent for %llds "
		       "moved to error\n",
		       moved, *timeout);
	fflush(stdout);
	return true;
}

int
main(int argc, char **argv)
{
	static const struct jobmain_def def = {
		.name = "xmhub-ingest-reaper",
		.setup = setup,
		.pass = pass,
	};
	long long timeout;

	return jobmain_run(&def, &timeout, argc, argv);
}
