/* SPDX-License-Identifier: MIT */
/*
 * sample.c - value type table.
 */
#include "config.h"

#include <string.h>

#include "codec/sample.h"

static const struct {
	const char *name;
	size_t fixed; /* value bytes, 0 when variable */
	size_t elem;  /* array element bytes */
} types[SAMPLE__MAX] = {
	[SAMPLE_F64] = {"f64", 8, 0},
	[SAMPLE_F32] = {"f32", 4, 0},
	[SAMPLE_I64] = {"i64", 8, 0},
	[SAMPLE_I32] = {"i32", 4, 0},
	[SAMPLE_BOOL] = {"bool", 1, 0},
	[SAMPLE_STRING] = {"string", 0, 0},
	[SAMPLE_BYTES] = {"bytes", 0, 0},
	[SAMPLE_F64_ARRAY] = {"f64_array", 0, 8},
	[SAMPLE_F32_ARRAY] = {"f32_array", 0, 4},
	[SAMPLE_I32_ARRAY] = {"i32_array", 0, 4},
	[SAMPLE_JSON] = {"json", 0, 0},
	[SAMPLE_I16] = {"i16", 2, 0},
	[SAMPLE_I8] = {"i8", 1, 0},
};

bool
xmbp_sample_type_valid(unsigned int tag)
{
	return tag < SAMPLE__MAX;
}

const char *
xmbp_sample_type_name(enum sample_type type)
{
	return xmbp_sample_type_valid(type) ? types[type].name : NULL;
}

bool
xmbp_sample_type_from_name(const char *name, enum sample_type *type)
{
	for (unsigned int i = 0; i < SAMPLE__MAX; i++)
		if (strcmp(types[i].name, name) == 0) {
			*type = (enum sample_type)i;
			return true;
		}
	return false;
}

size_t
xmbp_sample_fixed_size(enum sample_type type)
{
	return xmbp_sample_type_valid(type) ? types[type].fixed : 0;
}

size_t
xmbp_sample_elem_size(enum sample_type type)
{
	return xmbp_sample_type_valid(type) ? types[type].elem : 0;
}

size_t
xmbp_sample_payload_size(const struct sample_value *v)
{
	size_t elem;

	if (!xmbp_sample_type_valid(v->type) || types[v->type].fixed != 0)
		return 0;
	elem = types[v->type].elem;
	return elem != 0 ? v->u.raw.len * elem : v->u.raw.len;
}

bool
xmbp_sample_equal(const struct sample_value *a, const struct sample_value *b)
{
	size_t n;

	if (a->type != b->type)
		return false;
	switch (a->type) {
	case SAMPLE_F64:
		/* Bits, not ==: NaN payloads and the sign of zero count. */
		return memcmp(&a->u.f64, &b->u.f64, sizeof(a->u.f64)) == 0;
	case SAMPLE_F32:
		return memcmp(&a->u.f32, &b->u.f32, sizeof(a->u.f32)) == 0;
	case SAMPLE_I64:
		return a->u.i64 == b->u.i64;
	case SAMPLE_I32:
		return a->u.i32 == b->u.i32;
	case SAMPLE_I16:
		return a->u.i16 == b->u.i16;
	case SAMPLE_I8:
		return a->u.i8 == b->u.i8;
	case SAMPLE_BOOL:
		return a->u.b == b->u.b;
	case SAMPLE_STRING:
	case SAMPLE_BYTES:
	case SAMPLE_JSON:
	case SAMPLE_F64_ARRAY:
	case SAMPLE_F32_ARRAY:
	case SAMPLE_I32_ARRAY:
		if (a->u.raw.len != b->u.raw.len)
			return false;
		n = xmbp_sample_payload_size(a);
		/* No memcmp on a NULL pointer, even for 0 bytes. */
		return n == 0 || memcmp(a->u.raw.p, b->u.raw.p, n) == 0;
	default:
		return false;
	}
}
