/* SPDX-License-Identifier: MIT */
/*
 * streams.h - GET /api/v1/streams/{upload_id}: the audio of an upload's
 * latest completed transcode, for players.
 *
 * From the filesystem store the file is handed to lighttpd with
 * X-Sendfile (the bytes never pass through this process; lighttpd
 * answers Range itself); from S3, or with XMHUB_SENDFILE=false (a shared
 * host without mod_xsendfile), the bytes (or the requested range) are
 * streamed through the process in bounded pieces.  Range is one range
 * (bytes=a-b, a-, -n): 206 with Content-Range, 416 with
 * "Content-Range: bytes * /size" when unsatisfiable or malformed (as
 * lighttpd does); another unit or several ranges are answered 200 (the
 * whole file), to which lighttpd applies several ranges itself.  See
 * doc/streams.md.
 */
#ifndef XMHUB_STREAMS_H
#define XMHUB_STREAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "web/app.h"

enum streams_range {
	STREAMS_WHOLE,	    /* no Range, another unit, several: 200 */
	STREAMS_PARTIAL,    /* 206: [*off, *off + *len) */
	STREAMS_UNSATISFIED /* 416: outside the file, or malformed */
};

/* What the Range header value h (NULL when absent) asks of a file of
 * size bytes; *off and *len are set for STREAMS_PARTIAL. */
enum streams_range streams_parse_range(const char *h, uint64_t size,
				       uint64_t *off, uint64_t *len);

/* GET /api/v1/streams/{id}: 200/206 audio; 403 another facility's
 * upload; 404 no such upload or no completed transcode; 416. */
void streams_get(struct app_ctx *ctx);

#endif
