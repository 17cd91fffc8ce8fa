/* SPDX-License-Identifier: MIT */
/*
 * faceapi_video.c - the video endpoints (faceapi_video.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/multipart.h"
#include "core/auth.h"
#include "core/clock.h"
#include "core/conf.h"
#include "face/service/faceapi_keys.h"
#include "face/service/faceapi_params.h"
#include "face/service/faceapi_resp.h"
#include "face/service/faceapi_svc.h"
#include "face/service/faceapi_video.h"
#include "face/service/faceapi_vqueue.h"
#include "face/service/faceapi_vrun.h"
#include "web/dbjson.h"
#include "core/log.h"

#define PROBE_MS 30000 /* ffprobe reads headers only */
#define MIN_SIDE 10

/* What the multipart callbacks fill: the video into a file, the
 * parameters into up's fields. */
struct vreader {
	struct faceapi_upload *up;
	int fd;
	long long bytes, max;
	bool has_video, in_video;
	int field; /* the parameter being read, -1 none */
	size_t flen;
	enum faceapi_upload_result stop; /* why a callback stopped */
};

static int
vpart_begin(void *arg, const struct multipart_part *part)
{
	struct vreader *r = arg;

	r->in_video = false;
	r->field = -1;
	r->flen = 0;
	if (strcmp(part->name, "video") == 0) {
		if (r->has_video) {
			r->stop = FACEAPI_UPLOAD_SECOND_FILE;
			return 1;
		}
		r->has_video = r->in_video = true;
		return 0;
	}
	r->field = faceapi_field_begin(r->up, part->name);
	return 0;
}

static int
vpart_data(void *arg, const void *p, size_t n)
{
	struct vreader *r = arg;

	if (r->in_video) {
		if (r->bytes + (long long)n > r->max) {
			r->stop = FACEAPI_UPLOAD_FILE_TOO_LARGE;
			return 1;
		}
		r->bytes += (long long)n;
		if (write(r->fd, p, n) != (ssize_t)n) {
			r->stop = FACEAPI_UPLOAD_NOT_KEPT;
			return 1;
		}
		return 0;
	}
	if (r->field >= 0 &&
	    !faceapi_field_data(r->up, r->field, &r->flen, p, n)) {
		r->stop = FACEAPI_UPLOAD_FIELD_TOO_LONG;
		return 1;
	}
	return 0;
}

static int
vpart_end(void *arg)
{
	((struct vreader *)arg)->in_video = false;
	return 0;
}

static const struct multipart_cb vcallbacks = {vpart_begin, vpart_data,
					       vpart_end};

/* Reads the body: the video into the file fd (*bytes), the fields into
 * up; detail (dlen bytes) says why for NOT_FORM and MALFORMED. */
static enum faceapi_upload_result
read_body(struct http_req *req, const struct faceapi_vconf *vc, int fd,
	  struct faceapi_upload *up, long long *bytes, char *detail,
	  size_t dlen)
{
	char boundary[MULTIPART_BOUNDARY_MAX + 1];
	long long limit = vc->max_bytes + FACEAPI_FORM_OVERHEAD;
	struct vreader r = {up,	   fd, 0, vc->max_bytes,    false,
			    false, -1, 0, FACEAPI_UPLOAD_OK};
	enum http_body_result res;

	if (!multipart_boundary(req->content_type, boundary, detail, dlen))
		return FACEAPI_UPLOAD_NOT_FORM;
	if (req->content_length > limit)
		return FACEAPI_UPLOAD_BODY_TOO_LARGE;
	res = http_multipart_read(req, boundary, &vcallbacks, &r,
				  (unsigned long long)limit, detail, dlen);
	*bytes = r.bytes;
	switch (res) {
	case HTTP_BODY_OK:
		return !r.has_video   ? FACEAPI_UPLOAD_NO_FILE
		       : r.bytes == 0 ? FACEAPI_UPLOAD_EMPTY_FILE
				      : FACEAPI_UPLOAD_OK;
	case HTTP_BODY_TOO_LARGE:
		return FACEAPI_UPLOAD_FILE_TOO_LARGE;
	case HTTP_BODY_STOPPED:
		return r.stop;
	case HTTP_BODY_MALFORMED:
		return FACEAPI_UPLOAD_MALFORMED;
	case HTTP_BODY_UNREADABLE:
		return FACEAPI_UPLOAD_UNREADABLE;
	default:
		return FACEAPI_UPLOAD_NO_MEMORY;
	}
}

/* The checks of the video's header against the limits.  False with the
 * answer set. */
static bool
check_video(struct app_ctx *ctx, const struct faceapi_vconf *vc,
	    const char *path, struct faceapi_vinfo *vi)
{
	char detail[512];

	if (!faceapi_video_probe(path, vi, PROBE_MS, detail, sizeof(detail))) {
		http_error(ctx->resp, 400, "%s", detail);
		return false;
	}
	if ((long long)vi->width * vi->height > vc->max_pixels) {
		http_error(ctx->resp, 413,
			   "the video is %dx%d, more than %lld pixels a frame "
			   "(FACE_API_VIDEO_MAX_PIXELS)",
			   vi->width, vi->height, vc->max_pixels);
		return false;
	}
	if (vi->width < MIN_SIDE || vi->height < MIN_SIDE) {
		http_error(ctx->resp, 400,
			   "the video is %dx%d, smaller than %dx%d", vi->width,
			   vi->height, MIN_SIDE, MIN_SIDE);
		return false;
	}
	if (vi->duration_ms > vc->max_seconds * 1000 ||
	    (double)vi->frames > (double)vc->max_seconds * vi->fps + 1) {
		http_error(ctx->resp, 413,
			   "the video is %.1f s long, more than %lld s "
			   "(FACE_API_VIDEO_MAX_SECONDS)",
			   (double)vi->duration_ms / 1000.0, vc->max_seconds);
		return false;
	}
	return true;
}

/* The job object of row 0 of res (the columns of JOB_COLUMNS). */
#define JOB_COLUMNS                                                            \
	"id, status AS state, frames_done, frames_total, fps, "                \
	"error_message AS error, width, height, duration_ms, method, "         \
	"faces_masked, model, output_bytes, attempts, created_at, "            \
	"started_at, finished_at"

static void
answer_job(struct app_ctx *ctx, int status, const PGresult *res)
{
	json_object *o = dbjson_row(res, 0);
	char url[128];

	if (o == NULL) {
		http_error(ctx->resp, 500, "out of memory");
		return;
	}
	snprintf(url, sizeof(url), "/api/v1/video-jobs/%s",
		 PQgetvalue(res, 0, 0));
	json_object_object_add(o, "status_url", json_object_new_string(url));
	strcat(url, "/result");
	json_object_object_add(o, "result_url",
			       strcmp(PQgetvalue(res, 0, 1), "completed") == 0
				       ? json_object_new_string(url)
				       : NULL);
	http_json(ctx->resp, status, o);
}

/* The rate limit, the key and storage; false with the answer set. */
static bool
admit(struct app_ctx *ctx, bool post, char key_id[37])
{
	struct faceapi *svc = faceapi_of(ctx);
	const struct faceapi_rate *rate = &svc->conf.rate_mask;
	int retry = 1;

	if (post &&
	    !faceapi_rate_allow(svc->limits, "mask", faceapi_client_ip(ctx),
				rate, clock_real_us(), &retry)) {
		http_header(ctx->resp, "Retry-After", "%d", retry);
		http_error(ctx->resp, 429,
			   "rate limit exceeded: %lld mask requests per %lld "
			   "seconds",
			   rate->limit, rate->period_s);
		return false;
	}
	if (!svc->conf.storage || svc->db == NULL || svc->store == NULL) {
		http_error(ctx->resp, 503,
			   "video anonymization needs storage: the service "
			   "runs with FACE_API_STORAGE_ENABLED=false");
		return false;
	}
	return faceapi_keys_check(ctx, key_id);
}

/* Stores the input and queues the job; answers 202 or an error. */
static void
queue(struct app_ctx *ctx, const char *path, long long bytes,
      const struct faceapi_vinfo *vi, const struct faceapi_params *p,
      const char *key_id)
{
	struct faceapi *svc = faceapi_of(ctx);
	char id[AUTH_UUID_LEN + 1], key[128], detail[256], v[10][32];
	const char *params[14];
	PGresult *res = NULL;
	enum db_status st;
	uint64_t size;

	if (!auth_uuid(id)) {
		http_error(ctx->resp, 500, "no random bytes for a job id");
		return;
	}
	snprintf(key, sizeof(key), "face/videos/%s/input", id);
	if (!faceapi_vput_file(svc->store, path, key,
			       "application/octet-stream", &size, detail,
			       sizeof(detail))) {
		log_error("face-video: %s: %s", key, detail);
		http_error(ctx->resp, 503, "the object store is unavailable");
		goto out;
	}
	snprintf(v[0], 32, "%lld", bytes);
	snprintf(v[1], 32, "%d", vi->width);
	snprintf(v[2], 32, "%d", vi->height);
	snprintf(v[3], 32, "%lld", (long long)vi->duration_ms);
	snprintf(v[4], 32, "%lld", vi->frames);
	snprintf(v[5], 32, "%d", p->strength);
	snprintf(v[6], 32, "%.17g", p->padding);
	snprintf(v[7], 32, "%ld", p->max_faces);
	params[0] = id;
	params[1] = key;
	for (int i = 0; i < 8; i++)
		params[2 + i] = v[i];
	snprintf(v[8], 32, "%.17g", p->confidence);
	snprintf(v[9], 32, "%.17g", p->nms);
	params[10] = faceapi_method_name(p->method);
	params[11] = v[8];
	params[12] = v[9];
	params[13] = key_id;
	st = db_query(
		ctx->db, &res,
		"INSERT INTO face_video_jobs (id, input_key, input_bytes, "
		"width, height, duration_ms, frames_total, strength, "
		"padding, max_faces, method, confidence_threshold, "
		"nms_threshold, api_key_id) VALUES ($1::uuid, $2, "
		"$3::bigint, $4::int, $5::int, $6::bigint, $7::bigint, "
		"$8::int, $9::float8, $10::int, $11, $12::float8, "
		"$13::float8, NULLIF($14, '')::uuid) RETURNING " JOB_COLUMNS,
		14, params);
	if (st != DB_OK) {
		store_delete(svc->store, key, detail, sizeof(detail));
		app_db_error(ctx, st);
		goto out;
	}
	http_header(ctx->resp, "Location", "/api/v1/video-jobs/%s", id);
	answer_job(ctx, 202, res);
out:
	PQclear(res);
}

void
faceapi_video_post(struct app_ctx *ctx)
{
	struct faceapi *svc = faceapi_of(ctx);
	struct faceapi_vconf vc;
	struct faceapi_upload up;
	struct faceapi_params p;
	struct faceapi_vinfo vi;
	enum faceapi_upload_result ur;
	char key_id[37] = "", path[PATH_MAX], detail[256];
	long long bytes = 0;
	int fd = -1;

	memset(&up, 0, sizeof(up));
	buf_init(&up.image, 0);
	path[0] = '\0';
	if (!faceapi_vconf_load(&vc, detail, sizeof(detail))) {
		log_error("face-video: %s", detail);
		http_error(ctx->resp, 500, "a video setting is invalid");
		goto out;
	}
	if (!admit(ctx, true, key_id))
		goto out;
	if (!faceapi_request_begin(svc->limits)) {
		http_header(ctx->resp, "Retry-After", "1");
		http_error(ctx->resp, 503,
			   "too many concurrent requests; retry shortly");
		goto out;
	}
	snprintf(path, sizeof(path), "%s/xmhub-face-video-XXXXXX",
		 conf_str("TMPDIR", "/tmp"));
	if ((fd = mkstemp(path)) < 0) {
		log_error("face-video: %s: %s", path, strerror(errno));
		path[0] = '\0';
		http_error(ctx->resp, 503, "no temporary space for the video");
		goto out;
	}
	if ((ur = read_body(ctx->req, &vc, fd, &up, &bytes, detail,
			    sizeof(detail))) != FACEAPI_UPLOAD_OK) {
		const struct faceapi_upload_kind video = {
			"video", "a video", vc.max_bytes,
			"FACE_API_VIDEO_MAX_BYTES"};

		faceapi_upload_answer(ctx->resp, ur, &video, &up, detail);
	} else if (faceapi_params_get(ctx->req, &up, &svc->conf, true, &p,
				      ctx->resp) &&
		   check_video(ctx, &vc, path, &vi))
		queue(ctx, path, bytes, &vi, &p, key_id);
out:
	if (fd >= 0)
		close(fd);
	if (path[0] != '\0')
		unlink(path);
	faceapi_upload_free(&up);
}

/* The job {id} as this caller may see it; false with the answer set
 * (404 for a job of another key). */
static bool
find(struct app_ctx *ctx, const char *key_id, const char *columns,
     PGresult **res)
{
	const char *p[2] = {ctx->params[0], key_id};
	char sql[512];
	enum db_status st;

	snprintf(sql, sizeof(sql),
		 "SELECT %s FROM face_video_jobs WHERE id = $1::uuid AND "
		 "($2 = '' OR api_key_id = NULLIF($2, '')::uuid)",
		 columns);
	if ((st = db_query_ro(ctx->db, res, sql, 2, p)) != DB_OK) {
		app_db_error(ctx, st);
		return false;
	}
	if (PQntuples(*res) == 0) {
		http_error(ctx->resp, 404, "no such video job");
		return false;
	}
	return true;
}

void
faceapi_video_get(struct app_ctx *ctx)
{
	PGresult *res = NULL;
	char key_id[37] = "";

	if (admit(ctx, false, key_id) && find(ctx, key_id, JOB_COLUMNS, &res))
		answer_job(ctx, 200, res);
	PQclear(res);
}

void
faceapi_video_result(struct app_ctx *ctx)
{
	struct faceapi *svc = faceapi_of(ctx);
	PGresult *res = NULL;
	char key_id[37] = "", path[4096], url[2048];
	const char *key;

	if (!admit(ctx, false, key_id) ||
	    !find(ctx, key_id, "status, output_key, output_content_type, id",
		  &res))
		goto out;
	if (strcmp(PQgetvalue(res, 0, 0), "completed") != 0) {
		http_error(ctx->resp, 409,
			   "the job is %s: its result is not ready",
			   PQgetvalue(res, 0, 0));
		goto out;
	}
	key = PQgetvalue(res, 0, 1);
	http_header(ctx->resp, "Cache-Control", "private, no-store");
	if (store_local_path(svc->store, key, path, sizeof(path))) {
		/* lighttpd sends the file and answers Range itself. */
		http_header(ctx->resp, "Content-Type", "%s",
			    PQgetvalue(res, 0, 2));
		http_header(ctx->resp, "Content-Disposition",
			    "attachment; filename=\"masked-%s.%s\"",
			    PQgetvalue(res, 0, 3),
			    strcmp(PQgetvalue(res, 0, 2), "video/mp4") == 0
				    ? "mp4"
				    : "mkv");
		http_header(ctx->resp, "Accept-Ranges", "bytes");
		http_header(ctx->resp, "X-Sendfile", "%s", path);
		ctx->resp->status = 200;
	} else if (store_presign_get(
			   svc->public != NULL ? svc->public : svc->store, key,
			   (unsigned)svc->conf.url_ttl, url, sizeof(url))) {
		/* S3 answers Range on the presigned URL. */
		http_header(ctx->resp, "Location", "%s", url);
		http_error(ctx->resp, 302, "the result is at the Location URL");
	} else
		http_error(ctx->resp, 500, "the result can not be served");
out:
	PQclear(res);
}

void
faceapi_video_cancel(struct app_ctx *ctx)
{
	struct faceapi *svc = faceapi_of(ctx);
	PGresult *res = NULL, *r2 = NULL;
	char key_id[37] = "", detail[256];
	const char *p[1] = {ctx->params[0]};
	enum db_status st;

	if (!admit(ctx, false, key_id) || !find(ctx, key_id, "status", &res))
		goto out;
	/* The runner sees the change at its next progress report (about a
	 * second) and stops its ffmpegs. */
	st = db_query(ctx->db, &r2,
		      "UPDATE face_video_jobs SET status = 'cancelled', "
		      "finished_at = now(), worker_id = NULL WHERE id = "
		      "$1::uuid AND status IN ('queued', 'running') "
		      "RETURNING input_key",
		      1, p);
	if (st != DB_OK) {
		app_db_error(ctx, st);
		goto out;
	}
	if (PQntuples(r2) == 0) {
		PQclear(res);
		res = NULL;
		if (find(ctx, key_id, "status", &res))
			http_error(ctx->resp, 409,
				   "the job is already %s: nothing to cancel",
				   PQgetvalue(res, 0, 0));
		goto out;
	}
	store_delete(svc->store, PQgetvalue(r2, 0, 0), detail, sizeof(detail));
	PQclear(res);
	res = NULL;
	if (find(ctx, key_id, JOB_COLUMNS, &res))
		answer_job(ctx, 200, res);
out:
	PQclear(res);
	PQclear(r2);
}
