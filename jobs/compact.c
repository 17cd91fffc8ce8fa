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
 * (lib/domain/compact.h).  The rest of the main: lib/domain/jobmain.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "core/conf.h"
#include "core/db.h"
#include "core/log.h"
#include "core/runner.h"
#include "domain/compact.h"
#include "domain/jobmain.h"

#define NAME "xmhub-ingest-compact"

static bool
setup(struct jobmain *m)
{
	char detail[256];

	if (!compact_opts_env(m->arg, detail, sizeof(detail))) {
		log_error("%s", detail);
		return false;
	}
	if (!conf_get_int("XMHUB_COMPACT_INTERVAL", &m->interval)) {
		log_error("XMHUB_COMPACT_INTERVAL must be seconds from 1 to "
			  "86400");
		return false;
	}
	return true;
}

/* One pass: the sweep, then every waiting stream; false on a failure. */
static bool
pass(struct jobmain *m)
{
	const struct compact_opts *o = m->arg;
	struct compact_result r;
	enum compact_status cs;
	unsigned long swept;
	struct buf skip;
	bool ok = true;

	if (compact_sweep(m->db, m->st, &swept) != DB_OK)
		ok = false;
	else if (swept > 0)
		printf(NAME ": swept %lu object(s) of runs that died\n", swept);
	/* A stream that fails is left for the next pass, not retried in
	 * this one, so that it does not hold up the others. */
	buf_init(&skip, 0);
	buf_append(&skip, "{}", 3); /* NUL included */
	while (!runner_stopping() && !skip.failed &&
	       (cs = compact_one(m->db, m->side, m->st, o, (const char *)skip.p,
				 &r)) != COMPACT_NONE) {
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
	static const struct jobmain_def def = {
		.name = NAME,
		.store = true,
		.side_db = true,
		.setup = setup,
		.pass = pass,
	};
	struct compact_opts o;

	return jobmain_run(&def, &o, argc, argv);
}
