/* SPDX-License-Identifier: MIT */
/*
 * utf8.c - strict UTF-8 validation.
 *
 * The ranges are those of RFC 3629 section 4 (Unicode Table 3-7).  ASCII
 * runs, the common case in sensor strings and JSON, are skipped eight
 * bytes at a time.  Freestanding, without config.h: part of the encoder
 * side of libxmbp (codec/xmbpenc.h).
 */
#include <string.h>

#include "codec/utf8.h"

bool
xmbp_utf8_valid(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint64_t w;
		uint8_t c = p[i], lo = 0x80, hi = 0xBF;
		size_t len;

		if (n - i >= 8) {
			memcpy(&w, p + i, 8);
			if ((w & 0x8080808080808080ULL) == 0) {
				i += 8;
				continue;
			}
		}
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xC2 && c <= 0xDF)
			len = 2;
		else if (c >= 0xE0 && c <= 0xEF) {
			len = 3;
			if (c == 0xE0)
				lo = 0xA0; /* overlong */
			else if (c == 0xED)
				hi = 0x9F; /* surrogates */
		} else if (c >= 0xF0 && c <= 0xF4) {
			len = 4;
			if (c == 0xF0)
				lo = 0x90; /* overlong */
			else if (c == 0xF4)
				hi = 0x8F; /* above U+10FFFF */
		} else
			return false;
		if (n - i < len)
			return false;
		if (p[i + 1] < lo || p[i + 1] > hi)
			return false;
		for (size_t k = 2; k < len; k++)
			if ((p[i + k] & 0xC0) != 0x80)
				return false;
		i += len;
	}
	return true;
}
