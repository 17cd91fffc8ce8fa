/* SPDX-License-Identifier: MIT */
/*
 * base64.h - RFC 4648 base64 with padding (the "bytes" JSON form).
 */
#ifndef XMHUB_BASE64_H
#define XMHUB_BASE64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/buf.h"

/* Appends the padded base64 text of the n bytes at p to out. */
void base64_encode(struct buf *out, const uint8_t *p, size_t n);

/*
 * Appends the bytes of the base64 text s (n characters) to out.  Strict:
 * the length is a multiple of 4, padding only at the end, no white
 * space, unused bits zero.  False when s is not such text or out failed.
 */
bool base64_decode(struct buf *out, const char *s, size_t n);

#endif
