/* SPDX-License-Identifier: MIT */
/*
 * session.c - reading ingest sessions and their streams.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "domain/ingest.h"
#include "domain/paged.h"
#include "domain/session.h"

#define LIST_WHERE                                                             \
	"WHERE ($1::uuid IS NULL OR s.facility_id = $1::uuid) "                \
	"AND ($2::text IS NULL OR s.status = $2::text) "                       \
	"AND ($3::uuid IS NULL OR s.device_id = $3::uuid) "

static const char count_sql[] =
	"SELECT count(*) FROM ingest_sessions s " LIST_WHERE;

static const char list_sql[] =
	"SELECT " INGEST_SESSION_COLUMNS " FROM ingest_sessions s " LIST_WHERE
	"ORDER BY s.started_at DESC, s.id DESC "
	"LIMIT $4::bigint OFFSET $5::bigint";

static const char get_sql[] = "SELECT " INGEST_SESSION_COLUMNS
			      " FROM ingest_sessions s WHERE s.id = $1::uuid";

static const char facility_sql[] =
	"SELECT facility_id FROM ingest_sessions WHERE id = $1::uuid";

static const char stream_sql[] =
	"SELECT id, value_type, COALESCE(audio_codec, '') AS audio_codec, "
	"audio_channels, audio_sample_rate_hz FROM ingest_streams "
	"WHERE session_id = $1::uuid AND stream_index = $2::integer";

enum db_status
session_list(struct db *db, const struct session_filter *f, PGresult **rows,
	     long long *total)
{
	const char *p[5] = {f->facility_id, f->status, f->device_id, f->limit,
			    f->offset};

	return paged_list(db, count_sql, list_sql, 3, p, rows, total);
}

enum db_status
session_get(struct db *db, const char *id, PGresult **rows)
{
	return db_query_ro(db, rows, get_sql, 1, &id);
}

enum db_status
session_facility(struct db *db, const char *id, PGresult **rows)
{
	return db_query_ro(db, rows, facility_sql, 1, &id);
}

/* Column name of res's first row ("" for SQL NULL). */
static const char *
val(const PGresult *res, const char *name)
{
	return PQgetvalue(res, 0, PQfnumber(res, name));
}

enum db_status
session_stream(struct db *db, const char *id, unsigned stream_index,
	       struct session_stream *s, bool *found)
{
	char idx[12];
	const char *p[2] = {id, idx};
	PGresult *res = NULL;
	enum db_status st;

	memset(s, 0, sizeof(*s));
	*found = false;
	snprintf(idx, sizeof(idx), "%u", stream_index);
	if ((st = db_query_ro(db, &res, stream_sql, 2, p)) != DB_OK ||
	    PQntuples(res) != 1 ||
	    !xmbp_sample_type_from_name(val(res, "value_type"), &s->type))
		goto out;
	snprintf(s->id, sizeof(s->id), "%s", val(res, "id"));
	/* A declaration this program can not read is no audio: the parse
	 * leaves the empty one (codec 0). */
	(void)streamaudio_decl_parse(
		val(res, "audio_codec"), val(res, "audio_channels"),
		val(res, "audio_sample_rate_hz"), &s->audio);
	*found = true;
out:
	PQclear(res);
	return st;
}
