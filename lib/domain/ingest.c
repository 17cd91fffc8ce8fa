/*
 * ingest.c - ingest sessions and their XMBP data.
 */
#include "config.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/streamaudio.h"
#include "codec/uuid.h"
#include "codec/xmbp.h"
#include "codec/xmch.h"
#include "core/auth.h"
#include "domain/chunks.h"
#include "domain/ingest.h"

/* What the steps below return besides an enum ingest_status: the
 * session's state changed under the step (or is not cached); read it
 * again. */
#define STALE (-1)

/* The status and detail of a failed query. */
static int
db_fail(enum db_status st, char *detail, size_t dlen)
{
	if (st == DB_UNAVAILABLE) {
		snprintf(detail, dlen, "the database is unavailable");
		return INGEST_UNAVAILABLE;
	}
	snprintf(detail, dlen, "internal error");
	return INGEST_ERROR;
}

/* INGEST_NOT_ACTIVE for a session whose status is not active. */
static int
not_active(const char *status, char *detail, size_t dlen)
{
	snprintf(detail, dlen, "the ingest session is %s, not active", status);
	return INGEST_NOT_ACTIVE;
}

void
ingest_gap_account(struct ingest_gap *g, uint16_t seq)
{
	uint16_t d;

	if (!g->has_last) {
		g->has_last = true;
		g->last = seq;
		return;
	}
	d = (uint16_t)(seq - (uint16_t)(g->last + 1u));
	if (d < 32768u) {
		g->missed += d;
		g->last = seq;
	}
}

/* --- session creation --- */

/*
 * One statement, so that it needs no transaction: the device (created
 * when unknown; ON CONFLICT makes two sessions created at once for a new
 * device_uid share one device), the session (not for a deactivated
 * device: no row) and its streams.
 */
static const char create_sql[] =
	"WITH dev AS (INSERT INTO devices (facility_id, device_uid, name) "
	"VALUES ($1::uuid, $2::bigint, $3::text) "
	"ON CONFLICT (facility_id, device_uid) "
	"DO UPDATE SET device_uid = EXCLUDED.device_uid "
	"RETURNING id, is_active), "
	"s AS (INSERT INTO ingest_sessions (facility_id, device_id, name, "
	"metadata) SELECT $1::uuid, dev.id, $4::text, "
	"COALESCE($5::jsonb, '{}') FROM dev WHERE dev.is_active "
	"RETURNING id), "
	"t AS (INSERT INTO ingest_streams (session_id, stream_index, name, "
	"value_type, unit, sample_rate_hz, description, audio_codec, "
	"audio_sample_rate_hz, audio_channels) "
	"SELECT s.id, x.stream_index, x.name, x.value_type, x.unit, "
	"x.sample_rate_hz, x.description, x.audio_codec, "
	"x.audio_sample_rate_hz, x.audio_channels FROM s, "
	"jsonb_to_recordset($6::jsonb) AS x(stream_index integer, name text, "
	"value_type text, unit text, sample_rate_hz real, description text, "
	"audio_codec text, audio_sample_rate_hz integer, "
	"audio_channels smallint)) "
	"SELECT id FROM s";

enum ingest_status
ingest_session_create(struct db *db, const char *facility_id,
		      uint32_t device_uid, const char *name,
		      const char *metadata, const char *streams,
		      char id[UUID_LEN + 1], char *detail, size_t dlen)
{
	char uid[16], devname[32];
	const char *params[6] = {facility_id, uid,	devname,
				 name,	      metadata, streams};
	PGresult *res = NULL;
	enum db_status st;
	int status = INGEST_OK;

	snprintf(uid, sizeof(uid), "%" PRIu32, device_uid);
	snprintf(devname, sizeof(devname), "device %" PRIu32, device_uid);
	if ((st = db_query(db, &res, create_sql, 6, params)) != DB_OK) {
		status = db_fail(st, detail, dlen);
	} else if (PQntuples(res) == 0) {
		snprintf(detail, dlen,
			 "device_uid %s is deactivated in this facility", uid);
		status = INGEST_DEVICE_INACTIVE;
	} else {
		snprintf(id, UUID_LEN + 1, "%s", PQgetvalue(res, 0, 0));
	}
	PQclear(res);
	return status;
}

/* --- data --- */

/* A declared stream of the session. */
struct stream_def {
	uint16_t index;
	enum sample_type type;
	char id[UUID_LEN + 1];
	struct streamaudio_decl audio; /* codec 0: no audio declared */
};

/* A session as read before a batch, its streams sorted by index. */
struct session {
	char id[UUID_LEN + 1], facility_id[UUID_LEN + 1];
	char status[16];
	struct ingest_gap gap;
	uint64_t total; /* total_samples */
	bool repeated;	/* the batch is one of its last stored ones */
	uint32_t device_uid;
	char device_id[UUID_LEN + 1];
	int nstreams;
	struct stream_def streams[]; /* nstreams */
};

/*
 * What does not change in a session (its facility, device and streams),
 * kept per process for the sessions seen last, one per slot of a hash
 * of the id: with it a batch that follows the last one of its session
 * is written in one statement, without reading the session first.
 */
#define CACHE_SLOTS 1024
static struct session *cache[CACHE_SLOTS];

static struct session **
cache_slot(const char *session_id)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (const char *p = session_id; *p != '\0'; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	return &cache[h % CACHE_SLOTS];
}

/* The cached session_id of facility_id, or NULL. */
static const struct session *
cache_get(const char *facility_id, const char *session_id)
{
	const struct session *s = *cache_slot(session_id);

	if (s != NULL && strcmp(s->id, session_id) == 0 &&
	    strcmp(s->facility_id, facility_id) == 0)
		return s;
	return NULL;
}

/* Keeps s (a copy) in its slot, replacing what was there. */
static void
cache_put(const struct session *s)
{
	size_t size = sizeof(*s) + (size_t)s->nstreams * sizeof(s->streams[0]);
	struct session **slot = cache_slot(s->id), *copy;

	if ((copy = malloc(size)) == NULL)
		return;
	memcpy(copy, s, size);
	free(*slot);
	*slot = copy;
}

static const char read_sql[] =
	"SELECT s.status, s.last_batch_seq, s.missed_batches, d.device_uid, "
	"s.device_id, t.stream_index, t.value_type, t.id, s.total_samples, "
	"$3::bytea = ANY (s.recent_batches), "
	"COALESCE(t.audio_codec, ''), t.audio_channels, "
	"t.audio_sample_rate_hz "
	"FROM ingest_sessions s JOIN devices d ON d.id = s.device_id "
	"JOIN ingest_streams t ON t.session_id = s.id "
	"WHERE s.id = $1::uuid AND s.facility_id = $2::uuid "
	"ORDER BY t.stream_index";

/*
 * One statement, hence one transaction, writes the batch: the session's
 * counters and its ring of the last 64 batch digests, but only while it
 * is active, its last_batch_seq is still the one the gap accounting
 * started from ($12) and the batch's digest ($16) is not in the ring (the
 * UPDATE takes the row's lock and, if another batch changed the row
 * meanwhile, checks the condition again on the new version); then, only when
 * that row was updated, a chunk row per stream block (their bytes are slices of
 * one bytea, $8, which spares PostgreSQL parsing a large array) and the
 * device's last_seen_at (at most once a second, to spare a row version
 * per batch).  No row: the caller reads the session again.
 */
static const char write_sql[] =
	"WITH s AS (UPDATE ingest_sessions SET "
	"total_samples = total_samples + $9::bigint, "
	"total_bytes = total_bytes + $10::bigint, "
	"missed_batches = missed_batches + $11::bigint, "
	"last_batch_seq = $13::integer, last_data_at = now(), "
	"recent_batches = (recent_batches || $16::bytea)"
	"[greatest(cardinality(recent_batches) - 62, 1):] "
	"WHERE id = $1::uuid AND facility_id = $15::uuid "
	"AND status = 'active' "
	"AND last_batch_seq IS NOT DISTINCT FROM $12::integer "
	"AND NOT ($16::bytea = ANY (recent_batches)) "
	"RETURNING total_samples, missed_batches), "
	"c AS (INSERT INTO stored_chunks (stream_id, start_ts_us, "
	"end_ts_us, sample_count, byte_size, data, agg_count, agg_nan_count, "
	"agg_min, agg_max, agg_sum, agg_grid) "
	"SELECT x.id, x.first, x.last, x.n, x.len, "
	"substring($8::bytea FROM x.off::integer FOR x.len::integer), "
	"g.a[x.k][1]::bigint, g.a[x.k][2]::bigint, g.a[x.k][3]::bigint, "
	"g.a[x.k][4]::bigint, g.a[x.k][5]::numeric, g.a[x.k][6]::bytea "
	"FROM s, unnest($3::uuid[], $4::numeric[], $5::numeric[], "
	"$6::bigint[], $7::bigint[], $14::bigint[]) WITH ORDINALITY "
	"AS x(id, first, last, n, len, off, k), "
	"(SELECT $17::text[] AS a) g), "
	"d AS (UPDATE devices SET last_seen_at = now() WHERE id = $2::uuid "
	"AND (last_seen_at IS NULL OR "
	"last_seen_at < now() - interval '1 second') "
	"AND EXISTS (SELECT FROM s)) "
	"SELECT total_samples, missed_batches FROM s";

/* The parameters of write_sql being built: array literals and the
 * chunks' bytes in bytea's hex form. */
struct rows {
	struct buf ids, starts, ends, counts, sizes, offs, data, aggs;
	size_t off; /* bytes of chunks so far */
	unsigned n;
	bool done; /* finished: every block's chunk is in */
};

static void
rows_init(struct rows *r)
{
	struct buf *all[] = {&r->ids,	&r->starts, &r->ends, &r->counts,
			     &r->sizes, &r->offs,   &r->data, &r->aggs};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		buf_init(all[i], 0);
	buf_puts(&r->data, "\\x");
	r->off = 0;
	r->n = 0;
	r->done = false;
}

static void
rows_free(struct rows *r)
{
	struct buf *all[] = {&r->ids,	&r->starts, &r->ends, &r->counts,
			     &r->sizes, &r->offs,   &r->data, &r->aggs};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		buf_free(all[i]);
}

/* Closes the array literals; false when memory ran out. */
static bool
rows_finish(struct rows *r)
{
	struct buf *arrays[] = {&r->ids,   &r->starts, &r->ends, &r->counts,
				&r->sizes, &r->offs,   &r->aggs};
	bool ok = true;

	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
		if (r->n == 0)
			buf_putc(arrays[i], '{');
		buf_putc(arrays[i], '}');
		buf_putc(arrays[i], '\0');
		ok &= !arrays[i]->failed;
	}
	buf_putc(&r->data, '\0');
	r->done = true;
	return ok && !r->data.failed;
}

/* Appends one chunk row: stream id, the chunk's time span, its bytes. */
static void
rows_add(struct rows *r, const char *stream_id, const struct xmch_writer *w,
	 const struct buf *chunk)
{
	static const char hex[] = "0123456789abcdef";
	char sep = r->n == 0 ? '{' : ',';
	uint8_t *p;

	buf_putc(&r->ids, sep);
	buf_puts(&r->ids, stream_id);
	buf_printf(&r->starts, "%c%" PRIu64, sep, w->first_ts);
	buf_printf(&r->ends, "%c%" PRIu64, sep, w->last_ts);
	buf_printf(&r->counts, "%c%" PRIu32, sep, w->count);
	buf_printf(&r->sizes, "%c%zu", sep, chunk->len);
	buf_printf(&r->offs, "%c%zu", sep, r->off + 1); /* substring: 1-based */
	chunks_agg_literal(&r->aggs, sep, chunk->p, chunk->len);
	if (buf_reserve(&r->data, 2 * chunk->len)) {
		p = r->data.p + r->data.len;
		for (size_t i = 0; i < chunk->len; i++) {
			*p++ = (uint8_t)hex[chunk->p[i] >> 4];
			*p++ = (uint8_t)hex[chunk->p[i] & 15];
		}
		r->data.len += 2 * chunk->len;
	}
	r->off += chunk->len;
	r->n++;
}

/* A sample's place in its block, to sort a block by timestamp. */
struct order {
	uint64_t ts;
	uint32_t i;
};

static int
order_cmp(const void *a, const void *b)
{
	const struct order *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * XMCH wants timestamps in ascending order and XMBP does not promise it:
 * the block's samples again, sorted by timestamp, ties kept in the order
 * they came (a stable sort), into the fresh writer w.
 */
static enum xmch_status
add_sorted(struct xmch_writer *w, const struct xmbp_stream *s,
	   struct xmch_error *err)
{
	struct xmbp_sample_iter it;
	struct sample_value *vals;
	struct order *ord;
	enum xmch_status st = XMCH_E_NOMEM;
	uint32_t n = 0;

	vals = calloc(s->sample_count, sizeof(*vals));
	ord = calloc(s->sample_count, sizeof(*ord));
	if (vals == NULL || ord == NULL)
		goto out;
	xmbp_samples(s, &it);
	while (n < s->sample_count &&
	       xmbp_sample_next(&it, &ord[n].ts, &vals[n])) {
		ord[n].i = n;
		n++;
	}
	qsort(ord, n, sizeof(*ord), order_cmp);
	st = XMCH_OK;
	for (uint32_t k = 0; k < n && st == XMCH_OK; k++)
		st = xmch_writer_add(w, ord[k].ts, &vals[ord[k].i], err);
out:
	free(vals);
	free(ord);
	return st;
}

/* Builds the chunk of block s into *chunk (w is initialised here and
 * left for the caller to free). */
static enum xmch_status
build_chunk(struct xmch_writer *w, const struct xmbp_stream *s,
	    struct buf *chunk, struct xmch_error *err)
{
	struct xmbp_sample_iter it;
	struct sample_value v;
	enum xmch_status st = XMCH_OK;
	uint64_t ts;

	xmch_writer_init(w, s->type);
	xmbp_samples(s, &it);
	while (st == XMCH_OK && xmbp_sample_next(&it, &ts, &v))
		st = xmch_writer_add(w, ts, &v, err);
	if (st == XMCH_E_UNORDERED) {
		xmch_writer_free(w);
		xmch_writer_init(w, s->type);
		st = add_sorted(w, s, err);
	}
	/* Inline chunks are written plain: compressing them on every batch
	 * would cost more CPU than their short life saves; compaction
	 * writes compressed ones. */
	if (st == XMCH_OK)
		st = xmch_writer_finish(w, false, chunk, err);
	return st;
}

static const struct stream_def *
find_stream(const struct session *s, uint16_t index)
{
	int lo = 0, hi = s->nstreams - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (s->streams[mid].index == index)
			return &s->streams[mid];
		if (s->streams[mid].index < index)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/* Copies the text of column col of res's first row into out. */
static bool
copy_text(const PGresult *res, int col, char *out, size_t len)
{
	return (size_t)snprintf(out, len, "%s", PQgetvalue(res, 0, col)) < len;
}

/*
 * The session of the rows of read_sql, in memory the caller frees; NULL
 * when they are malformed or memory runs out.
 */
static struct session *
read_session(const PGresult *res, const char *facility_id,
	     const char *session_id)
{
	int n = PQntuples(res);
	struct session *s;

	if (n > INGEST_MAX_STREAMS ||
	    (s = malloc(sizeof(*s) + (size_t)n * sizeof(s->streams[0]))) ==
		    NULL)
		return NULL;
	snprintf(s->id, sizeof(s->id), "%s", session_id);
	snprintf(s->facility_id, sizeof(s->facility_id), "%s", facility_id);
	s->gap.has_last = !PQgetisnull(res, 0, 1);
	s->gap.last = (uint16_t)strtoul(PQgetvalue(res, 0, 1), NULL, 10);
	s->gap.missed = strtoull(PQgetvalue(res, 0, 2), NULL, 10);
	s->device_uid = (uint32_t)strtoul(PQgetvalue(res, 0, 3), NULL, 10);
	s->total = strtoull(PQgetvalue(res, 0, 8), NULL, 10);
	s->repeated = strcmp(PQgetvalue(res, 0, 9), "t") == 0;
	s->nstreams = n;
	if (!copy_text(res, 0, s->status, sizeof(s->status)) ||
	    !copy_text(res, 4, s->device_id, sizeof(s->device_id)))
		goto bad;
	for (int i = 0; i < n; i++) {
		s->streams[i].index =
			(uint16_t)strtoul(PQgetvalue(res, i, 5), NULL, 10);
		if (!sample_type_from_name(PQgetvalue(res, i, 6),
					   &s->streams[i].type))
			goto bad;
		snprintf(s->streams[i].id, sizeof(s->streams[i].id), "%s",
			 PQgetvalue(res, i, 7));
		if (!streamaudio_decl_parse(
			    PQgetvalue(res, i, 10), PQgetvalue(res, i, 11),
			    PQgetvalue(res, i, 12), &s->streams[i].audio))
			goto bad;
	}
	return s;
bad:
	free(s);
	return NULL;
}

/*
 * Checks every block of batch b against the session and adds its chunk
 * to r, which it finishes.  Returns INGEST_OK, or INGEST_INVALID or
 * INGEST_ERROR with detail.
 */
static int
build_rows(const struct session *s, const struct xmbp_batch *b, struct rows *r,
	   uint64_t *samples, char *detail, size_t dlen)
{
	const struct stream_def *def;
	struct xmbp_stream st;
	struct xmch_writer w;
	struct xmch_error err;
	struct buf chunk;
	enum xmch_status cs;

	if (b->has_device_id && b->device_id != s->device_uid) {
		snprintf(detail, dlen,
			 "the batch's device_id %" PRIu32
			 " is not the session's device_uid %" PRIu32,
			 b->device_id, s->device_uid);
		return INGEST_INVALID;
	}
	*samples = 0;
	for (uint16_t i = 0; i < b->stream_count; i++) {
		xmbp_stream_at(b, i, &st);
		if ((def = find_stream(s, st.stream_id)) == NULL) {
			snprintf(detail, dlen,
				 "stream block %u: stream %u is not declared "
				 "in this session",
				 i, st.stream_id);
			return INGEST_INVALID;
		}
		if (def->type != st.type) {
			snprintf(detail, dlen,
				 "stream block %u: stream %u is declared %s, "
				 "the block holds %s",
				 i, st.stream_id, sample_type_name(def->type),
				 sample_type_name(st.type));
			return INGEST_INVALID;
		}
		if (!streamaudio_check_block(&st, &def->audio, detail, dlen))
			return INGEST_INVALID;
		/* An empty block adds nothing worth a row. */
		if (st.sample_count == 0)
			continue;
		buf_init(&chunk, 0);
		cs = build_chunk(&w, &st, &chunk, &err);
		if (cs == XMCH_OK)
			rows_add(r, def->id, &w, &chunk);
		xmch_writer_free(&w);
		buf_free(&chunk);
		if (cs != XMCH_OK) {
			/* The decoder checked all the writer checks again. */
			snprintf(detail, dlen, "internal error");
			return INGEST_ERROR;
		}
		*samples += st.sample_count;
	}
	if (!rows_finish(r)) {
		snprintf(detail, dlen, "out of memory");
		return INGEST_ERROR;
	}
	return INGEST_OK;
}

/* The counters of an acknowledgement, saturating. */
static void
set_ack(struct ingest_ack *ack, uint64_t total, uint64_t missed)
{
	ack->accepted_samples =
		total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
	ack->missed_batches =
		missed > UINT32_MAX ? UINT32_MAX : (uint32_t)missed;
}

/* What identifies a stored batch for retries: the first bytes of the
 * SHA-256 of the whole batch, passed as bytea's hex text. */
#define INGEST_DIGEST_LEN 16
#define INGEST_DIGEST_HEX (2 + 2 * INGEST_DIGEST_LEN + 1)

/* Tries of write_sql before giving up on a session that other batches
 * keep changing between its read and its write. */
#define WRITE_TRIES 32

/*
 * Writes the checked batch (write_sql) as the gap accounting of seq from
 * the session's state before, *from, says: INGEST_OK with ack filled,
 * STALE when the session is not (or no longer) in that state, or a
 * database failure.
 */
static int
write_batch(struct db *db, const struct session *s,
	    const struct ingest_gap *from, const struct rows *r, uint16_t seq,
	    const char *digest, uint64_t samples, size_t len,
	    struct ingest_ack *ack, char *detail, size_t dlen)
{
	char nsamples[24], nbytes[24], missed[24], prev[8], last[8];
	const char *params[17];
	struct ingest_gap g = *from;
	PGresult *res = NULL;
	enum db_status st;
	uint64_t total, nmissed;

	ingest_gap_account(&g, seq);
	snprintf(nsamples, sizeof(nsamples), "%" PRIu64, samples);
	snprintf(nbytes, sizeof(nbytes), "%zu", len);
	snprintf(missed, sizeof(missed), "%" PRIu64, g.missed - from->missed);
	snprintf(prev, sizeof(prev), "%u", from->last);
	snprintf(last, sizeof(last), "%u", g.last);
	params[0] = s->id;
	params[1] = s->device_id;
	params[2] = (const char *)r->ids.p;
	params[3] = (const char *)r->starts.p;
	params[4] = (const char *)r->ends.p;
	params[5] = (const char *)r->counts.p;
	params[6] = (const char *)r->sizes.p;
	params[7] = (const char *)r->data.p;
	params[8] = nsamples;
	params[9] = nbytes;
	params[10] = missed;
	params[11] = from->has_last ? prev : NULL;
	params[12] = last;
	params[13] = (const char *)r->offs.p;
	params[14] = s->facility_id;
	params[15] = digest;
	params[16] = (const char *)r->aggs.p;
	if ((st = db_query(db, &res, write_sql, 17, params)) != DB_OK)
		return db_fail(st, detail, dlen);
	if (PQntuples(res) == 0) {
		PQclear(res);
		return STALE;
	}
	total = strtoull(PQgetvalue(res, 0, 0), NULL, 10);
	nmissed = strtoull(PQgetvalue(res, 0, 1), NULL, 10);
	PQclear(res);
	set_ack(ack, total, nmissed);
	return INGEST_OK;
}

/* Reads session_id of facility_id into *s (the caller frees it; it is
 * also cached), with whether the batch of digest was stored lately:
 * INGEST_OK, INGEST_NOT_FOUND, INGEST_NOT_ACTIVE, or a
 * database failure. */
static int
read_active(struct db *db, const char *facility_id, const char *session_id,
	    const char *digest, struct session **s, char *detail, size_t dlen)
{
	const char *params[3] = {session_id, facility_id, digest};
	PGresult *res = NULL;
	enum db_status st;
	int status = INGEST_OK;

	*s = NULL;
	if ((st = db_query_ro(db, &res, read_sql, 3, params)) != DB_OK)
		return db_fail(st, detail, dlen);
	if (PQntuples(res) == 0) {
		snprintf(detail, dlen, "ingest session not found");
		status = INGEST_NOT_FOUND;
	} else if ((*s = read_session(res, facility_id, session_id)) == NULL)
		status = db_fail(DB_ERROR, detail, dlen);
	else if (strcmp((*s)->status, "active") != 0)
		status = not_active((*s)->status, detail, dlen);
	else
		cache_put(*s);
	PQclear(res);
	return status;
}

/*
 * The batch b of len bytes as the next of its session, when the session
 * is cached: the chunks built into r (INGEST_INVALID for a batch that
 * does not fit the session) and written if the session's last batch was
 * seq - 1, it is active and the batch is not a retry.  STALE when that could
 * not be tried or did not hold.
 */
static int
try_next(struct db *db, const char *facility_id, const char *session_id,
	 const struct xmbp_batch *b, const char *digest, size_t len,
	 struct rows *r, uint64_t *samples, struct ingest_ack *ack,
	 char *detail, size_t dlen)
{
	const struct session *s = cache_get(facility_id, session_id);
	struct ingest_gap prev = {true, (uint16_t)(b->batch_seq - 1u), 0};
	int status;

	if (s == NULL)
		return STALE;
	if ((status = build_rows(s, b, r, samples, detail, dlen)) != INGEST_OK)
		return status;
	return write_batch(db, s, &prev, r, b->batch_seq, digest, *samples, len,
			   ack, detail, dlen);
}

enum ingest_status
ingest_data(struct db *db, const char *facility_id, const char *session_id,
	    const uint8_t *batch, size_t len, struct ingest_ack *ack,
	    char *detail, size_t dlen)
{
	struct xmbp_batch *b = NULL;
	struct session *s = NULL;
	struct xmbp_error err;
	struct rows r;
	char sha[AUTH_SHA256_HEX], digest[INGEST_DIGEST_HEX];
	uint64_t samples = 0;
	int status = INGEST_ERROR;

	rows_init(&r);
	memset(ack, 0, sizeof(*ack));
	snprintf(detail, dlen, "internal error");
	if (!uuid_valid(session_id, strlen(session_id)) ||
	    !uuid_valid(facility_id, strlen(facility_id))) {
		snprintf(detail, dlen, "ingest session not found");
		status = INGEST_NOT_FOUND;
		goto out;
	}
	if ((b = malloc(sizeof(*b))) == NULL) {
		snprintf(detail, dlen, "out of memory");
		goto out;
	}
	if (xmbp_decode(batch, len, b, &err) != XMBP_OK) {
		snprintf(detail, dlen, "XMBP decode error: %s: %s (byte %zu)",
			 xmbp_status_name(err.status), err.msg, err.offset);
		status = INGEST_INVALID;
		goto out;
	}
	auth_sha256_hex(batch, len, sha);
	if (sha[0] == '\0')
		goto out;
	snprintf(digest, sizeof(digest), "\\x%.*s", 2 * INGEST_DIGEST_LEN, sha);
	if ((status = try_next(db, facility_id, session_id, b, digest, len, &r,
			       &samples, ack, detail, dlen)) != STALE)
		goto out;
	/* The streams and the device do not change: chunks built from the
	 * cache, or else from the first read, stay good. */
	for (int i = 0; i < WRITE_TRIES; i++) {
		free(s);
		if ((status = read_active(db, facility_id, session_id, digest,
					  &s, detail, dlen)) != INGEST_OK)
			goto out;
		/* A retry of a stored batch: acknowledged, not stored. */
		if (s->repeated) {
			set_ack(ack, s->total, s->gap.missed);
			goto out;
		}
		if (!r.done && (status = build_rows(s, b, &r, &samples, detail,
						    dlen)) != INGEST_OK)
			goto out;
		if ((status = write_batch(db, s, &s->gap, &r, b->batch_seq,
					  digest, samples, len, ack, detail,
					  dlen)) != STALE)
			goto out;
	}
	snprintf(detail, dlen,
		 "the ingest session is changed by other batches all the "
		 "time; try again");
	status = INGEST_BUSY;
out:
	rows_free(&r);
	free(s);
	free(b);
	return status;
}

static const char usable_sql[] =
	"SELECT status FROM ingest_sessions "
	"WHERE id = $1::uuid AND facility_id = $2::uuid";

enum ingest_status
ingest_session_usable(struct db *db, const char *facility_id,
		      const char *session_id, char *detail, size_t dlen)
{
	const char *params[2] = {session_id, facility_id};
	PGresult *res = NULL;
	enum db_status st;
	int status = INGEST_OK;

	if (!uuid_valid(session_id, strlen(session_id)) ||
	    !uuid_valid(facility_id, strlen(facility_id))) {
		snprintf(detail, dlen, "ingest session not found");
		return INGEST_NOT_FOUND;
	}
	if ((st = db_query_ro(db, &res, usable_sql, 2, params)) != DB_OK)
		return db_fail(st, detail, dlen);
	if (PQntuples(res) == 0) {
		snprintf(detail, dlen, "ingest session not found");
		status = INGEST_NOT_FOUND;
	} else if (strcmp(PQgetvalue(res, 0, 0), "active") != 0)
		status = not_active(PQgetvalue(res, 0, 0), detail, dlen);
	PQclear(res);
	return status;
}

/* --- close --- */

static const char close_lock_sql[] = "SELECT status FROM ingest_sessions "
				     "WHERE id = $1::uuid FOR UPDATE";

/* Nothing is buffered in memory (every batch is committed as it comes),
 * so closing has nothing to flush: it is the state between these two. */
static const char closing_sql[] = "UPDATE ingest_sessions SET status = "
				  "'closing' WHERE id = $1::uuid";

static const char closed_sql[] =
	"UPDATE ingest_sessions SET status = 'closed', closed_at = now() "
	"WHERE id = $1::uuid AND status = 'closing'";

enum ingest_status
ingest_close(struct db *db, const char *id, char *detail, size_t dlen)
{
	PGresult *res = NULL;
	enum db_status st;
	int status = INGEST_OK;

	if ((st = db_begin(db)) != DB_OK)
		return db_fail(st, detail, dlen);
	if ((st = db_query(db, &res, close_lock_sql, 1, &id)) != DB_OK) {
		status = db_fail(st, detail, dlen);
	} else if (PQntuples(res) == 0) {
		/* Deleted with its facility since the check. */
		snprintf(detail, dlen, "ingest session not found");
		status = INGEST_NOT_FOUND;
	} else if (strcmp(PQgetvalue(res, 0, 0), "error") == 0) {
		status = not_active("error", detail, dlen);
	} else if (strcmp(PQgetvalue(res, 0, 0), "closed") != 0) {
		const char *const steps[] = {closing_sql, closed_sql};

		for (size_t i = 0; i < 2 && st == DB_OK; i++) {
			PQclear(res);
			st = db_query(db, &res, steps[i], 1, &id);
		}
		if (st != DB_OK || (st = db_commit(db)) != DB_OK)
			status = db_fail(st, detail, dlen);
	}
	db_rollback(db);
	PQclear(res);
	return status;
}

/* --- the reaper --- */

static const char reap_sql[] =
	"UPDATE ingest_sessions SET status = 'error' "
	"WHERE status = 'active' AND COALESCE(last_data_at, started_at) < "
	"now() - make_interval(secs => $1::bigint)";

enum db_status
ingest_reap(struct db *db, long long timeout_s, unsigned long *moved)
{
	char secs[24];
	const char *params[1] = {secs};
	PGresult *res = NULL;
	enum db_status st;

	*moved = 0;
	snprintf(secs, sizeof(secs), "%lld", timeout_s);
	if ((st = db_query(db, &res, reap_sql, 1, params)) == DB_OK)
		*moved = strtoul(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	return st;
}
