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

/*
 * GET .../streams/{n}/samples?format=wav[&from_us=][&to_us=]: the window
 * as a PCM 16-bit WAV, streamed, silence in the gaps, which the
 * X-Audio-* headers report.  400 for a stream without audio, a window
 * past AUDIOEXPORT_WAV_MAX or a parameter of the JSON read.
 */
void audioapi_wav(struct app_ctx *ctx);

#endif
