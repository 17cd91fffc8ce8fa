/* SPDX-License-Identifier: MIT */
/*
 * spectro.t - spectrograms drawn by libsox in a child (lib/core/spectro.c):
 * a real WAV gives a PNG of the asked size; the rows' mapping (2^k + 1
 * linear heights drawn as they are, any other height and the log scale
 * from a larger drawing, each row the nearest to its frequency), and
 * images of other heights and of the log scale whose rows are the drawn
 * image's rows so mapped; and a WAV that crashes
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

#include <png.h>

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

/* Draws rq of path into an RGB image: its pixels (the caller frees them)
 * and size, or NULL. */
static png_bytep
draw_rgb(const char *path, const struct spectro_req *rq, png_uint_32 *w,
	 png_uint_32 *h)
{
	png_image img = {.version = PNG_IMAGE_VERSION};
	char detail[256];
	struct buf png;
	png_bytep px = NULL;

	buf_init(&png, 0);
	if (spectro_render(path, rq, NULL, 60000, &png, detail,
			   sizeof(detail)) &&
	    png_image_begin_read_from_memory(&img, png.p, png.len)) {
		img.format = PNG_FORMAT_RGB;
		px = malloc(PNG_IMAGE_SIZE(img));
		if (px != NULL &&
		    !png_image_finish_read(&img, NULL, px, 0, NULL)) {
			free(px);
			px = NULL;
		}
	} else {
		diag("%s", detail);
	}
	png_image_free(&img);
	buf_free(&png);
	*w = img.width;
	*h = img.height;
	return px;
}

/* True when each row of the image a (height rows) is the row
 * spectro_row_source() names of the image b (drawn rows) of width w. */
static bool
rows_mapped(png_const_bytep a, int height, png_const_bytep b, int drawn,
	    png_uint_32 w, enum spectro_scale scale, double rate)
{
	size_t row = (size_t)w * 3;

	for (int r = 0; r < height; r++)
		if (memcmp(a + r * row,
			   b + spectro_row_source(r, height, drawn, scale,
						  rate) *
					   row,
			   row) != 0)
			return false;
	return true;
}

/* The row mapping alone (no drawing). */
static void
mapping(void)
{
	static const int fast[] = {65, 129, 257, 513, 1025};
	bool same = true, down = true;
	int r, prev = 0, lo;

	for (size_t i = 0; i < sizeof(fast) / sizeof(*fast); i++) {
		same = same &&
		       spectro_drawn_height(fast[i], SPECTRO_LINEAR) == fast[i];
		for (r = 0; r < fast[i]; r++)
			same = same &&
			       spectro_row_source(r, fast[i], fast[i],
						  SPECTRO_LINEAR, 8000) == r;
	}
	ok(same, "2^k + 1 heights, linear: drawn as they are, row for row");
	ok(spectro_drawn_height(16, SPECTRO_LINEAR) == 65 &&
		   spectro_drawn_height(300, SPECTRO_LINEAR) == 513 &&
		   spectro_drawn_height(1026, SPECTRO_LINEAR) == 1025 &&
		   spectro_drawn_height(2048, SPECTRO_LINEAR) == 1025,
	   "other heights are drawn at the next 2^k + 1 up, 1025 at most");
	ok(spectro_drawn_height(129, SPECTRO_LOG) == 1025,
	   "the log scale is drawn at 1025 rows");
	ok(spectro_row_source(0, 300, 513, SPECTRO_LINEAR, 8000) == 0 &&
		   spectro_row_source(299, 300, 513, SPECTRO_LINEAR, 8000) ==
			   512 &&
		   spectro_row_source(150, 300, 513, SPECTRO_LINEAR, 8000) ==
			   257,
	   "linear 300 rows from 513: top, bottom and the nearest between");
	ok(spectro_row_source(1, 2048, 1025, SPECTRO_LINEAR, 8000) == 1 &&
		   spectro_row_source(2, 2048, 1025, SPECTRO_LINEAR, 8000) ==
			   1 &&
		   spectro_row_source(2047, 2048, 1025, SPECTRO_LINEAR, 8000) ==
			   1024,
	   "2048 rows from 1025: rows repeated");
	/* Log, 8 kHz: 20 Hz at the bottom (bin 20 / 4000 * 1024 = 5.12 from
	 * the bottom), 4 kHz at the top, the middle row at their geometric
	 * mean, sqrt(20 * 4000) = 282.8 Hz (bin 72.4 from the bottom). */
	lo = 1024 - 5;
	ok(spectro_row_source(0, 201, 1025, SPECTRO_LOG, 8000) == 0 &&
		   spectro_row_source(200, 201, 1025, SPECTRO_LOG, 8000) ==
			   lo &&
		   spectro_row_source(100, 201, 1025, SPECTRO_LOG, 8000) ==
			   1024 - 72,
	   "log: 4 kHz at the top, 20 Hz at the bottom, 283 Hz between");
	for (r = 0; r < 201; r++) {
		int s = spectro_row_source(r, 201, 1025, SPECTRO_LOG, 8000);

		down = down && s >= prev;
		prev = s;
	}
	ok(down, "log: rows go down in frequency, top to bottom");
	ok(spectro_log_min_hz(8000) == 20 && spectro_log_min_hz(80) == 10,
	   "the log scale's lowest frequency: 20 Hz, or rate / 8 below it");
}

/* Drawings of other heights and of the log scale: their rows are rows
 * of the larger drawing. */
static void
mapped_images(const char *path)
{
	struct spectro_req rq = {0, 1000, 200, 513, SPECTRO_LINEAR};
	png_uint_32 w, h, w2, h2;
	png_bytep big, small = NULL;

	big = draw_rgb(path, &rq, &w, &h);
	ok(big != NULL && w == 200 && h == 513, "a 200 x 513 image");
	rq.height = 300;
	small = big != NULL ? draw_rgb(path, &rq, &w2, &h2) : NULL;
	ok(small != NULL && w2 == 200 && h2 == 300, "a 200 x 300 image");
	ok(small != NULL &&
		   rows_mapped(small, 300, big, 513, w, SPECTRO_LINEAR, 8000),
	   "its rows are the 513 rows' nearest");
	free(small);
	free(big);

	rq.height = 1025;
	big = draw_rgb(path, &rq, &w, &h);
	rq.height = 2048;
	small = big != NULL ? draw_rgb(path, &rq, &w2, &h2) : NULL;
	ok(small != NULL && w2 == 200 && h2 == 2048 &&
		   rows_mapped(small, 2048, big, 1025, w, SPECTRO_LINEAR, 8000),
	   "2048 rows (the most): the 1025 rows' nearest");
	free(small);
	rq.height = 16;
	small = draw_rgb(path, &rq, &w2, &h2);
	ok(small != NULL && w2 == 200 && h2 == 16, "16 rows (the least)");
	free(small);
	rq.height = 300;
	rq.scale = SPECTRO_LOG;
	small = big != NULL ? draw_rgb(path, &rq, &w2, &h2) : NULL;
	ok(small != NULL && w2 == 200 && h2 == 300 &&
		   rows_mapped(small, 300, big, 1025, w, SPECTRO_LOG, 8000),
	   "log, 300 rows: the 1025 rows mapped on the log scale");
	free(small);
	free(big);
}

int
main(int argc, char **argv)
{
	struct spectro_req rq = {0, 1000, 200, 129, SPECTRO_LINEAR};
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
	mapping();
	mapped_images(path);
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
