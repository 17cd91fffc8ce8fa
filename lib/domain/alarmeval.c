/* SPDX-License-Identifier: MIT */
/*
 * alarmeval.c - threshold rules evaluated in an ingest round.
 */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "codec/buf.h"
#include "domain/alarmeval.h"

/* The rules on the numeric streams of sessions whose name they watch,
 * on their device or every device, by session and stream. */
static const char load_sql[] =
	"SELECT st.session_id, r.id, st.id, s.device_id, left(st.name, 63), "
	"r.op, coalesce(r.lo, 0), coalesce(r.hi, 0), r.for_samples, "
	"r.for_seconds "
	"FROM ingest_streams st "
	"JOIN ingest_sessions s ON s.id = st.session_id "
	"JOIN alarm_rules r ON r.facility_id = s.facility_id "
	"AND r.kind = 'threshold' AND r.enabled AND r.stream_name = st.name "
	"AND (r.device_id IS NULL OR r.device_id = s.device_id) "
	"WHERE st.session_id = ANY ($1::uuid[]) AND st.value_type IN "
	"('f64', 'f32', 'i64', 'i32', 'i16', 'i8', 'bool') "
	"ORDER BY st.session_id, st.id, r.id";

/* The runs going on, on the streams of sessions. */
static const char runs_sql[] =
	"SELECT st.session_id, x.stream_id, x.rule_id, x.run_samples, "
	"x.run_start_us FROM ingest_streams st "
	"JOIN alarm_rule_state x ON x.stream_id = st.id AND x.run_samples > 0 "
	"WHERE st.session_id = ANY ($1::uuid[])";

/* The runs that moved (of rules not deleted meanwhile), the sessions
 * whose alarm_runs changed, then the rules that held: each raises its
 * alarm (sql/021 alarm_raise), in rule and device order, so that two
 * rounds raising the same alarms wait for each other rather than
 * deadlock; the count of new ones. */
static const char write_sql[] =
	"WITH u AS (INSERT INTO alarm_rule_state AS o (rule_id, stream_id, "
	"run_samples, run_start_us) "
	"SELECT x.* FROM unnest($1::uuid[], $2::uuid[], $3::bigint[], "
	"$4::numeric[]) AS x(rule, stream, n, t) "
	"JOIN alarm_rules r ON r.id = x.rule "
	"ON CONFLICT (rule_id, stream_id) DO UPDATE SET "
	"run_samples = EXCLUDED.run_samples, "
	"run_start_us = EXCLUDED.run_start_us), "
	"v AS (UPDATE ingest_sessions t SET alarm_runs = y.r "
	"FROM unnest($9::uuid[], $10::boolean[]) AS y(id, r) "
	"WHERE t.id = y.id) "
	"SELECT count(*) FILTER (WHERE a.raised) "
	"FROM (SELECT * FROM unnest($5::uuid[], $6::uuid[], $7::float8[], "
	"$8::text[]) AS x(r, d, v, m) ORDER BY r, d) t, "
	"LATERAL alarm_raise(t.r, t.d, t.v, t.m) a";

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
	for (size_t i = 0; i < e->ns; i++)
		free(e->s[i].rules);
	free(e->s);
	alarmeval_init(e);
}

bool
alarmeval_watch(struct alarmeval *e, size_t max, const char *id,
		long long version, bool runs, size_t *slot)
{
	struct alarmeval_session *w;

	if (e->s == NULL && (e->s = calloc(max, sizeof(*e->s))) == NULL)
		return false;
	if (e->ns == max)
		return false;
	w = &e->s[e->ns];
	/* As the database writes ids (a client may name a session in upper
	 * case). */
	for (size_t i = 0; i < UUID_LEN && id[i] != '\0'; i++)
		w->id[i] = (char)tolower((unsigned char)id[i]);
	w->version = version;
	w->runs = runs;
	*slot = e->ns++;
	return true;
}

/*
 * A session's rules as loaded, at its facility's version of them, one
 * per slot of a hash of the session's id, so that a round of sessions
 * seen before reads only their runs going on.  The copies together stay
 * under CACHE_BYTES: a session's rules are its facility's rules times
 * its streams of their names (up to XMHUB_ALARM_RULES_MAX x
 * INGEST_MAX_STREAMS), and one that does not fit is loaded again at each
 * round instead of kept.
 */
struct cached {
	char id[UUID_LEN + 1];
	long long version;
	size_t n;
	struct alarmeval_rule rules[]; /* n, no run */
};

#define CACHE_SLOTS 1024
#define CACHE_BYTES (8u << 20)
static struct cached *cache[CACHE_SLOTS];
static size_t cache_bytes; /* what the entries of cache take */

static size_t
cached_size(size_t n)
{
	return sizeof(struct cached) + n * sizeof(struct alarmeval_rule);
}

static struct cached **
cache_slot(const char *id)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (const char *p = id; *p != '\0'; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	return &cache[h % CACHE_SLOTS];
}

/* Copies n rules into w; false when memory runs out. */
static bool
take_rules(struct alarmeval_session *w, const struct alarmeval_rule *r,
	   size_t n)
{
	w->loaded = true;
	w->n = n;
	if (n == 0)
		return true;
	if ((w->rules = malloc(n * sizeof(*r))) == NULL)
		return false;
	memcpy(w->rules, r, n * sizeof(*r));
	return true;
}

/* Keeps the n rules of w in its slot, replacing what was there; the
 * slot stays empty when they do not fit in CACHE_BYTES. */
static void
cache_put(const struct alarmeval_session *w)
{
	struct cached **slot = cache_slot(w->id), *c;
	size_t size = cached_size(w->n);

	if (*slot != NULL) {
		cache_bytes -= cached_size((*slot)->n);
		free(*slot);
		*slot = NULL;
	}
	if (size > CACHE_BYTES - cache_bytes || (c = malloc(size)) == NULL)
		return;
	snprintf(c->id, sizeof(c->id), "%s", w->id);
	c->version = w->version;
	c->n = w->n;
	if (w->n > 0)
		memcpy(c->rules, w->rules, w->n * sizeof(*w->rules));
	*slot = c;
	cache_bytes += size;
}

static int
op_of(const char *name)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(op_names[i], name) == 0)
			return i;
	return ALARMEVAL_ABOVE;
}

/* Rule k of the rows of load_sql. */
static void
read_rule(const PGresult *res, int k, struct alarmeval_rule *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->rule_id, sizeof(r->rule_id), "%s", PQgetvalue(res, k, 1));
	snprintf(r->stream_id, sizeof(r->stream_id), "%s",
		 PQgetvalue(res, k, 2));
	snprintf(r->device_id, sizeof(r->device_id), "%s",
		 PQgetvalue(res, k, 3));
	snprintf(r->stream_name, sizeof(r->stream_name), "%s",
		 PQgetvalue(res, k, 4));
	r->op = op_of(PQgetvalue(res, k, 5));
	r->lo = strtod(PQgetvalue(res, k, 6), NULL);
	r->hi = strtod(PQgetvalue(res, k, 7), NULL);
	r->for_samples = strtoull(PQgetvalue(res, k, 8), NULL, 10);
	r->for_us = strtoull(PQgetvalue(res, k, 9), NULL, 10) * 1000000;
}

/* The rules of the sessions of e not loaded, from the rows of load_sql
 * (grouped by session), cached; false when memory runs out. */
static bool
read_rules(struct alarmeval *e, const PGresult *res)
{
	int n = PQntuples(res), k = 0;
	struct alarmeval_rule *all = NULL;
	bool good = true;

	if (n > 0 && (all = calloc((size_t)n, sizeof(*all))) == NULL)
		return false;
	for (int i = 0; i < n; i++)
		read_rule(res, i, &all[i]);
	for (size_t i = 0; i < e->ns && good; i++) {
		struct alarmeval_session *w = &e->s[i];
		int from = k;

		if (w->loaded)
			continue;
		/* The rows are grouped by session: find this one's. */
		for (k = 0; k < n && strcmp(PQgetvalue(res, k, 0), w->id) != 0;
		     k++)
			;
		for (from = k;
		     k < n && strcmp(PQgetvalue(res, k, 0), w->id) == 0; k++)
			;
		good = take_rules(w, all + from, (size_t)(k - from));
		if (good)
			cache_put(w);
	}
	free(all);
	return good;
}

/* The rule of session w on stream_id, its first in *first, the end of
 * its run of them in *end (empty: none). */
static void
stream_rules(const struct alarmeval_session *w, const char *stream_id,
	     size_t *first, size_t *end)
{
	size_t lo = 0, hi = w->n;

	/* The rules are sorted by stream id (PostgreSQL's uuid order is
	 * the text's, lower-case): the first not below stream_id. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(w->rules[mid].stream_id, stream_id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	while (hi < w->n && strcmp(w->rules[hi].stream_id, stream_id) == 0)
		hi++;
	*end = hi < lo ? lo : hi;
}

/* Sets the runs going on from the rows of runs_sql. */
static void
read_runs(struct alarmeval *e, const PGresult *res)
{
	for (int k = 0; k < PQntuples(res); k++) {
		const char *sid = PQgetvalue(res, k, 0);
		const char *stream = PQgetvalue(res, k, 1);
		const char *rule = PQgetvalue(res, k, 2);
		size_t first, end;

		for (size_t i = 0; i < e->ns; i++) {
			struct alarmeval_session *w = &e->s[i];

			if (strcmp(w->id, sid) != 0)
				continue;
			stream_rules(w, stream, &first, &end);
			for (size_t j = first; j < end; j++) {
				if (strcmp(w->rules[j].rule_id, rule) != 0)
					continue;
				w->rules[j].run = strtoull(
					PQgetvalue(res, k, 3), NULL, 10);
				w->rules[j].run_from = strtoull(
					PQgetvalue(res, k, 4), NULL, 10);
			}
		}
	}
}

/* The array literal of the ids of the sessions of e not loaded yet, or
 * (loaded) of those with rules and runs going on, into the empty a;
 * false when there is none. */
static bool
ids(const struct alarmeval *e, bool loaded, struct buf *a)
{
	for (size_t i = 0; i < e->ns; i++) {
		if (e->s[i].loaded != loaded ||
		    (loaded && (e->s[i].n == 0 || !e->s[i].runs)))
			continue;
		buf_putc(a, a->len == 0 ? '{' : ',');
		buf_puts(a, e->s[i].id);
	}
	if (a->len == 0)
		return false;
	buf_putc(a, '}');
	buf_putc(a, '\0');
	return true;
}

enum db_status
alarmeval_load(struct db *db, struct alarmeval *e)
{
	struct buf a;
	const char *p;
	PGresult *res = NULL;
	enum db_status st = DB_ERROR;

	buf_init(&a, 0);
	for (size_t i = 0; i < e->ns; i++) {
		struct alarmeval_session *w = &e->s[i];
		const struct cached *c = *cache_slot(w->id);

		if (c != NULL && strcmp(c->id, w->id) == 0 &&
		    c->version == w->version && !take_rules(w, c->rules, c->n))
			goto out;
	}
	if (ids(e, false, &a)) {
		p = (const char *)a.p;
		if (a.failed ||
		    (st = db_query(db, &res, load_sql, 1, &p)) != DB_OK)
			goto out;
		if (!read_rules(e, res)) {
			st = DB_ERROR;
			goto out;
		}
		PQclear(res);
		res = NULL;
	}
	a.len = 0;
	st = DB_OK;
	if (!ids(e, true, &a))
		goto out;
	p = (const char *)a.p;
	if (a.failed || (st = db_query(db, &res, runs_sql, 1, &p)) != DB_OK)
		goto out;
	read_runs(e, res);
out:
	PQclear(res);
	buf_free(&a);
	return a.failed ? DB_ERROR : st;
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

/* Whether a sample from lo to hi (the block's least and greatest) may
 * violate r. */
static bool
may_violate(const struct alarmeval_rule *r, double lo, double hi)
{
	switch (r->op) {
	case ALARMEVAL_ABOVE:
		return hi > r->hi;
	case ALARMEVAL_BELOW:
		return lo < r->lo;
	default:
		return lo < r->lo || hi > r->hi;
	}
}

/* The least and greatest value of block s, NaN left out (both NaN when
 * every value is); false when its values are not numbers. */
static bool
bounds(const struct xmbp_stream *s, double *lo, double *hi)
{
	struct xmbp_sample_iter it;
	struct sample_value v;
	uint64_t ts;
	double d;

	*lo = *hi = NAN;
	xmbp_samples(s, &it);
	while (xmbp_sample_next(&it, &ts, &v)) {
		if (!as_double(&v, &d))
			return false;
		if (!(d >= *lo))
			*lo = isnan(*lo) || d < *lo ? d : *lo;
		if (!(d <= *hi))
			*hi = isnan(*hi) || d > *hi ? d : *hi;
	}
	return true;
}

/* Every sample of block s through rule r. */
static void
walk(struct alarmeval_rule *r, const struct xmbp_stream *s)
{
	struct xmbp_sample_iter it;
	struct sample_value v;
	uint64_t ts;
	double d;

	xmbp_samples(s, &it);
	while (xmbp_sample_next(&it, &ts, &v) && as_double(&v, &d))
		step(r, ts, d);
}

void
alarmeval_block(struct alarmeval *e, size_t slot, const char *stream_id,
		const struct xmbp_stream *s)
{
	struct alarmeval_session *w = &e->s[slot];
	size_t first, end;
	double lo, hi;

	stream_rules(w, stream_id, &first, &end);
	/* One pass for the block's bounds: a rule they do not cross (the
	 * usual case) only loses its run, without a walk of its own. */
	if (first == end || s->sample_count == 0 || !bounds(s, &lo, &hi))
		return;
	for (size_t i = first; i < end; i++) {
		struct alarmeval_rule *r = &w->rules[i];

		e->checks += s->sample_count;
		if (may_violate(r, lo, hi)) {
			walk(r, s);
		} else if (r->run != 0) {
			r->run = 0;
			r->moved = true;
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

/* Adds rule r's run, when it moved, and its alarm, when it held, to the
 * arrays a of write_sql; *any when it wrote anything. */
static void
add_rule(const struct alarmeval_rule *r, struct buf *a, bool *any)
{
	char msg[160];

	if (r->moved) {
		elem(&a[0]);
		buf_puts(&a[0], r->rule_id);
		elem(&a[1]);
		buf_puts(&a[1], r->stream_id);
		elem(&a[2]);
		buf_printf(&a[2], "%" PRIu64, r->run);
		elem(&a[3]);
		buf_printf(&a[3], "%" PRIu64, r->run_from);
		*any = true;
	}
	if (!r->holds)
		return;
	elem(&a[4]);
	buf_puts(&a[4], r->rule_id);
	elem(&a[5]);
	buf_puts(&a[5], r->device_id);
	elem(&a[6]);
	buf_printf(&a[6], "%.17g", r->value);
	snprintf(msg, sizeof(msg), "%s %s the limit: %.17g", r->stream_name,
		 op_names[r->op], r->value);
	elem_text(&a[7], msg);
}

enum db_status
alarmeval_write(struct db *db, struct alarmeval *e, unsigned long *raised)
{
	/* Runs: rule, stream, samples, from; holds: rule, device, value,
	 * message; sessions: id, runs going on. */
	struct buf a[10];
	const char *params[10];
	PGresult *res = NULL;
	enum db_status st = DB_ERROR;
	bool any = false, ok = true;

	*raised = 0;
	for (int k = 0; k < 10; k++)
		buf_init(&a[k], 0);
	for (size_t i = 0; i < e->ns; i++) {
		bool runs = false;

		for (size_t j = 0; j < e->s[i].n; j++) {
			add_rule(&e->s[i].rules[j], a, &any);
			runs |= e->s[i].rules[j].run > 0;
		}
		if (runs == e->s[i].runs || e->s[i].n == 0)
			continue;
		elem(&a[8]);
		buf_puts(&a[8], e->s[i].id);
		elem(&a[9]);
		buf_puts(&a[9], runs ? "t" : "f");
		any = true;
	}
	for (int k = 0; k < 10; k++) {
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
	if ((st = db_query(db, &res, write_sql, 10, params)) == DB_OK)
		*raised = strtoul(PQgetvalue(res, 0, 0), NULL, 10);
out:
	PQclear(res);
	for (int k = 0; k < 10; k++)
		buf_free(&a[k]);
	return st;
}
