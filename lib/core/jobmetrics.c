/* SPDX-License-Identifier: MIT */
/*
 * jobmetrics.c - a job queue's states and run times (jobmetrics.h).
 */
#include "config.h"

#include "core/jobmetrics.h"

static const double job_le[JOBMETRICS_NLE] = JOBMETRICS_LE;

enum db_status
jobmetrics_render(struct db *db, const struct jobmetrics *m, struct buf *out)
{
	PGresult *res = NULL;
	enum db_status st;

	if ((st = db_query_ro(db, &res, m->states_sql, 0, NULL)) != DB_OK)
		goto out;
	buf_printf(out,
		   "# HELP %s The %s by state (read from PostgreSQL).\n"
		   "# TYPE %s gauge\n",
		   m->states, m->what, m->states);
	for (int i = 0; i < PQntuples(res); i++)
		buf_printf(out, "%s{state=\"%s\"} %s\n", m->states,
			   PQgetvalue(res, i, 0), PQgetvalue(res, i, 1));
	PQclear(res);
	res = NULL;
	if ((st = db_query_ro(db, &res, m->durations_sql, 0, NULL)) != DB_OK)
		goto out;
	buf_printf(out,
		   "# HELP %s Run time of the finished %s (read from "
		   "PostgreSQL).\n# TYPE %s histogram\n",
		   m->durations, m->what, m->durations);
	for (int i = 0; i < JOBMETRICS_NLE; i++)
		buf_printf(out, "%s_bucket{le=\"%g\"} %s\n", m->durations,
			   job_le[i], PQgetvalue(res, 0, i));
	buf_printf(out, "%s_bucket{le=\"+Inf\"} %s\n%s_sum %s\n%s_count %s\n",
		   m->durations, PQgetvalue(res, 0, JOBMETRICS_NLE),
		   m->durations, PQgetvalue(res, 0, JOBMETRICS_NLE + 1),
		   m->durations, PQgetvalue(res, 0, JOBMETRICS_NLE));
out:
	PQclear(res);
	return st;
}
