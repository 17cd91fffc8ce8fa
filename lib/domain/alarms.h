/* SPDX-License-Identifier: MIT */
/*
 * alarms.h - a facility's alarm rules, webhook endpoints and alarms
 * (doc/alarms.md), for the API (lib/api/alarmsapi) and the CLI.  The
 * rules are evaluated elsewhere: threshold rules at ingest
 * (lib/domain/alarmeval), the others by the alarm runner
 * (lib/domain/alarmrun).
 *
 * Values are text as PostgreSQL reads them (the callers validated their
 * form); NULL is absent.  facility_id NULL in a list or a change: every
 * facility (a super_admin, the CLI); else only that facility's rows, and
 * another facility's row is ALARMS_NOT_FOUND.
 */
#ifndef XMHUB_ALARMS_H
#define XMHUB_ALARMS_H

#include "codec/buf.h"
#include "codec/uuid.h"
#include "core/db.h"

enum alarms_status {
	ALARMS_OK,
	ALARMS_NOT_FOUND, /* no such row (in the facility) */
	ALARMS_STATE,	  /* the alarm is not in a state that allows it */
	ALARMS_INVALID,	  /* the database refused the values (a check) */
	ALARMS_CONFLICT,  /* the name is taken in the facility */
	ALARMS_FULL,	  /* the facility has as many as its cap allows */
	ALARMS_DB	  /* the database failed: st says how */
};

/* A rule to create: kind threshold, silence, session_error, job_failed
 * or storage, with the fields its kind needs (sql/021's checks). */
struct alarms_rule {
	const char *facility_id, *name, *kind, *severity, *device_id;
	const char *stream_name, *op, *lo, *hi, *for_samples, *for_seconds;
	const char *silence_minutes, *storage_percent;
};

/* The columns of a rule, an endpoint (its secret left out) and an alarm
 * as the lists and the creations return them, for dbjson. */
#define ALARMS_RULE_COLS                                                       \
	"id, facility_id, name, kind, severity, device_id, stream_name, op, "  \
	"lo, hi, for_samples, for_seconds, silence_minutes, storage_percent, " \
	"enabled, created_at"
#define ALARMS_ENDPOINT_COLS "id, facility_id, name, url, enabled, created_at"
#define ALARMS_ALARM_COLS                                                      \
	"id, facility_id, rule_id, device_id, state, severity, message, "      \
	"value, first_seen_at, last_seen_at, acknowledged_at, cleared_at"

/*
 * Creates rule r unless its facility has max rules already (ALARMS_FULL;
 * XMHUB_ALARM_RULES_MAX): ALARMS_OK with *res its row (ALARMS_RULE_COLS;
 * the caller PQclear()s *res in every case), or why not (*st the
 * database's status).
 */
enum alarms_status alarms_rule_create(struct db *db,
				      const struct alarms_rule *r,
				      long long max, PGresult **res,
				      enum db_status *st);

/* The members of a change of a rule (alarms_rule_change.set): the bits
 * rule_update_sql of lib/domain/alarms.c tests. */
enum alarms_rule_set {
	ALARMS_SET_NAME = 1 << 0,
	ALARMS_SET_SEVERITY = 1 << 1,
	ALARMS_SET_DEVICE = 1 << 2,
	ALARMS_SET_STREAM = 1 << 3,
	ALARMS_SET_OP = 1 << 4,
	ALARMS_SET_LO = 1 << 5,
	ALARMS_SET_HI = 1 << 6,
	ALARMS_SET_FOR_SAMPLES = 1 << 7,
	ALARMS_SET_FOR_SECONDS = 1 << 8,
	ALARMS_SET_SILENCE = 1 << 9,
	ALARMS_SET_STORAGE = 1 << 10,
	ALARMS_SET_ENABLED = 1 << 11
};

/* A change of a rule: the members of r whose bit is in set take their
 * value (NULL: the column's NULL), enabled "true" or "false".  r.kind
 * and r.facility_id, when not NULL, must be the rule's: neither
 * changes. */
struct alarms_rule_change {
	struct alarms_rule r;
	const char *enabled;
	unsigned set;
};

/*
 * Changes a rule (of facility_id when not NULL): ALARMS_OK with *res its
 * row (ALARMS_RULE_COLS; the caller PQclear()s *res in every case),
 * ALARMS_STATE when c asks for another kind or facility, or why not as
 * alarms_rule_create().  A change of what a threshold watches, or a
 * pause or resumption, starts its runs of violating samples over; the
 * facility's rule set version moves (sql/021), so ingest reloads them.
 */
enum alarms_status alarms_rule_update(struct db *db, const char *facility_id,
				      const char *id,
				      const struct alarms_rule_change *c,
				      PGresult **res, enum db_status *st);

/* Deletes a rule, its alarms with it. */
enum alarms_status alarms_rule_delete(struct db *db, const char *facility_id,
				      const char *id, enum db_status *st);

/* Creates a webhook endpoint unless its facility has max already
 * (ALARMS_FULL; XMHUB_ALARM_ENDPOINTS_MAX): url (http or https), secret
 * (at least 16 bytes, shown never again); *res its row
 * (ALARMS_ENDPOINT_COLS), as alarms_rule_create(). */
enum alarms_status alarms_endpoint_create(struct db *db,
					  const char *facility_id,
					  const char *name, const char *url,
					  const char *secret, long long max,
					  PGresult **res, enum db_status *st);

/* A change of an endpoint: each member not NULL replaces the column
 * (enabled "true" or "false"); facility_id, when not NULL, must be the
 * endpoint's. */
struct alarms_endpoint_change {
	const char *facility_id, *name, *url, *secret, *enabled;
};

/* Changes an endpoint (of facility_id when not NULL): *res its row
 * (ALARMS_ENDPOINT_COLS), as alarms_rule_update().  A disabled endpoint
 * gets no deliveries of new events, and the runner posts none of those
 * it has pending until it is enabled again (lib/domain/alarmrun.c). */
enum alarms_status
alarms_endpoint_update(struct db *db, const char *facility_id, const char *id,
		       const struct alarms_endpoint_change *c, PGresult **res,
		       enum db_status *st);

/* Deletes an endpoint, its deliveries with it. */
enum alarms_status alarms_endpoint_delete(struct db *db,
					  const char *facility_id,
					  const char *id, enum db_status *st);

/* What a list is of. */
enum alarms_list {
	ALARMS_LIST_RULES,     /* ALARMS_RULE_COLS, by name */
	ALARMS_LIST_ENDPOINTS, /* ALARMS_ENDPOINT_COLS, by name */
	ALARMS_LIST_ALARMS,    /* ALARMS_ALARM_COLS, newest first */
	/* id, event_id, endpoint_id, alarm_id, state, attempts, next_at,
	 * last_status, last_error, delivered_at, created_at; newest first */
	ALARMS_LIST_DELIVERIES
};

/* The facility_id of rule, endpoint or alarm id: one row, or none when
 * there is no such object (for the caller's facility check). */
enum db_status alarms_rule_facility(struct db *db, const char *id,
				    PGresult **rows);
enum db_status alarms_endpoint_facility(struct db *db, const char *id,
					PGresult **rows);
enum db_status alarms_alarm_facility(struct db *db, const char *id,
				     PGresult **rows);

/* The rows of a list (at most 1000) into *res; DB_OK or the failure. */
enum db_status alarms_list(struct db *db, enum alarms_list what,
			   const char *facility_id, PGresult **res);

/*
 * Moves an alarm to state "acknowledged" (from active) or "cleared"
 * (from active or acknowledged), by user_id (NULL: the CLI), with its
 * history row; *res its row (ALARMS_ALARM_COLS).  ALARMS_STATE when it
 * is not in a state to move from.
 */
enum alarms_status alarms_move(struct db *db, const char *facility_id,
			       const char *id, const char *state,
			       const char *user_id, PGresult **res,
			       enum db_status *st);

/*
 * Appends the alarms' gauges in the Prometheus text format to out
 * (doc/metrics.md), counted in PostgreSQL (one read-only query):
 * xmhub_alarms{state}, xmhub_alarm_deliveries{state} and
 * xmhub_alarm_delivery_failures (the failed attempts of the deliveries
 * kept).  DB_OK, or the query's failure with out unchanged.
 */
enum db_status alarms_metrics(struct db *db, struct buf *out);

#endif
