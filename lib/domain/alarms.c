/* SPDX-License-Identifier: MIT */
/*
 * alarms.c - alarm rules, webhook endpoints and alarms of a facility.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/alarms.h"

/* No row when the facility has $14 rules already.  Two creations at once
 * may both pass the count: the facility ends at most one rule over per
 * concurrent request, which bounds what the rules cost (an ingest round
 * loads every rule that watches its streams: lib/domain/alarmeval.c). */
static const char rule_sql[] =
	"INSERT INTO alarm_rules (facility_id, name, kind, severity, "
	"device_id, stream_name, op, lo, hi, for_samples, for_seconds, "
	"silence_minutes, storage_percent) "
	"SELECT $1::uuid, $2, $3, coalesce($4, 'warning'), $5::uuid, $6, $7, "
	"$8::float8, $9::float8, coalesce($10::integer, 1), "
	"coalesce($11::integer, 0), $12::integer, $13::integer "
	"WHERE (SELECT count(*) FROM alarm_rules "
	"WHERE facility_id = $1::uuid) < $14::bigint "
	"RETURNING " ALARMS_RULE_COLS;

/* As rule_sql: every event makes a delivery per endpoint, which one
 * runner posts one after another for every facility. */
static const char endpoint_sql[] =
	"INSERT INTO webhook_endpoints (facility_id, name, url, secret) "
	"SELECT $1::uuid, $2, $3, $4 "
	"WHERE (SELECT count(*) FROM webhook_endpoints "
	"WHERE facility_id = $1::uuid) < $5::bigint "
	"RETURNING " ALARMS_ENDPOINT_COLS;

/*
 * The change of a rule: each column takes its new value when the change
 * sets its bit ($15, enum alarms_rule_set), else keeps its own; kind ($16)
 * and facility ($17), when given, must be the rule's.  A change of what a
 * threshold watches, or of enabled (bits 4 to 2048 but 512 and 1024),
 * starts its runs over.
 */
static const char rule_update_sql[] =
	"WITH u AS (UPDATE alarm_rules SET "
	"name = CASE WHEN $15::integer & 1 <> 0 THEN $3 ELSE name END, "
	"severity = CASE WHEN $15::integer & 2 <> 0 THEN $4 ELSE severity END, "
	"device_id = CASE WHEN $15::integer & 4 <> 0 THEN $5::uuid ELSE "
	"device_id END, "
	"stream_name = CASE WHEN $15::integer & 8 <> 0 THEN $6 ELSE "
	"stream_name END, "
	"op = CASE WHEN $15::integer & 16 <> 0 THEN $7 ELSE op END, "
	"lo = CASE WHEN $15::integer & 32 <> 0 THEN $8::float8 ELSE lo END, "
	"hi = CASE WHEN $15::integer & 64 <> 0 THEN $9::float8 ELSE hi END, "
	"for_samples = CASE WHEN $15::integer & 128 <> 0 THEN $10::integer "
	"ELSE for_samples END, "
	"for_seconds = CASE WHEN $15::integer & 256 <> 0 THEN $11::integer "
	"ELSE for_seconds END, "
	"silence_minutes = CASE WHEN $15::integer & 512 <> 0 THEN $12::integer "
	"ELSE silence_minutes END, "
	"storage_percent = CASE WHEN $15::integer & 1024 <> 0 THEN "
	"$13::integer ELSE storage_percent END, "
	"enabled = CASE WHEN $15::integer & 2048 <> 0 THEN $14::boolean ELSE "
	"enabled END "
	"WHERE id = $1::uuid AND ($2::uuid IS NULL OR facility_id = $2::uuid) "
	"AND ($16::text IS NULL OR kind = $16::text) "
	"AND ($17::uuid IS NULL OR facility_id = $17::uuid) "
	"RETURNING " ALARMS_RULE_COLS "), "
	"z AS (DELETE FROM alarm_rule_state WHERE rule_id IN (SELECT id FROM "
	"u) "
	"AND $15::integer & 2556 <> 0) "
	"SELECT * FROM u";

static const char endpoint_update_sql[] =
	"UPDATE webhook_endpoints SET name = coalesce($3, name), "
	"url = coalesce($4, url), secret = coalesce($5, secret), "
	"enabled = coalesce($6::boolean, enabled) "
	"WHERE id = $1::uuid AND ($2::uuid IS NULL OR facility_id = $2::uuid) "
	"AND ($7::uuid IS NULL OR facility_id = $7::uuid) "
	"RETURNING " ALARMS_ENDPOINT_COLS;

static const char *const delete_sql[] = {
	"DELETE FROM alarm_rules WHERE id = $1::uuid "
	"AND ($2::uuid IS NULL OR facility_id = $2::uuid)",
	"DELETE FROM webhook_endpoints WHERE id = $1::uuid "
	"AND ($2::uuid IS NULL OR facility_id = $2::uuid)",
};

static const char *const list_sql[] = {
	[ALARMS_LIST_RULES] =
		"SELECT " ALARMS_RULE_COLS " FROM alarm_rules "
		"WHERE $1::uuid IS NULL OR facility_id = $1::uuid "
		"ORDER BY name, id LIMIT 1000",
	[ALARMS_LIST_ENDPOINTS] =
		"SELECT " ALARMS_ENDPOINT_COLS " FROM webhook_endpoints "
		"WHERE $1::uuid IS NULL OR facility_id = $1::uuid "
		"ORDER BY name, id LIMIT 1000",
	[ALARMS_LIST_ALARMS] =
		"SELECT " ALARMS_ALARM_COLS " FROM alarms "
		"WHERE $1::uuid IS NULL OR facility_id = $1::uuid "
		"ORDER BY first_seen_at DESC, id LIMIT 1000",
	[ALARMS_LIST_DELIVERIES] =
		"SELECT d.id, d.event_id, d.endpoint_id, e.alarm_id, d.state, "
		"d.attempts, d.next_at, d.last_status, d.last_error, "
		"d.delivered_at, d.created_at FROM alarm_deliveries d "
		"JOIN alarm_events e ON e.id = d.event_id "
		"WHERE $1::uuid IS NULL OR e.facility_id = $1::uuid "
		"ORDER BY d.created_at DESC, d.id LIMIT 1000",
};

/* The move and its history row; no row when the alarm is not there or
 * not in a state to move from. */
static const char move_sql[] =
	"WITH a AS (UPDATE alarms SET state = $3, "
	"acknowledged_at = CASE WHEN $3 = 'acknowledged' THEN now() "
	"ELSE acknowledged_at END, "
	"acknowledged_by = CASE WHEN $3 = 'acknowledged' THEN $4::uuid "
	"ELSE acknowledged_by END, "
	"cleared_at = CASE WHEN $3 = 'cleared' THEN now() END, "
	"cleared_by = CASE WHEN $3 = 'cleared' THEN $4::uuid END "
	"WHERE id = $1::uuid AND ($2::uuid IS NULL OR facility_id = $2::uuid) "
	"AND (state = 'active' OR ($3 = 'cleared' AND state = "
	"'acknowledged')) RETURNING " ALARMS_ALARM_COLS "), "
	"h AS (INSERT INTO alarm_history (alarm_id, state, user_id) "
	"SELECT id, state, $4::uuid FROM a) "
	"SELECT * FROM a";

/* Whether row $1 of a table (of facility $2) is there. */
enum { EXISTS_RULE, EXISTS_ENDPOINT, EXISTS_ALARM };
static const char *const exists_sql[] = {
	[EXISTS_RULE] = "SELECT 1 FROM alarm_rules WHERE id = $1::uuid "
			"AND ($2::uuid IS NULL OR facility_id = $2::uuid)",
	[EXISTS_ENDPOINT] =
		"SELECT 1 FROM webhook_endpoints WHERE id = $1::uuid "
		"AND ($2::uuid IS NULL OR facility_id = $2::uuid)",
	[EXISTS_ALARM] = "SELECT 1 FROM alarms WHERE id = $1::uuid "
			 "AND ($2::uuid IS NULL OR facility_id = $2::uuid)",
};

/* The alarms_status of a failed statement. */
static enum alarms_status
failed(enum db_status st)
{
	switch (st) {
	case DB_CONFLICT:
		return ALARMS_CONFLICT;
	case DB_INVALID:
	case DB_FOREIGN_KEY:
		return ALARMS_INVALID;
	default:
		return ALARMS_DB;
	}
}

/* The outcome of an INSERT that makes no row at its facility's cap. */
static enum alarms_status
created(enum db_status st, const PGresult *res)
{
	if (st != DB_OK)
		return failed(st);
	return PQntuples(res) == 1 ? ALARMS_OK : ALARMS_FULL;
}

/*
 * The outcome of a change of row params[0] (of facility params[1]) of
 * table k of exists_sql that changed no row: ALARMS_STATE when it is
 * there (the change asked for what cannot be), else ALARMS_NOT_FOUND.
 */
static enum alarms_status
unchanged(struct db *db, int k, const char *const *params, enum db_status *st)
{
	PGresult *ex = NULL;
	enum alarms_status s;

	if ((*st = db_query_ro(db, &ex, exists_sql[k], 2, params)) != DB_OK)
		s = failed(*st);
	else
		s = PQntuples(ex) > 0 ? ALARMS_STATE : ALARMS_NOT_FOUND;
	PQclear(ex);
	return s;
}

enum alarms_status
alarms_rule_create(struct db *db, const struct alarms_rule *r, long long max,
		   PGresult **res, enum db_status *st)
{
	char cap[24];
	const char *params[14] = {
		r->facility_id,
		r->name,
		r->kind,
		r->severity,
		r->device_id,
		r->stream_name,
		r->op,
		r->lo,
		r->hi,
		r->for_samples,
		r->for_seconds,
		r->silence_minutes,
		r->storage_percent,
		cap,
	};

	snprintf(cap, sizeof(cap), "%lld", max);
	*st = db_query(db, res, rule_sql, 14, params);
	return created(*st, *res);
}

enum alarms_status
alarms_endpoint_create(struct db *db, const char *facility_id, const char *name,
		       const char *url, const char *secret, long long max,
		       PGresult **res, enum db_status *st)
{
	char cap[24];
	const char *params[5] = {facility_id, name, url, secret, cap};

	snprintf(cap, sizeof(cap), "%lld", max);
	*st = db_query(db, res, endpoint_sql, 5, params);
	return created(*st, *res);
}

enum alarms_status
alarms_rule_update(struct db *db, const char *facility_id, const char *id,
		   const struct alarms_rule_change *c, PGresult **res,
		   enum db_status *st)
{
	char set[16];
	const char *params[17] = {
		id,
		facility_id,
		c->r.name,
		c->r.severity,
		c->r.device_id,
		c->r.stream_name,
		c->r.op,
		c->r.lo,
		c->r.hi,
		c->r.for_samples,
		c->r.for_seconds,
		c->r.silence_minutes,
		c->r.storage_percent,
		c->enabled,
		set,
		c->r.kind,
		c->r.facility_id,
	};

	snprintf(set, sizeof(set), "%u", c->set);
	if ((*st = db_query(db, res, rule_update_sql, 17, params)) != DB_OK)
		return failed(*st);
	if (PQntuples(*res) > 0)
		return ALARMS_OK;
	return unchanged(db, EXISTS_RULE, params, st);
}

enum alarms_status
alarms_endpoint_update(struct db *db, const char *facility_id, const char *id,
		       const struct alarms_endpoint_change *c, PGresult **res,
		       enum db_status *st)
{
	const char *params[7] = {id,	    facility_id, c->name,	c->url,
				 c->secret, c->enabled,	 c->facility_id};

	if ((*st = db_query(db, res, endpoint_update_sql, 7, params)) != DB_OK)
		return failed(*st);
	if (PQntuples(*res) > 0)
		return ALARMS_OK;
	return unchanged(db, EXISTS_ENDPOINT, params, st);
}

/* Deletes row id of table k of delete_sql. */
static enum alarms_status
delete_row(struct db *db, int k, const char *facility_id, const char *id,
	   enum db_status *st)
{
	const char *params[2] = {id, facility_id};
	PGresult *res = NULL;
	enum alarms_status s;

	if ((*st = db_query(db, &res, delete_sql[k], 2, params)) != DB_OK)
		return failed(*st);
	s = strcmp(PQcmdTuples(res), "0") == 0 ? ALARMS_NOT_FOUND : ALARMS_OK;
	PQclear(res);
	return s;
}

enum alarms_status
alarms_rule_delete(struct db *db, const char *facility_id, const char *id,
		   enum db_status *st)
{
	return delete_row(db, 0, facility_id, id, st);
}

enum alarms_status
alarms_endpoint_delete(struct db *db, const char *facility_id, const char *id,
		       enum db_status *st)
{
	return delete_row(db, 1, facility_id, id, st);
}

static const char rule_facility_sql[] =
	"SELECT facility_id FROM alarm_rules WHERE id = $1::uuid";
static const char endpoint_facility_sql[] =
	"SELECT facility_id FROM webhook_endpoints WHERE id = $1::uuid";
static const char alarm_facility_sql[] =
	"SELECT facility_id FROM alarms WHERE id = $1::uuid";

enum db_status
alarms_rule_facility(struct db *db, const char *id, PGresult **rows)
{
	return db_query_ro(db, rows, rule_facility_sql, 1, &id);
}

enum db_status
alarms_endpoint_facility(struct db *db, const char *id, PGresult **rows)
{
	return db_query_ro(db, rows, endpoint_facility_sql, 1, &id);
}

enum db_status
alarms_alarm_facility(struct db *db, const char *id, PGresult **rows)
{
	return db_query_ro(db, rows, alarm_facility_sql, 1, &id);
}

enum db_status
alarms_list(struct db *db, enum alarms_list what, const char *facility_id,
	    PGresult **res)
{
	return db_query_ro(db, res, list_sql[what], 1, &facility_id);
}

enum alarms_status
alarms_move(struct db *db, const char *facility_id, const char *id,
	    const char *state, const char *user_id, PGresult **res,
	    enum db_status *st)
{
	const char *params[4] = {id, facility_id, state, user_id};

	if ((*st = db_query(db, res, move_sql, 4, params)) != DB_OK)
		return failed(*st);
	if (PQntuples(*res) > 0)
		return ALARMS_OK;
	return unchanged(db, EXISTS_ALARM, params, st);
}

/* Rows (metric, state, value), every state listed, 0 included. */
static const char metrics_sql[] =
	"SELECT 'xmhub_alarms', s, (SELECT count(*) FROM alarms a "
	"WHERE a.state = s) FROM unnest(ARRAY['active', 'acknowledged', "
	"'cleared']) s "
	"UNION ALL SELECT 'xmhub_alarm_deliveries', s, (SELECT count(*) "
	"FROM alarm_deliveries d WHERE d.state = s) "
	"FROM unnest(ARRAY['pending', 'delivered', 'dead']) s "
	"UNION ALL SELECT 'xmhub_alarm_delivery_failures', NULL, "
	"(SELECT coalesce(sum(attempts - (state = 'delivered')::integer), 0) "
	"FROM alarm_deliveries)";

static const struct {
	const char *name, *help;
} metric_help[] = {
	{"xmhub_alarms", "Alarms by state, counted in PostgreSQL at the "
			 "scrape."},
	{"xmhub_alarm_deliveries", "Webhook deliveries of alarm events by "
				   "state, counted in PostgreSQL at the "
				   "scrape."},
	{"xmhub_alarm_delivery_failures",
	 "Failed webhook attempts of the deliveries kept, from PostgreSQL at "
	 "the scrape."},
};

enum db_status
alarms_metrics(struct db *db, struct buf *out)
{
	PGresult *res = NULL;
	enum db_status st;
	const char *last = "";

	if ((st = db_query_ro(db, &res, metrics_sql, 0, NULL)) != DB_OK)
		return st;
	for (int i = 0; i < PQntuples(res); i++) {
		const char *name = PQgetvalue(res, i, 0);

		if (strcmp(name, last) != 0)
			for (size_t k = 0; k < 3; k++)
				if (strcmp(metric_help[k].name, name) == 0)
					buf_printf(out,
						   "# HELP %s %s\n"
						   "# TYPE %s gauge\n",
						   name, metric_help[k].help,
						   name);
		last = name;
		if (PQgetisnull(res, i, 1))
			buf_printf(out, "%s %s\n", name, PQgetvalue(res, i, 2));
		else
			buf_printf(out, "%s{state=\"%s\"} %s\n", name,
				   PQgetvalue(res, i, 1),
				   PQgetvalue(res, i, 2));
	}
	PQclear(res);
	return DB_OK;
}
