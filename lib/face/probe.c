/* SPDX-License-Identifier: MIT */
/*
 * probe.c - image header parsing for face_image_probe().
 *
 * Plain C and no allocation so that it can be fuzzed on its own
 * (fuzz/face-probe.c).  Each parser only reads inside data[0..len) and
 * every loop moves forward by at least one byte, so any input ends.
 */
#include <stdio.h>
#include <string.h>

#include "face/face.h"

/* Dimensions above this are refused as nonsense (OpenCV's own limit). */
#define PROBE_MAX_SIDE 1000000u

static void
say(char *detail, size_t dlen, const char *msg)
{
	if (detail && dlen)
		snprintf(detail, dlen, "%s", msg);
}

static uint32_t
be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint32_t
le16(const uint8_t *p)
{
	return (uint32_t)p[1] << 8 | p[0];
}

static uint32_t
le24(const uint8_t *p)
{
	return (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint32_t
le32(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | le24(p);
}

/* SOFn markers carry the frame size; C4 (DHT), C8 (JPG), CC (DAC) do not. */
static int
jpeg_is_sof(uint8_t m)
{
	return m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc;
}

static const char *
probe_jpeg(const uint8_t *p, size_t len, struct face_probe *out)
{
	size_t i = 2;

	for (;;) {
		uint8_t m;
		size_t seg;

		if (i >= len || p[i] != 0xff)
			return len <= i ? "truncated JPEG header"
					: "corrupt JPEG header";
		while (i < len && p[i] == 0xff) /* fill bytes */
			i++;
		if (i >= len)
			return "truncated JPEG header";
		m = p[i++];
		if (m == 0x01 || (m >= 0xd0 && m <= 0xd7))
			continue; /* standalone markers */
		if (m == 0xd9 || m == 0xda || m == 0x00 || m == 0xd8)
			return "JPEG without a frame header";
		if (len - i < 2)
			return "truncated JPEG header";
		seg = be16(p + i);
		if (seg < 2)
			return "corrupt JPEG header";
		if (jpeg_is_sof(m)) {
			if (seg < 8 || len - i < 8)
				return "truncated JPEG header";
			out->height = be16(p + i + 3);
			out->width = be16(p + i + 5);
			out->channels = p[i + 7];
			if (out->channels != 1 && out->channels != 3 &&
			    out->channels != 4)
				return "unsupported JPEG component count";
			return NULL;
		}
		if (len - i < seg)
			return "truncated JPEG header";
		i += seg;
	}
}

bool
face_jpeg_complete(const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t i = 2;

	if (len < 4 || p[0] != 0xff || p[1] != 0xd8)
		return false;
	/* marker segments up to the first start of scan */
	while (i < len && len - i >= 4 && p[i] == 0xff) {
		uint8_t m = p[i + 1];

		if (m == 0xff) {
			i++;
			continue;
		}
		if (m == 0x01 || (m >= 0xd0 && m <= 0xd7)) {
			i += 2;
			continue;
		}
		if (m == 0xd9)
			return false;
		i += 2 + be16(p + i + 2);
		if (m == 0xda)
			break;
	}
	if (i >= len)
		return false; /* a segment ran past the end */
	/* entropy-coded data stuffs 0xff as ff 00: ff d9 is the marker */
	for (; len - i >= 2; i++)
		if (p[i] == 0xff && p[i + 1] == 0xd9)
			return true;
	return false;
}

static const char *
probe_png(const uint8_t *p, size_t len, struct face_probe *out)
{
	static const int chans[] = {1, 0, 3, 3, 2, 0, 4};

	if (len < 8 + 8 + 13)
		return "truncated PNG header";
	if (be32(p + 8) != 13 || memcmp(p + 12, "IHDR", 4) != 0)
		return "PNG without IHDR";
	out->width = be32(p + 16);
	out->height = be32(p + 20);
	if (p[25] > 6 || chans[p[25]] == 0)
		return "invalid PNG colour type";
	out->channels = chans[p[25]];
	return NULL;
}

static const char *
probe_webp(const uint8_t *p, size_t len, struct face_probe *out)
{
	const uint8_t *c = p + 12; /* first chunk */

	if (len < 12 + 8 + 10)
		return "truncated WebP header";
	if (memcmp(c, "VP8 ", 4) == 0) {
		/* frame tag (3), start code 9d 01 2a, 14-bit sizes */
		if (c[11] != 0x9d || c[12] != 0x01 || c[13] != 0x2a)
			return "corrupt WebP (VP8) header";
		out->width = le16(c + 14) & 0x3fff;
		out->height = le16(c + 16) & 0x3fff;
		out->channels = 3;
		return NULL;
	}
	if (memcmp(c, "VP8L", 4) == 0) {
		uint32_t bits;

		if (c[8] != 0x2f)
			return "corrupt WebP (VP8L) header";
		bits = le32(c + 9);
		out->width = (bits & 0x3fff) + 1;
		out->height = (bits >> 14 & 0x3fff) + 1;
		out->channels = bits >> 28 & 1 ? 4 : 3;
		return NULL;
	}
	if (memcmp(c, "VP8X", 4) == 0) {
		out->width = le24(c + 12) + 1;
		out->height = le24(c + 15) + 1;
		out->channels = c[8] & 0x10 ? 4 : 3;
		if (c[8] & 0x02)
			return "animated WebP is not supported";
		return NULL;
	}
	return "unknown WebP chunk";
}

static const char *
probe_bmp(const uint8_t *p, size_t len, struct face_probe *out)
{
	uint32_t hsize, bits;

	if (len < 14 + 12)
		return "truncated BMP header";
	hsize = le32(p + 14);
	if (hsize == 12) { /* OS/2 BITMAPCOREHEADER */
		out->width = le16(p + 18);
		out->height = le16(p + 20);
		bits = le16(p + 24);
	} else if (hsize >= 40 && hsize <= 124) {
		int32_t h;

		if (len < 14 + 16)
			return "truncated BMP header";
		if (p[21] & 0x80)
			return "invalid BMP width";
		out->width = le32(p + 18);
		h = (int32_t)le32(p + 22);
		if (h == INT32_MIN)
			return "invalid BMP height";
		out->height = (uint32_t)(h < 0 ? -h : h); /* < 0: top-down */
		bits = le16(p + 28);
	} else {
		return "unsupported BMP header";
	}
	if (bits != 1 && bits != 4 && bits != 8 && bits != 16 && bits != 24 &&
	    bits != 32)
		return "unsupported BMP bit count";
	out->channels = bits == 32 ? 4 : 3;
	return NULL;
}

static const char *
probe_tiff(const uint8_t *p, size_t len, struct face_probe *out)
{
	int be = p[0] == 'M';
	uint32_t off, n, i;

	if (len < 8)
		return "truncated TIFF header";
	off = be ? be32(p + 4) : le32(p + 4);
	if (off < 8 || off > len || len - off < 2)
		return "truncated TIFF header";
	n = be ? be16(p + off) : le16(p + off);
	if ((len - off - 2) / 12 < n)
		return "truncated TIFF header";
	out->channels = 1; /* SamplesPerPixel defaults to 1 */
	for (i = 0; i < n; i++) {
		const uint8_t *e = p + off + 2 + 12 * i;
		uint32_t tag = be ? be16(e) : le16(e);
		uint32_t type = be ? be16(e + 2) : le16(e + 2);
		uint32_t v;

		/* SHORT values sit in the first two bytes of the field */
		if (type == 3)
			v = be ? be16(e + 8) : le16(e + 8);
		else if (type == 4)
			v = be ? be32(e + 8) : le32(e + 8);
		else
			continue;
		if (tag == 256)
			out->width = v;
		else if (tag == 257)
			out->height = v;
		else if (tag == 277)
			out->channels = v > 4 ? 4 : (int)v;
	}
	if (out->channels < 1)
		return "invalid TIFF samples per pixel";
	return NULL;
}

bool
face_image_probe(const void *data, size_t len, struct face_probe *out,
		 char *detail, size_t dlen)
{
	const uint8_t *p = data;
	const char *err;

	memset(out, 0, sizeof(*out));
	if (!p || len < 4) {
		say(detail, dlen, "image too short to have a header");
		return false;
	}
	if (len >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff) {
		out->fmt = FACE_FMT_JPEG;
		err = probe_jpeg(p, len, out);
	} else if (len >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0) {
		out->fmt = FACE_FMT_PNG;
		err = probe_png(p, len, out);
	} else if (len >= 12 && memcmp(p, "RIFF", 4) == 0 &&
		   memcmp(p + 8, "WEBP", 4) == 0) {
		out->fmt = FACE_FMT_WEBP;
		err = probe_webp(p, len, out);
	} else if (p[0] == 'B' && p[1] == 'M') {
		out->fmt = FACE_FMT_BMP;
		err = probe_bmp(p, len, out);
	} else if (memcmp(p, "II*\0", 4) == 0 || memcmp(p, "MM\0*", 4) == 0) {
		out->fmt = FACE_FMT_TIFF;
		err = probe_tiff(p, len, out);
	} else {
		err = "not a JPEG, PNG, WebP, BMP or TIFF image";
	}
	if (!err && (out->width == 0 || out->height == 0))
		err = "image header without dimensions";
	if (!err &&
	    (out->width > PROBE_MAX_SIDE || out->height > PROBE_MAX_SIDE))
		err = "image dimensions out of range";
	if (err) {
		say(detail, dlen, err);
		memset(out, 0, sizeof(*out));
		return false;
	}
	return true;
}

const char *
face_fmt_name(enum face_fmt fmt)
{
	switch (fmt) {
	case FACE_FMT_JPEG:
		return "jpeg";
	case FACE_FMT_PNG:
		return "png";
	case FACE_FMT_WEBP:
		return "webp";
	case FACE_FMT_BMP:
		return "bmp";
	case FACE_FMT_TIFF:
		return "tiff";
	default:
		return "unknown";
	}
}

const char *
face_fmt_mime(enum face_fmt fmt)
{
	switch (fmt) {
	case FACE_FMT_JPEG:
		return "image/jpeg";
	case FACE_FMT_PNG:
		return "image/png";
	case FACE_FMT_WEBP:
		return "image/webp";
	case FACE_FMT_BMP:
		return "image/bmp";
	case FACE_FMT_TIFF:
		return "image/tiff";
	default:
		return "application/octet-stream";
	}
}
