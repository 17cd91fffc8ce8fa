/* SPDX-License-Identifier: MIT */
/*
 * audioapi.c - WAV read-back of audio streams (see audioapi.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/audioapi.h"
#include "core/child.h"
#include "core/conf.h"
#include "core/fdio.h"
#include "core/spectro.h"
#include "domain/audioexport.h"
#include "domain/chunks.h"
#include "domain/session.h"
#include "web/scope.h"
#include "web/valid.h"
#include "core/log.h"

/*
 * Checks the route's session, stream index and window into *q (the
 * stream's id into id); false with the answer given (404, 403, 400 for
 * a stream without audio or a bad parameter).
 */
static bool
audio_request(struct app_ctx *ctx, struct audioexport_req *q, char id[37])
{
	static const char *const refused[] = {"skip", "bucket_us", "limit",
					      NULL};
	const char *n = ctx->params[1];
	unsigned long idx;
	struct session_stream s;
	enum db_status st;
	bool found;
	long long wav_max;

	memset(q, 0, sizeof(*q));
	if (!conf_get_int("XMHUB_AUDIO_WAV_MAX_BYTES", &wav_max)) {
		log_error("XMHUB_AUDIO_WAV_MAX_BYTES is not a number in range");
		http_error(ctx->resp, 500, "internal error");
		return false;
	}
	if (*n == '\0' || strspn(n, "0123456789") != strlen(n) ||
	    strlen(n) > 5 || strtoul(n, NULL, 10) > 65535) {
		http_error(ctx->resp, 400,
			   "the stream index in the path must be an integer "
			   "from 0 to 65535");
		return false;
	}
	for (size_t i = 0; refused[i] != NULL; i++)
		if (http_query(ctx->req, refused[i]) != NULL) {
			http_error(ctx->resp, 400,
				   "%s does not go with audio (format=wav, "
				   "spectrogram.png)",
				   refused[i]);
			return false;
		}
	if (!valid_query_u64(ctx->req, "from_us", &q->from, &q->from_given,
			     ctx->resp) ||
	    !valid_query_u64(ctx->req, "to_us", &q->to, &q->to_given,
			     ctx->resp))
		return false;
	if (q->from_given && q->to_given && q->from > q->to) {
		http_error(ctx->resp, 400, "from_us must not be after to_us");
		return false;
	}
	if (!scope_owned(ctx, session_facility, "session"))
		return false;
	idx = strtoul(n, NULL, 10);
	if ((st = session_stream(ctx->db, ctx->params[0], (unsigned)idx, &s,
				 &found)) != DB_OK) {
		app_db_error(ctx, st);
		return false;
	}
	if (!found) {
		http_error(ctx->resp, 404,
			   "the session has no stream with stream_index %lu",
			   idx);
		return false;
	}
	if (s.audio.codec == 0) {
		http_error(ctx->resp, 400,
			   "stream %lu declares no audio (see \"audio\" in "
			   "its definition)",
			   idx);
		return false;
	}
	q->decl = s.audio;
	snprintf(id, 37, "%s", s.id);
	q->stream_id = id;
	q->mem_max = AUDIOAPI_CHUNK_MEMORY;
	q->wav_max = (uint64_t)wav_max;
	return true;
}

/* Answers a failed plan (nothing sent yet). */
static void
plan_error(struct app_ctx *ctx, const struct audioexport_req *q,
	   enum audioexport_status s, enum db_status dbst)
{
	if (s == AUDIOEXPORT_TOO_LARGE)
		http_error(
			ctx->resp, 400,
			"the window makes a WAV of more than %" PRIu64
			" bytes (%" PRIu64 " seconds at %" PRIu32 " Hz, %u "
			"channels, gaps included: XMHUB_AUDIO_WAV_MAX_BYTES); "
			"narrow it with from_us and to_us",
			q->wav_max,
			q->wav_max / (2u * q->decl.channels) / q->decl.rate,
			q->decl.rate, q->decl.channels);
	else if (s == AUDIOEXPORT_DB)
		app_db_error(ctx, dbst);
	else
		http_error(ctx->resp, 500, "internal error");
}

/* The X-Audio-* headers of plan. */
static void
gap_headers(struct app_ctx *ctx, const struct audioexport_req *q,
	    const struct audioexport_plan *p)
{
	struct buf list;

	http_header(ctx->resp, "X-Audio-Start-Us", "%" PRIu64, p->origin_us);
	http_header(ctx->resp, "X-Audio-Sample-Frames", "%" PRIu64, p->frames);
	http_header(ctx->resp, "X-Audio-Gaps", "%" PRIu64, p->gaps);
	http_header(ctx->resp, "X-Audio-Silence-Us", "%" PRIu64,
		    streamaudio_us(p->silence_frames, q->decl.rate));
	if (p->listed == 0)
		return;
	buf_init(&list, 0);
	for (unsigned i = 0; i < p->listed; i++)
		buf_printf(&list, "%s%" PRIu64 "+%" PRIu64, i ? "," : "",
			   p->list[i].start_us, p->list[i].duration_us);
	buf_putc(&list, '\0');
	if (!list.failed)
		http_header(ctx->resp, "X-Audio-Gap-List", "%s",
			    (const char *)list.p);
	buf_free(&list);
}

/*
 * Opens the snapshot both walks read in and plans q's WAV into *plan;
 * false with the answer given and the snapshot closed.  The caller
 * closes it (db_rollback) after the write.
 */
static bool
open_plan(struct app_ctx *ctx, const struct audioexport_req *q,
	  struct audioexport_plan *plan)
{
	enum audioexport_status s;
	enum db_status dbst;

	if ((dbst = db_begin(ctx->db)) != DB_OK ||
	    (dbst = chunks_snapshot(ctx->db)) != DB_OK) {
		db_rollback(ctx->db);
		app_db_error(ctx, dbst);
		return false;
	}
	if ((s = audioexport_plan(ctx->db, ctx->store, q, plan, &dbst)) !=
	    AUDIOEXPORT_OK) {
		db_rollback(ctx->db);
		plan_error(ctx, q, s, dbst);
		return false;
	}
	return true;
}

static bool
fcgi_sink(void *arg, const void *p, size_t n)
{
	return http_stream_write(arg, p, n);
}

void
audioapi_wav(struct app_ctx *ctx)
{
	struct audioexport_req q;
	struct audioexport_plan plan;
	enum audioexport_status s;
	enum db_status dbst = DB_OK;
	struct slot slot = SLOTS_NONE;
	char id[37];

	/* Held until the last byte is written: a client that reads slowly
	 * keeps this process, and its facility's share, that long. */
	if (!audio_request(ctx, &q, id) || !app_render_share(ctx, &slot))
		return;
	if (!open_plan(ctx, &q, &plan))
		goto out;
	gap_headers(ctx, &q, &plan);
	if (http_stream_begin(ctx->resp, ctx->req->fcgi, 200, "audio/wav",
			      (unsigned long)audioexport_size(&q, &plan)) &&
	    /* Past the head only a short body can tell the client. */
	    (s = audioexport_write(ctx->db, ctx->store, &q, &plan, fcgi_sink,
				   ctx->req->fcgi, &dbst)) != AUDIOEXPORT_OK)
		log_error("audioapi: stream %s: WAV cut short (%d)", id,
			  (int)s);
	db_rollback(ctx->db);
out:
	slots_release(&slot);
}

/* Appends to the temporary WAV file (arg: its descriptor). */
static bool
file_sink(void *arg, const void *p, size_t n)
{
	return fdio_write_full(*(int *)arg, p, n);
}

#define WIDTH_DEFAULT 1024
#define HEIGHT_DEFAULT 257

/* Width, height and scale of the query into rq; false with a 400. */
static bool
image_size(struct app_ctx *ctx, struct spectro_req *rq)
{
	static const struct valid_field f[] = {
		{.name = "width",
		 .type = VALID_INT,
		 .min = SPECTRO_WIDTH_MIN,
		 .max = SPECTRO_WIDTH_MAX},
		{.name = "height",
		 .type = VALID_INT,
		 .min = SPECTRO_HEIGHT_MIN,
		 .max = SPECTRO_HEIGHT_MAX},
		{.name = "scale", .type = VALID_STRING, .min = 1, .max = 16},
	};
	struct valid_value v[3];

	if (!valid_query(ctx->req, f, 3, v, ctx->resp))
		return false;
	rq->width = v[0].present ? (int)v[0].num : WIDTH_DEFAULT;
	rq->height = v[1].present ? (int)v[1].num : HEIGHT_DEFAULT;
	rq->scale = SPECTRO_LINEAR;
	if (v[2].present && !spectro_scale_parse(v[2].str, &rq->scale)) {
		http_error(ctx->resp, 400, "scale must be linear or log");
		return false;
	}
	return true;
}

/* Draws the WAV file at path (dur_ms long) into the answer. */
static void
draw(struct app_ctx *ctx, const char *path, struct spectro_req *rq,
     uint64_t dur_ms)
{
	char detail[512], reason[CHILD_REASON_MAX];

	rq->from_ms = 0;
	rq->to_ms = (int64_t)(dur_ms > 0 ? dur_ms : 1);
	if (!spectro_render(path, rq, NULL, AUDIOAPI_SPECTRO_MS,
			    &ctx->resp->body, detail, sizeof(detail))) {
		log_error("audioapi: spectrogram: %s", detail);
		child_reason(detail, reason, sizeof(reason));
		ctx->resp->body.len = 0;
		http_error(ctx->resp, 500,
			   "the spectrogram could not be drawn%s%s",
			   reason[0] != '\0' ? ": " : "", reason);
		return;
	}
	ctx->resp->status = 200;
	ctx->resp->content_type = "image/png";
}

void
audioapi_spectrogram(struct app_ctx *ctx)
{
	const char *dir = getenv("TMPDIR");
	struct audioexport_req q;
	struct audioexport_plan plan;
	struct spectro_req rq;
	enum audioexport_status s;
	enum db_status dbst = DB_OK;
	struct slot slot = SLOTS_NONE;
	char id[37], path[PATH_MAX];
	int fd = -1;

	path[0] = '\0';
	if (!image_size(ctx, &rq) || !audio_request(ctx, &q, id))
		return;
	if (q.from_given && q.to_given &&
	    q.to - q.from > AUDIOAPI_SPECTRO_MAX_US) {
		http_error(ctx->resp, 400,
			   "a spectrogram is of at most %u s of audio",
			   AUDIOAPI_SPECTRO_MAX_US / 1000000);
		return;
	}
	/* Also bounds the temporary WAVs: one per slot at most. */
	if (!app_render_share(ctx, &slot))
		return;
	if (!open_plan(ctx, &q, &plan))
		goto out;
	if (plan.frames == 0) {
		http_error(ctx->resp, 404, "the window holds no audio");
		goto out;
	}
	if (streamaudio_us(plan.frames, q.decl.rate) >
	    AUDIOAPI_SPECTRO_MAX_US) {
		http_error(ctx->resp, 400,
			   "a spectrogram is of at most %u s of audio; narrow "
			   "the window with from_us and to_us",
			   AUDIOAPI_SPECTRO_MAX_US / 1000000);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/xmhub-audio-XXXXXX",
		 dir != NULL && dir[0] != '\0' ? dir : "/tmp");
	if ((fd = mkstemp(path)) < 0) {
		log_error("audioapi: %s: %s", path, strerror(errno));
		path[0] = '\0';
		http_error(ctx->resp, 500, "no temporary space");
		goto out;
	}
	if ((s = audioexport_write(ctx->db, ctx->store, &q, &plan, file_sink,
				   &fd, &dbst)) != AUDIOEXPORT_OK) {
		if (s == AUDIOEXPORT_SINK)
			log_error("audioapi: %s: %s", path, strerror(errno));
		plan_error(ctx, &q, s, dbst);
		goto out;
	}
	db_rollback(ctx->db);
	gap_headers(ctx, &q, &plan);
	draw(ctx, path, &rq, streamaudio_us(plan.frames, q.decl.rate) / 1000);
out:
	db_rollback(ctx->db);
	if (fd >= 0)
		close(fd);
	if (path[0] != '\0')
		unlink(path);
	slots_release(&slot);
}
