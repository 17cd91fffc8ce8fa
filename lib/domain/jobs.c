/* SPDX-License-Identifier: MIT */
/*
 * jobs.c - the transcode job queue.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/conf.h"
#include "domain/paged.h"
#include "domain/jobs.h"

static struct jobs_target target = {"webm", "opus", "webm", "128k", 0, 3};
static long long lease_s = 600;
static long long backoff_s = 30;
static long long max_seconds = 86400;

/* A bitrate ffmpeg takes for -b:a: digits, then an optional k or M. */
static bool
bitrate_ok(const char *s)
{
	size_t n = strspn(s, "0123456789");

	if (n == 0 || n > 9 || s[0] == '0')
		return false;
	return s[n] == '\0' ||
	       ((s[n] == 'k' || s[n] == 'M') && s[n + 1] == '\0');
}

bool
jobs_init(char *detail, size_t dlen)
{
	const char *format = conf_get("XMHUB_TRANSCODE_FORMAT");
	const char *bitrate = conf_get("XMHUB_TRANSCODE_BITRATE");
	long long rate, attempts;

	if (strcmp(format, "webm") == 0)
		target = (struct jobs_target){"webm", "opus", "webm", "", 0, 0};
	else if (strcmp(format, "mp4") == 0)
		target = (struct jobs_target){"mp4", "aac", "mp4", "", 0, 0};
	else {
		snprintf(detail, dlen,
			 "XMHUB_TRANSCODE_FORMAT must be webm or mp4");
		return false;
	}
	if (strlen(bitrate) >= sizeof(target.bitrate) || !bitrate_ok(bitrate)) {
		snprintf(detail, dlen,
			 "XMHUB_TRANSCODE_BITRATE must be like 128k");
		return false;
	}
	strcpy(target.bitrate, bitrate);
	if (!conf_get_int("XMHUB_TRANSCODE_SAMPLE_RATE", &rate) ||
	    !conf_get_int("XMHUB_TRANSCODE_MAX_ATTEMPTS", &attempts) ||
	    !conf_get_int("XMHUB_TRANSCODE_LEASE", &lease_s) ||
	    !conf_get_int("XMHUB_TRANSCODE_BACKOFF", &backoff_s) ||
	    !conf_get_int("XMHUB_TRANSCODE_MAX_SECONDS", &max_seconds)) {
		snprintf(detail, dlen,
			 "XMHUB_TRANSCODE_SAMPLE_RATE (8000-192000), "
			 "_MAX_ATTEMPTS (1-100), _LEASE (1-86400 s), "
			 "_BACKOFF (0-86400 s) or _MAX_SECONDS (1-604800) is "
			 "not a number in range");
		return false;
	}
	target.sample_rate = (long)rate;
	target.max_attempts = (int)attempts;
	return true;
}

const struct jobs_target *
jobs_target(void)
{
	return &target;
}

bool
jobs_input_ok(const struct probe_info *in, char *msg, size_t mlen)
{
	if (in->sample_rate_hz < JOBS_RATE_MIN ||
	    in->sample_rate_hz > JOBS_RATE_MAX) {
		snprintf(msg, mlen,
			 "the sample rate %ld Hz is outside %d to %d Hz",
			 in->sample_rate_hz, JOBS_RATE_MIN, JOBS_RATE_MAX);
		return false;
	}
	if (in->channels < 1 || in->channels > JOBS_CHANNELS_MAX) {
		snprintf(msg, mlen, "%d channels: 1 to %d are transcoded",
			 in->channels, JOBS_CHANNELS_MAX);
		return false;
	}
	if (in->duration_ms > max_seconds * 1000) {
		snprintf(msg, mlen,
			 "the recording is %.1f s long, more than the %lld s "
			 "a transcode takes (XMHUB_TRANSCODE_MAX_SECONDS)",
			 (double)in->duration_ms / 1000.0, max_seconds);
		return false;
	}
	return true;
}

long long
jobs_max_seconds(void)
{
	return max_seconds;
}

unsigned long long
jobs_max_output_bytes(const struct jobs_target *t)
{
	char *end;
	unsigned long long bps = strtoull(t->bitrate, &end, 10);

	bps *= *end == 'k' ? 1000 : *end == 'M' ? 1000000 : 1;
	return bps / 8 * 2 * (unsigned long long)max_seconds + (1u << 20);
}

static const char create_sql[] =
	"INSERT INTO transcode_jobs (upload_id, facility_id, target_format, "
	"target_codec, target_container, target_bitrate, target_sample_rate, "
	"max_attempts) VALUES ($1::uuid, $2::uuid, $3::text, $4::text, "
	"$5::text, $6::text, $7::integer, $8::integer) RETURNING id";

enum db_status
jobs_create(struct db *db, const char *facility_id, const char *upload_id,
	    char job_id[37])
{
	char rate[24], attempts[24];
	const char *params[8] = {upload_id,    facility_id,	 target.format,
				 target.codec, target.container, target.bitrate,
				 NULL,	       attempts};
	PGresult *res;
	enum db_status st;

	if (target.sample_rate > 0) {
		snprintf(rate, sizeof(rate), "%ld", target.sample_rate);
		params[6] = rate;
	}
	snprintf(attempts, sizeof(attempts), "%d", target.max_attempts);
	if ((st = db_query(db, &res, create_sql, 8, params)) != DB_OK)
		return st;
	snprintf(job_id, 37, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return DB_OK;
}

long long
jobs_lease(void)
{
	return lease_s;
}

/* Runs sql with params and reports whether it touched a row. */
static enum db_status
touch(struct db *db, const char *sql, int n, const char *const *params,
      enum jobs_outcome *out)
{
	PGresult *res;
	enum db_status st;

	if ((st = db_query(db, &res, sql, n, params)) != DB_OK)
		return st;
	*out = PQntuples(res) > 0 || atoi(PQcmdTuples(res)) > 0 ? JOBS_DONE
								: JOBS_LOST;
	PQclear(res);
	return DB_OK;
}

/* Runs sql inside a transaction of its own. */
static enum db_status
in_tx(struct db *db, enum db_status (*fn)(struct db *, void *), void *arg)
{
	enum db_status st;

	if ((st = db_begin(db)) != DB_OK)
		return st;
	if ((st = fn(db, arg)) != DB_OK) {
		db_rollback(db);
		return st;
	}
	return db_commit(db);
}

/* A run's identity in SQL: id, worker_id, attempts, lost_runs ($1..$4):
 * each claim changes attempts or lost_runs. */
#define GUARD                                                                  \
	"id = $1::uuid AND status = 'running' AND worker_id = $2 "             \
	"AND attempts = $3::integer AND lost_runs = $4::integer"

/* An upload none of whose jobs is queued or running any more leaves
 * processing: completed when one of its transcodes completed. */
static const char settle_sql[] =
	"UPDATE uploads u SET status = CASE WHEN EXISTS (SELECT 1 FROM "
	"transcode_jobs j WHERE j.upload_id = u.id AND j.status = "
	"'completed') THEN 'completed' ELSE 'failed' END "
	"WHERE u.id = $1::uuid AND NOT EXISTS (SELECT 1 FROM transcode_jobs "
	"j WHERE j.upload_id = u.id AND j.status IN ('queued', 'running'))";

/* Stale runs ($1: the lease) that are the JOBS_LOST_MAX-th ($2) lost
 * run of their job: failed, with their uploads. */
static const char expire_sql[] =
	"UPDATE transcode_jobs SET status = 'failed', completed_at = now(), "
	"lost_runs = lost_runs + 1, error_message = 'the runner stopped "
	"answering (lease expired) in ' || lost_runs + 1 || ' runs of this "
	"job: the input may crash it' WHERE status = 'running' AND "
	"lost_runs + 1 >= $2::integer AND heartbeat_at < now() - "
	"make_interval(secs => $1::integer) RETURNING upload_id";

/* A queued job's run is one more attempt; a stale running job's (its
 * runner was lost) takes over the lost run's attempt, counted in
 * lost_runs instead.  SET reads the row as it was. */
static const char claim_sql[] =
	"WITH c AS (SELECT id FROM transcode_jobs WHERE (status = 'queued' "
	"AND run_after <= now()) OR (status = 'running' AND heartbeat_at < "
	"now() - make_interval(secs => $2::integer)) ORDER BY run_after, "
	"queued_at LIMIT 1 FOR UPDATE SKIP LOCKED) "
	"UPDATE transcode_jobs t SET status = 'running', worker_id = $1, "
	"started_at = now(), heartbeat_at = now(), attempts = t.attempts + "
	"(t.status = 'queued')::integer, lost_runs = t.lost_runs + "
	"(t.status = 'running')::integer "
	"FROM c WHERE t.id = c.id RETURNING t.id, t.upload_id, "
	"t.facility_id, t.target_format, t.target_codec, t.target_container, "
	"t.target_bitrate, coalesce(t.target_sample_rate, 0), t.attempts, "
	"t.max_attempts, t.lost_runs";

static const char processing_sql[] =
	"UPDATE uploads SET status = 'processing' WHERE id = $1::uuid AND "
	"status <> 'processing'";

struct claim_arg {
	const char *worker;
	struct jobs_claim *job;
	bool *got;
};

static void
copy(char *dst, size_t len, const PGresult *res, int col)
{
	snprintf(dst, len, "%s", PQgetvalue(res, 0, col));
}

static enum db_status
claim_tx(struct db *db, void *arg)
{
	struct claim_arg *a = arg;
	struct jobs_claim *j = a->job;
	char lease[24], lost[24];
	const char *params[2] = {a->worker, lease};
	const char *expire[2] = {lease, lost};
	PGresult *res = NULL;
	enum db_status st;

	snprintf(lease, sizeof(lease), "%lld", lease_s);
	snprintf(lost, sizeof(lost), "%d", JOBS_LOST_MAX);
	if ((st = db_query(db, &res, expire_sql, 2, expire)) != DB_OK)
		return st;
	for (int i = 0; i < PQntuples(res) && st == DB_OK; i++) {
		const char *up[1] = {PQgetvalue(res, i, 0)};
		PGresult *r2;

		if ((st = db_query(db, &r2, settle_sql, 1, up)) == DB_OK)
			PQclear(r2);
	}
	PQclear(res);
	if (st != DB_OK ||
	    (st = db_query(db, &res, claim_sql, 2, params)) != DB_OK)
		return st;
	if ((*a->got = PQntuples(res) > 0)) {
		copy(j->id, sizeof(j->id), res, 0);
		copy(j->upload_id, sizeof(j->upload_id), res, 1);
		copy(j->facility_id, sizeof(j->facility_id), res, 2);
		copy(j->target.format, sizeof(j->target.format), res, 3);
		copy(j->target.codec, sizeof(j->target.codec), res, 4);
		copy(j->target.container, sizeof(j->target.container), res, 5);
		copy(j->target.bitrate, sizeof(j->target.bitrate), res, 6);
		j->target.sample_rate = atol(PQgetvalue(res, 0, 7));
		j->attempts = atoi(PQgetvalue(res, 0, 8));
		j->target.max_attempts = atoi(PQgetvalue(res, 0, 9));
		j->lost_runs = atoi(PQgetvalue(res, 0, 10));
		snprintf(j->worker_id, sizeof(j->worker_id), "%s", a->worker);
		const char *up[1] = {j->upload_id};
		PQclear(res);
		if ((st = db_query(db, &res, processing_sql, 1, up)) != DB_OK)
			return st;
	}
	PQclear(res);
	return DB_OK;
}

enum db_status
jobs_claim(struct db *db, const char *worker, struct jobs_claim *job, bool *got)
{
	struct claim_arg a = {worker, job, got};

	*got = false;
	return in_tx(db, claim_tx, &a);
}

/* The guard's four parameters of a run (ids: room for two numbers). */
static void
guard_params(const struct jobs_claim *job, char ids[2][24],
	     const char *params[4])
{
	snprintf(ids[0], 24, "%d", job->attempts);
	snprintf(ids[1], 24, "%d", job->lost_runs);
	params[0] = job->id;
	params[1] = job->worker_id;
	params[2] = ids[0];
	params[3] = ids[1];
}

static const char heartbeat_sql[] =
	"UPDATE transcode_jobs SET heartbeat_at = now() WHERE " GUARD;

/* Runs sql, which takes the run's identity only. */
static enum db_status
guarded(struct db *db, const struct jobs_claim *job, const char *sql,
	enum jobs_outcome *out)
{
	char ids[2][24];
	const char *params[4];

	guard_params(job, ids, params);
	return touch(db, sql, 4, params, out);
}

enum db_status
jobs_heartbeat(struct db *db, const struct jobs_claim *job,
	       enum jobs_outcome *out)
{
	return guarded(db, job, heartbeat_sql, out);
}

static const char complete_sql[] =
	"UPDATE transcode_jobs SET status = 'completed', completed_at = "
	"now(), heartbeat_at = now(), error_message = NULL, "
	"output_size_bytes = $5::bigint, output_duration_ms = $6::bigint "
	"WHERE " GUARD;

static const char upload_done_sql[] =
	"UPDATE uploads SET status = 'completed', duration_ms = $2::bigint, "
	"sample_rate_hz = $3::integer, channels = $4::integer, bit_depth = "
	"$5::integer, codec = $6::text WHERE id = $1::uuid";

struct complete_arg {
	const struct jobs_claim *job;
	const struct probe_info *in;
	uint64_t size, duration;
	enum jobs_outcome *out;
};

/* A probe field as a parameter: NULL when unknown. */
static const char *
num(char buf[24], long long v)
{
	if (v <= 0)
		return NULL;
	snprintf(buf, 24, "%lld", v);
	return buf;
}

static enum db_status
complete_tx(struct db *db, void *arg)
{
	struct complete_arg *a = arg;
	char ids[2][24], size[24], dur[24], ms[24], rate[24], ch[24], bits[24];
	const char *params[6], *up[6];
	enum db_status st;

	guard_params(a->job, ids, params);
	snprintf(size, sizeof(size), "%llu", (unsigned long long)a->size);
	snprintf(dur, sizeof(dur), "%llu", (unsigned long long)a->duration);
	params[4] = size;
	params[5] = dur;
	if ((st = touch(db, complete_sql, 6, params, a->out)) != DB_OK ||
	    *a->out == JOBS_LOST)
		return st;
	up[0] = a->job->upload_id;
	up[1] = num(ms, a->in->duration_ms);
	up[2] = num(rate, a->in->sample_rate_hz);
	up[3] = num(ch, a->in->channels);
	up[4] = num(bits, a->in->bit_depth);
	up[5] = a->in->codec[0] != '\0' ? a->in->codec : NULL;
	return touch(db, upload_done_sql, 6, up, a->out);
}

enum db_status
jobs_complete(struct db *db, const struct jobs_claim *job,
	      const struct probe_info *in, uint64_t out_size,
	      uint64_t out_duration_ms, enum jobs_outcome *out)
{
	struct complete_arg a = {job, in, out_size, out_duration_ms, out};

	return in_tx(db, complete_tx, &a);
}

static const char fail_sql[] =
	"UPDATE transcode_jobs SET error_message = $5, heartbeat_at = NULL, "
	"status = CASE WHEN attempts < max_attempts THEN 'queued' ELSE "
	"'failed' END, completed_at = CASE WHEN attempts < max_attempts THEN "
	"NULL ELSE now() END, run_after = now() + make_interval(secs => "
	"least($6::float8 * power(2, attempts - 1), 86400)) "
	"WHERE " GUARD " RETURNING status";

static const char defer_sql[] =
	"UPDATE transcode_jobs SET error_message = $5, heartbeat_at = NULL, "
	"status = 'queued', attempts = attempts - 1, run_after = now() + "
	"make_interval(secs => $6::float8) WHERE " GUARD " RETURNING status";

static const char refuse_sql[] =
	"UPDATE transcode_jobs SET error_message = $5, heartbeat_at = NULL, "
	"status = 'failed', completed_at = now() WHERE " GUARD
	" RETURNING status";

struct fail_arg {
	const struct jobs_claim *job;
	const char *message;
	const char *sql; /* fail_sql, defer_sql or refuse_sql */
	int nparams;	 /* 5, or 6 with the backoff */
	enum jobs_outcome *out;
};

static enum db_status
fail_tx(struct db *db, void *arg)
{
	struct fail_arg *a = arg;
	char ids[2][24], backoff[24], msg[JOBS_ERROR_MAX + 1];
	const char *params[6];
	PGresult *res;
	enum db_status st;
	bool failed;

	guard_params(a->job, ids, params);
	/* Cut on a character boundary: the column is UTF-8 text. */
	snprintf(msg, sizeof(msg), "%s", a->message);
	for (size_t n = strlen(msg);
	     n == JOBS_ERROR_MAX && (msg[n - 1] & 0xC0) == 0x80; n--)
		msg[n - 1] = '\0';
	snprintf(backoff, sizeof(backoff), "%lld", backoff_s);
	params[4] = msg;
	params[5] = backoff;
	if ((st = db_query(db, &res, a->sql, a->nparams, params)) != DB_OK)
		return st;
	*a->out = PQntuples(res) > 0 ? JOBS_DONE : JOBS_LOST;
	failed = PQntuples(res) > 0 &&
		 strcmp(PQgetvalue(res, 0, 0), "failed") == 0;
	PQclear(res);
	if (!failed)
		return DB_OK;
	const char *up[1] = {a->job->upload_id};
	if ((st = db_query(db, &res, settle_sql, 1, up)) == DB_OK)
		PQclear(res);
	return st;
}

enum db_status
jobs_fail(struct db *db, const struct jobs_claim *job, const char *message,
	  enum jobs_outcome *out)
{
	struct fail_arg a = {job, message, fail_sql, 6, out};

	return in_tx(db, fail_tx, &a);
}

enum db_status
jobs_defer(struct db *db, const struct jobs_claim *job, const char *message,
	   enum jobs_outcome *out)
{
	struct fail_arg a = {job, message, defer_sql, 6, out};

	return in_tx(db, fail_tx, &a);
}

enum db_status
jobs_refuse(struct db *db, const struct jobs_claim *job, const char *message,
	    enum jobs_outcome *out)
{
	struct fail_arg a = {job, message, refuse_sql, 5, out};

	return in_tx(db, fail_tx, &a);
}

static const char release_sql[] =
	"UPDATE transcode_jobs SET status = 'queued', attempts = attempts - "
	"1, heartbeat_at = NULL, run_after = now() WHERE " GUARD;

enum db_status
jobs_release(struct db *db, const struct jobs_claim *job,
	     enum jobs_outcome *out)
{
	return guarded(db, job, release_sql, out);
}

static const char lock_sql[] =
	"SELECT status, upload_id FROM transcode_jobs WHERE id = $1::uuid "
	"FOR UPDATE";

static const char cancel_sql[] =
	"UPDATE transcode_jobs SET status = 'cancelled', completed_at = now() "
	"WHERE id = $1::uuid";

struct cancel_arg {
	const char *id;
	char *status;
};

static enum db_status
cancel_tx(struct db *db, void *arg)
{
	struct cancel_arg *a = arg;
	const char *params[1] = {a->id};
	char upload[JOBS_UUID_LEN + 1];
	const char *up[1] = {upload};
	PGresult *res;
	enum db_status st;

	if ((st = db_query(db, &res, lock_sql, 1, params)) != DB_OK)
		return st;
	a->status[0] = '\0';
	if (PQntuples(res) > 0) {
		snprintf(a->status, 16, "%s", PQgetvalue(res, 0, 0));
		copy(upload, sizeof(upload), res, 1);
	}
	PQclear(res);
	if (strcmp(a->status, "queued") != 0 &&
	    strcmp(a->status, "running") != 0)
		return DB_OK;
	if ((st = db_query(db, &res, cancel_sql, 1, params)) != DB_OK)
		return st;
	PQclear(res);
	if ((st = db_query(db, &res, settle_sql, 1, up)) == DB_OK)
		PQclear(res);
	return st;
}

#define COLUMNS                                                                \
	"id, upload_id, facility_id, target_format, target_codec, "            \
	"target_container, target_bitrate, target_sample_rate, "               \
	"output_size_bytes, output_duration_ms, status, error_message, "       \
	"attempts, max_attempts, queued_at, started_at, completed_at, "        \
	"worker_id"

#define LIST_WHERE                                                             \
	"WHERE ($1::uuid IS NULL OR facility_id = $1::uuid) "                  \
	"AND ($2::text IS NULL OR status = $2::text) "                         \
	"AND ($3::uuid IS NULL OR upload_id = $3::uuid) "

static const char count_sql[] =
	"SELECT count(*) FROM transcode_jobs " LIST_WHERE;

static const char list_sql[] =
	"SELECT " COLUMNS " FROM transcode_jobs " LIST_WHERE
	"ORDER BY queued_at DESC, id LIMIT $4::integer OFFSET $5::bigint";

static const char get_sql[] =
	"SELECT " COLUMNS " FROM transcode_jobs WHERE id = $1::uuid";

enum db_status
jobs_list(struct db *db, const struct jobs_filter *f, PGresult **rows,
	  long long *total)
{
	const char *p[5] = {f->facility_id, f->status, f->upload_id, f->limit,
			    f->offset};

	return paged_list(db, count_sql, list_sql, 3, p, rows, total);
}

enum db_status
jobs_get(struct db *db, const char *id, PGresult **rows)
{
	return db_query_ro(db, rows, get_sql, 1, &id);
}

enum db_status
jobs_cancel(struct db *db, const char *id, char status[16])
{
	struct cancel_arg a = {id, status};

	return in_tx(db, cancel_tx, &a);
}
