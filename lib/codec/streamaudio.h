/* SPDX-License-Identifier: MIT */
/*
 * streamaudio.h - the server's side of audio in XMBP `bytes` streams: a
 * stream's audio declaration, the check of a batch's blocks against it,
 * the place of a frame on the time line, and the WAV header of a read.
 *
 * The frames themselves are lib/codec/xmbpaudio (device side, no libc);
 * the user's description is doc/xmbp-audio.md.
 */
#ifndef XMHUB_STREAMAUDIO_H
#define XMHUB_STREAMAUDIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "codec/sample.h"
#include "codec/xmbp.h"
#include "codec/xmbpaudio.h"

#define STREAMAUDIO_RATE_MIN 1000 /* sample_rate_hz a declaration may name */
#define STREAMAUDIO_RATE_MAX 192000
#define STREAMAUDIO_WAV_HEADER 44 /* bytes of the canonical WAV header */

/* A stream's audio declaration; codec 0 when the stream carries none. */
struct streamaudio_decl {
	uint8_t codec; /* XMBPAUDIO_PCM or XMBPAUDIO_ADPCM */
	uint8_t channels;
	uint32_t rate; /* sample frames per second */
};

/* The declaration's name of codec id ("pcm_s16le", "ima_adpcm"), NULL
 * for another id. */
const char *streamaudio_codec_name(unsigned codec);

/*
 * Reads the optional "audio" member of the stream definition def (of
 * value type type) and, when present and not null, checks it (an object
 * of codec, sample_rate_hz, channels; only for bytes) and adds
 * audio_codec, audio_sample_rate_hz and audio_channels to row.  False
 * with a reason in detail (for a 400) when it is unusable or memory ran
 * out.
 */
bool streamaudio_def(json_object *def, enum sample_type type, json_object *row,
		     char *detail, size_t dlen);

/*
 * The declaration of the stored columns audio_codec (a codec name, ""
 * for none) and audio_channels, audio_sample_rate_hz (decimal); false
 * when they do not make one (then *d is the empty declaration).
 */
bool streamaudio_decl_parse(const char *codec, const char *channels,
			    const char *rate, struct streamaudio_decl *d);

/*
 * Checks every sample of the block s against d (nothing to check when
 * d->codec is 0): each a frame of the declared codec and channels.  False
 * with detail naming the stream, the sample and what is wrong.
 */
bool streamaudio_check_block(const struct xmbp_stream *s,
			     const struct streamaudio_decl *d, char *detail,
			     size_t dlen);

/* The sample frames at rate from time 0 to us microseconds later,
 * rounded to the nearest. */
uint64_t streamaudio_frames(uint64_t us, uint32_t rate);

/* Microseconds of n sample frames at rate, rounded up. */
uint64_t streamaudio_us(uint64_t n, uint32_t rate);

/* Writes the 44-byte header of a PCM 16-bit WAV of data_bytes (at most
 * UINT32_MAX - 36) of d's rate and channels into out. */
void streamaudio_wav_header(uint8_t out[STREAMAUDIO_WAV_HEADER],
			    const struct streamaudio_decl *d,
			    uint32_t data_bytes);

#endif
