/* SPDX-License-Identifier: MIT */
/*
 * faceapi_vqueue.c - the video job queue and its settings
 * (faceapi_vqueue.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/conf.h"
#include "core/settings.h"
#include "face/service/faceapi_conf.h"
#include "face/service/faceapi_vqueue.h"

bool
faceapi_vconf_load(struct faceapi_vconf *c, char *detail, size_t dlen)
{
	/* Defaults and ranges: lib/core/settings.def. */
	static const char *const names[] = {
		"FACE_API_VIDEO_MAX_BYTES",  "FACE_API_VIDEO_MAX_SECONDS",
		"FACE_API_VIDEO_MAX_PIXELS", "FACE_API_VIDEO_DETECT_EVERY",
		"FACE_API_VIDEO_LEASE",	     "FACE_API_VIDEO_MAX_ATTEMPTS",
		"FACE_API_VIDEO_BACKOFF",
	};
	long long v[sizeof(names) / sizeof(names[0])];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!conf_get_int(names[i], &v[i])) {
			snprintf(detail, dlen,
				 "%s must be an integer in %.0f..%.0f",
				 names[i], settings_find(names[i])->min,
				 settings_find(names[i])->max);
			return false;
		}
	c->max_bytes = v[0];
	c->max_seconds = v[1];
	c->max_pixels = v[2];
	c->detect_every = (int)v[3];
	c->lease_s = (int)v[4];
	c->max_attempts = (int)v[5];
	c->backoff_s = (int)v[6];
	return true;
}

bool
faceapi_vput_file(struct store *st, const char *path, const char *key,
		  const char *type, uint64_t *size, char *detail, size_t dlen)
{
	char chunk[65536];
	struct store_put *w = NULL;
	bool ok = false;
	ssize_t n;
	int fd;

	*size = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(detail, dlen, "%s can not be read: %s", path,
			 strerror(errno));
		return false;
	}
	if ((w = store_put_begin(st, key, type, detail, dlen)) == NULL)
		goto out;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0 ||
	       (n < 0 && errno == EINTR)) {
		if (n > 0 && store_put_write(w, chunk, (size_t)n) != STORE_OK)
			break;
		*size += n > 0 ? (uint64_t)n : 0;
	}
	if (n != 0) {
		snprintf(detail, dlen, "the file could not be stored");
		goto out;
	}
	ok = store_put_commit(w, detail, dlen) == STORE_OK;
	w = NULL;
out:
	store_put_abort(w);
	close(fd);
	return ok;
}

/* The guard of every runner update: $1 id, $2 worker, $3 attempts, $4
 * lost_runs. */
#define GUARD                                                                  \
	" WHERE id = $1::uuid AND status = 'running' AND worker_id = $2 "      \
	"AND attempts = $3::int AND lost_runs = $4::int"

/* Runs a guarded update with the guard's four parameters first and
 * more after them; *lost when no row was changed. */
static enum db_status
guarded(struct db *db, const struct faceapi_vclaim *j, const char *sql,
	int nmore, const char *const *more, bool *lost)
{
	char att[16], lostr[16];
	const char *p[12] = {j->id, j->worker, att, lostr};
	PGresult *res = NULL;
	enum db_status st;

	snprintf(att, sizeof(att), "%d", j->attempts);
	snprintf(lostr, sizeof(lostr), "%d", j->lost_runs);
	for (int i = 0; i < nmore && i < 8; i++)
		p[4 + i] = more[i];
	st = db_query(db, &res, sql, 4 + nmore, p);
	if (st == DB_OK)
		*lost = strcmp(PQcmdTuples(res), "0") == 0;
	PQclear(res);
	return st;
}

enum db_status
faceapi_vjob_claim(struct db *db, const struct faceapi_vconf *c,
		   const char *worker, struct faceapi_vclaim *j, bool *got)
{
	char lease[16], lmax[16];
	const char *p1[2] = {lease, lmax}, *p2[2] = {worker, lease};
	PGresult *res = NULL;
	enum db_status st;

	*got = false;
	memset(j, 0, sizeof(*j));
	snprintf(lease, sizeof(lease), "%d", c->lease_s);
	snprintf(lmax, sizeof(lmax), "%d", FACEAPI_VLOST_MAX);
	st = db_query(db, &res,
		      "UPDATE face_video_jobs SET status = 'failed', "
		      "finished_at = now(), error_message = 'the runner "
		      "processing the video was lost ' || $2::text || ' times' "
		      "WHERE status = 'running' AND heartbeat_at < now() - "
		      "make_interval(secs => $1::int) AND lost_runs + 1 >= "
		      "$2::int",
		      2, p1);
	PQclear(res);
	res = NULL;
	if (st != DB_OK)
		return st;
	st = db_query(
		db, &res,
		"WITH c AS (SELECT id, status AS was FROM face_video_jobs "
		"WHERE (status = "
		"'queued' AND run_after <= now()) OR (status = 'running' AND "
		"heartbeat_at < now() - make_interval(secs => $2::int)) "
		"ORDER BY run_after, created_at LIMIT 1 FOR UPDATE SKIP "
		"LOCKED) "
		"UPDATE face_video_jobs j SET status = 'running', worker_id = "
		"$1, started_at = now(), heartbeat_at = now(), frames_done = "
		"0, "
		"attempts = CASE WHEN j.status = 'queued' THEN j.attempts + 1 "
		"ELSE j.attempts END, lost_runs = CASE WHEN j.status = "
		"'running' THEN j.lost_runs + 1 ELSE j.lost_runs END FROM c "
		"WHERE j.id = c.id RETURNING j.id, "
		"j.input_key, j.confidence_threshold, j.nms_threshold, "
		"j.padding, j.max_faces, j.strength, j.method, j.attempts, "
		"j.lost_runs, c.was = 'running'",
		2, p2);
	if (st == DB_OK && PQntuples(res) == 1) {
		snprintf(j->id, sizeof(j->id), "%s", PQgetvalue(res, 0, 0));
		snprintf(j->worker, sizeof(j->worker), "%s", worker);
		snprintf(j->input_key, sizeof(j->input_key), "%s",
			 PQgetvalue(res, 0, 1));
		j->confidence = atof(PQgetvalue(res, 0, 2));
		j->nms = atof(PQgetvalue(res, 0, 3));
		j->padding = atof(PQgetvalue(res, 0, 4));
		j->max_faces = atoi(PQgetvalue(res, 0, 5));
		j->strength = atoi(PQgetvalue(res, 0, 6));
		if (!faceapi_method_parse(PQgetvalue(res, 0, 7), &j->method))
			j->method = FACE_GAUSSIAN;
		j->attempts = atoi(PQgetvalue(res, 0, 8));
		j->lost_runs = atoi(PQgetvalue(res, 0, 9));
		j->taken_over = strcmp(PQgetvalue(res, 0, 10), "t") == 0;
		*got = true;
	}
	PQclear(res);
	return st;
}

enum db_status
faceapi_vjob_progress(struct db *db, const struct faceapi_vclaim *j,
		      long long frames_done, double fps, long long frames_total,
		      bool *lost)
{
	char done[24], rate[32], total[24];
	const char *p[3] = {done, rate, total};

	snprintf(done, sizeof(done), "%lld", frames_done);
	snprintf(rate, sizeof(rate), "%.3f", fps);
	snprintf(total, sizeof(total), "%lld", frames_total);
	return guarded(db, j,
		       "UPDATE face_video_jobs SET heartbeat_at = now(), "
		       "frames_done = $5::bigint, fps = $6::float8, "
		       "frames_total = CASE WHEN $7::bigint < 0 THEN "
		       "frames_total ELSE $7::bigint END" GUARD,
		       3, p, lost);
}

enum db_status
faceapi_vjob_complete(struct db *db, const struct faceapi_vclaim *j,
		      const char *model, const char *key,
		      const char *content_type, long long bytes,
		      long long frames, double fps, long long faces, bool *lost)
{
	char b[24], f[24], r[32], n[24];
	const char *p[7] = {model, key, content_type, b, f, r, n};

	snprintf(b, sizeof(b), "%lld", bytes);
	snprintf(f, sizeof(f), "%lld", frames);
	snprintf(r, sizeof(r), "%.3f", fps);
	snprintf(n, sizeof(n), "%lld", faces);
	return guarded(db, j,
		       "UPDATE face_video_jobs SET status = 'completed', "
		       "finished_at = now(), heartbeat_at = now(), model = $5, "
		       "output_key = $6, output_content_type = $7, "
		       "output_bytes = $8::bigint, frames_done = $9::bigint, "
		       "frames_total = $9::bigint, fps = $10::float8, "
		       "faces_masked = $11::bigint, error_message = NULL" GUARD,
		       7, p, lost);
}

enum db_status
faceapi_vjob_fail(struct db *db, const struct faceapi_vconf *c,
		  const struct faceapi_vclaim *j, const char *message,
		  bool final, bool *lost)
{
	char msg[FACEAPI_VERROR_MAX + 1], fin[8], back[16];
	const char *p[3] = {msg, fin, back};

	snprintf(msg, sizeof(msg), "%s", message);
	snprintf(fin, sizeof(fin), "%s", final ? "true" : "false");
	snprintf(back, sizeof(back), "%d", c->backoff_s);
	return guarded(
		db, j,
		"UPDATE face_video_jobs SET error_message = $5, heartbeat_at = "
		"NULL, worker_id = NULL, status = CASE WHEN $6::boolean OR "
		"attempts >= max_attempts THEN 'failed' ELSE 'queued' END, "
		"finished_at = CASE WHEN $6::boolean OR attempts >= "
		"max_attempts THEN now() END, run_after = now() + "
		"make_interval(secs => $7::int * power(2, attempts - 1))" GUARD,
		3, p, lost);
}

enum db_status
faceapi_vjob_release(struct db *db, const struct faceapi_vclaim *j, bool *lost)
{
	const char *p[1] = {j->taken_over ? "true" : "false"};

	/* Back as it was before the claim: a queued job's attempt or a
	 * lost run's count undone. */
	return guarded(db, j,
		       "UPDATE face_video_jobs SET status = 'queued', "
		       "worker_id = NULL, heartbeat_at = NULL, run_after = "
		       "now(), attempts = attempts - CASE WHEN $5::boolean "
		       "THEN 0 ELSE 1 END, lost_runs = lost_runs - CASE WHEN "
		       "$5::boolean THEN 1 ELSE 0 END" GUARD,
		       1, p, lost);
}
