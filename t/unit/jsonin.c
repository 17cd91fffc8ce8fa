/* SPDX-License-Identifier: MIT */
/*
 * t/unit/jsonin.c - strict JSON input: what jsonin_parse() accepts, what it
 * refuses and why (\u0000 with jsonin_parse_nul() too), and the integer
 * readers at their boundaries.
 *
 * Every text is parsed from an exact-size heap copy without a NUL, so
 * AddressSanitizer reports any read past its end.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/jsonin.h"

#include "tap.h"

/* A string literal as (text, length), embedded NULs and all. */
#define S(x) x, sizeof(x) - 1

static char detail[256];

static json_object *
parse(const char *text, size_t len)
{
	json_object *o;
	char *copy;

	if ((copy = malloc(len > 0 ? len : 1)) == NULL)
		abort();
	memcpy(copy, text, len);
	memset(detail, 'x', sizeof(detail) - 1);
	detail[sizeof(detail) - 1] = '\0';
	o = jsonin_parse(copy, len, detail, sizeof(detail));
	free(copy);
	return o;
}

/* Parses text, expecting a value of type t; returns it for more checks. */
static json_object *
accept(const char *text, size_t len, json_type t, const char *name)
{
	json_object *o = parse(text, len);

	if (!ok(o != NULL && json_object_is_type(o, t) && detail[0] == '\0',
		"accepts %s", name))
		diag("got %s, detail \"%s\"",
		     o == NULL ? "NULL"
			       : json_type_to_name(json_object_get_type(o)),
		     detail);
	return o;
}

static void
accept_put(const char *text, size_t len, json_type t, const char *name)
{
	json_object_put(accept(text, len, t, name));
}

static void
refuse(const char *text, size_t len, const char *name)
{
	json_object *o = parse(text, len);

	/* The type only: the value may hold the very bytes under test. */
	if (!ok(o == NULL && detail[0] != '\0', "refuses %s", name))
		diag("got %s, detail \"%s\"",
		     o == NULL ? "NULL"
			       : json_type_to_name(json_object_get_type(o)),
		     detail);
	else
		diag("detail: %s", detail);
	json_object_put(o);
}

/* depth containers, innermost holding inner ("" for none). */
static void
nested(char *out, size_t cap, int depth, bool objects, const char *inner)
{
	size_t n = 0;

	for (int i = 0; i < depth && n + 8 < cap; i++) {
		memcpy(out + n, objects ? "{\"k\":" : "[", objects ? 5 : 1);
		n += objects ? 5 : 1;
	}
	n += (size_t)snprintf(out + n, cap - n, "%s", inner);
	for (int i = 0; i < depth && n + 2 < cap; i++)
		out[n++] = objects ? '}' : ']';
	out[n] = '\0';
}

static void
test_accepts(void)
{
	json_object *o, *m;

	o = accept(S("{\"a\":1,\"b\":[true,false,null],\"c\":\"x\"}"),
		   json_type_object, "an object");
	ok(o != NULL && json_object_object_get_ex(o, "b", &m) &&
		   json_object_array_length(m) == 3,
	   "object member b is an array of 3");
	json_object_put(o);
	o = accept(S("[1,2.5,\"s\",{},[]]"), json_type_array, "an array");
	ok(o != NULL && json_object_array_length(o) == 5, "array of 5");
	json_object_put(o);
	o = accept(S("\"str\""), json_type_string, "a string");
	is_str(o != NULL ? json_object_get_string(o) : NULL, "str",
	       "string value");
	json_object_put(o);
	accept_put(S(" \t\r\n{\"a\":1} \n\t\r "), json_type_object,
		   "an object with white space around it");
	accept_put(S("[]"), json_type_array, "an empty array");
	accept_put(S("{}"), json_type_object, "an empty object");
	accept_put(S("\"\""), json_type_string, "an empty string");

	/* Scalars alone: nothing after them tells json-c they ended. */
	accept_put(S("1"), json_type_int, "the number 1 alone");
	accept_put(S("0"), json_type_int, "the number 0 alone");
	accept_put(S("-1.5"), json_type_double, "the number -1.5 alone");
	accept_put(S("1e3"), json_type_double, "the number 1e3 alone");
	accept_put(S("true"), json_type_boolean, "true alone");
	accept_put(S("false"), json_type_boolean, "false alone");
	accept_put(S("18446744073709551615"), json_type_int,
		   "18446744073709551615 alone");
	accept_put(S("1 "), json_type_int, "the number 1 and a space");
	accept_put(S("true\n"), json_type_boolean, "true and a newline");

	/* null is a value, but comes back as NULL with an empty detail. */
	o = parse(S("null"));
	if (!ok(o == NULL && detail[0] == '\0', "null: NULL, detail \"\""))
		diag("detail \"%s\"", detail);
	o = parse(S(" null \n"));
	if (!ok(o == NULL && detail[0] == '\0',
		"null with white space: NULL, detail \"\""))
		diag("detail \"%s\"", detail);

	/* A backslash escaped before "u" is no \u escape. */
	o = accept(S("\"\\\\ud800\""), json_type_string,
		   "an escaped backslash then ud800");
	is_str(o != NULL ? json_object_get_string(o) : NULL, "\\ud800",
	       "it is the 6 characters \\ud800");
	json_object_put(o);
	/* Digits in strings are not integer literals. */
	o = accept(S("[\"18446744073709551616\",\"-9223372036854775809\"]"),
		   json_type_array, "out-of-range digits inside strings");
	json_object_put(o);
	accept_put(S("[1.8446744073709551616e19]"), json_type_array,
		   "a double beyond 2^64 (not an integer literal)");
	accept_put(S("[-0]"), json_type_array, "-0");
}

static void
test_refusals(void)
{
	char small[8];
	json_object *o;

	refuse(S(""), "empty text");
	refuse(S("   "), "white space only");
	refuse(S("{} x"), "trailing garbage after an object");
	refuse(S("[1]]"), "an extra ]");
	refuse(S("{}{}"), "two objects");
	refuse(S("1 2"), "two numbers");
	refuse(S("\"a\" \"b\""), "two strings");
	refuse(S("true false"), "two literals");
	refuse(S("{\"a\":1}\x00"), "a NUL after the value");
	refuse(S("{\"a\":"), "truncated object");
	refuse(S("{\"a\""), "object cut after a key");
	refuse(S("[1,2"), "truncated array");
	refuse(S("["), "a lone [");
	refuse(S("\"abc"), "unterminated string");
	refuse(S("tru"), "truncated true");
	refuse(S("[1,]"), "a trailing comma");
	refuse(S("[01]"), "a leading zero");
	/* json-c takes these even in strict mode; JSON has none of them. */
	refuse(S("{'a':1}"), "single quotes");
	refuse(S("[NaN]"), "NaN");
	refuse(S("[Infinity]"), "Infinity");
	refuse(S("[-Infinity]"), "-Infinity");

	/* Invalid UTF-8 inside strings. */
	refuse(S("\"\xC3\x28\""), "string with C3 28");
	refuse(S("\"\xFF\""), "string with FF");
	refuse(S("\"\x80\""), "string with a lone continuation byte");
	refuse(S("\"a\xE2\x82\""), "string with a cut sequence E2 82");
	refuse(S("\"\xC0\x80\""), "string with overlong C0 80");
	refuse(S("\"\xE0\x80\xAF\""), "string with overlong E0 80 AF");
	refuse(S("\"\xED\xA0\x80\""), "string with surrogate ED A0 80");
	refuse(S("\"\xF4\x90\x80\x80\""),
	       "string with F4 90 80 80 (above U+10FFFF)");
	refuse(S("\"\xF8\x88\x80\x80\x80\""), "string with a 5-byte form");
	refuse(S("{\"\xFF\":1}"), "key with FF");

	/* Escapes of lone surrogates. */
	refuse(S("\"\\ud800\""), "\\ud800 alone");
	refuse(S("\"\\udc00\""), "\\udc00 alone");
	refuse(S("\"\\uDFFF\""), "\\uDFFF alone");
	refuse(S("\"\\ud800\\u0041\""), "\\ud800 then \\u0041");
	refuse(S("\"\\ud800x\""), "\\ud800 then x");
	refuse(S("\"\\ud800\\ud800\""), "\\ud800 twice");
	refuse(S("\"\\ude00\\ud83d\""), "a pair in the wrong order");
	refuse(S("\"abc\\udbff\""), "\\udbff at the end of a string");
	refuse(S("{\"\\ud800\":1}"), "\\ud800 in a key");
	refuse(S("[\"ok\",\"\\udc00\"]"), "\\udc00 in a later string");

	/* Integer literals beyond 64 bits. */
	refuse(S("[18446744073709551616]"), "18446744073709551616");
	refuse(S("[-9223372036854775809]"), "-9223372036854775809");
	refuse(S("[99999999999999999999999]"), "a 23-digit integer");
	refuse(S("{\"k\":18446744073709551616}"), "2^64 as an object member");
	refuse(S("18446744073709551616 "), "2^64 alone");

	/* The detail is cut to the buffer, and NUL-terminated. */
	memset(small, 'x', sizeof(small));
	o = jsonin_parse("[1,", 3, small, sizeof(small));
	ok(o == NULL && memchr(small, '\0', sizeof(small)) != NULL &&
		   small[0] != '\0',
	   "a detail cut to 8 bytes stays NUL-terminated");
}

static void
test_depth(void)
{
	char text[4096];

	nested(text, sizeof(text), JSONIN_MAX_DEPTH, false, "");
	accept_put(text, strlen(text), json_type_array,
		   "32 nested empty arrays");
	nested(text, sizeof(text), JSONIN_MAX_DEPTH, false, "1");
	accept_put(text, strlen(text), json_type_array,
		   "32 nested arrays around a number");
	nested(text, sizeof(text), JSONIN_MAX_DEPTH, true, "\"v\"");
	accept_put(text, strlen(text), json_type_object,
		   "32 nested objects around a string");
	nested(text, sizeof(text), JSONIN_MAX_DEPTH + 1, false, "");
	refuse(text, strlen(text), "33 nested empty arrays");
	nested(text, sizeof(text), JSONIN_MAX_DEPTH + 1, false, "1");
	refuse(text, strlen(text), "33 nested arrays around a number");
	nested(text, sizeof(text), JSONIN_MAX_DEPTH + 1, true, "{}");
	refuse(text, strlen(text), "33 nested objects");
	nested(text, sizeof(text), 1000, false, "");
	refuse(text, strlen(text), "1000 nested arrays");
}

static void
test_surrogate_pair(void)
{
	json_object *o;
	const char *s;

	o = accept(S("\"\\ud83d\\ude00\""), json_type_string,
		   "the pair \\ud83d\\ude00");
	s = o != NULL ? json_object_get_string(o) : "";
	ok(o != NULL && json_object_get_string_len(o) == 4 &&
		   memcmp(s, "\xF0\x9F\x98\x80", 4) == 0,
	   "it becomes F0 9F 98 80 (U+1F600)");
	json_object_put(o);
	o = accept(S("\"a\\uD83D\\uDE00b\""), json_type_string,
		   "the pair in capitals, between letters");
	s = o != NULL ? json_object_get_string(o) : "";
	ok(o != NULL && json_object_get_string_len(o) == 6 &&
		   memcmp(s,
			  "a\xF0\x9F\x98\x80"
			  "b",
			  6) == 0,
	   "it becomes a F0 9F 98 80 b");
	json_object_put(o);
	o = accept(S("\"\\udbff\\udfff\""), json_type_string,
		   "the last pair \\udbff\\udfff");
	s = o != NULL ? json_object_get_string(o) : "";
	ok(o != NULL && json_object_get_string_len(o) == 4 &&
		   memcmp(s, "\xF4\x8F\xBF\xBF", 4) == 0,
	   "it becomes F4 8F BF BF (U+10FFFF)");
	json_object_put(o);
}

/* Integer readers at their edges. */

enum {
	E_ZERO,
	E_MINUS1,
	E_TEN,
	E_ELEVEN,
	E_I64MAX,
	E_I64MAX1,
	E_U64MAX,
	E_I64MIN,
	E_DOUBLE,
	E_DOUBLE_E,
	E_STRING,
	E_TRUE,
	E_NULL,
	E_COUNT
};

static const char edges[] =
	"[0,-1,10,11,9223372036854775807,9223372036854775808,"
	"18446744073709551615,-9223372036854775808,1.0,1e2,\"1\",true,null]";

static void
test_integers(void)
{
	static const struct {
		int idx;
		bool u_ok;
		uint64_t u;
		bool i_ok;
		int64_t i;
		const char *what;
	} cases[] = {
		{E_ZERO, true, 0, true, 0, "0"},
		{E_MINUS1, false, 0, true, -1, "-1"},
		{E_TEN, true, 10, true, 10, "10"},
		{E_I64MAX, true, INT64_MAX, true, INT64_MAX, "INT64_MAX"},
		{E_I64MAX1, true, (uint64_t)INT64_MAX + 1, false, 0,
		 "INT64_MAX+1"},
		{E_U64MAX, true, UINT64_MAX, false, 0, "UINT64_MAX"},
		{E_I64MIN, false, 0, true, INT64_MIN, "INT64_MIN"},
		{E_DOUBLE, false, 0, false, 0, "1.0"},
		{E_DOUBLE_E, false, 0, false, 0, "1e2"},
		{E_STRING, false, 0, false, 0, "\"1\""},
		{E_TRUE, false, 0, false, 0, "true"},
		{E_NULL, false, 0, false, 0, "null"},
	};
	/* jsonin_range() of an edge: taken as want, or refused. */
	static const struct {
		int idx;
		int64_t min, max;
		bool ok;
		int64_t want;
		const char *name;
	} ranges[] = {
		{E_ZERO, 0, 10, true, 0, "jsonin_range(0, [0,10])"},
		{E_TEN, 0, 10, true, 10, "jsonin_range(10, [0,10])"},
		{E_ELEVEN, 0, 10, false, 0, "jsonin_range(11, [0,10]) refused"},
		{E_MINUS1, 0, 10, false, 0, "jsonin_range(-1, [0,10]) refused"},
		{E_MINUS1, -1, -1, true, -1, "jsonin_range(-1, [-1,-1])"},
		{E_I64MAX, INT64_MIN, INT64_MAX, true, INT64_MAX,
		 "jsonin_range(INT64_MAX, full range)"},
		{E_I64MIN, INT64_MIN, INT64_MAX, true, INT64_MIN,
		 "jsonin_range(INT64_MIN, full range)"},
		{E_I64MAX1, INT64_MIN, INT64_MAX, false, 0,
		 "jsonin_range(INT64_MAX+1, full range) refused"},
		{E_U64MAX, 0, INT64_MAX, false, 0,
		 "jsonin_range(UINT64_MAX, [0,INT64_MAX]) refused"},
		{E_I64MAX, 0, INT64_MAX - 1, false, 0,
		 "jsonin_range(INT64_MAX, [0,INT64_MAX-1]) refused"},
		{E_DOUBLE, 0, 10, false, 0,
		 "jsonin_range(1.0, [0,10]) refused"},
		{E_STRING, 0, 10, false, 0,
		 "jsonin_range(\"1\", [0,10]) refused"},
		/* The array holds JSON null as NULL. */
		{E_NULL, 0, 10, false, 0, "jsonin_range(null) refused"},
	};
	json_object *a =
		accept(S(edges), json_type_array, "the array of integer edges");
	int64_t r;

	if (a == NULL || json_object_array_length(a) != E_COUNT) {
		ok(false, "integer edges parsed");
		json_object_put(a);
		return;
	}
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		json_object *o = json_object_array_get_idx(a, cases[k].idx);
		uint64_t u = 12345;
		int64_t i = 12345;
		bool got;

		got = jsonin_u64(o, &u);
		if (!ok(got == cases[k].u_ok && (!got || u == cases[k].u),
			"jsonin_u64(%s): %s", cases[k].what,
			cases[k].u_ok ? "taken" : "refused"))
			diag("returned %d, value %llu", got,
			     (unsigned long long)u);
		got = jsonin_i64(o, &i);
		if (!ok(got == cases[k].i_ok && (!got || i == cases[k].i),
			"jsonin_i64(%s): %s", cases[k].what,
			cases[k].i_ok ? "taken" : "refused"))
			diag("returned %d, value %lld", got, (long long)i);
	}

	for (size_t k = 0; k < sizeof(ranges) / sizeof(ranges[0]); k++) {
		bool got = jsonin_range(
			json_object_array_get_idx(a, ranges[k].idx),
			ranges[k].min, ranges[k].max, &r);

		ok(got == ranges[k].ok && (!got || r == ranges[k].want), "%s",
		   ranges[k].name);
	}
	json_object_put(a);
}

/* jsonin_parse_nul() on an exact-size heap copy, its reason in detail. */
static json_object *
parse_nul(const char *text, size_t len)
{
	json_object *o;
	char *copy;

	if ((copy = malloc(len > 0 ? len : 1)) == NULL)
		abort();
	memcpy(copy, text, len);
	o = jsonin_parse_nul(copy, len, detail, sizeof(detail));
	free(copy);
	return o;
}

/* Refuses text with a detail naming \u0000, what (key or string) and
 * the byte offset of the escape. */
static void
refuse_nul(const char *text, size_t len, const char *what, size_t at,
	   const char *name)
{
	char want[64];
	json_object *o = parse(text, len);

	snprintf(want, sizeof(want), "in %s at byte %zu", what, at);
	if (!ok(o == NULL && strstr(detail, "\\u0000") != NULL &&
			strstr(detail, want) != NULL,
		"refuses %s: \\u0000 %s", name, want))
		diag("detail \"%s\"", detail);
	json_object_put(o);
}

/*
 * \u0000: json-c would keep it in a string value but cut a key at it
 * ({"k\u0000x": 3} sets "k"), and nothing downstream (C strings,
 * PostgreSQL) holds it: jsonin_parse() refuses it everywhere,
 * jsonin_parse_nul() in keys only.
 */
static void
test_nul(void)
{
	json_object *o, *m;

	refuse_nul(S("\"\\u0000\""), "a string", 1, "\"\\u0000\"");
	refuse_nul(S("\"ab\\u0000\""), "a string", 3, "it at the end");
	refuse_nul(S("\"\\u00e9\\u0000\""), "a string", 7, "it after \\u00e9");
	refuse_nul(S("\"\\u00000\""), "a string", 1, "it before a 0");
	refuse_nul(S("[\"ok\",\"x\\u0000\"]"), "a string", 8,
		   "it in a later array element");
	refuse_nul(S("{\"k\":\"v\\u0000\"}"), "a string", 7,
		   "it in a member's value");
	refuse_nul(S("{\"k\\u0000x\":3}"), "an object key", 3,
		   "{\"k\\u0000x\":3}");
	refuse_nul(S("{\"k\":1,\"k\\u0000x\":3}"), "an object key", 9,
		   "a key that would overwrite k");
	refuse_nul(S("{\"k\\u0000\" \t\n:3}"), "an object key", 3,
		   "a key with white space before its colon");
	refuse_nul(S("[{\"a\":{\"\\u0000\":1}}]"), "an object key", 8,
		   "a nested key");
	refuse(S("\"a\0b\""), "a raw NUL byte in a string");
	refuse(S("{\"a\0\":1}"), "a raw NUL byte in a key");

	/* Neither a NUL nor refused. */
	o = accept(S("\"\\\\u0000\""), json_type_string,
		   "an escaped backslash then u0000");
	is_str(o != NULL ? json_object_get_string(o) : NULL, "\\u0000",
	       "it is the six characters \\u0000");
	json_object_put(o);
	o = accept(S("{\"k\\u0001\":\"\\u0001\"}"), json_type_object,
		   "\\u0001 in a key and a value");
	ok(o != NULL && json_object_object_get_ex(o, "k\x01", &m) &&
		   strcmp(json_object_get_string(m), "\x01") == 0,
	   "key k\\x01 holds \\x01");
	json_object_put(o);

	/* jsonin_parse_nul(): values may hold it, keys still not. */
	o = parse_nul(S("\"\\u00e9\\u0000\""));
	ok(o != NULL && json_object_is_type(o, json_type_string) &&
		   json_object_get_string_len(o) == 3 &&
		   memcmp(json_object_get_string(o), "\xC3\xA9\0", 3) == 0,
	   "jsonin_parse_nul: \\u00e9 and \\u0000 become C3 A9 00");
	json_object_put(o);
	o = parse_nul(S("{\"s\":[\"a\\u0000b\"]}"));
	ok(o != NULL && json_object_object_get_ex(o, "s", &m) &&
		   json_object_get_string_len(
			   json_object_array_get_idx(m, 0)) == 3,
	   "jsonin_parse_nul: a value a\\u0000b keeps its 3 bytes");
	json_object_put(o);
	o = parse_nul(S("{\"k\":1,\"k\\u0000x\":3}"));
	if (!ok(o == NULL && strstr(detail, "in an object key at byte 9"),
		"jsonin_parse_nul refuses \\u0000 in a key"))
		diag("detail \"%s\"", detail);
	json_object_put(o);
	o = parse_nul(S("{\"k\\u0000\":\"\\u0000\"}"));
	if (!ok(o == NULL && strstr(detail, "in an object key at byte 3"),
		"jsonin_parse_nul refuses a NUL key with a NUL value"))
		diag("detail \"%s\"", detail);
	json_object_put(o);
}

int
main(void)
{
	test_accepts();
	test_refusals();
	test_depth();
	test_surrogate_pair();
	test_nul();
	test_integers();
	return tap_done();
}
