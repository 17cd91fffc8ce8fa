/* SPDX-License-Identifier: MIT */
/*
 * jsonform.c - the JSON form of samples, batches and chunks.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/base64.h"
#include "codec/be.h"
#include "codec/jsonform.h"
#include "codec/jsonin.h"

/* Bits of the NaN that prints as plain "NaN" (what C's NAN is here). */
#define F32_QNAN 0x7FC00000U
#define F64_QNAN 0x7FF8000000000000ULL
/* "-0" would read back as the integer 0: keep it a float literal. */
#define NEG_ZERO "-0.0"
/* Largest batch `xmbp encode` builds: the encoder buffer doubles up to it. */
#define ENCODE_MAX (1U << 30)

void
jsonform_string(struct buf *out, const uint8_t *p, size_t n)
{
	size_t run = 0;

	buf_putc(out, '"');
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		buf_append(out, p + run, i - run);
		run = i + 1;
		switch (c) {
		case '"':
			buf_puts(out, "\\\"");
			break;
		case '\\':
			buf_puts(out, "\\\\");
			break;
		case '\n':
			buf_puts(out, "\\n");
			break;
		case '\r':
			buf_puts(out, "\\r");
			break;
		case '\t':
			buf_puts(out, "\\t");
			break;
		case '\b':
			buf_puts(out, "\\b");
			break;
		case '\f':
			buf_puts(out, "\\f");
			break;
		default:
			buf_printf(out, "\\u%04x", c);
			break;
		}
	}
	buf_append(out, p + run, n - run);
	buf_putc(out, '"');
}

static void
put_f32(struct buf *out, float f)
{
	char s[32];
	uint32_t bits;

	memcpy(&bits, &f, sizeof(bits));
	if (isnan(f)) {
		if (bits == F32_QNAN)
			buf_puts(out, "\"NaN\"");
		else
			buf_printf(out, "\"NaN:0x%08x\"", (unsigned int)bits);
		return;
	}
	if (isinf(f)) {
		buf_puts(out, f > 0 ? "\"Infinity\"" : "\"-Infinity\"");
		return;
	}
	if (f == 0 && signbit(f)) {
		buf_puts(out, NEG_ZERO);
		return;
	}
	/* The shortest %g that reads back to the same bits. */
	for (int prec = 6; prec <= 9; prec++) {
		float back;

		snprintf(s, sizeof(s), "%.*g", prec, (double)f);
		back = strtof(s, NULL);
		if (memcmp(&back, &f, sizeof(f)) == 0)
			break;
	}
	buf_puts(out, s);
}

static void
put_f64(struct buf *out, double d)
{
	char s[40];
	uint64_t bits;

	memcpy(&bits, &d, sizeof(bits));
	if (isnan(d)) {
		if (bits == F64_QNAN)
			buf_puts(out, "\"NaN\"");
		else
			buf_printf(out, "\"NaN:0x%016llx\"",
				   (unsigned long long)bits);
		return;
	}
	if (isinf(d)) {
		buf_puts(out, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
		return;
	}
	if (d == 0 && signbit(d)) {
		buf_puts(out, NEG_ZERO);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		double back;

		snprintf(s, sizeof(s), "%.*g", prec, d);
		back = strtod(s, NULL);
		if (memcmp(&back, &d, sizeof(d)) == 0)
			break;
	}
	buf_puts(out, s);
}

void
jsonform_value(struct buf *out, const struct sample_value *v)
{
	switch (v->type) {
	case SAMPLE_F64:
		put_f64(out, v->u.f64);
		break;
	case SAMPLE_F32:
		put_f32(out, v->u.f32);
		break;
	case SAMPLE_I64:
		buf_printf(out, "%lld", (long long)v->u.i64);
		break;
	case SAMPLE_I32:
		buf_printf(out, "%ld", (long)v->u.i32);
		break;
	case SAMPLE_I16:
		buf_printf(out, "%d", (int)v->u.i16);
		break;
	case SAMPLE_I8:
		buf_printf(out, "%d", (int)v->u.i8);
		break;
	case SAMPLE_BOOL:
		buf_puts(out, v->u.b ? "true" : "false");
		break;
	case SAMPLE_STRING:
	case SAMPLE_JSON:
		jsonform_string(out, v->u.raw.p, v->u.raw.len);
		break;
	case SAMPLE_BYTES:
		buf_putc(out, '"');
		base64_encode(out, v->u.raw.p, v->u.raw.len);
		buf_putc(out, '"');
		break;
	default:
		buf_putc(out, '[');
		/* f32 elements are read as floats: a trip through double
		 * would quiet signalling NaNs. */
		for (size_t i = 0; i < v->u.raw.len; i++) {
			if (i > 0)
				buf_putc(out, ',');
			if (v->type == SAMPLE_F64_ARRAY)
				put_f64(out, bef64_get(v->u.raw.p + 8 * i));
			else if (v->type == SAMPLE_F32_ARRAY)
				put_f32(out, bef32_get(v->u.raw.p + 4 * i));
			else
				buf_printf(out, "%ld",
					   (long)(int32_t)be32_get(v->u.raw.p +
								   4 * i));
		}
		buf_putc(out, ']');
		break;
	}
}

void
jsonform_sample(struct buf *out, uint64_t ts, const struct sample_value *v)
{
	buf_printf(out, "[%llu,", (unsigned long long)ts);
	jsonform_value(out, v);
	buf_putc(out, ']');
}

void
jsonform_batch(struct buf *out, const struct xmbp_batch *b)
{
	buf_printf(out, "{\"version\":%u,\"flags\":%u,\"batch_seq\":%u,",
		   b->version, b->flags, b->batch_seq);
	if (b->has_device_id)
		buf_printf(out, "\"device_id\":%lu,",
			   (unsigned long)b->device_id);
	else
		buf_puts(out, "\"device_id\":null,");
	buf_puts(out, "\"streams\":[");
	for (uint16_t i = 0; i < b->stream_count; i++) {
		struct xmbp_stream s;
		struct xmbp_sample_iter it;
		struct sample_value v;
		uint64_t ts;
		bool first = true;

		xmbp_stream_at(b, i, &s);
		buf_printf(out,
			   "%s{\"stream_id\":%u,\"value_type\":\"%s\","
			   "\"samples\":[",
			   i > 0 ? "," : "", s.stream_id,
			   xmbp_sample_type_name(s.type));
		xmbp_samples(&s, &it);
		while (xmbp_sample_next(&it, &ts, &v)) {
			if (!first)
				buf_putc(out, ',');
			first = false;
			jsonform_sample(out, ts, &v);
		}
		buf_puts(out, "]}");
	}
	buf_puts(out, "]}\n");
}

void
jsonform_chunk(struct buf *out, const struct xmch_chunk *c)
{
	struct xmch_iter it;
	struct sample_value v;
	uint64_t ts;
	bool first = true;

	buf_printf(out,
		   "{\"version\":%u,\"value_type\":\"%s\",\"sample_count\":%lu,"
		   "\"start_ts_us\":%llu,\"end_ts_us\":%llu,"
		   "\"compressed\":%s,\"stored_bytes\":%zu,\"samples\":[",
		   XMCH_VERSION, xmbp_sample_type_name(c->type),
		   (unsigned long)c->sample_count,
		   (unsigned long long)c->start_ts,
		   (unsigned long long)c->end_ts,
		   c->compressed ? "true" : "false", c->stored_len);
	xmch_iter_init(c, &it);
	while (xmch_next(&it, &ts, &v)) {
		if (!first)
			buf_putc(out, ',');
		first = false;
		jsonform_sample(out, ts, &v);
	}
	buf_puts(out, "]}\n");
}

/* Reading. */

static bool
fail(struct jsonform_error *err, const char *kind, const char *fmt, ...)
{
	va_list ap;

	err->kind = kind;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return false;
}

/* False when obj has a key not in keys (NULL-terminated). */
static bool
known_keys(json_object *obj, const char *const *keys, const char *where,
	   struct jsonform_error *err)
{
	json_object_object_foreach(obj, key, val)
	{
		const char *const *k;

		(void)val;
		for (k = keys; *k != NULL && strcmp(*k, key) != 0; k++)
			continue;
		if (*k == NULL)
			return fail(err, "InvalidInput",
				    "%s: unknown key \"%s\"", where, key);
	}
	return true;
}

/* NaN and the infinities in their string forms; bits of the value. */
static bool
special_float(const char *s, bool single, uint64_t *bits)
{
	const char *hex;
	char *end;
	size_t digits = single ? 8 : 16;
	uint64_t exp = single ? 0x7F800000ULL : 0x7FF0000000000000ULL;
	uint64_t sign = single ? 0x80000000ULL : 0x8000000000000000ULL;

	if (strcmp(s, "NaN") == 0)
		*bits = single ? F32_QNAN : F64_QNAN;
	else if (strcmp(s, "Infinity") == 0)
		*bits = exp;
	else if (strcmp(s, "-Infinity") == 0)
		*bits = exp | sign;
	else if (strncmp(s, "NaN:0x", 6) == 0 &&
		 strlen(hex = s + 6) == digits &&
		 strspn(hex, "0123456789abcdefABCDEF") == digits) {
		*bits = strtoull(hex, &end, 16);
		/* Exponent all ones and a non-zero mantissa: a NaN. */
		return (*bits & exp) == exp && (*bits & ~(exp | sign)) != 0;
	} else
		return false;
	return true;
}

/* String o as a C string, or "" when it holds a NUL (the JSON form's
 * strings may, as sample values; names and special floats never do, and
 * must not be read short). */
static const char *
cstr(json_object *o)
{
	const char *s = json_object_get_string(o);

	return strlen(s) == (size_t)json_object_get_string_len(o) ? s : "";
}

/* A float value (number or special string) as a double or a float. */
static bool
read_float(json_object *o, bool single, double *d, float *f)
{
	const char *s;
	char *end;
	uint64_t bits, u;
	int64_t i;

	if (json_object_is_type(o, json_type_string)) {
		uint32_t b32;

		if (!special_float(cstr(o), single, &bits))
			return false;
		b32 = (uint32_t)bits;
		if (single)
			memcpy(f, &b32, sizeof(*f));
		else
			memcpy(d, &bits, sizeof(*d));
		return true;
	}
	if (json_object_is_type(o, json_type_int)) {
		if (jsonin_i64(o, &i)) {
			*d = (double)i;
			*f = (float)i;
		} else if (jsonin_u64(o, &u)) {
			*d = (double)u;
			*f = (float)u;
		} else
			return false;
		return true;
	}
	if (!json_object_is_type(o, json_type_double))
		return false;
	/* json-c keeps the literal: convert it once, to the target width. */
	s = json_object_get_string(o);
	errno = 0;
	if (single) {
		*f = strtof(s, &end);
		if (errno == ERANGE && isinf(*f))
			return false;
	} else {
		*d = strtod(s, &end);
		if (errno == ERANGE && isinf(*d))
			return false;
	}
	return *end == '\0';
}

/* Size limits of the container a value goes into. */
struct limits {
	size_t var;   /* string and bytes payload */
	size_t array; /* array elements */
};
static const struct limits batch_limits = {XMBP_MAX_VAR, XMBP_MAX_ARRAY};
/* The chunk writer enforces the chunk's own limit, XMCH_MAX_BYTES. */
static const struct limits chunk_limits = {UINT32_MAX, UINT32_MAX};

/* One value of type t; variable payloads go to scratch (reset first). */
static bool
read_value(json_object *o, enum sample_type t, const struct limits *lim,
	   struct buf *scratch, struct sample_value *v, const char *where,
	   struct jsonform_error *err)
{
	static const int64_t range[][2] = {
		[SAMPLE_I32] = {INT32_MIN, INT32_MAX},
		[SAMPLE_I16] = {INT16_MIN, INT16_MAX},
		[SAMPLE_I8] = {INT8_MIN, INT8_MAX},
	};
	size_t n;
	int64_t i;
	double d;
	float f;

	v->type = t;
	scratch->len = 0;
	switch (t) {
	case SAMPLE_F64:
	case SAMPLE_F32:
		if (!read_float(o, t == SAMPLE_F32, &d, &f))
			return fail(err, "InvalidInput", "%s: not a %s number",
				    where, xmbp_sample_type_name(t));
		if (t == SAMPLE_F64)
			v->u.f64 = d;
		else
			v->u.f32 = f;
		return true;
	case SAMPLE_I64:
		if (!jsonin_i64(o, &v->u.i64))
			return fail(err, "InvalidInput",
				    "%s: not a 64-bit signed integer", where);
		return true;
	case SAMPLE_I32:
	case SAMPLE_I16:
	case SAMPLE_I8:
		if (!jsonin_range(o, range[t][0], range[t][1], &i))
			return fail(err, "InvalidInput",
				    "%s: not an integer in the %s range", where,
				    xmbp_sample_type_name(t));
		if (t == SAMPLE_I32)
			v->u.i32 = (int32_t)i;
		else if (t == SAMPLE_I16)
			v->u.i16 = (int16_t)i;
		else
			v->u.i8 = (int8_t)i;
		return true;
	case SAMPLE_BOOL:
		if (!json_object_is_type(o, json_type_boolean))
			return fail(err, "InvalidInput",
				    "%s: not true or false", where);
		v->u.b = json_object_get_boolean(o);
		return true;
	case SAMPLE_STRING:
	case SAMPLE_JSON:
	case SAMPLE_BYTES:
		if (!json_object_is_type(o, json_type_string))
			return fail(err, "InvalidInput", "%s: not a string",
				    where);
		n = (size_t)json_object_get_string_len(o);
		if (t != SAMPLE_BYTES)
			buf_append(scratch, json_object_get_string(o), n);
		else if (!base64_decode(scratch, json_object_get_string(o), n))
			return fail(err, "InvalidInput",
				    "%s: not padded base64", where);
		if (t != SAMPLE_JSON && scratch->len > lim->var)
			return fail(err, "BufferOverflow",
				    "%s: %zu bytes, at most %zu", where,
				    scratch->len, lim->var);
		v->u.raw.p = scratch->p;
		v->u.raw.len = scratch->len;
		return true;
	default:
		if (!json_object_is_type(o, json_type_array))
			return fail(err, "InvalidInput", "%s: not an array",
				    where);
		n = json_object_array_length(o);
		if (n > lim->array)
			return fail(err, "BufferOverflow",
				    "%s: %zu elements, at most %zu", where, n,
				    lim->array);
		for (size_t k = 0; k < n; k++) {
			json_object *e = json_object_array_get_idx(o, k);

			if (t == SAMPLE_I32_ARRAY) {
				if (!jsonin_range(e, INT32_MIN, INT32_MAX, &i))
					return fail(err, "InvalidInput",
						    "%s[%zu]: not an i32",
						    where, k);
				buf_put_be32(scratch, (uint32_t)i);
			} else if (!read_float(e, t == SAMPLE_F32_ARRAY, &d,
					       &f))
				return fail(err, "InvalidInput",
					    "%s[%zu]: not a number", where, k);
			else if (t == SAMPLE_F32_ARRAY) {
				uint32_t b;

				memcpy(&b, &f, sizeof(b));
				buf_put_be32(scratch, b);
			} else {
				uint64_t b;

				memcpy(&b, &d, sizeof(b));
				buf_put_be64(scratch, b);
			}
		}
		v->u.raw.p = scratch->p;
		v->u.raw.len = n;
		return true;
	}
}

/* One [ts, value] pair. */
static bool
read_sample(json_object *pair, enum sample_type t, const struct limits *lim,
	    struct buf *scratch, uint64_t *ts, struct sample_value *v,
	    const char *where, struct jsonform_error *err)
{
	if (!json_object_is_type(pair, json_type_array) ||
	    json_object_array_length(pair) != 2)
		return fail(err, "InvalidInput",
			    "%s: a sample is [timestamp_us, value]", where);
	if (!jsonin_u64(json_object_array_get_idx(pair, 0), ts))
		return fail(err, "InvalidInput",
			    "%s: timestamp is not an integer in 0..2^64-1",
			    where);
	if (!read_value(json_object_array_get_idx(pair, 1), t, lim, scratch, v,
			where, err))
		return false;
	if (scratch->failed)
		return fail(err, "OutOfMemory", "%s: out of memory", where);
	return true;
}

/* The value type named by key "value_type" of obj. */
static bool
read_type(json_object *obj, enum sample_type *t, const char *where,
	  struct jsonform_error *err)
{
	json_object *o;

	if (!json_object_object_get_ex(obj, "value_type", &o) ||
	    !json_object_is_type(o, json_type_string) ||
	    !xmbp_sample_type_from_name(cstr(o), t))
		return fail(err, "InvalidValueType",
			    "%s: value_type is missing or not a type name",
			    where);
	return true;
}

/* An array under key, at most max long. */
static json_object *
read_array(json_object *obj, const char *key, size_t max, const char *where,
	   struct jsonform_error *err)
{
	json_object *o;

	if (!json_object_object_get_ex(obj, key, &o) ||
	    !json_object_is_type(o, json_type_array)) {
		fail(err, "InvalidInput", "%s: \"%s\" must be an array", where,
		     key);
		return NULL;
	}
	if (json_object_array_length(o) > max) {
		fail(err, "BufferOverflow", "%s: %zu %s, at most %zu", where,
		     json_object_array_length(o), key, max);
		return NULL;
	}
	return o;
}

/* Header fields of a batch object. */
struct batch_head {
	uint16_t seq;
	bool has_dev;
	uint32_t dev;
	json_object *streams;
};

static bool
read_batch_head(json_object *root, struct batch_head *h,
		struct jsonform_error *err)
{
	static const char *const keys[] = {"version",	"flags",   "batch_seq",
					   "device_id", "streams", NULL};
	json_object *o;
	int64_t v, flags = -1;

	if (!json_object_is_type(root, json_type_object))
		return fail(err, "InvalidInput", "a batch is a JSON object");
	if (!known_keys(root, keys, "batch", err))
		return false;
	if (json_object_object_get_ex(root, "version", &o) &&
	    (!jsonin_range(o, 0, 255, &v) || v != XMBP_VERSION))
		return fail(err, "UnsupportedVersion", "version must be 1");
	if (!json_object_object_get_ex(root, "batch_seq", &o) ||
	    !jsonin_range(o, 0, UINT16_MAX, &v))
		return fail(err, "InvalidInput",
			    "batch_seq must be an integer in 0..65535");
	h->seq = (uint16_t)v;
	h->has_dev =
		json_object_object_get_ex(root, "device_id", &o) && o != NULL;
	if (h->has_dev) {
		if (!jsonin_range(o, 0, UINT32_MAX, &v))
			return fail(err, "InvalidInput",
				    "device_id must be null or an integer in "
				    "0..4294967295");
		h->dev = (uint32_t)v;
	}
	if (json_object_object_get_ex(root, "flags", &o) &&
	    !jsonin_range(o, 0, 255, &flags))
		return fail(err, "InvalidInput",
			    "flags must be an integer in 0..255");
	if (flags >= 0 && (flags & XMBP_FLAG_ZSTD))
		return fail(err, "UnsupportedVersion",
			    "flag bit 1 (zstd) is not supported in version 1");
	if (flags >= 0 &&
	    ((flags & XMBP_FLAG_HAS_DEVICE_ID) != 0) != h->has_dev)
		return fail(err, "InvalidInput",
			    "flags bit 0 disagrees with device_id");
	h->streams =
		read_array(root, "streams", XMBP_MAX_STREAMS, "batch", err);
	return h->streams != NULL;
}

/* Encodes the batch into the cap bytes at p; OVERFLOW asks for more room. */
static enum xmbp_enc_state
encode_into(const struct batch_head *h, uint8_t *p, size_t cap, size_t *len,
	    struct buf *scratch, struct jsonform_error *err)
{
	struct xmbp_enc enc;
	char where[64];
	enum xmbp_enc_state st;

	xmbp_enc_init(&enc, p, cap);
	xmbp_enc_begin(&enc, h->seq, h->has_dev ? &h->dev : NULL);
	for (size_t i = 0; i < json_object_array_length(h->streams); i++) {
		static const char *const keys[] = {"stream_id", "value_type",
						   "samples", NULL};
		json_object *s = json_object_array_get_idx(h->streams, i), *o;
		json_object *samples;
		enum sample_type t;
		int64_t id;

		snprintf(where, sizeof(where), "streams[%zu]", i);
		if (!json_object_is_type(s, json_type_object)) {
			fail(err, "InvalidInput", "%s: not an object", where);
			return XMBP_ENC_INVALID;
		}
		if (!known_keys(s, keys, where, err) ||
		    !read_type(s, &t, where, err) ||
		    (samples = read_array(s, "samples", XMBP_MAX_SAMPLES, where,
					  err)) == NULL)
			return XMBP_ENC_INVALID;
		if (!json_object_object_get_ex(s, "stream_id", &o) ||
		    !jsonin_range(o, 0, UINT16_MAX, &id)) {
			fail(err, "InvalidInput",
			     "%s: stream_id must be an integer in 0..65535",
			     where);
			return XMBP_ENC_INVALID;
		}
		xmbp_enc_stream(&enc, (uint16_t)id, t);
		for (size_t k = 0; k < json_object_array_length(samples); k++) {
			struct sample_value v;
			uint64_t ts;

			snprintf(where, sizeof(where),
				 "streams[%zu].samples[%zu]", i, k);
			if (!read_sample(json_object_array_get_idx(samples, k),
					 t, &batch_limits, scratch, &ts, &v,
					 where, err))
				return XMBP_ENC_INVALID;
			xmbp_enc_value(&enc, ts, &v);
		}
	}
	if ((st = xmbp_enc_finish(&enc, len)) == XMBP_ENC_INVALID)
		fail(err, "InvalidInput", "%s", xmbp_enc_detail(&enc));
	return st;
}

bool
jsonform_encode_batch(const char *text, size_t len, struct buf *out,
		      struct jsonform_error *err)
{
	json_object *root;
	struct batch_head h;
	struct buf scratch;
	enum xmbp_enc_state st = XMBP_ENC_INVALID;
	size_t cap = 64 * 1024, n = 0;
	bool ok = false;

	buf_init(&scratch, 0);
	if ((root = jsonin_parse_nul(text, len, err->msg, sizeof(err->msg))) ==
	    NULL) {
		err->kind = "InvalidInput";
		if (err->msg[0] == '\0')
			fail(err, "InvalidInput", "a batch is a JSON object");
		goto out;
	}
	if (!read_batch_head(root, &h, err))
		goto out;
	for (;;) {
		if (!buf_reserve(out, cap)) {
			fail(err, "OutOfMemory", "out of memory");
			goto out;
		}
		st = encode_into(&h, out->p + out->len, cap, &n, &scratch, err);
		if (st != XMBP_ENC_OVERFLOW)
			break;
		if (cap >= ENCODE_MAX) {
			fail(err, "BufferOverflow",
			     "batch larger than %u bytes", ENCODE_MAX);
			goto out;
		}
		cap *= 2;
	}
	if (st == XMBP_ENC_OK) {
		out->len += n;
		ok = true;
	}
out:
	buf_free(&scratch);
	json_object_put(root);
	return ok;
}

/* Header fields that a chunk's JSON may repeat; they must agree. */
static bool
check_chunk_field(json_object *root, const char *key, uint64_t actual,
		  struct jsonform_error *err)
{
	json_object *o;
	uint64_t v;

	if (!json_object_object_get_ex(root, key, &o))
		return true;
	if (!jsonin_u64(o, &v) || v != actual)
		return fail(err, "InvalidHeader",
			    "%s does not match the samples", key);
	return true;
}

bool
jsonform_pack_chunk(const char *text, size_t len, struct buf *out,
		    struct jsonform_error *err)
{
	static const char *const keys[] = {
		"version",	"value_type", "sample_count",
		"start_ts_us",	"end_ts_us",  "compressed",
		"stored_bytes", "samples",    NULL};
	json_object *root, *samples, *o;
	struct xmch_writer w;
	struct xmch_error xe;
	struct buf scratch;
	enum sample_type t = SAMPLE_F64;
	bool ok = false, compress = false;
	char where[48];
	int64_t version;

	buf_init(&scratch, 0);
	xmch_writer_init(&w, t);
	if ((root = jsonin_parse_nul(text, len, err->msg, sizeof(err->msg))) ==
	    NULL) {
		err->kind = "InvalidInput";
		if (err->msg[0] == '\0')
			fail(err, "InvalidInput", "a chunk is a JSON object");
		goto out;
	}
	if (!json_object_is_type(root, json_type_object)) {
		fail(err, "InvalidInput", "a chunk is a JSON object");
		goto out;
	}
	if (!known_keys(root, keys, "chunk", err) ||
	    !read_type(root, &t, "chunk", err) ||
	    (samples = read_array(root, "samples", UINT32_MAX, "chunk", err)) ==
		    NULL)
		goto out;
	if (json_object_object_get_ex(root, "version", &o) &&
	    (!jsonin_range(o, 0, 255, &version) || version != XMCH_VERSION)) {
		fail(err, "UnsupportedVersion", "version must be 1");
		goto out;
	}
	if (json_object_object_get_ex(root, "compressed", &o)) {
		if (!json_object_is_type(o, json_type_boolean)) {
			fail(err, "InvalidInput",
			     "compressed must be true or false");
			goto out;
		}
		compress = json_object_get_boolean(o);
	}
	xmch_writer_init(&w, t);
	for (size_t k = 0; k < json_object_array_length(samples); k++) {
		struct sample_value v;
		uint64_t ts;

		snprintf(where, sizeof(where), "samples[%zu]", k);
		if (!read_sample(json_object_array_get_idx(samples, k), t,
				 &chunk_limits, &scratch, &ts, &v, where, err))
			goto out;
		if (xmch_writer_add(&w, ts, &v, &xe) != XMCH_OK) {
			fail(err, xmch_status_name(xe.status), "%s: %s", where,
			     xe.msg);
			goto out;
		}
	}
	if (!check_chunk_field(root, "sample_count", w.count, err) ||
	    !check_chunk_field(root, "start_ts_us", w.count ? w.first_ts : 0,
			       err) ||
	    !check_chunk_field(root, "end_ts_us", w.count ? w.last_ts : 0, err))
		goto out;
	if (xmch_writer_finish(&w, compress, out, &xe) != XMCH_OK) {
		fail(err, xmch_status_name(xe.status), "%s", xe.msg);
		goto out;
	}
	ok = true;
out:
	xmch_writer_free(&w);
	buf_free(&scratch);
	json_object_put(root);
	return ok;
}

/* Appends the n bytes at p as a quoted CSV field. */
static void
csv_quoted(struct buf *out, const uint8_t *p, size_t n)
{
	size_t run = 0;

	buf_putc(out, '"');
	for (size_t i = 0; i < n; i++)
		if (p[i] == '"') {
			buf_append(out, p + run, i + 1 - run);
			run = i;
		}
	buf_append(out, p + run, n - run);
	buf_putc(out, '"');
}

void
jsonform_csv_value(struct buf *out, const struct sample_value *v)
{
	struct buf tmp;
	size_t start = out->len;

	switch (v->type) {
	case SAMPLE_STRING:
	case SAMPLE_JSON:
		csv_quoted(out, v->u.raw.p, v->u.raw.len);
		return;
	case SAMPLE_F64_ARRAY:
	case SAMPLE_F32_ARRAY:
	case SAMPLE_I32_ARRAY:
		buf_init(&tmp, 0);
		jsonform_value(&tmp, v);
		if (tmp.failed)
			out->failed = true;
		else
			csv_quoted(out, tmp.p, tmp.len);
		buf_free(&tmp);
		return;
	default:
		/* Numbers, booleans, base64: no comma, quote or newline;
		 * only the JSON string quotes (NaN, bytes) go. */
		jsonform_value(out, v);
		if (!out->failed && out->len >= start + 2 &&
		    out->p[start] == '"') {
			memmove(out->p + start, out->p + start + 1,
				out->len - start - 2);
			out->len -= 2;
		}
		return;
	}
}
