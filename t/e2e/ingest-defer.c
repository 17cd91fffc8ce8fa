/* SPDX-License-Identifier: MIT */
/*
 * ingest-defer - lib/domain/ingest.c's rounds against a real PostgreSQL
 * while another transaction holds a session's row, each case forced
 * rather than left to the timing of concurrent writers (doc/ingest.md
 * "Group commit"): a held session's batch is INGEST_DEFERRED and the
 * others of its round are stored; a round that holds a batch deferred
 * once, a round of one session, and a round whose sessions are all held
 * wait for the lock instead; a round whose lock statement or write
 * statement fails refuses every batch and stores nothing, and the
 * connection goes on; at the end every
 * batch is stored once and the counters are exact.  Run by
 * t/e2e/ingest-defer.t, which starts the stack, makes two sessions with one f32
 * stream (index 0) and gives XMHUB_TEST_DATABASE_URL, XMHUB_TEST_FACILITY and
 * XMHUB_TEST_SESSIONS
 * ("A,B").
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/db.h"
#include "domain/ingest.h"
#include "tap.h"
#include "testutil.h"

#define SAMPLES 10 /* per batch */

static struct db *locker, *writer, *reader;
static const char *facility;
static char sa[64], sb[64];
static atomic_bool released;

static void
job(struct ingest_job *j, const char *sid, const uint8_t *b, size_t len)
{
	memset(j, 0, sizeof(*j));
	j->facility_id = facility;
	j->session_id = sid;
	j->batch = b;
	j->len = len;
}

/* Opens the locker's transaction holding the rows of the n sessions. */
static bool
hold(const char *const *ids, int n)
{
	PGresult *res = NULL;
	bool ok = db_begin(locker) == DB_OK;

	for (int i = 0; ok && i < n; i++) {
		ok = db_query(locker, &res,
			      "SELECT 1 FROM ingest_sessions WHERE id = $1 "
			      "FOR UPDATE",
			      1, &ids[i]) == DB_OK &&
		     PQntuples(res) == 1;
		PQclear(res);
		res = NULL;
	}
	atomic_store(&released, false);
	return ok;
}

/* Ends the locker's transaction 300 ms from now, in a thread, saying so
 * first: a commit that returns with released still false did not wait. */
static void *
release_later(void *arg)
{
	struct timespec ms300 = {.tv_nsec = 300000000};

	(void)arg;
	nanosleep(&ms300, NULL);
	atomic_store(&released, true);
	db_commit(locker);
	return NULL;
}

/* ingest_commit() of the n jobs while release_later() runs. */
static void
commit_waiting(struct ingest_job *const *jobs, size_t n)
{
	pthread_t t;

	if (pthread_create(&t, NULL, release_later, NULL) != 0) {
		fprintf(stderr, "pthread_create failed\n");
		exit(1);
	}
	ingest_commit(writer, jobs, n, false);
	pthread_join(t, NULL);
}

/* Samples stored for session sid, read by a third connection. */
static long long
stored(const char *sid)
{
	PGresult *res = NULL;
	long long n = -1;

	if (db_query(reader, &res,
		     "SELECT COALESCE(sum(c.sample_count), 0) "
		     "FROM stored_chunks c JOIN ingest_streams s "
		     "ON s.id = c.stream_id WHERE s.session_id = $1",
		     1, &sid) == DB_OK &&
	    PQntuples(res) == 1)
		n = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return n;
}

/* Runs sql, a statement without a result, on db. */
static bool
set(struct db *db, const char *sql)
{
	return db_exec(db, sql, 0, NULL) == DB_OK;
}

/* Job j was refused as a database failure is (503 or 500), with no
 * acknowledgement. */
static bool
refused(const struct ingest_job *j)
{
	return (j->status == INGEST_UNAVAILABLE || j->status == INGEST_ERROR) &&
	       j->ack.accepted_samples == 0;
}

int
main(void)
{
	const char *url = getenv("XMHUB_TEST_DATABASE_URL");
	const char *ids = getenv("XMHUB_TEST_SESSIONS");
	const char *both[2] = {sa, sb};
	uint8_t a[6][256], b[6][256];
	size_t alen[6], blen[6];
	struct ingest_job ja, jb;
	struct ingest_job *jobs[2];
	PGresult *res = NULL;

	facility = getenv("XMHUB_TEST_FACILITY");
	if (url == NULL || ids == NULL || facility == NULL ||
	    sscanf(ids, "%63[^,],%63s", sa, sb) != 2) {
		fprintf(stderr, "XMHUB_TEST_DATABASE_URL, XMHUB_TEST_FACILITY "
				"and XMHUB_TEST_SESSIONS (A,B) must be set\n");
		return 1;
	}
	if ((locker = db_new(url)) == NULL || (writer = db_new(url)) == NULL ||
	    (reader = db_new(url)) == NULL) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	db_writer_plans(writer);
	/* A round that waits where it should defer fails, not hangs. */
	if (db_query(writer, &res, "SET lock_timeout = '5s'", 0, NULL) !=
	    DB_OK) {
		fprintf(stderr, "SET lock_timeout failed\n");
		return 1;
	}
	PQclear(res);
	for (int i = 1; i < 6; i++) {
		alen[i] = test_f32_batch(a[i], sizeof(a[i]), (uint16_t)i,
					 SAMPLES, (uint64_t)i * 100);
		blen[i] = test_f32_batch(b[i], sizeof(b[i]), (uint16_t)i,
					 SAMPLES, (uint64_t)i * 100);
	}

	/* A held: its batch is deferred, B's is stored. */
	ok(hold(both, 1), "A's row held by another transaction");
	job(&ja, sa, a[1], alen[1]);
	job(&jb, sb, b[1], blen[1]);
	jobs[0] = &ja;
	jobs[1] = &jb;
	ingest_commit(writer, jobs, 2, false);
	ok(ja.status == INGEST_DEFERRED && ja.deferred,
	   "A held: its batch is deferred, marked so");
	ok(jb.status == INGEST_OK && jb.ack.accepted_samples == SAMPLES,
	   "B in the same round: stored, acknowledged");
	ok(stored(sb) == SAMPLES && stored(sa) == 0,
	   "B's samples are stored, none of A's");

	/* The deferred batch again, A still held: no second deferral. */
	job(&jb, sb, b[2], blen[2]);
	commit_waiting(jobs, 2);
	ok(atomic_load(&released) && ja.status == INGEST_OK &&
		   jb.status == INGEST_OK,
	   "a round with a batch deferred once waits for the lock");
	ok(ja.ack.accepted_samples == SAMPLES &&
		   jb.ack.accepted_samples == 2 * SAMPLES,
	   "then both are stored, counted once");

	/* A round of one session held: it waits, nothing to defer to. */
	ok(hold(both, 1), "A held again");
	job(&ja, sa, a[2], alen[2]);
	commit_waiting(jobs, 1);
	ok(atomic_load(&released) && ja.status == INGEST_OK &&
		   ja.ack.accepted_samples == 2 * SAMPLES,
	   "a round of the held session alone waits, then stores");

	/* Both held: nothing could go on, the round waits. */
	ok(hold(both, 2), "A and B held");
	job(&ja, sa, a[3], alen[3]);
	job(&jb, sb, b[3], blen[3]);
	commit_waiting(jobs, 2);
	ok(atomic_load(&released) && ja.status == INGEST_OK &&
		   jb.status == INGEST_OK,
	   "every session of the round held: it waits, then stores");

	/* Nothing held: a plain round. */
	job(&ja, sa, a[4], alen[4]);
	job(&jb, sb, b[4], blen[4]);
	ingest_commit(writer, jobs, 2, false);
	ok(ja.status == INGEST_OK && jb.status == INGEST_OK,
	   "nothing held: stored at once");
	ok(stored(sa) == 4 * SAMPLES && stored(sb) == 4 * SAMPLES,
	   "every batch stored exactly once");
	ok(ja.ack.accepted_samples == 4 * SAMPLES &&
		   jb.ack.accepted_samples == 4 * SAMPLES &&
		   ja.ack.missed_batches == 0 && jb.ack.missed_batches == 0,
	   "counters exact: 40 samples each, no batch missed");

	/* A round that fails at its lock or at its write: every batch
	 * refused, nothing stored, and the same connection goes on. */
	/* A table the lock statement reads renamed: it fails after BEGIN,
	 * prepared or unnamed alike (a lock wait cut short by a session's
	 * lock_timeout would not follow a pooled connection). */
	ok(set(reader, "ALTER TABLE alarm_rule_sets RENAME TO round_test"),
	   "a table the lock statement reads renamed");
	job(&ja, sa, a[5], alen[5]);
	ingest_commit(writer, jobs, 1, false);
	ok(refused(&ja), "the lock statement fails: the batch is refused");
	ok(set(reader, "ALTER TABLE round_test RENAME TO alarm_rule_sets"),
	   "the table named again");
	ok(stored(sa) == 4 * SAMPLES, "nothing of it stored");
	ok(set(reader, "ALTER TABLE stored_chunks ADD CONSTRAINT "
		       "round_test CHECK (sample_count < 0) NOT VALID"),
	   "a constraint every new chunk breaks");
	job(&jb, sb, b[5], blen[5]);
	ingest_commit(writer, jobs, 2, false);
	ok(refused(&ja) && refused(&jb),
	   "the write statement fails: every batch of the round refused");
	ok(set(reader, "ALTER TABLE stored_chunks DROP CONSTRAINT "
		       "round_test"),
	   "the constraint dropped");
	ok(stored(sa) == 4 * SAMPLES && stored(sb) == 4 * SAMPLES,
	   "nothing of the round stored");
	ingest_commit(writer, jobs, 2, false);
	ok(ja.status == INGEST_OK && jb.status == INGEST_OK &&
		   ja.ack.accepted_samples == 5 * SAMPLES &&
		   jb.ack.accepted_samples == 5 * SAMPLES &&
		   ja.ack.missed_batches == 0 && jb.ack.missed_batches == 0,
	   "the same batches again on the same connection: stored, "
	   "counted once");
	ok(stored(sa) == 5 * SAMPLES && stored(sb) == 5 * SAMPLES,
	   "every batch stored exactly once");

	db_free(reader);
	db_free(writer);
	db_free(locker);
	return tap_done();
}
