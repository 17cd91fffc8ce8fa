/* SPDX-License-Identifier: MIT */
/*
 * sample.h - the 13 XMBP value types and one decoded sample value.
 *
 * Shared by the batch codec (xmbp), the chunk codec (xmch) and the JSON
 * form (jsonform).  Nothing here allocates.  Part of libxmbp, whose
 * exported names all start with xmbp_ (doc/device.md): hence the
 * functions' xmbp_sample_ prefix.
 */
#ifndef XMHUB_SAMPLE_H
#define XMHUB_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Wire tags of XMBP (doc/xmbp.md "Value types"); the enum value is the
 * tag. */
enum sample_type {
	SAMPLE_F64 = 0x00,
	SAMPLE_F32 = 0x01,
	SAMPLE_I64 = 0x02,
	SAMPLE_I32 = 0x03,
	SAMPLE_BOOL = 0x04,
	SAMPLE_STRING = 0x05,
	SAMPLE_BYTES = 0x06,
	SAMPLE_F64_ARRAY = 0x07,
	SAMPLE_F32_ARRAY = 0x08,
	SAMPLE_I32_ARRAY = 0x09,
	SAMPLE_JSON = 0x0A,
	SAMPLE_I16 = 0x0B,
	SAMPLE_I8 = 0x0C,
	SAMPLE__MAX
};

/*
 * One value.  Variable-length values are not copied: `raw.p` points into
 * the buffer they were decoded from.  For string, bytes and json,
 * `raw.len` is a byte count; for the three array types it is an element
 * count and `raw.p` holds the elements big-endian, as on the wire.
 */
struct sample_value {
	enum sample_type type;
	union {
		double f64;
		float f32;
		int64_t i64;
		int32_t i32;
		int16_t i16;
		int8_t i8;
		bool b;
		struct {
			const uint8_t *p;
			size_t len;
		} raw;
	} u;
};

/* True when tag names one of the 13 types. */
bool xmbp_sample_type_valid(unsigned int tag);

/* The format's name ("f32", "i32_array", ...); NULL for an invalid type. */
const char *xmbp_sample_type_name(enum sample_type type);

/* Looks a name up; returns false (and leaves *type alone) if unknown. */
bool xmbp_sample_type_from_name(const char *name, enum sample_type *type);

/* Encoded size of a fixed-width value (f64 8 ... i8 1); 0 if variable. */
size_t xmbp_sample_fixed_size(enum sample_type type);

/* Element size of an array type (8, 4 or 4); 0 for other types. */
size_t xmbp_sample_elem_size(enum sample_type type);

/* Payload bytes of a variable value (arrays: len * elem); 0 if fixed. */
size_t xmbp_sample_payload_size(const struct sample_value *v);

/* Bit-exact equality: floats by their bits, payloads by length and bytes. */
bool xmbp_sample_equal(const struct sample_value *a,
		       const struct sample_value *b);

#endif
