/* SPDX-License-Identifier: MIT */
/*
 * spectro.h - a spectrogram PNG of an audio file, or of a time window of
 * it, drawn by libsox's `spectrogram` effect through the libsox API (not
 * the sox program); optionally the file's waveform peaks in the same pass
 * (lib/codec/waveform's stored form).
 *
 * libsox parses untrusted bytes, so it runs in a child process that
 * holds no secrets (lib/core/child: posix_spawn, PATH and locale only,
 * own process group, dies with the caller, a deadline) and opens no file
 * but the system's, the audio file and the peaks file (Landlock): the
 * calling program itself again, as `PROG SPECTRO_ARG ...`, whose main()
 * must hand such a command line to spectro_main() before it reads any
 * setting (as for PROBE_SOX_ARG, lib/core/probe.h).  Programs that call
 * spectro_render() link libsox and libpng.
 *
 * The image: raw (no axes, legend or title; a client draws them), one
 * column per time slice, left to right; libsox's default palette (dark
 * is quiet) over 120 dB below the loudest bin.  Several channels are
 * averaged into one first.  Rows, on the linear scale: 0 Hz at the
 * bottom and rate/2 at the top, so row r from the top is
 * (height - 1 - r) * rate / (2 * (height - 1)) Hz; on the log scale:
 * spectro_log_min_hz() at the bottom and rate/2 at the top, row r from
 * the top at min * (rate / (2 * min))^((height - 1 - r) / (height - 1)).
 *
 * libsox draws 2^k + 1 rows (its FFT of 2^(k+1) points; any other size
 * takes a DFT of quadratic cost, minutes for ten minutes of audio).  A
 * linear height of that form is its image as it is (the fast path);
 * any other height, or the log scale, is drawn at
 * spectro_drawn_height() rows and its rows mapped to the asked ones
 * (spectro_row_source(): the nearest drawn row to each row's frequency),
 * the PNG decoded and encoded again with libpng in the child.
 *
 * The chain reads only the window: the input is seeked to from_ms when
 * its format can seek (WAV, FLAC, ...), else read through and
 * discarded.  Memory: the image's width x drawn height floats in
 * the child, whatever the window's length, and its pixels twice more (a
 * byte each) when its rows are mapped.
 */
#ifndef XMHUB_SPECTRO_H
#define XMHUB_SPECTRO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/buf.h"

/* The argument that makes a program spectro_main() (see above). */
#define SPECTRO_ARG "--spectro-sox"

#define SPECTRO_WIDTH_MIN 100 /* libsox's own lower bound */
#define SPECTRO_WIDTH_MAX 4096
/* Heights asked for: any within these. */
#define SPECTRO_HEIGHT_MIN 16
#define SPECTRO_HEIGHT_MAX 2048
/* Heights libsox draws: 2^k + 1 rows (2^k frequency bins and the
 * Nyquist row) within these; the most is also the log scale's. */
#define SPECTRO_DRAWN_MIN 65
#define SPECTRO_DRAWN_MAX 1025
/* The log scale's lowest frequency (below it: the DC bin and the
 * rumble nobody reads), unless rate / 8 is lower. */
#define SPECTRO_LOG_MIN_HZ 20.0
#define SPECTRO_PNG_MAX (16 << 20) /* bytes of an image; more fails */

/* The frequency scale of the rows; linear is 0, the default. */
enum spectro_scale { SPECTRO_LINEAR, SPECTRO_LOG };

/* What to draw. */
struct spectro_req {
	int64_t from_ms; /* the window: [from_ms, to_ms) of the file, */
	int64_t to_ms;	 /* to_ms > from_ms; past the end: to the end */
	int width;	 /* columns, SPECTRO_WIDTH_MIN..MAX */
	int height;	 /* rows, SPECTRO_HEIGHT_MIN..MAX */
	enum spectro_scale scale;
};

/* The scale named s ("linear", "log") into *scale; false for another. */
bool spectro_scale_parse(const char *s, enum spectro_scale *scale);

/* The log scale's lowest frequency at rate Hz: SPECTRO_LOG_MIN_HZ, or
 * rate / 8 when lower (so that it stays below rate / 2). */
double spectro_log_min_hz(double rate);

/* The rows libsox draws for height rows on scale: height itself when
 * linear and 2^k + 1 within SPECTRO_DRAWN_MIN..MAX, else the next such
 * size up (SPECTRO_DRAWN_MAX at most; always it for the log scale). */
int spectro_drawn_height(int height, enum spectro_scale scale);

/* The drawn row (of drawn, from the top) that row (of height, from the
 * top) shows on scale at rate Hz: the nearest to its frequency. */
int spectro_row_source(int row, int height, int drawn, enum spectro_scale scale,
		       double rate);

/*
 * Draws rq of the audio file at path into png (appended; the caller owns
 * the buffer) in a child, for at most timeout_ms.  With peaks_path not
 * NULL, the child also writes the whole window's waveform peaks there
 * (lib/codec/waveform's stored form, at waveform_base_spp() of the
 * file's rate; the file is created or replaced).  False with a reason in
 * detail: a bad request, libsox can not read the file, the child failed,
 * took too long or the runner is stopping (lib/core/child's child_run),
 * or the image is over SPECTRO_PNG_MAX.  The reason may name path: show
 * it to clients through child_reason().
 */
bool spectro_render(const char *path, const struct spectro_req *rq,
		    const char *peaks_path, int timeout_ms, struct buf *png,
		    char *detail, size_t dlen);

/*
 * The child's side: argv is {PROG, SPECTRO_ARG, path, from_ms, to_ms,
 * width, height, "linear" or "log", peaks path or "-"}; writes the PNG to
 * stdout and returns the exit status, 0, or 1 with one line on stderr.
 */
int spectro_main(int argc, char **argv);

#endif
