/* SPDX-License-Identifier: MIT */
/*
 * testutil.h - helpers shared by the C tests: a seeded PRNG, sample
 * values built from raw bits, payloads or table rows, and a small XMBP
 * batch.
 *
 * Header-only, like tap.h: each test program includes it once.
 */
#ifndef XMHUB_TESTUTIL_H
#define XMHUB_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <stdlib.h>

#include "codec/sample.h"
#include "codec/xmbpenc.h"

/* splitmix64 state: a fixed seed keeps every run the same. */
static uint64_t test_rng;

/* Starts the sequence again from seed (any value, 0 included). */
static void __attribute__((unused)) rnd_seed(uint64_t seed)
{
	test_rng = seed;
}

/* The next 64 bits of splitmix64. */
static uint64_t __attribute__((unused)) rnd(void)
{
	uint64_t z = (test_rng += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* An f64 value with exactly these bits. */
static struct sample_value __attribute__((unused)) val_f64_bits(uint64_t bits)
{
	struct sample_value v = {.type = SAMPLE_F64};

	/* memcpy, not a double assignment: signalling NaNs stay as built. */
	memcpy(&v.u.f64, &bits, sizeof(bits));
	return v;
}

/* An f32 value with exactly these bits. */
static struct sample_value __attribute__((unused)) val_f32_bits(uint32_t bits)
{
	struct sample_value v = {.type = SAMPLE_F32};

	memcpy(&v.u.f32, &bits, sizeof(bits));
	return v;
}

/*
 * A fixed-width value of type t from raw bits, as tables write them:
 * floats bit for bit, integers truncated to their width, bool non-zero.
 * Any other type comes back with its type only.
 */
static struct sample_value __attribute__((unused))
val_bits(enum sample_type t, uint64_t bits)
{
	struct sample_value v = {.type = t};

	switch (t) {
	case SAMPLE_F64:
		return val_f64_bits(bits);
	case SAMPLE_F32:
		return val_f32_bits((uint32_t)bits);
	case SAMPLE_I64:
		v.u.i64 = (int64_t)bits;
		break;
	case SAMPLE_I32:
		v.u.i32 = (int32_t)(uint32_t)bits;
		break;
	case SAMPLE_I16:
		v.u.i16 = (int16_t)(uint16_t)bits;
		break;
	case SAMPLE_I8:
		v.u.i8 = (int8_t)(uint8_t)bits;
		break;
	case SAMPLE_BOOL:
		v.u.b = bits != 0;
		break;
	default:
		break;
	}
	return v;
}

/* A variable value: len bytes, or len elements of an array type. */
static struct sample_value __attribute__((unused))
val_raw(enum sample_type t, const void *p, size_t len)
{
	struct sample_value v = {.type = t};

	v.u.raw.p = p;
	v.u.raw.len = len;
	return v;
}

/* One value as a table row writes it: bits for a fixed-width value, p and
 * n (bytes, or elements of an array) for a variable one (raw). */
struct test_value {
	enum sample_type type;
	uint64_t bits;
	const void *p;
	size_t n;
	bool raw;
};

/* Rows of struct test_value: TV(type, bits) for a fixed-width value,
 * TV_RAW(type, p, n) for a variable one (p, n may come from one macro). */
#define TV(t, bits)                                                            \
	{                                                                      \
		(t), (bits), NULL, 0, false                                    \
	}
#define TV_RAW(t, ...)                                                         \
	{                                                                      \
		(t), 0, __VA_ARGS__, true                                      \
	}

/* The value of row r: val_raw() or val_bits(). */
static struct sample_value __attribute__((unused))
val_row(const struct test_value *r)
{
	return r->raw ? val_raw(r->type, r->p, r->n)
		      : val_bits(r->type, r->bits);
}

/* A batch (seq, no device id) of n f32 samples of stream 0, value i at
 * ts0 + i, into the cap bytes at buf; its length.  Aborts when it does
 * not fit. */
static size_t __attribute__((unused))
test_f32_batch(uint8_t *buf, size_t cap, uint16_t seq, unsigned n, uint64_t ts0)
{
	struct xmbp_enc e;
	size_t len = 0;

	xmbp_enc_init(&e, buf, cap);
	xmbp_enc_begin(&e, seq, NULL);
	xmbp_enc_stream(&e, 0, SAMPLE_F32);
	for (unsigned i = 0; i < n; i++)
		xmbp_enc_f32(&e, ts0 + i, (float)i);
	if (xmbp_enc_finish(&e, &len) != XMBP_ENC_OK)
		abort();
	return len;
}

#endif
