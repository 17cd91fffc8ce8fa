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
 * XMHUB_RETENTION_FACE_VIDEO_DAYS, XMHUB_RETENTION_FACE_IMAGE_DAYS.  The
 * rest of the main:
 * lib/domain/jobmain.
 */
#include "config.h"

#include <stdio.h>

#include "core/conf.h"
#include "core/db.h"
#include "core/log.h"
#include "domain/jobmain.h"
#include "domain/retention.h"

#define NAME "xmhub-retention"

static bool
setup(struct jobmain *m)
{
	struct retention_face *face = m->arg;

	if (!conf_get_int("XMHUB_RETENTION_INTERVAL", &m->interval)) {
		log_error("XMHUB_RETENTION_INTERVAL must be seconds from 1 to "
			  "86400");
		return false;
	}
	if (!conf_get_int("XMHUB_RETENTION_FACE_VIDEO_DAYS",
			  &face->video_days)) {
		log_error("XMHUB_RETENTION_FACE_VIDEO_DAYS must be days from 0 "
			  "to 36500");
		return false;
	}
	if (!conf_get_int("XMHUB_RETENTION_FACE_IMAGE_DAYS",
			  &face->image_days)) {
		log_error("XMHUB_RETENTION_FACE_IMAGE_DAYS must be days from 0 "
			  "to 36500");
		return false;
	}
	return true;
}

/* One pass; false when the database failed. */
static bool
pass(struct jobmain *m)
{
	const struct retention_face *face = m->arg;
	struct retention_counts c = {0};
	enum db_status s = retention_pass(m->db, m->st, face, &c);
	unsigned long any = c.uploads + c.sessions + c.chunks + c.face_videos +
			    c.face_images + c.orphans;

	if (any > 0)
		printf(NAME ": deleted %lu upload(s), %lu session(s) with %lu "
			    "chunk row(s), %lu face video job(s), %lu face "
			    "image(s); %lu object(s) left (logged)\n",
		       c.uploads, c.sessions, c.chunks, c.face_videos,
		       c.face_images, c.orphans);
	fflush(stdout);
	if (s != DB_OK)
		log_error("the database failed (see above); will retry");
	return s == DB_OK;
}

int
main(int argc, char **argv)
{
	static const struct jobmain_def def = {
		.name = NAME,
		.store = true,
		.setup = setup,
		.pass = pass,
	};
	struct retention_face face;

	return jobmain_run(&def, &face, argc, argv);
}
