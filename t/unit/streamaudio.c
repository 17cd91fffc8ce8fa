/* SPDX-License-Identifier: MIT */
/*
 * t/unit/streamaudio.c - the server's side of audio streams
 * (lib/codec/streamaudio.h, doc/xmbp-audio.md): declarations as a
 * session's request gives them and as the database stores them, the
 * check of a batch's blocks, the time line's rounding, the WAV header.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codec/streamaudio.h"
#include "tap.h"

/* streamaudio_def() of the JSON text def for value type type. */
static bool
def(const char *text, enum sample_type type, json_object **row)
{
	json_object *o = json_tokener_parse(text);
	char detail[160];
	bool ok;

	*row = json_object_new_object();
	ok = o != NULL &&
	     streamaudio_def(o, type, *row, detail, sizeof(detail));
	json_object_put(o);
	return ok;
}

static void
test_def(void)
{
	static const char *const bad[] = {
		"{\"audio\":{\"codec\":\"opus\",\"sample_rate_hz\":8000,"
		"\"channels\":1}}",
		"{\"audio\":{\"codec\":\"pcm_s16le\",\"sample_rate_hz\":999,"
		"\"channels\":1}}",
		"{\"audio\":{\"codec\":\"pcm_s16le\",\"sample_rate_hz\":8000,"
		"\"channels\":9}}",
		"{\"audio\":{\"codec\":\"pcm_s16le\",\"sample_rate_hz\":8000}}",
		"{\"audio\":{\"codec\":\"pcm_s16le\",\"sample_rate_hz\":8e3,"
		"\"channels\":1}}",
		"{\"audio\":[]}",
	};
	json_object *row, *m;

	ok(def("{\"audio\":{\"codec\":\"ima_adpcm\",\"sample_rate_hz\":16000,"
	       "\"channels\":2}}",
	       SAMPLE_BYTES, &row),
	   "def: a whole declaration");
	ok(json_object_object_get_ex(row, "audio_codec", &m) &&
		   strcmp(json_object_get_string(m), "ima_adpcm") == 0 &&
		   json_object_object_get_ex(row, "audio_sample_rate_hz", &m) &&
		   json_object_get_int(m) == 16000 &&
		   json_object_object_get_ex(row, "audio_channels", &m) &&
		   json_object_get_int(m) == 2,
	   "def: the row gets the three columns");
	json_object_put(row);
	ok(def("{\"audio\":null}", SAMPLE_BYTES, &row) &&
		   json_object_object_length(row) == 0,
	   "def: null is no audio");
	json_object_put(row);
	ok(!def("{\"audio\":{\"codec\":\"pcm_s16le\",\"sample_rate_hz\":8000,"
		"\"channels\":1}}",
		SAMPLE_F32, &row),
	   "def: refused on an f32 stream");
	json_object_put(row);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ok(!def(bad[i], SAMPLE_BYTES, &row), "def: refused: %s",
		   bad[i]);
		json_object_put(row);
	}
}

static void
test_parse(void)
{
	struct streamaudio_decl d;

	ok(streamaudio_decl_parse("pcm_s16le", "2", "48000", &d) &&
		   d.codec == XMBPAUDIO_PCM && d.channels == 2 &&
		   d.rate == 48000,
	   "parse: the stored columns");
	ok(streamaudio_decl_parse("", "", "", &d) && d.codec == 0,
	   "parse: no codec is no audio");
	ok(!streamaudio_decl_parse("ima_adpcm", "0", "8000", &d) &&
		   d.codec == 0,
	   "parse: 0 channels refused, empty declaration");
	ok(!streamaudio_decl_parse("ima_adpcm", "1", "8000x", &d),
	   "parse: a rate with trailing text refused");
	ok(!streamaudio_decl_parse("mp3", "1", "8000", &d),
	   "parse: an unknown codec refused");
	is_str(streamaudio_codec_name(XMBPAUDIO_ADPCM), "ima_adpcm",
	       "codec name of 0x02");
	ok(streamaudio_codec_name(3) == NULL, "no name for codec 3");
}

/* A batch of one bytes block of the given frames; decoded into *b. */
static uint8_t *
batch(const uint8_t *const *frames, const size_t *lens, size_t n,
      struct xmbp_batch *b)
{
	uint8_t *buf = malloc(4096);
	struct xmbp_enc enc;
	size_t len;

	xmbp_enc_init(&enc, buf, 4096);
	xmbp_enc_begin(&enc, 1, NULL);
	xmbp_enc_stream(&enc, 7, SAMPLE_BYTES);
	for (size_t i = 0; i < n; i++)
		xmbp_enc_bytes(&enc, 1000 * i, frames[i], lens[i]);
	xmbp_enc_end_stream(&enc);
	if (xmbp_enc_finish(&enc, &len) != XMBP_ENC_OK ||
	    xmbp_decode(buf, len, b, NULL) != XMBP_OK) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void
test_check(void)
{
	static const uint8_t good[] = {2, 0, 0, 0, 0, 0x12, 0x34};
	static const uint8_t pcm[] = {1, 0, 0};
	static const uint8_t odd[] = {2, 0, 0, 0, 0};
	const uint8_t *frames[3] = {good, good, pcm};
	size_t lens[3] = {sizeof(good), sizeof(good), sizeof(pcm)};
	struct streamaudio_decl adpcm = {XMBPAUDIO_ADPCM, 1, 8000};
	struct streamaudio_decl none = {0, 0, 0};
	struct xmbp_batch *b = malloc(sizeof(*b));
	struct xmbp_stream s;
	char detail[200] = "";
	uint8_t *buf;

	buf = batch(frames, lens, 2, b);
	xmbp_stream_at(b, 0, &s);
	ok(streamaudio_check_block(&s, &adpcm, detail, sizeof(detail)),
	   "check: two good ADPCM frames");
	free(buf);
	buf = batch(frames, lens, 3, b);
	xmbp_stream_at(b, 0, &s);
	ok(!streamaudio_check_block(&s, &adpcm, detail, sizeof(detail)),
	   "check: a PCM frame among them refused");
	is_str(detail,
	       "stream 7, sample 2: codec id 0x01, but the stream is "
	       "declared ima_adpcm (0x02)",
	       "check: the detail names stream, sample and codecs");
	ok(streamaudio_check_block(&s, &none, detail, sizeof(detail)),
	   "check: a stream without audio takes anything");
	free(buf);
	frames[0] = odd;
	lens[0] = sizeof(odd);
	buf = batch(frames, lens, 1, b);
	xmbp_stream_at(b, 0, &s);
	ok(!streamaudio_check_block(&s, &adpcm, detail, sizeof(detail)) &&
		   strstr(detail, "sample 0: the frame's length") != NULL,
	   "check: a header without codes refused (%s)", detail);
	free(buf);
	free(b);
}

static void
test_time_and_header(void)
{
	struct streamaudio_decl d = {XMBPAUDIO_PCM, 2, 44100};
	uint8_t h[STREAMAUDIO_WAV_HEADER];
	static const uint8_t want[STREAMAUDIO_WAV_HEADER] = {
		'R', 'I', 'F',	'F',  0x34, 0x12, 0,	0,    'W',  'A', 'V',
		'E', 'f', 'm',	't',  ' ',  16,	  0,	0,    0,    1,	 0,
		2,   0,	  0x44, 0xac, 0,    0,	  0x10, 0xb1, 2,    0,	 4,
		0,   16,  0,	'd',  'a',  't',  'a',	0x10, 0x12, 0,	 0};

	is_int(streamaudio_frames(1000000, 16000), 16000, "frames: 1 s");
	is_int(streamaudio_frames(31, 16000), 0, "frames: 31 us round down");
	is_int(streamaudio_frames(32, 16000), 1, "frames: 32 us round up");
	is_int(streamaudio_frames(UINT64_C(18446744073709551615), 192000),
	       UINT64_C(18446744073709551615) / 1000000 * 192000 +
		       (UINT64_C(18446744073709551615) % 1000000 * 192000 +
			500000) /
			       1000000,
	       "frames: 2^64-1 us without overflow");
	is_int(streamaudio_us(1, 16000), 63, "us: 1 frame rounds up");
	is_int(streamaudio_us(16000, 16000), 1000000, "us: 1 s");
	streamaudio_wav_header(h, &d, 0x1210);
	ok(memcmp(h, want, sizeof(h)) == 0,
	   "WAV header: RIFF size, PCM, 2 ch, 44100 Hz, 176400 B/s, align 4");
}

int
main(void)
{
	test_def();
	test_parse();
	test_check();
	test_time_and_header();
	return tap_done();
}
