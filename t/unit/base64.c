/* SPDX-License-Identifier: MIT */
/*
 * t/unit/base64.c - RFC 4648 base64 (lib/codec/base64.h).
 */
#include "config.h"

#include <string.h>

#include "codec/base64.h"
#include "codec/buf.h"
#include "tap.h"

/* RFC 4648 section 10. */
static const struct {
	const char *plain, *text;
} rfc[] = {
	{"", ""},
	{"f", "Zg=="},
	{"fo", "Zm8="},
	{"foo", "Zm9v"},
	{"foob", "Zm9vYg=="},
	{"fooba", "Zm9vYmE="},
	{"foobar", "Zm9vYmFy"},
};

/* base64_encode of n bytes, compared with the text want. */
static bool
encodes(const void *p, size_t n, const char *want)
{
	struct buf b;
	bool r;

	buf_init(&b, 0);
	base64_encode(&b, p, n);
	r = !b.failed && b.len == strlen(want) &&
	    (b.len == 0 || memcmp(b.p, want, b.len) == 0);
	buf_free(&b);
	return r;
}

/* base64_decode of text, compared with the n bytes want. */
static bool
decodes(const char *text, const void *want, size_t n)
{
	struct buf b;
	bool r;

	buf_init(&b, 0);
	r = base64_decode(&b, text, strlen(text)) && b.len == n &&
	    (n == 0 || memcmp(b.p, want, n) == 0);
	buf_free(&b);
	return r;
}

/* True when base64_decode refuses the n characters at s. */
static bool
refuses(const char *s, size_t n)
{
	struct buf b;
	bool r;

	buf_init(&b, 0);
	r = !base64_decode(&b, s, n);
	buf_free(&b);
	return r;
}

static void
test_rfc(void)
{
	for (size_t i = 0; i < sizeof(rfc) / sizeof(rfc[0]); i++) {
		ok(encodes(rfc[i].plain, strlen(rfc[i].plain), rfc[i].text),
		   "encode \"%s\" is \"%s\"", rfc[i].plain, rfc[i].text);
		ok(decodes(rfc[i].text, rfc[i].plain, strlen(rfc[i].plain)),
		   "decode \"%s\" is \"%s\"", rfc[i].text, rfc[i].plain);
	}
	/* Both ends of the alphabet, and bytes that are not text. */
	ok(encodes("\xFB\xFF\xBF", 3, "+/+/"), "encode FB FF BF is +/+/");
	ok(decodes("+/+/", "\xFB\xFF\xBF", 3), "decode +/+/");
	ok(encodes("\0\0\0", 3, "AAAA") && decodes("AAAA", "\0\0\0", 3),
	   "three NUL bytes are AAAA both ways");
	ok(encodes("\xFF", 1, "/w==") && decodes("/w==", "\xFF", 1),
	   "FF is /w== both ways");
}

/* Every byte value in every position of a 3-byte group, and back. */
static void
test_all_bytes(void)
{
	uint8_t all[256 + 2];
	struct buf enc, dec;
	unsigned int bad = 0;

	for (size_t i = 0; i < 256; i++)
		all[i] = (uint8_t)i;
	/* Lengths 256, 257 and 258 end with 1, 2 and 0 leftover bytes. */
	all[256] = 0xFF;
	all[257] = 0x00;
	for (size_t n = 256; n <= 258; n++) {
		buf_init(&enc, 0);
		buf_init(&dec, 0);
		base64_encode(&enc, all, n);
		if (enc.len != (n + 2) / 3 * 4 ||
		    !base64_decode(&dec, (const char *)enc.p, enc.len) ||
		    dec.len != n || memcmp(dec.p, all, n) != 0) {
			diag("%zu bytes do not round trip", n);
			bad++;
		}
		buf_free(&enc);
		buf_free(&dec);
	}
	ok(bad == 0, "all 256 byte values round trip (lengths 256..258)");

	/* Each byte alone and at the three offsets of a group. */
	bad = 0;
	for (unsigned int v = 0; v < 256; v++)
		for (size_t off = 0; off < 3; off++) {
			uint8_t in[3] = {0x55, 0xAA, 0x0F};

			in[off] = (uint8_t)v;
			buf_init(&enc, 0);
			buf_init(&dec, 0);
			base64_encode(&enc, in, off + 1);
			if (!base64_decode(&dec, (const char *)enc.p,
					   enc.len) ||
			    dec.len != off + 1 ||
			    memcmp(dec.p, in, off + 1) != 0)
				bad++;
			buf_free(&enc);
			buf_free(&dec);
		}
	ok(bad == 0, "every byte at every group offset round trips (%u bad)",
	   bad);
}

/* s with control and non-ASCII bytes escaped, so a TAP line stays one line. */
static const char *
printable(const char *s)
{
	static char out[128];
	size_t o = 0;

	for (; *s != '\0' && o + 5 < sizeof(out); s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c < 0x7F)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, sizeof(out) - o,
					      "\\x%02X", c);
	}
	out[o] = '\0';
	return out;
}

static void
test_strict(void)
{
	static const char *const bad[] = {
		"Z",	    "Zg",	    "Zg=",
		"Zm9vY",    "Zg===", /* not a multiple of 4 */
		"Zg!=",	    "Zm9*",	    "Zm-v",
		"Zm_v",	    "Zm9\x80", /* bad characters */
		"Zg==Zg==", "Zg==Zm9v",	    "Zm=v",
		"Z=9v",	    "=m9v",	    "Zg=A",
		"====",	    "Z===", /* padding in the wrong place */
		"Zh==",	    "Zv==",	    "Zm9=",
		"Zm+=", /* non-zero unused bits */
		"Zm9v\n",   "Zm9v\n\n\n\n", "Zm9 Zm9v",
		" Zm9",	    "Zm9v\r\nZm",   "Zg==\r\n\r\n",
		"Zm 9",	    "Zm\t9", /* white space */
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(refuses(bad[i], strlen(bad[i])), "refuses \"%s\"",
		   printable(bad[i]));

	/* The length is n, not strlen: an embedded NUL is a bad character. */
	ok(refuses("Zm9\0", 4), "refuses an embedded NUL");
	ok(refuses("Zm9vYmFy", 7), "refuses 7 of 8 characters");

	/* A text that decodes to the same bytes with non-zero unused bits. */
	ok(decodes("Zg==", "f", 1) && refuses("Zh==", 4) &&
		   refuses("Zi==", 4) && refuses("Zv==", 4),
	   "only Zg== is f (Zh==, Zi==, Zv== refused)");
	ok(decodes("Zm8=", "fo", 2) && refuses("Zm9=", 4) && refuses("Zm+=", 4),
	   "only Zm8= is fo (Zm9=, Zm+= refused)");

	/* A failed output buffer is reported even for good text. */
	{
		struct buf b;

		buf_init(&b, 2);
		ok(!base64_decode(&b, "Zm9v", 4) && b.failed,
		   "decode into a buffer too small for the result is false");
		buf_free(&b);
	}
}

int
main(void)
{
	test_rfc();
	test_all_bytes();
	test_strict();
	return tap_done();
}
