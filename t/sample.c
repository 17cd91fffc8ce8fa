/*
 * t/sample.c - the value type table (lib/sample.h).
 *
 * The expected names, tags and sizes are written out from spec 2's
 * tables here rather than derived from the library, so a wrong entry in
 * lib/sample.c cannot agree with itself.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sample.h"
#include "tap.h"

/* Spec 2, "Value types" and "Sample layout". */
static const struct {
	unsigned int tag;
	const char *name;
	size_t fixed; /* value bytes, 0 when variable */
	size_t elem;  /* array element bytes, 0 for non-arrays */
} spec[] = {
	{0x00, "f64", 8, 0},
	{0x01, "f32", 4, 0},
	{0x02, "i64", 8, 0},
	{0x03, "i32", 4, 0},
	{0x04, "bool", 1, 0},
	{0x05, "string", 0, 0},
	{0x06, "bytes", 0, 0},
	{0x07, "f64_array", 0, 8},
	{0x08, "f32_array", 0, 4},
	{0x09, "i32_array", 0, 4},
	{0x0A, "json", 0, 0},
	{0x0B, "i16", 2, 0},
	{0x0C, "i8", 1, 0},
};
#define NSPEC (sizeof(spec) / sizeof(spec[0]))

static void
test_names(void)
{
	static const char *const unknown[] = {
		"", "F32", "f32 ", " f32", "f16", "u8", "float", "array",
		"f64_arr", "i32_array_", "JSON", "boolean", "str", "byte",
	};
	enum sample_type t;
	unsigned int bad = 0;

	for (size_t i = 0; i < NSPEC; i++) {
		const char *name = sample_type_name(spec[i].tag);

		is_str(name, spec[i].name, "sample_type_name(0x%02X) is %s",
		       spec[i].tag, spec[i].name);
		t = SAMPLE__MAX;
		ok(sample_type_from_name(spec[i].name, &t) &&
		       (unsigned int)t == spec[i].tag,
		   "sample_type_from_name(\"%s\") is 0x%02X", spec[i].name,
		   spec[i].tag);
	}
	ok(SAMPLE__MAX == NSPEC, "there are 13 types");

	/* *type must stay untouched on refusal: callers rely on defaults. */
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		t = SAMPLE_I8;
		if (sample_type_from_name(unknown[i], &t) || t != SAMPLE_I8) {
			diag("\"%s\" was accepted or *type changed", unknown[i]);
			bad++;
		}
	}
	ok(bad == 0, "unknown names are refused and leave *type alone");

	bad = 0;
	for (unsigned int tag = 0x0D; tag <= 0xFF; tag++)
		if (sample_type_name((enum sample_type)tag) != NULL)
			bad++;
	ok(bad == 0, "sample_type_name is NULL for 0x0D..0xFF");
}

static void
test_valid(void)
{
	unsigned int bad = 0;

	for (unsigned int tag = 0; tag <= 0x0C; tag++)
		if (!sample_type_valid(tag)) {
			diag("tag 0x%02X refused", tag);
			bad++;
		}
	ok(bad == 0, "sample_type_valid for 0x00..0x0C");

	bad = 0;
	for (unsigned int tag = 0x0D; tag <= 0xFF; tag++)
		if (sample_type_valid(tag)) {
			diag("tag 0x%02X accepted", tag);
			bad++;
		}
	ok(bad == 0, "sample_type_valid false for 0x0D..0xFF");
	ok(!sample_type_valid(0x100) && !sample_type_valid(0x10C) &&
	       !sample_type_valid(~0u),
	   "sample_type_valid false above a byte (no truncation to 8 bits)");
}

static void
test_sizes(void)
{
	for (size_t i = 0; i < NSPEC; i++) {
		is_int(sample_fixed_size(spec[i].tag), spec[i].fixed,
		       "sample_fixed_size(%s) is %zu", spec[i].name,
		       spec[i].fixed);
		is_int(sample_elem_size(spec[i].tag), spec[i].elem,
		       "sample_elem_size(%s) is %zu", spec[i].name,
		       spec[i].elem);
	}
	/* Spec 2: "Fixed sample sizes: f64 16, f32 12, ... bool 9 bytes." */
	is_int(8 + sample_fixed_size(SAMPLE_F64), 16, "f64 sample is 16 bytes");
	is_int(8 + sample_fixed_size(SAMPLE_BOOL), 9, "bool sample is 9 bytes");
	is_int(sample_fixed_size((enum sample_type)0x0D), 0,
	       "sample_fixed_size of an invalid type is 0");
	is_int(sample_elem_size((enum sample_type)0xFF), 0,
	       "sample_elem_size of an invalid type is 0");
}

int
main(void)
{
	test_names();
	test_valid();
	test_sizes();
	return tap_done();
}
