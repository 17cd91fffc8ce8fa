/* SPDX-License-Identifier: MIT */
/*
 * t/unit/xmbpaudio.c - audio frames in XMBP bytes samples
 * (lib/codec/xmbpaudio.h, doc/xmbp-audio.md): the frame layouts byte for
 * byte, PCM round trips, the IMA-ADPCM encoder's quality on a 1 kHz tone
 * with every frame decoded on its own, and every refusal.  Frames for
 * the decoder are copied into heap blocks of exactly their size so that
 * ASan catches a read past the end.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/xmbpaudio.h"
#include "tap.h"
#include "testutil.h"

#define RATE 16000
#define FRAME 512 /* sample frames per ADPCM frame */
#define PI 3.14159265358979323846

/* Decodes the len bytes at p from an exact-size heap copy. */
static enum xmbpaudio_status
decode_copy(const uint8_t *p, size_t len, unsigned codec, unsigned ch,
	    int16_t *out, size_t cap, size_t *n)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum xmbpaudio_status st;

	memcpy(copy, p, len);
	st = xmbpaudio_decode(copy, len, codec, ch, out, cap, n);
	free(copy);
	return st;
}

static void
test_layouts(void)
{
	/* Predictor 0, index 0; codes 7 then 0xF: +11 (index 8), then
	 * step 16: -(2+16+8+4) = -19 (index 16). */
	static const uint8_t adpcm[] = {0x02, 0, 0, 0, 0, 0xf7};
	static const int16_t pcm[] = {1, -2, 32767, -32768};
	static const uint8_t pcm_want[] = {0x01, 0x01, 0x00, 0xfe, 0xff,
					   0xff, 0x7f, 0x00, 0x80};
	uint8_t buf[64];
	int16_t out[8];
	size_t n = 0;

	is_int(decode_copy(adpcm, sizeof(adpcm), XMBPAUDIO_ADPCM, 1, out, 8,
			   &n),
	       XMBPAUDIO_OK, "ADPCM: the smallest mono frame decodes");
	is_int(n, 2, "ADPCM: one byte holds two sample frames");
	is_int(out[0], 11, "ADPCM: low nibble first (code 7 from step 7)");
	is_int(out[1], -19, "ADPCM: high nibble second (code 15, step 16)");
	is_int(xmbpaudio_pcm_encode(2, pcm, 2, buf, sizeof(buf)), 9,
	       "PCM: 1 + 2 * channels * n bytes");
	ok(memcmp(buf, pcm_want, sizeof(pcm_want)) == 0,
	   "PCM: codec id, then s16le, channels interleaved");
	is_int(xmbpaudio_adpcm_size(2, 4), 1 + 8 + 4,
	       "ADPCM size: header of 4 bytes per channel, n/2 per channel");
	is_int(xmbpaudio_adpcm_size(1, 3), 0, "ADPCM size: odd n refused");
	is_int(xmbpaudio_pcm_size(1, 32767), 65535,
	       "PCM size: the largest mono frame fills a bytes value");
	is_int(xmbpaudio_pcm_size(1, 32768), 0,
	       "PCM size: one more does not fit");
	is_int(xmbpaudio_adpcm_size(1, 2 * 65530), 65535,
	       "ADPCM size: the largest mono frame fills a bytes value");
	is_int(xmbpaudio_adpcm_size(1, 2 * 65531), 0,
	       "ADPCM size: one byte more does not fit");
	is_int(xmbpaudio_pcm_size(0, 1), 0, "PCM size: 0 channels refused");
	is_int(xmbpaudio_pcm_size(9, 1), 0, "PCM size: 9 channels refused");
}

static void
test_pcm_roundtrip(void)
{
	static int16_t in[3 * 1000], out[3 * 1000];
	static uint8_t frame[1 + 2 * 3 * 1000];
	size_t len, n = 0;

	rnd_seed(7);
	for (size_t i = 0; i < 3 * 1000; i++)
		in[i] = (int16_t)(uint16_t)rnd();
	len = xmbpaudio_pcm_encode(3, in, 1000, frame, sizeof(frame));
	is_int(len, sizeof(frame), "PCM: 3 channels x 1000 encoded");
	is_int(decode_copy(frame, len, XMBPAUDIO_PCM, 3, out, 3 * 1000, &n),
	       XMBPAUDIO_OK, "PCM: decodes");
	is_int(n, 1000, "PCM: 1000 sample frames back");
	ok(memcmp(in, out, sizeof(in)) == 0, "PCM: bit-exact round trip");
	is_int(xmbpaudio_pcm_encode(3, in, 1000, frame, sizeof(frame) - 1), 0,
	       "PCM: a buffer one byte short is refused");
	is_int(decode_copy(frame, len, XMBPAUDIO_PCM, 3, out, 2999, &n),
	       XMBPAUDIO_E_SPACE, "PCM decode: output one value short refused");
}

/* 10 * log10(signal / noise) of b against a over n values. */
static double
snr_db(const int16_t *a, const int16_t *b, size_t n)
{
	double sig = 0, noise = 0;

	for (size_t i = 0; i < n; i++) {
		sig += (double)a[i] * a[i];
		noise += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
	}
	return 10 * log10(sig / (noise > 0 ? noise : 1e-9));
}

static void
test_adpcm_tone(unsigned ch)
{
	enum { NFRAMES = 40, TOTAL = NFRAMES * FRAME };
	static int16_t in[2 * TOTAL], out[2 * TOTAL], cont[2 * TOTAL];
	static uint8_t frames[NFRAMES][1 + 8 + FRAME];
	struct xmbpaudio_adpcm st[2];
	size_t len[NFRAMES], n = 0;
	bool all = true, same = true;

	memset(st, 0, sizeof(st));
	for (size_t t = 0; t < TOTAL; t++)
		for (unsigned c = 0; c < ch; c++)
			in[t * ch + c] = (int16_t)lrint(
				(c == 0 ? 16000 : 9000) *
				sin(2 * PI * 1000 * (double)t / RATE));
	for (size_t f = 0; f < NFRAMES; f++) {
		len[f] = xmbpaudio_adpcm_encode(st, ch, in + f * FRAME * ch,
						FRAME, frames[f],
						sizeof(frames[f]));
		all &= len[f] == 1 + 4 * ch + ch * FRAME / 2;
	}
	ok(all, "ADPCM %u ch: every frame 1 + 4C + C*N/2 bytes", ch);
	/* Frames decoded alone, in a scrambled order: each stands alone. */
	all = true;
	for (size_t k = 0; k < NFRAMES; k++) {
		size_t f = (k * 7) % NFRAMES;

		all &= decode_copy(frames[f], len[f], XMBPAUDIO_ADPCM, ch,
				   out + f * FRAME * ch, FRAME * ch,
				   &n) == XMBPAUDIO_OK &&
		       n == FRAME;
	}
	ok(all, "ADPCM %u ch: each frame decodes alone", ch);
	/* One decoder over the whole signal gives the same values: the
	 * header carries the encoder's state exactly. */
	memset(st, 0, sizeof(st));
	for (size_t f = 0; f < NFRAMES; f++) {
		uint8_t one[1 + 8 + FRAME];

		xmbpaudio_adpcm_encode(st, ch, in + f * FRAME * ch, FRAME, one,
				       sizeof(one));
		same &= memcmp(one, frames[f], len[f]) == 0;
		decode_copy(one, len[f], XMBPAUDIO_ADPCM, ch,
			    cont + f * FRAME * ch, FRAME * ch, &n);
	}
	ok(same && memcmp(out, cont, sizeof(int16_t) * TOTAL * ch) == 0,
	   "ADPCM %u ch: encoding is deterministic and frames join", ch);
	for (unsigned c = 0; c < ch; c++) {
		static int16_t a[TOTAL], b[TOTAL];
		double snr;

		for (size_t t = 0; t < TOTAL; t++) {
			a[t] = in[t * ch + c];
			b[t] = out[t * ch + c];
		}
		/* The first frame starts from silence: leave its attack out. */
		snr = snr_db(a + FRAME, b + FRAME, TOTAL - FRAME);
		if (!ok(snr > 30, "ADPCM %u ch, channel %u: SNR > 30 dB", ch,
			c))
			diag("SNR %.1f dB", snr);
	}
}

static void
test_refusals(void)
{
	static const struct {
		uint8_t b[16];
		size_t len;
		unsigned codec, ch;
		enum xmbpaudio_status want;
		const char *name;
	} cases[] = {
		{{0}, 0, XMBPAUDIO_PCM, 1, XMBPAUDIO_E_EMPTY, "empty"},
		{{1}, 1, XMBPAUDIO_PCM, 1, XMBPAUDIO_E_EMPTY, "PCM id alone"},
		{{2},
		 1,
		 XMBPAUDIO_ADPCM,
		 1,
		 XMBPAUDIO_E_EMPTY,
		 "ADPCM id alone"},
		{{2, 0, 0, 0, 0},
		 5,
		 XMBPAUDIO_ADPCM,
		 1,
		 XMBPAUDIO_E_LENGTH,
		 "ADPCM header without codes"},
		{{1, 0, 0},
		 3,
		 XMBPAUDIO_ADPCM,
		 1,
		 XMBPAUDIO_E_CODEC,
		 "PCM frame for an ADPCM stream"},
		{{3, 0, 0},
		 3,
		 XMBPAUDIO_PCM,
		 1,
		 XMBPAUDIO_E_CODEC,
		 "codec id 3 (XAP)"},
		{{3, 0, 0}, 3, 3, 1, XMBPAUDIO_E_CODEC, "codec 3 asked for"},
		{{1, 0, 0, 0},
		 4,
		 XMBPAUDIO_PCM,
		 1,
		 XMBPAUDIO_E_LENGTH,
		 "PCM odd byte count"},
		{{1, 0, 0},
		 3,
		 XMBPAUDIO_PCM,
		 2,
		 XMBPAUDIO_E_LENGTH,
		 "PCM stereo with half a sample frame"},
		{{2, 0, 0, 0, 0, 0, 0, 0, 0, 7},
		 10,
		 XMBPAUDIO_ADPCM,
		 2,
		 XMBPAUDIO_E_LENGTH,
		 "ADPCM stereo with one code byte"},
		{{2, 0, 0, 89, 0, 0},
		 6,
		 XMBPAUDIO_ADPCM,
		 1,
		 XMBPAUDIO_E_STEP,
		 "ADPCM step index 89"},
		{{2, 0, 0, 0, 1, 0},
		 6,
		 XMBPAUDIO_ADPCM,
		 1,
		 XMBPAUDIO_E_RESERVED,
		 "ADPCM reserved byte set"},
		{{1, 0, 0},
		 3,
		 XMBPAUDIO_PCM,
		 0,
		 XMBPAUDIO_E_CHANNELS,
		 "0 channels"},
		{{1, 0, 0},
		 3,
		 XMBPAUDIO_PCM,
		 9,
		 XMBPAUDIO_E_CHANNELS,
		 "9 channels"},
	};
	struct xmbpaudio_adpcm st = {0, 0};
	int16_t out[32], in[4] = {0};
	uint8_t buf[16];
	size_t n;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_int(decode_copy(cases[i].b, cases[i].len, cases[i].codec,
				   cases[i].ch, out, 32, &n),
		       cases[i].want, "refused: %s", cases[i].name);
	is_int(xmbpaudio_adpcm_encode(&st, 1, in, 3, buf, sizeof(buf)), 0,
	       "ADPCM encode: odd n refused");
	is_int(xmbpaudio_adpcm_encode(&st, 1, in, 4, buf, 6), 0,
	       "ADPCM encode: a buffer one byte short is refused");
	ok(st.predictor == 0 && st.step_index == 0,
	   "ADPCM encode: a refused frame leaves the state alone");
	ok(strlen(xmbpaudio_status_text(XMBPAUDIO_E_STEP)) > 0,
	   "every status has a text");
}

int
main(void)
{
	test_layouts();
	test_pcm_roundtrip();
	test_adpcm_tone(1);
	test_adpcm_tone(2);
	test_refusals();
	return tap_done();
}
