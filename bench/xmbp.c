/* SPDX-License-Identifier: MIT */
/*
 * bench/xmbp.c - XMBP decode and encode throughput, next to memcpy.
 *
 * Two batches: the cellular one a device sends (4 streams of 250 f32
 * samples, device_id) and the largest block the format allows (one
 * stream of 65535 f64 samples).  For each: memcpy of the batch's bytes
 * as the baseline a codec cannot beat, "decode" (xmbp_decode and a walk
 * over every sample with xmbp_sample_next, summing the values so the
 * walk cannot be dropped) and "encode" (xmbp_enc_* one sample at a time,
 * as a sender does).  xmbp_decode alone is timed too, per batch: it
 * checks fixed-width blocks by size, so its cost is not per byte and a
 * rate in MB/s would say nothing.
 *
 * Each measurement is the best of 5 repetitions of about 0.1 s: the best,
 * not the mean, because noise from the rest of the machine only ever adds
 * time.  Output is a Markdown table; MB is 10^6 bytes.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/xmbp.h"

#define REPS 5
#define REP_SECONDS 0.1
#define ROW "| %s (%zu B) | %s | %.0f | %.1f | %.2fx memcpy |\n"

/* Called through a volatile pointer so the copies cannot be elided. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

struct bcase {
	const char *name;
	enum sample_type type;
	unsigned int nstreams, nsamples; /* samples per stream */
	bool device;
	uint64_t *ts;	/* nsamples timestamps, shared by the streams */
	double *vals;	/* nstreams * nsamples values, for f64 */
	float *fvals;	/* the same as float, for f32: no conversion timed */
	uint8_t *batch; /* the encoded batch */
	size_t len;
	uint8_t *scratch; /* destination of memcpy and encode */
};

/* The work of one measurement: one run over the batch. */
typedef double (*op_fn)(struct bcase *);

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *
xmalloc(size_t n)
{
	void *p;

	if ((p = malloc(n)) == NULL) {
		perror("bench/xmbp");
		exit(1);
	}
	return p;
}

/* Encodes c's samples into cap bytes at out; 0 if it did not fit. */
static size_t
encode(const struct bcase *c, uint8_t *out, size_t cap)
{
	struct xmbp_enc enc;
	uint32_t dev = 0x2A2A2A2A;
	size_t len;

	xmbp_enc_init(&enc, out, cap);
	xmbp_enc_begin(&enc, 7, c->device ? &dev : NULL);
	for (unsigned int s = 0; s < c->nstreams; s++) {
		size_t off = (size_t)s * c->nsamples;

		xmbp_enc_stream(&enc, (uint16_t)s, c->type);
		if (c->type == SAMPLE_F32)
			for (unsigned int i = 0; i < c->nsamples; i++)
				xmbp_enc_f32(&enc, c->ts[i], c->fvals[off + i]);
		else
			for (unsigned int i = 0; i < c->nsamples; i++)
				xmbp_enc_f64(&enc, c->ts[i], c->vals[off + i]);
	}
	return xmbp_enc_finish(&enc, &len) == XMBP_ENC_OK ? len : 0;
}

/*
 * Samples 1 ms apart from a fixed epoch, values a slow ramp with some
 * fraction bits, so nothing is all zeros.
 */
static void
setup(struct bcase *c)
{
	size_t n = (size_t)c->nstreams * c->nsamples;
	size_t cap = 14 + c->nstreams * (5 + (size_t)c->nsamples * 16);

	c->ts = xmalloc(c->nsamples * sizeof(*c->ts));
	c->vals = xmalloc(n * sizeof(*c->vals));
	c->fvals = xmalloc(n * sizeof(*c->fvals));
	for (unsigned int i = 0; i < c->nsamples; i++)
		c->ts[i] = 1700000000000000ULL + (uint64_t)i * 1000;
	for (size_t i = 0; i < n; i++) {
		c->vals[i] = (double)(i % 1000) * 0.37 - 20.0;
		c->fvals[i] = (float)c->vals[i];
	}
	c->batch = xmalloc(cap);
	c->scratch = xmalloc(cap);
	if ((c->len = encode(c, c->batch, cap)) == 0) {
		fprintf(stderr, "bench/xmbp: %s: encoding failed\n", c->name);
		exit(1);
	}
}

static double
op_memcpy(struct bcase *c)
{
	copy_fn(c->scratch, c->batch, c->len);
	return c->scratch[c->len / 2];
}

static double
op_validate(struct bcase *c)
{
	struct xmbp_batch b;

	if (xmbp_decode(c->batch, c->len, &b, NULL) != XMBP_OK)
		abort();
	return b.stream_count;
}

static double
op_decode(struct bcase *c)
{
	struct xmbp_batch b;
	struct xmbp_stream s;
	struct xmbp_sample_iter it;
	struct sample_value v;
	uint64_t ts, tsum = 0;
	double sum = 0;

	if (xmbp_decode(c->batch, c->len, &b, NULL) != XMBP_OK)
		abort();
	for (uint16_t i = 0; i < b.stream_count; i++) {
		xmbp_stream_at(&b, i, &s);
		xmbp_samples(&s, &it);
		if (s.type == SAMPLE_F32)
			while (xmbp_sample_next(&it, &ts, &v)) {
				sum += v.u.f32;
				tsum += ts;
			}
		else
			while (xmbp_sample_next(&it, &ts, &v)) {
				sum += v.u.f64;
				tsum += ts;
			}
	}
	return sum + (double)(tsum & 0xFFFF);
}

static double
op_encode(struct bcase *c)
{
	size_t len = encode(c, c->scratch, c->len);

	if (len != c->len)
		abort();
	return c->scratch[len - 1];
}

/*
 * Best time of one run of op, in seconds, over REPS repetitions of
 * about REP_SECONDS each.  *check accumulates op's results.
 */
static double
measure(struct bcase *c, op_fn op, double *check)
{
	unsigned long iters = 1, i;
	double t0, t, best = 0;

	/* Find an iteration count that fills a repetition. */
	for (;;) {
		t0 = now();
		for (i = 0; i < iters; i++)
			*check += op(c);
		if ((t = now() - t0) >= REP_SECONDS / 4)
			break;
		iters *= 2;
	}
	iters = (unsigned long)((double)iters * REP_SECONDS / t) + 1;
	for (int r = 0; r < REPS; r++) {
		t0 = now();
		for (i = 0; i < iters; i++)
			*check += op(c);
		t = (now() - t0) / (double)iters;
		if (r == 0 || t < best)
			best = t;
	}
	return best;
}

int
main(void)
{
	struct bcase cases[] = {
		{"cellular: 4 x 250 f32, device_id", SAMPLE_F32, 4, 250, true,
		 NULL, NULL, NULL, NULL, 0, NULL},
		{"large: 1 x 65535 f64", SAMPLE_F64, 1, 65535, false, NULL,
		 NULL, NULL, NULL, 0, NULL},
	};
	static const struct {
		const char *name;
		op_fn fn;
	} ops[] = {
		{"memcpy", op_memcpy},
		{"decode", op_decode},
		{"encode", op_encode},
	};
	double check = 0, validate[sizeof(cases) / sizeof(cases[0])];

	printf("| case | operation | MB/s | Msamples/s | vs memcpy |\n");
	printf("|---|---|---:|---:|---:|\n");
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct bcase *c = &cases[k];
		double base = 0, samples;

		setup(c);
		samples = (double)c->nstreams * c->nsamples;
		for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
			double t = measure(c, ops[o].fn, &check);

			if (o == 0)
				base = t;
			printf(ROW, c->name, c->len, ops[o].name,
			       (double)c->len / t / 1e6, samples / t / 1e6,
			       base / t);
		}
		validate[k] = measure(c, op_validate, &check);
		free(c->ts);
		free(c->vals);
		free(c->fvals);
		free(c->batch);
		free(c->scratch);
	}
	printf("\nxmbp_decode alone (validation, no walk): %.0f ns per "
	       "cellular batch, %.0f ns per large batch.\n",
	       validate[0] * 1e9, validate[1] * 1e9);
	printf("Best of %d repetitions of ~%.1f s each; MB = 10^6 bytes; "
	       "Msamples/s for memcpy is the rate at which it copies the "
	       "same samples' bytes.  Checksum %.6g.\n",
	       REPS, REP_SECONDS, check);
	return 0;
}
