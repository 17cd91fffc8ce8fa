/* SPDX-License-Identifier: MIT */
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
#include <strings.h>

#include "codec/hex.h"
#include "codec/sampleagg.h"
#include "codec/streamaudio.h"
#include "codec/uuid.h"
#include "codec/xmbp.h"
#include "codec/xmch.h"
#include "core/auth.h"
#include "domain/alarmeval.h"
#include "domain/ingest.h"
#include "core/metrics.h"
#include "domain/quota.h"

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

/* What does not change in a session: its device and its streams, sorted
 * by index. */
struct session {
	char id[UUID_LEN + 1];
	uint32_t device_uid;
	char device_id[UUID_LEN + 1];
	int nstreams;
	struct stream_def streams[]; /* nstreams */
};

/*
 * The unchanging part of the sessions seen last, one per slot of a hash
 * of the id, so that a round reads only the sessions' counters.  Only
 * the one thread that commits in a process (ingest_commit) uses it.
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

static size_t
session_size(int nstreams)
{
	return sizeof(struct session) +
	       (size_t)nstreams * sizeof(struct stream_def);
}

/* A copy of the cached session_id (the caller frees it), or NULL. */
static struct session *
cache_copy(const char *session_id)
{
	const struct session *s = *cache_slot(session_id);
	struct session *copy;

	if (s == NULL || strcmp(s->id, session_id) != 0 ||
	    (copy = malloc(session_size(s->nstreams))) == NULL)
		return NULL;
	memcpy(copy, s, session_size(s->nstreams));
	return copy;
}

/* Keeps a copy of s in its slot, replacing what was there. */
static void
cache_put(const struct session *s)
{
	struct session **slot = cache_slot(s->id), *copy;

	if ((copy = malloc(session_size(s->nstreams))) == NULL)
		return;
	memcpy(copy, s, session_size(s->nstreams));
	free(*slot);
	*slot = copy;
}

/* What identifies a stored batch for retries (doc/ingest.md "Retries"):
 * the first bytes of the SHA-256 of the whole batch; a session keeps
 * those of its last RECENT_MAX stored batches. */
#define DIGEST_HEX 32 /* 16 bytes, as hex digits */
#define RECENT_MAX 64

/*
 * A stream's chunk being built in a round: the samples of the round's
 * blocks of that stream, one block after the other while their
 * timestamps keep ascending, so that a round stores one row per stream
 * it touched rather than one per block (doc/ingest.md "Storage").
 */
struct pending {
	struct xmch_writer w;
	bool open;
};

/* The plain bytes beyond which a round's blocks of a stream go into
 * another chunk. */
#define MERGE_MAX_BYTES (1u << 20)

/* A session of a round: its state read under its row lock, and what the
 * round's batches did to it. */
struct live {
	const char *id;
	bool found; /* the row exists */
	char facility_id[UUID_LEN + 1], status[16];
	char device_id[UUID_LEN + 1];
	uint32_t device_uid;
	struct session *def; /* its streams; NULL until read */
	struct ingest_gap gap;
	uint64_t total; /* total_samples, this round's included */
	uint64_t add_samples, add_bytes;
	uint64_t add_stored; /* its chunks' bytes (pending_bytes, sql/023) */
	char recent[RECENT_MAX * DIGEST_HEX]; /* oldest first */
	size_t nrecent;
	bool changed; /* a batch of the round is stored */
	bool held;    /* another writer holds it: its batches are deferred */
	struct pending *pend; /* per stream of def, once a block is stored */
	struct room *room;    /* its facility's quota; NULL: no limit */
	bool limited;	      /* its facility has a quota (lock_sql) */
	bool watched;	      /* its facility has threshold rules (lock_sql) */
	long long rules_version; /* their version (lock_sql) */
	bool alarm_runs;	 /* a rule has a run going on (lock_sql) */
	size_t eval_slot;	 /* its place in the round's alarmeval */
};

/* What a facility with a quota may still store in a round (its
 * facility_storage row locked for the round). */
struct room {
	char facility_id[UUID_LEN + 1];
	int64_t left; /* bytes, the round's batches charged */
};

/*
 * The chunk rows of a round, as the parameters of write_sql: text array
 * literals (numbers, ids; an aggregate or grid place is NULL where the
 * chunk has none) and two binary byteas that the INSERT slices, the
 * chunks' bytes and their aggregate grids, one after the other: no hex
 * text.
 */
enum {
	COL_ID,
	COL_START,
	COL_END,
	COL_COUNT,
	COL_SIZE,
	COL_OFF,
	COL_AGG_COUNT,
	COL_AGG_NAN,
	COL_AGG_MIN,
	COL_AGG_MAX,
	COL_AGG_SUM,
	COL_GRID_OFF,
	COL_GRID_LEN,
	COL__MAX
};

struct rows {
	struct buf col[COL__MAX];
	struct buf data, grids;
	unsigned n;
};

static void
rows_init(struct rows *r)
{
	for (int i = 0; i < COL__MAX; i++)
		buf_init(&r->col[i], 0);
	buf_init(&r->data, 0);
	buf_init(&r->grids, 0);
	r->n = 0;
}

static void
rows_free(struct rows *r)
{
	for (int i = 0; i < COL__MAX; i++)
		buf_free(&r->col[i]);
	buf_free(&r->data);
	buf_free(&r->grids);
}

/*
 * Finishes writer w (stream stream_id) as one plain chunk row of r, with
 * its aggregates (sql/017); false when memory ran out.
 */
static bool
rows_add(struct rows *r, const char *stream_id, struct xmch_writer *w)
{
	struct buf *c = r->col;
	char sep = r->n == 0 ? '{' : ',';
	size_t off = r->data.len, goff = r->grids.len, len;
	struct sampleagg a;
	struct sampleagg_text t;
	struct xmch_error err;
	bool has_grid;

	/* Inline chunks are written plain: compressing them on every
	 * round would cost more CPU than their short life saves;
	 * compaction writes compressed ones. */
	if (xmch_writer_finish(w, false, &r->data, &err) != XMCH_OK)
		return false;
	len = r->data.len - off;
	for (int i = 0; i < COL__MAX; i++)
		buf_putc(&c[i], sep);
	buf_puts(&c[COL_ID], stream_id);
	buf_printf(&c[COL_START], "%" PRIu64, w->first_ts);
	buf_printf(&c[COL_END], "%" PRIu64, w->last_ts);
	buf_printf(&c[COL_COUNT], "%" PRIu32, w->count);
	buf_printf(&c[COL_SIZE], "%zu", len);
	/* substring() counts from 1 */
	buf_printf(&c[COL_OFF], "%zu", off + 1);
	if (sampleagg_chunk_grid(r->data.p + off, len, &a, &r->grids, &has_grid,
				 &err) != XMCH_OK) {
		/* Types that do not aggregate have none. */
		r->grids.len = goff;
		for (int i = COL_AGG_COUNT; i < COL__MAX; i++)
			buf_puts(&c[i], "NULL");
	} else {
		sampleagg_to_text(&a, &t);
		buf_puts(&c[COL_AGG_COUNT], t.count);
		buf_puts(&c[COL_AGG_NAN], t.nan_count);
		buf_puts(&c[COL_AGG_MIN], t.min);
		buf_puts(&c[COL_AGG_MAX], t.max);
		buf_puts(&c[COL_AGG_SUM], t.sum);
		if (has_grid) {
			buf_printf(&c[COL_GRID_OFF], "%zu", goff + 1);
			buf_printf(&c[COL_GRID_LEN], "%zu",
				   r->grids.len - goff);
		} else {
			r->grids.len = goff;
			buf_puts(&c[COL_GRID_OFF], "NULL");
			buf_puts(&c[COL_GRID_LEN], "NULL");
		}
	}
	r->n++;
	return !r->data.failed && !r->grids.failed;
}

/* Closes the array literals as text parameters; false when memory ran
 * out at any point. */
static bool
rows_finish(struct rows *r)
{
	bool ok = !r->data.failed && !r->grids.failed;

	for (int i = 0; i < COL__MAX; i++) {
		if (r->n == 0)
			buf_putc(&r->col[i], '{');
		buf_putc(&r->col[i], '}');
		buf_putc(&r->col[i], '\0');
		ok &= !r->col[i].failed;
	}
	return ok;
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

/*
 * Checks batch b against the session (device id, every block's stream
 * and type): INGEST_OK, or INGEST_INVALID with detail.
 */
static int
check_batch(const struct live *l, const struct xmbp_batch *b, char *detail,
	    size_t dlen)
{
	const struct stream_def *def;
	struct xmbp_stream st;

	if (b->has_device_id && b->device_id != l->device_uid) {
		snprintf(detail, dlen,
			 "the batch's device_id %" PRIu32
			 " is not the session's device_uid %" PRIu32,
			 b->device_id, l->device_uid);
		return INGEST_INVALID;
	}
	for (uint16_t i = 0; i < b->stream_count; i++) {
		xmbp_stream_at(b, i, &st);
		if ((def = find_stream(l->def, st.stream_id)) == NULL) {
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
				 i, st.stream_id,
				 xmbp_sample_type_name(def->type),
				 xmbp_sample_type_name(st.type));
			return INGEST_INVALID;
		}
		if (!streamaudio_check_block(&st, &def->audio, detail, dlen))
			return INGEST_INVALID;
	}
	return INGEST_OK;
}

/* Stores pending chunk p of stream stream_id as a row of r (unless it
 * is empty), its bytes added to *stored; false when memory ran out. */
static bool
flush(struct rows *r, const char *stream_id, struct pending *p,
      uint64_t *stored)
{
	size_t before = r->data.len;
	bool ok;

	if (!p->open)
		return true;
	ok = p->w.count == 0 || rows_add(r, stream_id, &p->w);
	*stored += r->data.len - before;
	xmch_writer_free(&p->w);
	p->open = false;
	return ok;
}

/* True when the timestamps of block s never go down; its first in
 * *first. */
static bool
in_order(const struct xmbp_stream *s, uint64_t *first)
{
	struct xmbp_sample_iter it;
	struct sample_value v;
	uint64_t ts, last = 0;
	bool any = false;

	xmbp_samples(s, &it);
	while (xmbp_sample_next(&it, &ts, &v)) {
		if (!any)
			*first = ts;
		else if (ts < last)
			return false;
		last = ts;
		any = true;
	}
	return true;
}

/* Makes p's writer a fresh one of type, after storing what it held
 * (its bytes added to *stored). */
static bool
restart(struct rows *r, const char *stream_id, struct pending *p,
	enum sample_type type, uint64_t *stored)
{
	if (!flush(r, stream_id, p, stored))
		return false;
	xmch_writer_init(&p->w, type);
	p->open = true;
	return true;
}

/*
 * Adds the samples of block s (checked against the session) to the
 * pending chunk of its stream, after storing that chunk as a row when the
 * block does not follow it in time or would make it too large; false
 * when memory ran out (the round is then lost).  XMCH wants ascending
 * timestamps and XMBP does not promise them: a block out of order starts
 * a chunk, sorted.
 */
static bool
add_block(struct live *l, const struct xmbp_stream *s, struct rows *r)
{
	const struct stream_def *def = find_stream(l->def, s->stream_id);
	struct pending *p = &l->pend[def - l->def->streams];
	struct xmbp_sample_iter it;
	struct sample_value v;
	struct xmch_error err;
	enum xmch_status st = XMCH_OK;
	uint64_t first = 0, ts;
	bool ordered;

	if ((!p->open ||
	     xmch_writer_size(&p->w) + s->data_len > MERGE_MAX_BYTES) &&
	    !restart(r, def->id, p, s->type, &l->add_stored))
		return false;
	if (xmbp_sample_fixed_size(s->type) != 0 && s->type != SAMPLE_BOOL) {
		/* Fixed-width values: copied as they are, no walk. */
		st = xmch_writer_add_packed(&p->w, s->data, s->sample_count,
					    &err);
		if (st == XMCH_E_UNORDERED && p->w.count > 0) {
			if (!restart(r, def->id, p, s->type, &l->add_stored))
				return false;
			st = xmch_writer_add_packed(&p->w, s->data,
						    s->sample_count, &err);
		}
		if (st == XMCH_E_UNORDERED)
			st = add_sorted(&p->w, s, &err);
		return st == XMCH_OK;
	}
	ordered = in_order(s, &first);
	if (!ordered || (p->w.count > 0 && first < p->w.last_ts)) {
		if (!restart(r, def->id, p, s->type, &l->add_stored))
			return false;
		if (!ordered)
			return add_sorted(&p->w, s, &err) == XMCH_OK;
	}
	xmbp_samples(s, &it);
	while (st == XMCH_OK && xmbp_sample_next(&it, &ts, &v))
		st = xmch_writer_add(&p->w, ts, &v, &err);
	/* The decoder checked all the writer checks again. */
	return st == XMCH_OK;
}

/* Adds every block with samples of the checked batch b to the pending
 * chunks of l, its samples to *samples; false when memory runs out. */
static bool
add_batch(struct live *l, const struct xmbp_batch *b, struct rows *r,
	  uint64_t *samples)
{
	struct xmbp_stream st;

	*samples = 0;
	if (l->pend == NULL && (l->pend = calloc((size_t)l->def->nstreams,
						 sizeof(*l->pend))) == NULL)
		return false;
	for (uint16_t i = 0; i < b->stream_count; i++) {
		xmbp_stream_at(b, i, &st);
		/* An empty block adds nothing worth a row. */
		if (st.sample_count == 0)
			continue;
		if (!add_block(l, &st, r))
			return false;
		*samples += st.sample_count;
	}
	return true;
}

/* Stores the pending chunks of l as rows of r (or only frees them, with
 * keep false); false when memory ran out. */
static bool
flush_all(struct live *l, struct rows *r, bool keep)
{
	bool ok = true;

	for (int i = 0; l->pend != NULL && i < l->def->nstreams; i++) {
		if (keep)
			ok &= flush(r, l->def->streams[i].id, &l->pend[i],
				    &l->add_stored);
		else if (l->pend[i].open)
			xmch_writer_free(&l->pend[i].w);
		l->pend[i].open = false;
	}
	return ok;
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

/* True when digest is among the session's last stored batches. */
static bool
is_recent(const struct live *l, const char *digest)
{
	for (size_t i = 0; i < l->nrecent; i++)
		if (memcmp(l->recent + i * DIGEST_HEX, digest, DIGEST_HEX) == 0)
			return true;
	return false;
}

/* Adds digest as the newest, dropping the oldest past RECENT_MAX. */
static void
push_recent(struct live *l, const char *digest)
{
	if (l->nrecent == RECENT_MAX) {
		memmove(l->recent, l->recent + DIGEST_HEX,
			(RECENT_MAX - 1) * DIGEST_HEX);
		l->nrecent--;
	}
	memcpy(l->recent + l->nrecent * DIGEST_HEX, digest, DIGEST_HEX);
	l->nrecent++;
}

/* The digest of the len bytes of batch into out; false when OpenSSL
 * fails. */
static bool
digest_of(const uint8_t *batch, size_t len, char out[DIGEST_HEX])
{
	char hex[AUTH_SHA256_HEX];

	auth_sha256_hex(batch, len, hex);
	memcpy(out, hex, DIGEST_HEX);
	return hex[0] != '\0';
}

/* The rows of the sessions of a round, locked in id order (so that two
 * writers never wait for each other in a cycle): their counters, the
 * digests of their last batches, their device, whether their facility
 * has a storage quota (only then is its row locked, lock_rooms()) and
 * the version of its threshold rules, when it has any (only then are
 * they evaluated, watch_sessions()). */
static const char lock_sql[] =
	"SELECT s.id, s.facility_id, s.status, s.last_batch_seq, "
	"s.missed_batches, s.total_samples, "
	"encode(s.recent_digests, 'hex'), "
	"d.device_uid, s.device_id, "
	"EXISTS (SELECT 1 FROM facility_storage q WHERE q.facility_id = "
	"s.facility_id AND q.quota_bytes IS NOT NULL), "
	"(SELECT a.version FROM alarm_rule_sets a WHERE a.facility_id = "
	"s.facility_id AND a.rules > 0), s.alarm_runs "
	"FROM ingest_sessions s JOIN devices d ON d.id = s.device_id "
	"WHERE s.id = ANY ($1::uuid[]) ORDER BY s.id FOR UPDATE OF s";

/* As lock_sql, leaving out the rows another writer holds. */
static const char lock_skip_sql[] =
	"SELECT s.id, s.facility_id, s.status, s.last_batch_seq, "
	"s.missed_batches, s.total_samples, "
	"encode(s.recent_digests, 'hex'), "
	"d.device_uid, s.device_id, "
	"EXISTS (SELECT 1 FROM facility_storage q WHERE q.facility_id = "
	"s.facility_id AND q.quota_bytes IS NOT NULL), "
	"(SELECT a.version FROM alarm_rule_sets a WHERE a.facility_id = "
	"s.facility_id AND a.rules > 0), s.alarm_runs "
	"FROM ingest_sessions s JOIN devices d ON d.id = s.device_id "
	"WHERE s.id = ANY ($1::uuid[]) ORDER BY s.id FOR UPDATE OF s "
	"SKIP LOCKED";

/* Which of the sessions lock_skip_sql left out exist: those are held. */
static const char exists_sql[] =
	"SELECT id FROM ingest_sessions WHERE id = ANY ($1::uuid[])";

/* The room left by the quotas of the facilities of a round that have
 * one, their rows locked in id order, their samples' deltas folded in
 * and their active sessions' pending bytes added (sql/019, sql/023):
 * every batch is charged against counts no other round of those
 * facilities moves until this one commits.  A facility without a quota
 * is not locked: its rounds go on side by side. */
static const char rooms_sql[] =
	"SELECT f.facility_id, f.quota_bytes - f.upload_bytes - f.sample_bytes "
	"FROM (SELECT facility_id FROM facility_storage "
	"WHERE facility_id = ANY ($1::uuid[]) AND quota_bytes IS NOT NULL "
	"ORDER BY facility_id FOR UPDATE) l, "
	"LATERAL facility_storage_fold(l.facility_id) f";

/* The streams of the sessions of a round not in the cache. */
static const char streams_sql[] =
	"SELECT session_id, stream_index, value_type, id, "
	"COALESCE(audio_codec, ''), audio_channels, audio_sample_rate_hz "
	"FROM ingest_streams WHERE session_id = ANY ($1::uuid[]) "
	"ORDER BY session_id, stream_index";

/*
 * write_sql's parameters by name: W_NAME is $W_NAME in the statement
 * (P(W_NAME)) and params[W_NAME - 1] in write_round().  The chunk rows'
 * arrays are the columns of struct rows (chunk_param[]), the changed
 * sessions' those of write_round()'s session arrays (session_param[]).
 */
#define W_STREAM 1	/* uuid[]: each chunk's stream */
#define W_FIRST 2	/* numeric[]: its first sample's time, us */
#define W_LAST 3	/* numeric[]: its last sample's time, us */
#define W_COUNT 4	/* bigint[]: its samples */
#define W_SIZE 5	/* bigint[]: its bytes */
#define W_OFF 6		/* bigint[]: where its bytes start in W_DATA */
#define W_DATA 7	/* bytea, binary: every chunk's bytes */
#define W_AGG_COUNT 8	/* bigint[]: its aggregates (sql/017) */
#define W_AGG_NAN 9	/* bigint[] */
#define W_AGG_MIN 10	/* bigint[] */
#define W_AGG_MAX 11	/* bigint[] */
#define W_AGG_SUM 12	/* numeric[] */
#define W_GRID_OFF 13	/* bigint[]: where its grid starts in W_GRIDS */
#define W_GRID_LEN 14	/* bigint[] */
#define W_GRIDS 15	/* bytea, binary: every chunk's aggregate grid */
#define W_SESSION 16	/* uuid[]: each changed session */
#define W_SAMPLES 17	/* bigint[]: samples it adds */
#define W_BYTES 18	/* bigint[]: bytes it adds */
#define W_MISSED 19	/* bigint[]: its missed_batches now */
#define W_LAST_SEQ 20	/* integer[]: its last_batch_seq now */
#define W_RECENT_OFF 21 /* bigint[]: where its digests start in W_RECENT */
#define W_RECENT_N 22	/* integer[]: how many */
#define W_DEVICES 23	/* uuid[]: the devices seen */
#define W_RECENT 24	/* bytea, binary: every session's digests */
#define W_STORED 25	/* bigint[]: its chunks' bytes (pending_bytes) */
#define W__N 25
#define W_STR_(n) #n
#define P(w) "$" W_STR_(w)

/*
 * What a round stores, in one statement: the chunk rows (their bytes and
 * aggregate grids are slices of two binary byteas, W_DATA and W_GRIDS),
 * the counters, last_batch_seq and digests of every session it changed
 * (counted in C under the row locks, the digests a slice of W_RECENT),
 * the chunks' bytes added to their session's pending_bytes, which is how
 * its facility's storage counts them (sql/023: no row more), and the
 * devices' last_seen_at (at most once a second, to spare a row version
 * per batch; locked in id order).
 */
/* Laid out by hand: clang-format takes P() for a call. */
/* clang-format off */
static const char write_sql[] =
	"WITH c AS (INSERT INTO stored_chunks (stream_id, start_ts_us, "
	"end_ts_us, sample_count, byte_size, data, agg_count, agg_nan_count, "
	"agg_min, agg_max, agg_sum, agg_grid) "
	"SELECT x.id, x.first, x.last, x.n, x.len, "
	"substring(" P(W_DATA) "::bytea FROM x.off::integer "
	"FOR x.len::integer), "
	"x.ac, x.an, x.amin, x.amax, x.asum, "
	"CASE WHEN x.goff IS NOT NULL THEN "
	"substring(" P(W_GRIDS) "::bytea FROM x.goff::integer "
	"FOR x.glen::integer) END "
	"FROM unnest(" P(W_STREAM) "::uuid[], " P(W_FIRST) "::numeric[], "
	P(W_LAST) "::numeric[], " P(W_COUNT) "::bigint[], "
	P(W_SIZE) "::bigint[], " P(W_OFF) "::bigint[], "
	P(W_AGG_COUNT) "::bigint[], " P(W_AGG_NAN) "::bigint[], "
	P(W_AGG_MIN) "::bigint[], " P(W_AGG_MAX) "::bigint[], "
	P(W_AGG_SUM) "::numeric[], " P(W_GRID_OFF) "::bigint[], "
	P(W_GRID_LEN) "::bigint[]) "
	"AS x(id, first, last, n, len, off, ac, an, amin, amax, asum, goff, "
	"glen)), "
	"s AS (UPDATE ingest_sessions t SET "
	"total_samples = t.total_samples + y.samples, "
	"total_bytes = t.total_bytes + y.bytes, "
	"pending_bytes = t.pending_bytes + y.stored, "
	"missed_batches = y.missed, last_batch_seq = y.last, "
	"last_data_at = now(), recent_digests = "
	"substring(" P(W_RECENT) "::bytea FROM y.roff::integer FOR y.rn * 16) "
	"FROM unnest(" P(W_SESSION) "::uuid[], " P(W_SAMPLES) "::bigint[], "
	P(W_BYTES) "::bigint[], " P(W_MISSED) "::bigint[], "
	P(W_LAST_SEQ) "::integer[], " P(W_RECENT_OFF) "::bigint[], "
	P(W_RECENT_N) "::integer[], " P(W_STORED) "::bigint[]) "
	"AS y(id, samples, bytes, missed, last, roff, rn, stored) "
	"WHERE t.id = y.id), "
	"d AS (UPDATE devices SET last_seen_at = now() WHERE id IN "
	"(SELECT e.id FROM devices e "
	"WHERE e.id = ANY (" P(W_DEVICES) "::uuid[]) "
	"AND (e.last_seen_at IS NULL OR "
	"e.last_seen_at < now() - interval '1 second') "
	"ORDER BY e.id FOR UPDATE)) "
	"SELECT 1";
/* clang-format on */

/* The parameter of each column of struct rows. */
static const int chunk_param[COL__MAX] = {
	[COL_ID] = W_STREAM,
	[COL_START] = W_FIRST,
	[COL_END] = W_LAST,
	[COL_COUNT] = W_COUNT,
	[COL_SIZE] = W_SIZE,
	[COL_OFF] = W_OFF,
	[COL_AGG_COUNT] = W_AGG_COUNT,
	[COL_AGG_NAN] = W_AGG_NAN,
	[COL_AGG_MIN] = W_AGG_MIN,
	[COL_AGG_MAX] = W_AGG_MAX,
	[COL_AGG_SUM] = W_AGG_SUM,
	[COL_GRID_OFF] = W_GRID_OFF,
	[COL_GRID_LEN] = W_GRID_LEN,
};

/* The changed sessions' arrays of write_round(), and their parameters. */
enum {
	SES_ID,
	SES_SAMPLES,
	SES_BYTES,
	SES_MISSED,
	SES_LAST,
	SES_RECENT_OFF,
	SES_RECENT_N,
	SES_STORED,
	SES__MAX
};
static const int session_param[SES__MAX] = {
	[SES_ID] = W_SESSION,	     [SES_SAMPLES] = W_SAMPLES,
	[SES_BYTES] = W_BYTES,	     [SES_MISSED] = W_MISSED,
	[SES_LAST] = W_LAST_SEQ,     [SES_RECENT_OFF] = W_RECENT_OFF,
	[SES_RECENT_N] = W_RECENT_N, [SES_STORED] = W_STORED,
};

/* A round: its sessions and their rows. */
struct round {
	struct live *lv;
	size_t nlive;
	struct room *rooms; /* the facilities with a quota, nrooms of them */
	size_t nrooms;
	size_t *which; /* per job: its session in lv */
	struct rows rows;
	struct xmbp_batch *b;  /* the batch being looked at */
	size_t stored;	       /* batches stored (not retries) */
	struct alarmeval eval; /* the threshold rules of watched sessions */
	bool broken; /* memory ran out: nothing of the round is stored */
	bool waits;  /* it holds a batch deferred once: no more skipping */
};

static bool
pick_any(const struct live *l)
{
	(void)l;
	return true;
}

static bool
pick_uncached(const struct live *l)
{
	return l->found && l->def == NULL;
}

static bool
pick_changed(const struct live *l)
{
	return l->changed;
}

static bool
pick_missing(const struct live *l)
{
	return !l->found;
}

static bool
pick_watched(const struct live *l)
{
	return l->found && !l->held && l->watched;
}

/* Starts the next element of an array literal in a. */
static void
elem(struct buf *a)
{
	buf_putc(a, a->len == 0 ? '{' : ',');
}

/* Ends the array literal in a as a C string. */
static void
elems_end(struct buf *a)
{
	if (a->len == 0)
		buf_putc(a, '{');
	buf_putc(a, '}');
	buf_putc(a, '\0');
}

/* The array literal of the ids (or device ids) of the sessions of r
 * that pick takes, into the empty a. */
static void
id_array(const struct round *r, bool (*pick)(const struct live *), bool device,
	 struct buf *a)
{
	for (size_t i = 0; i < r->nlive; i++) {
		if (!pick(r->lv + i))
			continue;
		elem(a);
		buf_puts(a, device ? r->lv[i].device_id : r->lv[i].id);
	}
	elems_end(a);
}

/* The session of r with id, or NULL. */
static struct live *
find_live(struct round *r, const char *id)
{
	for (size_t i = 0; i < r->nlive; i++)
		if (strcasecmp(r->lv[i].id, id) == 0)
			return r->lv + i;
	return NULL;
}

/* Fills the found sessions of r from the rows of lock_sql. */
static void
read_live(struct round *r, const PGresult *res)
{
	for (int i = 0; i < PQntuples(res); i++) {
		struct live *l = find_live(r, PQgetvalue(res, i, 0));
		const char *hex = PQgetvalue(res, i, 6);
		size_t n = strlen(hex) / DIGEST_HEX;

		if (l == NULL)
			continue;
		l->found = true;
		snprintf(l->facility_id, sizeof(l->facility_id), "%s",
			 PQgetvalue(res, i, 1));
		snprintf(l->status, sizeof(l->status), "%s",
			 PQgetvalue(res, i, 2));
		l->gap.has_last = !PQgetisnull(res, i, 3);
		l->gap.last =
			(uint16_t)strtoul(PQgetvalue(res, i, 3), NULL, 10);
		l->gap.missed = strtoull(PQgetvalue(res, i, 4), NULL, 10);
		l->total = strtoull(PQgetvalue(res, i, 5), NULL, 10);
		l->nrecent = n > RECENT_MAX ? RECENT_MAX : n;
		memcpy(l->recent, hex + (n - l->nrecent) * DIGEST_HEX,
		       l->nrecent * DIGEST_HEX);
		l->device_uid =
			(uint32_t)strtoul(PQgetvalue(res, i, 7), NULL, 10);
		snprintf(l->device_id, sizeof(l->device_id), "%s",
			 PQgetvalue(res, i, 8));
		l->limited = PQgetvalue(res, i, 9)[0] == 't';
		l->watched = !PQgetisnull(res, i, 10);
		l->rules_version = strtoll(PQgetvalue(res, i, 10), NULL, 10);
		l->alarm_runs = PQgetvalue(res, i, 11)[0] == 't';
		l->def = cache_copy(l->id);
	}
}

/* Builds the streams of the sessions of r not cached from the rows of
 * streams_sql (and caches them); false when out of memory or when the
 * rows are malformed. */
static bool
read_streams(struct round *r, const PGresult *res)
{
	int n = PQntuples(res), i = 0, k;

	while (i < n) {
		struct live *l = find_live(r, PQgetvalue(res, i, 0));
		struct session *s;

		for (k = i; k < n && strcmp(PQgetvalue(res, k, 0),
					    PQgetvalue(res, i, 0)) == 0;
		     k++)
			;
		if (l == NULL || k - i > INGEST_MAX_STREAMS ||
		    (s = malloc(session_size(k - i))) == NULL)
			return false;
		snprintf(s->id, sizeof(s->id), "%s", l->id);
		s->nstreams = k - i;
		for (int j = 0; j < s->nstreams; j++) {
			struct stream_def *d = &s->streams[j];

			d->index = (uint16_t)strtoul(PQgetvalue(res, i + j, 1),
						     NULL, 10);
			snprintf(d->id, sizeof(d->id), "%s",
				 PQgetvalue(res, i + j, 3));
			if (!xmbp_sample_type_from_name(
				    PQgetvalue(res, i + j, 2), &d->type) ||
			    !streamaudio_decl_parse(PQgetvalue(res, i + j, 4),
						    PQgetvalue(res, i + j, 5),
						    PQgetvalue(res, i + j, 6),
						    &d->audio)) {
				free(s);
				return false;
			}
		}
		free(l->def);
		l->def = s;
		cache_put(s);
		i = k;
	}
	/* A session has at least one stream: none read is a broken row. */
	for (size_t j = 0; j < r->nlive; j++)
		if (r->lv[j].found && r->lv[j].def == NULL)
			return false;
	return true;
}

/* Marks the sessions of r that the rows of exists_sql name as held;
 * true when r has a session it could lock. */
static bool
read_held(struct round *r, const PGresult *res)
{
	bool any = false;

	for (int i = 0; i < PQntuples(res); i++) {
		struct live *l = find_live(r, PQgetvalue(res, i, 0));

		if (l != NULL)
			l->held = true;
	}
	for (size_t i = 0; i < r->nlive; i++)
		any |= r->lv[i].found;
	return any;
}

/* Runs sql with the array of the ids of the sessions of r that pick
 * takes as $1: its result in *res, or NULL when pick takes none. */
static enum db_status
query_ids(struct db *db, const struct round *r,
	  bool (*pick)(const struct live *), const char *sql, PGresult **res)
{
	struct buf ids;
	const char *p;
	enum db_status st = DB_OK;

	*res = NULL;
	buf_init(&ids, 0);
	id_array(r, pick, false, &ids);
	p = (const char *)ids.p;
	if (ids.failed)
		st = DB_ERROR;
	else if (strcmp(p, "{}") != 0)
		st = db_query(db, res, sql, 1, &p);
	buf_free(&ids);
	return st;
}

/*
 * Locks and reads the sessions of r: INGEST_OK or a database failure.  A
 * round of several sessions skips those another writer holds (marked
 * held), unless it would then have none or holds a batch deferred before:
 * it waits for them.
 */
static int
lock_sessions(struct db *db, struct round *r, char *detail, size_t dlen)
{
	PGresult *res = NULL;
	enum db_status st;
	bool skip = r->nlive > 1 && !r->waits;

	if ((st = query_ids(db, r, pick_any, skip ? lock_skip_sql : lock_sql,
			    &res)) != DB_OK)
		goto out;
	read_live(r, res);
	PQclear(res);
	if (skip) {
		if ((st = query_ids(db, r, pick_missing, exists_sql, &res)) !=
		    DB_OK)
			goto out;
		if (res != NULL && !read_held(r, res)) {
			/* Nothing to do but wait for them. */
			for (size_t i = 0; i < r->nlive; i++)
				r->lv[i].held = false;
			PQclear(res);
			if ((st = query_ids(db, r, pick_any, lock_sql, &res)) !=
			    DB_OK)
				goto out;
			read_live(r, res);
		}
		PQclear(res);
	}
	if ((st = query_ids(db, r, pick_uncached, streams_sql, &res)) ==
		    DB_OK &&
	    res != NULL && !read_streams(r, res))
		st = DB_ERROR;
out:
	PQclear(res);
	return st == DB_OK ? INGEST_OK : db_fail(st, detail, dlen);
}

/* The facility of the i-th session of r, when it has a quota, unless
 * another session before it has it or it is not to be written (missing,
 * held by another writer). */
static bool
first_of_facility(const struct round *r, size_t i)
{
	if (!r->lv[i].found || r->lv[i].held || !r->lv[i].limited)
		return false;
	for (size_t k = 0; k < i; k++)
		if (r->lv[k].found && !r->lv[k].held &&
		    strcmp(r->lv[k].facility_id, r->lv[i].facility_id) == 0)
			return false;
	return true;
}

/*
 * Locks the facility_storage rows of the facilities of r's sessions that
 * have a quota and gives each of their sessions its room: INGEST_OK or a
 * database failure.  A round of facilities without one asks nothing more
 * (a quota set since lock_sql holds from the next round).  A facility
 * without a row (deleted meanwhile) has no limit: its sessions are gone
 * too.
 */
static int
lock_rooms(struct db *db, struct round *r, char *detail, size_t dlen)
{
	struct buf ids;
	const char *p;
	PGresult *res = NULL;
	enum db_status st = DB_ERROR;
	size_t n = 0;

	buf_init(&ids, 0);
	for (size_t i = 0; i < r->nlive; i++) {
		if (!first_of_facility(r, i))
			continue;
		elem(&ids);
		buf_puts(&ids, r->lv[i].facility_id);
		n++;
	}
	elems_end(&ids);
	if (n == 0 && !ids.failed) {
		st = DB_OK;
		goto out;
	}
	p = (const char *)ids.p;
	if (ids.failed ||
	    (r->rooms = calloc(r->nlive, sizeof(*r->rooms))) == NULL)
		goto out;
	if ((st = db_query(db, &res, rooms_sql, 1, &p)) != DB_OK)
		goto out;
	for (int k = 0; k < PQntuples(res) && (size_t)k < r->nlive; k++) {
		struct room *m = &r->rooms[r->nrooms];

		if (PQgetisnull(res, k, 1))
			continue;
		snprintf(m->facility_id, sizeof(m->facility_id), "%s",
			 PQgetvalue(res, k, 0));
		m->left = strtoll(PQgetvalue(res, k, 1), NULL, 10);
		r->nrooms++;
		for (size_t i = 0; i < r->nlive; i++)
			if (strcmp(r->lv[i].facility_id, m->facility_id) == 0)
				r->lv[i].room = m;
	}
out:
	PQclear(res);
	buf_free(&ids);
	return st == DB_OK ? INGEST_OK : db_fail(st, detail, dlen);
}

/* Loads the threshold rules of the sessions of r whose facility has
 * some: INGEST_OK or a database failure. */
static int
watch_sessions(struct db *db, struct round *r, char *detail, size_t dlen)
{
	enum db_status st = DB_OK;

	for (size_t i = 0; i < r->nlive; i++) {
		struct live *l = &r->lv[i];

		if (pick_watched(l) &&
		    !alarmeval_watch(&r->eval, r->nlive, l->id,
				     l->rules_version, l->alarm_runs,
				     &l->eval_slot))
			st = DB_ERROR;
	}
	if (st == DB_OK && r->eval.ns > 0)
		st = alarmeval_load(db, &r->eval);
	return st == DB_OK ? INGEST_OK : db_fail(st, detail, dlen);
}

/* Hands the blocks of the stored batch b of the watched session l to the
 * round's threshold rules. */
static void
watch_batch(struct round *r, const struct live *l, const struct xmbp_batch *b)
{
	struct xmbp_stream st;

	if (!pick_watched(l))
		return;
	for (uint16_t i = 0; i < b->stream_count; i++) {
		xmbp_stream_at(b, i, &st);
		alarmeval_block(&r->eval, l->eval_slot,
				find_stream(l->def, st.stream_id)->id, &st);
	}
}

/* Charges batch b to the quota of l's facility: false, with j answered,
 * when it does not fit whole (doc/storage.md "Quotas and retention"). */
static bool
charge(struct live *l, const struct xmbp_batch *b, struct ingest_job *j)
{
	uint64_t need;

	if (l->room == NULL)
		return true;
	need = quota_batch_bound(b);
	if (l->room->left < 0 || need > (uint64_t)l->room->left) {
		snprintf(j->detail, sizeof(j->detail),
			 "the facility's storage quota is used up: this batch "
			 "needs up to %" PRIu64 " bytes, %" PRId64 " are left",
			 need, l->room->left < 0 ? 0 : l->room->left);
		j->status = INGEST_QUOTA;
		return false;
	}
	l->room->left -= (int64_t)need;
	return true;
}

/* Takes job j (the i-th) into the round: its answer, and when it is
 * stored, its rows and its session's new state. */
static void
take(struct round *r, struct ingest_job *j, size_t i)
{
	struct live *l = &r->lv[r->which[i]];
	struct xmbp_error err;
	char digest[DIGEST_HEX];
	uint64_t samples;

	if (l->held) {
		j->status = INGEST_DEFERRED;
		j->deferred = true;
		return;
	}
	if (xmbp_decode(j->batch, j->len, r->b, &err) != XMBP_OK) {
		snprintf(j->detail, sizeof(j->detail),
			 "XMBP decode error: %s: %s (byte %zu)",
			 xmbp_status_name(err.status), err.msg, err.offset);
		j->status = INGEST_INVALID;
		return;
	}
	if (!l->found || strcasecmp(l->facility_id, j->facility_id) != 0) {
		snprintf(j->detail, sizeof(j->detail),
			 "ingest session not found");
		j->status = INGEST_NOT_FOUND;
		return;
	}
	if (strcmp(l->status, "active") != 0) {
		j->status = not_active(l->status, j->detail, sizeof(j->detail));
		return;
	}
	if (!digest_of(j->batch, j->len, digest)) {
		j->status = db_fail(DB_ERROR, j->detail, sizeof(j->detail));
		return;
	}
	/* A retry of a stored batch: acknowledged, not stored. */
	if (is_recent(l, digest)) {
		set_ack(&j->ack, l->total, l->gap.missed);
		return;
	}
	if ((j->status = check_batch(l, r->b, j->detail, sizeof(j->detail))) !=
		    INGEST_OK ||
	    !charge(l, r->b, j))
		return;
	if (!add_batch(l, r->b, &r->rows, &samples)) {
		r->broken = true;
		j->status = INGEST_ERROR;
		snprintf(j->detail, sizeof(j->detail), "out of memory");
		return;
	}
	watch_batch(r, l, r->b);
	ingest_gap_account(&l->gap, r->b->batch_seq);
	l->total += samples;
	l->add_samples += samples;
	l->add_bytes += j->len;
	push_recent(l, digest);
	r->stored++;
	l->changed = true;
	set_ack(&j->ack, l->total, l->gap.missed);
}

/* Parameter w of write_sql: the bytes of b, binary (a bytea). */
static void
param_bin(const char **params, int *lengths, int *formats, int w,
	  const struct buf *b)
{
	/* NULL would be SQL NULL: an empty bytea is "". */
	params[w - 1] = b->len > 0 ? (const char *)b->p : "";
	lengths[w - 1] = (int)b->len;
	formats[w - 1] = 1;
}

/* Writes what the round changed (write_sql): INGEST_OK or a database
 * failure. */
static int
write_round(struct db *db, struct round *r, char *detail, size_t dlen)
{
	/* The changed sessions' arrays (SES_*), their digests one after
	 * another (oldest first), the devices. */
	struct buf a[SES__MAX], dev, recent;
	const char *params[W__N];
	int lengths[W__N] = {0}, formats[W__N] = {0};
	PGresult *res = NULL;
	enum db_status st = DB_ERROR;
	bool ok;

	for (int k = 0; k < SES__MAX; k++)
		buf_init(&a[k], 0);
	buf_init(&dev, 0);
	buf_init(&recent, 0);
	for (size_t i = 0; i < r->nlive; i++) {
		const struct live *l = r->lv + i;

		if (!l->changed)
			continue;
		for (int k = 0; k < SES__MAX; k++)
			elem(&a[k]);
		buf_puts(&a[SES_ID], l->id);
		buf_printf(&a[SES_SAMPLES], "%" PRIu64, l->add_samples);
		buf_printf(&a[SES_BYTES], "%" PRIu64, l->add_bytes);
		buf_printf(&a[SES_MISSED], "%" PRIu64, l->gap.missed);
		buf_printf(&a[SES_LAST], "%u", l->gap.last);
		/* substring() counts from 1 */
		buf_printf(&a[SES_RECENT_OFF], "%zu", recent.len + 1);
		buf_printf(&a[SES_RECENT_N], "%zu", l->nrecent);
		buf_printf(&a[SES_STORED], "%" PRIu64, l->add_stored);
		for (size_t d = 0; d < l->nrecent * DIGEST_HEX; d += 2)
			buf_putc(&recent, (char)(hex_value(l->recent[d]) << 4 |
						 hex_value(l->recent[d + 1])));
	}
	ok = rows_finish(&r->rows) && !recent.failed;
	for (int k = 0; k < SES__MAX; k++) {
		elems_end(&a[k]);
		ok &= !a[k].failed;
	}
	id_array(r, pick_changed, true, &dev);
	if (!ok || dev.failed)
		goto out;
	for (int k = 0; k < COL__MAX; k++)
		params[chunk_param[k] - 1] = (const char *)r->rows.col[k].p;
	param_bin(params, lengths, formats, W_DATA, &r->rows.data);
	param_bin(params, lengths, formats, W_GRIDS, &r->rows.grids);
	for (int k = 0; k < SES__MAX; k++)
		params[session_param[k] - 1] = (const char *)a[k].p;
	params[W_DEVICES - 1] = (const char *)dev.p;
	param_bin(params, lengths, formats, W_RECENT, &recent);
	st = db_query_bin(db, &res, write_sql, W__N, params, lengths, formats);
out:
	PQclear(res);
	for (int k = 0; k < SES__MAX; k++)
		buf_free(&a[k]);
	buf_free(&dev);
	buf_free(&recent);
	return st == DB_OK ? INGEST_OK : db_fail(st, detail, dlen);
}

/* Every job still INGEST_OK gets status and detail instead. */
static void
fail_pending(struct ingest_job *const *jobs, size_t n, int status,
	     const char *detail)
{
	for (size_t i = 0; i < n; i++) {
		if (jobs[i]->status != INGEST_OK)
			continue;
		jobs[i]->status = status;
		memset(&jobs[i]->ack, 0, sizeof(jobs[i]->ack));
		snprintf(jobs[i]->detail, sizeof(jobs[i]->detail), "%s",
			 detail);
	}
}

/* The session of job j in r (added when new); false when its ids are
 * not UUIDs (the job is then answered). */
static bool
add_live(struct round *r, struct ingest_job *j, size_t i)
{
	struct live *l;

	if (!uuid_valid(j->session_id, strlen(j->session_id)) ||
	    !uuid_valid(j->facility_id, strlen(j->facility_id))) {
		snprintf(j->detail, sizeof(j->detail),
			 "ingest session not found");
		j->status = INGEST_NOT_FOUND;
		return false;
	}
	if ((l = find_live(r, j->session_id)) == NULL) {
		l = &r->lv[r->nlive++];
		l->id = j->session_id;
	}
	r->which[i] = (size_t)(l - r->lv);
	return true;
}

/* Counts a committed round (durable): what /api/metrics calls ingested,
 * and the commit's size. */
static void
count_round(const struct round *r)
{
	uint64_t samples = 0, bytes = 0;

	for (size_t i = 0; i < r->nlive; i++) {
		samples += r->lv[i].add_samples;
		bytes += r->lv[i].add_bytes;
	}
	metrics_add(METRIC_INGEST_BATCHES, r->stored);
	metrics_add(METRIC_INGEST_SAMPLES, samples);
	metrics_add(METRIC_INGEST_BYTES, bytes);
	metrics_observe(HIST_INGEST_COMMIT_BATCHES, (double)r->stored);
	metrics_observe(HIST_INGEST_COMMIT_SAMPLES, (double)samples);
	metrics_observe(HIST_INGEST_COMMIT_BYTES, (double)bytes);
}

void
ingest_commit(struct db *db, struct ingest_job *const *jobs, size_t n,
	      bool stop)
{
	struct round r;
	char detail[128];
	bool refused = false, changed = false;
	int status;
	enum db_status st;
	unsigned long raised;

	memset(&r, 0, sizeof(r));
	rows_init(&r.rows);
	alarmeval_init(&r.eval);
	for (size_t i = 0; i < n; i++) {
		jobs[i]->status = INGEST_OK;
		jobs[i]->detail[0] = '\0';
		memset(&jobs[i]->ack, 0, sizeof(jobs[i]->ack));
	}
	r.lv = calloc(n, sizeof(*r.lv));
	r.which = calloc(n, sizeof(*r.which));
	r.b = malloc(sizeof(*r.b));
	if (r.lv == NULL || r.which == NULL || r.b == NULL) {
		fail_pending(jobs, n, INGEST_ERROR, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		add_live(&r, jobs[i], i);
		/* A batch is deferred once at most: its wait stays short. */
		r.waits |= jobs[i]->deferred;
	}
	if (r.nlive == 0)
		goto out;
	if ((st = db_begin(db)) != DB_OK) {
		fail_pending(jobs, n, db_fail(st, detail, sizeof(detail)),
			     detail);
		goto out;
	}
	if ((status = lock_sessions(db, &r, detail, sizeof(detail))) !=
		    INGEST_OK ||
	    (status = lock_rooms(db, &r, detail, sizeof(detail))) !=
		    INGEST_OK ||
	    (status = watch_sessions(db, &r, detail, sizeof(detail))) !=
		    INGEST_OK) {
		fail_pending(jobs, n, status, detail);
		goto out;
	}
	/* In arrival order: that is the order of the gap accounting. */
	for (size_t i = 0; i < n; i++) {
		if (jobs[i]->status != INGEST_OK) {
			refused = true;
			continue;
		}
		if (stop && refused) {
			jobs[i]->status = INGEST_ERROR;
			snprintf(jobs[i]->detail, sizeof(jobs[i]->detail),
				 "not stored: an earlier batch was refused");
			continue;
		}
		take(&r, jobs[i], i);
		refused |= jobs[i]->status != INGEST_OK;
	}
	for (size_t i = 0; i < r.nlive; i++) {
		changed |= r.lv[i].changed;
		r.broken |= !flush_all(&r.lv[i], &r.rows, !r.broken);
	}
	if (r.broken) {
		fail_pending(jobs, n, INGEST_ERROR, "out of memory");
		goto out;
	}
	if (changed && (status = write_round(db, &r, detail, sizeof(detail))) !=
			       INGEST_OK) {
		fail_pending(jobs, n, status, detail);
		goto out;
	}
	if ((st = alarmeval_write(db, &r.eval, &raised)) != DB_OK ||
	    (st = db_commit(db)) != DB_OK)
		fail_pending(jobs, n, db_fail(st, detail, sizeof(detail)),
			     detail);
	else if (r.stored > 0) {
		count_round(&r);
		metrics_add(METRIC_ALARM_CHECKS, r.eval.checks);
		metrics_add(METRIC_ALARMS_RAISED, raised);
	}
out:
	db_rollback(db);
	for (size_t i = 0; r.lv != NULL && i < r.nlive; i++) {
		flush_all(&r.lv[i], NULL, false);
		free(r.lv[i].pend);
		free(r.lv[i].def);
	}
	rows_free(&r.rows);
	alarmeval_free(&r.eval);
	free(r.rooms);
	free(r.lv);
	free(r.which);
	free(r.b);
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
