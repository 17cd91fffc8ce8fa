/* SPDX-License-Identifier: MIT */
/*
 * compact.c - merges the inline chunks of finished sessions into large
 * chunks in the object store.
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domain/chunks.h"
#include "domain/compact.h"
#include "core/conf.h"
#include "codec/sampleagg.h"
#include "codec/xmch.h"
#include "core/log.h"

#define KEY_MAX 600

/* One chunk written. */
struct out {
	char key[KEY_MAX];
	uint64_t start, end, count, size;
	struct sampleagg agg; /* numeric streams */
	struct buf grid;      /* its grid, when worth storing (len > 0) */
};

/* A run over one stream. */
struct run {
	struct db *db, *side;
	struct store *st;
	const struct compact_opts *o;
	char stream_id[37], facility_id[37], prefix[KEY_MAX];
	enum sample_type type;
	struct xmch_writer w;
	uint64_t count, first, last; /* samples in w */
	uint64_t raw;		     /* value and timestamp bytes in w */
	bool numeric;		     /* aggregates are stored */
	struct sampleagg agg;	     /* of the samples in w */
	struct buf grid;	     /* their grid, being built */
	struct sampleagg_grid g;
	struct out *outs;
	size_t nout, capout;
	struct buf chunk;
};

bool
compact_opts_env(struct compact_opts *o, char *detail, size_t dlen)
{
	long long n, b, age;

	/* settings.def's TARGET_BYTES range ends at XMCH_MAX_BYTES / 2. */
	if (!conf_get_int("XMHUB_COMPACT_TARGET_SAMPLES", &n) ||
	    !conf_get_int("XMHUB_COMPACT_TARGET_BYTES", &b) ||
	    !conf_get_int("XMHUB_COMPACT_MIN_AGE", &age)) {
		snprintf(detail, dlen,
			 "XMHUB_COMPACT_TARGET_SAMPLES must be 1 to 100000000, "
			 "XMHUB_COMPACT_TARGET_BYTES 1 to %u and "
			 "XMHUB_COMPACT_MIN_AGE 0 to 2592000",
			 XMCH_MAX_BYTES / 2);
		return false;
	}
	o->min_age = (unsigned)age;
	o->target_samples = (uint64_t)n;
	o->target_bytes = (size_t)b;
	o->stall_file = conf_get("XMHUB_COMPACT_TEST_STALL");
	return true;
}

static const char announce_sql[] =
	"INSERT INTO compact_pending (object_key, stream_id) "
	"VALUES ($1::text || gen_random_uuid()::text || '.xmch', $2::uuid) "
	"RETURNING object_key";

/* Writes the chunk being built as a new object; false (logged) when it
 * cannot. */
static bool
flush(struct run *r)
{
	struct xmch_error err;
	const char *params[2] = {r->prefix, r->stream_id};
	PGresult *res = NULL;
	struct out *o;
	char detail[256];

	if (r->nout == r->capout) {
		size_t cap = r->capout ? 2 * r->capout : 8;
		struct out *p = realloc(r->outs, cap * sizeof(*p));

		if (p == NULL) {
			log_error("compact: out of memory");
			return false;
		}
		r->outs = p;
		r->capout = cap;
	}
	o = &r->outs[r->nout];
	o->count = r->count;
	o->start = r->first;
	o->end = r->last;
	o->agg = r->agg;
	sampleagg_init(&r->agg, r->type);
	r->chunk.len = 0;
	if (xmch_writer_finish(&r->w, true, &r->chunk, &err) != XMCH_OK) {
		log_error("compact: stream %s: %s", r->stream_id, err.msg);
		return false;
	}
	xmch_writer_free(&r->w);
	xmch_writer_init(&r->w, r->type);
	r->raw = r->count = 0;
	/* Announced (committed) before the object exists: a crash after
	 * this leaves a row for compact_sweep(). */
	if (db_query(r->side, &res, announce_sql, 2, params) != DB_OK) {
		log_error("compact: announcing an object failed");
		return false;
	}
	snprintf(o->key, sizeof(o->key), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	o->size = r->chunk.len;
	if (store_put_buf(r->st, o->key, r->chunk.p, r->chunk.len,
			  "application/octet-stream", detail,
			  sizeof(detail)) != STORE_OK) {
		log_error("compact: writing %s: %s", o->key, detail);
		return false;
	}
	/* The grid goes with the chunk (freed with the outs). */
	if (!r->numeric || !sampleagg_grid_finish(&r->g) || r->grid.failed)
		r->grid.len = 0;
	o->grid = r->grid;
	buf_init(&r->grid, 0);
	sampleagg_grid_init(&r->g, r->type, &r->grid);
	r->nout++;
	return true;
}

/* Adds one sample, cutting a chunk when the target is reached. */
static bool
add(struct run *r, uint64_t ts, const struct sample_value *v)
{
	struct xmch_error err;
	size_t size = xmbp_sample_fixed_size(v->type);

	size = 8 + (size > 0 ? size : 4 + xmbp_sample_payload_size(v));
	if (r->count > 0 &&
	    (r->count >= r->o->target_samples ||
	     r->raw + size > r->o->target_bytes) &&
	    !flush(r))
		return false;
	if (xmch_writer_add(&r->w, ts, v, &err) != XMCH_OK) {
		/* Only a chunk at XMCH_MAX_BYTES refuses a valid value. */
		if (err.status != XMCH_E_TOO_LARGE || r->count == 0 ||
		    !flush(r) ||
		    xmch_writer_add(&r->w, ts, v, &err) != XMCH_OK) {
			log_error("compact: stream %s: %s", r->stream_id,
				  err.msg);
			return false;
		}
	}
	r->raw += size;
	if (r->numeric) {
		sampleagg_add(&r->agg, v);
		sampleagg_grid_add(&r->g, ts, v);
	}
	if (r->count++ == 0)
		r->first = ts;
	r->last = ts;
	return true;
}

static const char lock_sql[] =
	"SELECT st.id, st.stream_index, st.value_type, s.id, s.facility_id "
	"FROM ingest_streams st JOIN ingest_sessions s ON s.id = st.session_id "
	"WHERE s.status IN ('closed', 'error') AND EXISTS (SELECT 1 FROM "
	"stored_chunks c WHERE c.stream_id = st.id AND c.data IS NOT NULL) "
	"AND st.id <> ALL ($1::uuid[]) AND COALESCE(s.closed_at, "
	"s.last_data_at, s.started_at) <= now() - make_interval(secs => "
	"$2::integer) ORDER BY s.started_at, st.stream_index "
	"LIMIT 1 "
	"FOR NO KEY UPDATE OF st SKIP LOCKED";

/* The compacted chunk, its bytes added to its facility's ($13, from
 * lock_sql) storage in the same statement, a delta row (sql/020; its
 * session is not active, so it has no pending bytes: sql/023); the rows
 * it replaces are taken off by delete_sql's trigger. */
static const char insert_sql[] =
	"WITH c AS (INSERT INTO stored_chunks (stream_id, start_ts_us, "
	"end_ts_us, sample_count, byte_size, object_key, agg_count, "
	"agg_nan_count, agg_min, agg_max, agg_sum, agg_grid) VALUES "
	"($1::uuid, $2::numeric, $3::numeric, $4::bigint, $5::bigint, "
	"$6::text, $7::bigint, $8::bigint, $9::bigint, $10::bigint, "
	"$11::numeric, $12::bytea)) "
	"INSERT INTO facility_storage_delta (facility_id, sample_bytes) "
	"VALUES ($13::uuid, $5::bigint)";

static const char delete_sql[] =
	"WITH d AS (DELETE FROM stored_chunks WHERE stream_id = $1::uuid "
	"AND data IS NOT NULL AND seq <= $2::bigint RETURNING sample_count) "
	"SELECT count(*), COALESCE(sum(sample_count), 0) FROM d";

static const char unannounce_sql[] =
	"DELETE FROM compact_pending WHERE object_key = $1::text";

/* Waits to be killed (the test hook), after saying so with a file. */
static void
stall(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0)
		close(fd);
	for (;;)
		pause();
}

/* The swap: new rows in, exactly the rows read out, announcements gone.
 * False (logged) when anything disagrees; the caller rolls back. */
static bool
swap(struct run *r, const struct chunks_reader *cr, uint64_t samples)
{
	char a[24], b[24], c[24], d[24], seq[24];
	struct sampleagg_text t;
	struct buf hex;
	const char *params[13];
	PGresult *res = NULL;
	bool ok;

	for (size_t i = 0; i < r->nout; i++) {
		struct out *o = &r->outs[i];

		snprintf(a, sizeof(a), "%" PRIu64, o->start);
		snprintf(b, sizeof(b), "%" PRIu64, o->end);
		snprintf(c, sizeof(c), "%" PRIu64, o->count);
		snprintf(d, sizeof(d), "%" PRIu64, o->size);
		params[0] = r->stream_id;
		params[1] = a;
		params[2] = b;
		params[3] = c;
		params[4] = d;
		params[5] = o->key;
		sampleagg_to_text(&o->agg, &t);
		params[6] = r->numeric ? t.count : NULL;
		params[7] = r->numeric ? t.nan_count : NULL;
		params[8] = r->numeric ? t.min : NULL;
		params[9] = r->numeric ? t.max : NULL;
		params[10] = r->numeric ? t.sum : NULL;
		buf_init(&hex, 0);
		buf_puts(&hex, "\\x");
		for (size_t k = 0; k < o->grid.len; k++)
			buf_printf(&hex, "%02x", o->grid.p[k]);
		buf_putc(&hex, '\0');
		params[11] = o->grid.len > 0 ? (const char *)hex.p : NULL;
		params[12] = r->facility_id;
		ok = !hex.failed &&
		     db_query(r->db, &res, insert_sql, 13, params) == DB_OK;
		buf_free(&hex);
		if (!ok)
			return false;
		PQclear(res);
		params[0] = o->key;
		if (db_query(r->db, &res, unannounce_sql, 1, params) != DB_OK)
			return false;
		PQclear(res);
	}
	snprintf(seq, sizeof(seq), "%lld", chunks_max_seq(cr));
	params[0] = r->stream_id;
	params[1] = seq;
	if (db_query(r->db, &res, delete_sql, 2, params) != DB_OK)
		return false;
	ok = strtoull(PQgetvalue(res, 0, 0), NULL, 10) == chunks_rows(cr) &&
	     strtoull(PQgetvalue(res, 0, 1), NULL, 10) == samples;
	if (!ok)
		log_error("compact: stream %s: the rows to delete (%s, %s "
			  "samples) are not those read (%" PRIu64 ", %" PRIu64
			  "); nothing changed",
			  r->stream_id, PQgetvalue(res, 0, 0),
			  PQgetvalue(res, 0, 1), chunks_rows(cr), samples);
	PQclear(res);
	return ok;
}

/* Removes the objects of a run that failed, and their announcements
 * (what is left is the sweep's). */
static void
undo(struct run *r)
{
	char detail[256];
	PGresult *res = NULL;

	for (size_t i = 0; i < r->nout; i++) {
		const char *params[1] = {r->outs[i].key};

		if (store_delete(r->st, r->outs[i].key, detail,
				 sizeof(detail)) == STORE_OK &&
		    db_query(r->side, &res, unannounce_sql, 1, params) == DB_OK)
			PQclear(res);
	}
}

enum compact_status
compact_one(struct db *db, struct db *side, struct store *st,
	    const struct compact_opts *o, const char *skip,
	    struct compact_result *result)
{
	struct run r;
	struct chunks_opts co = {NULL, 0, UINT64_MAX, true,
				 COMPACT_READ_MEMORY};
	struct chunks_reader *cr = NULL;
	enum compact_status status = COMPACT_FAILED;
	enum chunks_status cs;
	struct sample_value v;
	PGresult *res = NULL;
	uint64_t ts, samples = 0;
	const char *params[2];
	char age[16];
	bool committing = false;

	memset(&r, 0, sizeof(r));
	memset(result, 0, sizeof(*result));
	r.db = db;
	r.side = side;
	r.st = st;
	r.o = o;
	buf_init(&r.chunk, 0);
	buf_init(&r.grid, 0);
	if (db_begin(db) != DB_OK)
		return COMPACT_FAILED;
	snprintf(age, sizeof(age), "%u", o->min_age);
	params[0] = skip;
	params[1] = age;
	if (db_query(db, &res, lock_sql, 2, params) != DB_OK)
		goto out;
	if (PQntuples(res) == 0) {
		status = COMPACT_NONE;
		goto out;
	}
	snprintf(r.stream_id, sizeof(r.stream_id), "%s", PQgetvalue(res, 0, 0));
	snprintf(r.facility_id, sizeof(r.facility_id), "%s",
		 PQgetvalue(res, 0, 4));
	memcpy(result->stream_id, r.stream_id, sizeof(r.stream_id));
	if (!xmbp_sample_type_from_name(PQgetvalue(res, 0, 2), &r.type)) {
		log_error("compact: stream %s: unknown value type",
			  r.stream_id);
		goto out;
	}
	snprintf(r.prefix, sizeof(r.prefix), "%s/ingest/%s/%s/",
		 PQgetvalue(res, 0, 4), PQgetvalue(res, 0, 3),
		 PQgetvalue(res, 0, 1));
	xmch_writer_init(&r.w, r.type);
	r.numeric = sampleagg_numeric(r.type);
	sampleagg_init(&r.agg, r.type);
	sampleagg_grid_init(&r.g, r.type, &r.grid);
	co.stream_id = r.stream_id;
	if ((cr = chunks_open(db, NULL, &co)) == NULL)
		goto out;
	while ((cs = chunks_next(cr, &ts, &v)) == CHUNKS_OK) {
		if (!add(&r, ts, &v))
			goto out;
		samples++;
	}
	if (cs != CHUNKS_END) {
		log_error("compact: stream %s: %s", r.stream_id,
			  chunks_detail(cr));
		goto out;
	}
	if (r.count > 0 && !flush(&r))
		goto out;
	if (o->stall_file != NULL)
		stall(o->stall_file);
	if (!swap(&r, cr, samples))
		goto out;
	/* A failed COMMIT may have committed: the objects stay, and the
	 * sweep finds out from the rows which are garbage. */
	committing = true;
	if (db_commit(db) != DB_OK)
		goto out;
	status = COMPACT_DONE;
	result->rows_in = chunks_rows(cr);
	result->rows_out = r.nout;
	result->samples = samples;
	for (size_t i = 0; i < r.nout; i++)
		result->bytes_out += r.outs[i].size;
out:
	if (status != COMPACT_DONE) {
		db_rollback(db);
		if (!committing)
			undo(&r);
	}
	PQclear(res);
	chunks_close(cr);
	xmch_writer_free(&r.w);
	buf_free(&r.chunk);
	buf_free(&r.grid);
	for (size_t i = 0; i < r.nout; i++)
		buf_free(&r.outs[i].grid);
	free(r.outs);
	return status;
}

static const char pending_sql[] =
	"SELECT p.object_key, EXISTS (SELECT 1 FROM stored_chunks c "
	"WHERE c.object_key = p.object_key) "
	"FROM compact_pending p JOIN ingest_streams st ON st.id = p.stream_id "
	"ORDER BY p.created_at LIMIT 100 "
	"FOR UPDATE OF p SKIP LOCKED FOR NO KEY UPDATE OF st SKIP LOCKED";

enum db_status
compact_sweep(struct db *db, struct store *st, unsigned long *swept)
{
	PGresult *res = NULL, *del = NULL;
	enum db_status s;
	char detail[256];
	int n;

	*swept = 0;
	if ((s = db_begin(db)) != DB_OK)
		return s;
	if ((s = db_query(db, &res, pending_sql, 0, NULL)) != DB_OK)
		goto out;
	n = PQntuples(res);
	for (int i = 0; i < n; i++) {
		const char *params[1] = {PQgetvalue(res, i, 0)};

		/* A key a chunk names is live whatever the announcement
		 * says; only the announcement goes then. */
		if (PQgetvalue(res, i, 1)[0] != 't' &&
		    store_delete(st, params[0], detail, sizeof(detail)) !=
			    STORE_OK) {
			log_error("compact: sweeping %s: %s", params[0],
				  detail);
			continue;
		}
		if ((s = db_query(db, &del, unannounce_sql, 1, params)) !=
		    DB_OK)
			goto out;
		PQclear(del);
		(*swept)++;
	}
	s = db_commit(db);
out:
	if (s != DB_OK)
		db_rollback(db);
	PQclear(res);
	return s;
}
