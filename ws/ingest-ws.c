/* SPDX-License-Identifier: MIT */
/*
 * xmhub-ingest-ws - one WebSocket ingest connection, run by websocketd
 * in --binary mode behind lighttpd (doc/websocket.md): XMBP batches on
 * stdin, one 4-byte acknowledgement per committed batch on stdout.
 */
#include "config.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/conf.h"
#include "core/db.h"
#include "core/log.h"
#include "web/app.h"
#include "domain/ingest.h"
#include "domain/ingestq.h"
#include "api/wsgate.h"
#include "web/authn.h"
#include "domain/wsingest.h"

extern char **environ;

struct target {
	struct db *db;
	const char *key; /* the X-Api-Key the connection was opened with */
	char facility_id[AUTH_UUID_LEN + 1];
	char session_id[AUTH_UUID_LEN + 1];
};

static void
commit(void *arg, struct ingest_job *const *jobs, size_t n)
{
	struct target *t = arg;
	struct authn_who who;
	char detail[256];

	/* A key revoked (or its facility gone) since the upgrade ends the
	 * session before these batches are stored; no query unless a change
	 * was notified. */
	if (authn_api_key_status(t->db, t->key, "ingest", &who, detail,
				 sizeof(detail)) != 200) {
		for (size_t i = 0; i < n; i++) {
			jobs[i]->status = INGEST_ERROR;
			snprintf(jobs[i]->detail, sizeof(jobs[i]->detail), "%s",
				 detail);
		}
		return;
	}
	for (size_t i = 0; i < n; i++) {
		jobs[i]->facility_id = t->facility_id;
		jobs[i]->session_id = t->session_id;
	}
	ingest_commit(t->db, jobs, n, true);
}

int
main(void)
{
	struct target t = {0};
	struct wsingest_io io = {.in = 0, .out = 1, .commit = commit};
	struct slot held[WSGATE_SLOTS] = {SLOTS_NONE, SLOTS_NONE};
	struct buf answer;
	char detail[256];
	const char *url;
	struct ingestq_conf qc;
	long long idle;
	int threads, rc = 1;

	/* A round's buffers (chunks, parameters, libpq's) are allocated
	 * and freed every round: served from mmap or trimmed back, each
	 * round would fault its pages in afresh (a sixth of this program's
	 * CPU, measured).  Below 1 MiB they come from the heap, and up to
	 * 8 MiB of it stays mapped. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	mallopt(M_TRIM_THRESHOLD, 8 << 20);
	buf_init(&answer, 0);
	log_init("xmhub-ingest-ws");
	if (!conf_init(detail, sizeof(detail))) {
		log_error("%s", detail);
		goto out;
	}
	/* Its batches count with the platform's (/api/metrics). */
	app_observe_init("ingest-ws", false, APP_METRICS_FILE);
	if ((url = conf_get("XMHUB_DATABASE_URL")) == NULL ||
	    !conf_get_int("XMHUB_WS_IDLE_TIMEOUT", &idle)) {
		log_error("XMHUB_DATABASE_URL must be set, "
			  "XMHUB_WS_IDLE_TIMEOUT 1 to 86400 (s)");
		goto out;
	}
	if (!ingestq_settings(&qc, &threads, detail, sizeof(detail))) {
		log_error("%s", detail);
		goto out;
	}
	if ((t.db = db_new(url)) == NULL) {
		log_error("out of memory");
		goto out;
	}
	db_writer_plans(t.db);
	/* Checked before the upgrade already; again here, because this
	 * program must not rely on its web server (and needs the key's
	 * facility).  The pipe is empty: one write is one message. */
	if (!wsgate_check_env(t.db, environ, t.facility_id, t.session_id, held,
			      &answer)) {
		if (write(1, answer.p, answer.len) < 0)
			log_error("write: %m");
		goto out;
	}
	t.key = getenv("HTTP_X_API_KEY");
	io.idle_ms = (int)idle * 1000;
	io.max_batches = qc.max_batches;
	io.arg = &t;
	rc = wsingest_serve(&io);
out:
	slots_release(&held[0]);
	slots_release(&held[1]);
	buf_free(&answer);
	db_free(t.db);
	return rc;
}
