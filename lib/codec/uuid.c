/* SPDX-License-Identifier: MIT */
/*
 * uuid.c - the textual form of UUIDs (see uuid.h).
 */
#include "config.h"

#include "codec/uuid.h"

bool
uuid_valid(const char *s, size_t len)
{
	if (len != UUID_LEN)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (c != '-')
				return false;
		} else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
			     (c >= 'A' && c <= 'F')))
			return false;
	}
	return true;
}
