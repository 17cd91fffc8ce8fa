/* SPDX-License-Identifier: MIT */
/*
 * streamaudio.c - audio declarations, batch checks and WAV headers (see
 * streamaudio.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/streamaudio.h"

static const char *const codec_names[] = {
	[XMBPAUDIO_PCM] = "pcm_s16le",
	[XMBPAUDIO_ADPCM] = "ima_adpcm",
};

const char *
streamaudio_codec_name(unsigned codec)
{
	if (codec != XMBPAUDIO_PCM && codec != XMBPAUDIO_ADPCM)
		return NULL;
	return codec_names[codec];
}

/* The codec id of name; 0 when unknown. */
static uint8_t
codec_id(const char *name)
{
	for (uint8_t c = XMBPAUDIO_PCM; c <= XMBPAUDIO_ADPCM; c++)
		if (strcmp(name, codec_names[c]) == 0)
			return c;
	return 0;
}

/* Integer member name of o in lo..hi into *v; false when it is missing
 * or is not such an integer. */
static bool
int_member(json_object *o, const char *name, long long lo, long long hi,
	   long long *v)
{
	json_object *m;

	if (!json_object_object_get_ex(o, name, &m) ||
	    !json_object_is_type(m, json_type_int))
		return false;
	*v = json_object_get_int64(m);
	return *v >= lo && *v <= hi;
}

bool
streamaudio_def(json_object *def, enum sample_type type, json_object *row,
		char *detail, size_t dlen)
{
	json_object *a, *c;
	long long rate, ch;
	uint8_t codec;

	if (!json_object_object_get_ex(def, "audio", &a) || a == NULL)
		return true;
	if (type != SAMPLE_BYTES) {
		snprintf(detail, dlen,
			 "audio is only for streams of value_type bytes");
		return false;
	}
	if (!json_object_is_type(a, json_type_object)) {
		snprintf(detail, dlen, "audio must be an object");
		return false;
	}
	if (!json_object_object_get_ex(a, "codec", &c) ||
	    !json_object_is_type(c, json_type_string) ||
	    (codec = codec_id(json_object_get_string(c))) == 0) {
		snprintf(detail, dlen,
			 "audio.codec must be \"pcm_s16le\" or \"ima_adpcm\"");
		return false;
	}
	if (!int_member(a, "sample_rate_hz", STREAMAUDIO_RATE_MIN,
			STREAMAUDIO_RATE_MAX, &rate)) {
		snprintf(
			detail, dlen,
			"audio.sample_rate_hz must be an integer from %d to %d",
			STREAMAUDIO_RATE_MIN, STREAMAUDIO_RATE_MAX);
		return false;
	}
	if (!int_member(a, "channels", 1, XMBPAUDIO_MAX_CHANNELS, &ch)) {
		snprintf(detail, dlen,
			 "audio.channels must be an integer from 1 to %d",
			 XMBPAUDIO_MAX_CHANNELS);
		return false;
	}
	if (json_object_object_add(
		    row, "audio_codec",
		    json_object_new_string(codec_names[codec])) != 0 ||
	    json_object_object_add(row, "audio_sample_rate_hz",
				   json_object_new_int64(rate)) != 0 ||
	    json_object_object_add(row, "audio_channels",
				   json_object_new_int64(ch)) != 0) {
		snprintf(detail, dlen, "out of memory");
		return false;
	}
	return true;
}

bool
streamaudio_decl_parse(const char *codec, const char *channels,
		       const char *rate, struct streamaudio_decl *d)
{
	unsigned long ch, r;
	char *end;

	memset(d, 0, sizeof(*d));
	if (*codec == '\0')
		return true;
	ch = strtoul(channels, &end, 10);
	if (*end != '\0' || ch < 1 || ch > XMBPAUDIO_MAX_CHANNELS)
		return false;
	r = strtoul(rate, &end, 10);
	if (*end != '\0' || r < STREAMAUDIO_RATE_MIN ||
	    r > STREAMAUDIO_RATE_MAX || (d->codec = codec_id(codec)) == 0)
		return false;
	d->channels = (uint8_t)ch;
	d->rate = (uint32_t)r;
	return true;
}

bool
streamaudio_check_block(const struct xmbp_stream *s,
			const struct streamaudio_decl *d, char *detail,
			size_t dlen)
{
	struct xmbp_sample_iter it;
	struct sample_value v;
	enum xmbpaudio_status st;
	uint64_t ts;
	size_t n;

	if (d->codec == 0)
		return true;
	xmbp_samples(s, &it);
	for (unsigned i = 0; xmbp_sample_next(&it, &ts, &v); i++) {
		st = xmbpaudio_frame_check(v.u.raw.p, v.u.raw.len, d->codec,
					   d->channels, &n);
		if (st == XMBPAUDIO_OK)
			continue;
		if (st == XMBPAUDIO_E_CODEC)
			snprintf(detail, dlen,
				 "stream %u, sample %u: codec id 0x%02x, but "
				 "the stream is declared %s (0x%02x)",
				 s->stream_id, i, v.u.raw.p[0],
				 codec_names[d->codec], d->codec);
		else
			snprintf(detail, dlen,
				 "stream %u, sample %u: %s (%s, %u channels, "
				 "%zu bytes)",
				 s->stream_id, i, xmbpaudio_status_text(st),
				 codec_names[d->codec], d->channels,
				 v.u.raw.len);
		return false;
	}
	return true;
}

uint64_t
streamaudio_frames(uint64_t us, uint32_t rate)
{
	/* Split so that us * rate cannot overflow. */
	return us / 1000000 * rate + (us % 1000000 * rate + 500000) / 1000000;
}

uint64_t
streamaudio_us(uint64_t n, uint32_t rate)
{
	return n / rate * 1000000 + (n % rate * 1000000 + rate - 1) / rate;
}

/* Little-endian u32 and u16 at p. */
static void
le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

void
streamaudio_wav_header(uint8_t out[STREAMAUDIO_WAV_HEADER],
		       const struct streamaudio_decl *d, uint32_t data_bytes)
{
	memcpy(out, "RIFF", 4);
	le32(out + 4, 36 + data_bytes);
	memcpy(out + 8, "WAVEfmt ", 8);
	le32(out + 16, 16);
	le16(out + 20, 1); /* PCM */
	le16(out + 22, d->channels);
	le32(out + 24, d->rate);
	le32(out + 28, d->rate * 2u * d->channels);
	le16(out + 32, (uint16_t)(2 * d->channels));
	le16(out + 34, 16);
	memcpy(out + 36, "data", 4);
	le32(out + 40, data_bytes);
}
