/* SPDX-License-Identifier: MIT */
/*
 * jobmetrics.h - a job queue's states and run times in the Prometheus
 * text format, read from PostgreSQL when scraped (doc/metrics.md): the
 * platform's transcode jobs, the face service's video jobs.  The queries
 * are constant SQL made by the macros below from the table's name.
 */
#ifndef XMHUB_JOBMETRICS_H
#define XMHUB_JOBMETRICS_H

#include "codec/buf.h"
#include "core/db.h"

/* Upper bounds (seconds) of the run-time histogram's buckets. */
#define JOBMETRICS_LE                                                          \
	{                                                                      \
		1, 5, 10, 30, 60, 120, 300, 600, 1800                          \
	}
#define JOBMETRICS_NLE 9

/* Rows (state, count) of TABLE's jobs, every state listed, 0 included. */
#define JOBMETRICS_STATES_SQL(TABLE)                                           \
	"SELECT s, (SELECT count(*) FROM " TABLE " j WHERE j.status = s) "     \
	"FROM unnest(ARRAY['queued','running','completed','failed',"           \
	"'cancelled']) AS s"

/* One row: for each bound of JOBMETRICS_LE the finished jobs of TABLE
 * that ran at most that long (from START to END), then their count and
 * the sum of their run times. */
#define JOBMETRICS_DURATIONS_SQL(TABLE, START, END)                            \
	"SELECT count(*) FILTER (WHERE d <= 1), count(*) FILTER (WHERE d <= "  \
	"5), count(*) FILTER (WHERE d <= 10), count(*) FILTER (WHERE d <= "    \
	"30), count(*) FILTER (WHERE d <= 60), count(*) FILTER (WHERE d <= "   \
	"120), count(*) FILTER (WHERE d <= 300), count(*) FILTER (WHERE d <= " \
	"600), count(*) FILTER (WHERE d <= 1800), count(*), "                  \
	"coalesce(sum(d), 0) FROM (SELECT extract(epoch FROM " END " - " START \
	")::float8 AS d FROM " TABLE " WHERE status IN ('completed', "         \
	"'failed') AND " START " IS NOT NULL AND " END " IS NOT NULL) f"

/* One queue: its metric names, the subject of their HELP lines and its
 * two queries (the macros above). */
struct jobmetrics {
	const char *states;	/* gauge by state, e.g. xmhub_transcode_jobs */
	const char *durations;	/* histogram of finished jobs' run times */
	const char *what;	/* e.g. "transcode jobs" */
	const char *states_sql; /* JOBMETRICS_STATES_SQL */
	const char *durations_sql; /* JOBMETRICS_DURATIONS_SQL */
};

/*
 * Appends m's gauge and histogram to out (two read-only queries on db).
 * DB_OK, or the failed query's status with out holding part of them:
 * the caller drops the answer.
 */
enum db_status jobmetrics_render(struct db *db, const struct jobmetrics *m,
				 struct buf *out);

#endif
