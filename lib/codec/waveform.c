/* SPDX-License-Identifier: MIT */
/*
 * waveform.c - min/max peaks, stored and merged (waveform.h).
 */
#include "config.h"

#include <string.h>

#include "codec/waveform.h"

static void
le32_put(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t
le32_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static int16_t
le16s_get(const uint8_t *p)
{
	return (int16_t)(uint16_t)((uint16_t)p[0] | (uint16_t)p[1] << 8);
}

uint32_t
waveform_base_spp(uint32_t rate)
{
	return rate / WAVEFORM_BASE_PPS > 0 ? rate / WAVEFORM_BASE_PPS : 1;
}

void
waveform_head_put(uint8_t out[WAVEFORM_HEAD_LEN], const struct waveform_head *h)
{
	memcpy(out, "XMWF", 4);
	le32_put(out + 4, h->sample_rate);
	le32_put(out + 8, h->spp);
	le32_put(out + 12, (uint32_t)h->frames);
	le32_put(out + 16, (uint32_t)(h->frames >> 32));
}

bool
waveform_head_get(const uint8_t in[WAVEFORM_HEAD_LEN], struct waveform_head *h)
{
	if (memcmp(in, "XMWF", 4) != 0)
		return false;
	h->sample_rate = le32_get(in + 4);
	h->spp = le32_get(in + 8);
	h->frames = (uint64_t)le32_get(in + 12) | (uint64_t)le32_get(in + 16)
							  << 32;
	return h->sample_rate > 0 && h->spp > 0;
}

uint64_t
waveform_pixels(const struct waveform_head *h)
{
	return h->frames / h->spp + (h->frames % h->spp != 0);
}

void
waveform_acc_init(struct waveform_acc *a, uint32_t spp)
{
	a->spp = spp > 0 ? spp : 1;
	a->n = 0;
	a->min = a->max = 0;
}

static void
pixel_put(uint8_t out[WAVEFORM_PIXEL_LEN], int16_t min, int16_t max)
{
	out[0] = (uint8_t)(uint16_t)min;
	out[1] = (uint8_t)((uint16_t)min >> 8);
	out[2] = (uint8_t)(uint16_t)max;
	out[3] = (uint8_t)((uint16_t)max >> 8);
}

bool
waveform_acc_add(struct waveform_acc *a, int16_t s,
		 uint8_t out[WAVEFORM_PIXEL_LEN])
{
	if (a->n == 0 || s < a->min)
		a->min = s;
	if (a->n == 0 || s > a->max)
		a->max = s;
	if (++a->n < a->spp)
		return false;
	pixel_put(out, a->min, a->max);
	a->n = 0;
	return true;
}

size_t
waveform_acc_add32(struct waveform_acc *a, const int32_t *s, size_t n,
		   uint8_t out[WAVEFORM_PIXEL_LEN], bool *done)
{
	size_t take = a->spp - a->n < n ? a->spp - a->n : n;
	int32_t mn = INT32_MAX, mx = INT32_MIN;

	*done = false;
	if (take == 0)
		return 0;
	/* A shift keeps the order: the extremes' top bits are the top bits'
	 * extremes. */
	for (size_t i = 0; i < take; i++) {
		mn = s[i] < mn ? s[i] : mn;
		mx = s[i] > mx ? s[i] : mx;
	}
	if (a->n == 0 || (int16_t)(mn >> 16) < a->min)
		a->min = (int16_t)(mn >> 16);
	if (a->n == 0 || (int16_t)(mx >> 16) > a->max)
		a->max = (int16_t)(mx >> 16);
	a->n += (uint32_t)take;
	if (a->n == a->spp) {
		pixel_put(out, a->min, a->max);
		a->n = 0;
		*done = true;
	}
	return take;
}

bool
waveform_acc_finish(struct waveform_acc *a, uint8_t out[WAVEFORM_PIXEL_LEN])
{
	if (a->n == 0)
		return false;
	pixel_put(out, a->min, a->max);
	a->n = 0;
	return true;
}

void
waveform_merge_init(struct waveform_merge *m, const struct waveform_head *h,
		    uint32_t spp_out)
{
	memset(m, 0, sizeof(*m));
	m->h = *h;
	m->spp_out = spp_out > 0 ? spp_out : 1;
}

uint64_t
waveform_merge_length(const struct waveform_merge *m)
{
	return m->h.frames / m->spp_out + (m->h.frames % m->spp_out != 0);
}

bool
waveform_merge_feed(struct waveform_merge *m,
		    const uint8_t px[WAVEFORM_PIXEL_LEN],
		    bool (*emit)(void *arg, int16_t min, int16_t max),
		    void *arg)
{
	uint64_t s = m->in * m->h.spp, e;
	int16_t min = le16s_get(px), max = le16s_get(px + 2);

	if (s >= m->h.frames)
		return true;
	m->in++;
	e = s + m->h.spp < m->h.frames ? s + m->h.spp : m->h.frames;
	/* spp_out >= spp: the pixel overlaps one or two output pixels. */
	for (uint64_t j = s / m->spp_out; j <= (e - 1) / m->spp_out; j++) {
		if (m->have && j != m->cur) {
			if (!emit(arg, m->min, m->max))
				return false;
			m->have = false;
		}
		if (!m->have) {
			m->cur = j;
			m->min = min;
			m->max = max;
			m->have = true;
			continue;
		}
		if (min < m->min)
			m->min = min;
		if (max > m->max)
			m->max = max;
	}
	return true;
}

bool
waveform_merge_finish(struct waveform_merge *m,
		      bool (*emit)(void *arg, int16_t min, int16_t max),
		      void *arg)
{
	if (!m->have)
		return true;
	m->have = false;
	return emit(arg, m->min, m->max);
}
