/* SPDX-License-Identifier: MIT */
/*
 * probe.h - what an audio file holds: duration, rate, channels, depth,
 * codec.
 *
 * libsox reads the header of the formats it knows (WAV, FLAC, MP3, ...);
 * what it can not open, or opens without a length, is asked of ffprobe.
 * Both parse untrusted bytes, so both run in a child process with no
 * secrets (lib/core/child: minimal environment, own process group, a
 * deadline) that opens no file but the system's and the one probed
 * (Landlock): ffprobe, and for libsox the calling program itself again,
 * as `PROG PROBE_SOX_ARG FILE`, whose main() must hand that to
 * probe_sox_main() before it reads any setting.  Only the runner uses
 * this: it links libsox.
 */
#ifndef XMHUB_PROBE_H
#define XMHUB_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROBE_CODEC_MAX 32
/* How long ffprobe may take: it reads headers, not the whole file. */
#define PROBE_TIMEOUT_MS 60000

/* A field is unknown when 0 (codec: ""). */
struct probe_info {
	int64_t duration_ms;
	long sample_rate_hz;
	int channels;
	int bit_depth;		     /* 0 for lossy codecs */
	char codec[PROBE_CODEC_MAX]; /* ffprobe-style: pcm_s16le, flac, mp3 */
};

/* The argument that makes a program probe_sox_main() (see above). */
#define PROBE_SOX_ARG "--probe-sox"

/*
 * The only containers ffprobe and ffmpeg may read an upload as (their
 * -format_whitelist): audio files.  A playlist (HLS), a concat list or an
 * image sequence would make them open other files than the upload.
 */
#define PROBE_FORMATS                                                          \
	"wav,w64,aiff,flac,mp3,ogg,matroska,mov,aac,caf,au,amr,wv,ape,asf"

/* Initialises libsox and keeps it quiet; probe_sox_main() calls it. */
bool probe_init(void);

/*
 * The child's side: prints libsox's answer for the file at path as one
 * line, "DURATION_MS RATE CHANNELS BITS CODEC", and returns the exit
 * status: 0, or 1 (nothing printed) when libsox cannot tell (unknown or
 * lossy format, no length).
 */
int probe_sox_main(const char *path);

/*
 * Fills *info from the file at path, giving ffprobe at most timeout_ms
 * (PROBE_TIMEOUT_MS).  False with a reason in detail when neither libsox
 * nor ffprobe can read it, no duration is known, ffprobe did not end in
 * time or the runner is stopping (lib/core/child's child_run()); detail
 * is ffprobe's words, which may name path and hold addresses: show it
 * through child_reason().
 */
bool probe_file(const char *path, struct probe_info *info, int timeout_ms,
		char *detail, size_t dlen);

/* Asks ffprobe only (for outputs: WebM and MP4, which libsox does not
 * read); as probe_file(). */
bool probe_ffprobe(const char *path, struct probe_info *info, int timeout_ms,
		   char *detail, size_t dlen);

#endif
