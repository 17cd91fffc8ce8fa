/* SPDX-License-Identifier: MIT */
/*
 * check.h - what the libFuzzer targets share: CHECK(), which abort()s on
 * a violated invariant so that libFuzzer keeps the input as a crash
 * artifact, and touch_value(), which reads every byte of a value.
 *
 * Header-only: each target includes it once.
 */
#ifndef XMHUB_FUZZ_CHECK_H
#define XMHUB_FUZZ_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "codec/sample.h"

/* Keeps the walk's reads alive through the optimiser. */
static volatile uint64_t sink;

/* Reports the failed condition at file:line and aborts. */
static void __attribute__((noreturn, unused))
violation(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
	abort();
}

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			violation(__FILE__, __LINE__, #cond);                  \
	} while (0)

/*
 * Sums every byte of a value: a payload read outside its buffer is then
 * ASan's to report.  A fixed-width value is summed in its host form.
 */
static uint64_t __attribute__((unused))
touch_value(const struct sample_value *v)
{
	const uint8_t *p = (const uint8_t *)&v->u;
	size_t n = xmbp_sample_fixed_size(v->type);
	uint64_t s = 0;

	if (n == 0) {
		p = v->u.raw.p;
		n = xmbp_sample_payload_size(v);
	}
	for (size_t i = 0; i < n; i++)
		s += p[i];
	return s;
}

#endif
