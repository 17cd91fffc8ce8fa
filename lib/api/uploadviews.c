/* SPDX-License-Identifier: MIT */
/*
 * uploadviews.c - an upload's spectrogram and waveform (uploadviews.h).
 */
#include "config.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/uploadviews.h"
#include "codec/waveform.h"
#include "core/child.h"
#include "core/spectro.h"
#include "domain/upload.h"
#include "store/storage.h"
#include "web/scope.h"
#include "web/valid.h"
#include "core/log.h"

#define KEY_MAX 160
/* Both kinds of image depend on the original only, which never changes:
 * a year, and no revalidation. */
#define CACHE_FOREVER "private, max-age=31536000, immutable"
/* Changes when the renderer draws differently, so caches let go. */
#define VIEWS_VERSION "v1"
#define WIDTH_DEFAULT 1024
#define HEIGHT_DEFAULT 257
#define OUT_PIECE 65536 /* bytes of JSON sent at a time */

/* Loads upload {id} into *u: false with 404, 403 or the database's
 * error answered. */
static bool
load(struct app_ctx *ctx, struct upload_ref *u)
{
	bool found;
	enum db_status st = upload_ref(ctx->db, ctx->params[0], u, &found);

	return scope_known(ctx, st, found, u->facility_id, "upload");
}

/* Answers why what (the spectrogram, the waveform) is not there. */
static void
absent(struct app_ctx *ctx, const struct upload_ref *u, const char *what)
{
	if (strcmp(u->status, "failed") == 0)
		http_error(ctx->resp, 409,
			   "the upload's transcoding failed: it has no %s",
			   what);
	else if (strcmp(u->status, "completed") == 0)
		http_error(ctx->resp, 404,
			   "the upload has no %s: it could not be made "
			   "(retranscode to try again)",
			   what);
	else
		http_error(ctx->resp, 404, "the %s is not made yet", what);
}

/* ETag etag and the caching headers of an answer that succeeds (an
 * error's are not cached). */
static void
cache_for_good(struct app_ctx *ctx, const char *etag)
{
	http_header(ctx->resp, "ETag", "%s", etag);
	http_header(ctx->resp, "Cache-Control", CACHE_FOREVER);
}

/* True when the client holds etag already (If-None-Match), then
 * answered 304. */
static bool
not_modified(struct app_ctx *ctx, const char *etag)
{
	const char *inm =
		FCGX_GetParam("HTTP_IF_NONE_MATCH", ctx->req->fcgi->envp);

	if (inm == NULL || (strstr(inm, etag) == NULL && strcmp(inm, "*") != 0))
		return false;
	cache_for_good(ctx, etag);
	ctx->resp->status = 304;
	return true;
}

/* Logs a store failure of key and answers 503. */
static void
store_down(struct app_ctx *ctx, const char *key, const char *detail)
{
	log_error("uploads: %s: %s", key, detail);
	http_error(ctx->resp, 503, "the object store is unavailable");
}

/* --- spectrogram --------------------------------------------------------- */

enum { Q_FROM, Q_TO, Q_WIDTH, Q_HEIGHT, Q_SCALE, NQ };

static const struct valid_field window_fields[NQ] = {
	[Q_FROM] = {.name = "from_ms", .type = VALID_INT, .max = INT64_MAX},
	[Q_TO] = {.name = "to_ms",
		  .type = VALID_INT,
		  .min = 1,
		  .max = INT64_MAX},
	[Q_WIDTH] = {.name = "width",
		     .type = VALID_INT,
		     .min = SPECTRO_WIDTH_MIN,
		     .max = SPECTRO_WIDTH_MAX},
	[Q_HEIGHT] = {.name = "height",
		      .type = VALID_INT,
		      .min = SPECTRO_HEIGHT_MIN,
		      .max = SPECTRO_HEIGHT_MAX},
	[Q_SCALE] = {.name = "scale",
		     .type = VALID_STRING,
		     .min = 1,
		     .max = 16},
};

/* The stored image of the whole recording. */
static void
stored_spectrogram(struct app_ctx *ctx, const struct upload_ref *u)
{
	char key[KEY_MAX], etag[80], detail[256];
	struct http_resp *resp = ctx->resp;
	uint64_t size;

	snprintf(key, sizeof(key), "%s/uploads/%s/spectrogram.png",
		 u->facility_id, u->id);
	switch (store_size(ctx->store, key, &size, detail, sizeof(detail))) {
	case STORE_OK:
		break;
	case STORE_NOT_FOUND:
		absent(ctx, u, "spectrogram");
		return;
	default:
		store_down(ctx, key, detail);
		return;
	}
	snprintf(etag, sizeof(etag), "\"%s-spectrogram-" VIEWS_VERSION "\"",
		 u->id);
	if (not_modified(ctx, etag))
		return;
	if (store_get_buf(ctx->store, key, SPECTRO_PNG_MAX, &resp->body, detail,
			  sizeof(detail)) != STORE_OK) {
		resp->body.len = 0;
		resp->body.failed = false;
		store_down(ctx, key, detail);
		return;
	}
	cache_for_good(ctx, etag);
	resp->status = 200;
	resp->content_type = "image/png";
}

/*
 * The local file of the original into path: the object itself (the
 * filesystem store), else a copy in a temporary directory (S3) into tmp,
 * which the caller removes.  False with the answer given.
 */
static bool
original(struct app_ctx *ctx, const struct upload_ref *u, char *path,
	 size_t len, char *tmp, size_t tlen)
{
	const char *dir = getenv("TMPDIR");
	char key[KEY_MAX], detail[256];

	snprintf(key, sizeof(key), "%s/uploads/%s/original", u->facility_id,
		 u->id);
	tmp[0] = '\0';
	if (store_local_path(ctx->store, key, path, len))
		return true;
	snprintf(tmp, tlen, "%s/xmhub-spectro-XXXXXX",
		 dir != NULL && dir[0] != '\0' ? dir : "/tmp");
	if (mkdtemp(tmp) == NULL) {
		tmp[0] = '\0';
		http_error(ctx->resp, 500, "no temporary space");
		return false;
	}
	snprintf(path, len, "%s/original", tmp);
	switch (store_get_file(ctx->store, key, path, detail, sizeof(detail))) {
	case STORE_OK:
		return true;
	case STORE_NOT_FOUND:
		http_error(ctx->resp, 404, "the original file is missing");
		return false;
	default:
		store_down(ctx, key, detail);
		return false;
	}
}

/* Draws window v of upload u on demand. */
static void
drawn_spectrogram(struct app_ctx *ctx, const struct upload_ref *u,
		  const struct valid_value *v)
{
	struct spectro_req rq;
	struct slot slot = SLOTS_NONE;
	char path[PATH_MAX], tmp[PATH_MAX], etag[160], detail[512];
	char reason[CHILD_REASON_MAX];

	if (!v[Q_FROM].present || !v[Q_TO].present) {
		http_error(ctx->resp, 400,
			   "from_ms and to_ms are both needed for a window");
		return;
	}
	rq.from_ms = v[Q_FROM].num;
	rq.to_ms = v[Q_TO].num;
	rq.width = v[Q_WIDTH].present ? (int)v[Q_WIDTH].num : WIDTH_DEFAULT;
	rq.height = v[Q_HEIGHT].present ? (int)v[Q_HEIGHT].num : HEIGHT_DEFAULT;
	rq.scale = SPECTRO_LINEAR;
	if (rq.to_ms <= rq.from_ms) {
		http_error(ctx->resp, 400, "to_ms must be after from_ms");
		return;
	}
	if (rq.to_ms - rq.from_ms > UPLOADVIEWS_WINDOW_MAX_MS) {
		http_error(ctx->resp, 400, "a window is at most %d ms of audio",
			   UPLOADVIEWS_WINDOW_MAX_MS);
		return;
	}
	if (v[Q_SCALE].present &&
	    !spectro_scale_parse(v[Q_SCALE].str, &rq.scale)) {
		http_error(ctx->resp, 400, "scale must be linear or log");
		return;
	}
	if (strcmp(u->status, "failed") == 0 || u->duration_ms < 0) {
		absent(ctx, u, "audio to draw");
		return;
	}
	if (rq.from_ms >= u->duration_ms) {
		http_error(ctx->resp, 400,
			   "from_ms is past the end of the recording (%" PRId64
			   " ms)",
			   u->duration_ms);
		return;
	}
	if (rq.to_ms > u->duration_ms)
		rq.to_ms = u->duration_ms;
	snprintf(etag, sizeof(etag),
		 "\"%s-spectrogram-%" PRId64 "-%" PRId64
		 "-%dx%d-%s-" VIEWS_VERSION "\"",
		 u->id, rq.from_ms, rq.to_ms, rq.width, rq.height,
		 rq.scale == SPECTRO_LOG ? "log" : "linear");
	if (not_modified(ctx, etag))
		return;
	tmp[0] = '\0';
	if (!app_render_share(ctx, &slot) ||
	    !original(ctx, u, path, sizeof(path), tmp, sizeof(tmp)))
		goto out;
	if (!spectro_render(path, &rq, NULL, UPLOADVIEWS_RENDER_MS,
			    &ctx->resp->body, detail, sizeof(detail))) {
		log_error("uploads: spectrogram of %s: %s", u->id, detail);
		child_reason(detail, reason, sizeof(reason));
		ctx->resp->body.len = 0;
		http_error(ctx->resp, 500,
			   "the spectrogram could not be drawn%s%s",
			   reason[0] != '\0' ? ": " : "", reason);
		goto out;
	}
	cache_for_good(ctx, etag);
	ctx->resp->status = 200;
	ctx->resp->content_type = "image/png";
out:
	if (tmp[0] != '\0') {
		unlink(path);
		rmdir(tmp);
	}
	slots_release(&slot);
}

void
uploadviews_spectrogram(struct app_ctx *ctx)
{
	struct valid_value v[NQ];
	struct upload_ref u;
	bool window = false;

	if (!valid_query(ctx->req, window_fields, NQ, v, ctx->resp))
		return;
	for (int i = 0; i < NQ; i++)
		window = window || v[i].present;
	if (!load(ctx, &u))
		return;
	if (window)
		drawn_spectrogram(ctx, &u, v);
	else
		stored_spectrogram(ctx, &u);
}

/* --- waveform ------------------------------------------------------------ */

/* The JSON being streamed. */
struct wave {
	struct app_ctx *ctx;
	struct waveform_merge m;
	uint8_t head[WAVEFORM_HEAD_LEN], carry[WAVEFORM_PIXEL_LEN];
	size_t nhead, ncarry;
	int bits, width; /* of a number, padded */
	uint64_t values; /* numbers written */
	char out[OUT_PIECE + 64];
	size_t len;
	bool gone; /* the client went away */
};

static int
head_sink(void *arg, const void *p, size_t n)
{
	struct wave *w = arg;
	size_t take = sizeof(w->head) - w->nhead;

	memcpy(w->head + w->nhead, p, n < take ? n : take);
	w->nhead += n < take ? n : take;
	return 0;
}

static void
flush(struct wave *w)
{
	if (!w->gone && w->len > 0 &&
	    !http_stream_write(w->ctx->req->fcgi, w->out, w->len))
		w->gone = true;
	w->len = 0;
}

/* Writes one number, padded to w->width, after a comma but the first. */
static void
number(struct wave *w, int v)
{
	if (w->bits == 8)
		v >>= 8; /* -32768..32767 to -128..127 */
	w->len += (size_t)snprintf(w->out + w->len, sizeof(w->out) - w->len,
				   "%s%*d", w->values > 0 ? "," : "", w->width,
				   v);
	w->values++;
	if (w->len >= OUT_PIECE)
		flush(w);
}

static bool
emit(void *arg, int16_t min, int16_t max)
{
	struct wave *w = arg;

	number(w, min);
	number(w, max);
	return !w->gone;
}

static int
pixel_sink(void *arg, const void *p, size_t n)
{
	struct wave *w = arg;
	const uint8_t *b = p;

	while (n > 0) {
		size_t take = WAVEFORM_PIXEL_LEN - w->ncarry;

		if (take > n)
			take = n;
		memcpy(w->carry + w->ncarry, b, take);
		w->ncarry += take;
		b += take;
		n -= take;
		if (w->ncarry < WAVEFORM_PIXEL_LEN)
			break;
		w->ncarry = 0;
		if (!waveform_merge_feed(&w->m, w->carry, emit, w))
			return 1;
	}
	return 0;
}

static const char *const bit_names[] = {"8", "16", NULL};

void
uploadviews_waveform(struct app_ctx *ctx)
{
	struct waveform_head h;
	struct wave *w = NULL;
	char key[KEY_MAX], etag[120], detail[256], pre[256];
	uint64_t pps = 0, spp, length, body;
	struct upload_ref u;
	bool given;
	int bits = 1, plen;

	if (!valid_query_u64(ctx->req, "pixels_per_second", &pps, &given,
			     ctx->resp) ||
	    !valid_query_enum(ctx->req, "bits", bit_names, &bits, ctx->resp))
		return;
	if (given && pps == 0) {
		http_error(ctx->resp, 400,
			   "pixels_per_second must be at "
			   "least 1");
		return;
	}
	if (!load(ctx, &u))
		return;
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		http_error(ctx->resp, 500, "out of memory");
		return;
	}
	w->ctx = ctx;
	w->bits = bits == 0 ? 8 : 16;
	w->width = w->bits == 8 ? 4 : 6;
	snprintf(key, sizeof(key), "%s/uploads/%s/peaks", u.facility_id, u.id);
	switch (store_get(ctx->store, key, 0, WAVEFORM_HEAD_LEN, head_sink, w,
			  detail, sizeof(detail))) {
	case STORE_OK:
		break;
	case STORE_NOT_FOUND:
		absent(ctx, &u, "waveform");
		goto out;
	default:
		store_down(ctx, key, detail);
		goto out;
	}
	if (w->nhead < WAVEFORM_HEAD_LEN || !waveform_head_get(w->head, &h)) {
		log_error("uploads: %s: not stored peaks", key);
		http_error(ctx->resp, 500, "the stored waveform is damaged");
		goto out;
	}
	/* audiowaveform's samples per pixel: rate / pixels per second. */
	spp = given ? h.sample_rate / pps : h.spp;
	if (spp < h.spp) {
		http_error(ctx->resp, 400,
			   "pixels_per_second is at most %" PRIu32
			   " for this recording",
			   h.sample_rate / h.spp);
		goto out;
	}
	waveform_merge_init(&w->m, &h,
			    (uint32_t)(spp > UINT32_MAX ? UINT32_MAX : spp));
	length = waveform_merge_length(&w->m);
	snprintf(etag, sizeof(etag),
		 "\"%s-waveform-%" PRIu64 "-%d-" VIEWS_VERSION "\"", u.id, spp,
		 w->bits);
	if (not_modified(ctx, etag))
		goto out;
	plen = snprintf(pre, sizeof(pre),
			"{\"version\":2,\"channels\":1,\"sample_rate\":%" PRIu32
			",\"samples_per_pixel\":%" PRIu64
			",\"bits\":%d,\"length\":%" PRIu64 ",\"data\":[",
			h.sample_rate, spp, w->bits, length);
	/* Numbers of a fixed width: the length is known before the peaks
	 * are read, so they are never held whole. */
	body = (uint64_t)plen + 2 * length * (uint64_t)w->width +
	       (length > 0 ? 2 * length - 1 : 0) + 2;
	cache_for_good(ctx, etag);
	if (!http_stream_begin(ctx->resp, ctx->req->fcgi, 200,
			       "application/json", (unsigned long)body))
		goto out;
	memcpy(w->out, pre, (size_t)plen);
	w->len = (size_t)plen;
	if (store_get(ctx->store, key, WAVEFORM_HEAD_LEN, UINT64_MAX,
		      pixel_sink, w, detail, sizeof(detail)) != STORE_OK &&
	    !w->gone)
		log_error("uploads: %s: %s", key, detail);
	waveform_merge_finish(&w->m, emit, w);
	/* Stored peaks cut short: the promised length, as silence. */
	while (!w->gone && w->values < 2 * length)
		number(w, 0);
	if (w->len + 2 <= sizeof(w->out)) {
		memcpy(w->out + w->len, "]}", 2);
		w->len += 2;
	}
	flush(w);
out:
	free(w);
}
