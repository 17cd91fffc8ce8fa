/* SPDX-License-Identifier: MIT */
/*
 * t/unit/sample.c - the value type table (lib/codec/sample.h).
 *
 * The expected names, tags and sizes are written out from the tables of
 * doc/xmbp.md here rather than derived from the library, so a wrong entry in
 * lib/codec/sample.c cannot agree with itself.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "codec/sample.h"
#include "tap.h"
#include "testutil.h"

/* doc/xmbp.md, "Value types". */
static const struct {
	unsigned int tag;
	const char *name;
	size_t fixed; /* value bytes, 0 when variable */
	size_t elem;  /* array element bytes, 0 for non-arrays */
} spec[] = {
	{0x00, "f64", 8, 0},	   {0x01, "f32", 4, 0},
	{0x02, "i64", 8, 0},	   {0x03, "i32", 4, 0},
	{0x04, "bool", 1, 0},	   {0x05, "string", 0, 0},
	{0x06, "bytes", 0, 0},	   {0x07, "f64_array", 0, 8},
	{0x08, "f32_array", 0, 4}, {0x09, "i32_array", 0, 4},
	{0x0A, "json", 0, 0},	   {0x0B, "i16", 2, 0},
	{0x0C, "i8", 1, 0},
};
#define NSPEC (sizeof(spec) / sizeof(spec[0]))

static void
test_names(void)
{
	static const char *const unknown[] = {
		"",	"F32",	   "f32 ",  " f32",    "f16",
		"u8",	"float",   "array", "f64_arr", "i32_array_",
		"JSON", "boolean", "str",   "byte",
	};
	enum sample_type t;
	unsigned int bad = 0;

	for (size_t i = 0; i < NSPEC; i++) {
		const char *name = xmbp_sample_type_name(spec[i].tag);

		is_str(name, spec[i].name,
		       "xmbp_sample_type_name(0x%02X) is %s", spec[i].tag,
		       spec[i].name);
		t = SAMPLE__MAX;
		ok(xmbp_sample_type_from_name(spec[i].name, &t) &&
			   (unsigned int)t == spec[i].tag,
		   "xmbp_sample_type_from_name(\"%s\") is 0x%02X", spec[i].name,
		   spec[i].tag);
	}
	ok(SAMPLE__MAX == NSPEC, "there are 13 types");

	/* *type must stay untouched on refusal: callers rely on defaults. */
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		t = SAMPLE_I8;
		if (xmbp_sample_type_from_name(unknown[i], &t) ||
		    t != SAMPLE_I8) {
			diag("\"%s\" was accepted or *type changed",
			     unknown[i]);
			bad++;
		}
	}
	ok(bad == 0, "unknown names are refused and leave *type alone");

	bad = 0;
	for (unsigned int tag = 0x0D; tag <= 0xFF; tag++)
		if (xmbp_sample_type_name((enum sample_type)tag) != NULL)
			bad++;
	ok(bad == 0, "xmbp_sample_type_name is NULL for 0x0D..0xFF");
}

static void
test_valid(void)
{
	unsigned int bad = 0;

	for (unsigned int tag = 0; tag <= 0x0C; tag++)
		if (!xmbp_sample_type_valid(tag)) {
			diag("tag 0x%02X refused", tag);
			bad++;
		}
	ok(bad == 0, "xmbp_sample_type_valid for 0x00..0x0C");

	bad = 0;
	for (unsigned int tag = 0x0D; tag <= 0xFF; tag++)
		if (xmbp_sample_type_valid(tag)) {
			diag("tag 0x%02X accepted", tag);
			bad++;
		}
	ok(bad == 0, "xmbp_sample_type_valid false for 0x0D..0xFF");
	ok(!xmbp_sample_type_valid(0x100) && !xmbp_sample_type_valid(0x10C) &&
		   !xmbp_sample_type_valid(~0u),
	   "xmbp_sample_type_valid false above a byte (no truncation to 8 "
	   "bits)");
}

static void
test_sizes(void)
{
	for (size_t i = 0; i < NSPEC; i++) {
		is_int(xmbp_sample_fixed_size(spec[i].tag), spec[i].fixed,
		       "xmbp_sample_fixed_size(%s) is %zu", spec[i].name,
		       spec[i].fixed);
		is_int(xmbp_sample_elem_size(spec[i].tag), spec[i].elem,
		       "xmbp_sample_elem_size(%s) is %zu", spec[i].name,
		       spec[i].elem);
	}
	/* doc/xmbp.md: a sample of f64 is 16 bytes, ... of bool 9. */
	is_int(8 + xmbp_sample_fixed_size(SAMPLE_F64), 16,
	       "f64 sample is 16 bytes");
	is_int(8 + xmbp_sample_fixed_size(SAMPLE_BOOL), 9,
	       "bool sample is 9 bytes");
	is_int(xmbp_sample_fixed_size((enum sample_type)0x0D), 0,
	       "xmbp_sample_fixed_size of an invalid type is 0");
	is_int(xmbp_sample_elem_size((enum sample_type)0xFF), 0,
	       "xmbp_sample_elem_size of an invalid type is 0");
}

static const uint8_t pay[16];

static void
test_payload_size(void)
{
	static const struct {
		struct test_value v;
		size_t want;
		const char *name;
	} cases[] = {
		{TV_RAW(SAMPLE_STRING, pay, 5), 5, "string of 5 bytes: 5"},
		{TV_RAW(SAMPLE_BYTES, pay, 16), 16, "bytes of 16 bytes: 16"},
		{TV_RAW(SAMPLE_JSON, pay, 7), 7, "json of 7 bytes: 7"},
		{TV_RAW(SAMPLE_F64_ARRAY, pay, 3), 24,
		 "f64_array of 3: 24 bytes"},
		{TV_RAW(SAMPLE_F32_ARRAY, pay, 3), 12,
		 "f32_array of 3: 12 bytes"},
		{TV_RAW(SAMPLE_I32_ARRAY, NULL, 4096), 16384,
		 "i32_array of 4096: 16384 bytes"},
		{TV_RAW(SAMPLE_BYTES, NULL, 0), 0, "empty bytes: 0"},
		{TV_RAW(SAMPLE_F64_ARRAY, NULL, 0), 0, "empty f64_array: 0"},
	};
	struct sample_value v;
	unsigned int bad = 0;

	/* The union may hold anything: a fixed-width type has no payload. */
	for (size_t i = 0; i < NSPEC; i++) {
		if (spec[i].fixed == 0)
			continue;
		v = val_raw((enum sample_type)spec[i].tag, pay, 5);
		if (xmbp_sample_payload_size(&v) != 0) {
			diag("%s: %zu", spec[i].name,
			     xmbp_sample_payload_size(&v));
			bad++;
		}
	}
	ok(bad == 0,
	   "xmbp_sample_payload_size is 0 for every fixed-width type");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		v = val_row(&cases[i].v);
		is_int(xmbp_sample_payload_size(&v), cases[i].want, "%s",
		       cases[i].name);
	}
	v = val_raw((enum sample_type)0x0D, pay, 5);
	is_int(xmbp_sample_payload_size(&v), 0, "invalid type: 0");
}

/*
 * Big-endian f64 {1.0, 2.0} and {1.0, 3.0}; read as four f32 each, they
 * differ in the third element only.  a12_copy is a12 in another place.
 */
static const uint8_t a12[16] = {0x3F, 0xF0, 0, 0, 0, 0, 0, 0,
				0x40, 0x00, 0, 0, 0, 0, 0, 0};
static const uint8_t a12_copy[16] = {0x3F, 0xF0, 0, 0, 0, 0, 0, 0,
				     0x40, 0x00, 0, 0, 0, 0, 0, 0};
static const uint8_t a13[16] = {0x3F, 0xF0, 0, 0, 0, 0, 0, 0,
				0x40, 0x08, 0, 0, 0, 0, 0, 0};

/* xmbp_sample_equal(a, b) == want, and the same the other way round. */
static const struct {
	struct test_value a, b;
	bool want;
	const char *name;
} equal_cases[] = {
	/* Floats by their bits. */
	{TV(SAMPLE_F64, 0x3FF8000000000000), TV(SAMPLE_F64, 0x3FF8000000000000),
	 true, "f64 1.5 and 1.5"},
	{TV(SAMPLE_F64, 0x7FF8000000000000), TV(SAMPLE_F64, 0x7FF8000000000000),
	 true, "f64 NaN and the same NaN"},
	{TV(SAMPLE_F64, 0x7FF8000000000000), TV(SAMPLE_F64, 0x7FF8000000000001),
	 false, "f64 NaNs with different payloads"},
	{TV(SAMPLE_F64, 0x7FF8000000000000), TV(SAMPLE_F64, 0xFFF8000000000000),
	 false, "f64 NaNs with different signs"},
	{TV(SAMPLE_F64, 0x0000000000000000), TV(SAMPLE_F64, 0x8000000000000000),
	 false, "f64 0.0 and -0.0"},
	{TV(SAMPLE_F32, 0x7FC00000), TV(SAMPLE_F32, 0x7FC00000), true,
	 "f32 NaN and the same NaN"},
	{TV(SAMPLE_F32, 0x7FC00000), TV(SAMPLE_F32, 0x7FC12345), false,
	 "f32 NaNs with different payloads"},
	{TV(SAMPLE_F32, 0x00000000), TV(SAMPLE_F32, 0x80000000), false,
	 "f32 0.0 and -0.0"},

	/* Integers and bool. */
	{TV(SAMPLE_I64, (uint64_t)INT64_MIN),
	 TV(SAMPLE_I64, (uint64_t)INT64_MIN), true, "i64 INT64_MIN twice"},
	{TV(SAMPLE_I64, (uint64_t)INT64_MIN), TV(SAMPLE_I64, INT64_MAX), false,
	 "i64 INT64_MIN and INT64_MAX"},
	{TV(SAMPLE_I8, (uint64_t)-1), TV(SAMPLE_I8, 1), false, "i8 -1 and 1"},
	{TV(SAMPLE_BOOL, 1), TV(SAMPLE_BOOL, 1), true, "bool true twice"},
	{TV(SAMPLE_BOOL, 1), TV(SAMPLE_BOOL, 0), false, "bool true and false"},

	/* The type counts, whatever the bits. */
	{TV(SAMPLE_F64, 0), TV(SAMPLE_I64, 0), false, "f64 0.0 and i64 0"},
	{TV_RAW(SAMPLE_STRING, "ab", 2), TV_RAW(SAMPLE_BYTES, "ab", 2), false,
	 "string \"ab\" and bytes \"ab\""},
	{TV_RAW(SAMPLE_F64_ARRAY, a12, 2), TV_RAW(SAMPLE_F32_ARRAY, a12, 4),
	 false, "f64_array of 2 and f32_array of 4 over the same bytes"},

	/* Payloads by length and bytes, not by pointer. */
	{TV_RAW(SAMPLE_STRING, "abc", 3), TV_RAW(SAMPLE_STRING, &"xabc"[1], 3),
	 true, "string \"abc\" in two places"},
	{TV_RAW(SAMPLE_STRING, "abc", 3), TV_RAW(SAMPLE_STRING, "abd", 3),
	 false, "string \"abc\" and \"abd\""},
	{TV_RAW(SAMPLE_BYTES, "ab", 2), TV_RAW(SAMPLE_BYTES, "abc", 3), false,
	 "bytes \"ab\" and \"abc\""},
	{TV_RAW(SAMPLE_JSON, "{}", 2), TV_RAW(SAMPLE_JSON, "{}", 2), true,
	 "json {} twice"},

	/* Empty payloads: no bytes read, NULL pointers allowed. */
	{TV_RAW(SAMPLE_STRING, NULL, 0), TV_RAW(SAMPLE_STRING, "x", 0), true,
	 "empty string (NULL) and empty string"},
	{TV_RAW(SAMPLE_BYTES, NULL, 0), TV_RAW(SAMPLE_BYTES, NULL, 0), true,
	 "empty bytes, both NULL"},
	{TV_RAW(SAMPLE_I32_ARRAY, NULL, 0), TV_RAW(SAMPLE_I32_ARRAY, NULL, 0),
	 true, "empty i32_array, both NULL"},
	{TV_RAW(SAMPLE_STRING, NULL, 0), TV_RAW(SAMPLE_STRING, "x", 1), false,
	 "empty string and \"x\""},

	/* Arrays: element counts, and every byte of every element. */
	{TV_RAW(SAMPLE_F64_ARRAY, a12, 2),
	 TV_RAW(SAMPLE_F64_ARRAY, a12_copy, 2), true,
	 "f64_array {1.0, 2.0} in two places"},
	{TV_RAW(SAMPLE_F64_ARRAY, a12, 2), TV_RAW(SAMPLE_F64_ARRAY, a12, 1),
	 false, "f64_array of 2 and its first element alone"},
	{TV_RAW(SAMPLE_F64_ARRAY, a12, 1), TV_RAW(SAMPLE_F64_ARRAY, NULL, 0),
	 false, "f64_array of 1 and an empty one"},
	{TV_RAW(SAMPLE_F64_ARRAY, a12, 2), TV_RAW(SAMPLE_F64_ARRAY, a13, 2),
	 false, "f64_array {1.0, 2.0} and {1.0, 3.0}"},
	{TV_RAW(SAMPLE_F32_ARRAY, a12, 3), TV_RAW(SAMPLE_F32_ARRAY, a13, 3),
	 false, "f32_arrays of 3 that differ in the 3rd element only"},
	{TV_RAW(SAMPLE_F32_ARRAY, a12, 2), TV_RAW(SAMPLE_F32_ARRAY, a13, 2),
	 true, "f32_arrays of 2 over the bytes both share"},
};

static void
test_equal(void)
{
	for (size_t i = 0; i < sizeof(equal_cases) / sizeof(equal_cases[0]);
	     i++) {
		struct sample_value a = val_row(&equal_cases[i].a);
		struct sample_value b = val_row(&equal_cases[i].b);
		bool want = equal_cases[i].want;

		ok(xmbp_sample_equal(&a, &b) == want &&
			   xmbp_sample_equal(&b, &a) == want,
		   "%s: %s", equal_cases[i].name, want ? "equal" : "different");
	}
}

int
main(void)
{
	test_names();
	test_valid();
	test_sizes();
	test_payload_size();
	test_equal();
	return tap_done();
}
