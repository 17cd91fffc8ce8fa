/* SPDX-License-Identifier: MIT */
/*
 * hex.t - lib/codec/hex.c.
 */
#include "config.h"

#include "tap.h"
#include "codec/hex.h"

int
main(void)
{
	const char *digits = "0123456789abcdef", *upper = "ABCDEF";
	bool all = true;

	for (int i = 0; i < 16; i++)
		all = all && hex_value(digits[i]) == i;
	ok(all, "0-9 and a-f are 0 to 15");
	all = true;
	for (int i = 0; i < 6; i++)
		all = all && hex_value(upper[i]) == 10 + i;
	ok(all, "A-F are 10 to 15");
	all = true;
	for (int c = -128; c < 128; c++)
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
		      (c >= 'A' && c <= 'F')))
			all = all && hex_value((char)c) == -1;
	ok(all,
	   "every other char is -1 ('g', 'G', '/', ':', '@', NUL, high bytes)");
	return tap_done();
}
