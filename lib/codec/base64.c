/* SPDX-License-Identifier: MIT */
/*
 * base64.c - RFC 4648 base64 with padding.
 */
#include "config.h"

#include "codec/base64.h"

static const char alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
base64_encode(struct buf *out, const uint8_t *p, size_t n)
{
	char q[4];

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		q[0] = alphabet[v >> 18];
		q[1] = alphabet[(v >> 12) & 63];
		q[2] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
		q[3] = i + 2 < n ? alphabet[v & 63] : '=';
		buf_append(out, q, 4);
	}
}

/* Value of one base64 digit, or -1. */
static int
digit(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

bool
base64_decode(struct buf *out, const char *s, size_t n)
{
	if (n % 4 != 0)
		return false;
	for (size_t i = 0; i < n; i += 4) {
		int d[4], pad = 0;
		uint32_t v = 0;
		uint8_t b[3];

		for (int k = 0; k < 4; k++) {
			if (s[i + k] == '=' && i + 4 == n && k >= 2) {
				d[k] = 0;
				pad++;
				continue;
			}
			if (pad > 0 || (d[k] = digit(s[i + k])) < 0)
				return false;
		}
		for (int k = 0; k < 4; k++)
			v = v << 6 | (uint32_t)d[k];
		if ((pad == 1 && (v & 0xFF) != 0) ||
		    (pad == 2 && (v & 0xFFFF) != 0))
			return false;
		b[0] = (uint8_t)(v >> 16);
		b[1] = (uint8_t)(v >> 8);
		b[2] = (uint8_t)v;
		buf_append(out, b, (size_t)(3 - pad));
	}
	return !out->failed;
}
