/* SPDX-License-Identifier: MIT */
/*
 * session-db - lib/domain/session.c against a real PostgreSQL: ingest
 * sessions listed (by facility, status and device, a page at a time,
 * newest first), read with their streams, their facility looked up, and
 * one stream read with its type and audio declaration.  Run by
 * t/e2e/session-db.t with a migrated database of its own in
 * XMHUB_TEST_DATABASE_URL; t/e2e/api-ingest.t and the metadata tests
 * prove the HTTP contract.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/session.h"
#include "tap.h"
#include "testdb.h"

#define NO_ID "00000000-0000-0000-0000-000000000000"

static struct db *db;

/* Runs sql with params p (n of them); its first value into out. */
static void
sql(const char *q, int n, const char *const *p, char *out, size_t len)
{
	PGresult *res = NULL;

	out[0] = '\0';
	if (db_query(db, &res, q, n, p) == DB_OK && PQntuples(res) > 0)
		snprintf(out, len, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
}

/* A facility with a device; their ids into fac and dev. */
static void
facility(const char *slug, char fac[64], char dev[64])
{
	const char *p[1] = {slug};

	sql("INSERT INTO facilities (name, slug) VALUES ($1, $1) RETURNING id",
	    1, p, fac, 64);
	p[0] = fac;
	sql("INSERT INTO devices (facility_id, device_uid, name) "
	    "VALUES ($1, 1, 'd') RETURNING id",
	    1, p, dev, 64);
}

/* A session of dev in fac with status, started secs seconds ago. */
static void
session(const char *fac, const char *dev, const char *status, const char *secs,
	char id[64])
{
	const char *p[4] = {fac, dev, status, secs};

	sql("INSERT INTO ingest_sessions (facility_id, device_id, status, "
	    "started_at) VALUES ($1, $2, $3, now() - $4::integer * "
	    "interval '1 s') RETURNING id",
	    4, p, id, 64);
}

static void
test_lists(const char *fac, const char *other, const char *odev,
	   const char *older, const char *newer)
{
	struct session_filter f = {
		.facility_id = fac, .limit = "20", .offset = "0"};
	PGresult *res = NULL;
	long long total = -1;
	char theirs[64];

	session(other, odev, "active", "0", theirs);
	ok(session_list(db, &f, &res, &total) == DB_OK && total == 2 &&
		   PQntuples(res) == 2 &&
		   strcmp(testdb_col(res, 0, "id"), newer) == 0 &&
		   strcmp(testdb_col(res, 1, "id"), older) == 0,
	   "list: the facility's sessions, newest first");
	PQclear(res);
	f.status = "closed";
	ok(session_list(db, &f, &res, &total) == DB_OK && total == 1 &&
		   strcmp(testdb_col(res, 0, "id"), older) == 0,
	   "list: by status");
	PQclear(res);
	f = (struct session_filter){
		.device_id = odev, .limit = "20", .offset = "0"};
	ok(session_list(db, &f, &res, &total) == DB_OK && total == 1 &&
		   strcmp(testdb_col(res, 0, "id"), theirs) == 0,
	   "list: by device, every facility");
	PQclear(res);
	f = (struct session_filter){.limit = "1", .offset = "2"};
	ok(session_list(db, &f, &res, &total) == DB_OK && total == 3 &&
		   PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "id"), older) == 0,
	   "list: a page of one, the third");
	PQclear(res);
}

static void
test_reads(const char *fac, const char *id)
{
	struct session_stream s;
	PGresult *res = NULL;
	bool found;
	char x[64];
	const char *p[1] = {id};

	sql("INSERT INTO ingest_streams (session_id, stream_index, name, "
	    "value_type, unit) VALUES ($1, 0, 'temp', 'f32', 'C') "
	    "RETURNING id",
	    1, p, x, sizeof(x));
	sql("INSERT INTO ingest_streams (session_id, stream_index, name, "
	    "value_type, audio_codec, audio_sample_rate_hz, audio_channels) "
	    "VALUES ($1, 1, 'mic', 'bytes', 'pcm_s16le', 16000, 1) "
	    "RETURNING id",
	    1, p, x, sizeof(x));
	ok(session_get(db, id, &res) == DB_OK && PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "facility_id"), fac) == 0 &&
		   strstr(testdb_col(res, 0, "streams"), "\"temp\"") != NULL &&
		   strstr(testdb_col(res, 0, "streams"), "pcm_s16le") != NULL,
	   "get: the session with its streams");
	PQclear(res);
	ok(session_get(db, NO_ID, &res) == DB_OK && PQntuples(res) == 0,
	   "get: none for an unknown id");
	PQclear(res);
	ok(session_facility(db, id, &res) == DB_OK && PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "facility_id"), fac) == 0,
	   "facility: the session's");
	PQclear(res);
	ok(session_stream(db, id, 0, &s, &found) == DB_OK && found &&
		   s.type == SAMPLE_F32 && s.audio.codec == 0 &&
		   s.id[0] != '\0',
	   "stream: a number stream, no audio");
	ok(session_stream(db, id, 1, &s, &found) == DB_OK && found &&
		   s.type == SAMPLE_BYTES && s.audio.codec != 0 &&
		   s.audio.rate == 16000 && s.audio.channels == 1 &&
		   strcmp(s.id, x) == 0,
	   "stream: bytes with their audio declaration");
	ok(session_stream(db, id, 2, &s, &found) == DB_OK && !found &&
		   session_stream(db, NO_ID, 0, &s, &found) == DB_OK && !found,
	   "stream: none for an unknown index or session");
}

int
main(void)
{
	const char *url = getenv("XMHUB_TEST_DATABASE_URL");
	char fac[64], dev[64], other[64], odev[64], older[64], newer[64];

	if (url == NULL || (db = db_new(url)) == NULL) {
		printf("Bail out! no database (XMHUB_TEST_DATABASE_URL)\n");
		return 1;
	}
	facility("session-db", fac, dev);
	facility("session-db-other", other, odev);
	session(fac, dev, "closed", "100", older);
	session(fac, dev, "active", "10", newer);
	if (ok(older[0] != '\0' && newer[0] != '\0' && odev[0] != '\0',
	       "two facilities, their devices, two sessions")) {
		test_lists(fac, other, odev, older, newer);
		test_reads(fac, newer);
	}
	db_free(db);
	return tap_done();
}
