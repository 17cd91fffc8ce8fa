/* SPDX-License-Identifier: MIT */
/*
 * t/unit/clock.c - the clocks (lib/core/clock.h): the monotonic one never
 * goes back, each speaks its unit, the real one is the time of day and
 * clock_real_after() a normalised deadline.
 */
#include "config.h"

#include <stdint.h>
#include <time.h>

#include "core/clock.h"
#include "tap.h"

#define READS 200000
#define NAP_MS 200

/* Real microseconds of ts. */
static int64_t
us_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000 + ts->tv_nsec / 1000;
}

/* True when a deadline ms from now lies there (within 50 ms) and its
 * nanoseconds are normalised. */
static bool
after_ok(int64_t ms)
{
	int64_t before = clock_real_us();
	struct timespec ts = clock_real_after(ms);
	int64_t after = clock_real_us(), at = us_of(&ts);

	return ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L &&
	       at >= before + ms * 1000 && at <= after + ms * 1000 + 50000;
}

int
main(void)
{
	struct timespec nap = {0, NAP_MS * 1000000L};
	int64_t ms0, ms1, real0, real1, prev, backs = 0;
	double s0, s1, sprev;
	time_t t;

	prev = clock_mono_ms();
	sprev = clock_mono_s();
	for (int i = 0; i < READS; i++) {
		int64_t m = clock_mono_ms();
		double s = clock_mono_s();

		backs += m < prev || s < sprev;
		prev = m;
		sprev = s;
	}
	is_int(backs, 0, "the monotonic clock never goes back (%d reads)",
	       READS);

	ms0 = clock_mono_ms();
	s0 = clock_mono_s();
	ok(s0 * 1000 - (double)ms0 > -1 && s0 * 1000 - (double)ms0 < 50,
	   "clock_mono_s() is clock_mono_ms() in seconds");
	real0 = clock_real_us();
	nanosleep(&nap, NULL);
	ms1 = clock_mono_ms();
	s1 = clock_mono_s();
	real1 = clock_real_us();
	ok(ms1 - ms0 >= NAP_MS && ms1 - ms0 < 10 * NAP_MS,
	   "a %d ms nap is %lld ms of the monotonic clock", NAP_MS,
	   (long long)(ms1 - ms0));
	ok(s1 - s0 >= NAP_MS / 1000.0 && s1 - s0 < 10 * NAP_MS / 1000.0,
	   "and %.3f s of clock_mono_s()", s1 - s0);
	ok(real1 - real0 >= NAP_MS * 1000 && real1 - real0 < 10 * NAP_MS * 1000,
	   "and %lld us of the real clock", (long long)(real1 - real0));

	t = time(NULL);
	real0 = clock_real_us();
	ok(real0 / 1000000 >= t && real0 / 1000000 <= t + 1,
	   "the real clock is the time of day (time() %lld, %lld us)",
	   (long long)t, (long long)real0);

	ok(after_ok(0), "clock_real_after(0) is now");
	ok(after_ok(1), "clock_real_after(1)");
	ok(after_ok(999), "clock_real_after(999): nanoseconds normalised");
	ok(after_ok(1000), "clock_real_after(1000): one second on");
	ok(after_ok(1999), "clock_real_after(1999)");
	ok(after_ok(86400001), "clock_real_after() a day and 1 ms on");
	return tap_done();
}
