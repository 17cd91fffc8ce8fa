/* SPDX-License-Identifier: MIT */
/*
 * t/unit/metrics.c - the shared counters of lib/core/metrics: sums over
 * processes and threads, a dead process's counts kept and its slot taken
 * over, the text format, a file of another layout refused.
 */
#include "config.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/metrics.h"
#include "tap.h"

static char path[] = "/tmp/xmhub-metrics-XXXXXX";

/* The value of the sample line "name value" in text, or -1. */
static double
value(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = text; p != NULL && *p != '\0';
	     p = strchr(p, '\n'), p = p != NULL ? p + 1 : NULL)
		if (strncmp(p, name, n) == 0 && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	return -1;
}

/* The file rendered now (by this process's mapping). */
static char *
render(void)
{
	static struct buf b;

	buf_free(&b);
	buf_init(&b, 0);
	metrics_render(&b);
	buf_putc(&b, '\0');
	return (char *)b.p;
}

/* In a child: program name counts, then exits (or is killed: crash). */
static bool
child(const char *name, int status, bool crash)
{
	char detail[128];
	pid_t pid;
	int st;

	fflush(stdout);
	if ((pid = fork()) < 0)
		return false;
	if (pid == 0) {
		if (!metrics_init(path, name, detail, sizeof(detail)))
			_exit(1);
		metrics_add(METRIC_INGEST_BATCHES, 5);
		metrics_set(METRIC_INGEST_QUEUE, 100);
		metrics_request(status, 0.003);
		if (crash)
			abort();
		_exit(0);
	}
	return waitpid(pid, &st, 0) == pid &&
	       (crash ? WIFSIGNALED(st)
		      : WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void *
adder(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100000; i++) {
		metrics_add(METRIC_INGEST_SAMPLES, 1);
		metrics_observe(HIST_INGEST_COMMIT_BYTES, 100);
	}
	return NULL;
}

int
main(void)
{
	char detail[128];
	pthread_t t[4];
	const char *text;
	int fd = mkstemp(path);
	bool all = true;

	close(fd);
	metrics_add(METRIC_INGEST_BATCHES, 1);
	ok(!metrics_on(), "before metrics_init: off, updates do nothing");
	ok(metrics_init(path, "unit", detail, sizeof(detail)),
	   "init of a new file");

	metrics_add(METRIC_INGEST_BATCHES, 2);
	metrics_request(200, 0.0004);
	metrics_request(200, 0.02);
	metrics_request(404, 7);
	metrics_observe(HIST_FACE_INFERENCE, 0.2);
	text = render();
	is_int(value(text, "xmhub_ingest_batches_total"), 2, "a counter");
	is_int(value(text, "xmhub_http_requests_total{group=\"unit\","
			   "status=\"200\"}"),
	       2, "requests by group and status");
	is_int(value(text, "xmhub_http_requests_total{group=\"unit\","
			   "status=\"404\"}"),
	       1, "another status");
	is_int(value(text, "xmhub_http_request_duration_seconds_bucket{group="
			   "\"unit\",le=\"0.001\"}"),
	       1, "latency: the first bucket");
	is_int(value(text, "xmhub_http_request_duration_seconds_bucket{group="
			   "\"unit\",le=\"0.025\"}"),
	       2, "latency: buckets are cumulative");
	is_int(value(text, "xmhub_http_request_duration_seconds_bucket{group="
			   "\"unit\",le=\"+Inf\"}"),
	       3, "latency: +Inf is all");
	ok(value(text, "xmhub_http_request_duration_seconds_sum{group="
		       "\"unit\"}") > 7.0204 - 1e-6 &&
		   value(text, "xmhub_http_request_duration_seconds_sum{group="
			       "\"unit\"}") < 7.0204 + 1e-6,
	   "latency: the sum in seconds");
	is_int(value(text, "xmhub_face_inference_duration_seconds_count"), 1,
	       "a histogram without labels");
	ok(strstr(text,
		  "# TYPE xmhub_rate_limited_total counter\n"
		  "xmhub_rate_limited_total{limit=\"login\"} 0\n"
		  "xmhub_rate_limited_total{limit=\"detect\"} 0\n") != NULL,
	   "one TYPE for the rows of a labelled counter");

	ok(child("other", 201, false), "another process counted");
	ok(child("other", 201, true), "one more, which crashed");
	text = render();
	is_int(value(text, "xmhub_ingest_batches_total"), 12,
	       "the processes' counts summed, the crashed one's kept");
	is_int(value(text, "xmhub_http_requests_total{group=\"other\","
			   "status=\"201\"}"),
	       2, "their requests, under their group");
	is_int(value(text, "xmhub_ingest_queue_depth"), 0,
	       "a dead process's gauge is not summed");
	metrics_set(METRIC_INGEST_QUEUE, 3);
	metrics_gauge_add(METRIC_INGEST_QUEUE, 2);
	is_int(value(render(), "xmhub_ingest_queue_depth"), 5,
	       "a live process's gauge is");

	/* More processes than slots, one after the other: each takes a
	 * dead one's slot over. */
	for (int i = 0; i < 1100 && all; i++)
		all = child("many", 500, false);
	ok(all, "1100 processes of a program in turn, 1024 slots");
	text = render();
	is_int(value(text, "xmhub_http_requests_total{group=\"many\","
			   "status=\"500\"}"),
	       1100, "and every one counted");

	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, adder, NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	text = render();
	is_int(value(text, "xmhub_ingest_samples_total"), 400000,
	       "4 threads: no update lost");
	is_int(value(text, "xmhub_ingest_commit_bytes_count"), 400000,
	       "histogram counts too");
	is_int(value(text, "xmhub_ingest_commit_bytes_sum"), 40000000,
	       "and their sum");
	metrics_close();

	fd = open(path, O_WRONLY | O_TRUNC);
	ok(fd >= 0 && write(fd, "not a metrics file", 18) == 18,
	   "a file of another kind");
	close(fd);
	ok(!metrics_init(path, "unit", detail, sizeof(detail)) &&
		   strstr(detail, "another version") != NULL,
	   "refused: %s", detail);
	ok(!metrics_on(), "metrics stay off");
	ok(!metrics_init("/nonexistent/dir/m", "unit", detail, sizeof(detail)),
	   "a file that can not be made: refused");
	unlink(path);
	return tap_done();
}
