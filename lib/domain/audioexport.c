/* SPDX-License-Identifier: MIT */
/*
 * audioexport.c - an audio stream's window as a WAV file (see
 * audioexport.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/audioexport.h"
#include "domain/chunks.h"
#include "core/log.h"

#define OUT_BYTES 65536 /* the pieces handed to the sink */

/* One walk over the window: the plan's (out == NULL) or the write's. */
struct walk {
	const struct audioexport_req *q;
	struct audioexport_plan *plan;
	uint64_t origin;
	bool has_origin;
	int64_t cur;   /* sample frames laid down so far */
	int64_t limit; /* sample frames of the WAV; -1: not known yet */
	int64_t max;   /* sample frames the request's wav_max allows */
	int64_t tol;   /* a frame this near the last one's end joins it */
	/* The write's: */
	audioexport_sink sink;
	void *arg;
	int16_t *pcm; /* XMBPAUDIO_DECODED_MAX values */
	uint8_t *out; /* OUT_BYTES */
	size_t used;
};

static bool
flush(struct walk *w)
{
	bool ok = w->used == 0 || w->sink(w->arg, w->out, w->used);

	w->used = 0;
	return ok;
}

/* Appends the n values at v (NULL: silence) as s16le. */
static bool
put(struct walk *w, const int16_t *v, size_t n)
{
	while (n > 0) {
		size_t k = (OUT_BYTES - w->used) / 2;
		uint8_t *o = w->out + w->used;

		if (k == 0) {
			if (!flush(w))
				return false;
			continue;
		}
		if (k > n)
			k = n;
		if (v == NULL)
			memset(o, 0, 2 * k);
		else
			for (size_t i = 0; i < k; i++, v++) {
				o[2 * i] = (uint8_t)((uint16_t)*v & 0xff);
				o[2 * i + 1] = (uint8_t)((uint16_t)*v >> 8);
			}
		w->used += 2 * k;
		n -= k;
	}
	return true;
}

/* Lays down n sample frames of silence at w->cur (a gap). */
static bool
silence(struct walk *w, int64_t n)
{
	struct audioexport_plan *p = w->plan;
	uint32_t rate = w->q->decl.rate;

	if (w->out == NULL) {
		if (p->listed < AUDIOEXPORT_GAPS_LISTED) {
			p->list[p->listed].start_us =
				w->origin +
				streamaudio_us((uint64_t)w->cur, rate);
			p->list[p->listed].duration_us =
				streamaudio_us((uint64_t)n, rate);
			p->listed++;
		}
		p->gaps++;
		p->silence_frames += (uint64_t)n;
	} else if (!put(w, NULL, (size_t)n * w->q->decl.channels))
		return false;
	w->cur += n;
	return true;
}

/* The place of a frame at ts on the time line, in sample frames. */
static int64_t
place(const struct walk *w, uint64_t ts)
{
	if (ts >= w->origin)
		return (int64_t)streamaudio_frames(ts - w->origin,
						   w->q->decl.rate);
	return -(int64_t)streamaudio_frames(w->origin - ts, w->q->decl.rate);
}

/*
 * Lays down one frame (ts, the len bytes at frame); *done when the
 * window is full.
 */
static enum audioexport_status
frame(struct walk *w, uint64_t ts, const uint8_t *f, size_t len, bool *done)
{
	const struct streamaudio_decl *d = &w->q->decl;
	int64_t start, skip = 0, take;
	size_t n;

	if (xmbpaudio_frame_check(f, len, d->codec, d->channels, &n) !=
	    XMBPAUDIO_OK) {
		log_error("audioexport: stream %s: a frame at %llu does not "
			  "decode",
			  w->q->stream_id, (unsigned long long)ts);
		return AUDIOEXPORT_FAILED;
	}
	if (!w->has_origin) {
		w->origin = w->q->from_given ? w->q->from : ts;
		w->has_origin = true;
		if (w->q->to_given && w->limit < 0)
			w->limit =
				w->q->to > w->origin ? place(w, w->q->to) : 0;
	}
	start = place(w, ts);
	if (start + (int64_t)n <= w->cur)
		return AUDIOEXPORT_OK; /* all of it laid down already */
	if (start > w->cur + w->tol) {
		int64_t gap = start - w->cur;

		if (w->limit >= 0 && gap > w->limit - w->cur)
			gap = w->limit - w->cur;
		if (!silence(w, gap))
			return AUDIOEXPORT_SINK;
	} else if (start < w->cur - w->tol)
		skip = w->cur - start;
	take = (int64_t)n - skip;
	if (w->limit >= 0 && take > w->limit - w->cur)
		take = w->limit - w->cur;
	if (take <= 0) {
		*done = true;
		return AUDIOEXPORT_OK;
	}
	if (w->out != NULL) {
		if (xmbpaudio_decode(f, len, d->codec, d->channels, w->pcm,
				     XMBPAUDIO_DECODED_MAX,
				     &n) != XMBPAUDIO_OK ||
		    !put(w, w->pcm + skip * d->channels,
			 (size_t)take * d->channels))
			return AUDIOEXPORT_SINK;
	}
	w->cur += take;
	if (w->cur > w->max)
		return AUDIOEXPORT_TOO_LARGE;
	return AUDIOEXPORT_OK;
}

/* Runs walk w over the window. */
static enum audioexport_status
run(struct db *db, struct store *st, struct walk *w, enum db_status *dbst)
{
	const struct audioexport_req *q = w->q;
	uint64_t back = streamaudio_us(XMBPAUDIO_DECODED_MAX / q->decl.channels,
				       q->decl.rate);
	struct chunks_opts o = {q->stream_id, 0,
				q->to_given ? q->to : UINT64_MAX, false,
				q->mem_max};
	struct chunks_reader *r;
	struct sample_value v;
	enum chunks_status cs;
	enum audioexport_status s = AUDIOEXPORT_OK;
	bool done = false;
	uint64_t ts;

	/* A frame that starts before the window may reach into it. */
	if (q->from_given)
		o.from = q->from > back ? q->from - back : 0;
	if ((r = chunks_open(db, st, &o)) == NULL)
		return AUDIOEXPORT_FAILED;
	while (s == AUDIOEXPORT_OK && !done &&
	       (cs = chunks_next(r, &ts, &v)) == CHUNKS_OK)
		s = frame(w, ts, v.u.raw.p, v.u.raw.len, &done);
	if (s == AUDIOEXPORT_OK && !done && cs != CHUNKS_END) {
		log_error("audioexport: stream %s: %s", q->stream_id,
			  chunks_detail(r));
		if (cs == CHUNKS_DB) {
			*dbst = chunks_db_status(r);
			s = AUDIOEXPORT_DB;
		} else
			s = AUDIOEXPORT_FAILED;
	}
	chunks_close(r);
	if (s != AUDIOEXPORT_OK)
		return s;
	if (!w->has_origin) { /* no audio at all in the window */
		w->origin = q->from_given ? q->from : 0;
		w->has_origin = true;
		if (w->limit < 0)
			w->limit =
				q->from_given && q->to_given && q->to > q->from
					? place(w, q->to)
					: 0;
	}
	if (w->limit > w->max)
		return AUDIOEXPORT_TOO_LARGE;
	if (w->limit > w->cur && !silence(w, w->limit - w->cur))
		return AUDIOEXPORT_SINK;
	if (w->out != NULL && !flush(w))
		return AUDIOEXPORT_SINK;
	return AUDIOEXPORT_OK;
}

/* A walk of q, for plan p. */
static void
walk_init(struct walk *w, const struct audioexport_req *q,
	  struct audioexport_plan *p)
{
	uint64_t bytes = q->wav_max < AUDIOEXPORT_WAV_MAX ? q->wav_max
							  : AUDIOEXPORT_WAV_MAX;

	memset(w, 0, sizeof(*w));
	w->q = q;
	w->plan = p;
	w->limit = -1;
	w->max = bytes > STREAMAUDIO_WAV_HEADER
			 ? (int64_t)((bytes - STREAMAUDIO_WAV_HEADER) /
				     (2u * q->decl.channels))
			 : 0;
	w->tol = q->decl.rate / 1000;
}

enum audioexport_status
audioexport_plan(struct db *db, struct store *st,
		 const struct audioexport_req *q, struct audioexport_plan *plan,
		 enum db_status *dbst)
{
	enum audioexport_status s;
	struct walk w;

	memset(plan, 0, sizeof(*plan));
	walk_init(&w, q, plan);
	/* Refuse a window too long before reading any of it. */
	if (q->from_given && q->to_given &&
	    streamaudio_frames(q->to - q->from, q->decl.rate) > (uint64_t)w.max)
		return AUDIOEXPORT_TOO_LARGE;
	if ((s = run(db, st, &w, dbst)) != AUDIOEXPORT_OK)
		return s;
	plan->origin_us = w.origin;
	plan->frames = (uint64_t)w.cur;
	return AUDIOEXPORT_OK;
}

uint64_t
audioexport_size(const struct audioexport_req *q,
		 const struct audioexport_plan *plan)
{
	return STREAMAUDIO_WAV_HEADER + plan->frames * 2u * q->decl.channels;
}

enum audioexport_status
audioexport_write(struct db *db, struct store *st,
		  const struct audioexport_req *q,
		  const struct audioexport_plan *plan, audioexport_sink sink,
		  void *arg, enum db_status *dbst)
{
	struct audioexport_plan scratch;
	uint8_t head[STREAMAUDIO_WAV_HEADER];
	enum audioexport_status s = AUDIOEXPORT_FAILED;
	struct walk w;

	/* The same time line again: the plan's origin and length. */
	walk_init(&w, q, &scratch);
	memset(&scratch, 0, sizeof(scratch));
	w.origin = plan->origin_us;
	w.has_origin = true;
	w.limit = (int64_t)plan->frames;
	w.sink = sink;
	w.arg = arg;
	w.pcm = malloc(XMBPAUDIO_DECODED_MAX * sizeof(*w.pcm));
	w.out = malloc(OUT_BYTES);
	if (w.pcm == NULL || w.out == NULL)
		goto out;
	streamaudio_wav_header(
		head, &q->decl,
		(uint32_t)(audioexport_size(q, plan) - STREAMAUDIO_WAV_HEADER));
	if (!sink(arg, head, sizeof(head))) {
		s = AUDIOEXPORT_SINK;
		goto out;
	}
	s = run(db, st, &w, dbst);
out:
	free(w.pcm);
	free(w.out);
	return s;
}
