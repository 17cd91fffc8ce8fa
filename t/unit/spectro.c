/* SPDX-License-Identifier: MIT */
/*
 * spectro.t - spectrograms drawn by libsox in a child (lib/core/spectro.c):
 * a real WAV gives a PNG of the asked size, and a WAV that crashes
 * libsox (8 channels at 1 Hz: an out-of-bounds memcpy inside libsox's
 * spectrogram effect, issue 27; Debian's sox program dies of it too)
 * gives a failure with a reason, while the caller goes on: the crash
 * stays in the child.
 *
 * The test program is its own child, as the programs that draw are:
 * `spectro.t --spectro-sox ...` is spectro_main().
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/spectro.h"
#include "tap.h"

/* Writes a PCM 16-bit WAV of frames sample frames at rate Hz in ch
 * channels (a square wave of rate / 18 Hz) to a temporary file named into path.
 */
static bool
wav_file(char *path, size_t len, unsigned rate, unsigned ch, unsigned frames)
{
	unsigned data = frames * ch * 2;
	unsigned char h[44];
	FILE *f;
	int fd;
	bool ok;

	snprintf(path, len, "%s/spectro-XXXXXX",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if ((fd = mkstemp(path)) < 0 || (f = fdopen(fd, "wb")) == NULL)
		return false;
	memcpy(h, "RIFF\0\0\0\0WAVEfmt \x10\0\0\0\x01\0", 22);
	h[4] = (unsigned char)((36 + data) & 0xff);
	h[5] = (unsigned char)((36 + data) >> 8 & 0xff);
	h[6] = (unsigned char)((36 + data) >> 16 & 0xff);
	h[7] = (unsigned char)((36 + data) >> 24);
	h[22] = (unsigned char)ch;
	h[23] = 0;
	for (int i = 0; i < 4; i++) {
		h[24 + i] = (unsigned char)(rate >> (8 * i) & 0xff);
		h[28 + i] = (unsigned char)(rate * ch * 2 >> (8 * i) & 0xff);
		h[40 + i] = (unsigned char)(data >> (8 * i) & 0xff);
	}
	h[32] = (unsigned char)(ch * 2);
	h[33] = 0;
	h[34] = 16;
	h[35] = 0;
	memcpy(h + 36, "data", 4);
	ok = fwrite(h, 1, sizeof(h), f) == sizeof(h);
	for (unsigned i = 0; ok && i < frames * ch; i++) {
		int v = (i / ch) % 18 < 9 ? 8000 : -8000;
		unsigned char s[2] = {(unsigned char)(v & 0xff),
				      (unsigned char)((v >> 8) & 0xff)};

		ok = fwrite(s, 1, 2, f) == 2;
	}
	return fclose(f) == 0 && ok;
}

/* The big-endian u32 at p. */
static unsigned long
be32(const unsigned char *p)
{
	return (unsigned long)p[0] << 24 | (unsigned long)p[1] << 16 |
	       (unsigned long)p[2] << 8 | p[3];
}

int
main(int argc, char **argv)
{
	struct spectro_req rq = {0, 1000, 200, 129};
	char path[256], detail[256];
	struct buf png;
	bool good;

	if (argc > 1 && strcmp(argv[1], SPECTRO_ARG) == 0)
		return spectro_main(argc, argv);

	/* A second of a tone at 8 kHz, mono: a 200 x 129 PNG. */
	buf_init(&png, 0);
	good = wav_file(path, sizeof(path), 8000, 1, 8000);
	ok(good, "a tone's WAV written");
	good = good && spectro_render(path, &rq, NULL, 60000, &png, detail,
				      sizeof(detail));
	ok(good, "the tone is drawn");
	ok(good && png.len > 24 && memcmp(png.p, "\x89PNG\r\n\x1a\n", 8) == 0,
	   "as a PNG");
	ok(good && png.len > 24 && be32(png.p + 16) == 200 &&
		   be32(png.p + 20) == 129,
	   "of the asked width and height");
	unlink(path);

	/* 8 channels at 1 Hz, 1 KB: libsox crashes on it; the caller gets
	 * a failure with a reason, not the crash. */
	buf_free(&png);
	buf_init(&png, 0);
	good = wav_file(path, sizeof(path), 1, 8, 60);
	ok(good, "the crashing WAV written (8 channels, 1 Hz)");
	detail[0] = '\0';
	good = good && spectro_render(path, &rq, NULL, 60000, &png, detail,
				      sizeof(detail));
	ok(!good, "libsox's crash is a failure to draw");
	ok(detail[0] != '\0', "with a reason: %s", detail);
	ok(png.len == 0, "and no image");
	unlink(path);
	buf_free(&png);
	return tap_done();
}
