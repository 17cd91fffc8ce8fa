/* SPDX-License-Identifier: MIT */
/*
 * xmhub-retention - deletes what facilities' retention policies no
 * longer keep (doc/storage.md "Quotas and retention").
 *
 *   xmhub-retention --once   one pass (cron), exit 0, 1 on failure
 *   xmhub-retention --loop   a pass every XMHUB_RETENTION_INTERVAL
 *                            seconds (default 3600) until SIGTERM or
 *                            SIGINT
 *
 * Settings (environment or env file, lib/core/conf): XMHUB_DATABASE_URL,
 * the object store's (lib/store/storage), XMHUB_RETENTION_INTERVAL,
 * XMHUB_RETENTION_FACE_VIDEO_DAYS.
 */
#include "config.h"

#include <stdio.h>

#include "core/conf.h"
#include "core/db.h"
#include "core/log.h"
#include "core/runner.h"
#include "domain/retention.h"
#include "store/storage.h"

#define NAME "xmhub-retention"

/* One pass; false when the database failed. */
static bool
pass(struct db *db, struct store *st, long long face_days)
{
	struct retention_counts c = {0};
	enum db_status s = retention_pass(db, st, face_days, &c);

	if (c.uploads + c.sessions + c.chunks + c.face_videos + c.orphans > 0)
		printf(NAME ": deleted %lu upload(s), %lu session(s) with %lu "
			    "chunk row(s), %lu face video job(s); %lu "
			    "object(s) left (logged)\n",
		       c.uploads, c.sessions, c.chunks, c.face_videos,
		       c.orphans);
	fflush(stdout);
	if (s != DB_OK)
		log_error("the database failed (see above); will retry");
	return s == DB_OK;
}

int
main(int argc, char **argv)
{
	struct store *st = NULL;
	struct db *db = NULL;
	char detail[256];
	const char *url;
	long long interval, face_days;
	bool loop, ok = false;

	if (!runner_args(argc, argv, NAME, &loop))
		return 2;
	if (!conf_init(detail, sizeof(detail))) {
		log_error("%s", detail);
		return 1;
	}
	if (!conf_get_int("XMHUB_RETENTION_INTERVAL", &interval)) {
		log_error("XMHUB_RETENTION_INTERVAL must be seconds from 1 to "
			  "86400");
		return 1;
	}
	if (!conf_get_int("XMHUB_RETENTION_FACE_VIDEO_DAYS", &face_days)) {
		log_error("XMHUB_RETENTION_FACE_VIDEO_DAYS must be days from 0 "
			  "to 36500");
		return 1;
	}
	if ((url = conf_get("XMHUB_DATABASE_URL")) == NULL) {
		log_error("XMHUB_DATABASE_URL is not set");
		return 1;
	}
	if ((st = store_open_env(detail, sizeof(detail))) == NULL) {
		log_error("%s", detail);
		return 1;
	}
	if ((db = db_new(url)) == NULL) {
		log_error("out of memory");
		goto out;
	}
	runner_signals();
	ok = pass(db, st, face_days);
	while (loop && runner_sleep(interval))
		ok = pass(db, st, face_days);
out:
	db_free(db);
	store_close(st);
	return ok || loop ? 0 : 1;
}
