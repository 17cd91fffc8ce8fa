/* SPDX-License-Identifier: MIT */
/*
 * samplecsv.c - one line of the sender's CSV input.
 */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/base64.h"
#include "codec/samplecsv.h"
#include "codec/utf8.h"

#define HEADER "stream,ts_us,value"

/* The field [p, end) as a NUL-terminated copy in tmp (n bytes); false if
 * it does not fit. */
static bool
field(const char *p, const char *end, char *tmp, size_t n)
{
	size_t len = (size_t)(end - p);

	if (len >= n)
		return false;
	memcpy(tmp, p, len);
	tmp[len] = '\0';
	return true;
}

/* An unsigned decimal of the whole field, up to max. */
static bool
parse_u64(const char *p, const char *end, uint64_t max, uint64_t *v)
{
	char tmp[32], *e;
	unsigned long long x;

	if (p == end || *p < '0' || *p > '9' ||
	    !field(p, end, tmp, sizeof(tmp)))
		return false;
	errno = 0;
	x = strtoull(tmp, &e, 10);
	if (errno != 0 || *e != '\0' || x > max)
		return false;
	*v = x;
	return true;
}

/* A signed decimal of the whole field within [min, max]. */
static bool
parse_i64(const char *p, const char *end, int64_t min, int64_t max, int64_t *v)
{
	char tmp[32], *e;
	long long x;

	if (p == end || !field(p, end, tmp, sizeof(tmp)))
		return false;
	errno = 0;
	x = strtoll(tmp, &e, 10);
	if (errno != 0 || *e != '\0' || x < min || x > max)
		return false;
	*v = x;
	return true;
}

/* A decimal or hex float, NaN, Infinity or -Infinity, the whole field. */
static bool
parse_f64(const char *p, const char *end, double *v)
{
	char tmp[64], *e;

	if (p == end || !field(p, end, tmp, sizeof(tmp)) ||
	    strchr(tmp, ' ') != NULL)
		return false;
	errno = 0;
	*v = strtod(tmp, &e);
	return *e == '\0' && !(errno == ERANGE && isinf(*v));
}

/* A float that an f32 holds: finite values must not overflow it. */
static bool
parse_f32(const char *p, const char *end, float *v)
{
	double d;

	if (!parse_f64(p, end, &d) || (isfinite(d) && fabs(d) > FLT_MAX))
		return false;
	*v = (float)d;
	return true;
}

static void
put_be(struct buf *b, uint64_t v, size_t n)
{
	uint8_t tmp[8];

	for (size_t i = 0; i < n; i++)
		tmp[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	buf_append(b, tmp, n);
}

/* `;`-separated numbers into scratch as big-endian elements; the count. */
static bool
parse_array(const char *p, const char *end, enum sample_type type,
	    struct buf *scratch, size_t *count)
{
	size_t n = 0;

	if (p == end) {
		*count = 0;
		return true;
	}
	for (;;) {
		const char *sep = memchr(p, ';', (size_t)(end - p));
		const char *fe = sep != NULL ? sep : end;
		union {
			double d;
			float f;
			uint64_t u64;
			uint32_t u32;
		} u;
		int64_t i;

		if (type == SAMPLE_F64_ARRAY) {
			if (!parse_f64(p, fe, &u.d))
				return false;
			put_be(scratch, u.u64, 8);
		} else if (type == SAMPLE_F32_ARRAY) {
			if (!parse_f32(p, fe, &u.f))
				return false;
			put_be(scratch, u.u32, 4);
		} else {
			if (!parse_i64(p, fe, INT32_MIN, INT32_MAX, &i))
				return false;
			put_be(scratch, (uint32_t)(int32_t)i, 4);
		}
		n++;
		if (sep == NULL)
			break;
		p = sep + 1;
	}
	*count = n;
	return true;
}

/* A text field: as it stands, or RFC 4180 quoted ("" for a quote). */
static bool
parse_text(const char *p, const char *end, struct buf *scratch)
{
	if (p == end || *p != '"') {
		buf_append(scratch, p, (size_t)(end - p));
		return true;
	}
	for (p++; p < end; p++) {
		if (*p == '"') {
			if (p + 1 == end)
				return true;
			if (p[1] != '"')
				return false;
			p++;
		}
		buf_putc(scratch, *p);
	}
	return false; /* no closing quote */
}

/* The value field [p, end) in type into *v (variable ones in scratch). */
static bool
parse_value(const char *p, const char *end, enum sample_type type,
	    struct buf *scratch, struct sample_value *v, const char **why)
{
	int64_t i;
	size_t count = 0;

	v->type = type;
	*why = "not a number of the stream's type";
	switch (type) {
	case SAMPLE_F64:
		return parse_f64(p, end, &v->u.f64);
	case SAMPLE_F32:
		return parse_f32(p, end, &v->u.f32);
	case SAMPLE_I64:
		return parse_i64(p, end, INT64_MIN, INT64_MAX, &v->u.i64);
	case SAMPLE_I32:
		if (!parse_i64(p, end, INT32_MIN, INT32_MAX, &i))
			return false;
		v->u.i32 = (int32_t)i;
		return true;
	case SAMPLE_I16:
		if (!parse_i64(p, end, INT16_MIN, INT16_MAX, &i))
			return false;
		v->u.i16 = (int16_t)i;
		return true;
	case SAMPLE_I8:
		if (!parse_i64(p, end, INT8_MIN, INT8_MAX, &i))
			return false;
		v->u.i8 = (int8_t)i;
		return true;
	case SAMPLE_BOOL:
		*why = "not true, false, 1 or 0";
		if ((end - p == 4 && memcmp(p, "true", 4) == 0) ||
		    (end - p == 1 && *p == '1'))
			v->u.b = true;
		else if ((end - p == 5 && memcmp(p, "false", 5) == 0) ||
			 (end - p == 1 && *p == '0'))
			v->u.b = false;
		else
			return false;
		return true;
	case SAMPLE_BYTES:
		*why = "not padded base64";
		if (!base64_decode(scratch, p, (size_t)(end - p)))
			return false;
		count = scratch->len;
		break;
	case SAMPLE_STRING:
	case SAMPLE_JSON:
		*why = "a quoted value without its closing quote";
		if (!parse_text(p, end, scratch))
			return false;
		*why = "not valid UTF-8";
		if (scratch->failed ||
		    !xmbp_utf8_valid(scratch->p, scratch->len))
			return false;
		count = scratch->len;
		break;
	case SAMPLE_F64_ARRAY:
	case SAMPLE_F32_ARRAY:
	case SAMPLE_I32_ARRAY:
		*why = "not a ;-separated list of numbers of the stream's type";
		if (!parse_array(p, end, type, scratch, &count))
			return false;
		break;
	default:
		return false;
	}
	*why = "too large";
	if (scratch->failed)
		return false;
	v->u.raw.p = scratch->p;
	v->u.raw.len = count;
	return true;
}

enum samplecsv_kind
samplecsv_parse(const char *line, size_t len, bool first,
		const struct samplecsv_stream *defs, size_t n,
		struct buf *scratch, struct samplecsv_sample *out, char *err,
		size_t errlen)
{
	const char *end = line + len, *c1, *c2, *why = NULL;
	uint64_t idx;
	size_t k;

	if (len > 0 && end[-1] == '\r')
		end--;
	if (end == line)
		return SAMPLECSV_SKIP;
	if (first && (size_t)(end - line) == strlen(HEADER) &&
	    memcmp(line, HEADER, strlen(HEADER)) == 0)
		return SAMPLECSV_SKIP;
	scratch->len = 0;
	scratch->failed = false;
	c1 = memchr(line, ',', (size_t)(end - line));
	c2 = c1 != NULL ? memchr(c1 + 1, ',', (size_t)(end - c1 - 1)) : NULL;
	if (c2 == NULL) {
		snprintf(err, errlen, "expected stream,ts_us,value");
		return SAMPLECSV_ERROR;
	}
	for (k = 0; k < n; k++) {
		if (parse_u64(line, c1, UINT16_MAX, &idx)
			    ? defs[k].index == idx
			    : defs[k].name != NULL &&
				      strlen(defs[k].name) ==
					      (size_t)(c1 - line) &&
				      memcmp(defs[k].name, line,
					     (size_t)(c1 - line)) == 0)
			break;
	}
	if (k == n) {
		snprintf(err, errlen, "stream '%.*s' is not one of the session",
			 (int)(c1 - line > 64 ? 64 : c1 - line), line);
		return SAMPLECSV_ERROR;
	}
	out->stream = k;
	if (!parse_u64(c1 + 1, c2, UINT64_MAX, &out->ts)) {
		snprintf(err, errlen, "ts_us is not an unsigned integer");
		return SAMPLECSV_ERROR;
	}
	if (!parse_value(c2 + 1, end, defs[k].type, scratch, &out->value,
			 &why)) {
		snprintf(err, errlen, "value for %s stream %u: %s",
			 xmbp_sample_type_name(defs[k].type), defs[k].index,
			 why);
		return SAMPLECSV_ERROR;
	}
	return SAMPLECSV_SAMPLE;
}

bool
samplecsv_streams(char *spec, struct samplecsv_stream *defs, size_t max,
		  size_t *n, char *err, size_t errlen)
{
	char *save = NULL, *item;

	*n = 0;
	for (item = strtok_r(spec, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		char *c1 = strchr(item, ':'), *type, *e;
		unsigned long idx;

		if (c1 == NULL || *n == max) {
			snprintf(err, errlen,
				 "'%s': expected INDEX[:NAME]:TYPE", item);
			return false;
		}
		*c1 = '\0';
		type = strrchr(c1 + 1, ':');
		errno = 0;
		idx = strtoul(item, &e, 10);
		if (*item < '0' || *item > '9' || *e != '\0' || errno != 0 ||
		    idx > UINT16_MAX) {
			snprintf(err, errlen, "'%s': not a stream index", item);
			return false;
		}
		defs[*n].index = (uint16_t)idx;
		defs[*n].name = NULL;
		if (type != NULL) {
			*type++ = '\0';
			defs[*n].name = c1 + 1;
		} else {
			type = c1 + 1;
		}
		if (!xmbp_sample_type_from_name(type, &defs[*n].type)) {
			snprintf(err, errlen, "'%s': not a value type", type);
			return false;
		}
		(*n)++;
	}
	if (*n == 0) {
		snprintf(err, errlen, "no streams");
		return false;
	}
	return true;
}
