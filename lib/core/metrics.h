/* SPDX-License-Identifier: MIT */
/*
 * metrics.h - counters, gauges and histograms shared by every process of
 * a service, read in Prometheus text format (doc/metrics.md).
 *
 * The numbers live in one file mapped by every process (XMHUB_METRICS_FILE
 * for the platform, FACE_API_STATE_DIR/metrics for the face service).
 * Each process owns one slot of it, found at metrics_init() and named by
 * its program; it only adds to its own slot, with lock-free atomics, so
 * the update calls below are safe from any thread and from a signal
 * handler, and cost a few nanoseconds.  A scrape sums the slots.  A slot
 * of a process that died keeps its counts: the next process of the same
 * program takes it over and counts on, so no count is lost and none goes
 * backwards.  Without metrics_init() (or with XMHUB_METRICS=off) every
 * update is a no-op.
 */
#ifndef XMHUB_METRICS_H
#define XMHUB_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "codec/buf.h"

/* Counters (only go up).  The order is the output's. */
enum metrics_counter {
	METRIC_INGEST_BATCHES,	  /* batches committed */
	METRIC_INGEST_SAMPLES,	  /* their samples */
	METRIC_INGEST_BYTES,	  /* their XMBP bytes */
	METRIC_RATE_LIMIT_LOGIN,  /* refusals of the login throttle */
	METRIC_RATE_LIMIT_DETECT, /* face detect refused by its rate limit */
	METRIC_RATE_LIMIT_MASK,	  /* face mask refused by its rate limit */
	METRIC_RATE_LIMIT_ADMIN,  /* face admin logins refused (blocked IP) */
	METRIC_DB_ERRORS,	  /* failed PostgreSQL calls */
	METRIC_FACE_INFERENCES,	  /* face model runs */
	METRIC_ALARM_CHECKS,	  /* samples checked by threshold rules */
	METRIC_ALARMS_RAISED,	  /* alarms raised at ingest */
	METRIC_COUNTERS
};

/* Gauges (a process's current value; the live processes' are summed). */
enum metrics_gauge {
	METRIC_INGEST_QUEUE, /* batches waiting for the ingest writer */
	METRIC_GAUGES
};

/* Histograms. */
enum metrics_hist {
	HIST_INGEST_COMMIT_BATCHES, /* batches per ingest commit */
	HIST_INGEST_COMMIT_SAMPLES, /* samples per ingest commit */
	HIST_INGEST_COMMIT_BYTES,   /* XMBP bytes per ingest commit */
	HIST_FACE_INFERENCE,	    /* seconds per face model run */
	METRIC_HISTS
};

/*
 * Opens (creating when missing, mode 0600) the metrics file path and takes
 * a slot of it for program (a static string, at most 31 bytes).  False
 * with the reason in detail when the file can not be used; the updates
 * then do nothing.  Once per process, before any thread starts.
 */
bool metrics_init(const char *path, const char *program, char *detail,
		  size_t detail_len);

/* Whether metrics_init() succeeded: updates are counted. */
bool metrics_on(void);

/* Adds n to counter c. */
void metrics_add(enum metrics_counter c, uint64_t n);

/* Sets this process's share of gauge g, or adds d to it. */
void metrics_set(enum metrics_gauge g, int64_t v);
void metrics_gauge_add(enum metrics_gauge g, int64_t d);

/* Records value v (seconds for a duration) in histogram h. */
void metrics_observe(enum metrics_hist h, double v);

/* Counts one answered request: its status (100 to 599; others are
 * counted as 0) and seconds taken, under this process's program. */
void metrics_request(int status, double seconds);

/*
 * Appends every metric of the file, summed over its slots, to out in
 * Prometheus text format (version 0.0.4): HELP, TYPE, then the samples.
 * Reads the file mapped by metrics_init(); false (nothing appended)
 * without one.  out's failed flag tells of memory running out.
 */
bool metrics_render(struct buf *out);

/* Unmaps the file (tests; a process exits with it mapped). */
void metrics_close(void);

#endif
