/* SPDX-License-Identifier: MIT */
/*
 * spectro.c - spectrograms and waveform peaks through libsox, in a child
 * that holds no secrets (spectro.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sox.h>

#include "codec/waveform.h"
#include "core/child.h"
#include "core/probe.h"
#include "core/spectro.h"

#define ERR_MAX 4096 /* bytes of the child's stderr kept */

bool
spectro_height_valid(int height)
{
	int bins = height - 1;

	return height >= SPECTRO_HEIGHT_MIN && height <= SPECTRO_HEIGHT_MAX &&
	       (bins & (bins - 1)) == 0;
}

static bool
req_valid(const struct spectro_req *rq)
{
	return rq->from_ms >= 0 && rq->to_ms > rq->from_ms &&
	       rq->width >= SPECTRO_WIDTH_MIN &&
	       rq->width <= SPECTRO_WIDTH_MAX &&
	       spectro_height_valid(rq->height);
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

int
spectro_main(int argc, char **argv)
{
	static const uint8_t zero[WAVEFORM_HEAD_LEN];
	long long from, to, width, height;
	sox_format_t *in = NULL;
	bool with_peaks, ok = false;

	if (argc != 8 || strcmp(argv[1], SPECTRO_ARG) != 0 ||
	    !arg_num(argv[3], 0, INT64_MAX / 1000, &from) ||
	    !arg_num(argv[4], from + 1, INT64_MAX / 1000, &to) ||
	    !arg_num(argv[5], SPECTRO_WIDTH_MIN, SPECTRO_WIDTH_MAX, &width) ||
	    !arg_num(argv[6], SPECTRO_HEIGHT_MIN, SPECTRO_HEIGHT_MAX,
		     &height) ||
	    !spectro_height_valid((int)height)) {
		fprintf(stderr,
			"usage: PROG %s FILE FROM_MS TO_MS WIDTH "
			"HEIGHT PEAKS|-\n",
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
	with_peaks = strcmp(argv[7], "-") != 0;
	if (with_peaks) {
		if ((peaks.f = fopen(argv[7], "wbe")) == NULL) {
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
	ok = draw(in, from, to, argv[5], argv[6], with_peaks);
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
