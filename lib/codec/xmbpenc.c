/* SPDX-License-Identifier: MIT */
/*
 * xmbpenc.c - the XMBP batch encoder (doc/xmbp.md "The batch format").
 *
 * Freestanding (codec/xmbpenc.h): C99, no allocation, only memcpy and
 * memset from libc, and no "config.h", so that a firmware build can
 * compile this file, utf8.c and their headers as they are
 * (doc/device.md).  Hence no calls into sample.c either: the few facts
 * about value types it needs are below.
 */
#include <string.h>

#include "codec/be.h"
#include "codec/utf8.h"
#include "codec/xmbpenc.h"

/* Element bytes of an array type; 0 for the other types. */
static size_t
elem_size(enum sample_type type)
{
	switch (type) {
	case SAMPLE_F64_ARRAY:
		return 8;
	case SAMPLE_F32_ARRAY:
	case SAMPLE_I32_ARRAY:
		return 4;
	default:
		return 0;
	}
}

static void
enc_fail(struct xmbp_enc *enc, enum xmbp_enc_state state, const char *detail)
{
	enc->state = state;
	enc->detail = detail;
}

void
xmbp_enc_init(struct xmbp_enc *enc, uint8_t *buf, size_t cap)
{
	memset(enc, 0, sizeof(*enc));
	enc->buf = buf;
	enc->cap = cap;
	enc->detail = "";
}

/* Room for n more bytes, or NULL (and overflow) when they do not fit. */
static uint8_t *
enc_room(struct xmbp_enc *enc, size_t n)
{
	uint8_t *p;

	if (enc->cap - enc->len < n) {
		enc_fail(enc, XMBP_ENC_OVERFLOW,
			 "the batch does not fit the buffer");
		return NULL;
	}
	p = enc->buf + enc->len;
	enc->len += n;
	return p;
}

void
xmbp_enc_begin(struct xmbp_enc *enc, uint16_t batch_seq,
	       const uint32_t *device_id)
{
	uint8_t *p;
	size_t n = XMBP_HEADER_MIN + (device_id != NULL ? 4 : 0);

	if (enc->state != XMBP_ENC_OK)
		return;
	if (enc->count_off != 0) {
		enc_fail(enc, XMBP_ENC_INVALID, "the batch was already begun");
		return;
	}
	if ((p = enc_room(enc, n)) == NULL)
		return;
	memcpy(p, XMBP_MAGIC, 4);
	p[4] = XMBP_VERSION;
	p[5] = device_id != NULL ? XMBP_FLAG_HAS_DEVICE_ID : 0;
	be16_put(p + 6, batch_seq);
	if (device_id != NULL)
		be32_put(p + 8, *device_id);
	enc->count_off = enc->len - 2;
	be16_put(enc->buf + enc->count_off, 0);
}

void
xmbp_enc_end_stream(struct xmbp_enc *enc)
{
	if (enc->state != XMBP_ENC_OK || enc->block_off == 0)
		return;
	be16_put(enc->buf + enc->block_off + 3, (uint16_t)enc->nsamples);
	enc->block_off = 0;
}

void
xmbp_enc_stream(struct xmbp_enc *enc, uint16_t stream_id, enum sample_type type)
{
	uint8_t *p;

	if (enc->state != XMBP_ENC_OK)
		return;
	if (enc->count_off == 0) {
		enc_fail(enc, XMBP_ENC_INVALID,
			 "stream block before the batch began");
		return;
	}
	if ((unsigned int)type >= SAMPLE__MAX) {
		enc_fail(enc, XMBP_ENC_INVALID, "invalid value type");
		return;
	}
	if (enc->nstreams == XMBP_MAX_STREAMS) {
		enc_fail(enc, XMBP_ENC_INVALID, "more than 256 stream blocks");
		return;
	}
	xmbp_enc_end_stream(enc);
	if ((p = enc_room(enc, XMBP_BLOCK_HEADER)) == NULL)
		return;
	be16_put(p, stream_id);
	p[2] = (uint8_t)type;
	be16_put(p + 3, 0);
	enc->block_off = (size_t)(p - enc->buf);
	enc->type = type;
	enc->nsamples = 0;
	enc->nstreams++;
}

/*
 * Room for one sample of `type` with n bytes after its timestamp, the
 * timestamp already written; NULL when the sample is refused.
 */
static uint8_t *
enc_sample(struct xmbp_enc *enc, enum sample_type type, uint64_t ts, size_t n)
{
	uint8_t *p;

	if (enc->state != XMBP_ENC_OK)
		return NULL;
	if (enc->block_off == 0) {
		enc_fail(enc, XMBP_ENC_INVALID,
			 "sample outside a stream block");
		return NULL;
	}
	if (type != enc->type) {
		enc_fail(enc, XMBP_ENC_INVALID,
			 "sample type differs from the block's value type");
		return NULL;
	}
	if (enc->nsamples == XMBP_MAX_SAMPLES) {
		enc_fail(enc, XMBP_ENC_INVALID,
			 "more than 65535 samples in a block");
		return NULL;
	}
	if ((p = enc_room(enc, 8 + n)) == NULL)
		return NULL;
	enc->nsamples++;
	be64_put(p, ts);
	return p + 8;
}

void
xmbp_enc_f64(struct xmbp_enc *enc, uint64_t ts, double v)
{
	uint8_t *p = enc_sample(enc, SAMPLE_F64, ts, 8);

	if (p != NULL)
		bef64_put(p, v);
}

void
xmbp_enc_f32(struct xmbp_enc *enc, uint64_t ts, float v)
{
	uint8_t *p = enc_sample(enc, SAMPLE_F32, ts, 4);

	if (p != NULL)
		bef32_put(p, v);
}

void
xmbp_enc_i64(struct xmbp_enc *enc, uint64_t ts, int64_t v)
{
	uint8_t *p = enc_sample(enc, SAMPLE_I64, ts, 8);

	if (p != NULL)
		be64_put(p, (uint64_t)v);
}

void
xmbp_enc_i32(struct xmbp_enc *enc, uint64_t ts, int32_t v)
{
	uint8_t *p = enc_sample(enc, SAMPLE_I32, ts, 4);

	if (p != NULL)
		be32_put(p, (uint32_t)v);
}

void
xmbp_enc_i16(struct xmbp_enc *enc, uint64_t ts, int16_t v)
{
	uint8_t *p = enc_sample(enc, SAMPLE_I16, ts, 2);

	if (p != NULL)
		be16_put(p, (uint16_t)v);
}

void
xmbp_enc_i8(struct xmbp_enc *enc, uint64_t ts, int8_t v)
{
	uint8_t *p = enc_sample(enc, SAMPLE_I8, ts, 1);

	if (p != NULL)
		*p = (uint8_t)v;
}

void
xmbp_enc_bool(struct xmbp_enc *enc, uint64_t ts, bool v)
{
	uint8_t *p = enc_sample(enc, SAMPLE_BOOL, ts, 1);

	if (p != NULL)
		*p = v ? 1 : 0;
}

/*
 * A variable-width sample: length prefix (u16, or u32 for json) of
 * count, then len payload bytes.  Limits are checked before anything is
 * written; a refused count makes len (which may have wrapped) unused.
 */
static uint8_t *
enc_var(struct xmbp_enc *enc, enum sample_type type, uint64_t ts, size_t count,
	size_t len)
{
	uint8_t *p;
	bool wide = type == SAMPLE_JSON;

	if (enc->state != XMBP_ENC_OK)
		return NULL;
	if (elem_size(type) != 0 && count > XMBP_MAX_ARRAY) {
		enc_fail(enc, XMBP_ENC_INVALID,
			 "array of more than 4096 elements");
		return NULL;
	}
	if (wide ? count > UINT32_MAX : count > XMBP_MAX_VAR) {
		enc_fail(enc, XMBP_ENC_INVALID,
			 "value longer than its length prefix allows");
		return NULL;
	}
	if ((p = enc_sample(enc, type, ts, (wide ? 4 : 2) + len)) == NULL)
		return NULL;
	if (wide) {
		be32_put(p, (uint32_t)count);
		return p + 4;
	}
	be16_put(p, (uint16_t)count);
	return p + 2;
}

static void
enc_text(struct xmbp_enc *enc, enum sample_type type, uint64_t ts,
	 const char *s, size_t len)
{
	uint8_t *p;

	if (enc->state == XMBP_ENC_OK &&
	    !xmbp_utf8_valid((const uint8_t *)s, len)) {
		enc_fail(enc, XMBP_ENC_INVALID, "text is not valid UTF-8");
		return;
	}
	if ((p = enc_var(enc, type, ts, len, len)) != NULL && len > 0)
		memcpy(p, s, len);
}

void
xmbp_enc_string(struct xmbp_enc *enc, uint64_t ts, const char *s, size_t len)
{
	enc_text(enc, SAMPLE_STRING, ts, s, len);
}

void
xmbp_enc_json(struct xmbp_enc *enc, uint64_t ts, const char *s, size_t len)
{
	enc_text(enc, SAMPLE_JSON, ts, s, len);
}

void
xmbp_enc_bytes(struct xmbp_enc *enc, uint64_t ts, const void *b, size_t len)
{
	uint8_t *p = enc_var(enc, SAMPLE_BYTES, ts, len, len);

	if (p != NULL && len > 0)
		memcpy(p, b, len);
}

void
xmbp_enc_f64_array(struct xmbp_enc *enc, uint64_t ts, const double *a, size_t n)
{
	uint8_t *p = enc_var(enc, SAMPLE_F64_ARRAY, ts, n, n * 8);

	for (size_t i = 0; p != NULL && i < n; i++)
		bef64_put(p + 8 * i, a[i]);
}

void
xmbp_enc_f32_array(struct xmbp_enc *enc, uint64_t ts, const float *a, size_t n)
{
	uint8_t *p = enc_var(enc, SAMPLE_F32_ARRAY, ts, n, n * 4);

	for (size_t i = 0; p != NULL && i < n; i++)
		bef32_put(p + 4 * i, a[i]);
}

void
xmbp_enc_i32_array(struct xmbp_enc *enc, uint64_t ts, const int32_t *a,
		   size_t n)
{
	uint8_t *p = enc_var(enc, SAMPLE_I32_ARRAY, ts, n, n * 4);

	for (size_t i = 0; p != NULL && i < n; i++)
		be32_put(p + 4 * i, (uint32_t)a[i]);
}

void
xmbp_enc_value(struct xmbp_enc *enc, uint64_t ts, const struct sample_value *v)
{
	uint8_t *p;
	size_t elem;

	switch (v->type) {
	case SAMPLE_F64:
		xmbp_enc_f64(enc, ts, v->u.f64);
		break;
	case SAMPLE_F32:
		xmbp_enc_f32(enc, ts, v->u.f32);
		break;
	case SAMPLE_I64:
		xmbp_enc_i64(enc, ts, v->u.i64);
		break;
	case SAMPLE_I32:
		xmbp_enc_i32(enc, ts, v->u.i32);
		break;
	case SAMPLE_I16:
		xmbp_enc_i16(enc, ts, v->u.i16);
		break;
	case SAMPLE_I8:
		xmbp_enc_i8(enc, ts, v->u.i8);
		break;
	case SAMPLE_BOOL:
		xmbp_enc_bool(enc, ts, v->u.b);
		break;
	case SAMPLE_STRING:
		xmbp_enc_string(enc, ts, (const char *)v->u.raw.p,
				v->u.raw.len);
		break;
	case SAMPLE_JSON:
		xmbp_enc_json(enc, ts, (const char *)v->u.raw.p, v->u.raw.len);
		break;
	case SAMPLE_BYTES:
		xmbp_enc_bytes(enc, ts, v->u.raw.p, v->u.raw.len);
		break;
	case SAMPLE_F64_ARRAY:
	case SAMPLE_F32_ARRAY:
	case SAMPLE_I32_ARRAY:
		/* Already big-endian: copied as they are. */
		elem = elem_size(v->type);
		p = enc_var(enc, v->type, ts, v->u.raw.len,
			    v->u.raw.len * elem);
		if (p != NULL && v->u.raw.len > 0)
			memcpy(p, v->u.raw.p, v->u.raw.len * elem);
		break;
	default:
		if (enc->state == XMBP_ENC_OK)
			enc_fail(enc, XMBP_ENC_INVALID, "invalid value type");
		break;
	}
}

enum xmbp_enc_state
xmbp_enc_finish(struct xmbp_enc *enc, size_t *len)
{
	if (enc->state == XMBP_ENC_OK && enc->count_off == 0)
		enc_fail(enc, XMBP_ENC_INVALID, "the batch was never begun");
	if (enc->state != XMBP_ENC_OK)
		return enc->state;
	xmbp_enc_end_stream(enc);
	be16_put(enc->buf + enc->count_off, (uint16_t)enc->nstreams);
	*len = enc->len;
	return XMBP_ENC_OK;
}

const char *
xmbp_enc_detail(const struct xmbp_enc *enc)
{
	return enc->detail;
}
