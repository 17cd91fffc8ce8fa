/* SPDX-License-Identifier: MIT */
/*
 * jobs-db - lib/domain/jobs.c against a real PostgreSQL, no stack and no
 * ffmpeg: a job's life through the queue's functions (create, claim,
 * defer, fail, release, cancel), the attempts each counts, the backoff,
 * the upload's status that follows, and the guard that makes a stale
 * run's change JOBS_LOST.  t/e2e/transcode.t proves the same paths
 * through the runner and the API; this proves the rules one by one.
 * Run by t/e2e/jobs-db.t with a migrated database of its own in
 * XMHUB_TEST_DATABASE_URL.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/conf.h"
#include "domain/jobs.h"
#include "tap.h"
#include "testdb.h"

static struct db *db;

/* A value of the database (t/lib/testdb.h). */
static void
one(const char *sql, const char *param, char *out, size_t len)
{
	testdb_one(db, sql, param, out, len);
}

/* "status attempts" of job id, and whether it may run now. */
static const char *
job_row(const char *id)
{
	static char row[96];

	one("SELECT status || ' ' || attempts || ' ' || "
	    "CASE WHEN run_after <= now() THEN 'now' ELSE 'later' END "
	    "FROM transcode_jobs WHERE id = $1::uuid",
	    id, row, sizeof(row));
	return row;
}

static const char *
upload_status(const char *id)
{
	static char st[32];

	one("SELECT status FROM uploads WHERE id = $1::uuid", id, st,
	    sizeof(st));
	return st;
}

/* Claims the one queued job; its claim, or a test failure. */
static bool
claim(struct jobs_claim *j, const char *why)
{
	bool got = false;

	return ok(jobs_claim(db, "jobs-db:1", j, &got) == DB_OK && got,
		  "%s: claimed", why);
}

static void
test_life(const char *fac, const char *up)
{
	struct jobs_claim j, stale;
	enum jobs_outcome o;
	char id[JOBS_UUID_LEN + 1], status[16], err[128];
	bool got = true;

	is_int(jobs_create(db, fac, up, id), DB_OK, "jobs_create");
	is_str(job_row(id), "queued 0 now", "a new job: queued, no attempt");
	if (!claim(&j, "first run"))
		return;
	is_str(j.id, id, "the claim is the job");
	is_int(j.attempts, 1, "a claim of a queued job is attempt 1");
	is_str(job_row(id), "running 1 now", "running");
	is_str(upload_status(up), "processing", "its upload: processing");

	/* The store, not the input: the attempt is given back. */
	is_int(jobs_defer(db, &j, "the output could not be stored", &o), DB_OK,
	       "jobs_defer");
	is_int(o, JOBS_DONE, "jobs_defer: done");
	is_str(job_row(id), "queued 0 now",
	       "deferred: queued, attempts as before the claim (backoff 0)");
	one("SELECT error_message FROM transcode_jobs WHERE id = $1::uuid", id,
	    err, sizeof(err));
	is_str(err, "the output could not be stored", "deferred: the reason");
	is_str(upload_status(up), "processing", "deferred: upload processing");
	stale = j;
	is_int(jobs_defer(db, &stale, "again", &o), DB_OK,
	       "a stale run defers");
	is_int(o, JOBS_LOST, "a stale run's defer: JOBS_LOST");

	/* Deferred as often as you like: never more than attempt 1. */
	for (int i = 0; i < 5; i++) {
		if (!claim(&j, "after a defer"))
			return;
		if (jobs_defer(db, &j, "store full", &o) != DB_OK)
			break;
	}
	if (!claim(&j, "after five defers"))
		return;
	is_int(j.attempts, 1, "after five defers: still attempt 1");

	/* The input's failures count: max_attempts (2) fail the job. */
	is_int(jobs_fail(db, &j, "not audio", &o), DB_OK, "jobs_fail");
	is_str(job_row(id), "queued 1 now", "failed once: queued again");
	if (!claim(&j, "second attempt"))
		return;
	is_int(j.attempts, 2, "attempt 2");
	is_int(jobs_fail(db, &j, "not audio", &o), DB_OK, "jobs_fail again");
	is_str(job_row(id), "failed 2 now", "failed at max_attempts");
	is_str(upload_status(up), "failed", "its upload: failed");
	is_int(jobs_claim(db, "jobs-db:1", &j, &got), DB_OK,
	       "nothing left to claim");
	ok(!got, "nothing claimed");
	is_int(jobs_cancel(db, id, status), DB_OK, "cancel a failed job");
	is_str(status, "failed", "cancel: the status before (409 for it)");
}

static void
test_release(const char *fac, const char *up)
{
	struct jobs_claim j;
	enum jobs_outcome o;
	char id[JOBS_UUID_LEN + 1], status[16];

	is_int(jobs_create(db, fac, up, id), DB_OK, "another job");
	if (!claim(&j, "released run"))
		return;
	is_int(jobs_release(db, &j, &o), DB_OK, "jobs_release");
	is_str(job_row(id), "queued 0 now", "released: queued, uncounted");
	is_int(jobs_cancel(db, id, status), DB_OK, "cancel a queued job");
	is_str(status, "queued", "cancel: it was queued");
	is_str(job_row(id), "cancelled 0 now", "cancelled");
}

/* The jobs test_life() and test_release() left (up's failed, then up2's
 * cancelled): listed by filter and page, newest first, and read. */
static void
test_list(const char *fac, const char *up, const char *up2)
{
	struct jobs_filter f = {
		.facility_id = fac, .limit = "20", .offset = "0"};
	char newest[JOBS_UUID_LEN + 1];
	PGresult *res = NULL;
	long long total = -1;

	ok(jobs_list(db, &f, &res, &total) == DB_OK && total == 2 &&
		   PQntuples(res) == 2 &&
		   strcmp(testdb_col(res, 0, "upload_id"), up2) == 0 &&
		   strcmp(testdb_col(res, 1, "upload_id"), up) == 0 &&
		   strcmp(testdb_col(res, 0, "facility_id"), fac) == 0,
	   "list: the facility's two jobs, newest first");
	snprintf(newest, sizeof(newest), "%s", testdb_col(res, 0, "id"));
	PQclear(res);
	f.upload_id = up;
	ok(jobs_list(db, &f, &res, &total) == DB_OK && total == 1 &&
		   PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "upload_id"), up) == 0 &&
		   strcmp(testdb_col(res, 0, "status"), "failed") == 0,
	   "list: an upload's jobs");
	PQclear(res);
	f.status = "cancelled";
	ok(jobs_list(db, &f, &res, &total) == DB_OK && total == 0,
	   "list: by status and upload, none");
	PQclear(res);
	f.upload_id = NULL;
	ok(jobs_list(db, &f, &res, &total) == DB_OK && total == 1 &&
		   strcmp(testdb_col(res, 0, "upload_id"), up2) == 0,
	   "list: by status");
	PQclear(res);
	f = (struct jobs_filter){.limit = "1", .offset = "1"};
	ok(jobs_list(db, &f, &res, &total) == DB_OK && total == 2 &&
		   PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "upload_id"), up) == 0,
	   "list: every facility's, a page of one, the second");
	PQclear(res);
	f.facility_id = "00000000-0000-0000-0000-000000000000";
	ok(jobs_list(db, &f, &res, &total) == DB_OK && total == 0 &&
		   PQntuples(res) == 0,
	   "list: none of another facility");
	PQclear(res);
	ok(jobs_get(db, newest, &res) == DB_OK && PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "upload_id"), up2) == 0 &&
		   PQfnumber(res, "worker_id") >= 0,
	   "get: the job as the API shows it");
	PQclear(res);
	ok(jobs_get(db, fac, &res) == DB_OK && PQntuples(res) == 0,
	   "get: none for an id that is no job's");
	PQclear(res);
}

/* An upload of the key key: its id into out (64 bytes). */
static void
upload(const char *key, char *out)
{
	one("INSERT INTO uploads (facility_id, api_key_id, original_filename, "
	    "original_format, original_size_bytes) SELECT facility_id, id, "
	    "'a.wav', 'wav', 4 FROM api_keys WHERE id = $1::uuid RETURNING id",
	    key, out, 64);
}

/* A refusal of the input fails the job at its first attempt of two,
 * and its upload with it. */
static void
test_refuse(const char *fac, const char *up)
{
	struct jobs_claim j, stale;
	enum jobs_outcome o;
	char id[JOBS_UUID_LEN + 1];

	is_int(jobs_create(db, fac, up, id), DB_OK, "a job to refuse");
	if (!claim(&j, "refused run"))
		return;
	stale = j;
	is_int(jobs_refuse(db, &j, "the sample rate 1 Hz is outside", &o),
	       DB_OK, "jobs_refuse");
	is_int(o, JOBS_DONE, "jobs_refuse: done");
	is_str(job_row(id), "failed 1 now", "refused: failed at attempt 1");
	is_str(upload_status(up), "failed", "refused: its upload failed");
	is_int(jobs_refuse(db, &stale, "again", &o), DB_OK,
	       "a stale run refuses");
	is_int(o, JOBS_LOST, "a stale run's refusal: JOBS_LOST");
}

int
main(void)
{
	char detail[256], fac[64], key[64], up[64], up2[64], up3[64];

	setenv("XMHUB_TRANSCODE_MAX_ATTEMPTS", "2", 1);
	setenv("XMHUB_TRANSCODE_BACKOFF", "0", 1);
	if ((db = testdb_start("jobs-db", fac, sizeof(fac))) == NULL)
		return 1;
	if (!jobs_init(detail, sizeof(detail))) {
		printf("Bail out! %s\n", detail);
		return 1;
	}
	one("INSERT INTO api_keys (facility_id, name, key_prefix, key_hash) "
	    "VALUES ($1, 'k', 'xmh_jobsdb00', repeat('0', 64)) RETURNING id",
	    fac, key, sizeof(key));
	upload(key, up);
	upload(key, up2);
	upload(key, up3);
	if (!ok(up[0] != '\0' && up2[0] != '\0' && up3[0] != '\0',
		"a facility, a key, uploads"))
		return tap_done();
	test_life(fac, up);
	test_release(fac, up2);
	test_list(fac, up, up2);
	test_refuse(fac, up3);
	db_free(db);
	return tap_done();
}
