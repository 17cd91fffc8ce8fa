/* SPDX-License-Identifier: MIT */
/*
 * clock.h - the two clocks every program reads, in the units its callers
 * use, so that no module keeps a private now_ms() of its own.
 *
 * The monotonic clock (CLOCK_MONOTONIC) measures durations, deadlines and
 * intervals: it never goes back and does not follow a change of the wall
 * clock; its zero is arbitrary (about the boot), so its values mean
 * something only against each other, in one machine.  The real clock
 * (CLOCK_REALTIME) is the time of day: for what is shown, stored or
 * compared across processes; it may jump when the clock is set.
 *
 * None of these fails (the clocks exist on every system the project
 * builds on) and none allocates; all are thread-safe and async-signal-safe.
 */
#ifndef XMHUB_CLOCK_H
#define XMHUB_CLOCK_H

#include <stdint.h>
#include <time.h>

/* The monotonic clock in whole milliseconds. */
int64_t clock_mono_ms(void);

/* The monotonic clock in seconds, the nanoseconds as its fraction: for
 * rates and latencies shown as decimals. */
double clock_mono_s(void);

/* The real clock in microseconds since 1970-01-01T00:00:00Z. */
int64_t clock_real_us(void);

/* The real clock's instant ms milliseconds (0 or more) from now: the
 * absolute deadline pthread_cond_timedwait() takes. */
struct timespec clock_real_after(int64_t ms);

#endif
