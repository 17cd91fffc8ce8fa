/* SPDX-License-Identifier: MIT */
/*
 * t/e2e/audio-enc.c - a device for t/e2e/audio-xmbp.t and
 * bench/audio-export.pl: makes a signal, encodes it with the device-side
 * encoders (lib/codec/xmbpaudio) and writes XMBP batches of it, one file
 * each, as firmware would send them.
 *
 *   audio-enc CODEC RATE CHANNELS FRAMES N PER_BATCH START_US SIGNAL DIR
 *
 * CODEC pcm or adpcm; FRAMES frames of N sample frames each; PER_BATCH
 * frames (samples of stream 0) per batch; frame k has timestamp
 * START_US + k * N * 1e6 / RATE (rounded down).  SIGNAL tone (1 kHz,
 * amplitude 8000 on channel 0, 4000 on the others) or noise
 * (pseudo-random full-scale values).  Writes DIR/batch-NNNNN.bin (batch_seq
 * NNNNN) and DIR/original.raw (the signal, s16le interleaved).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/xmbp.h"
#include "codec/xmbpaudio.h"

#define PI 3.14159265358979323846

/* Writes n bytes at p to path; false with a message. */
static bool
put_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	bool ok = f != NULL && fwrite(p, 1, n, f) == n;

	if (f != NULL && fclose(f) != 0)
		ok = false;
	if (!ok)
		fprintf(stderr, "audio-enc: %s: %s\n", path, strerror(errno));
	return ok;
}

int
main(int argc, char **argv)
{
	static uint8_t frame[XMBPAUDIO_FRAME_MAX], batch[1 << 22];
	struct xmbpaudio_adpcm st[XMBPAUDIO_MAX_CHANNELS];
	unsigned long rate, ch, frames, n, per, seq = 0;
	unsigned long long start;
	int16_t *pcm = NULL;
	FILE *orig = NULL;
	uint64_t noise = 88172645463325252ull;
	char path[4096];
	bool adpcm, tone;
	int rc = 1;

	if (argc != 10) {
		fprintf(stderr, "usage: audio-enc pcm|adpcm RATE CHANNELS "
				"FRAMES N PER_BATCH START_US tone|noise DIR\n");
		return 2;
	}
	adpcm = strcmp(argv[1], "adpcm") == 0;
	rate = strtoul(argv[2], NULL, 10);
	ch = strtoul(argv[3], NULL, 10);
	frames = strtoul(argv[4], NULL, 10);
	n = strtoul(argv[5], NULL, 10);
	per = strtoul(argv[6], NULL, 10);
	start = strtoull(argv[7], NULL, 10);
	tone = strcmp(argv[8], "tone") == 0;
	if (rate == 0 || ch == 0 || ch > XMBPAUDIO_MAX_CHANNELS || n == 0 ||
	    per == 0 || (pcm = calloc(n * ch, sizeof(*pcm))) == NULL)
		goto out;
	memset(st, 0, sizeof(st));
	snprintf(path, sizeof(path), "%s/original.raw", argv[9]);
	if ((orig = fopen(path, "wb")) == NULL) {
		fprintf(stderr, "audio-enc: %s: %s\n", path, strerror(errno));
		goto out;
	}
	for (unsigned long k = 0; k < frames; k += per, seq++) {
		struct xmbp_enc enc;
		size_t len;

		xmbp_enc_init(&enc, batch, sizeof(batch));
		xmbp_enc_begin(&enc, (uint16_t)seq, NULL);
		xmbp_enc_stream(&enc, 0, SAMPLE_BYTES);
		for (unsigned long f = k; f < k + per && f < frames; f++) {
			for (unsigned long t = 0; t < n; t++)
				for (unsigned long c = 0; c < ch; c++) {
					double x = (double)(f * n + t) / rate;

					if (tone)
						pcm[t * ch + c] = (int16_t)
							lrint((c == 0 ? 8000
								      : 4000) *
							      sin(2 * PI *
								  1000 * x));
					else {
						noise ^= noise << 13;
						noise ^= noise >> 7;
						noise ^= noise << 17;
						pcm[t * ch + c] =
							(int16_t)(uint16_t)
								noise;
					}
				}
			len = adpcm ? xmbpaudio_adpcm_encode(st, (unsigned)ch,
							     pcm, n, frame,
							     sizeof(frame))
				    : xmbpaudio_pcm_encode((unsigned)ch, pcm, n,
							   frame,
							   sizeof(frame));
			if (len == 0) {
				fprintf(stderr, "audio-enc: frame too large\n");
				goto out;
			}
			xmbp_enc_bytes(&enc,
				       start + (unsigned long long)f * n *
						       1000000ull / rate,
				       frame, len);
			/* s16le: the PCM frame's bytes after its codec id. */
			xmbpaudio_pcm_encode((unsigned)ch, pcm, n, frame,
					     sizeof(frame));
			if (fwrite(frame + 1, 2, n * ch, orig) != n * ch)
				goto out;
		}
		xmbp_enc_end_stream(&enc);
		if (xmbp_enc_finish(&enc, &len) != XMBP_ENC_OK) {
			fprintf(stderr, "audio-enc: %s\n",
				xmbp_enc_detail(&enc));
			goto out;
		}
		snprintf(path, sizeof(path), "%s/batch-%05lu.bin", argv[9],
			 seq);
		if (!put_file(path, batch, len))
			goto out;
	}
	rc = 0;
out:
	if (orig != NULL && fclose(orig) != 0)
		rc = 1;
	free(pcm);
	return rc;
}
