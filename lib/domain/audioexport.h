/* SPDX-License-Identifier: MIT */
/*
 * audioexport.h - a window of an audio stream (a bytes stream with an
 * audio declaration, lib/codec/streamaudio) as a PCM 16-bit WAV file,
 * written piece by piece so that memory stays flat however long it is.
 *
 * Two walks over the stored frames (lib/domain/chunks), inside one
 * snapshot the caller opened: audioexport_plan() finds the WAV's start,
 * length and gaps without decoding (the length and the gaps go into the
 * answer's head, before the body); audioexport_write() then decodes and
 * writes the same time line.  The time line (doc/xmbp-audio.md): a frame
 * with timestamp ts starts round((ts - origin) * rate / 1e6) sample
 * frames into the WAV; a frame starting within 1 ms of where the last
 * one ended joins it; a later one leaves a gap of silence; an earlier
 * one loses the part already written.
 */
#ifndef XMHUB_AUDIOEXPORT_H
#define XMHUB_AUDIOEXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/streamaudio.h"
#include "core/db.h"
#include "store/storage.h"

/* The largest WAV the format holds (data and header), in bytes; a
 * request's own bound (wav_max) is at most this. */
#define AUDIOEXPORT_WAV_MAX 0x7fffffffu
/* Gaps listed one by one in a plan; more are only counted. */
#define AUDIOEXPORT_GAPS_LISTED 16

/* What is asked. */
struct audioexport_req {
	const char *stream_id;	      /* ingest_streams.id */
	struct streamaudio_decl decl; /* its audio declaration */
	uint64_t from, to;	      /* the window, microseconds */
	bool from_given, to_given;    /* else: from the stream's first frame,
				       * to the end of its last */
	size_t mem_max;		      /* budget of the chunk reader */
	uint64_t wav_max; /* bytes the WAV may have (header included), at
			   * most AUDIOEXPORT_WAV_MAX */
};

/* A stretch of silence put in for missing audio. */
struct audioexport_gap {
	uint64_t start_us, duration_us;
};

/* The WAV a window makes. */
struct audioexport_plan {
	uint64_t origin_us; /* time of its first sample frame */
	uint64_t frames;    /* sample frames (per channel) */
	uint64_t gaps;	    /* stretches of silence put in */
	uint64_t silence_frames;
	unsigned listed; /* of gaps, in list */
	struct audioexport_gap list[AUDIOEXPORT_GAPS_LISTED];
};

enum audioexport_status {
	AUDIOEXPORT_OK = 0,
	AUDIOEXPORT_TOO_LARGE, /* the WAV would pass the request's wav_max */
	AUDIOEXPORT_DB,	       /* a query failed: see db_status */
	AUDIOEXPORT_FAILED,    /* stored data unreadable, memory (logged) */
	AUDIOEXPORT_SINK       /* the sink refused a write */
};

/* Receives the WAV's bytes; false stops the write. */
typedef bool (*audioexport_sink)(void *arg, const void *p, size_t n);

/*
 * Walks the window of q and fills *plan.  AUDIOEXPORT_OK;
 * AUDIOEXPORT_TOO_LARGE; AUDIOEXPORT_DB with *dbst set; AUDIOEXPORT_FAILED
 * (the reason logged).
 */
enum audioexport_status audioexport_plan(struct db *db, struct store *st,
					 const struct audioexport_req *q,
					 struct audioexport_plan *plan,
					 enum db_status *dbst);

/* Bytes of the WAV of plan (header included). */
uint64_t audioexport_size(const struct audioexport_req *q,
			  const struct audioexport_plan *plan);

/*
 * Writes the WAV of plan (made by audioexport_plan() for q in the same
 * snapshot) to sink: exactly audioexport_size() bytes unless it fails.
 * Statuses as audioexport_plan(), and AUDIOEXPORT_SINK.
 */
enum audioexport_status audioexport_write(struct db *db, struct store *st,
					  const struct audioexport_req *q,
					  const struct audioexport_plan *plan,
					  audioexport_sink sink, void *arg,
					  enum db_status *dbst);

#endif
