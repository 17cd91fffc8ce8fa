/* SPDX-License-Identifier: MIT */
/*
 * bench/metrics-cost - what metrics and request logs add to one request,
 * measured without the web server: the request's counters
 * (metrics_request) and its log line (log_request, to /dev/null), next
 * to an empty loop of the same length in the same run.  (A request id is
 * one snprintf: lib/web/app.c.)  bench/metrics.pl measures the whole request.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "core/metrics.h"

#define N 1000000

int
main(void)
{
	char path[] = "/tmp/xmhub-metrics-bench-XXXXXX", detail[128];
	/* Unsigned: the sum wraps, which a signed one may not. */
	volatile unsigned int sink = 0;
	int fd = mkstemp(path), null = open("/dev/null", O_WRONLY);
	double t0, base, counters, line, clock2;
	struct timespec ts;

	close(fd);
	if (!metrics_init(path, "bench", detail, sizeof(detail)) || null < 0 ||
	    dup2(null, 2) < 0) {
		fprintf(stdout, "metrics-cost: %s\n", detail);
		return 1;
	}
	log_init("bench");
	log_request_id("5f0c0a2e-1b2c-4d3e-8f40-0123456789ab");
	t0 = clock_mono_s();
	for (int i = 0; i < N; i++)
		sink += (unsigned int)i;
	base = clock_mono_s() - t0;
	t0 = clock_mono_s();
	for (int i = 0; i < N; i++)
		metrics_request(200, 0.0008);
	counters = clock_mono_s() - t0;
	t0 = clock_mono_s();
	for (int i = 0; i < N; i++)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	clock2 = 2 * (clock_mono_s() - t0);
	t0 = clock_mono_s();
	for (int i = 0; i < N / 10; i++)
		log_request("GET", "/api/auth/me", 200, 0.842);
	line = (clock_mono_s() - t0) * 10;
	unlink(path);
	printf("per request, ns (%d runs each; an empty loop: %.1f ns)\n", N,
	       base * 1e9 / N);
	printf("  two clock_gettime:          %8.1f\n", clock2 * 1e9 / N);
	printf("  counters (metrics_request): %8.1f\n", counters * 1e9 / N);
	printf("  request line (log_request): %8.1f\n", line * 1e9 / N);
	printf("  total:                      %8.1f\n",
	       (clock2 + counters + line) * 1e9 / N);
	return 0;
}
