/* SPDX-License-Identifier: MIT */
/*
 * ingest.h - ingest sessions and their XMBP data, as domain operations
 * (the HTTP handlers are lib/api/ingestapi; the WebSocket loop is
 * lib/domain/wsingest).
 *
 * A device (API key with the ingest scope) opens a session naming its
 * device_uid and typed streams, sends XMBP batches, and closes it.  Every
 * stored batch adds one inline XMCH chunk row per stream block to
 * stored_chunks, in the same transaction that updates the session's
 * counters, so an acknowledgement means the data is durable.  Batches are
 * committed in rounds (ingest_commit: group commit; lib/domain/ingestq
 * feeds it from many requests).  Storage, counters, retries, limits and
 * errors: doc/ingest.md.
 */
#ifndef XMHUB_INGEST_H
#define XMHUB_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/uuid.h"
#include "core/db.h"

#define INGEST_MAX_STREAMS 256 /* streams a session may declare */
#define INGEST_NAME_MAX 200    /* bytes of a session's or stream's name */

/*
 * The columns of an Ingest session object (doc/ingest.md "Creating a session":
 * with the name and metadata it was created with) of the ingest_sessions row
 * aliased s, its streams as a JSON array ordered by stream_index: for every
 * query that answers sessions, so that they all answer the same object.
 */
#define INGEST_SESSION_COLUMNS                                                 \
	"s.id, s.facility_id, s.device_id, s.name, s.status, s.started_at, "   \
	"s.total_samples, s.total_bytes, s.missed_batches, s.metadata, "       \
	"(SELECT jsonb_agg(jsonb_build_object('id', t.id, 'stream_index', "    \
	"t.stream_index, 'name', t.name, 'value_type', t.value_type, "         \
	"'unit', t.unit, 'sample_rate_hz', t.sample_rate_hz) || "              \
	"CASE WHEN t.audio_codec IS NULL THEN '{}' ELSE jsonb_build_object("   \
	"'audio', jsonb_build_object('codec', t.audio_codec, "                 \
	"'sample_rate_hz', t.audio_sample_rate_hz, "                           \
	"'channels', t.audio_channels)) END "                                  \
	"ORDER BY t.stream_index) FROM ingest_streams t "                      \
	"WHERE t.session_id = s.id) AS streams"

/* What a committed batch answers (the running totals of the session). */
struct ingest_ack {
	uint32_t accepted_samples; /* total samples so far, saturating */
	uint32_t missed_batches;   /* saturating */
};

/* The batch_seq state of a session (doc/ingest.md "Gaps"). */
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

/* What an operation on a session came to; the detail says more. */
enum ingest_status {
	INGEST_OK,
	INGEST_INVALID,		/* the batch does not decode or fit the
				 * session (undeclared stream, wrong type,
				 * device id mismatch) */
	INGEST_NOT_FOUND,	/* no such session in the facility */
	INGEST_NOT_ACTIVE,	/* the session is closed or in error */
	INGEST_DEVICE_INACTIVE, /* the device is deactivated */
	INGEST_QUOTA,		/* the facility's storage quota has no room
				 * for the batch (lib/domain/quota.h) */
	INGEST_BUSY,		/* the queue of batches is full */
	INGEST_UNAVAILABLE,	/* the database is unavailable */
	INGEST_DEFERRED,	/* not looked at: another writer holds its
				 * session; commit it again (ingest_commit) */
	INGEST_ERROR		/* anything else (logged) */
};

/*
 * Opens a session of facility_id for device_uid (the device created when
 * unknown, named "device N"), named name (NULL: none), with metadata (a
 * JSON object as text, NULL: {}) and streams (a checked JSON array of
 * {stream_index, name, value_type, unit, sample_rate_hz, description,
 * audio_codec, audio_sample_rate_hz, audio_channels} as text), in one
 * statement.  INGEST_OK with id filled;
 * INGEST_DEVICE_INACTIVE, INGEST_UNAVAILABLE or INGEST_ERROR with detail.
 */
enum ingest_status ingest_session_create(struct db *db, const char *facility_id,
					 uint32_t device_uid, const char *name,
					 const char *metadata,
					 const char *streams,
					 char id[UUID_LEN + 1], char *detail,
					 size_t dlen);

/* One batch of a round of ingest_commit(). */
struct ingest_job {
	/* in: the caller authenticated an API key of facility_id with the
	 * ingest scope; the batch's bytes stay the caller's */
	const char *facility_id, *session_id;
	const uint8_t *batch;
	size_t len;
	bool deferred; /* in, out: deferred once already (INGEST_DEFERRED) */
	/* out */
	enum ingest_status status;
	struct ingest_ack ack; /* INGEST_OK: the session's counters */
	char detail[256];      /* otherwise: why */
};

/*
 * Commits the n batches of jobs to their sessions in one transaction
 * (group commit), accounted in that order under the sessions' row locks.
 * Each job answers INGEST_OK once committed (durable; ack filled; also a
 * retry, acknowledged and not stored again: doc/ingest.md "Retries"), or
 * INGEST_INVALID (the detail names the XMBP error kind, TrailingData, the
 * undeclared stream, the wrong type, the device id mismatch or the audio
 * frame that does not fit the stream's declaration),
 * INGEST_NOT_FOUND, INGEST_NOT_ACTIVE or INGEST_QUOTA (its facility's
 * storage quota has no room for it whole: quota_batch_bound() counted
 * against what the facility stores, the round's batches before it
 * included, under its locked facility_storage row): such a batch is left
 * out and does
 * not hold the others back, unless stop is true, when every batch after
 * it is left out too (INGEST_ERROR).  A failed database fails every batch
 * not refused (INGEST_UNAVAILABLE, INGEST_ERROR) and stores nothing.
 * When the batches are of more than one session, those of a session that
 * another writer holds locked are INGEST_DEFERRED rather than waited for
 * (unless every session is held, or a batch of the round was deferred
 * once already: then it waits), so that writers with rounds in common do
 * not queue behind each other; the caller commits them again, before
 * anything that came after them.  Not thread-safe: one
 * thread of a process commits (it keeps a cache).
 */
void ingest_commit(struct db *db, struct ingest_job *const *jobs, size_t n,
		   bool stop);

/* INGEST_OK when session_id is an active session of facility_id, else
 * INGEST_NOT_FOUND, INGEST_NOT_ACTIVE, INGEST_UNAVAILABLE or
 * INGEST_ERROR with detail. */
enum ingest_status ingest_session_usable(struct db *db, const char *facility_id,
					 const char *session_id, char *detail,
					 size_t dlen);

/*
 * Moves session id to closed in one transaction (nothing is buffered, so
 * there is nothing to flush): INGEST_OK, also when it was closed already;
 * INGEST_NOT_ACTIVE when it ended in error; INGEST_NOT_FOUND,
 * INGEST_UNAVAILABLE, INGEST_ERROR; with detail.  The caller checked the
 * session's facility.
 */
enum ingest_status ingest_close(struct db *db, const char *id, char *detail,
				size_t dlen);

/*
 * Moves every active session that had no data (last_data_at, or
 * started_at before the first batch) for timeout_s seconds to error; the
 * count into *moved.  A batch being committed meanwhile wins: the session
 * then has fresh data and stays active.
 */
enum db_status ingest_reap(struct db *db, long long timeout_s,
			   unsigned long *moved);

#endif
