/* SPDX-License-Identifier: MIT */
/*
 * alarmeval.c - threshold rules evaluated in an ingest round.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "codec/buf.h"
#include "domain/alarmeval.h"

/* The rules on the round's sessions' numeric streams whose name they
 * watch, on their device or every device, with their stored runs. */
static const char load_sql[] =
	"SELECT r.id, st.id, s.device_id, left(st.name, 63), r.op, "
	"coalesce(r.lo, 0), coalesce(r.hi, 0), r.for_samples, r.for_seconds, "
	"coalesce(x.run_samples, 0), coalesce(x.run_start_us, 0) "
	"FROM ingest_streams st "
	"JOIN ingest_sessions s ON s.id = st.session_id "
	"JOIN alarm_rules r ON r.facility_id = s.facility_id "
	"AND r.kind = 'threshold' AND r.enabled AND r.stream_name = st.name "
	"AND (r.device_id IS NULL OR r.device_id = s.device_id) "
	"LEFT JOIN alarm_rule_state x ON x.rule_id = r.id "
	"AND x.stream_id = st.id "
	"WHERE st.session_id = ANY ($1::uuid[]) AND st.value_type IN "
	"('f64', 'f32', 'i64', 'i32', 'i16', 'i8', 'bool') "
	"ORDER BY st.id, r.id";

/* The runs that moved, then the rules that held: each raises its alarm
 * (sql/021 alarm_raise); the count of new ones. */
static const char write_sql[] =
	"WITH u AS (INSERT INTO alarm_rule_state AS o (rule_id, stream_id, "
	"run_samples, run_start_us) "
	"SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::bigint[], "
	"$4::numeric[]) "
	"ON CONFLICT (rule_id, stream_id) DO UPDATE SET "
	"run_samples = EXCLUDED.run_samples, "
	"run_start_us = EXCLUDED.run_start_us) "
	"SELECT count(*) FILTER (WHERE a.raised) "
	"FROM unnest($5::uuid[], $6::uuid[], $7::float8[], $8::text[]) "
	"AS t(r, d, v, m), LATERAL alarm_raise(t.r, t.d, t.v, t.m) a";

static const char *const op_names[] = {
	[ALARMEVAL_ABOVE] = "above",
	[ALARMEVAL_BELOW] = "below",
	[ALARMEVAL_OUTSIDE] = "outside",
};

void
alarmeval_init(struct alarmeval *e)
{
	memset(e, 0, sizeof(*e));
}

void
alarmeval_free(struct alarmeval *e)
{
	free(e->rules);
	alarmeval_init(e);
}

static int
op_of(const char *name)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(op_names[i], name) == 0)
			return i;
	return ALARMEVAL_ABOVE;
}

enum db_status
alarmeval_load(struct db *db, struct alarmeval *e, const char *session_ids)
{
	PGresult *res = NULL;
	enum db_status st;
	int n;

	if ((st = db_query(db, &res, load_sql, 1, &session_ids)) != DB_OK)
		goto out;
	if ((n = PQntuples(res)) == 0)
		goto out;
	if ((e->rules = calloc((size_t)n, sizeof(*e->rules))) == NULL) {
		st = DB_ERROR;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		struct alarmeval_rule *r = &e->rules[i];

		snprintf(r->rule_id, sizeof(r->rule_id), "%s",
			 PQgetvalue(res, i, 0));
		snprintf(r->stream_id, sizeof(r->stream_id), "%s",
			 PQgetvalue(res, i, 1));
		snprintf(r->device_id, sizeof(r->device_id), "%s",
			 PQgetvalue(res, i, 2));
		snprintf(r->stream_name, sizeof(r->stream_name), "%s",
			 PQgetvalue(res, i, 3));
		r->op = op_of(PQgetvalue(res, i, 4));
		r->lo = strtod(PQgetvalue(res, i, 5), NULL);
		r->hi = strtod(PQgetvalue(res, i, 6), NULL);
		r->for_samples = strtoull(PQgetvalue(res, i, 7), NULL, 10);
		r->for_us = strtoull(PQgetvalue(res, i, 8), NULL, 10) * 1000000;
		r->run = strtoull(PQgetvalue(res, i, 9), NULL, 10);
		r->run_from = strtoull(PQgetvalue(res, i, 10), NULL, 10);
	}
	e->n = (size_t)n;
out:
	PQclear(res);
	return st;
}

/* The value of a numeric or bool sample as a double; false for others. */
static bool
as_double(const struct sample_value *v, double *d)
{
	switch (v->type) {
	case SAMPLE_F64:
		*d = v->u.f64;
		return true;
	case SAMPLE_F32:
		*d = v->u.f32;
		return true;
	case SAMPLE_I64:
		*d = (double)v->u.i64;
		return true;
	case SAMPLE_I32:
		*d = v->u.i32;
		return true;
	case SAMPLE_I16:
		*d = v->u.i16;
		return true;
	case SAMPLE_I8:
		*d = v->u.i8;
		return true;
	case SAMPLE_BOOL:
		*d = v->u.b ? 1 : 0;
		return true;
	default:
		return false;
	}
}

static bool
violates(const struct alarmeval_rule *r, double v)
{
	/* NaN compares false either way: it violates nothing. */
	switch (r->op) {
	case ALARMEVAL_ABOVE:
		return v > r->hi;
	case ALARMEVAL_BELOW:
		return v < r->lo;
	default:
		return v < r->lo || v > r->hi;
	}
}

/* One sample against rule r. */
static void
step(struct alarmeval_rule *r, uint64_t ts, double v)
{
	if (!violates(r, v)) {
		r->moved |= r->run != 0;
		r->run = 0;
		return;
	}
	if (r->run == 0)
		r->run_from = ts;
	r->run++;
	r->moved = true;
	if (r->run >= r->for_samples && ts >= r->run_from &&
	    ts - r->run_from >= r->for_us) {
		r->holds = true;
		r->value = v;
	}
}

void
alarmeval_block(struct alarmeval *e, const char *stream_id,
		const struct xmbp_stream *s)
{
	struct xmbp_sample_iter it;
	struct sample_value v;
	uint64_t ts;
	double d;
	size_t first = 0;

	/* The rules are sorted by stream: find this stream's run of them. */
	while (first < e->n &&
	       strcasecmp(e->rules[first].stream_id, stream_id) != 0)
		first++;
	if (first == e->n)
		return;
	xmbp_samples(s, &it);
	while (xmbp_sample_next(&it, &ts, &v)) {
		if (!as_double(&v, &d))
			return;
		for (size_t i = first;
		     i < e->n &&
		     strcasecmp(e->rules[i].stream_id, stream_id) == 0;
		     i++) {
			step(&e->rules[i], ts, d);
			e->checks++;
		}
	}
}

/* Starts the next element of the array literal a. */
static void
elem(struct buf *a)
{
	buf_putc(a, a->len == 0 ? '{' : ',');
}

/* An array literal's element of text t, quoted. */
static void
elem_text(struct buf *a, const char *t)
{
	elem(a);
	buf_putc(a, '"');
	for (; *t != '\0'; t++) {
		if (*t == '"' || *t == '\\')
			buf_putc(a, '\\');
		buf_putc(a, *t);
	}
	buf_putc(a, '"');
}

enum db_status
alarmeval_write(struct db *db, struct alarmeval *e, unsigned long *raised)
{
	/* Runs: rule, stream, samples, from; holds: rule, device, value,
	 * message. */
	struct buf a[8];
	const char *params[8];
	char msg[160];
	PGresult *res = NULL;
	enum db_status st = DB_ERROR;
	bool any = false, ok = true;

	*raised = 0;
	for (int k = 0; k < 8; k++)
		buf_init(&a[k], 0);
	for (size_t i = 0; i < e->n; i++) {
		const struct alarmeval_rule *r = &e->rules[i];

		if (r->moved) {
			elem(&a[0]);
			buf_puts(&a[0], r->rule_id);
			elem(&a[1]);
			buf_puts(&a[1], r->stream_id);
			elem(&a[2]);
			buf_printf(&a[2], "%" PRIu64, r->run);
			elem(&a[3]);
			buf_printf(&a[3], "%" PRIu64, r->run_from);
			any = true;
		}
		if (!r->holds)
			continue;
		elem(&a[4]);
		buf_puts(&a[4], r->rule_id);
		elem(&a[5]);
		buf_puts(&a[5], r->device_id);
		elem(&a[6]);
		buf_printf(&a[6], "%.17g", r->value);
		snprintf(msg, sizeof(msg), "%s %s the limit: %.17g",
			 r->stream_name, op_names[r->op], r->value);
		elem_text(&a[7], msg);
	}
	for (int k = 0; k < 8; k++) {
		if (a[k].len == 0)
			buf_putc(&a[k], '{');
		buf_putc(&a[k], '}');
		buf_putc(&a[k], '\0');
		ok &= !a[k].failed;
		params[k] = (const char *)a[k].p;
	}
	if (!ok)
		goto out;
	if (!any) {
		st = DB_OK;
		goto out;
	}
	if ((st = db_query(db, &res, write_sql, 8, params)) == DB_OK)
		*raised = strtoul(PQgetvalue(res, 0, 0), NULL, 10);
out:
	PQclear(res);
	for (int k = 0; k < 8; k++)
		buf_free(&a[k]);
	return st;
}
