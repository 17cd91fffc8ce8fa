/* SPDX-License-Identifier: MIT */
/*
 * bench/ws-sink.c - the limit of the WebSocket chain in bench/ws-chain:
 * run by websocketd in place of ws/xmhub-ingest-ws behind the same
 * lighttpd and front, it serves the connection with the real program's
 * loop (wsingest_serve(): batches cut from stdin by xmbp_frame(), rounds,
 * one paced 4-byte ack per batch), but its commit only decodes each batch
 * and acks the running sample total, big-endian as the real acks are; it
 * stores nothing and opens no database.  So what the real program adds to
 * this is its storage: checks of key and session, the transaction.
 * Built by `make bench-ws-chain` only, never installed.
 */
#include "config.h"

#include <stdio.h>

#include "codec/xmbp.h"
#include "core/conf.h"
#include "core/log.h"
#include "domain/ingestq.h"
#include "domain/wsingest.h"

/* Decodes each batch, as ingest_commit() does first (the same detail
 * when it does not), and acks the samples so far (saturating, as the
 * session's counter). */
static void
commit(void *arg, struct ingest_job *const *jobs, size_t n)
{
	unsigned long long *total = arg;
	struct xmbp_batch b;
	struct xmbp_stream st;
	struct xmbp_error err;

	for (size_t i = 0; i < n; i++) {
		if (xmbp_decode(jobs[i]->batch, jobs[i]->len, &b, &err) !=
		    XMBP_OK) {
			jobs[i]->status = INGEST_INVALID;
			snprintf(jobs[i]->detail, sizeof(jobs[i]->detail),
				 "XMBP decode error: %s: %s (byte %zu)",
				 xmbp_status_name(err.status), err.msg,
				 err.offset);
			return;
		}
		for (uint16_t k = 0; k < b.stream_count; k++) {
			xmbp_stream_at(&b, k, &st);
			*total += st.sample_count;
		}
		jobs[i]->status = INGEST_OK;
		jobs[i]->ack.accepted_samples =
			*total > UINT32_MAX ? UINT32_MAX : (uint32_t)*total;
	}
}

int
main(void)
{
	unsigned long long total = 0;
	struct wsingest_io io = {.in = 0, .out = 1, .commit = commit};
	struct ingestq_conf qc;
	char detail[256] = "XMHUB_WS_IDLE_TIMEOUT must be 1 to 86400 (s)";
	long long idle;
	int threads;

	log_init("ws-sink");
	/* The real program's round size and idle timeout, from the same
	 * env file (websocketd passes XMHUB_ENV_FILE). */
	if (!conf_init(detail, sizeof(detail)) ||
	    !ingestq_settings(&qc, &threads, detail, sizeof(detail)) ||
	    !conf_get_int("XMHUB_WS_IDLE_TIMEOUT", &idle)) {
		log_error("settings: %s", detail);
		return 1;
	}
	io.idle_ms = (int)idle * 1000;
	io.max_batches = qc.max_batches;
	io.arg = &total;
	return wsingest_serve(&io);
}
