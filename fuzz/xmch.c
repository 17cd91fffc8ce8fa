/* SPDX-License-Identifier: MIT */
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

#include <string.h>

#include "codec/xmch.h"

#include "check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t zstd_magic[4] = {0x28, 0xB5, 0x2F, 0xFD};

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
		CHECK(xmbp_sample_equal(&va, &vb));
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
