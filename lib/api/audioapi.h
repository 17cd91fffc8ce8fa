/* SPDX-License-Identifier: MIT */
/*
 * audioapi.h - audio read-back of session streams that declare audio
 * (/api/v1/metadata/sessions/{id}/streams/{n}/..., JWT, any user; tenant
 * rules as the rest of /metadata): the window as a WAV file, and its
 * spectrogram.  Time line, gaps, headers and limits: doc/xmbp-audio.md.
 */
#ifndef XMHUB_AUDIOAPI_H
#define XMHUB_AUDIOAPI_H

#include "web/app.h"

/* Budget of the chunks one read holds open at once (lib/domain/chunks). */
#define AUDIOAPI_CHUNK_MEMORY (256u << 20)
#define AUDIOAPI_SPECTRO_MAX_US 600000000u /* audio of one spectrogram */
#define AUDIOAPI_SPECTRO_MS 120000	   /* libsox's deadline for it */

/*
 * GET .../streams/{n}/samples?format=wav[&from_us=][&to_us=]: the window
 * as a PCM 16-bit WAV, streamed, silence in the gaps, which the
 * X-Audio-* headers report.  400 for a stream without audio, a window
 * past XMHUB_AUDIO_WAV_MAX_BYTES or a parameter of the JSON read.
 */
void audioapi_wav(struct app_ctx *ctx);

/*
 * GET .../streams/{n}/spectrogram.png[?from_us=&to_us=&width=&height=
 * &scale=]:
 * the spectrogram of the same window's WAV (at most
 * AUDIOAPI_SPECTRO_MAX_US of it), drawn by lib/core/spectro in a child
 * without secrets (so the program's main() hands SPECTRO_ARG to
 * spectro_main()); the X-Audio-* headers of the WAV.  400 as the WAV
 * and for a longer window, a width or height out of spectro's bounds or
 * a scale neither linear nor log;
 * 404 when the window holds no audio.
 */
void audioapi_spectrogram(struct app_ctx *ctx);

#endif
