/* SPDX-License-Identifier: MIT */
/*
 * alarmeval.h - the threshold rules of an ingest round, evaluated in the
 * round's transaction (doc/alarms.md "Evaluation at ingest").
 *
 * ingest_commit() (lib/domain/ingest.c) asks, with each session's row
 * lock, whether its facility has enabled threshold rules; only a round
 * with such a session loads them (alarmeval_load: the rules on the
 * sessions' streams, with each rule's run of violating samples carried
 * from earlier rounds), hands every stored block of those sessions to
 * alarmeval_block(), and before its commit writes the runs that moved and
 * raises the alarms whose rule held long enough (alarmeval_write, through
 * sql/021's alarm_raise(): the alarm, its event and its deliveries).  A
 * round rolled back raises nothing; a round of facilities without rules
 * pays one index probe per session.
 *
 * A rule holds on a stream when at least for_samples consecutive samples
 * violate it (above: value > hi; below: value < lo; outside: either) and
 * the run spans at least for_seconds (sample timestamps).  Samples are
 * taken in the order the batches and blocks carry them.  Numeric and bool
 * (0, 1) streams only; NaN violates nothing.
 *
 * Used by one thread at a time (the round's).
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

struct alarmeval {
	struct alarmeval_rule *rules; /* sorted by stream_id */
	size_t n;
	uint64_t checks; /* samples looked at, times rules: the metric */
};

/* An empty evaluation (no rules: every call below does nothing). */
void alarmeval_init(struct alarmeval *e);

/* Frees what alarmeval_load() allocated; e is empty again. */
void alarmeval_free(struct alarmeval *e);

/*
 * Loads the enabled threshold rules on the streams of the sessions named
 * by session_ids (a PostgreSQL uuid[] literal) into the empty e, each with
 * its stored run.  DB_OK, or the query's failure (e stays empty).
 */
enum db_status alarmeval_load(struct db *db, struct alarmeval *e,
			      const char *session_ids);

/* Evaluates the samples of block s, of the stream stream_id, against its
 * rules in e. */
void alarmeval_block(struct alarmeval *e, const char *stream_id,
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
