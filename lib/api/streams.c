/* SPDX-License-Identifier: MIT */
/*
 * streams.c - playback of transcoded audio.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/upload.h"
#include "web/scope.h"
#include "store/storage.h"
#include "api/streams.h"
#include "core/conf.h"
#include "core/log.h"
#include "core/settings.h"

/* A decimal without sign into *v; the end of it, or NULL. */
static const char *
number(const char *s, uint64_t *v)
{
	*v = 0;
	if (*s < '0' || *s > '9')
		return NULL;
	for (; *s >= '0' && *s <= '9'; s++) {
		uint64_t d = (uint64_t)(*s - '0');

		if (*v > (UINT64_MAX - d) / 10)
			return NULL;
		*v = *v * 10 + d;
	}
	return s;
}

enum streams_range
streams_parse_range(const char *h, uint64_t size, uint64_t *off, uint64_t *len)
{
	uint64_t a, b;
	const char *p;

	if (h == NULL || strncmp(h, "bytes=", 6) != 0 || strchr(h, ',') != NULL)
		return STREAMS_WHOLE;
	p = h + 6;
	if (*p == '-') {
		/* The last b bytes. */
		if ((p = number(p + 1, &b)) == NULL || *p != '\0' || b == 0 ||
		    size == 0)
			return STREAMS_UNSATISFIED;
		*len = b < size ? b : size;
		*off = size - *len;
		return STREAMS_PARTIAL;
	}
	/* lighttpd answers 416 to a malformed byte range: so do we. */
	if ((p = number(p, &a)) == NULL || *p++ != '-')
		return STREAMS_UNSATISFIED;
	if (*p == '\0')
		b = UINT64_MAX;
	else if ((p = number(p, &b)) == NULL || *p != '\0' || b < a)
		return STREAMS_UNSATISFIED;
	if (a >= size)
		return STREAMS_UNSATISFIED;
	*off = a;
	*len = (b < size - 1 ? b : size - 1) - a + 1;
	return STREAMS_PARTIAL;
}

/* Where the S3 bytes go: the FastCGI answer. */
static int
sink(void *arg, const void *p, size_t n)
{
	return http_stream_write(arg, p, n) ? 0 : 1;
}

/* XMHUB_SENDFILE: whether the web server sends the store's files (an
 * unreadable value is the default's, true). */
static bool
sendfile_on(void)
{
	bool on;

	return !settings_bool(conf_get("XMHUB_SENDFILE"), &on) || on;
}

/* Answers 416 for a file of size bytes. */
static void
unsatisfied(struct app_ctx *ctx, uint64_t size)
{
	http_header(ctx->resp, "Content-Range", "bytes */%" PRIu64, size);
	http_error(ctx->resp, 416, "the range is outside the stream");
}

/* Streams key of size bytes (from S3, or a file without X-Sendfile) as
 * the answer. */
static void
stream_bytes(struct app_ctx *ctx, const char *key, const char *type,
	     uint64_t size)
{
	const char *range = FCGX_GetParam("HTTP_RANGE", ctx->req->fcgi->envp);
	uint64_t off = 0, len = size;
	char detail[256];
	bool begun;

	switch (streams_parse_range(range, size, &off, &len)) {
	case STREAMS_UNSATISFIED:
		unsatisfied(ctx, size);
		return;
	case STREAMS_PARTIAL:
		http_header(ctx->resp, "Content-Range",
			    "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, off,
			    off + len - 1, size);
		begun = http_stream_begin(ctx->resp, ctx->req->fcgi, 206, type,
					  (unsigned long)len);
		break;
	default:
		begun = http_stream_begin(ctx->resp, ctx->req->fcgi, 200, type,
					  (unsigned long)size);
	}
	/* Not begun: a header failed and http_send() answers 500.  Begun,
	 * the head is sent: a failure now can only cut the body short,
	 * which the client sees against Content-Length. */
	if (begun && len > 0 &&
	    store_get(ctx->store, key, off, len, sink, ctx->req->fcgi, detail,
		      sizeof(detail)) != STORE_OK)
		log_error("streams: %s: %s", key, detail);
}

void
streams_get(struct app_ctx *ctx)
{
	char key[600], path[4096], detail[256];
	struct upload_stream s;
	const char *type;
	enum db_status st;
	uint64_t size;
	bool found, mp4;

	st = upload_stream(ctx->db, ctx->params[0], &s, &found);
	if (!scope_known(ctx, st, found, s.facility_id, "upload"))
		return;
	if (s.job_id[0] == '\0') {
		http_error(ctx->resp, 404,
			   "the upload has no completed transcode");
		return;
	}
	mp4 = strcmp(s.container, "mp4") == 0;
	type = mp4 ? "audio/mp4" : "audio/webm";
	snprintf(key, sizeof(key), "%s/uploads/%s/%s.%s", s.facility_id, s.id,
		 s.job_id, mp4 ? "m4a" : "webm");
	switch (store_size(ctx->store, key, &size, detail, sizeof(detail))) {
	case STORE_OK:
		break;
	case STORE_NOT_FOUND:
		http_error(ctx->resp, 404, "the transcoded file is missing");
		return;
	default:
		log_error("streams: %s: %s", key, detail);
		http_error(ctx->resp, 503, "the object store is unavailable");
		return;
	}
	http_header(ctx->resp, "Cache-Control", "private, max-age=3600");
	http_header(ctx->resp, "Accept-Ranges", "bytes");
	if (sendfile_on() &&
	    store_local_path(ctx->store, key, path, sizeof(path))) {
		uint64_t off, len;

		/* lighttpd sends the file and answers a satisfiable Range
		 * itself, but its 416 lacks Content-Range: that one is ours. */
		if (streams_parse_range(
			    FCGX_GetParam("HTTP_RANGE", ctx->req->fcgi->envp),
			    size, &off, &len) == STREAMS_UNSATISFIED) {
			unsatisfied(ctx, size);
			return;
		}
		http_header(ctx->resp, "Content-Type", "%s", type);
		http_header(ctx->resp, "X-Sendfile", "%s", path);
		ctx->resp->status = 200;
	} else
		stream_bytes(ctx, key, type, size);
}
