/*
 * xmhub-ingest-ws - one WebSocket ingest connection, run by websocketd
 * in --binary mode behind lighttpd (doc/websocket.md): XMBP batches on
 * stdin, one 4-byte acknowledgement per committed batch on stdout.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/conf.h"
#include "core/db.h"
#include "core/log.h"
#include "web/app.h"
#include "domain/ingest.h"
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

static bool
commit(void *arg, const uint8_t *batch, size_t len, uint32_t *accepted,
       char *detail, size_t dlen)
{
	struct target *t = arg;
	struct ingest_ack ack = {0};
	struct authn_who who;
	enum ingest_status st;

	/* A key revoked (or its facility gone) since the upgrade ends the
	 * session before this batch is stored; no query unless a change
	 * was notified. */
	if (authn_api_key_status(t->db, t->key, "ingest", &who, detail, dlen) !=
	    200)
		return false;
	st = ingest_data(t->db, t->facility_id, t->session_id, batch, len, &ack,
			 detail, dlen);
	*accepted = ack.accepted_samples;
	return st == INGEST_OK;
}

int
main(void)
{
	struct target t = {0};
	struct wsingest_io io = {.in = 0, .out = 1, .commit = commit};
	struct buf answer;
	char detail[256];
	const char *url;
	long long idle;
	int rc = 1;

	buf_init(&answer, 0);
	log_init("xmhub-ingest-ws");
	if (!conf_init(detail, sizeof(detail))) {
		log_error("%s", detail);
		goto out;
	}
	/* Its batches count with the platform's (/api/metrics). */
	app_observe_init("ingest-ws", "XMHUB_", APP_METRICS_FILE);
	if ((url = conf_str("XMHUB_DATABASE_URL", NULL)) == NULL ||
	    !conf_int("XMHUB_WS_IDLE_TIMEOUT", 60, 1, 86400, &idle)) {
		log_error("XMHUB_DATABASE_URL must be set, "
			  "XMHUB_WS_IDLE_TIMEOUT 1 to 86400 (s)");
		goto out;
	}
	if ((t.db = db_new(url)) == NULL) {
		log_error("out of memory");
		goto out;
	}
	/* Checked before the upgrade already; again here, because this
	 * program must not rely on its web server (and needs the key's
	 * facility).  The pipe is empty: one write is one message. */
	if (!wsgate_check_env(t.db, environ, t.facility_id, t.session_id,
			      &answer)) {
		if (write(1, answer.p, answer.len) < 0)
			log_error("write: %m");
		goto out;
	}
	t.key = getenv("HTTP_X_API_KEY");
	io.idle_ms = (int)idle * 1000;
	io.arg = &t;
	rc = wsingest_serve(&io);
out:
	buf_free(&answer);
	db_free(t.db);
	return rc;
}
