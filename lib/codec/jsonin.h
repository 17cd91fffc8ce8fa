/* SPDX-License-Identifier: MIT */
/*
 * jsonin.h - strict JSON input on top of json-c.
 *
 * json-c alone silently clamps integers outside 64 bits, turns lone
 * UTF-16 surrogates into U+FFFD, and even in strict mode takes single
 * quotes, NaN and Infinity; input from clients must be refused instead.
 * Everything JSON that xmhub reads goes through here.
 */
#ifndef XMHUB_JSONIN_H
#define XMHUB_JSONIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define JSONIN_MAX_DEPTH 32

/*
 * Parses the len bytes at text as exactly one RFC 8259 JSON value (white
 * space around it allowed).  Refuses invalid UTF-8, integer literals
 * outside [INT64_MIN, UINT64_MAX], escapes of lone surrogates, containers
 * nested deeper than JSONIN_MAX_DEPTH, \u0000 in any string (json-c would
 * cut a key there, so {"k\u0000x": 1} would set "k"; C strings and
 * PostgreSQL cannot hold it) and anything after the value.  Returns a
 * new object (release it with json_object_put()) or NULL with a reason in
 * detail. The literal null also comes back as NULL, with detail set to "".
 */
json_object *jsonin_parse(const char *text, size_t len, char *detail,
			  size_t detail_len);

/*
 * As jsonin_parse(), but string values may hold \u0000 (read them with
 * json_object_get_string_len()); keys still may not.  For formats whose
 * strings are bytes that never meet a C string (lib/codec/jsonform's
 * samples).
 */
json_object *jsonin_parse_nul(const char *text, size_t len, char *detail,
			      size_t detail_len);

/* An integer in 0..UINT64_MAX into *out; false for anything else. */
bool jsonin_u64(json_object *o, uint64_t *out);

/* An integer in INT64_MIN..INT64_MAX into *out; false for anything else. */
bool jsonin_i64(json_object *o, int64_t *out);

/* An integer in [min, max] into *out; false for anything else. */
bool jsonin_range(json_object *o, int64_t min, int64_t max, int64_t *out);

#endif
