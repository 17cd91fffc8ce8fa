/* SPDX-License-Identifier: MIT */
/*
 * t/unit/jsonform.c - the JSON form of `xmhub xmbp decode` (doc/xmbp.md):
 * exact value text for every type, a bit-exact float round trip over
 * random bit patterns, the refusals of the batch reader and their kinds,
 * the whole-batch shape, and the chunk form both ways.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/be.h"
#include "codec/buf.h"
#include "codec/jsonform.h"
#include "codec/sample.h"
#include "codec/xmbp.h"
#include "codec/xmch.h"

#include "tap.h"
#include "testutil.h"

/* A string literal as (text, length), embedded NULs and all. */
#define S(x) x, sizeof(x) - 1

/* True when the buffer holds exactly the n bytes at want. */
static bool
buf_is(const struct buf *b, const char *want, size_t n)
{
	return !b->failed && b->len == n && memcmp(b->p, want, n) == 0;
}

/* The buffer as a C string for diagnostics (it may hold any bytes). */
static const char *
buf_str(struct buf *b)
{
	buf_putc(b, '\0');
	b->len--;
	return b->p != NULL ? (const char *)b->p : "";
}

/* Values: a sample value, the text it prints as, a name. */

struct vcase {
	struct test_value v;
	const char *want, *name;
};

/* jsonform_value() of each case prints exactly its text. */
static void
is_values(const struct vcase *c, size_t n)
{
	struct buf b;

	for (size_t i = 0; i < n; i++) {
		struct sample_value v = val_row(&c[i].v);

		buf_init(&b, 0);
		jsonform_value(&b, &v);
		if (!ok(buf_is(&b, c[i].want, strlen(c[i].want)),
			"%s prints %s", c[i].name, c[i].want))
			diag("got %s", buf_str(&b));
		buf_free(&b);
	}
}

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))

static void
test_numbers(void)
{
	static const struct vcase cases[] = {
		{TV(SAMPLE_F32, 0x3DCCCCCD), "0.1", "f32 0.1"},
		{TV(SAMPLE_F64, 0x3FB999999999999AULL), "0.1", "f64 0.1"},
		{TV(SAMPLE_F64, 0x3FD3333333333334ULL), "0.30000000000000004",
		 "f64 0.1+0.2"},
		{TV(SAMPLE_F32, 0x3EAAAAAB), "0.33333334", "f32 1/3"},
		{TV(SAMPLE_F64, 0x3FF8000000000000ULL), "1.5", "f64 1.5"},
		{TV(SAMPLE_F32, 0xC0200000), "-2.5", "f32 -2.5"},
		{TV(SAMPLE_F64, 0x7FEFFFFFFFFFFFFFULL),
		 "1.7976931348623157e+308", "f64 DBL_MAX"},
		{TV(SAMPLE_F32, 0x7F7FFFFF), "3.4028235e+38", "f32 FLT_MAX"},
		{TV(SAMPLE_F64, 0x8000000000000000ULL), "-0.0", "f64 -0.0"},
		{TV(SAMPLE_F32, 0x80000000), "-0.0", "f32 -0.0"},
		{TV(SAMPLE_F64, 0), "0", "f64 0.0"},

		{TV(SAMPLE_F64, 0x7FF8000000000000ULL), "\"NaN\"",
		 "f64 default NaN"},
		{TV(SAMPLE_F32, 0x7FC00000), "\"NaN\"", "f32 default NaN"},
		{TV(SAMPLE_F64, 0x7FF0000000000001ULL),
		 "\"NaN:0x7ff0000000000001\"", "f64 signalling NaN"},
		{TV(SAMPLE_F64, 0xFFF8000000000000ULL),
		 "\"NaN:0xfff8000000000000\"", "f64 negative NaN"},
		{TV(SAMPLE_F32, 0x7F800001), "\"NaN:0x7f800001\"",
		 "f32 signalling NaN"},
		{TV(SAMPLE_F32, 0xFFC00000), "\"NaN:0xffc00000\"",
		 "f32 negative NaN"},
		{TV(SAMPLE_F32, 0x7FC00001), "\"NaN:0x7fc00001\"",
		 "f32 NaN with payload 1"},
		{TV(SAMPLE_F64, 0x7FF0000000000000ULL), "\"Infinity\"",
		 "f64 +inf"},
		{TV(SAMPLE_F64, 0xFFF0000000000000ULL), "\"-Infinity\"",
		 "f64 -inf"},
		{TV(SAMPLE_F32, 0x7F800000), "\"Infinity\"", "f32 +inf"},
		{TV(SAMPLE_F32, 0xFF800000), "\"-Infinity\"", "f32 -inf"},

		{TV(SAMPLE_I64, (uint64_t)INT64_MIN), "-9223372036854775808",
		 "i64 min"},
		{TV(SAMPLE_I64, INT64_MAX), "9223372036854775807", "i64 max"},
		{TV(SAMPLE_I32, (uint64_t)INT32_MIN), "-2147483648", "i32 min"},
		{TV(SAMPLE_I32, INT32_MAX), "2147483647", "i32 max"},
		{TV(SAMPLE_I16, (uint64_t)INT16_MIN), "-32768", "i16 min"},
		{TV(SAMPLE_I16, INT16_MAX), "32767", "i16 max"},
		{TV(SAMPLE_I8, (uint64_t)INT8_MIN), "-128", "i8 min"},
		{TV(SAMPLE_I8, INT8_MAX), "127", "i8 max"},
		{TV(SAMPLE_BOOL, 1), "true", "bool true"},
		{TV(SAMPLE_BOOL, 0), "false", "bool false"},
	};

	is_values(cases, NCASES(cases));
}

static void
test_text(void)
{
	static const struct vcase cases[] = {
		{TV_RAW(SAMPLE_STRING, "", 0), "\"\"", "empty string"},
		{TV_RAW(SAMPLE_STRING, S("a\"b\\c/d")), "\"a\\\"b\\\\c/d\"",
		 "quote, backslash and slash"},
		{TV_RAW(SAMPLE_STRING, S("\n\r\t")), "\"\\n\\r\\t\"",
		 "newline, return, tab"},
		{TV_RAW(SAMPLE_STRING, S("\x01\x08\x0C\x1F\x7F")),
		 "\"\\u0001\\b\\f\\u001f\x7F\"",
		 "other control characters (\\b and \\f short, DEL stays raw)"},
		{TV_RAW(SAMPLE_STRING, S("a\0b")), "\"a\\u0000b\"", "U+0000"},
		{TV_RAW(SAMPLE_STRING, S("caf\xC3\xA9 \xF0\x9F\x98\x80")),
		 "\"caf\xC3\xA9 \xF0\x9F\x98\x80\"",
		 "raw UTF-8 kept, 4-byte form included"},
		{TV_RAW(SAMPLE_JSON, S("{\"a\":[1,\"x\"]}")),
		 "\"{\\\"a\\\":[1,\\\"x\\\"]}\"", "json value as a string"},
		{TV_RAW(SAMPLE_JSON, S("\"\\u00e9\"\n")),
		 "\"\\\"\\\\u00e9\\\"\\n\"",
		 "json text byte for byte, escapes and newline included"},

		{TV_RAW(SAMPLE_BYTES, NULL, 0), "\"\"", "bytes, empty"},
		{TV_RAW(SAMPLE_BYTES, S("f")), "\"Zg==\"", "bytes f"},
		{TV_RAW(SAMPLE_BYTES, S("fo")), "\"Zm8=\"", "bytes fo"},
		{TV_RAW(SAMPLE_BYTES, S("foo")), "\"Zm9v\"", "bytes foo"},
		{TV_RAW(SAMPLE_BYTES, S("foob")), "\"Zm9vYg==\"", "bytes foob"},
		{TV_RAW(SAMPLE_BYTES, S("\x00")), "\"AA==\"", "bytes 00"},
		{TV_RAW(SAMPLE_BYTES, S("\xFB\xFF\xBF")), "\"+/+/\"",
		 "bytes FB FF BF (+ and /)"},
	};
	struct buf b;

	is_values(cases, NCASES(cases));

	buf_init(&b, 0);
	jsonform_string(&b, (const uint8_t *)"x\"", 2);
	ok(buf_is(&b, S("\"x\\\"\"")), "jsonform_string quotes and escapes");
	buf_free(&b);
	buf_init(&b, 0);
	jsonform_sample(&b, UINT64_MAX,
			&(struct sample_value){.type = SAMPLE_I8, .u.i8 = -1});
	if (!ok(buf_is(&b, S("[18446744073709551615,-1]")),
		"jsonform_sample: [ts,value] with the largest timestamp"))
		diag("got %s", buf_str(&b));
	buf_free(&b);
}

static void
test_arrays(void)
{
	static const uint64_t f64s[] = {
		0x3FB999999999999AULL, 0x8000000000000000ULL,
		0x7FF8000000000000ULL, 0x7FF0000000000001ULL,
		0x7FF0000000000000ULL, 0xFFF0000000000000ULL,
		0x3FF8000000000000ULL};
	static const uint32_t f32s[] = {0x3DCCCCCD, 0x80000000, 0x7FC00000,
					0xFFC00000, 0x7F800000, 0x7F800001};
	static const int32_t i32s[] = {INT32_MIN, -1, 0, INT32_MAX};
	/* The elements big-endian, as samples hold them. */
	static uint8_t a64[sizeof(f64s)], a32[sizeof(f32s)], ai[sizeof(i32s)];
	static const struct vcase cases[] = {
		{TV_RAW(SAMPLE_F64_ARRAY, NULL, 0), "[]", "empty f64_array"},
		{TV_RAW(SAMPLE_F32_ARRAY, NULL, 0), "[]", "empty f32_array"},
		{TV_RAW(SAMPLE_I32_ARRAY, NULL, 0), "[]", "empty i32_array"},
		{TV_RAW(SAMPLE_F64_ARRAY, a64, 7),
		 "[0.1,-0.0,\"NaN\",\"NaN:0x7ff0000000000001\",\"Infinity\","
		 "\"-Infinity\",1.5]",
		 "f64_array of specials"},
		{TV_RAW(SAMPLE_F32_ARRAY, a32, 5),
		 "[0.1,-0.0,\"NaN\",\"NaN:0xffc00000\",\"Infinity\"]",
		 "f32_array of specials"},
		/* Element 0x7F800001 is a signalling NaN: its bits survive. */
		{TV_RAW(SAMPLE_F32_ARRAY, a32 + 20, 1), "[\"NaN:0x7f800001\"]",
		 "f32_array holding a signalling NaN"},
		{TV_RAW(SAMPLE_I32_ARRAY, ai, 4),
		 "[-2147483648,-1,0,2147483647]", "i32_array extremes"},
	};

	for (size_t i = 0; i < NCASES(f64s); i++)
		be64_put(a64 + 8 * i, f64s[i]);
	for (size_t i = 0; i < NCASES(f32s); i++)
		be32_put(a32 + 4 * i, f32s[i]);
	for (size_t i = 0; i < NCASES(i32s); i++)
		be32_put(ai + 4 * i, (uint32_t)i32s[i]);
	is_values(cases, NCASES(cases));
}

/* Reading JSON back: one-sample batches through the batch reader. */

/* Encodes a one-sample batch whose value is the JSON text val. */
static bool
one_sample(const char *type, const char *val, size_t vlen, struct buf *bin,
	   struct xmbp_stream *s, struct xmbp_batch *batch)
{
	struct jsonform_error err;
	struct xmbp_error xerr;
	struct buf text;
	bool good;

	buf_init(&text, 0);
	buf_printf(&text,
		   "{\"batch_seq\":0,\"device_id\":null,\"streams\":[{"
		   "\"stream_id\":0,\"value_type\":\"%s\",\"samples\":[[0,",
		   type);
	buf_append(&text, val, vlen);
	buf_puts(&text, "]]}]}");
	bin->len = 0;
	good = jsonform_encode_batch((const char *)text.p, text.len, bin, &err);
	if (!good)
		diag("%s %.*s: %s: %s", type, (int)vlen, val, err.kind,
		     err.msg);
	else if (xmbp_decode(bin->p, bin->len, batch, &xerr) != XMBP_OK) {
		diag("decode: %s", xerr.msg);
		good = false;
	} else
		xmbp_stream_at(batch, 0, s);
	buf_free(&text);
	return good && s->sample_count == 1;
}

/*
 * Prints n random values of a float type, reads each back through a
 * one-sample batch and compares the bits on the wire.  The specials are
 * added to the random ones; about 1 random pattern in 256 is a NaN.
 */
static void
float_property(bool single, size_t n)
{
	static const uint64_t specials[] = {
		0,
		0x8000000000000000ULL,
		1,
		0x7FF0000000000000ULL,
		0xFFF0000000000000ULL,
		0x7FF8000000000000ULL,
		0x7FF0000000000001ULL,
		0xFFFFFFFFFFFFFFFFULL,
		0x000FFFFFFFFFFFFFULL,
		0x7FEFFFFFFFFFFFFFULL,
		0x4340000000000000ULL, /* 2^53 */
		0x43E0000000000000ULL, /* 2^63 */
		0x43F0000000000000ULL, /* 2^64 */
		0xC3E0000000000000ULL, /* -2^63 */
	};
	static const uint32_t specials32[] = {
		0,	    0x80000000, 1,	    0x7F800000,
		0xFF800000, 0x7FC00000, 0x7F800001, 0xFFFFFFFF,
		0x007FFFFF, 0x7F7FFFFF, 0x4B800000, /* 2^24 */
		0x5F000000,			    /* 2^63 */
		0x5F800000,			    /* 2^64 */
		0xDF000000,			    /* -2^63 */
	};
	struct xmbp_batch batch;
	struct xmbp_stream s;
	struct buf text, bin;
	size_t bad = 0, nan = 0;

	buf_init(&text, 0);
	buf_init(&bin, 0);
	for (size_t i = 0; i < n; i++) {
		struct sample_value v;
		uint64_t want, got = 0;

		if (single)
			want = i < 14 ? specials32[i] : (uint32_t)rnd();
		else
			want = i < 14 ? specials[i] : rnd();
		v = single ? val_f32_bits((uint32_t)want) : val_f64_bits(want);
		if (single ? isnan(v.u.f32) : isnan(v.u.f64))
			nan++;
		text.len = 0;
		jsonform_value(&text, &v);
		if (one_sample(single ? "f32" : "f64", (const char *)text.p,
			       text.len, &bin, &s, &batch))
			got = single ? be32_get(s.data + 8)
				     : be64_get(s.data + 8);
		else
			got = ~want;
		if (got != want && bad++ < 5)
			diag("bits %0*llx print as %s, read back as %0*llx",
			     single ? 8 : 16, (unsigned long long)want,
			     buf_str(&text), single ? 8 : 16,
			     (unsigned long long)got);
	}
	ok(bad == 0,
	   "%zu %s bit patterns (%zu NaNs) print and read back "
	   "bit-exact",
	   n, single ? "f32" : "f64", nan);
	if (bad != 0)
		diag("%zu differ", bad);
	buf_free(&text);
	buf_free(&bin);
}

/* The same for array elements: n arrays of 64 random elements. */
static void
array_property(enum sample_type t, size_t n)
{
	const size_t k = 64, elem = xmbp_sample_elem_size(t);
	uint8_t raw[64 * 8];
	struct xmbp_batch batch;
	struct xmbp_stream s;
	struct buf text, bin;
	size_t bad = 0;

	buf_init(&text, 0);
	buf_init(&bin, 0);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < k; j++)
			if (elem == 8)
				be64_put(raw + 8 * j, rnd());
			else
				be32_put(raw + 4 * j, (uint32_t)rnd());
		text.len = 0;
		jsonform_value(&text, &(struct sample_value){
					      .type = t, .u.raw = {raw, k}});
		if (!one_sample(xmbp_sample_type_name(t), (const char *)text.p,
				text.len, &bin, &s, &batch)) {
			bad++;
			continue;
		}
		if (memcmp(s.data + 10, raw, k * elem) == 0)
			continue;
		/* Elements follow the timestamp and the u16 count. */
		for (size_t j = 0; j < k && bad < 3; j++)
			if (memcmp(s.data + 10 + j * elem, raw + j * elem,
				   elem) != 0) {
				diag("%s element %0*llx read back as %0*llx",
				     xmbp_sample_type_name(t), (int)elem * 2,
				     (unsigned long long)(elem == 8
								  ? be64_get(
									    raw +
									    8 * j)
								  : be32_get(
									    raw +
									    4 * j)),
				     (int)elem * 2,
				     (unsigned long long)(elem == 8
								  ? be64_get(
									    s.data +
									    10 +
									    8 * j)
								  : be32_get(
									    s.data +
									    10 +
									    4 * j)));
				break;
			}
		bad++;
	}
	ok(bad == 0,
	   "%zu %s values of %zu random elements read back "
	   "bit-exact",
	   n, xmbp_sample_type_name(t), k);
	if (bad != 0)
		diag("%zu of %zu differ", bad, n);
	buf_free(&text);
	buf_free(&bin);
}

/* Batch refusals. */

/*
 * Encodes the len bytes of text as a batch: with kind NULL it must be
 * accepted and decode, otherwise be refused with that kind, a message and
 * no output.
 */
static void
batch_case(const char *text, size_t len, const char *kind, const char *name)
{
	struct jsonform_error err = {NULL, ""};
	struct xmbp_batch batch;
	struct buf out;
	bool r;

	buf_init(&out, 0);
	r = jsonform_encode_batch(text, len, &out, &err);
	if (kind == NULL) {
		if (!ok(r && xmbp_decode(out.p, out.len, &batch, NULL) ==
					XMBP_OK,
			"accepts %s", name))
			diag("%s: %s", err.kind != NULL ? err.kind : "-",
			     err.msg);
	} else if (!ok(!r && err.kind != NULL && strcmp(err.kind, kind) == 0 &&
			       err.msg[0] != '\0' && out.len == 0,
		       "refuses %s: %s", name, kind))
		diag("returned %d, kind %s, msg \"%s\", %zu bytes out", r,
		     err.kind != NULL ? err.kind : "(null)", err.msg, out.len);
	buf_free(&out);
}

/* batch_case() of a batch of one stream of type whose samples are the
 * JSON text samples. */
static void
samples_case(const char *type, const char *samples, const char *kind,
	     const char *name)
{
	struct buf b;

	buf_init(&b, 0);
	buf_printf(&b,
		   "{\"batch_seq\":1,\"streams\":[{\"stream_id\":0,"
		   "\"value_type\":\"%s\",\"samples\":[%s]}]}",
		   type, samples);
	batch_case((const char *)b.p, b.len, kind, name);
	buf_free(&b);
}

/* Batches refused as a whole: text, kind, name. */
static const struct {
	const char *text, *kind, *name;
} batches[] = {
	{"[]", "InvalidInput", "an array"},
	{"\"batch\"", "InvalidInput", "a string"},
	{"null", "InvalidInput", "null"},
	{"", "InvalidInput", "empty text"},
	{"{\"batch_seq\":1,\"streams\":[]", "InvalidInput", "truncated JSON"},
	{"{\"batch_seq\":1,\"streams\":[],\"extra\":1}", "InvalidInput",
	 "an unknown key"},
	{"{\"batch_seq\":1,\"streams\":[{\"stream_id\":0,"
	 "\"value_type\":\"f32\",\"samples\":[],\"rate\":1}]}",
	 "InvalidInput", "an unknown key in a stream"},
	{"{\"streams\":[]}", "InvalidInput", "missing batch_seq"},
	{"{\"batch_seq\":65536,\"streams\":[]}", "InvalidInput",
	 "batch_seq 65536"},
	{"{\"batch_seq\":-1,\"streams\":[]}", "InvalidInput", "batch_seq -1"},
	{"{\"batch_seq\":1.0,\"streams\":[]}", "InvalidInput", "batch_seq 1.0"},
	{"{\"batch_seq\":1}", "InvalidInput", "missing streams"},
	{"{\"batch_seq\":1,\"device_id\":-1,\"streams\":[]}", "InvalidInput",
	 "device_id -1"},
	{"{\"batch_seq\":1,\"device_id\":4294967296,\"streams\":[]}",
	 "InvalidInput", "device_id 2^32"},
	{"{\"batch_seq\":1,\"device_id\":\"42\",\"streams\":[]}",
	 "InvalidInput", "device_id as a string"},
	{"{\"batch_seq\":1,\"flags\":2,\"streams\":[]}", "UnsupportedVersion",
	 "flags 2 (zstd bit)"},
	{"{\"batch_seq\":1,\"flags\":3,\"device_id\":1,\"streams\":[]}",
	 "UnsupportedVersion", "flags 3 with a device_id"},
	{"{\"batch_seq\":1,\"flags\":1,\"device_id\":null,"
	 "\"streams\":[]}",
	 "InvalidInput", "flags 1 with device_id null"},
	{"{\"batch_seq\":1,\"flags\":1,\"streams\":[]}", "InvalidInput",
	 "flags 1 without device_id"},
	{"{\"batch_seq\":1,\"flags\":0,\"device_id\":5,\"streams\":[]}",
	 "InvalidInput", "flags 0 with device_id 5"},
	{"{\"batch_seq\":1,\"flags\":256,\"streams\":[]}", "InvalidInput",
	 "flags 256"},
	{"{\"version\":2,\"batch_seq\":1,\"streams\":[]}", "UnsupportedVersion",
	 "version 2"},
	{"{\"version\":0,\"batch_seq\":1,\"streams\":[]}", "UnsupportedVersion",
	 "version 0"},
	{"{\"batch_seq\":1,\"streams\":[{\"stream_id\":0,"
	 "\"value_type\":\"f16\",\"samples\":[]}]}",
	 "InvalidValueType", "value_type f16"},
	{"{\"batch_seq\":1,\"streams\":[{\"stream_id\":0,"
	 "\"value_type\":1,\"samples\":[]}]}",
	 "InvalidValueType", "value_type as a number"},
	{"{\"batch_seq\":1,\"streams\":[{\"stream_id\":0,"
	 "\"samples\":[]}]}",
	 "InvalidValueType", "missing value_type"},
	{"{\"batch_seq\":1,\"streams\":[{\"stream_id\":0,"
	 "\"value_type\":\"f64\\u0000x\",\"samples\":[]}]}",
	 "InvalidValueType", "value_type f64 with a NUL after it"},
	{"{\"batch_seq\":1,\"streams\":[{\"stream_id\":65536,"
	 "\"value_type\":\"f32\",\"samples\":[]}]}",
	 "InvalidInput", "stream_id 65536"},
	{"{\"batch_seq\":1,\"streams\":[7]}", "InvalidInput",
	 "a stream that is not an object"},
};

/*
 * One stream's samples: values out of their type's range and malformed
 * samples (kind: the refusal, NULL when accepted).
 */
static const struct {
	const char *type, *samples, *kind, *name;
} sample_texts[] = {
	{"i8", "[0,-128],[0,127]", NULL, "i8 -128 and 127"},
	{"f64", "[0,\"NaN\\u0000x\"]", "InvalidInput",
	 "a special float with a NUL after it"},
	{"i8", "[0,128]", "InvalidInput", "i8 128"},
	{"i8", "[0,-129]", "InvalidInput", "i8 -129"},
	{"i16", "[0,32768]", "InvalidInput", "i16 32768"},
	{"i32", "[0,-2147483648],[0,2147483647]", NULL, "i32 extremes"},
	{"i32", "[0,2147483648]", "InvalidInput", "i32 2147483648"},
	{"i32", "[0,-2147483649]", "InvalidInput", "i32 -2147483649"},
	{"i32", "[0,1.0]", "InvalidInput", "i32 1.0"},
	{"i64", "[0,9223372036854775808]", "InvalidInput", "i64 2^63"},
	{"i32_array", "[0,[1,2147483648]]", "InvalidInput",
	 "i32_array element 2147483648"},
	{"bool", "[0,1]", "InvalidInput", "bool 1"},
	{"f32", "[0,1e39]", "InvalidInput", "f32 1e39 (beyond float)"},
	{"f64", "[0,1e400]", "InvalidInput", "f64 1e400 (beyond double)"},
	{"f64", "[0,\"nan\"]", "InvalidInput",
	 "f64 \"nan\" (not the NaN spelling)"},
	{"f64", "[0,\"NaN:0x7ff0000000000000\"]", "InvalidInput",
	 "f64 \"NaN:\" with infinity's bits"},
	{"f32", "[0,\"NaN:0x7fc0000\"]", "InvalidInput",
	 "f32 \"NaN:\" with 7 digits"},
	{"string", "[0,5]", "InvalidInput", "string value a number"},
	{"i8", "[18446744073709551615,0]", NULL, "timestamp 2^64-1"},
	{"i8", "[-1,0]", "InvalidInput", "timestamp -1"},
	{"i8", "[1.5,0]", "InvalidInput", "timestamp 1.5"},
	{"i8", "[\"1\",0]", "InvalidInput", "timestamp as a string"},
	{"i8", "[1]", "InvalidInput", "a 1-element sample"},
	{"i8", "[1,2,3]", "InvalidInput", "a 3-element sample"},
	{"i8", "{\"ts\":1,\"v\":2}", "InvalidInput",
	 "a sample that is an object"},
	{"i8", "5", "InvalidInput", "a sample that is a number"},
	{"bytes", "[0,\"Zg=\"]", "InvalidInput",
	 "base64 Zg= (length not a multiple of 4)"},
	{"bytes", "[0,\"Zh==\"]", "InvalidInput",
	 "base64 Zh== (unused bits set)"},
	{"bytes", "[0,\"Zg==Zg==\"]", "InvalidInput",
	 "base64 with padding in the middle"},
	{"bytes", "[0,\"Zm9v\\n\"]", "InvalidInput", "base64 with a newline"},
	{"bytes", "[0,\"Zm-_\"]", "InvalidInput", "base64url digits"},
	{"bytes", "[0,\"\"],[1,\"Zm9vYg==\"]", NULL, "base64 empty and padded"},
};

/* The large texts of test_refusals(): what each is made of. */
enum gen { GEN_STREAMS, GEN_ELEMENTS, GEN_CHARS, GEN_ZERO_BYTES, GEN_SAMPLES };

/* Up to the limits and one past them: a batch of n streams, or one
 * stream's samples (n array elements, characters, bytes or samples). */
static const struct {
	enum gen gen;
	size_t n;
	const char *type, *kind, *name;
} limits[] = {
	{GEN_STREAMS, 256, NULL, NULL, "256 streams"},
	{GEN_STREAMS, 257, NULL, "BufferOverflow", "257 streams"},
	{GEN_ELEMENTS, 4096, "f32_array", NULL, "an f32_array of 4096"},
	{GEN_ELEMENTS, 4097, "f32_array", "BufferOverflow",
	 "an f32_array of 4097"},
	{GEN_CHARS, 65535, "string", NULL, "a string of 65535 bytes"},
	{GEN_CHARS, 65536, "string", "BufferOverflow",
	 "a string of 65536 bytes"},
	{GEN_ZERO_BYTES, 65536, "bytes", "BufferOverflow",
	 "bytes of 65536 (base64)"},
	/* 65536 samples do not fit a u16 sample_count. */
	{GEN_SAMPLES, 65536, "i8", "BufferOverflow",
	 "65536 samples in one stream"},
};

/* The text of limits[] row gen, n, NUL-terminated but for GEN_STREAMS. */
static void
gen_text(enum gen gen, size_t n, struct buf *s)
{
	buf_init(s, 0);
	switch (gen) {
	case GEN_STREAMS:
		buf_puts(s, "{\"batch_seq\":1,\"streams\":[");
		for (size_t i = 0; i < n; i++)
			buf_printf(s,
				   "%s{\"stream_id\":%zu,\"value_type\":\"i8\","
				   "\"samples\":[[0,1]]}",
				   i > 0 ? "," : "", i);
		buf_puts(s, "]}");
		return;
	case GEN_ELEMENTS:
		buf_puts(s, "[0,[");
		for (size_t i = 0; i < n; i++)
			buf_printf(s, "%s%zu", i > 0 ? "," : "", i);
		buf_puts(s, "]]");
		break;
	case GEN_CHARS:
		buf_puts(s, "[0,\"");
		for (size_t i = 0; i < n; i++)
			buf_putc(s, (char)('a' + i % 26));
		buf_puts(s, "\"]");
		break;
	case GEN_ZERO_BYTES:
		/* Zeros in base64: "AAAA" per 3 bytes, then the rest. */
		buf_puts(s, "[0,\"");
		for (size_t i = 0; i < n / 3; i++)
			buf_puts(s, "AAAA");
		buf_puts(s, n % 3 == 0 ? "" : n % 3 == 1 ? "AA==" : "AAA=");
		buf_puts(s, "\"]");
		break;
	case GEN_SAMPLES:
		for (size_t i = 0; i < n; i++)
			buf_puts(s, i > 0 ? ",[0,1]" : "[0,1]");
		break;
	}
	buf_putc(s, '\0');
}

static void
test_refusals(void)
{
	struct buf b;

	for (size_t i = 0; i < NCASES(batches); i++)
		batch_case(batches[i].text, strlen(batches[i].text),
			   batches[i].kind, batches[i].name);
	for (size_t i = 0; i < NCASES(limits); i++) {
		gen_text(limits[i].gen, limits[i].n, &b);
		if (limits[i].type == NULL)
			batch_case((const char *)b.p, b.len, limits[i].kind,
				   limits[i].name);
		else
			samples_case(limits[i].type, (const char *)b.p,
				     limits[i].kind, limits[i].name);
		buf_free(&b);
	}
	for (size_t i = 0; i < NCASES(sample_texts); i++)
		samples_case(sample_texts[i].type, sample_texts[i].samples,
			     sample_texts[i].kind, sample_texts[i].name);
}

/* Whole batches. */

/* Decodes len bytes and prints the batch; false if it does not decode. */
static bool
print_batch(const uint8_t *p, size_t len, struct buf *out)
{
	struct xmbp_batch batch;
	struct xmbp_error err;

	buf_init(out, 0);
	if (xmbp_decode(p, len, &batch, &err) != XMBP_OK) {
		diag("decode: %s: %s", xmbp_status_name(err.status), err.msg);
		return false;
	}
	jsonform_batch(out, &batch);
	return true;
}

/* encode(decode(x)) == x, through the JSON text. */
static void
is_reencoded(const uint8_t *p, size_t len, const char *name)
{
	struct jsonform_error err = {NULL, ""};
	struct buf text, bin;
	bool same = false;

	buf_init(&bin, 0);
	if (!print_batch(p, len, &text) ||
	    !jsonform_encode_batch((const char *)text.p, text.len, &bin, &err))
		diag("%s: %s", err.kind != NULL ? err.kind : "-", err.msg);
	else if (!(same = bin.len == len && memcmp(bin.p, p, len) == 0)) {
		for (size_t i = 0; i < len && i < bin.len; i++)
			if (bin.p[i] != p[i]) {
				diag("first difference at byte %zu: %02X, "
				     "want %02X",
				     i, bin.p[i], p[i]);
				break;
			}
		diag("lengths %zu, want %zu", bin.len, len);
	}
	ok(same, "%s: encode(decode(x)) == x", name);
	buf_free(&text);
	buf_free(&bin);
}

static void
test_batches(void)
{
	static const char want1[] =
		"{\"version\":1,\"flags\":1,\"batch_seq\":7,\"device_id\":42,"
		"\"streams\":[{\"stream_id\":0,\"value_type\":\"f32\","
		"\"samples\":[[1000,0.5],[2000,-1.25]]},"
		"{\"stream_id\":3,\"value_type\":\"string\","
		"\"samples\":[[3000,\"hi\"]]}]}\n";
	static const char want2[] =
		"{\"version\":1,\"flags\":0,\"batch_seq\":65535,"
		"\"device_id\":null,\"streams\":[]}\n";
	static const double f64a[] = {0.1, -0.0, 1e300};
	static const float f32a[] = {0.5f, -3.0f};
	static const int32_t i32a[] = {INT32_MIN, 7};
	uint8_t bin[4096];
	struct xmbp_enc enc;
	struct buf text;
	uint32_t dev = 42;
	size_t len = 0;
	double nan64;
	float nan32;

	xmbp_enc_init(&enc, bin, sizeof(bin));
	xmbp_enc_begin(&enc, 7, &dev);
	xmbp_enc_stream(&enc, 0, SAMPLE_F32);
	xmbp_enc_f32(&enc, 1000, 0.5f);
	xmbp_enc_f32(&enc, 2000, -1.25f);
	xmbp_enc_stream(&enc, 3, SAMPLE_STRING);
	xmbp_enc_string(&enc, 3000, "hi", 2);
	ok(xmbp_enc_finish(&enc, &len) == XMBP_ENC_OK, "example batch built");
	if (print_batch(bin, len, &text) &&
	    !ok(buf_is(&text, S(want1)), "jsonform_batch: doc/xmbp.md's shape"))
		diag("got %s", buf_str(&text));
	buf_free(&text);
	is_reencoded(bin, len, "the example batch");

	xmbp_enc_init(&enc, bin, sizeof(bin));
	xmbp_enc_begin(&enc, 65535, NULL);
	ok(xmbp_enc_finish(&enc, &len) == XMBP_ENC_OK && len == 10,
	   "empty batch built");
	if (print_batch(bin, len, &text) &&
	    !ok(buf_is(&text, S(want2)),
		"jsonform_batch: no device, no streams"))
		diag("got %s", buf_str(&text));
	buf_free(&text);
	is_reencoded(bin, len, "the empty batch");

	/* Every type in one batch. */
	memcpy(&nan64, &(uint64_t){0x7FF0000000000001ULL}, 8);
	memcpy(&nan32, &(uint32_t){0xFFC00000}, 4);
	xmbp_enc_init(&enc, bin, sizeof(bin));
	xmbp_enc_begin(&enc, 1, &dev);
	xmbp_enc_stream(&enc, 0, SAMPLE_F64);
	xmbp_enc_f64(&enc, 0, 0.1);
	xmbp_enc_f64(&enc, 1, nan64);
	xmbp_enc_f64(&enc, 2, -0.0);
	xmbp_enc_stream(&enc, 1, SAMPLE_F32);
	xmbp_enc_f32(&enc, 0, 0.1f);
	xmbp_enc_f32(&enc, 1, nan32);
	xmbp_enc_stream(&enc, 2, SAMPLE_I64);
	xmbp_enc_i64(&enc, 0, INT64_MIN);
	xmbp_enc_i64(&enc, UINT64_MAX, INT64_MAX);
	xmbp_enc_stream(&enc, 3, SAMPLE_I32);
	xmbp_enc_i32(&enc, 0, INT32_MIN);
	xmbp_enc_stream(&enc, 4, SAMPLE_BOOL);
	xmbp_enc_bool(&enc, 0, true);
	xmbp_enc_bool(&enc, 0, false);
	xmbp_enc_stream(&enc, 5, SAMPLE_STRING);
	xmbp_enc_string(&enc, 0, S("a\"\\\n\x01\0\xF0\x9F\x98\x80"));
	xmbp_enc_string(&enc, 0, "", 0);
	xmbp_enc_stream(&enc, 6, SAMPLE_BYTES);
	xmbp_enc_bytes(&enc, 0, S("\x00\xFF\x00\x80"));
	xmbp_enc_bytes(&enc, 0, NULL, 0);
	xmbp_enc_stream(&enc, 7, SAMPLE_F64_ARRAY);
	xmbp_enc_f64_array(&enc, 0, f64a, 3);
	xmbp_enc_f64_array(&enc, 0, NULL, 0);
	xmbp_enc_stream(&enc, 8, SAMPLE_F32_ARRAY);
	xmbp_enc_f32_array(&enc, 0, f32a, 2);
	xmbp_enc_stream(&enc, 9, SAMPLE_I32_ARRAY);
	xmbp_enc_i32_array(&enc, 0, i32a, 2);
	xmbp_enc_stream(&enc, 10, SAMPLE_JSON);
	xmbp_enc_json(&enc, 0, S("{\"k\": [1, \"\\u00e9\"]}\n"));
	xmbp_enc_stream(&enc, 11, SAMPLE_I16);
	xmbp_enc_i16(&enc, 0, INT16_MIN);
	xmbp_enc_stream(&enc, 12, SAMPLE_I8);
	xmbp_enc_i8(&enc, 0, INT8_MIN);
	xmbp_enc_stream(&enc, 65535, SAMPLE_I8);
	ok(xmbp_enc_finish(&enc, &len) == XMBP_ENC_OK,
	   "batch of all 13 types built");
	is_reencoded(bin, len, "a batch of all 13 types");

	/*
	 * Reserved flag bits are ignored on read and written as 0
	 * (doc/xmbp.md "The batch format"), so a batch with one set
	 * re-encodes with the bit cleared and is otherwise the same
	 * (doc/xmbp.md "Decoding rules and error kinds").
	 */
	xmbp_enc_init(&enc, bin, sizeof(bin));
	xmbp_enc_begin(&enc, 9, &dev);
	if (ok(xmbp_enc_finish(&enc, &len) == XMBP_ENC_OK,
	       "batch with a device built")) {
		struct jsonform_error err = {NULL, ""};
		struct buf printed, again;

		bin[5] |= 0x04;
		buf_init(&again, 0);
		ok(print_batch(bin, len, &printed) &&
			   strstr((const char *)printed.p, "\"flags\":5,") !=
				   NULL,
		   "flags 0x05 decodes and prints as received");
		ok(jsonform_encode_batch((const char *)printed.p, printed.len,
					 &again, &err) &&
			   again.len == len && again.p[5] == 0x01 &&
			   memcmp(again.p + 6, bin + 6, len - 6) == 0,
		   "re-encoded with the reserved bit written as 0");
		buf_free(&printed);
		buf_free(&again);
	}
}

/* Chunks. */

static bool
pack(const char *text, size_t len, struct buf *out, struct jsonform_error *err)
{
	buf_init(out, 0);
	err->kind = NULL;
	err->msg[0] = '\0';
	return jsonform_pack_chunk(text, len, out, err);
}

/* Opens a stored chunk and prints it; false if it does not open. */
static bool
dump_chunk(const struct buf *stored, struct buf *out)
{
	struct xmch_chunk c;
	struct xmch_error err;

	buf_init(out, 0);
	if (xmch_open(stored->p, stored->len, &c, &err) != XMCH_OK) {
		diag("xmch_open: %s: %s", xmch_status_name(err.status),
		     err.msg);
		return false;
	}
	jsonform_chunk(out, &c);
	xmch_close(&c);
	return true;
}

/* pack, dump, pack again: the same bytes and the same text. */
static void
chunk_roundtrip(const char *text, const char *want, bool want_zstd,
		const char *name)
{
	struct jsonform_error err;
	struct buf stored, json, again, json2;
	bool zstd;

	if (!pack(text, strlen(text), &stored, &err)) {
		ok(false, "%s: packs", name);
		diag("%s: %s", err.kind, err.msg);
		buf_free(&stored);
		return;
	}
	zstd = stored.len >= 4 && memcmp(stored.p, "\x28\xB5\x2F\xFD", 4) == 0;
	ok(zstd == want_zstd, "%s: stored %s", name,
	   want_zstd ? "compressed" : "plain");
	if (!dump_chunk(&stored, &json)) {
		ok(false, "%s: opens", name);
		buf_free(&stored);
		buf_free(&json);
		return;
	}
	if (want != NULL && !ok(buf_is(&json, want, strlen(want)),
				"%s: jsonform_chunk text", name))
		diag("got %s", buf_str(&json));
	ok(pack((const char *)json.p, json.len, &again, &err) &&
		   again.len == stored.len &&
		   memcmp(again.p, stored.p, stored.len) == 0,
	   "%s: pack(dump(chunk)) == chunk", name);
	if (err.kind != NULL)
		diag("%s: %s", err.kind, err.msg);
	ok(dump_chunk(&again, &json2) && json2.len == json.len &&
		   memcmp(json2.p, json.p, json.len) == 0,
	   "%s: dump is stable", name);
	buf_free(&stored);
	buf_free(&json);
	buf_free(&again);
	buf_free(&json2);
}

static void
refuse_chunk(const char *text, const char *kind, const char *name)
{
	struct jsonform_error err;
	struct buf out;
	bool r = pack(text, strlen(text), &out, &err);

	if (!ok(!r && err.kind != NULL && strcmp(err.kind, kind) == 0 &&
			err.msg[0] != '\0' && out.len == 0,
		"pack refuses %s: %s", name, kind))
		diag("returned %d, kind %s, msg \"%s\"", r,
		     err.kind != NULL ? err.kind : "(null)", err.msg);
	buf_free(&out);
}

/* Chunk texts pack refuses: text, kind, name. */
static const struct {
	const char *text, *kind, *name;
} bad_chunks[] = {
	{"{\"value_type\":\"i8\",\"samples\":[[5,1],[4,1]]}",
	 "UnorderedTimestamps", "a descending timestamp"},
	{"{\"value_type\":\"i8\",\"sample_count\":2,"
	 "\"samples\":[[1,1],[2,1],[3,1]]}",
	 "InvalidHeader", "sample_count 2 for 3 samples"},
	{"{\"value_type\":\"i8\",\"start_ts_us\":0,"
	 "\"samples\":[[1,1]]}",
	 "InvalidHeader", "start_ts_us 0, first sample at 1"},
	{"{\"value_type\":\"i8\",\"end_ts_us\":2,"
	 "\"samples\":[[1,1]]}",
	 "InvalidHeader", "end_ts_us 2, last sample at 1"},
	{"{\"version\":2,\"value_type\":\"i8\",\"samples\":[]}",
	 "UnsupportedVersion", "version 2"},
	{"{\"value_type\":\"i9\",\"samples\":[]}", "InvalidValueType",
	 "value_type i9"},
	{"{\"value_type\":\"i8\",\"samples\":[],\"x\":1}", "InvalidInput",
	 "an unknown key"},
	{"{\"value_type\":\"i8\",\"compressed\":1,\"samples\":[]}",
	 "InvalidInput", "compressed 1"},
	{"[]", "InvalidInput", "an array"},
	{"{\"value_type\":\"i8\",\"samples\":[[1,128]]}", "InvalidInput",
	 "i8 128"},
};

static void
test_chunks(void)
{
	static const struct {
		const char *type, *samples;
	} each[] = {
		{"f64", "[0,0.1],[0,\"NaN:0xfff8000000000000\"],[9,1e-300]"},
		{"f32", "[0,0.1],[1,\"-Infinity\"],[2,\"NaN:0x7fc00001\"]"},
		{"i64", "[0,-9223372036854775808],[1,9223372036854775807]"},
		{"i32", "[0,-2147483648],[1,2147483647]"},
		{"i16", "[0,-32768],[1,32767]"},
		{"i8", "[0,-128],[18446744073709551615,127]"},
		{"bool", "[0,true],[0,false]"},
		{"string",
		 "[0,\"\"],[1,\"a\\\"\\\\\\n\\u0000\xF0\x9F\x98\x80\"]"},
		{"bytes", "[0,\"\"],[1,\"AP8A\"]"},
		{"f64_array", "[0,[]],[1,[0.5,-0.0,\"NaN\"]]"},
		{"f32_array", "[0,[]],[1,[0.5,-0.0,\"Infinity\"]]"},
		{"i32_array", "[0,[]],[1,[-2147483648,2147483647]]"},
		{"json", "[0,\"{\\\"a\\\": [1, 2]}\"],[1,\"\"]"},
	};
	struct buf b;

	chunk_roundtrip(
		"{\"value_type\":\"f64\",\"samples\":[[1,0.5],[1,\"NaN\"],"
		"[5,-0.0],[6,\"NaN:0x7ff0000000000001\"],[7,\"-Infinity\"]]}",
		"{\"version\":1,\"value_type\":\"f64\",\"sample_count\":5,"
		"\"start_ts_us\":1,\"end_ts_us\":7,\"compressed\":false,"
		"\"stored_bytes\":112,\"samples\":[[1,0.5],[1,\"NaN\"],"
		"[5,-0.0],[6,\"NaN:0x7ff0000000000001\"],[7,\"-Infinity\"]]}\n",
		false, "f64 chunk");
	chunk_roundtrip(
		"{\"value_type\":\"i8\",\"samples\":[]}",
		"{\"version\":1,\"value_type\":\"i8\",\"sample_count\":0,"
		"\"start_ts_us\":0,\"end_ts_us\":0,\"compressed\":false,"
		"\"stored_bytes\":32,\"samples\":[]}\n",
		false, "empty chunk");
	for (size_t i = 0; i < sizeof(each) / sizeof(each[0]); i++) {
		char name[64];

		buf_init(&b, 0);
		buf_printf(&b, "{\"value_type\":\"%s\",\"samples\":[%s]}",
			   each[i].type, each[i].samples);
		buf_putc(&b, '\0');
		snprintf(name, sizeof(name), "%s chunk", each[i].type);
		chunk_roundtrip((const char *)b.p, NULL, false, name);
		buf_free(&b);
	}

	/* Compressed: the repeated strings pay for zstd. */
	buf_init(&b, 0);
	buf_puts(&b, "{\"value_type\":\"string\",\"compressed\":true,"
		     "\"samples\":[");
	for (int i = 0; i < 200; i++)
		buf_printf(&b, "%s[%d,\"sensor ok\"]", i > 0 ? "," : "",
			   1000 + i);
	buf_puts(&b, "]}");
	buf_putc(&b, '\0');
	chunk_roundtrip((const char *)b.p, NULL, true, "compressed chunk");
	buf_free(&b);

	for (size_t i = 0; i < NCASES(bad_chunks); i++)
		refuse_chunk(bad_chunks[i].text, bad_chunks[i].kind,
			     bad_chunks[i].name);
}

/* jsonform_csv_value() of each case is its text. */
static void
test_csv(void)
{
	static const uint8_t i32s[] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe};
	static const uint8_t text[] = "a \"q\", b\n";
	static const uint8_t raw[] = {0, 1, 2, 0xff};
	static const struct vcase cases[] = {
		{TV(SAMPLE_F32, 0x3DCCCCCD), "0.1", "f32"},
		{TV(SAMPLE_F32, 0x7FC00000), "NaN", "f32 NaN bare"},
		{TV(SAMPLE_F32, 0x7FC00001), "NaN:0x7fc00001",
		 "f32 NaN with other bits, bare"},
		{TV(SAMPLE_F64, 0xFFF0000000000000ULL), "-Infinity",
		 "f64 -Infinity bare"},
		{TV(SAMPLE_I64, (uint64_t)INT64_MIN), "-9223372036854775808",
		 "i64"},
		{TV(SAMPLE_BOOL, 1), "true", "bool"},
		{TV_RAW(SAMPLE_BYTES, raw, sizeof(raw)),
		 "AAEC/w==", "bytes: base64, unquoted"},
		{TV_RAW(SAMPLE_STRING, text, sizeof(text) - 1),
		 "\"a \"\"q\"\", b\n\"", "string: quoted, quotes doubled"},
		{TV_RAW(SAMPLE_JSON, text, 0), "\"\"", "json: empty, quoted"},
		{TV_RAW(SAMPLE_I32_ARRAY, i32s, 2), "\"[1,-2]\"",
		 "i32_array: quoted JSON"},
	};
	struct buf b;

	for (size_t i = 0; i < NCASES(cases); i++) {
		struct sample_value v = val_row(&cases[i].v);
		const char *want = cases[i].want;

		buf_init(&b, 0);
		buf_putc(&b, 'x'); /* a field never starts the buffer */
		jsonform_csv_value(&b, &v);
		ok(!b.failed && b.len == strlen(want) + 1 &&
			   memcmp(b.p + 1, want, b.len - 1) == 0,
		   "csv: %s", cases[i].name);
		buf_free(&b);
	}
}

int
main(void)
{
	rnd_seed(0x6A736F6E666F726DULL);
	test_csv();
	test_numbers();
	test_text();
	test_arrays();
	float_property(true, 100000);
	float_property(false, 100000);
	array_property(SAMPLE_F32_ARRAY, 2000);
	array_property(SAMPLE_F64_ARRAY, 2000);
	test_refusals();
	test_batches();
	test_chunks();
	return tap_done();
}
