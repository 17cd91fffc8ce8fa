/* SPDX-License-Identifier: MIT */
/*
 * uploadviews.h - what an upload looks like: its spectrogram
 * (GET /api/v1/uploads/{id}/spectrogram.png) and waveform peaks
 * (GET /api/v1/uploads/{id}/waveform.json), for users (JWT) of the
 * upload's facility, as the other upload routes (lib/api/uploads.h).
 *
 * The transcode runner stores both beside the transcoded file, under
 * {facility_id}/uploads/{upload_id}/spectrogram.png and .../peaks
 * (jobs/transcode.c; deleted with the upload); a window of the
 * recording is drawn on demand from the original (lib/core/spectro, in
 * a child without secrets).  Answers: 404 while they are not made yet
 * (or could not be), 409 when the upload's transcoding failed, 403
 * another facility's upload.  Decisions: doc/uploads.md "Spectrogram
 * and waveform".
 */
#ifndef XMHUB_UPLOADVIEWS_H
#define XMHUB_UPLOADVIEWS_H

#include "web/app.h"

#define UPLOADVIEWS_WINDOW_MAX_MS 600000 /* audio of one drawn window */
#define UPLOADVIEWS_RENDER_MS 120000	 /* libsox's deadline for it */

/*
 * GET /api/v1/uploads/{id}/spectrogram.png: the stored image of the
 * whole recording; with from_ms and to_ms (and optionally width, 1024,
 * height, 257, and scale, linear or log) that window drawn on demand: at
 * most UPLOADVIEWS_WINDOW_MAX_MS of audio, width and height within
 * lib/core/spectro's bounds, else 400.  ETag and a long, immutable
 * Cache-Control (the images depend on the original only); a matching
 * If-None-Match is 304.
 */
void uploadviews_spectrogram(struct app_ctx *ctx);

/*
 * GET /api/v1/uploads/{id}/waveform.json?pixels_per_second=&bits=: BBC
 * audiowaveform's JSON (version 2, one channel) merged from the stored
 * peaks to rate / pixels_per_second samples per pixel (default: the
 * stored resolution, the finest; finer is 400), bits 8 or 16 (default
 * 16).  Streamed with a Content-Length known up front: memory does not
 * grow with the recording's length.  Caching as the stored spectrogram.
 */
void uploadviews_waveform(struct app_ctx *ctx);

#endif
