/* SPDX-License-Identifier: MIT */
/*
 * spectro.c - spectrograms and waveform peaks through libsox, in a child
 * that holds no secrets (spectro.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <png.h>
#include <sox.h>

#include "codec/waveform.h"
#include "core/child.h"
#include "core/probe.h"
#include "core/spectro.h"

#define ERR_MAX 4096 /* bytes of the child's stderr kept */

static const char *const scale_names[] = {
	[SPECTRO_LINEAR] = "linear",
	[SPECTRO_LOG] = "log",
};

bool
spectro_scale_parse(const char *s, enum spectro_scale *scale)
{
	for (size_t i = 0; i < sizeof(scale_names) / sizeof(*scale_names); i++)
		if (strcmp(s, scale_names[i]) == 0) {
			*scale = (enum spectro_scale)i;
			return true;
		}
	return false;
}

double
spectro_log_min_hz(double rate)
{
	return rate / 8 < SPECTRO_LOG_MIN_HZ ? rate / 8 : SPECTRO_LOG_MIN_HZ;
}

int
spectro_drawn_height(int height, enum spectro_scale scale)
{
	int drawn = SPECTRO_DRAWN_MIN;

	if (scale == SPECTRO_LOG)
		return SPECTRO_DRAWN_MAX;
	while (drawn < height && drawn < SPECTRO_DRAWN_MAX)
		drawn = 2 * drawn - 1;
	return drawn;
}

int
spectro_row_source(int row, int height, int drawn, enum spectro_scale scale,
		   double rate)
{
	/* Where row sits from the bottom, 0 to 1. */
	double up = (double)(height - 1 - row) / (height - 1), nyq = rate / 2;
	double lo;
	long src;

	if (scale == SPECTRO_LOG) {
		lo = spectro_log_min_hz(rate);
		up = lo * pow(nyq / lo, up) / nyq;
	}
	src = lround((drawn - 1) * (1 - up));
	return src < 0 ? 0 : src > drawn - 1 ? drawn - 1 : (int)src;
}

static bool
req_valid(const struct spectro_req *rq)
{
	return rq->from_ms >= 0 && rq->to_ms > rq->from_ms &&
	       rq->width >= SPECTRO_WIDTH_MIN &&
	       rq->width <= SPECTRO_WIDTH_MAX &&
	       rq->height >= SPECTRO_HEIGHT_MIN &&
	       rq->height <= SPECTRO_HEIGHT_MAX &&
	       (rq->scale == SPECTRO_LINEAR || rq->scale == SPECTRO_LOG);
}

bool
spectro_render(const char *path, const struct spectro_req *rq,
	       const char *peaks_path, int timeout_ms, struct buf *png,
	       char *detail, size_t dlen)
{
	char from[24], to[24], width[16], height[16];
	char *const argv[] = {"/proc/self/exe",
			      SPECTRO_ARG,
			      (char *)path,
			      from,
			      to,
			      width,
			      height,
			      (char *)scale_names[rq->scale],
			      peaks_path != NULL ? (char *)peaks_path : "-",
			      NULL};
	/* The peaks go to a file made for the child, which can create
	 * none; without peaks_path the table ends before it. */
	const struct child_path paths[] = {
		{path, CHILD_READ},
		{peaks_path, CHILD_CREATE},
		{NULL, 0},
	};
	struct child ch;
	bool ok = false;

	if (!req_valid(rq)) {
		snprintf(detail, dlen, "not a spectrogram this can draw");
		return false;
	}
	snprintf(from, sizeof(from), "%" PRId64, rq->from_ms);
	snprintf(to, sizeof(to), "%" PRId64, rq->to_ms);
	snprintf(width, sizeof(width), "%d", rq->width);
	snprintf(height, sizeof(height), "%d", rq->height);
	/* One byte over the bound tells a cut image from a whole one. */
	if (!child_run(&ch, argv, paths, SPECTRO_PNG_MAX + 1, ERR_MAX,
		       timeout_ms, detail, dlen))
		goto out;
	if (ch.out.failed || ch.out.len > SPECTRO_PNG_MAX) {
		snprintf(detail, dlen,
			 "the spectrogram is larger than %d bytes",
			 SPECTRO_PNG_MAX);
		goto out;
	}
	if (ch.out.len < 8 || memcmp(ch.out.p, "\x89PNG", 4) != 0) {
		snprintf(detail, dlen, "libsox drew no image");
		goto out;
	}
	buf_append(png, ch.out.p, ch.out.len);
	if (png->failed) {
		snprintf(detail, dlen, "out of memory for the spectrogram");
		goto out;
	}
	ok = true;
out:
	child_free(&ch);
	return ok;
}

/* --- the child ------------------------------------------------------------ */

/* The peaks effect's state: one chain per process, so one of these. */
static struct {
	FILE *f;
	struct waveform_acc acc;
	struct waveform_head head;
	bool failed;
} peaks;

static int
peaks_flow(sox_effect_t *effp, const sox_sample_t *ibuf, sox_sample_t *obuf,
	   size_t *isamp, size_t *osamp)
{
	size_t n = *isamp < *osamp ? *isamp : *osamp;
	uint8_t px[WAVEFORM_PIXEL_LEN];

	(void)effp;
	memcpy(obuf, ibuf, n * sizeof(*obuf)); /* passed on unchanged */
	*isamp = *osamp = n;
	/* Mono here: the channels effect comes first. */
	for (size_t i = 0; i < n;) {
		bool done;

		i += waveform_acc_add32(&peaks.acc, ibuf + i, n - i, px, &done);
		if (done && fwrite(px, sizeof(px), 1, peaks.f) != 1)
			peaks.failed = true;
	}
	peaks.head.frames += n;
	return SOX_SUCCESS;
}

static const sox_effect_handler_t *
peaks_handler(void)
{
	static const sox_effect_handler_t h = {
		"xmhub_peaks", NULL, SOX_EFF_MCHAN, NULL, NULL,
		peaks_flow,    NULL, NULL,	    NULL, 0};

	return &h;
}

/* Writes the last pixel and the header (frames known now); closes. */
static bool
peaks_close(void)
{
	uint8_t px[WAVEFORM_PIXEL_LEN], head[WAVEFORM_HEAD_LEN];
	bool ok = !peaks.failed;

	if (waveform_acc_finish(&peaks.acc, px) &&
	    fwrite(px, sizeof(px), 1, peaks.f) != 1)
		ok = false;
	waveform_head_put(head, &peaks.head);
	if (fseek(peaks.f, 0, SEEK_SET) != 0 ||
	    fwrite(head, sizeof(head), 1, peaks.f) != 1)
		ok = false;
	if (fclose(peaks.f) != 0)
		ok = false;
	peaks.f = NULL;
	return ok;
}

/* A decimal argument of the child's command line, min..max. */
static bool
arg_num(const char *s, long long min, long long max, long long *v)
{
	char *end;

	errno = 0;
	*v = strtoll(s, &end, 10);
	return errno == 0 && end != s && *end == '\0' && *v >= min && *v <= max;
}

/* Adds effect name with its arguments to chain; false with a line on
 * stderr. */
static bool
add(sox_effects_chain_t *chain, const char *name, int argc, char **args,
    sox_signalinfo_t *sig, const sox_signalinfo_t *out,
    const sox_effect_handler_t *h)
{
	sox_effect_t *e;
	bool ok;

	if (h == NULL)
		h = sox_find_effect(name);
	if (h == NULL || (e = sox_create_effect(h)) == NULL) {
		fprintf(stderr, "libsox has no %s effect\n", name);
		return false;
	}
	ok = sox_effect_options(e, argc, args) == SOX_SUCCESS &&
	     sox_add_effect(chain, e, sig, out) == SOX_SUCCESS;
	free(e);
	if (!ok)
		fprintf(stderr, "libsox refused the %s effect\n", name);
	return ok;
}

/* Draws the window [from_ms, to_ms) of in; its chain, then the image. */
static bool
draw(sox_format_t *in, long long from_ms, long long to_ms, const char *width,
     const char *height, bool with_peaks)
{
	sox_signalinfo_t sig = in->signal, mono = in->signal;
	sox_effects_chain_t *chain = NULL;
	sox_format_t *out = NULL;
	double rate = in->signal.rate;
	uint64_t start, total = in->signal.length / in->signal.channels;
	char secs[32], len[32], one[] = "1", *args[10];
	bool ok = false, seeked = false;
	int rc;

	start = (uint64_t)((double)from_ms * rate / 1000.0 + 0.5);
	/* A known length clips the window: the image ends with the audio. */
	if (total > 0) {
		if (start >= total) {
			fprintf(stderr, "the window starts after the end of "
					"the audio\n");
			return false;
		}
		if ((double)to_ms * rate / 1000.0 > (double)total)
			to_ms = (long long)((double)total * 1000.0 / rate);
		if (to_ms <= from_ms)
			to_ms = from_ms + 1;
	}
	mono.channels = 1;
	mono.length = 0;
	if (start > 0 && in->seekable &&
	    sox_seek(in, start * in->signal.channels, SOX_SEEK_SET) ==
		    SOX_SUCCESS)
		seeked = true;
	if ((out = sox_open_write("", &mono, NULL, "null", NULL, NULL)) ==
	    NULL) {
		fprintf(stderr, "libsox has no null output\n");
		goto out;
	}
	chain = sox_create_effects_chain(&in->encoding, &out->encoding);
	args[0] = (char *)in;
	if (!add(chain, "input", 1, args, &sig, &in->signal, NULL))
		goto out;
	snprintf(secs, sizeof(secs), "%.3f", seeked ? 0.0 : from_ms / 1000.0);
	snprintf(len, sizeof(len), "%.3f", (to_ms - from_ms) / 1000.0);
	args[0] = secs;
	args[1] = len;
	if (!add(chain, "trim", 2, args, &sig, &sig, NULL))
		goto out;
	args[0] = one;
	if (sig.channels > 1 &&
	    !add(chain, "channels", 1, args, &sig, &mono, NULL))
		goto out;
	if (with_peaks &&
	    !add(chain, "xmhub_peaks", 0, args, &sig, &sig, peaks_handler()))
		goto out;
	args[0] = "-x";
	args[1] = (char *)width;
	args[2] = "-y";
	args[3] = (char *)height;
	args[4] = "-r";
	args[5] = "-o";
	args[6] = "-";
	/* The columns span the window: libsox knows its length from trim
	 * when the input's is known; else it is told (-d, whose text
	 * libsox 14.4.2 keeps and never frees: only then). */
	args[7] = "-d";
	args[8] = len;
	if (!add(chain, "spectrogram", total > 0 ? 7 : 9, args, &sig, &sig,
		 NULL))
		goto out;
	args[0] = (char *)out;
	if (!add(chain, "output", 1, args, &sig, &out->signal, NULL))
		goto out;
	/* SOX_EOF: an effect (trim) ended the flow before the input did. */
	if ((rc = sox_flow_effects(chain, NULL, NULL)) != SOX_SUCCESS &&
	    (rc != SOX_EOF || in->sox_errno != 0)) {
		fprintf(stderr, "libsox could not read the audio\n");
		goto out;
	}
	ok = true;
out:
	/* The spectrogram effect writes its image when it is stopped. */
	if (chain != NULL)
		sox_delete_effects_chain(chain);
	if (out != NULL)
		sox_close(out);
	return ok;
}

/*
 * Writes the drawn PNG img (n bytes) to stdout with its rows mapped to
 * height rows on scale at rate Hz (spectro_row_source()); palette and
 * width kept.  False with a line on stderr.
 */
static bool
remap(const void *img, size_t n, int height, enum spectro_scale scale,
      double rate)
{
	png_image in, out;
	png_byte cmap[256 * 3]; /* a colour map's most, RGB */
	png_bytep px = NULL, rows = NULL;
	png_alloc_size_t len = 0;
	void *png = NULL;
	bool ok = false;

	memset(&in, 0, sizeof(in));
	memset(&out, 0, sizeof(out));
	in.version = out.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_memory(&in, img, n))
		goto out;
	in.format = PNG_FORMAT_RGB_COLORMAP;
	if ((px = malloc(PNG_IMAGE_SIZE(in))) == NULL ||
	    (rows = malloc((size_t)in.width * (size_t)height)) == NULL) {
		fprintf(stderr, "out of memory for the image's rows\n");
		goto out;
	}
	if (!png_image_finish_read(&in, NULL, px, 0, cmap))
		goto out;
	for (int r = 0; r < height; r++)
		memcpy(rows + (size_t)r * in.width,
		       px + (size_t)spectro_row_source(
				    r, height, (int)in.height, scale, rate) *
				       in.width,
		       in.width);
	out.width = in.width;
	out.height = (png_uint_32)height;
	out.format = PNG_FORMAT_RGB_COLORMAP;
	out.colormap_entries = in.colormap_entries;
	/* Once for the size, once into a buffer of it. */
	if (!png_image_write_to_memory(&out, NULL, &len, 0, rows, 0, cmap))
		goto out;
	if ((png = malloc(len)) == NULL) {
		fprintf(stderr, "out of memory for the image\n");
		goto out;
	}
	if (!png_image_write_to_memory(&out, png, &len, 0, rows, 0, cmap))
		goto out;
	ok = fwrite(png, 1, len, stdout) == len;
out:
	if (!ok && (in.warning_or_error & PNG_IMAGE_ERROR) != 0)
		fprintf(stderr, "libpng: %s\n", in.message);
	if (!ok && (out.warning_or_error & PNG_IMAGE_ERROR) != 0)
		fprintf(stderr, "libpng: %s\n", out.message);
	png_image_free(&in);
	free(png);
	free(rows);
	free(px);
	return ok;
}

/*
 * Draws the window of in at height rows on scale: libsox's image as it is
 * (the fast path), or drawn at spectro_drawn_height() rows into memory
 * and remapped.  libsox writes its image to the FILE stdout names when
 * the chain stops, so stdout names a memory stream meanwhile.
 */
static bool
draw_scaled(sox_format_t *in, long long from_ms, long long to_ms,
	    const char *width, int height, enum spectro_scale scale,
	    bool with_peaks)
{
	int drawn = spectro_drawn_height(height, scale);
	char rows[16];
	FILE *real = stdout, *mem;
	char *img = NULL;
	size_t n = 0;
	bool ok;

	snprintf(rows, sizeof(rows), "%d", drawn);
	if (drawn == height && scale == SPECTRO_LINEAR)
		return draw(in, from_ms, to_ms, width, rows, with_peaks);
	if ((mem = open_memstream(&img, &n)) == NULL) {
		fprintf(stderr, "no memory stream: %s\n", strerror(errno));
		return false;
	}
	stdout = mem;
	ok = draw(in, from_ms, to_ms, width, rows, with_peaks);
	stdout = real;
	if (fclose(mem) != 0)
		ok = false;
	ok = ok && remap(img, n, height, scale, in->signal.rate);
	free(img);
	return ok;
}

int
spectro_main(int argc, char **argv)
{
	static const uint8_t zero[WAVEFORM_HEAD_LEN];
	long long from, to, width, height;
	enum spectro_scale scale;
	sox_format_t *in = NULL;
	bool with_peaks, ok = false;

	if (argc != 9 || strcmp(argv[1], SPECTRO_ARG) != 0 ||
	    !arg_num(argv[3], 0, INT64_MAX / 1000, &from) ||
	    !arg_num(argv[4], from + 1, INT64_MAX / 1000, &to) ||
	    !arg_num(argv[5], SPECTRO_WIDTH_MIN, SPECTRO_WIDTH_MAX, &width) ||
	    !arg_num(argv[6], SPECTRO_HEIGHT_MIN, SPECTRO_HEIGHT_MAX,
		     &height) ||
	    !spectro_scale_parse(argv[7], &scale)) {
		fprintf(stderr,
			"usage: PROG %s FILE FROM_MS TO_MS WIDTH "
			"HEIGHT linear|log PEAKS|-\n",
			SPECTRO_ARG);
		return 2;
	}
	if (!probe_init()) {
		fprintf(stderr, "libsox could not start\n");
		return 1;
	}
	if ((in = sox_open_read(argv[2], NULL, NULL, NULL)) == NULL ||
	    in->signal.rate <= 0 || in->signal.channels == 0) {
		fprintf(stderr, "libsox can not read this audio\n");
		goto out;
	}
	with_peaks = strcmp(argv[8], "-") != 0;
	if (with_peaks) {
		if ((peaks.f = fopen(argv[8], "wbe")) == NULL) {
			fprintf(stderr, "the peaks can not be written: %s\n",
				strerror(errno));
			goto out;
		}
		/* The header is written last, once frames are known. */
		if (fwrite(zero, sizeof(zero), 1, peaks.f) != 1)
			peaks.failed = true;
		peaks.head.sample_rate = (uint32_t)in->signal.rate;
		peaks.head.spp = waveform_base_spp(peaks.head.sample_rate);
		waveform_acc_init(&peaks.acc, peaks.head.spp);
	}
	ok = draw_scaled(in, from, to, argv[5], (int)height, scale, with_peaks);
	if (with_peaks && !peaks_close() && ok) {
		fprintf(stderr, "the peaks could not be written\n");
		ok = false;
	}
	if (fflush(stdout) != 0)
		ok = false;
out:
	if (peaks.f != NULL)
		fclose(peaks.f);
	if (in != NULL)
		sox_close(in);
	sox_quit();
	return ok ? 0 : 1;
}
