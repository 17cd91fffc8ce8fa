/* SPDX-License-Identifier: MIT */
/*
 * chunks.c - one stream's stored samples, read back in time order.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/chunks.h"
#include "codec/sampleagg.h"
#include "codec/xmch.h"

#define PAGE_ROWS 256
/* A compressed chunk is a zstd frame of at most XMCH_MAX_BYTES; its frame
 * is never much larger than its content. */
#define STORED_MAX (XMCH_MAX_BYTES + (1u << 20))

/* One row of the page: what is known before opening it. */
struct row {
	char id[37];
	char start[24]; /* numeric text, for the keyset */
	uint64_t start_ts, end_ts;
	long long seq;
	bool is_inline;
	bool has_agg; /* agg holds the stored aggregates */
	struct sampleagg agg;
	bool has_grid;	  /* it has a grid (aligned reads only) */
	char *object_key; /* NULL for an inline row */
};

/* An open chunk and its position. */
struct cursor {
	struct xmch_chunk chunk;
	struct xmch_iter it;
	uint8_t *stored; /* the bytes xmch_open() read */
	size_t mem;	 /* stored + decompressed bytes */
	long long seq;
	uint64_t pos; /* samples taken: the tie-break inside a chunk */
	uint64_t ts;  /* current sample */
	struct sample_value v;
};

struct chunks_reader {
	struct db *db;
	struct store *st;
	struct chunks_opts o;
	uint64_t bucket; /* chunks_buckets(); 0: decode every chunk */
	enum sample_type type;
	bool aligned; /* buckets and from on the grid: grids are read */
	/* the grid whose cells are being returned */
	uint8_t *grid;
	size_t grid_len, grid_pos;
	uint64_t grid_start; /* its chunk's first timestamp */
	char from[24], to[24];
	/* the page of rows not opened yet */
	struct row page[PAGE_ROWS];
	int npage, ipage;
	bool page_end; /* no rows after this page */
	char last_start[24], last_seq[24];
	/* open chunks: a binary heap by (ts, seq, pos) */
	struct cursor **heap;
	size_t nheap, capheap;
	struct cursor *taken; /* returned last: advance on the next call */
	size_t mem;
	uint64_t rows;
	long long max_seq;
	enum chunks_status status;
	enum db_status db_status;
	char detail[160];
};

static const char page_sql[] =
	"SELECT id, start_ts_us, seq, object_key, data IS NOT NULL, "
	"end_ts_us, agg_count, agg_nan_count, agg_min, agg_max, agg_sum, "
	"$7::boolean AND agg_grid IS NOT NULL "
	"FROM stored_chunks WHERE stream_id = $1::uuid "
	"AND start_ts_us <= $3::numeric AND end_ts_us >= $2::numeric "
	"AND (start_ts_us, seq) > ($4::numeric, $5::bigint) "
	"AND (NOT $6::boolean OR data IS NOT NULL) "
	"ORDER BY start_ts_us, seq LIMIT 256";

static const char data_sql[] =
	"SELECT data FROM stored_chunks WHERE id = $1::uuid";

static enum chunks_status fail(struct chunks_reader *r, enum chunks_status st,
			       const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum chunks_status
fail(struct chunks_reader *r, enum chunks_status st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
	r->status = st;
	return st;
}

struct chunks_reader *
chunks_open(struct db *db, struct store *st, const struct chunks_opts *opts)
{
	struct chunks_reader *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->db = db;
	r->st = st;
	r->o = *opts;
	snprintf(r->from, sizeof(r->from), "%" PRIu64, opts->from);
	snprintf(r->to, sizeof(r->to), "%" PRIu64, opts->to);
	snprintf(r->last_start, sizeof(r->last_start), "-1");
	snprintf(r->last_seq, sizeof(r->last_seq), "0");
	r->max_seq = -1;
	r->detail[0] = '\0';
	return r;
}

static void
free_page(struct chunks_reader *r)
{
	for (int i = 0; i < r->npage; i++) {
		free(r->page[i].object_key);
	}
	r->npage = r->ipage = 0;
}

/* The stored aggregates of row i of res; false when it has none (or
 * they do not read, when the chunk is decoded instead). */
static bool
read_agg(const struct chunks_reader *r, const PGresult *res, int i,
	 struct sampleagg *a)
{
	struct sampleagg_text t;
	char *f[5] = {t.count, t.nan_count, t.min, t.max, t.sum};
	size_t len[5] = {sizeof(t.count), sizeof(t.nan_count), sizeof(t.min),
			 sizeof(t.max), sizeof(t.sum)};

	for (int k = 0; k < 5; k++)
		if (PQgetisnull(res, i, 6 + k) ||
		    (size_t)snprintf(f[k], len[k], "%s",
				     PQgetvalue(res, i, 6 + k)) >= len[k])
			return false;
	return sampleagg_from_text(r->type, &t, a);
}

/* Fetches the next page of rows; npage 0 at the end. */
static enum chunks_status
fetch_page(struct chunks_reader *r)
{
	const char *params[7] = {r->o.stream_id,
				 r->from,
				 r->to,
				 r->last_start,
				 r->last_seq,
				 r->o.inline_only ? "true" : "false",
				 r->aligned ? "true" : "false"};
	PGresult *res = NULL;
	int n;

	free_page(r);
	if (r->page_end)
		return CHUNKS_OK;
	if ((r->db_status = db_query(r->db, &res, page_sql, 7, params)) !=
	    DB_OK)
		return fail(r, CHUNKS_DB, "reading the chunk index failed");
	n = PQntuples(res);
	for (int i = 0; i < n; i++) {
		struct row *w = &r->page[i];

		snprintf(w->id, sizeof(w->id), "%s", PQgetvalue(res, i, 0));
		snprintf(w->start, sizeof(w->start), "%s",
			 PQgetvalue(res, i, 1));
		w->start_ts = strtoull(w->start, NULL, 10);
		w->seq = strtoll(PQgetvalue(res, i, 2), NULL, 10);
		w->is_inline = PQgetvalue(res, i, 4)[0] == 't';
		w->end_ts = strtoull(PQgetvalue(res, i, 5), NULL, 10);
		w->has_agg = r->bucket > 0 && read_agg(r, res, i, &w->agg);
		w->has_grid = w->has_agg && PQgetvalue(res, i, 11)[0] == 't';
		w->object_key = NULL;
		if (!w->is_inline &&
		    (w->object_key = strdup(PQgetvalue(res, i, 3))) == NULL) {
			r->npage = i;
			PQclear(res);
			return fail(r, CHUNKS_MEMORY, "out of memory");
		}
		r->npage = i + 1;
	}
	if (n > 0) {
		snprintf(r->last_start, sizeof(r->last_start), "%s",
			 r->page[n - 1].start);
		snprintf(r->last_seq, sizeof(r->last_seq), "%lld",
			 r->page[n - 1].seq);
	}
	r->page_end = n < PAGE_ROWS;
	PQclear(res);
	return CHUNKS_OK;
}

/* The row to open next, or NULL when there is none. */
static struct row *
peek_row(struct chunks_reader *r)
{
	if (r->ipage == r->npage &&
	    (r->status != CHUNKS_OK || fetch_page(r) != CHUNKS_OK))
		return NULL;
	return r->ipage < r->npage ? &r->page[r->ipage] : NULL;
}

static bool
before(const struct cursor *a, const struct cursor *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts;
	if (a->seq != b->seq)
		return a->seq < b->seq;
	return a->pos < b->pos;
}

static void
heap_up(struct chunks_reader *r, size_t i)
{
	while (i > 0 && before(r->heap[i], r->heap[(i - 1) / 2])) {
		struct cursor *t = r->heap[i];

		r->heap[i] = r->heap[(i - 1) / 2];
		r->heap[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static void
heap_down(struct chunks_reader *r, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct cursor *t;

		if (l < r->nheap && before(r->heap[l], r->heap[m]))
			m = l;
		if (l + 1 < r->nheap && before(r->heap[l + 1], r->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		t = r->heap[i];
		r->heap[i] = r->heap[m];
		r->heap[m] = t;
		i = m;
	}
}

static void
cursor_free(struct chunks_reader *r, struct cursor *c)
{
	r->mem -= c->mem;
	xmch_close(&c->chunk);
	free(c->stored);
	free(c);
}

/* Loads the cursor's next sample in the window; false when none is. */
static bool
cursor_step(struct chunks_reader *r, struct cursor *c)
{
	while (xmch_next(&c->it, &c->ts, &c->v)) {
		c->pos++;
		if (c->ts > r->o.to)
			return false;
		if (c->ts >= r->o.from)
			return true;
	}
	return false;
}

static int
sink(void *arg, const void *p, size_t n)
{
	buf_append(arg, p, n);
	return ((struct buf *)arg)->failed;
}

/* The stored bytes of row w into *out (malloc'ed) and *len. */
static enum chunks_status
load(struct chunks_reader *r, const struct row *w, uint8_t **out, size_t *len)
{
	const char *params[1] = {w->id};
	PGresult *res = NULL;
	unsigned char *raw;
	char detail[160];
	struct buf b;

	*out = NULL;
	if (w->is_inline) {
		if ((r->db_status = db_query(r->db, &res, data_sql, 1,
					     params)) != DB_OK)
			return fail(r, CHUNKS_DB, "reading chunk %s failed",
				    w->id);
		if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0)) {
			PQclear(res);
			return fail(r, CHUNKS_DB, "chunk %s has gone", w->id);
		}
		raw = PQunescapeBytea(
			(const unsigned char *)PQgetvalue(res, 0, 0), len);
		PQclear(res);
		if (raw == NULL)
			return fail(r, CHUNKS_MEMORY, "out of memory");
		/* libpq's memory is freed with PQfreemem(): copy it. */
		if ((*out = malloc(*len > 0 ? *len : 1)) != NULL)
			memcpy(*out, raw, *len);
		PQfreemem(raw);
		return *out != NULL ? CHUNKS_OK
				    : fail(r, CHUNKS_MEMORY, "out of memory");
	}
	if (r->st == NULL)
		return fail(r, CHUNKS_STORE, "no object store for chunk %s",
			    w->id);
	buf_init(&b, STORED_MAX);
	if (store_get(r->st, w->object_key, 0, UINT64_MAX, sink, &b, detail,
		      sizeof(detail)) != STORE_OK) {
		buf_free(&b);
		return fail(r, CHUNKS_STORE, "chunk %s: %s", w->id, detail);
	}
	*out = b.p;
	*len = b.len;
	return CHUNKS_OK;
}

/* Opens the next row and puts it on the heap when it has samples. */
static enum chunks_status
open_row(struct chunks_reader *r)
{
	struct row *w = &r->page[r->ipage];
	struct xmch_error err;
	struct cursor *c;
	size_t len;
	enum chunks_status st;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return fail(r, CHUNKS_MEMORY, "out of memory");
	if ((st = load(r, w, &c->stored, &len)) != CHUNKS_OK) {
		free(c);
		return st;
	}
	if (xmch_open(c->stored, len, &c->chunk, &err) != XMCH_OK) {
		free(c->stored);
		free(c);
		return fail(r, CHUNKS_CORRUPT, "chunk %s: %s: %s", w->id,
			    xmch_status_name(err.status), err.msg);
	}
	c->mem = len + (c->chunk.compressed
				? c->chunk.val_len + 8u * c->chunk.sample_count
				: 0);
	c->seq = w->seq;
	r->mem += c->mem;
	r->rows++;
	if (w->seq > r->max_seq)
		r->max_seq = w->seq;
	r->ipage++;
	if (r->nheap > 0 && r->mem > r->o.mem_max) {
		cursor_free(r, c);
		return fail(r, CHUNKS_MEMORY,
			    "more overlapping chunks than %zu bytes of memory",
			    r->o.mem_max);
	}
	xmch_iter_init(&c->chunk, &c->it);
	if (!cursor_step(r, c)) {
		cursor_free(r, c);
		return CHUNKS_OK;
	}
	if (r->nheap == r->capheap) {
		size_t cap = r->capheap ? 2 * r->capheap : 16;
		struct cursor **h = realloc(r->heap, cap * sizeof(*h));

		if (h == NULL) {
			cursor_free(r, c);
			return fail(r, CHUNKS_MEMORY, "out of memory");
		}
		r->heap = h;
		r->capheap = cap;
	}
	r->heap[r->nheap++] = c;
	heap_up(r, r->nheap - 1);
	return CHUNKS_OK;
}

/* True when row w may be read as its aggregates: inside the window and
 * inside one bucket. */
static bool
whole(const struct chunks_reader *r, const struct row *w)
{
	const struct chunks_opts *o = &r->o;

	return w->has_agg && w->start_ts >= o->from && w->end_ts <= o->to &&
	       (w->start_ts - o->from) / r->bucket ==
		       (w->end_ts - o->from) / r->bucket;
}

/* True when row w may be read as its grid's cells: an aligned read, w
 * inside the window, and no other chunk overlapping it (none open, the
 * next row after its end). */
static bool
by_grid(const struct chunks_reader *r, const struct row *w)
{
	const struct row *n = w + 1;

	if (!r->aligned || !w->has_grid || w->start_ts < r->o.from ||
	    w->end_ts > r->o.to || r->nheap > 0)
		return false;
	if (r->ipage + 1 < r->npage)
		return n->start_ts > w->end_ts;
	return r->page_end;
}

static const char grid_sql[] =
	"SELECT agg_grid FROM stored_chunks WHERE id = $1::uuid";

/* Reads row w's grid, whose cells come next (one grid in memory at a
 * time: at most 3 bytes a sample of its chunk). */
static enum chunks_status
load_grid(struct chunks_reader *r, const struct row *w)
{
	const char *params[1] = {w->id};
	PGresult *res = NULL;

	if ((r->db_status = db_query(r->db, &res, grid_sql, 1, params)) !=
	    DB_OK)
		return fail(r, CHUNKS_DB, "reading the grid of chunk %s failed",
			    w->id);
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0)) {
		PQclear(res);
		return fail(r, CHUNKS_DB, "the grid of chunk %s has gone",
			    w->id);
	}
	r->grid = PQunescapeBytea((const unsigned char *)PQgetvalue(res, 0, 0),
				  &r->grid_len);
	PQclear(res);
	if (r->grid == NULL)
		return fail(r, CHUNKS_MEMORY, "out of memory");
	r->grid_pos = 0;
	r->grid_start = w->start_ts;
	return CHUNKS_OK;
}

/* The next cell of the grid being read into *ts and *agg; false when it
 * is done (freed), with CHUNKS_CORRUPT set when it ended malformed. */
static bool
next_cell(struct chunks_reader *r, uint64_t *ts, struct sampleagg *agg)
{
	uint64_t cell;

	if (sampleagg_grid_next(r->grid, r->grid_len, &r->grid_pos, r->type,
				&cell, agg)) {
		/* Not before the chunk's first sample: items stay in
		 * order, and the cell is in the same bucket. */
		*ts = cell * SAMPLEAGG_GRID_US < r->grid_start
			      ? r->grid_start
			      : cell * SAMPLEAGG_GRID_US;
		return true;
	}
	if (r->grid_pos != r->grid_len)
		fail(r, CHUNKS_CORRUPT, "a chunk's stored grid is malformed");
	PQfreemem(r->grid);
	r->grid = NULL;
	return false;
}

/* chunks_next() and chunks_item(); agg NULL for the former. */
static enum chunks_status
next(struct chunks_reader *r, uint64_t *ts, struct sample_value *v,
     struct sampleagg *agg)
{
	struct row *w;
	struct cursor *c;

	if (r->status != CHUNKS_OK)
		return r->status;
	if (r->grid != NULL && next_cell(r, ts, agg))
		return CHUNKS_AGG;
	if (r->status != CHUNKS_OK)
		return r->status;
	if ((c = r->taken) != NULL) {
		r->taken = NULL;
		if (cursor_step(r, c))
			heap_down(r, 0);
		else {
			r->heap[0] = r->heap[--r->nheap];
			heap_down(r, 0);
			cursor_free(r, c);
		}
	}
	/* Open every row that starts no later than the earliest sample
	 * so far: it may hold an earlier one, or an equal one that comes
	 * first. */
	while ((w = peek_row(r)) != NULL &&
	       (r->nheap == 0 || w->start_ts <= r->heap[0]->ts)) {
		if (agg != NULL && (whole(r, w) || by_grid(r, w))) {
			r->rows++;
			if (w->seq > r->max_seq)
				r->max_seq = w->seq;
			r->ipage++;
			if (whole(r, w)) {
				*agg = w->agg;
				*ts = w->start_ts;
				return CHUNKS_AGG;
			}
			if (load_grid(r, w) != CHUNKS_OK)
				return r->status;
			if (next_cell(r, ts, agg))
				return CHUNKS_AGG;
			if (r->status != CHUNKS_OK)
				return r->status;
			continue;
		}
		if (open_row(r) != CHUNKS_OK)
			return r->status;
	}
	if (r->status != CHUNKS_OK)
		return r->status;
	if (r->nheap == 0)
		return r->status = CHUNKS_END;
	c = r->taken = r->heap[0];
	*ts = c->ts;
	*v = c->v;
	return CHUNKS_OK;
}

enum chunks_status
chunks_next(struct chunks_reader *r, uint64_t *ts, struct sample_value *v)
{
	return next(r, ts, v, NULL);
}

void
chunks_buckets(struct chunks_reader *r, uint64_t bucket, enum sample_type type)
{
	r->bucket = bucket;
	r->type = type;
	r->aligned = bucket % SAMPLEAGG_GRID_US == 0 &&
		     r->o.from % SAMPLEAGG_GRID_US == 0;
}

enum chunks_status
chunks_item(struct chunks_reader *r, uint64_t *ts, struct sample_value *v,
	    struct sampleagg *agg)
{
	return next(r, ts, v, agg);
}

enum db_status
chunks_db_status(const struct chunks_reader *r)
{
	return r->db_status;
}

const char *
chunks_detail(const struct chunks_reader *r)
{
	return r->detail;
}

uint64_t
chunks_rows(const struct chunks_reader *r)
{
	return r->rows;
}

long long
chunks_max_seq(const struct chunks_reader *r)
{
	return r->max_seq;
}

void
chunks_close(struct chunks_reader *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->nheap; i++)
		cursor_free(r, r->heap[i]);
	free(r->heap);
	PQfreemem(r->grid);
	free_page(r);
	free(r);
}

enum db_status
chunks_snapshot(struct db *db)
{
	PGresult *res = NULL;
	enum db_status st = db_query(
		db, &res,
		"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", 0,
		NULL);

	PQclear(res);
	return st;
}
