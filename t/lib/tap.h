/* SPDX-License-Identifier: MIT */
/*
 * tap.h - a small TAP producer for the C unit tests (run by prove).
 *
 * Header-only: each test program includes it once.  Tests count
 * themselves; tap_done() prints the plan and returns the exit status.
 */
#ifndef XMHUB_TAP_H
#define XMHUB_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static unsigned int tap_n, tap_failed;

/* Prints "ok N - name" or "not ok N - name"; returns cond. */
static bool __attribute__((format(printf, 2, 3)))
ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %u - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return cond;
}

/* A diagnostic line. */
static void __attribute__((format(printf, 1, 2), unused))
diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* Integer equality with both values shown on failure. */
#define is_int(got, want, ...)                                                 \
	do {                                                                   \
		long long g_ = (long long)(got), w_ = (long long)(want);       \
		if (!ok(g_ == w_, __VA_ARGS__))                                \
			diag("got %lld, want %lld", g_, w_);                   \
	} while (0)

/* String equality with both values shown on failure. */
#define is_str(got, want, ...)                                                 \
	do {                                                                   \
		const char *g_ = (got), *w_ = (want);                          \
		if (!ok(g_ != NULL && strcmp(g_, w_) == 0, __VA_ARGS__))       \
			diag("got \"%s\", want \"%s\"", g_ ? g_ : "(null)",    \
			     w_);                                              \
	} while (0)

/* Prints the plan; the exit status for main. */
static int __attribute__((unused)) tap_done(void)
{
	printf("1..%u\n", tap_n);
	return tap_failed == 0 ? 0 : 1;
}

#endif
