/* SPDX-License-Identifier: MIT */
/*
 * xmbpaudio.h - audio frames carried in XMBP `bytes` samples: the
 * device-side encoders (raw PCM, IMA-ADPCM 4:1) and the decoder.
 *
 * C99 without allocation and without libc beyond memcpy/memset, so that
 * firmware can build this file alone (it goes with the XMBP encoder).
 * One XMBP `bytes` sample holds one frame; its timestamp is the time of
 * the frame's first audio sample (doc/xmbp-audio.md).
 *
 * Frame layouts (all integers little-endian):
 *
 *   raw PCM (codec id 0x01):
 *     0      1        codec id 0x01
 *     1      2*C*N    N sample frames of C channels, signed 16-bit,
 *                     channels interleaved (s0c0 s0c1 ... s1c0 ...)
 *     length = 1 + 2*C*N, N >= 1
 *
 *   IMA-ADPCM (codec id 0x02):
 *     0      1        codec id 0x02
 *     1      4*C      per channel c = 0..C-1: predictor (s16, the
 *                     decoder's value before the first code), step index
 *                     (u8, 0..88), reserved (u8, 0)
 *     1+4*C  C*N/2    the 4-bit codes: bytes go round the channels (byte
 *                     k belongs to channel k mod C); each byte holds two
 *                     consecutive codes of its channel, the earlier in
 *                     the low nibble
 *     length = 1 + 4*C + C*N/2, N >= 2 and even
 *   Codes, the step table (89 steps) and the index table are the
 *   standard IMA ADPCM ones; every frame decodes on its own.
 */
#ifndef XMHUB_XMBPAUDIO_H
#define XMHUB_XMBPAUDIO_H

#include <stddef.h>
#include <stdint.h>

#define XMBPAUDIO_PCM 0x01	  /* codec id of raw PCM s16le */
#define XMBPAUDIO_ADPCM 0x02	  /* codec id of IMA-ADPCM 4:1 */
#define XMBPAUDIO_MAX_CHANNELS 8  /* channels a declaration may name */
#define XMBPAUDIO_FRAME_MAX 65535 /* bytes of a frame (an XMBP bytes value) */
#define XMBPAUDIO_ADPCM_STEPS 89  /* step indexes 0..88 */
/* Most 16-bit values one frame decodes to (ADPCM, one channel). */
#define XMBPAUDIO_DECODED_MAX (2 * (XMBPAUDIO_FRAME_MAX - 1 - 4))

/* Why a frame is refused (xmbpaudio_frame_check). */
enum xmbpaudio_status {
	XMBPAUDIO_OK = 0,
	XMBPAUDIO_E_EMPTY,    /* no codec id, or no audio after it */
	XMBPAUDIO_E_CODEC,    /* unknown codec id, or not the one expected */
	XMBPAUDIO_E_CHANNELS, /* channels outside 1..XMBPAUDIO_MAX_CHANNELS */
	XMBPAUDIO_E_LENGTH,   /* length does not fit the layout for C */
	XMBPAUDIO_E_STEP,     /* an ADPCM step index above 88 */
	XMBPAUDIO_E_RESERVED, /* an ADPCM header's reserved byte is not 0 */
	XMBPAUDIO_E_SPACE     /* the output does not fit (encoders, decode) */
};

/* An ADPCM encoder's state for one channel; zero it to start. */
struct xmbpaudio_adpcm {
	int16_t predictor;
	uint8_t step_index;
};

/* A short English reason for status (static text). */
const char *xmbpaudio_status_text(enum xmbpaudio_status status);

/* Bytes of a PCM frame of n sample frames of channels; 0 when it would
 * pass XMBPAUDIO_FRAME_MAX or the arguments are out of range. */
size_t xmbpaudio_pcm_size(unsigned channels, size_t n);

/* Bytes of an ADPCM frame of n (even) sample frames of channels; 0 when
 * it would pass XMBPAUDIO_FRAME_MAX or the arguments are out of range. */
size_t xmbpaudio_adpcm_size(unsigned channels, size_t n);

/*
 * Writes a PCM frame of the n interleaved sample frames at pcm (n *
 * channels values) into the cap bytes at out.  Returns the frame's
 * length, or 0 (nothing usable written) when it does not fit cap or
 * XMBPAUDIO_FRAME_MAX, or n or channels is out of range.
 */
size_t xmbpaudio_pcm_encode(unsigned channels, const int16_t *pcm, size_t n,
			    uint8_t *out, size_t cap);

/*
 * Encodes the n (even, >= 2) interleaved sample frames at pcm as one
 * ADPCM frame into the cap bytes at out, going on from state[0..channels-1]
 * (zeroed before the first frame; updated, so the next frame continues
 * the signal).  Returns the frame's length, or 0 (state unchanged) as
 * xmbpaudio_pcm_encode() does, also for an odd n.
 */
size_t xmbpaudio_adpcm_encode(struct xmbpaudio_adpcm *state, unsigned channels,
			      const int16_t *pcm, size_t n, uint8_t *out,
			      size_t cap);

/*
 * Checks the len bytes at frame as a frame of codec (XMBPAUDIO_PCM or
 * XMBPAUDIO_ADPCM) with channels channels, and puts its sample frames
 * per channel into *n.  XMBPAUDIO_OK or the first thing wrong.
 */
enum xmbpaudio_status xmbpaudio_frame_check(const uint8_t *frame, size_t len,
					    unsigned codec, unsigned channels,
					    size_t *n);

/*
 * Decodes a frame (checked as xmbpaudio_frame_check() does) into
 * interleaved 16-bit samples at out, which holds cap values; *n gets the
 * sample frames per channel (n * channels values written).
 * XMBPAUDIO_E_SPACE when they do not fit cap.
 */
enum xmbpaudio_status xmbpaudio_decode(const uint8_t *frame, size_t len,
				       unsigned codec, unsigned channels,
				       int16_t *out, size_t cap, size_t *n);

#endif
