/*
 * sampleagg.c - aggregates of numeric samples (lib/codec/sampleagg.c):
 * counts, NaN, first min and max, exact integer sums at the i64
 * extremes, bool, merging equal to adding, a stored chunk's aggregate,
 * and the stored text read back bit for bit (refused when malformed).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "codec/sampleagg.h"
#include "tap.h"

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
	       (a->count == 0 || (sample_equal(&a->min, &b->min) &&
				  sample_equal(&a->max, &b->max)));
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

int
main(void)
{
	floats();
	integers();
	refused();
	chunk();
	return tap_done();
}
