/* SPDX-License-Identifier: MIT */
/*
 * metadata.c - session queries and sample read-back.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/audioapi.h"
#include "domain/chunks.h"
#include "web/dbjson.h"
#include "domain/session.h"
#include "codec/jsonform.h"
#include "codec/sampleagg.h"
#include "api/metadata.h"
#include "web/page.h"
#include "web/scope.h"
#include "store/storage.h"
#include "web/valid.h"
#include "core/log.h"

static const char *const statuses[] = {"active", "closing", "closed", "error",
				       NULL};

void
metadata_sessions_list(struct app_ctx *ctx)
{
	static const struct valid_field f[] = {
		{.name = "device_id", .type = VALID_UUID},
	};
	struct valid_value dev;
	struct session_filter filter;
	struct page pg;
	PGresult *res = NULL;
	json_object *o;
	long long total;
	enum db_status st;

	if (!page_query(ctx, statuses, &pg) ||
	    !scope_list(ctx, &filter.facility_id) ||
	    !valid_query(ctx->req, f, 1, &dev, ctx->resp))
		return;
	filter.status = pg.status;
	filter.device_id = valid_text(&dev);
	filter.limit = pg.limit;
	filter.offset = pg.offset;
	if ((st = session_list(ctx->db, &filter, &res, &total)) != DB_OK)
		app_db_error(ctx, st);
	else if ((o = page_envelope(&pg, dbjson_rows(res), total)) == NULL)
		http_error(ctx->resp, 500, "internal error");
	else
		http_json(ctx->resp, 200, o);
	PQclear(res);
}

void
metadata_session_get(struct app_ctx *ctx)
{
	PGresult *res = NULL;
	enum db_status st = session_get(ctx->db, ctx->params[0], &res);

	if (scope_found(ctx, st, res, "session"))
		http_json(ctx->resp, 200, dbjson_row(res, 0));
	PQclear(res);
}

/* What a samples request asks, checked. */
struct query {
	unsigned stream_index;
	uint64_t from, to, skip, bucket;
	bool bucketed, csv;
	long long limit;
};

static const char *const formats[] = {"json", "csv", "wav", NULL};

/* Reads and checks the path's stream index and every query parameter;
 * false with a 400 answered. */
static bool
parse_query(struct app_ctx *ctx, struct query *q)
{
	static const struct valid_field f[] = {
		{.name = "limit",
		 .type = VALID_INT,
		 .min = 1,
		 .max = METADATA_LIMIT_MAX},
	};
	const char *n = ctx->params[1];
	struct valid_value lim;
	bool present, skipped;
	int format = 0;

	if (*n == '\0' || strspn(n, "0123456789") != strlen(n) ||
	    strlen(n) > 5 || strtoul(n, NULL, 10) > 65535) {
		http_error(ctx->resp, 400,
			   "the stream index in the path must be an integer "
			   "from 0 to 65535");
		return false;
	}
	memset(q, 0, sizeof(*q));
	q->stream_index = (unsigned)strtoul(n, NULL, 10);
	q->to = UINT64_MAX;
	if (!valid_query_u64(ctx->req, "from_us", &q->from, &present,
			     ctx->resp) ||
	    !valid_query_u64(ctx->req, "to_us", &q->to, &present, ctx->resp) ||
	    !valid_query_u64(ctx->req, "skip", &q->skip, &skipped, ctx->resp) ||
	    !valid_query_u64(ctx->req, "bucket_us", &q->bucket, &q->bucketed,
			     ctx->resp) ||
	    !valid_query(ctx->req, f, 1, &lim, ctx->resp) ||
	    !valid_query_enum(ctx->req, "format", formats, &format, ctx->resp))
		return false;
	q->csv = format == 1;
	q->limit = lim.present ? lim.num : METADATA_LIMIT_DEFAULT;
	if (q->from > q->to) {
		http_error(ctx->resp, 400, "from_us must not be after to_us");
		return false;
	}
	if (q->bucketed && q->bucket == 0) {
		http_error(ctx->resp, 400, "bucket_us must be 1 or more");
		return false;
	}
	if (q->bucketed && q->skip > 0) {
		http_error(ctx->resp, 400, "skip does not go with bucket_us");
		return false;
	}
	return true;
}

/* The stream's id and value type; false with 404 or an error answered. */
static bool
fetch_stream(struct app_ctx *ctx, const struct query *q, char id[37],
	     enum sample_type *type)
{
	struct session_stream s;
	enum db_status st;
	bool found;

	if ((st = session_stream(ctx->db, ctx->params[0], q->stream_index, &s,
				 &found)) != DB_OK) {
		app_db_error(ctx, st);
		return false;
	}
	if (!found) {
		http_error(ctx->resp, 404,
			   "the session has no stream with stream_index %u",
			   q->stream_index);
		return false;
	}
	snprintf(id, 37, "%s", s.id);
	*type = s.type;
	return true;
}

/* A value as printed in a bucket: booleans as 0 and 1. */
static struct sample_value
printable(const struct sample_value *v)
{
	struct sample_value p = *v;

	if (v->type == SAMPLE_BOOL) {
		p.type = SAMPLE_I8;
		p.u.i8 = v->u.b ? 1 : 0;
	}
	return p;
}

static void
put_bucket(struct buf *out, uint64_t start, const struct sampleagg *b, bool csv,
	   bool first)
{
	struct sample_value mean = {.type = SAMPLE_F64};
	struct sample_value lo = printable(&b->min), hi = printable(&b->max);

	mean.u.f64 = sampleagg_mean(b);
	if (csv) {
		buf_printf(out, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",", start,
			   b->count, b->nan_count);
		if (b->count > 0) {
			jsonform_csv_value(out, &lo);
			buf_putc(out, ',');
			jsonform_csv_value(out, &hi);
			buf_putc(out, ',');
			jsonform_csv_value(out, &mean);
		} else
			buf_puts(out, ",,");
		buf_putc(out, '\n');
		return;
	}
	buf_printf(out,
		   "%s{\"start_us\":%" PRIu64 ",\"count\":%" PRIu64
		   ",\"nan_count\":%" PRIu64 ",\"min\":",
		   first ? "" : ",", start, b->count, b->nan_count);
	if (b->count == 0) {
		buf_puts(out, "null,\"max\":null,\"mean\":null}");
		return;
	}
	jsonform_value(out, &lo);
	buf_puts(out, ",\"max\":");
	jsonform_value(out, &hi);
	buf_puts(out, ",\"mean\":");
	jsonform_value(out, &mean);
	buf_putc(out, '}');
}

/* Where the next answer starts; has is false when nothing is left. */
struct next {
	bool has;
	uint64_t from, skip;
};

/* Samples into the body: q->limit of them, or fewer when the body would
 * pass METADATA_BODY_MAX. */
static enum chunks_status
read_samples(struct chunks_reader *r, const struct query *q, struct buf *out,
	     uint64_t *count, struct next *next)
{
	uint64_t ts, run_ts = q->from, run_n = 0;
	struct sample_value v;
	enum chunks_status st;

	while ((st = chunks_next(r, &ts, &v)) == CHUNKS_OK) {
		size_t before = out->len;

		if (ts == q->from && run_n < q->skip && ts == run_ts) {
			run_n++;
			continue;
		}
		if ((long long)*count < q->limit) {
			if (q->csv) {
				buf_printf(out, "%" PRIu64 ",", ts);
				jsonform_csv_value(out, &v);
				buf_putc(out, '\n');
			} else {
				if (*count > 0)
					buf_putc(out, ',');
				jsonform_sample(out, ts, &v);
			}
			/* Always one sample, so that paging goes on. */
			if (out->failed ||
			    (out->len > METADATA_BODY_MAX && *count > 0))
				out->len = before;
			else {
				(*count)++;
				if (ts != run_ts)
					run_n = 0;
				run_ts = ts;
				run_n++;
				continue;
			}
			out->failed = false;
		}
		next->has = true;
		next->from = ts;
		next->skip = ts == run_ts ? run_n : 0;
		return CHUNKS_END;
	}
	return st;
}

/* Buckets into the body: at most q->limit of them.  Whole chunks with
 * stored aggregates are added as they are (chunks_item()). */
static enum chunks_status
read_buckets(struct chunks_reader *r, const struct query *q,
	     enum sample_type type, struct buf *out, uint64_t *count,
	     struct next *next)
{
	struct sampleagg b, whole;
	struct sample_value v;
	enum chunks_status st;
	bool open = false;
	uint64_t ts, start, b_start = 0;

	while ((st = chunks_item(r, &ts, &v, &whole)) == CHUNKS_OK ||
	       st == CHUNKS_AGG) {
		/* Items come in time order: most are in the open bucket. */
		start = open && ts - b_start < q->bucket
				? b_start
				: q->from + (ts - q->from) / q->bucket *
						    q->bucket;
		if (open && start != b_start) {
			put_bucket(out, b_start, &b, q->csv, *count == 0);
			(*count)++;
			open = false;
		}
		if (!open) {
			if ((long long)*count == q->limit) {
				next->has = true;
				next->from = start;
				return CHUNKS_END;
			}
			sampleagg_init(&b, type);
			b_start = start;
			open = true;
		}
		if (st == CHUNKS_AGG)
			sampleagg_merge(&b, &whole);
		else
			sampleagg_add(&b, &v);
	}
	if (st == CHUNKS_END && open) {
		put_bucket(out, b_start, &b, q->csv, *count == 0);
		(*count)++;
	}
	return st;
}

/* Reads the window into the body (JSON or CSV, samples or buckets). */
static void
answer(struct app_ctx *ctx, const struct query *q, const char *stream_id,
       enum sample_type type)
{
	struct chunks_opts o = {stream_id, q->from, q->to, false,
				METADATA_CHUNK_MEMORY};
	struct chunks_reader *r = NULL;
	struct buf *out = &ctx->resp->body;
	struct next next = {false, 0, 0};
	uint64_t count = 0;
	enum chunks_status st;
	enum db_status dst;
	/* Samples may come from a replica that holds the caller's writes
	 * (doc/scaling.md "Read replica"); the primary when it fails. */
	struct db *db = db_reader(ctx->db);

	if (db != ctx->db &&
	    (db_begin(db) != DB_OK || chunks_snapshot(db) != DB_OK)) {
		db_rollback(db);
		db = ctx->db;
	}
	if (db == ctx->db && ((dst = db_begin(db)) != DB_OK ||
			      (dst = chunks_snapshot(db)) != DB_OK)) {
		db_rollback(db);
		app_db_error(ctx, dst);
		return;
	}
	if ((r = chunks_open(db, ctx->store, &o)) == NULL) {
		db_rollback(db);
		http_error(ctx->resp, 500, "internal error");
		return;
	}
	if (q->bucketed)
		chunks_buckets(r, q->bucket, type);
	out->len = 0;
	if (q->csv)
		buf_puts(out, q->bucketed ? "start_us,count,nan_count,min,max,"
					    "mean\n"
					  : "ts_us,value\n");
	else
		buf_printf(out,
			   "{\"session_id\":\"%s\",\"stream_index\":%u,"
			   "\"value_type\":\"%s\",\"from_us\":%" PRIu64
			   ",\"to_us\":%" PRIu64 ",\"%s\":[",
			   ctx->params[0], q->stream_index,
			   xmbp_sample_type_name(type), q->from, q->to,
			   q->bucketed ? "buckets" : "samples");
	st = q->bucketed ? read_buckets(r, q, type, out, &count, &next)
			 : read_samples(r, q, out, &count, &next);
	db_rollback(db);
	if (st != CHUNKS_END) {
		log_error("metadata: stream %s: %s", stream_id,
			  chunks_detail(r));
		out->len = 0;
		if (st == CHUNKS_DB)
			app_db_error(ctx, chunks_db_status(r));
		else
			http_error(ctx->resp, 500, "internal error");
		chunks_close(r);
		return;
	}
	chunks_close(r);
	if (next.has) {
		http_header(ctx->resp, "X-Next-From-Us", "%" PRIu64, next.from);
		http_header(ctx->resp, "X-Next-Skip", "%" PRIu64, next.skip);
	}
	if (q->csv) {
		ctx->resp->content_type = "text/csv; charset=utf-8";
	} else {
		buf_printf(out, "],\"count\":%" PRIu64 ",", count);
		if (q->bucketed)
			buf_printf(out, "\"bucket_us\":%" PRIu64 ",",
				   q->bucket);
		if (next.has)
			buf_printf(out,
				   "\"next_from_us\":%" PRIu64
				   ",\"next_skip\":%" PRIu64 "}",
				   next.from, next.skip);
		else
			buf_puts(out, "\"next_from_us\":null,\"next_skip\":0}");
		ctx->resp->content_type = NULL;
	}
	ctx->resp->status = 200;
}

void
metadata_samples(struct app_ctx *ctx)
{
	struct query q;
	char stream_id[37];
	enum sample_type type;
	const char *format = http_query(ctx->req, "format");

	if (format != NULL && strcmp(format, "wav") == 0) {
		audioapi_wav(ctx);
		return;
	}
	if (!parse_query(ctx, &q) ||
	    !scope_owned(ctx, session_facility, "session") ||
	    !fetch_stream(ctx, &q, stream_id, &type))
		return;
	if (q.bucketed && !sampleagg_numeric(type)) {
		http_error(ctx->resp, 400,
			   "bucket_us needs a numeric stream, not %s",
			   xmbp_sample_type_name(type));
		return;
	}
	answer(ctx, &q, stream_id, type);
}
