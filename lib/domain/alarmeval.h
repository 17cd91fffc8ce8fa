/* SPDX-License-Identifier: MIT */
/*
 * alarmeval.h - the threshold rules of an ingest round, evaluated in the
 * round's transaction (doc/alarms.md "Evaluation at ingest").
 *
 * ingest_commit() (lib/domain/ingest.c) reads, with each session's row
 * lock, the version of its facility's enabled threshold rules
 * (alarm_rule_sets, sql/021; none: the session is not watched, and costs
 * nothing more).  A round with watched sessions names them
 * (alarmeval_watch), loads their rules (alarmeval_load: from this
 * process's cache of each session's rules at that version, else from the
 * database, and the runs of violating samples going on, carried from
 * earlier rounds in alarm_rule_state), hands every stored block of those
 * sessions to alarmeval_block(), and before its commit writes the runs
 * that moved (and the sessions' alarm_runs that changed) and raises the alarms
 * whose rule held long enough (alarmeval_write, through sql/021's
 * alarm_raise(): the alarm, its event and its deliveries).  A round rolled back
 * raises nothing.
 *
 * A rule holds on a stream when at least for_samples consecutive samples
 * violate it (above: value > hi; below: value < lo; outside: either) and
 * the run spans at least for_seconds (sample timestamps).  Samples are
 * taken in the order the batches and blocks carry them.  Numeric and bool
 * (0, 1) streams only; NaN violates nothing.
 *
 * The cache is the process's: only the one thread that commits ingest
 * rounds in a process may use this module (as lib/domain/ingest.c's
 * session cache).
 */
#ifndef XMHUB_ALARMEVAL_H
#define XMHUB_ALARMEVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/uuid.h"
#include "codec/xmbp.h"
#include "core/db.h"

/* A rule on one stream of the round. */
struct alarmeval_rule {
	char rule_id[UUID_LEN + 1], stream_id[UUID_LEN + 1];
	char device_id[UUID_LEN + 1];
	char stream_name[64]; /* for the alarm's message, cut */
	int op;		      /* ALARMEVAL_ABOVE, ... */
	double lo, hi;
	uint64_t for_samples, for_us;
	uint64_t run;	   /* consecutive violating samples */
	uint64_t run_from; /* the run's first timestamp, when run > 0 */
	bool moved;	   /* run changed this round: written */
	bool holds;	   /* held this round: an alarm is raised */
	double value;	   /* the last sample of a run that held */
};

enum { ALARMEVAL_ABOVE, ALARMEVAL_BELOW, ALARMEVAL_OUTSIDE };

/* A watched session of the round and its rules, sorted by stream id. */
struct alarmeval_session {
	char id[UUID_LEN + 1];
	long long version;
	bool runs; /* runs going on when the round began */
	struct alarmeval_rule *rules;
	size_t n;
	bool loaded;
};

struct alarmeval {
	struct alarmeval_session *s;
	size_t ns;
	uint64_t checks; /* samples looked at, times rules: the metric */
};

/* An empty evaluation (no session: every call below does nothing). */
void alarmeval_init(struct alarmeval *e);

/* Frees what the calls below allocated; e is empty again. */
void alarmeval_free(struct alarmeval *e);

/*
 * Adds session id, whose facility's threshold rules are at version, to
 * the round, at most max sessions (the round's); runs: the session has
 * runs going on (ingest_sessions.alarm_runs: only then are they read);
 * its place in *slot for alarmeval_block().  False when memory runs out.
 */
bool alarmeval_watch(struct alarmeval *e, size_t max, const char *id,
		     long long version, bool runs, size_t *slot);

/*
 * Loads the rules on the streams of the watched sessions, each with its
 * run going on.  DB_OK, or the failure (then write nothing).
 */
enum db_status alarmeval_load(struct db *db, struct alarmeval *e);

/* Evaluates the samples of block s, of the stream stream_id of the
 * watched session at slot, against its rules. */
void alarmeval_block(struct alarmeval *e, size_t slot, const char *stream_id,
		     const struct xmbp_stream *s);

/*
 * Writes the runs that moved and raises the alarm of each rule that held
 * (alarm_raise: one alarm per rule and device while it is open), in the
 * caller's transaction; *raised: the alarms that are new.  DB_OK or the
 * failure.
 */
enum db_status alarmeval_write(struct db *db, struct alarmeval *e,
			       unsigned long *raised);

#endif
