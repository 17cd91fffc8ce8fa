/*
 * sample.c - value type table.
 */
#include "config.h"

#include <string.h>

#include "sample.h"

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
sample_type_valid(unsigned int tag)
{
	return tag < SAMPLE__MAX;
}

const char *
sample_type_name(enum sample_type type)
{
	return sample_type_valid(type) ? types[type].name : NULL;
}

bool
sample_type_from_name(const char *name, enum sample_type *type)
{
	for (unsigned int i = 0; i < SAMPLE__MAX; i++)
		if (strcmp(types[i].name, name) == 0) {
			*type = (enum sample_type)i;
			return true;
		}
	return false;
}

size_t
sample_fixed_size(enum sample_type type)
{
	return sample_type_valid(type) ? types[type].fixed : 0;
}

size_t
sample_elem_size(enum sample_type type)
{
	return sample_type_valid(type) ? types[type].elem : 0;
}
