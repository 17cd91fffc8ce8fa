/* SPDX-License-Identifier: MIT */
/*
 * waveform.h - min/max peaks of audio, as stored by the transcode runner
 * and served as BBC audiowaveform's JSON (version 2) at any coarser
 * resolution.  Pure: bytes and samples in, values out; no allocation.
 *
 * The stored object ("peaks", doc/uploads.md) is one mono waveform (the
 * channels averaged, as audiowaveform does without --split-channels):
 *
 *   0  4  "XMWF"
 *   4  4  sample rate, Hz (u32, little-endian)
 *   8  4  samples per pixel of the stored peaks, >= 1 (u32 LE)
 *   12 8  frames: samples per channel of the whole recording (u64 LE)
 *   20 .. ceil(frames / samples per pixel) pixels of 4 bytes each:
 *         min, max as signed 16-bit little-endian
 *
 * Pixel i covers frames [i*spp, min((i+1)*spp, frames)).  Peaks are made
 * one sample at a time (waveform_acc), so a recording of any length needs
 * constant memory, and merged (waveform_merge) pixel by pixel into the
 * samples_per_pixel a client asks for.
 */
#ifndef XMHUB_WAVEFORM_H
#define XMHUB_WAVEFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WAVEFORM_HEAD_LEN 20
#define WAVEFORM_PIXEL_LEN 4
/* Stored resolution: this many pixels per second (samples per pixel
 * rate / this, at least 1); the finest a client can ask for. */
#define WAVEFORM_BASE_PPS 200

/* The stored header. */
struct waveform_head {
	uint32_t sample_rate;
	uint32_t spp; /* samples per pixel */
	uint64_t frames;
};

/* The stored samples per pixel for a recording of rate Hz. */
uint32_t waveform_base_spp(uint32_t rate);

/* Writes h as the stored header into out. */
void waveform_head_put(uint8_t out[WAVEFORM_HEAD_LEN],
		       const struct waveform_head *h);

/* Reads the stored header at in into *h: false when it is not one (bad
 * magic, a rate or samples per pixel of 0). */
bool waveform_head_get(const uint8_t in[WAVEFORM_HEAD_LEN],
		       struct waveform_head *h);

/* Stored pixels of a recording described by h: ceil(frames / spp). */
uint64_t waveform_pixels(const struct waveform_head *h);

/* Makes peaks one sample at a time. */
struct waveform_acc {
	uint32_t spp, n; /* samples per pixel; samples in the current one */
	int16_t min, max;
};

/* Starts peaks of spp (>= 1) samples per pixel. */
void waveform_acc_init(struct waveform_acc *a, uint32_t spp);

/* Adds sample s; true when it completed a pixel, then written to out
 * (the stored form: min, max LE). */
bool waveform_acc_add(struct waveform_acc *a, int16_t s,
		      uint8_t out[WAVEFORM_PIXEL_LEN]);

/*
 * Adds up to n samples of 32 bits (libsox's; their top 16 bits count)
 * from s, stopping after the first pixel they complete: returns the
 * samples taken, *done true when a pixel was completed into out.  The
 * fast path of a decoder's loop.
 */
size_t waveform_acc_add32(struct waveform_acc *a, const int32_t *s, size_t n,
			  uint8_t out[WAVEFORM_PIXEL_LEN], bool *done);

/* The last, partial pixel into out: true when there is one. */
bool waveform_acc_finish(struct waveform_acc *a,
			 uint8_t out[WAVEFORM_PIXEL_LEN]);

/*
 * Merges stored pixels into output pixels of spp_out samples (>= the
 * stored spp): output pixel j is the min and max of every stored pixel
 * whose frames overlap [j*spp_out, (j+1)*spp_out), so no peak is lost;
 * there are ceil(frames / spp_out) of them.  The stored pixels are fed
 * one at a time, in order.
 */
struct waveform_merge {
	struct waveform_head h;
	uint32_t spp_out;
	uint64_t in;  /* stored pixels fed */
	uint64_t cur; /* the output pixel being made */
	bool have;    /* cur holds something */
	int16_t min, max;
};

/* Starts merging the recording h into spp_out samples per pixel. */
void waveform_merge_init(struct waveform_merge *m,
			 const struct waveform_head *h, uint32_t spp_out);

/* Output pixels the merge makes: ceil(frames / spp_out). */
uint64_t waveform_merge_length(const struct waveform_merge *m);

/*
 * Feeds the next stored pixel (its 4 stored bytes).  Calls emit(arg,
 * min, max) for each output pixel it completes (at most two); emit
 * returns false to stop, and so does this then.  Pixels past the
 * recording's end are ignored.
 */
bool waveform_merge_feed(struct waveform_merge *m,
			 const uint8_t px[WAVEFORM_PIXEL_LEN],
			 bool (*emit)(void *arg, int16_t min, int16_t max),
			 void *arg);

/* Emits the last output pixel; false when emit did. */
bool waveform_merge_finish(struct waveform_merge *m,
			   bool (*emit)(void *arg, int16_t min, int16_t max),
			   void *arg);

#endif
