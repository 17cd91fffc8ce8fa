/*
 * ingest.h - ingest sessions and their XMBP data (/api/v1/ingest/...).
 *
 * A device (API key with the ingest scope) opens a session naming its
 * device_uid and typed streams, sends XMBP batches, and closes it.  Every
 * committed batch adds one inline XMCH chunk row per stream block to
 * stored_chunks, in the same transaction that updates the session's
 * counters, so an acknowledgement means the data is durable.  Storage,
 * counters, limits and errors: doc/ingest.md.
 */
#ifndef XMHUB_INGEST_H
#define XMHUB_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "app.h"
#include "db.h"

#define INGEST_MAX_STREAMS 256	   /* streams a session may declare */
#define INGEST_HTTP_MAX (1u << 20) /* bytes of one batch POSTed over HTTP */
#define INGEST_NAME_MAX 200	   /* bytes of a session's or stream's name */

/*
 * The columns of an Ingest session object (spec 1, plus the name and
 * metadata it was created with) of the ingest_sessions row aliased s,
 * its streams as a JSON array ordered by stream_index: for every query
 * that answers sessions, so that they all answer the same object.
 */
#define INGEST_SESSION_COLUMNS                                                 \
	"s.id, s.facility_id, s.device_id, s.name, s.status, s.started_at, "   \
	"s.total_samples, s.total_bytes, s.missed_batches, s.metadata, "       \
	"(SELECT jsonb_agg(jsonb_build_object('id', t.id, 'stream_index', "    \
	"t.stream_index, 'name', t.name, 'value_type', t.value_type, "         \
	"'unit', t.unit, 'sample_rate_hz', t.sample_rate_hz) "                 \
	"ORDER BY t.stream_index) FROM ingest_streams t "                      \
	"WHERE t.session_id = s.id) AS streams"

/* What a committed batch answers (the running totals of the session). */
struct ingest_ack {
	uint32_t accepted_samples; /* total samples so far, saturating */
	uint32_t missed_batches;   /* saturating */
};

/* The batch_seq state of a session (DESIGN.md "Gaps"). */
struct ingest_gap {
	bool has_last;	 /* false until the first batch set the baseline */
	uint16_t last;	 /* last_batch_seq */
	uint64_t missed; /* missed_batches */
};

/*
 * Accounts a batch numbered seq: the first sets the baseline; after that
 * d = (seq - (last + 1)) mod 65536 below 32768 adds d to missed and makes
 * seq the last; d of 32768 or more (late or repeated) changes nothing.
 */
void ingest_gap_account(struct ingest_gap *g, uint16_t seq);

/*
 * Checks and commits one XMBP batch to session_id of facility_id (the
 * caller authenticated an API key of that facility with the ingest
 * scope).  Returns the HTTP status the answer should have: 200
 * (committed, durable, ack filled), 400 (decode error naming the spec's
 * error kind, TrailingData, undeclared stream, wrong type, device id
 * mismatch), 404 (no such session in this facility), 409 (session not
 * active), 503 (database unavailable), 500; detail set for every non-200.
 */
int ingest_data(struct db *db, const char *facility_id, const char *session_id,
		const uint8_t *batch, size_t len, struct ingest_ack *ack,
		char *detail, size_t dlen);

/* 200 when session_id is an active session of facility_id, else
 * 404/409/503/500 + detail. */
int ingest_session_usable(struct db *db, const char *facility_id,
			  const char *session_id, char *detail, size_t dlen);

/*
 * Moves every active session that had no data (last_data_at, or
 * started_at before the first batch) for timeout_s seconds to error; the
 * count into *moved.  A batch being committed meanwhile wins: the session
 * then has fresh data and stays active.
 */
enum db_status ingest_reap(struct db *db, long long timeout_s,
			   unsigned long *moved);

/* POST /api/v1/ingest/sessions: {device_uid, name?, streams, metadata?};
 * 201 with the session (the device created when unknown); 403 when the
 * device is deactivated. */
void ingest_post_session(struct app_ctx *ctx);

/* POST /api/v1/ingest/sessions/{id}/data: one XMBP batch (at most
 * INGEST_HTTP_MAX bytes, else 413); 200 {accepted_samples,
 * missed_batches} once committed; errors as ingest_data(). */
void ingest_post_data(struct app_ctx *ctx);

/* POST /api/v1/ingest/sessions/{id}/close: 200 with the closed session
 * (also when it was closed already); 403 another facility's; 404; 409
 * when the session ended in error. */
void ingest_post_close(struct app_ctx *ctx);

#endif
