/*
 * fuzz/xmch.c - libFuzzer target for XMCH stored chunks.
 *
 * Every input is given to xmch_open().  A chunk that opens is walked,
 * rebuilt with xmch_writer as a plain chunk and opened again: the two
 * must hold the same samples bit for bit, and the rebuilt chunk must be
 * the plain chunk that was read (after decompression, if any) with bool
 * bytes other than 0 and 1 written as 1, since readers take them as true.
 * Violations abort(), so libFuzzer keeps the input as a crash artifact.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xmch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t zstd_magic[4] = {0x28, 0xB5, 0x2F, 0xFD};

/* Keeps the walk's reads alive through the optimiser. */
static volatile uint64_t sink;

static void
violation(const char *what, int line)
{
	fprintf(stderr, "xmch-fuzz: line %d: %s\n", line, what);
	abort();
}

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			violation(#cond, __LINE__);                            \
	} while (0)

/* Payload bytes of a variable-width value. */
static size_t
raw_bytes(const struct sample_value *v)
{
	size_t elem = sample_elem_size(v->type);

	return elem != 0 ? v->u.raw.len * elem : v->u.raw.len;
}

/* True when a and b are the same value, bit for bit (NaNs included). */
static bool
same_value(const struct sample_value *a, const struct sample_value *b)
{
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case SAMPLE_F64:
		return memcmp(&a->u.f64, &b->u.f64, sizeof(a->u.f64)) == 0;
	case SAMPLE_F32:
		return memcmp(&a->u.f32, &b->u.f32, sizeof(a->u.f32)) == 0;
	case SAMPLE_I64:
		return a->u.i64 == b->u.i64;
	case SAMPLE_I32:
		return a->u.i32 == b->u.i32;
	case SAMPLE_I16:
		return a->u.i16 == b->u.i16;
	case SAMPLE_I8:
		return a->u.i8 == b->u.i8;
	case SAMPLE_BOOL:
		return a->u.b == b->u.b;
	default:
		return a->u.raw.len == b->u.raw.len &&
		       memcmp(a->u.raw.p, b->u.raw.p, raw_bytes(a)) == 0;
	}
}

/*
 * Sums every byte of a value: a payload read outside the chunk is then
 * ASan's to report.  A fixed-width value is summed in its host form.
 */
static uint64_t
touch_value(const struct sample_value *v)
{
	const uint8_t *p = (const uint8_t *)&v->u;
	size_t n = sample_fixed_size(v->type);
	uint64_t s = 0;

	if (n == 0) {
		p = v->u.raw.p;
		n = raw_bytes(v);
	}
	for (size_t i = 0; i < n; i++)
		s += p[i];
	return s;
}

/*
 * Walks the chunk, checking what xmch_open() promises of it, and feeds
 * every sample to w.
 */
static void
walk(const struct xmch_chunk *c, struct xmch_writer *w)
{
	struct xmch_iter it;
	struct sample_value v;
	struct xmch_error err;
	uint64_t ts, prev = 0, sum = 0;
	uint32_t n;

	xmch_iter_init(c, &it);
	for (n = 0; xmch_next(&it, &ts, &v); n++) {
		CHECK(n < c->sample_count);
		CHECK(v.type == c->type);
		CHECK(n == 0 ? ts == c->start_ts : ts >= prev);
		prev = ts;
		sum += ts + touch_value(&v);
		CHECK(xmch_writer_add(w, ts, &v, &err) == XMCH_OK);
	}
	CHECK(n == c->sample_count);
	CHECK(n == 0 || prev == c->end_ts);
	sink += sum;
}

/* Both chunks must yield the same samples in the same order. */
static void
compare(const struct xmch_chunk *a, const struct xmch_chunk *b)
{
	struct xmch_iter ia, ib;
	struct sample_value va, vb;
	uint64_t ta, tb;
	bool more;

	CHECK(a->type == b->type);
	CHECK(a->sample_count == b->sample_count);
	CHECK(a->start_ts == b->start_ts && a->end_ts == b->end_ts);
	xmch_iter_init(a, &ia);
	xmch_iter_init(b, &ib);
	while ((more = xmch_next(&ia, &ta, &va))) {
		CHECK(xmch_next(&ib, &tb, &vb));
		CHECK(ta == tb);
		CHECK(same_value(&va, &vb));
	}
	CHECK(!xmch_next(&ib, &tb, &vb));
}

/*
 * Checks the rebuilt bytes against the plain chunk that was read: the
 * header and the timestamp column before the values, then the value
 * column with bool bytes made canonical.
 */
static void
compare_bytes(const struct xmch_chunk *c, const struct buf *out)
{
	const uint8_t *plain = c->ts_col - XMCH_HEADER_SIZE;
	size_t head = (size_t)(c->val_col - plain);

	CHECK(out->len == head + c->val_len);
	CHECK(memcmp(out->p, plain, head) == 0);
	if (c->type != SAMPLE_BOOL) {
		CHECK(memcmp(out->p + head, c->val_col, c->val_len) == 0);
		return;
	}
	for (size_t i = 0; i < c->val_len; i++)
		CHECK(out->p[head + i] == (c->val_col[i] != 0));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xmch_chunk c, again;
	struct xmch_error err;
	struct xmch_writer w;
	struct buf out;
	enum xmch_status st;
	bool zstd = size >= 4 && memcmp(data, zstd_magic, 4) == 0;

	memset(&err, 0, sizeof(err));
	if ((st = xmch_open(data, size, &c, &err)) != XMCH_OK) {
		CHECK(err.status == st);
		CHECK(memchr(err.msg, '\0', sizeof(err.msg)) != NULL);
		/* "On failure nothing is left to release." */
		CHECK(c.owned == NULL);
		return 0;
	}
	CHECK(c.compressed == zstd);
	CHECK(c.stored_len == size);
	CHECK(zstd ? c.owned != NULL : c.ts_col == data + XMCH_HEADER_SIZE);
	CHECK(c.val_col == c.ts_col + (size_t)c.sample_count * 8);
	/* A plain chunk is read in place: all of it, nothing more. */
	if (!zstd)
		CHECK(c.val_col + c.val_len == data + size);

	xmch_writer_init(&w, c.type);
	walk(&c, &w);
	buf_init(&out, 0);
	CHECK(xmch_writer_finish(&w, false, &out, &err) == XMCH_OK);
	CHECK(!out.failed);
	compare_bytes(&c, &out);

	CHECK(xmch_open(out.p, out.len, &again, &err) == XMCH_OK);
	CHECK(!again.compressed && again.owned == NULL);
	compare(&c, &again);

	xmch_close(&again);
	buf_free(&out);
	xmch_writer_free(&w);
	xmch_close(&c);
	return 0;
}
