/* SPDX-License-Identifier: MIT */
/*
 * t/unit/waveform.c - stored peaks and their merge (lib/codec/waveform.h).
 *
 * The merge is checked against a brute force over random signals, for
 * resolutions that are and are not multiples of the stored one, and
 * lengths that do and do not end on a pixel's edge.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "codec/waveform.h"

#define N_MAX 5000

static int16_t sig[N_MAX];
static uint8_t stored[N_MAX * WAVEFORM_PIXEL_LEN];

struct got {
	int16_t min[N_MAX], max[N_MAX];
	size_t n, stop_at;
};

static bool
collect(void *arg, int16_t min, int16_t max)
{
	struct got *g = arg;

	if (g->n >= N_MAX || g->n == g->stop_at)
		return false;
	g->min[g->n] = min;
	g->max[g->n] = max;
	g->n++;
	return true;
}

/* Stored pixels of sig[0..n) at spp into stored; their number. */
static size_t
make(size_t n, uint32_t spp)
{
	struct waveform_acc a;
	size_t np = 0;

	waveform_acc_init(&a, spp);
	for (size_t i = 0; i < n; i++)
		if (waveform_acc_add(&a, sig[i], stored + np * 4))
			np++;
	if (waveform_acc_finish(&a, stored + np * 4))
		np++;
	return np;
}

/* Merges n frames stored at b into q; true when it matches the brute
 * force (the min and max of every stored pixel overlapping each output
 * pixel). */
static bool
merge_ok(size_t n, uint32_t b, uint32_t q)
{
	struct waveform_head h = {8000, b, n};
	struct waveform_merge m;
	static struct got g;
	size_t np = make(n, b), want = (n + q - 1) / q;

	memset(&g, 0, sizeof(g));
	g.stop_at = SIZE_MAX;
	waveform_merge_init(&m, &h, q);
	if (waveform_merge_length(&m) != want || np != waveform_pixels(&h))
		return false;
	for (size_t i = 0; i < np; i++)
		waveform_merge_feed(&m, stored + i * 4, collect, &g);
	waveform_merge_finish(&m, collect, &g);
	if (g.n != want)
		return false;
	for (size_t j = 0; j < want; j++) {
		int16_t mn = INT16_MAX, mx = INT16_MIN;

		for (size_t i = 0; i < np; i++) {
			size_t s = i * b, e = s + b < n ? s + b : n;

			if (e <= j * q || s >= (j + 1) * q)
				continue;
			for (size_t k = s; k < e; k++) {
				mn = sig[k] < mn ? sig[k] : mn;
				mx = sig[k] > mx ? sig[k] : mx;
			}
		}
		if (g.min[j] != mn || g.max[j] != mx)
			return false;
	}
	return true;
}

int
main(void)
{
	struct waveform_head h = {48000, 240, 0x123456789aULL}, r;
	struct waveform_acc a;
	uint8_t head[WAVEFORM_HEAD_LEN], px[4];
	int16_t s[] = {1, -2, 3, 4, 5, 6, -7};
	int pixels = 0, bad = 0;

	waveform_head_put(head, &h);
	ok(memcmp(head, "XMWF", 4) == 0, "the header starts with XMWF");
	ok(waveform_head_get(head, &r) && r.sample_rate == 48000 &&
		   r.spp == 240 && r.frames == 0x123456789aULL,
	   "the header reads back, frames past 32 bits included");
	head[0] = 'Y';
	ok(!waveform_head_get(head, &r), "another magic is refused");
	h.spp = 0;
	waveform_head_put(head, &h);
	ok(!waveform_head_get(head, &r), "0 samples per pixel is refused");
	h.spp = 240;
	h.sample_rate = 0;
	waveform_head_put(head, &h);
	ok(!waveform_head_get(head, &r), "a rate of 0 is refused");
	is_int(waveform_base_spp(48000), 240, "48 kHz: 240 samples per pixel");
	is_int(waveform_base_spp(44100), 220, "44.1 kHz: 220");
	is_int(waveform_base_spp(100), 1, "100 Hz: 1, never 0");

	waveform_acc_init(&a, 3);
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (waveform_acc_add(&a, s[i], px)) {
			pixels++;
			if (pixels == 1)
				ok(memcmp(px, "\xfe\xff\x03\x00", 4) == 0,
				   "pixel 1: min -2, max 3, little-endian");
			else
				ok(memcmp(px, "\x04\x00\x06\x00", 4) == 0,
				   "pixel 2: min 4, max 6");
		}
	is_int(pixels, 2, "7 samples at 3 per pixel: 2 whole pixels");
	ok(waveform_acc_finish(&a, px) &&
		   memcmp(px, "\xf9\xff\xf9\xff", 4) == 0,
	   "and a last one of one sample, -7");
	ok(!waveform_acc_finish(&a, px), "nothing after it");

	{
		static int32_t s32[N_MAX];
		static uint8_t one[N_MAX * 4], block[N_MAX * 4];
		struct waveform_acc x, y;
		size_t n1 = 0, n2 = 0;
		bool done;

		srand(3);
		for (size_t i = 0; i < N_MAX; i++)
			s32[i] = (int32_t)((uint32_t)rand() * 2654435761u);
		s32[9] = INT32_MIN;
		s32[10] = INT32_MAX;
		waveform_acc_init(&x, 37);
		waveform_acc_init(&y, 37);
		for (size_t i = 0; i < N_MAX; i++)
			if (waveform_acc_add(&x, (int16_t)(s32[i] >> 16),
					     one + n1 * 4))
				n1++;
		for (size_t i = 0; i < N_MAX;) {
			size_t piece = (size_t)(rand() % 100) + 1;

			piece = piece < N_MAX - i ? piece : N_MAX - i;
			for (size_t k = 0; k < piece;) {
				k += waveform_acc_add32(&y, s32 + i + k,
							piece - k,
							block + n2 * 4, &done);
				n2 += done;
			}
			i += piece;
		}
		n1 += waveform_acc_finish(&x, one + n1 * 4);
		n2 += waveform_acc_finish(&y, block + n2 * 4);
		ok(n1 == n2 && memcmp(one, block, n1 * 4) == 0,
		   "32-bit samples in random pieces make the same pixels as "
		   "one 16-bit sample at a time (%zu)",
		   n1);
	}

	srand(7);
	for (size_t i = 0; i < N_MAX; i++)
		sig[i] = (int16_t)(rand() % 65536 - 32768);
	sig[17] = INT16_MIN;
	sig[18] = INT16_MAX;
	for (uint32_t b = 1; b <= 7; b += 3)
		for (uint32_t q = b; q <= 4 * b + 3; q++)
			for (size_t n = 1; n <= 200; n += 13)
				if (!merge_ok(n, b, q)) {
					bad++;
					diag("n %zu stored %u merged %u", n, b,
					     q);
				}
	is_int(bad, 0,
	       "merges match the brute force (stored 1, 4, 7 "
	       "samples per pixel; merged to 1x-4x and between)");
	ok(merge_ok(N_MAX, 220, 882), "44.1 kHz at 50 pixels per second");
	{
		struct waveform_head hh = {8000, 2, 100};
		struct waveform_merge m;
		static struct got g;
		size_t np = make(100, 2);
		bool went = true;

		memset(&g, 0, sizeof(g));
		g.stop_at = 3;
		waveform_merge_init(&m, &hh, 4);
		for (size_t i = 0; i < np && went; i++)
			went = waveform_merge_feed(&m, stored + i * 4, collect,
						   &g);
		ok(!went && g.n == 3, "an emit that says stop stops the merge");
		waveform_merge_init(&m, &hh, 4);
		for (size_t i = 0; i < np + 5; i++)
			waveform_merge_feed(&m,
					    np > i ? stored + i * 4 : stored,
					    collect, &g);
		is_int(m.in, 50, "pixels past the end are ignored");
	}
	return tap_done();
}
