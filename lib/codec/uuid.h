/* SPDX-License-Identifier: MIT */
/*
 * uuid.h - the textual form of UUIDs, as ids appear in paths, bodies and
 * tokens.
 */
#ifndef XMHUB_UUID_H
#define XMHUB_UUID_H

#include <stdbool.h>
#include <stddef.h>

#define UUID_LEN 36 /* 8-4-4-4-12 hex digits and dashes, no NUL */

/* True when the len bytes at s are a UUID in 8-4-4-4-12 hex form (any
 * case).  s need not be NUL-terminated. */
bool uuid_valid(const char *s, size_t len);

#endif
