/* SPDX-License-Identifier: MIT */
/*
 * ingestapi.c - the ingest endpoint group (see ingestapi.h).
 */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/ingestapi.h"
#include "codec/sample.h"
#include "codec/streamaudio.h"
#include "core/conf.h"
#include "domain/ingest.h"
#include "domain/ingestq.h"
#include "domain/session.h"
#include "web/dbjson.h"
#include "web/scope.h"
#include "web/valid.h"
#include "core/log.h"

int
ingestapi_status(enum ingest_status st)
{
	switch (st) {
	case INGEST_OK:
		return 200;
	case INGEST_INVALID:
		return 400;
	case INGEST_DEVICE_INACTIVE:
		return 403;
	case INGEST_NOT_FOUND:
		return 404;
	case INGEST_NOT_ACTIVE:
		return 409;
	case INGEST_QUOTA:
		/* As an upload past the quota (doc/storage.md). */
		return 413;
	case INGEST_BUSY:
	case INGEST_UNAVAILABLE:
	case INGEST_DEFERRED: /* the queue commits it again: not an answer */
		return 503;
	case INGEST_ERROR:
		break;
	}
	return 500;
}

void
ingestapi_error(struct http_resp *resp, enum ingest_status st,
		const char *detail)
{
	http_error(resp, ingestapi_status(st), "%s", detail);
}

/* --- session creation --- */

/* streams is checked by check_streams(): valid has no array of objects. */
enum { P_UID, P_NAME, P_META, NPOST };

static const struct valid_field post_fields[NPOST] = {
	[P_UID] = {.name = "device_uid",
		   .type = VALID_INT,
		   .flags = VALID_REQUIRED,
		   .min = 0,
		   .max = 4294967295LL},
	[P_NAME] = {.name = "name",
		    .type = VALID_STRING,
		    .flags = VALID_NULLABLE,
		    .min = 0,
		    .max = INGEST_NAME_MAX},
	[P_META] = {.name = "metadata",
		    .type = VALID_OBJECT,
		    .flags = VALID_NULLABLE},
};

enum { S_INDEX, S_NAME, S_TYPE, S_UNIT, S_DESC, NSTREAM };

static const struct valid_field stream_fields[NSTREAM] = {
	[S_INDEX] = {.name = "stream_index",
		     .type = VALID_INT,
		     .flags = VALID_REQUIRED,
		     .min = 0,
		     .max = 65535},
	[S_NAME] = {.name = "name",
		    .type = VALID_STRING,
		    .flags = VALID_REQUIRED,
		    .min = 1,
		    .max = INGEST_NAME_MAX},
	[S_TYPE] = {.name = "value_type",
		    .type = VALID_STRING,
		    .flags = VALID_REQUIRED,
		    .min = 1,
		    .max = 16},
	[S_UNIT] = {.name = "unit",
		    .type = VALID_STRING,
		    .flags = VALID_NULLABLE,
		    .min = 0,
		    .max = 100},
	[S_DESC] = {.name = "description",
		    .type = VALID_STRING,
		    .flags = VALID_NULLABLE,
		    .min = 0,
		    .max = 2000},
};

/* sample_rate_hz of stream object o, when given and not null, into
 * *rate; false with a 400 when it is not a positive f32. */
static bool
stream_rate(json_object *o, double *rate, bool *given, struct http_resp *resp)
{
	json_object *r;
	double v;

	*given = false;
	if (!json_object_object_get_ex(o, "sample_rate_hz", &r) || r == NULL)
		return true;
	if (!json_object_is_type(r, json_type_int) &&
	    !json_object_is_type(r, json_type_double))
		goto bad;
	v = json_object_get_double(r);
	/* Below FLT_MIN PostgreSQL's real would refuse it as an underflow. */
	if (!isfinite(v) || v < FLT_MIN || v > FLT_MAX)
		goto bad;
	*rate = v;
	*given = true;
	return true;
bad:
	http_error(resp, 400,
		   "sample_rate_hz must be a positive number (an f32)");
	return false;
}

/*
 * Checks the streams array of the request (1..INGEST_MAX_STREAMS stream
 * definitions with unique stream_index values) and builds the JSON array
 * the insert reads, into *out; false with a 400 in resp.
 */
static bool
check_streams(json_object *body, json_object **out, struct http_resp *resp)
{
	static const char *const keys[NSTREAM] = {
		"stream_index", "name", "value_type", "unit", "description"};
	uint8_t seen[65536 / 8];
	json_object *arr, *rows = NULL, *row;
	struct valid_value v[NSTREAM];
	enum sample_type type;
	char detail[160];
	size_t n, i;
	double rate;
	bool rate_given;

	*out = NULL;
	if (!json_object_object_get_ex(body, "streams", &arr) ||
	    !json_object_is_type(arr, json_type_array) ||
	    (n = json_object_array_length(arr)) == 0 ||
	    n > INGEST_MAX_STREAMS) {
		http_error(resp, 400,
			   "streams must be an array of 1 to %d stream "
			   "definitions",
			   INGEST_MAX_STREAMS);
		return false;
	}
	memset(seen, 0, sizeof(seen));
	if ((rows = json_object_new_array()) == NULL)
		goto nomem;
	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);

		if (!json_object_is_type(o, json_type_object)) {
			http_error(resp, 400, "streams[%zu] must be an object",
				   i);
			goto fail;
		}
		if (!valid_body(o, stream_fields, NSTREAM, v, resp) ||
		    !stream_rate(o, &rate, &rate_given, resp))
			goto fail;
		if (!xmbp_sample_type_from_name(v[S_TYPE].str, &type)) {
			http_error(resp, 400,
				   "streams[%zu]: value_type must be one of "
				   "f32, f64, i32, i64, bool, string, bytes, "
				   "f64_array, f32_array, i32_array, json, "
				   "i16, i8",
				   i);
			goto fail;
		}
		if (seen[v[S_INDEX].num / 8] & (1u << (v[S_INDEX].num % 8))) {
			http_error(resp, 400,
				   "stream_index %lld is declared twice",
				   v[S_INDEX].num);
			goto fail;
		}
		seen[v[S_INDEX].num / 8] |=
			(uint8_t)(1u << (v[S_INDEX].num % 8));
		if ((row = json_object_new_object()) == NULL ||
		    json_object_array_add(rows, row) != 0) {
			json_object_put(row);
			goto nomem;
		}
		json_object_object_add(row, keys[S_INDEX],
				       json_object_new_int64(v[S_INDEX].num));
		for (int k = S_NAME; k < NSTREAM; k++)
			if (valid_text(&v[k]) != NULL)
				json_object_object_add(
					row, keys[k],
					json_object_new_string(v[k].str));
		if (rate_given)
			json_object_object_add(row, "sample_rate_hz",
					       json_object_new_double(rate));
		if (!streamaudio_def(o, type, row, detail, sizeof(detail))) {
			http_error(resp, 400, "streams[%zu]: %s", i, detail);
			goto fail;
		}
	}
	*out = rows;
	return true;
nomem:
	http_error(resp, 500, "out of memory");
fail:
	json_object_put(rows);
	return false;
}

/* Answers status with session id (its object). */
static void
answer_session(struct app_ctx *ctx, int status, const char *id)
{
	PGresult *res = NULL;
	enum db_status st;

	if ((st = session_get(ctx->db, id, &res)) != DB_OK)
		app_db_error(ctx, st);
	else if (PQntuples(res) == 0)
		http_error(ctx->resp, 404, "ingest session not found");
	else
		http_json(ctx->resp, status, dbjson_row(res, 0));
	PQclear(res);
}

void
ingestapi_post_session(struct app_ctx *ctx)
{
	struct valid_value v[NPOST];
	json_object *body, *streams = NULL;
	const char *meta, *list;
	char id[UUID_LEN + 1], detail[128];
	enum ingest_status st;

	if ((body = valid_json_body(ctx->req, post_fields, NPOST, v,
				    ctx->resp)) == NULL)
		return;
	if (!check_streams(body, &streams, ctx->resp))
		goto out;
	meta = v[P_META].present && !v[P_META].is_null
		       ? json_object_to_json_string_ext(v[P_META].json,
							JSON_C_TO_STRING_PLAIN)
		       : NULL;
	list = json_object_to_json_string_ext(streams, JSON_C_TO_STRING_PLAIN);
	if (list == NULL) {
		http_error(ctx->resp, 500, "out of memory");
		goto out;
	}
	st = ingest_session_create(
		ctx->db, ctx->who.facility_id, (uint32_t)v[P_UID].num,
		valid_text(&v[P_NAME]), meta, list, id, detail, sizeof(detail));
	if (st != INGEST_OK)
		ingestapi_error(ctx->resp, st, detail);
	else
		answer_session(ctx, 201, id);
out:
	json_object_put(streams);
	json_object_put(body);
}

/* --- data --- */

int ingestapi_threads = 1;

/* The process's group commit. */
static struct ingestq *queue;

bool
ingestapi_init(const char *name)
{
	struct ingestq_conf conf;
	char detail[128];
	const char *url = conf_str("XMHUB_DATABASE_URL", NULL);

	(void)name; /* lib/core/log names the program */
	if (!ingestq_settings(&conf, &ingestapi_threads, detail,
			      sizeof(detail))) {
		log_error("%s", detail);
		return false;
	}
	/* app_main_threads says so when the URL is missing. */
	if (url == NULL)
		return true;
	return (queue = ingestq_start(url, &conf)) != NULL;
}

void
ingestapi_finish(void)
{
	ingestq_stop(queue);
	queue = NULL;
}

void
ingestapi_post_data(struct app_ctx *ctx)
{
	struct ingest_job job = {0};
	json_object *o;

	/* The body, then the commit round: other requests meanwhile. */
	app_unlock(ctx);
	if (!http_read_body(ctx->req, INGESTAPI_HTTP_MAX, ctx->resp))
		return;
	job.facility_id = ctx->who.facility_id;
	job.session_id = ctx->params[0];
	job.batch = ctx->req->body.p;
	job.len = ctx->req->body.len;
	if (queue == NULL) {
		http_error(ctx->resp, 500, "internal error");
		return;
	}
	if (ingestq_submit(queue, &job) != INGEST_OK) {
		/* A full queue empties within a round or two. */
		if (job.status == INGEST_BUSY)
			http_header(ctx->resp, "Retry-After", "1");
		ingestapi_error(ctx->resp, job.status, job.detail);
		return;
	}
	if ((o = json_object_new_object()) != NULL) {
		json_object_object_add(
			o, "accepted_samples",
			json_object_new_int64(job.ack.accepted_samples));
		json_object_object_add(
			o, "missed_batches",
			json_object_new_int64(job.ack.missed_batches));
	}
	http_json(ctx->resp, 200, o);
}

void
ingestapi_post_close(struct app_ctx *ctx)
{
	char detail[128];
	enum ingest_status st;

	if (!scope_owned(ctx, session_facility, "ingest session"))
		return;
	st = ingest_close(ctx->db, ctx->params[0], detail, sizeof(detail));
	if (st != INGEST_OK)
		ingestapi_error(ctx->resp, st, detail);
	else
		answer_session(ctx, 200, ctx->params[0]);
}
