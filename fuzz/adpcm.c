/* SPDX-License-Identifier: MIT */
/*
 * fuzz/adpcm.c - libFuzzer target for the audio frame decoder of XMBP
 * bytes samples (lib/codec/xmbpaudio.h), IMA-ADPCM above all.
 *
 * The input is a byte of settings (bits 0-3: channels 0 to 15, so that
 * counts outside 1..8 are tried too; bit 4: PCM instead of ADPCM), then
 * the frame.  The check and the decoder must agree; an accepted frame's
 * length must be the one its layout gives for the sample frames decoded;
 * the decoder must refuse an output one value short and write nothing
 * past it; a PCM frame must encode back to its own bytes.  Violations
 * abort(), so libFuzzer keeps the input as a crash artifact.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codec/xmbpaudio.h"

#include "check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum xmbpaudio_status st, dst;
	unsigned ch, codec;
	int16_t *out;
	uint8_t *back;
	size_t n = 0, m = 0, len;

	if (size < 1)
		return 0;
	ch = data[0] & 15u;
	codec = data[0] & 16u ? XMBPAUDIO_PCM : XMBPAUDIO_ADPCM;
	data++;
	size--;
	st = xmbpaudio_frame_check(data, size, codec, ch, &n);
	/* One value more than needed, to see the decoder stop short. */
	if ((out = malloc((XMBPAUDIO_DECODED_MAX + 1) * sizeof(*out))) == NULL)
		abort();
	dst = xmbpaudio_decode(data, size, codec, ch, out,
			       XMBPAUDIO_DECODED_MAX, &m);
	CHECK(st == dst);
	if (st != XMBPAUDIO_OK) {
		CHECK(n == 0);
		free(out);
		return 0;
	}
	CHECK(m == n && n >= 1 && n * ch <= XMBPAUDIO_DECODED_MAX);
	len = codec == XMBPAUDIO_PCM ? xmbpaudio_pcm_size(ch, n)
				     : xmbpaudio_adpcm_size(ch, n);
	CHECK(len == size);
	out[n * ch - 1] = 0x5a5a;
	out[n * ch] = 0x1234;
	CHECK(xmbpaudio_decode(data, size, codec, ch, out, n * ch - 1, &m) ==
	      XMBPAUDIO_E_SPACE);
	CHECK(out[n * ch - 1] == 0x5a5a);
	CHECK(xmbpaudio_decode(data, size, codec, ch, out, n * ch, &m) ==
	      XMBPAUDIO_OK);
	CHECK(out[n * ch] == 0x1234);
	for (size_t i = 0; i < n * ch; i++)
		sink += (uint16_t)out[i];
	if (codec == XMBPAUDIO_PCM) {
		if ((back = malloc(size)) == NULL)
			abort();
		CHECK(xmbpaudio_pcm_encode(ch, out, n, back, size) == size);
		CHECK(memcmp(back, data, size) == 0);
		free(back);
	}
	free(out);
	return 0;
}
