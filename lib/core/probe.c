/* SPDX-License-Identifier: MIT */
/*
 * probe.c - audio file properties from libsox, or ffprobe; both in a
 * child process that holds no secrets (see probe.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <sox.h>

#include "core/child.h"
#include "core/probe.h"

#define FFPROBE_OUT_MAX 4096
#define FFPROBE_ERR_MAX 4096
#define SOX_OUT_MAX 256 /* probe_sox_main()'s one line */

/* libsox writes its warnings to stderr unless told otherwise. */
static void
quiet(unsigned level, const char *file, const char *fmt, va_list ap)
{
	(void)level;
	(void)file;
	(void)fmt;
	(void)ap;
}

bool
probe_init(void)
{
	sox_globals_t *g = sox_get_globals();

	g->verbosity = 0;
	g->output_message_handler = quiet;
	return sox_init() == SOX_SUCCESS;
}

/* The codec name of a lossless sox encoding, in ffprobe's words where
 * they have one ("pcm_s16le", "flac"). */
static void
sox_codec(const sox_format_t *ft, char *codec, size_t len)
{
	unsigned bits = ft->encoding.bits_per_sample;
	const char *end =
		ft->encoding.reverse_bytes == sox_option_yes ? "be" : "le";

	switch (ft->encoding.encoding) {
	case SOX_ENCODING_SIGN2:
		if (bits == 8)
			snprintf(codec, len, "pcm_s8");
		else
			snprintf(codec, len, "pcm_s%u%s", bits, end);
		break;
	case SOX_ENCODING_UNSIGNED:
		snprintf(codec, len, "pcm_u%u", bits);
		break;
	case SOX_ENCODING_FLOAT:
		snprintf(codec, len, "pcm_f%u%s", bits, end);
		break;
	case SOX_ENCODING_FLAC:
		snprintf(codec, len, "flac");
		break;
	default:
		snprintf(codec, len, "%s",
			 sox_encodings_info[ft->encoding.encoding].name);
	}
}

/*
 * libsox's answer: true when it knows the length and the format is
 * lossless (a lossy file's length in libsox counts the encoder's delay
 * and padding; ffprobe reads the encoder's header and is closer).
 */
static bool
probe_sox(const char *path, struct probe_info *info)
{
	sox_format_t *ft = sox_open_read(path, NULL, NULL, NULL);
	bool ok = false;

	if (ft == NULL)
		return false;
	if (ft->signal.length > 0 && ft->signal.rate > 0 &&
	    ft->signal.channels > 0 &&
	    (sox_encodings_info[ft->encoding.encoding].flags &
	     (sox_encodings_lossy1 | sox_encodings_lossy2)) == 0) {
		uint64_t frames = ft->signal.length / ft->signal.channels;

		info->sample_rate_hz = (long)ft->signal.rate;
		info->channels = (int)ft->signal.channels;
		info->bit_depth = (int)ft->signal.precision;
		info->duration_ms =
			(int64_t)((double)frames * 1000.0 / ft->signal.rate +
				  0.5);
		sox_codec(ft, info->codec, sizeof(info->codec));
		ok = true;
	}
	sox_close(ft);
	return ok;
}

/* A number of ffprobe's JSON: a number, or a string holding one ("44100",
 * "1.234"); absent, "N/A" and junk are 0. */
static double
field(const json_object *obj, const char *name)
{
	json_object *v;
	const char *s;
	char *end;
	double d;

	if (!json_object_object_get_ex(obj, name, &v))
		return 0;
	switch (json_object_get_type(v)) {
	case json_type_int:
	case json_type_double:
		d = json_object_get_double(v);
		break;
	case json_type_string:
		s = json_object_get_string(v);
		d = strtod(s, &end);
		if (end == s || *end != '\0')
			d = 0;
		break;
	default:
		d = 0;
	}
	return d > 0 ? d : 0;
}

bool
probe_ffprobe(const char *path, struct probe_info *info, int timeout_ms,
	      char *detail, size_t dlen)
{
	char *const argv[] = {
		"ffprobe",
		"-v",
		"error",
		"-format_whitelist",
		PROBE_FORMATS,
		"-select_streams",
		"a:0",
		"-show_entries",
		"format=duration:stream=codec_name,sample_rate,channels,"
		"bits_per_sample,bits_per_raw_sample,duration",
		"-of",
		"json",
		(char *)path,
		NULL,
	};
	const struct child_path paths[] = {{path, CHILD_READ}, {NULL, 0}};
	json_object *root = NULL, *streams, *stream = NULL, *format, *codec;
	double stream_dur = 0, raw_bits;
	struct child ch;
	bool ok = false;

	memset(info, 0, sizeof(*info));
	if (!child_run(&ch, argv, paths, FFPROBE_OUT_MAX, FFPROBE_ERR_MAX,
		       timeout_ms, detail, dlen))
		goto out;
	/* ch.out is NUL-terminated, whatever ffprobe wrote. */
	if (ch.out.failed) {
		snprintf(detail, dlen, "out of memory for ffprobe's answer");
		goto out;
	}
	if ((root = json_tokener_parse((const char *)ch.out.p)) == NULL ||
	    !json_object_is_type(root, json_type_object)) {
		snprintf(detail, dlen, "ffprobe's answer is not a JSON object");
		goto out;
	}
	/* -select_streams a:0: at most one stream, the first audio one. */
	if (json_object_object_get_ex(root, "streams", &streams) &&
	    json_object_is_type(streams, json_type_array) &&
	    json_object_array_length(streams) > 0)
		stream = json_object_array_get_idx(streams, 0);
	if (stream != NULL && json_object_is_type(stream, json_type_object)) {
		if (json_object_object_get_ex(stream, "codec_name", &codec) &&
		    json_object_is_type(codec, json_type_string))
			snprintf(info->codec, sizeof(info->codec), "%s",
				 json_object_get_string(codec));
		info->sample_rate_hz = (long)field(stream, "sample_rate");
		info->channels = (int)field(stream, "channels");
		raw_bits = field(stream, "bits_per_raw_sample");
		info->bit_depth =
			(int)(raw_bits > 0 ? raw_bits
					   : field(stream, "bits_per_sample"));
		stream_dur = field(stream, "duration");
	}
	/* Containers such as WebM know only the format's duration. */
	if (stream_dur == 0 &&
	    json_object_object_get_ex(root, "format", &format) &&
	    json_object_is_type(format, json_type_object))
		stream_dur = field(format, "duration");
	info->duration_ms = (int64_t)(stream_dur * 1000.0 + 0.5);
	if (info->codec[0] == '\0' || info->duration_ms <= 0)
		snprintf(detail, dlen, "no audio stream with a duration");
	else
		ok = true;
out:
	json_object_put(root);
	child_free(&ch);
	return ok;
}

int
probe_sox_main(const char *path)
{
	struct probe_info info;
	bool ok;

	memset(&info, 0, sizeof(info));
	if (!probe_init())
		return 1;
	ok = probe_sox(path, &info);
	sox_quit();
	if (!ok)
		return 1;
	printf("%" PRId64 " %ld %d %d %s\n", info.duration_ms,
	       info.sample_rate_hz, info.channels, info.bit_depth, info.codec);
	return fflush(stdout) == 0 ? 0 : 1;
}

/*
 * libsox's answer for path, read in a child: this program again as
 * `PROG PROBE_SOX_ARG path` (probe_sox_main).  False when libsox cannot
 * tell (the child says nothing), or the child fails or takes too long.
 */
static bool
probe_sox_child(const char *path, struct probe_info *info, int timeout_ms)
{
	char *const argv[] = {"/proc/self/exe", PROBE_SOX_ARG, (char *)path,
			      NULL};
	const struct child_path paths[] = {{path, CHILD_READ}, {NULL, 0}};
	char detail[128];
	struct child ch;
	bool ok = false;

	if (!child_run(&ch, argv, paths, SOX_OUT_MAX, FFPROBE_ERR_MAX,
		       timeout_ms, detail, sizeof(detail)))
		goto out;
	/* ch.out is NUL-terminated; the codec is one word. */
	if (!ch.out.failed &&
	    sscanf((const char *)ch.out.p, "%" SCNd64 " %ld %d %d %31s",
		   &info->duration_ms, &info->sample_rate_hz, &info->channels,
		   &info->bit_depth, info->codec) == 5 &&
	    info->duration_ms > 0 && info->sample_rate_hz > 0 &&
	    info->channels > 0)
		ok = true;
out:
	if (!ok)
		memset(info, 0, sizeof(*info));
	child_free(&ch);
	return ok;
}

bool
probe_file(const char *path, struct probe_info *info, int timeout_ms,
	   char *detail, size_t dlen)
{
	memset(info, 0, sizeof(*info));
	if (probe_sox_child(path, info, timeout_ms))
		return true;
	return probe_ffprobe(path, info, timeout_ms, detail, dlen);
}
