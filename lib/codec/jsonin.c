/* SPDX-License-Identifier: MIT */
/*
 * jsonin.c - strict JSON input on top of json-c.
 *
 * A pre-pass over the text finds what json-c would accept but change:
 * integer literals it would clamp, \u escapes of lone surrogates and
 * \u0000 (json-c cuts a key at it, and C strings, PostgreSQL text and
 * jsonb cannot hold it).  It needs to know only where strings and number
 * tokens are, and which strings are keys; json-c then does the real
 * parsing in strict mode.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "codec/jsonin.h"
#include "codec/utf8.h"

static const char max_pos[] = "18446744073709551615";
static const char max_neg[] = "9223372036854775808";

/* True when the digits d[0..n) (no leading zeros) are at most lim. */
static bool
digits_le(const char *d, size_t n, const char *lim)
{
	size_t ln = strlen(lim);

	return n < ln || (n == ln && memcmp(d, lim, n) <= 0);
}

static int
hex4(const char *p)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/*
 * Skips a string starting at t[i] == '"'; false on a lone surrogate.
 * *nul is the offset of its first \u0000 escape, or len without one.
 */
static bool
skip_string(const char *t, size_t len, size_t *pos, size_t *nul, char *detail,
	    size_t dlen)
{
	size_t i = *pos + 1;

	*nul = len;
	for (; i < len && t[i] != '"'; i++) {
		int u, lo;

		if (t[i] != '\\')
			continue;
		i++;
		u = i < len && t[i] == 'u' && len - i > 4 ? hex4(t + i + 1)
							  : -1;
		if (u == 0 && *nul == len)
			*nul = i - 1;
		if (u >= 0xD800 && u <= 0xDFFF) {
			lo = len - i > 10 && t[i + 5] == '\\' && t[i + 6] == 'u'
				     ? hex4(t + i + 7)
				     : -1;
			if (u > 0xDBFF || lo < 0xDC00 || lo > 0xDFFF) {
				snprintf(detail, dlen,
					 "lone surrogate escape at byte %zu",
					 i - 1);
				return false;
			}
			i += 10;
		}
	}
	*pos = i + 1;
	return true;
}

/* Skips a number token; false when it is an integer beyond 64 bits. */
static bool
skip_number(const char *t, size_t len, size_t *pos, char *detail, size_t dlen)
{
	size_t i = *pos, d0;
	bool neg = t[i] == '-';

	if (neg)
		i++;
	d0 = i;
	while (i < len && t[i] >= '0' && t[i] <= '9')
		i++;
	if ((i == len || (t[i] != '.' && t[i] != 'e' && t[i] != 'E')) &&
	    !digits_le(t + d0, i - d0, neg ? max_neg : max_pos)) {
		snprintf(detail, dlen, "integer at byte %zu is out of range",
			 *pos);
		return false;
	}
	while (i < len && strchr("0123456789.eE+-", t[i]) != NULL)
		i++;
	*pos = i;
	return true;
}

static bool
is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* True for the n letters at p being true, false or null. */
static bool
known_word(const char *p, size_t n)
{
	return (n == 4 &&
		(memcmp(p, "true", 4) == 0 || memcmp(p, "null", 4) == 0)) ||
	       (n == 5 && memcmp(p, "false", 5) == 0);
}

/* True when the string ending before t[i] is an object key: a colon
 * follows it (in JSON that json-c accepts, only keys are so followed). */
static bool
is_key(const char *t, size_t len, size_t i)
{
	while (i < len && strchr(" \t\r\n", t[i]) != NULL)
		i++;
	return i < len && t[i] == ':';
}

/*
 * Refuses what json-c would accept or silently alter: invalid UTF-8,
 * single quotes and bare words other than true, false and null (json-c
 * takes 'a', NaN and Infinity even in strict mode), integers beyond 64
 * bits, lone surrogate escapes, \u0000 in keys and (unless nul_values)
 * in string values, and nesting deeper than the limit.
 */
static bool
prescan(const char *t, size_t len, bool nul_values, char *detail, size_t dlen)
{
	size_t i = 0, depth = 0, w, nul;

	if (!xmbp_utf8_valid((const uint8_t *)t, len)) {
		snprintf(detail, dlen, "JSON text is not valid UTF-8");
		return false;
	}
	while (i < len) {
		char c = t[i];

		if (c == '"') {
			if (!skip_string(t, len, &i, &nul, detail, dlen))
				return false;
			if (nul < len && is_key(t, len, i)) {
				snprintf(detail, dlen,
					 "\\u0000 (NUL) in an object key at "
					 "byte %zu",
					 nul);
				return false;
			}
			if (nul < len && !nul_values) {
				snprintf(detail, dlen,
					 "\\u0000 (NUL) in a string at byte "
					 "%zu",
					 nul);
				return false;
			}
		} else if (c == '-' || (c >= '0' && c <= '9')) {
			if (!skip_number(t, len, &i, detail, dlen))
				return false;
		} else if (is_letter(c)) {
			for (w = i; w < len && is_letter(t[w]); w++)
				continue;
			if (!known_word(t + i, w - i)) {
				snprintf(detail, dlen,
					 "invalid JSON word at byte %zu", i);
				return false;
			}
			i = w;
		} else if (c == '\'') {
			snprintf(detail, dlen, "single quote at byte %zu", i);
			return false;
		} else {
			if ((c == '[' || c == '{') &&
			    ++depth > JSONIN_MAX_DEPTH) {
				snprintf(detail, dlen,
					 "nesting deeper than %d at byte %zu",
					 JSONIN_MAX_DEPTH, i);
				return false;
			}
			if ((c == ']' || c == '}') && depth > 0)
				depth--;
			i++;
		}
	}
	return true;
}

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* jsonin_parse() and jsonin_parse_nul(). */
static json_object *
parse(const char *text, size_t len, bool nul_values, char *detail,
      size_t detail_len)
{
	json_tokener *tok;
	json_object *o = NULL;
	enum json_tokener_error e;
	size_t end;

	snprintf(detail, detail_len, "%s", "");
	if (len > INT32_MAX) {
		snprintf(detail, detail_len, "JSON text too large");
		return NULL;
	}
	if (!prescan(text, len, nul_values, detail, detail_len))
		return NULL;
	/* json-c counts a scalar as a level; prescan counted containers. */
	if ((tok = json_tokener_new_ex(JSONIN_MAX_DEPTH + 1)) == NULL) {
		snprintf(detail, detail_len, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, text, (int)len);
	e = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (e == json_tokener_continue) {
		/* A number or word ending the text: one space completes it. */
		o = json_tokener_parse_ex(tok, " ", 1);
		e = json_tokener_get_error(tok);
		end = len;
	}
	if (e == json_tokener_continue)
		snprintf(detail, detail_len, "JSON text ends too early");
	else if (e != json_tokener_success)
		snprintf(detail, detail_len, "invalid JSON at byte %zu: %s",
			 end, json_tokener_error_desc(e));
	else {
		while (end < len && is_space(text[end]))
			end++;
		if (end == len)
			goto out;
		snprintf(detail, detail_len,
			 "unexpected data after the JSON value at byte %zu",
			 end);
	}
	json_object_put(o);
	o = NULL;
out:
	json_tokener_free(tok);
	return o;
}

json_object *
jsonin_parse(const char *text, size_t len, char *detail, size_t detail_len)
{
	return parse(text, len, false, detail, detail_len);
}

json_object *
jsonin_parse_nul(const char *text, size_t len, char *detail, size_t detail_len)
{
	return parse(text, len, true, detail, detail_len);
}

bool
jsonin_u64(json_object *o, uint64_t *out)
{
	int64_t v;

	if (!json_object_is_type(o, json_type_int))
		return false;
	v = json_object_get_int64(o);
	if (v < 0)
		return false;
	*out = v == INT64_MAX ? json_object_get_uint64(o) : (uint64_t)v;
	return true;
}

bool
jsonin_i64(json_object *o, int64_t *out)
{
	if (!json_object_is_type(o, json_type_int))
		return false;
	*out = json_object_get_int64(o);
	return *out != INT64_MAX || json_object_get_uint64(o) == INT64_MAX;
}

bool
jsonin_range(json_object *o, int64_t min, int64_t max, int64_t *out)
{
	int64_t v;

	if (!jsonin_i64(o, &v) || v < min || v > max)
		return false;
	*out = v;
	return true;
}
