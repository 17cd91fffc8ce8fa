/* SPDX-License-Identifier: MIT */
/*
 * xmbpaudio.c - audio frames in XMBP bytes samples (see xmbpaudio.h).
 *
 * Freestanding on purpose: no allocation, nothing from libc.
 */
#include "codec/xmbpaudio.h"

/* The standard IMA ADPCM tables. */
static const int16_t step_table[XMBPAUDIO_ADPCM_STEPS] = {
	7,     8,     9,     10,    11,	   12,	  13,	 14,	16,    17,
	19,    21,    23,    25,    28,	   31,	  34,	 37,	41,    45,
	50,    55,    60,    66,    73,	   80,	  88,	 97,	107,   118,
	130,   143,   157,   173,   190,   209,	  230,	 253,	279,   307,
	337,   371,   408,   449,   494,   544,	  598,	 658,	724,   796,
	876,   963,   1060,  1166,  1282,  1411,  1552,	 1707,	1878,  2066,
	2272,  2499,  2749,  3024,  3327,  3660,  4026,	 4428,	4871,  5358,
	5894,  6484,  7132,  7845,  8630,  9493,  10442, 11487, 12635, 13899,
	15289, 16818, 18500, 20350, 22385, 24623, 27086, 29794, 32767};

static const int8_t index_table[16] = {-1, -1, -1, -1, 2, 4, 6, 8,
				       -1, -1, -1, -1, 2, 4, 6, 8};

const char *
xmbpaudio_status_text(enum xmbpaudio_status status)
{
	switch (status) {
	case XMBPAUDIO_OK:
		return "ok";
	case XMBPAUDIO_E_EMPTY:
		return "the frame holds no audio";
	case XMBPAUDIO_E_CODEC:
		return "the codec id is not the stream's";
	case XMBPAUDIO_E_CHANNELS:
		return "the channel count is out of range";
	case XMBPAUDIO_E_LENGTH:
		return "the frame's length does not fit its codec and channels";
	case XMBPAUDIO_E_STEP:
		return "an ADPCM step index is above 88";
	case XMBPAUDIO_E_RESERVED:
		return "an ADPCM header's reserved byte is not 0";
	case XMBPAUDIO_E_SPACE:
		return "the output does not fit";
	}
	return "unknown";
}

size_t
xmbpaudio_pcm_size(unsigned channels, size_t n)
{
	if (channels < 1 || channels > XMBPAUDIO_MAX_CHANNELS || n < 1 ||
	    n > (XMBPAUDIO_FRAME_MAX - 1) / (2 * channels))
		return 0;
	return 1 + 2 * channels * n;
}

size_t
xmbpaudio_adpcm_size(unsigned channels, size_t n)
{
	if (channels < 1 || channels > XMBPAUDIO_MAX_CHANNELS || n < 2 ||
	    n % 2 != 0 ||
	    n / 2 > (XMBPAUDIO_FRAME_MAX - 1 - 4 * channels) / channels)
		return 0;
	return 1 + 4 * channels + channels * (n / 2);
}

size_t
xmbpaudio_pcm_encode(unsigned channels, const int16_t *pcm, size_t n,
		     uint8_t *out, size_t cap)
{
	size_t len = xmbpaudio_pcm_size(channels, n);
	uint8_t *p = out;

	if (len == 0 || len > cap)
		return 0;
	*p++ = XMBPAUDIO_PCM;
	for (size_t i = 0; i < n * channels; i++) {
		uint16_t u = (uint16_t)pcm[i];

		*p++ = (uint8_t)(u & 0xff);
		*p++ = (uint8_t)(u >> 8);
	}
	return len;
}

/* The decoder's step: the new predictor after code, from predictor and
 * step index; the index moves on too. */
static int
adpcm_step(int predictor, uint8_t *index, unsigned code)
{
	int step = step_table[*index], diff = step >> 3;
	int idx = *index + index_table[code & 15];

	if (code & 4)
		diff += step;
	if (code & 2)
		diff += step >> 1;
	if (code & 1)
		diff += step >> 2;
	predictor += (code & 8) ? -diff : diff;
	if (predictor > 32767)
		predictor = 32767;
	else if (predictor < -32768)
		predictor = -32768;
	*index = (uint8_t)(idx < 0 ? 0 : idx > 88 ? 88 : idx);
	return predictor;
}

/* The standard encoder's code for sample x from predictor p and index. */
static unsigned
std_code(int p, uint8_t index, int x)
{
	int step = step_table[index], diff = x - p;
	unsigned code = 0;

	if (diff < 0) {
		code = 8;
		diff = -diff;
	}
	if (diff >= step) {
		code |= 4;
		diff -= step;
	}
	if (diff >= step >> 1) {
		code |= 2;
		diff -= step >> 1;
	}
	if (diff >= step >> 2)
		code |= 1;
	return code;
}

/*
 * The code for sample x, given the next sample next (x itself at the end
 * of a frame): of the 16 codes, the one whose decoded value and the
 * standard code's value for next after it are together nearest (squared
 * error).  The decoder is the standard one; looking one sample ahead
 * keeps the step size from lagging behind a tone (about 3 dB on a
 * 1 kHz tone at 16 kHz).  s moves on as the decoder's state will.
 */
static unsigned
adpcm_code(struct xmbpaudio_adpcm *s, int x, int next)
{
	long long best_err = -1;
	unsigned best = 0;

	for (unsigned c = 0; c < 16; c++) {
		uint8_t idx = s->step_index;
		int v = adpcm_step(s->predictor, &idx, c), w;
		long long e;

		w = adpcm_step(v, &idx, std_code(v, idx, next));
		e = (long long)(v - x) * (v - x) +
		    (long long)(w - next) * (w - next);
		if (best_err < 0 || e < best_err) {
			best_err = e;
			best = c;
		}
	}
	s->predictor = (int16_t)adpcm_step(s->predictor, &s->step_index, best);
	return best;
}

size_t
xmbpaudio_adpcm_encode(struct xmbpaudio_adpcm *state, unsigned channels,
		       const int16_t *pcm, size_t n, uint8_t *out, size_t cap)
{
	size_t len = xmbpaudio_adpcm_size(channels, n);
	uint8_t *data;

	if (len == 0 || len > cap)
		return 0;
	out[0] = XMBPAUDIO_ADPCM;
	for (unsigned c = 0; c < channels; c++) {
		uint16_t u = (uint16_t)state[c].predictor;

		/* A state from outside (not zeroed) must not index past the
		 * table. */
		if (state[c].step_index > 88)
			state[c].step_index = 88;
		out[1 + 4 * c] = (uint8_t)(u & 0xff);
		out[2 + 4 * c] = (uint8_t)(u >> 8);
		out[3 + 4 * c] = state[c].step_index;
		out[4 + 4 * c] = 0;
	}
	data = out + 1 + 4 * channels;
	for (size_t t = 0; t < n; t += 2)
		for (unsigned c = 0; c < channels; c++) {
			int a = pcm[t * channels + c];
			int b = pcm[(t + 1) * channels + c];
			int after = t + 2 < n ? pcm[(t + 2) * channels + c] : b;
			unsigned lo = adpcm_code(&state[c], a, b);
			unsigned hi = adpcm_code(&state[c], b, after);

			*data++ = (uint8_t)(lo | hi << 4);
		}
	return len;
}

enum xmbpaudio_status
xmbpaudio_frame_check(const uint8_t *frame, size_t len, unsigned codec,
		      unsigned channels, size_t *n)
{
	size_t body;

	*n = 0;
	if (channels < 1 || channels > XMBPAUDIO_MAX_CHANNELS)
		return XMBPAUDIO_E_CHANNELS;
	if (len < 1)
		return XMBPAUDIO_E_EMPTY;
	if (frame[0] != codec ||
	    (codec != XMBPAUDIO_PCM && codec != XMBPAUDIO_ADPCM))
		return XMBPAUDIO_E_CODEC;
	if (len > XMBPAUDIO_FRAME_MAX)
		return XMBPAUDIO_E_LENGTH;
	if (codec == XMBPAUDIO_PCM) {
		body = len - 1;
		if (body == 0)
			return XMBPAUDIO_E_EMPTY;
		if (body % (2 * channels) != 0)
			return XMBPAUDIO_E_LENGTH;
		*n = body / (2 * channels);
		return XMBPAUDIO_OK;
	}
	if (len <= 1 + 4 * channels)
		return len == 1 ? XMBPAUDIO_E_EMPTY : XMBPAUDIO_E_LENGTH;
	body = len - 1 - 4 * channels;
	if (body % channels != 0)
		return XMBPAUDIO_E_LENGTH;
	for (unsigned c = 0; c < channels; c++) {
		if (frame[3 + 4 * c] > 88)
			return XMBPAUDIO_E_STEP;
		if (frame[4 + 4 * c] != 0)
			return XMBPAUDIO_E_RESERVED;
	}
	*n = 2 * (body / channels);
	return XMBPAUDIO_OK;
}

enum xmbpaudio_status
xmbpaudio_decode(const uint8_t *frame, size_t len, unsigned codec,
		 unsigned channels, int16_t *out, size_t cap, size_t *n)
{
	struct xmbpaudio_adpcm st[XMBPAUDIO_MAX_CHANNELS];
	enum xmbpaudio_status s;
	const uint8_t *p;
	size_t count;

	if ((s = xmbpaudio_frame_check(frame, len, codec, channels, &count)) !=
	    XMBPAUDIO_OK)
		return s;
	if (count > cap / channels) {
		*n = 0;
		return XMBPAUDIO_E_SPACE;
	}
	*n = count;
	p = frame + 1;
	if (codec == XMBPAUDIO_PCM) {
		for (size_t i = 0; i < count * channels; i++, p += 2)
			out[i] = (int16_t)(uint16_t)(p[0] | p[1] << 8);
		return XMBPAUDIO_OK;
	}
	for (unsigned c = 0; c < channels; c++, p += 4) {
		st[c].predictor = (int16_t)(uint16_t)(p[0] | p[1] << 8);
		st[c].step_index = p[2];
	}
	for (size_t t = 0; t < count; t += 2)
		for (unsigned c = 0; c < channels; c++, p++) {
			int v = adpcm_step(st[c].predictor, &st[c].step_index,
					   *p & 15u);

			out[t * channels + c] = (int16_t)v;
			v = adpcm_step(v, &st[c].step_index, *p >> 4);
			out[(t + 1) * channels + c] = (int16_t)v;
			st[c].predictor = (int16_t)v;
		}
	return XMBPAUDIO_OK;
}
