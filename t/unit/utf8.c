/* SPDX-License-Identifier: MIT */
/*
 * t/unit/utf8.c - strict UTF-8 validation (lib/codec/utf8.h), RFC 3629.
 *
 * Every case is checked at the start, middle and end of ASCII padding
 * too, because the validator skips ASCII eight bytes at a time and a
 * fault may only show when a sequence straddles or ends a word.  Each
 * input is copied into a heap block of exactly its size so that ASan
 * catches any read past p + n.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "codec/utf8.h"

struct tcase {
	const char *name;
	const char *s;
	size_t n;
	bool valid;
};

#define T(name, lit, valid)                                                    \
	{                                                                      \
		name, lit, sizeof(lit) - 1, valid                              \
	}

static const struct tcase cases[] = {
	T("empty", "", true),
	T("ASCII", "hello", true),
	T("NUL", "\x00", true),
	T("NULs inside",
	  "a\x00"
	  "b\x00\x00",
	  true),
	T("U+007F", "\x7F", true),
	T("U+0080", "\xC2\x80", true),
	T("U+07FF", "\xDF\xBF", true),
	T("U+0800", "\xE0\xA0\x80", true),
	T("U+D7FF", "\xED\x9F\xBF", true),
	T("U+E000", "\xEE\x80\x80", true),
	T("U+FFFD", "\xEF\xBF\xBD", true),
	T("U+FFFF", "\xEF\xBF\xBF", true),
	T("U+10000", "\xF0\x90\x80\x80", true),
	T("U+1F600", "\xF0\x9F\x98\x80", true),
	T("U+10FFFF", "\xF4\x8F\xBF\xBF", true),
	T("mixed", "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z", true),

	T("overlong C0 80", "\xC0\x80", false),
	T("overlong C1 BF", "\xC1\xBF", false),
	T("overlong E0 80 80", "\xE0\x80\x80", false),
	T("overlong E0 9F BF", "\xE0\x9F\xBF", false),
	T("overlong F0 80 80 80", "\xF0\x80\x80\x80", false),
	T("overlong F0 8F BF BF", "\xF0\x8F\xBF\xBF", false),
	T("surrogate ED A0 80", "\xED\xA0\x80", false),
	T("surrogate ED BF BF", "\xED\xBF\xBF", false),
	T("surrogate pair", "\xED\xA0\xBD\xED\xB8\x80", false),
	T("above U+10FFFF F4 90 80 80", "\xF4\x90\x80\x80", false),
	T("F5 lead", "\xF5\x80\x80\x80", false),
	T("F8 lead", "\xF8\x88\x80\x80\x80", false),
	T("FE", "\xFE", false),
	T("FF", "\xFF", false),
	T("lone continuation 80", "\x80", false),
	T("lone continuation BF", "\xBF", false),
	T("continuation after ASCII", "a\x80", false),
	T("extra continuation", "\xC2\x80\x80", false),
	T("truncated 2-byte", "\xC2", false),
	T("truncated 3-byte (1 of 3)", "\xE2", false),
	T("truncated 3-byte (2 of 3)", "\xE2\x82", false),
	T("truncated 4-byte (1 of 4)", "\xF0", false),
	T("truncated 4-byte (2 of 4)", "\xF0\x9F", false),
	T("truncated 4-byte (3 of 4)", "\xF0\x9F\x98", false),
	T("2-byte, bad second", "\xC2\x41", false),
	T("3-byte, bad third", "\xE2\x82\x41", false),
	T("3-byte, bad third C0", "\xE2\x82\xC0", false),
	T("4-byte, bad fourth", "\xF0\x9F\x98\x41", false),
	T("4-byte, bad third", "\xF0\x9F\x41\x80", false),
	T("lead then lead", "\xC2\xC2\x80", false),
};

/* xmbp_utf8_valid on a heap copy of exactly n bytes. */
static bool
check(const void *s, size_t n)
{
	uint8_t *p = malloc(n > 0 ? n : 1);
	bool r;

	if (p == NULL)
		abort();
	if (n > 0)
		memcpy(p, s, n);
	r = xmbp_utf8_valid(p, n);
	free(p);
	return r;
}

static void
test_table(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ok(check(cases[i].s, cases[i].n) == cases[i].valid, "%s: %s",
		   cases[i].name, cases[i].valid ? "valid" : "invalid");
}

/*
 * Each case placed after 0..16 ASCII bytes and before 0..16 more, so it
 * lands at every alignment relative to the 8-byte fast path.
 */
static void
test_padded(void)
{
	uint8_t tmp[64];
	unsigned int bad = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (size_t pre = 0; pre <= 16; pre++)
			for (size_t post = 0; post <= 16; post++) {
				size_t n = pre + cases[i].n + post;

				memset(tmp, 'x', sizeof(tmp));
				memcpy(tmp + pre, cases[i].s, cases[i].n);
				/*
				 * A truncated sequence followed by ASCII is
				 * still invalid: 'x' is no continuation.
				 */
				if (check(tmp, n) != cases[i].valid) {
					if (bad++ == 0)
						diag("%s with %zu before, "
						     "%zu after",
						     cases[i].name, pre, post);
				}
			}
	ok(bad == 0, "every case inside ASCII padding (%u wrong)", bad);
}

/* One bad byte at each position of a long ASCII run. */
static void
test_fast_path(void)
{
	static const uint8_t badbytes[] = {0x80, 0xBF, 0xC0, 0xC2, 0xE0,
					   0xED, 0xF0, 0xF4, 0xF5, 0xFF};
	uint8_t run[41];
	unsigned int bad = 0;

	memset(run, 'a', sizeof(run));
	ok(check(run, sizeof(run)), "41 ASCII bytes are valid");
	for (size_t len = 0; len <= sizeof(run); len++)
		if (!check(run, len))
			bad++;
	ok(bad == 0, "every ASCII prefix of length 0..41 is valid");

	bad = 0;
	for (size_t k = 0; k < sizeof(badbytes); k++)
		for (size_t pos = 0; pos <= 40; pos++) {
			memset(run, 'a', sizeof(run));
			run[pos] = badbytes[k];
			/*
			 * 0xC2 and friends are leads; followed by 'a' (or
			 * nothing) they are still invalid.
			 */
			if (check(run, sizeof(run))) {
				if (bad++ == 0)
					diag("0x%02X at %zu accepted",
					     badbytes[k], pos);
			}
		}
	ok(bad == 0, "one bad byte at each position 0..40 is refused");

	/* The same with the run's last byte being the bad one, n varying. */
	bad = 0;
	for (size_t n = 1; n <= 41; n++) {
		memset(run, 'a', sizeof(run));
		run[n - 1] = 0xFF;
		if (check(run, n))
			bad++;
	}
	ok(bad == 0, "0xFF as the last byte of runs of 1..41 is refused");

	/* A valid multi-byte character at every position stays valid. */
	bad = 0;
	for (size_t pos = 0; pos + 4 <= sizeof(run); pos++) {
		memset(run, 'a', sizeof(run));
		memcpy(run + pos, "\xF0\x9F\x98\x80", 4);
		if (!check(run, sizeof(run)))
			bad++;
	}
	ok(bad == 0, "a 4-byte character at each position is valid");

	/* NUL bytes are ASCII, so the fast path must accept them. */
	memset(run, 0, sizeof(run));
	ok(check(run, sizeof(run)), "41 NUL bytes are valid");
}

/* All 2-byte and 3-byte sequences against the rules, exhaustively. */
static void
test_exhaustive(void)
{
	unsigned int bad = 0;
	uint8_t s[4];

	for (unsigned int a = 0x80; a <= 0xFF; a++)
		for (unsigned int b = 0; b <= 0xFF; b++) {
			bool want = a >= 0xC2 && a <= 0xDF && b >= 0x80 &&
				    b <= 0xBF;

			s[0] = (uint8_t)a;
			s[1] = (uint8_t)b;
			if (check(s, 2) != want)
				bad++;
		}
	ok(bad == 0, "all two-byte inputs with a non-ASCII lead (%u wrong)",
	   bad);

	/* Three-byte: decode by hand and compare with the code point rules. */
	bad = 0;
	for (unsigned int a = 0xE0; a <= 0xEF; a++)
		for (unsigned int b = 0; b <= 0xFF; b++)
			for (unsigned int c = 0x70; c <= 0xC0; c++) {
				bool cont = (b & 0xC0) == 0x80 &&
					    (c & 0xC0) == 0x80;
				uint32_t cp = (a & 0x0F) << 12 |
					      (b & 0x3F) << 6 | (c & 0x3F);
				bool want = cont && cp >= 0x800 &&
					    (cp < 0xD800 || cp > 0xDFFF);

				s[0] = (uint8_t)a;
				s[1] = (uint8_t)b;
				s[2] = (uint8_t)c;
				if (check(s, 3) != want)
					bad++;
			}
	ok(bad == 0, "three-byte inputs with an E0..EF lead (%u wrong)", bad);

	/* Four-byte: first two bytes exhaustively, a fixed valid tail. */
	bad = 0;
	for (unsigned int a = 0xF0; a <= 0xFF; a++)
		for (unsigned int b = 0; b <= 0xFF; b++) {
			bool cont = (b & 0xC0) == 0x80;
			uint32_t cp = (a & 0x07) << 18 | (b & 0x3F) << 12;
			bool want = a <= 0xF4 && cont && cp >= 0x10000 &&
				    cp <= 0x10FFFF;

			s[0] = (uint8_t)a;
			s[1] = (uint8_t)b;
			s[2] = 0x80;
			s[3] = 0xBF;
			if (check(s, 4) != want)
				bad++;
		}
	ok(bad == 0, "four-byte inputs with an F0..FF lead (%u wrong)", bad);
}

int
main(void)
{
	test_table();
	test_padded();
	test_fast_path();
	test_exhaustive();
	return tap_done();
}
