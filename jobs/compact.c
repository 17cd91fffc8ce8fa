/* SPDX-License-Identifier: MIT */
/*
 * xmhub-ingest-compact - merges the inline chunks of closed and errored
 * ingest sessions into large chunks in the object store
 * (doc/compaction.md).
 *
 *   xmhub-ingest-compact --once   sweep, then compact every waiting
 *                                 stream, exit 0 (1 when one failed)
 *   xmhub-ingest-compact --loop   the same every XMHUB_COMPACT_INTERVAL
 *                                 seconds (default 60) until SIGTERM or
 *                                 SIGINT
 *
 * Settings (environment or env file, lib/core/conf): XMHUB_DATABASE_URL, the
 * object store's (lib/store/storage), XMHUB_COMPACT_TARGET_SAMPLES,
 * XMHUB_COMPACT_TARGET_BYTES, XMHUB_COMPACT_MIN_AGE,
 * XMHUB_COMPACT_INTERVAL; the test hook XMHUB_COMPACT_TEST_STALL
 * (lib/domain/compact.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "domain/compact.h"
#include "core/conf.h"
#include "core/db.h"
#include "core/runner.h"
#include "store/storage.h"
#include "core/log.h"

#define NAME "xmhub-ingest-compact"

/* One pass: the sweep, then every waiting stream; false on a failure. */
static bool
pass(struct db *db, struct db *side, struct store *st,
     const struct compact_opts *o)
{
	struct compact_result r;
	enum compact_status cs;
	unsigned long swept;
	struct buf skip;
	bool ok = true;

	if (compact_sweep(db, st, &swept) != DB_OK)
		ok = false;
	else if (swept > 0)
		printf(NAME ": swept %lu object(s) of runs that died\n", swept);
	/* A stream that fails is left for the next pass, not retried in
	 * this one, so that it does not hold up the others. */
	buf_init(&skip, 0);
	buf_append(&skip, "{}", 3); /* NUL included */
	while (!runner_stopping() && !skip.failed &&
	       (cs = compact_one(db, side, st, o, (const char *)skip.p, &r)) !=
		       COMPACT_NONE) {
		if (cs == COMPACT_FAILED) {
			ok = false;
			if (r.stream_id[0] == '\0')
				break;
			skip.len -= 2; /* "}" and the NUL */
			buf_printf(&skip, "%s%s}", skip.len > 1 ? "," : "",
				   r.stream_id);
			buf_putc(&skip, '\0');
			continue;
		}
		printf(NAME ": stream %s: %" PRIu64 " samples, %" PRIu64
			    " inline chunks -> %" PRIu64 " (%" PRIu64
			    " bytes)\n",
		       r.stream_id, r.samples, r.rows_in, r.rows_out,
		       r.bytes_out);
		fflush(stdout);
	}
	fflush(stdout);
	buf_free(&skip);
	return ok && !skip.failed;
}

int
main(int argc, char **argv)
{
	struct compact_opts o;
	struct store *st = NULL;
	struct db *db = NULL, *side = NULL;
	char detail[256];
	const char *url;
	long long interval;
	bool loop, ok = false;

	if (!runner_args(argc, argv, NAME, &loop))
		return 2;
	if (!conf_init(detail, sizeof(detail)) ||
	    !compact_opts_env(&o, detail, sizeof(detail))) {
		log_error("%s", detail);
		return 1;
	}
	if (!conf_get_int("XMHUB_COMPACT_INTERVAL", &interval)) {
		log_error("XMHUB_COMPACT_INTERVAL must be seconds from 1 to "
			  "86400");
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
	if ((db = db_new(url)) == NULL || (side = db_new(url)) == NULL) {
		log_error("out of memory");
		goto out;
	}
	runner_signals();
	ok = pass(db, side, st, &o);
	while (loop && runner_sleep(interval))
		ok = pass(db, side, st, &o);
out:
	db_free(side);
	db_free(db);
	store_close(st);
	return ok || loop ? 0 : 1;
}
