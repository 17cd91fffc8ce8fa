/* SPDX-License-Identifier: MIT */
/*
 * jsonform.h - the JSON form of samples, batches and chunks.
 *
 * This is the form `xmhub xmbp decode` prints (doc/xmbp.md "The JSON form"): a
 * sample is [timestamp_us, value]; numbers print so that they read back to the
 * same bits; NaN and the infinities are the strings "NaN", "Infinity" and
 * "-Infinity" (a NaN other than the default quiet one is "NaN:0x" and its bits
 * in hex); bytes are padded base64; json values are their text as a string.
 * doc/xmbp.md is the user's description.  Writers append to a struct buf the
 * caller owns; readers take JSON text.
 */
#ifndef XMHUB_JSONFORM_H
#define XMHUB_JSONFORM_H

#include <stdbool.h>
#include <stddef.h>

#include "codec/buf.h"
#include "codec/sample.h"
#include "codec/xmbp.h"
#include "codec/xmch.h"

/* Why reading JSON failed: kind is a static name, msg NUL-terminated. */
struct jsonform_error {
	const char *kind; /* "InvalidInput", "BufferOverflow", ... */
	char msg[160];
};

/* Appends a JSON string holding the n bytes of UTF-8 at p: '"', '\\' and
 * the control characters escaped as json-c escapes them (\n, \r, \t, \b,
 * \f, else \u00XX; '/' and DEL as they are), so that lib/web/dbjson
 * writes the same bytes as the json-c objects it stands in for. */
void jsonform_string(struct buf *out, const uint8_t *p, size_t n);

/* Appends one value in the JSON form. */
void jsonform_value(struct buf *out, const struct sample_value *v);

/* Appends one sample: [ts,value]. */
void jsonform_sample(struct buf *out, uint64_t ts,
		     const struct sample_value *v);

/* Appends a decoded batch as one line of JSON (newline included). */
void jsonform_batch(struct buf *out, const struct xmbp_batch *batch);

/* Appends an opened chunk as one line of JSON (newline included). */
void jsonform_chunk(struct buf *out, const struct xmch_chunk *chunk);

/*
 * Reads a batch in the JSON form and appends its binary encoding to out.
 * False with *err set when the text is not a batch the format allows.
 */
bool jsonform_encode_batch(const char *text, size_t len, struct buf *out,
			   struct jsonform_error *err);

/*
 * Reads a chunk in the JSON form and appends the stored chunk to out,
 * compressed when "compressed" is true and compression pays.
 */
bool jsonform_pack_chunk(const char *text, size_t len, struct buf *out,
			 struct jsonform_error *err);

/*
 * Appends one value as a CSV field (RFC 4180): numbers and booleans as
 * in the JSON form, NaN and the infinities bare (NaN, Infinity,
 * -Infinity, NaN:0x...), bytes as padded base64; string and json values
 * as their text and arrays as their JSON form, both always in double
 * quotes with inner quotes doubled.
 */
void jsonform_csv_value(struct buf *out, const struct sample_value *v);

#endif
