/* SPDX-License-Identifier: MIT */
/*
 * session.h - reading ingest sessions and their streams (doc/api.md
 * "Metadata"): the lists, one session, its facility, one stream.
 * lib/domain/ingest writes them.
 *
 * Session rows are as the API shows an IngestSession
 * (INGEST_SESSION_COLUMNS of lib/domain/ingest.h: id, facility_id,
 * device_id, name, status, started_at, totals, metadata, streams), in
 * *rows, which the caller PQclear()s (NULL on failure); statuses are
 * db_query()'s.  Who may read which facility's sessions is the caller's
 * rule (lib/web/scope), checked on facility_id.
 */
#ifndef XMHUB_SESSION_H
#define XMHUB_SESSION_H

#include <stdbool.h>

#include "codec/sample.h"
#include "codec/streamaudio.h"
#include "core/db.h"

/* Which sessions a list shows (NULL members: any), and which page. */
struct session_filter {
	const char *facility_id;
	const char *status;
	const char *device_id;
	const char *limit;  /* decimal text: LIMIT */
	const char *offset; /* decimal text: OFFSET */
};

/* One stream of a session, as the sample reads need it. */
struct session_stream {
	char id[37];
	enum sample_type type;
	/* Its audio declaration; codec 0 when it declares none. */
	struct streamaudio_decl audio;
};

/* The page of sessions f names, newest first, and in *total how many f
 * matches on every page. */
enum db_status session_list(struct db *db, const struct session_filter *f,
			    PGresult **rows, long long *total);

/* Session id: one row, or none when there is no such session. */
enum db_status session_get(struct db *db, const char *id, PGresult **rows);

/* Session id's facility_id: one row, or none. */
enum db_status session_facility(struct db *db, const char *id, PGresult **rows);

/* Stream stream_index of session id into *s; *found false when the
 * session has no such stream (or one of a type this program does not
 * know). */
enum db_status session_stream(struct db *db, const char *id,
			      unsigned stream_index, struct session_stream *s,
			      bool *found);

#endif
