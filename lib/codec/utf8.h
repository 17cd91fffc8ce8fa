/* SPDX-License-Identifier: MIT */
/*
 * utf8.h - strict UTF-8 validation (RFC 3629).  Part of libxmbp, whose
 * exported names all start with xmbp_ (doc/device.md): hence the name.
 */
#ifndef XMHUB_UTF8_H
#define XMHUB_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * True when the n bytes at p are well-formed UTF-8: no overlong forms,
 * no surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no truncated
 * sequence.  U+0000 is allowed.  Never reads past p + n.
 */
bool xmbp_utf8_valid(const uint8_t *p, size_t n);

#endif
