/*
 * testutil.h - helpers shared by the C unit tests: a seeded PRNG and
 * sample values built from raw bits or payloads.
 *
 * Header-only, like tap.h: each test program includes it once.
 */
#ifndef XMHUB_TESTUTIL_H
#define XMHUB_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "codec/sample.h"

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

/* A variable value: len bytes, or len elements of an array type. */
static struct sample_value __attribute__((unused))
val_raw(enum sample_type t, const void *p, size_t len)
{
	struct sample_value v = {.type = t};

	v.u.raw.p = p;
	v.u.raw.len = len;
	return v;
}

#endif
