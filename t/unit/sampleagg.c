/* SPDX-License-Identifier: MIT */
/*
 * sampleagg.c - aggregates of numeric samples (lib/codec/sampleagg.c):
 * counts, NaN, first min and max, exact integer sums at the i64
 * extremes, bool, merging equal to adding, a stored chunk's aggregate,
 * the stored text read back bit for bit (refused when malformed), and
 * the grid of cells: built, read back, adding up to the whole; the loop
 * over float chunks against the per-sample walk.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "codec/sampleagg.h"
#include "tap.h"
#include "testutil.h"

static struct sample_value
f64(double x)
{
	struct sample_value v = {.type = SAMPLE_F64};

	v.u.f64 = x;
	return v;
}

static struct sample_value
f32(float x)
{
	struct sample_value v = {.type = SAMPLE_F32};

	v.u.f32 = x;
	return v;
}

static struct sample_value
i64(int64_t x)
{
	struct sample_value v = {.type = SAMPLE_I64};

	v.u.i64 = x;
	return v;
}

/* a and b hold the same figures, bit for bit (a NaN sum is any NaN). */
static bool
same(const struct sampleagg *a, const struct sampleagg *b)
{
	return a->type == b->type && a->count == b->count &&
	       a->nan_count == b->nan_count && a->isum == b->isum &&
	       ((isnan(a->fsum) && isnan(b->fsum)) ||
		memcmp(&a->fsum, &b->fsum, 10) == 0) &&
	       (a->count == 0 || (xmbp_sample_equal(&a->min, &b->min) &&
				  xmbp_sample_equal(&a->max, &b->max)));
}

/* Stored text and back gives the same aggregate. */
static bool
round_trip(const struct sampleagg *a)
{
	struct sampleagg_text t;
	struct sampleagg b;

	sampleagg_to_text(a, &t);
	return sampleagg_from_text(a->type, &t, &b) && same(a, &b);
}

static void
floats(void)
{
	struct sampleagg a, x, y;
	double vals[] = {1.5, NAN, -0.0, 0.0, -2.25, INFINITY, -2.25, 3.0};
	size_t n = sizeof(vals) / sizeof(vals[0]);
	struct sample_value v;

	sampleagg_init(&a, SAMPLE_F64);
	for (size_t i = 0; i < n; i++) {
		v = f64(vals[i]);
		sampleagg_add(&a, &v);
	}
	is_int(a.count, 7, "f64: NaN is not a value");
	is_int(a.nan_count, 1, "f64: NaN is counted apart");
	ok(a.min.u.f64 == -2.25 && a.max.u.f64 == INFINITY,
	   "f64: min -2.25, max Infinity (a value)");
	ok(isinf(sampleagg_mean(&a)), "f64: an infinity makes the mean one");
	ok(round_trip(&a), "f64: stored text reads back the same");

	/* Merging two halves adds up to the same figures as adding all
	 * (these sums are exact in long double). */
	sampleagg_init(&x, SAMPLE_F64);
	sampleagg_init(&y, SAMPLE_F64);
	for (size_t i = 0; i < n; i++) {
		v = f64(vals[i]);
		sampleagg_add(i < 3 ? &x : &y, &v);
	}
	sampleagg_merge(&x, &y);
	ok(same(&x, &a), "f64: merged halves equal the whole");

	/* The first of equal minimums is kept: -0 before 0. */
	sampleagg_init(&a, SAMPLE_F64);
	v = f64(-0.0);
	sampleagg_add(&a, &v);
	v = f64(0.0);
	sampleagg_add(&a, &v);
	ok(signbit(a.min.u.f64) && signbit(a.max.u.f64),
	   "f64: the first of equal values is min and max (-0 before 0)");
	ok(round_trip(&a), "f64: -0 survives the stored text");

	sampleagg_init(&a, SAMPLE_F64);
	v = f64(INFINITY);
	sampleagg_add(&a, &v);
	v = f64(-INFINITY);
	sampleagg_add(&a, &v);
	ok(isnan(sampleagg_mean(&a)) && round_trip(&a),
	   "f64: Infinity and -Infinity: mean NaN, stored sum NaN");

	sampleagg_init(&a, SAMPLE_F32);
	v = f32(NAN);
	sampleagg_add(&a, &v);
	ok(a.count == 0 && a.nan_count == 1 && sampleagg_mean(&a) == 0 &&
		   round_trip(&a),
	   "f32: only NaN: no value, mean 0 (printed null by callers)");
	v = f32(0.1f);
	sampleagg_add(&a, &v);
	v = f32(-3.25e38f);
	sampleagg_add(&a, &v);
	ok(a.min.u.f32 == -3.25e38f && a.max.u.f32 == 0.1f && round_trip(&a),
	   "f32: min and max in their type, stored as bits");
}

static void
integers(void)
{
	struct sampleagg a, b;
	struct sampleagg_text t;
	struct sample_value v;

	sampleagg_init(&a, SAMPLE_I64);
	for (int i = 0; i < 4; i++) {
		v = i64(INT64_MAX);
		sampleagg_add(&a, &v);
	}
	v = i64(INT64_MIN);
	sampleagg_add(&a, &v);
	sampleagg_to_text(&a, &t);
	is_str(t.sum, "27670116110564327420", "i64: the sum past 2^64, exact");
	is_str(t.min, "-9223372036854775808", "i64: min INT64_MIN");
	is_str(t.max, "9223372036854775807", "i64: max INT64_MAX");
	ok(sampleagg_from_text(SAMPLE_I64, &t, &b) && same(&a, &b),
	   "i64: stored text reads back the same");
	ok(sampleagg_mean(&a) == (double)(27670116110564327420.0L / 5),
	   "i64: mean from the exact sum");

	sampleagg_init(&a, SAMPLE_BOOL);
	v.type = SAMPLE_BOOL;
	v.u.b = true;
	sampleagg_add(&a, &v);
	v.u.b = false;
	sampleagg_add(&a, &v);
	v.u.b = true;
	sampleagg_add(&a, &v);
	sampleagg_to_text(&a, &t);
	ok(a.count == 3 && !a.min.u.b && a.max.u.b && strcmp(t.sum, "2") == 0 &&
		   strcmp(t.min, "0") == 0 && strcmp(t.max, "1") == 0 &&
		   round_trip(&a),
	   "bool: counted as 0 and 1");

	sampleagg_init(&a, SAMPLE_I8);
	v.type = SAMPLE_I8;
	v.u.i8 = -128;
	sampleagg_add(&a, &v);
	ok(round_trip(&a), "i8: -128 reads back");
	sampleagg_to_text(&a, &t);
	snprintf(t.min, sizeof(t.min), "-129");
	ok(!sampleagg_from_text(SAMPLE_I8, &t, &b),
	   "i8: a min out of the type's range is refused");
}

static void
refused(void)
{
	struct sampleagg a;
	struct sampleagg_text good = {"3", "0", "1", "2", "4.5"}, t;

	ok(sampleagg_from_text(SAMPLE_F64, &good, &a) && a.count == 3 &&
		   a.fsum == 4.5L,
	   "text: a well-formed aggregate");
	t = good;
	snprintf(t.count, sizeof(t.count), "-1");
	ok(!sampleagg_from_text(SAMPLE_F64, &t, &a), "text: a negative count");
	t = good;
	snprintf(t.sum, sizeof(t.sum), "4.5x");
	ok(!sampleagg_from_text(SAMPLE_F64, &t, &a), "text: a bad float sum");
	t = good;
	snprintf(t.sum, sizeof(t.sum), "4.5");
	ok(!sampleagg_from_text(SAMPLE_I32, &t, &a),
	   "text: a fraction as an integer sum");
	t = good;
	snprintf(t.sum, sizeof(t.sum), "%s",
		 "1234567890123456789012345678901234567890");
	ok(!sampleagg_from_text(SAMPLE_I32, &t, &a),
	   "text: an integer sum of 40 digits");
	t = good;
	snprintf(t.max, sizeof(t.max), "%s", "9221120237041090561");
	ok(!sampleagg_from_text(SAMPLE_F64, &t, &a),
	   "text: NaN bits as a float max");
	ok(!sampleagg_from_text(SAMPLE_STRING, &good, &a),
	   "text: strings do not aggregate");
}

static void
chunk(void)
{
	struct xmch_writer w;
	struct xmch_error err;
	struct sampleagg a, want;
	struct buf out;
	struct sample_value v;

	buf_init(&out, 0);
	xmch_writer_init(&w, SAMPLE_F32);
	sampleagg_init(&want, SAMPLE_F32);
	for (int i = 0; i < 1000; i++) {
		v = f32(i % 7 == 0 ? NAN : (float)(i % 13) - 6.0f);
		xmch_writer_add(&w, (uint64_t)i * 10, &v, &err);
		sampleagg_add(&want, &v);
	}
	ok(xmch_writer_finish(&w, true, &out, &err) == XMCH_OK,
	   "chunk: 1000 f32 samples written (compressed)");
	ok(sampleagg_chunk(out.p, out.len, &a, &err) == XMCH_OK &&
		   same(&a, &want),
	   "chunk: its aggregate equals the samples'");
	xmch_writer_free(&w);
	out.len = 0;
	xmch_writer_init(&w, SAMPLE_STRING);
	v.type = SAMPLE_STRING;
	v.u.raw.p = (const uint8_t *)"x";
	v.u.raw.len = 1;
	xmch_writer_add(&w, 1, &v, &err);
	xmch_writer_finish(&w, false, &out, &err);
	ok(sampleagg_chunk(out.p, out.len, &a, &err) ==
		   XMCH_E_INVALID_VALUE_TYPE,
	   "chunk: a string chunk does not aggregate");
	ok(sampleagg_chunk((const uint8_t *)"XMCHxx", 6, &a, &err) != XMCH_OK,
	   "chunk: a truncated chunk is refused");
	xmch_writer_free(&w);
	buf_free(&out);
}

static void
grid(void)
{
	struct sampleagg_grid g;
	struct sampleagg a, all, sum, cellagg;
	struct buf out, chunkbuf;
	struct sample_value v;
	struct xmch_writer w;
	struct xmch_error err;
	uint64_t cell, last = 0, cells = 0;
	size_t pos = 0;
	bool ordered = true, has;

	buf_init(&out, 0);
	sampleagg_grid_init(&g, SAMPLE_I64, &out);
	sampleagg_init(&all, SAMPLE_I64);
	/* 100 samples a cell over 5 cells, from the middle of cell 3. */
	for (int i = 0; i < 500; i++) {
		v = i64(i % 7 == 0 ? INT64_MAX : -(int64_t)i);
		sampleagg_grid_add(&g,
				   3 * (uint64_t)SAMPLEAGG_GRID_US +
					   SAMPLEAGG_GRID_US / 2 +
					   (uint64_t)i * SAMPLEAGG_GRID_US /
						   100,
				   &v);
		sampleagg_add(&all, &v);
	}
	ok(sampleagg_grid_finish(&g), "grid: 6 cells of 500 samples kept");
	is_int(out.len, 6 * SAMPLEAGG_CELL_SIZE, "grid: one record a cell");
	sampleagg_init(&sum, SAMPLE_I64);
	while (sampleagg_grid_next(out.p, out.len, &pos, SAMPLE_I64, &cell,
				   &cellagg)) {
		ordered &= cells == 0 || cell == last + 1;
		last = cell;
		cells++;
		sampleagg_merge(&sum, &cellagg);
	}
	ok(cells == 6 && ordered && pos == out.len,
	   "grid: cells 3 to 8 read back in order");
	ok(same(&sum, &all), "grid: its cells add up to the whole");
	pos = 0;
	while (sampleagg_grid_next(out.p, out.len - 1, &pos, SAMPLE_I64, &cell,
				   &cellagg))
		;
	is_int(pos, out.len - SAMPLEAGG_CELL_SIZE,
	       "grid: a partial record is not read");
	pos = 0;
	ok(!sampleagg_grid_next(out.p, out.len, &pos, SAMPLE_I8, &cell,
				&cellagg),
	   "grid: values out of the type's range are refused");

	/* Sparse: one sample a cell is not worth a grid. */
	out.len = 0;
	sampleagg_grid_init(&g, SAMPLE_I64, &out);
	for (int i = 0; i < 100; i++) {
		v = i64(i);
		sampleagg_grid_add(&g, (uint64_t)i * SAMPLEAGG_GRID_US, &v);
	}
	ok(!sampleagg_grid_finish(&g), "grid: one sample a cell: not kept");

	/* A stored chunk's grid, floats: the sums split in two f64. */
	buf_init(&chunkbuf, 0);
	xmch_writer_init(&w, SAMPLE_F64);
	for (int i = 0; i < 300; i++) {
		v = f64(i % 5 == 0 ? NAN : 0.1 * i);
		xmch_writer_add(&w, (uint64_t)i * 10000, &v, &err);
	}
	xmch_writer_finish(&w, false, &chunkbuf, &err);
	out.len = 0;
	ok(sampleagg_chunk_grid(chunkbuf.p, chunkbuf.len, &a, &out, &has,
				&err) == XMCH_OK &&
		   has,
	   "grid: a chunk of 3 s at 100 Hz has one");
	sampleagg_init(&sum, SAMPLE_F64);
	pos = 0;
	while (sampleagg_grid_next(out.p, out.len, &pos, SAMPLE_F64, &cell,
				   &cellagg))
		sampleagg_merge(&sum, &cellagg);
	ok(sum.count == a.count && sum.nan_count == a.nan_count &&
		   sum.min.u.f64 == a.min.u.f64 &&
		   sum.max.u.f64 == a.max.u.f64 &&
		   fabsl(sum.fsum - a.fsum) < 1e-12L,
	   "grid: float cells add up to the chunk's aggregate");
	xmch_writer_free(&w);
	buf_free(&chunkbuf);
	buf_free(&out);
}

/* A value drawn to hit the edges: NaN, infinities, zeros of both
 * signs, repeats, and plain values of very different sizes. */
static double
edgy(void)
{
	static const double pool[] = {NAN, INFINITY, -INFINITY, 0.0,	 -0.0,
				      1.0, -1.0,     1e300,	-1e-300, 3.5};
	uint64_t r = rnd();

	if (r % 3 == 0)
		return pool[r / 3 % (sizeof(pool) / sizeof(pool[0]))];
	return ((double)(r % 200001) - 100000.0) / ((r % 7) + 1) *
	       pow(10.0, (double)(r % 41) - 20.0);
}

static bool
same_text(const struct sampleagg_text *a, const struct sampleagg_text *b)
{
	return strcmp(a->count, b->count) == 0 &&
	       strcmp(a->nan_count, b->nan_count) == 0 &&
	       strcmp(a->min, b->min) == 0 && strcmp(a->max, b->max) == 0 &&
	       strcmp(a->sum, b->sum) == 0;
}

/*
 * sampleagg_chunk_grid() walks f32 and f64 chunks with a loop of its
 * own: its aggregate, grid and grid verdict must be those of the walk
 * with the public per-sample calls, bit for bit, the stored text
 * included.
 */
static void
float_walk(void)
{
	static const enum sample_type types[] = {SAMPLE_F64, SAMPLE_F32};
	struct xmch_writer w;
	struct xmch_error err;
	struct xmch_chunk c;
	struct xmch_iter it;
	struct sampleagg a, want;
	struct sampleagg_text ta, tw;
	struct sampleagg_grid g;
	struct sample_value v;
	struct buf chunkbuf, got, exp;
	uint64_t ts;
	int cases = 0, alike = 0, grids = 0;
	bool has, want_has;

	rnd_seed(12345);
	buf_init(&chunkbuf, 0);
	buf_init(&got, 0);
	buf_init(&exp, 0);
	for (int round = 0; round < 200; round++) {
		enum sample_type t = types[round % 2];
		int n = 1 + (int)(rnd() % 3000);
		/* From one cell per 16 samples up to many samples a cell. */
		uint64_t step = 1 + rnd() % (SAMPLEAGG_GRID_US / 8);

		ts = (rnd() >> 40) * 1000;
		xmch_writer_init(&w, t);
		for (int i = 0; i < n; i++) {
			/* Some chunks only of zeros, where which of the
			 * equal values is min and max shows (-0 or 0). */
			double x = round % 17 == 0  ? NAN
				   : round % 5 == 1 ? (rnd() % 2 ? 0.0 : -0.0)
						    : edgy();

			if (t == SAMPLE_F64)
				v = f64(x);
			else
				v = f32((float)x);
			xmch_writer_add(&w, ts, &v, &err);
			ts += step;
		}
		chunkbuf.len = got.len = exp.len = 0;
		xmch_writer_finish(&w, round % 3 == 0, &chunkbuf, &err);
		xmch_writer_free(&w);

		sampleagg_chunk_grid(chunkbuf.p, chunkbuf.len, &a, &got, &has,
				     &err);
		xmch_open(chunkbuf.p, chunkbuf.len, &c, &err);
		sampleagg_init(&want, t);
		sampleagg_grid_init(&g, t, &exp);
		xmch_iter_init(&c, &it);
		while (xmch_next(&it, &ts, &v)) {
			sampleagg_add(&want, &v);
			sampleagg_grid_add(&g, ts, &v);
		}
		want_has = sampleagg_grid_finish(&g);
		xmch_close(&c);
		if (!want_has)
			exp.len = 0;
		sampleagg_to_text(&a, &ta);
		sampleagg_to_text(&want, &tw);
		cases++;
		grids += want_has;
		alike += same(&a, &want) && same_text(&ta, &tw) &&
			 has == want_has && got.len == exp.len &&
			 memcmp(got.p, exp.p, got.len) == 0;
	}
	is_int(alike, cases,
	       "float chunks: the loop gives the per-sample walk's "
	       "aggregate, text and grid, bit for bit");
	ok(grids > 20 && grids < cases,
	   "float chunks: with and without a grid worth keeping");
	buf_free(&chunkbuf);
	buf_free(&got);
	buf_free(&exp);
}

int
main(void)
{
	floats();
	integers();
	refused();
	chunk();
	grid();
	float_walk();
	return tap_done();
}
