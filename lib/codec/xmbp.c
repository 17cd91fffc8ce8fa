/*
 * xmbp.c - the XMBP batch codec (doc/xmbp.md "The batch format").
 *
 * One scanner serves both xmbp_decode() (the whole buffer must be one
 * batch) and xmbp_frame() (the buffer is a prefix of a byte stream).
 * Fixed-width blocks are checked by size alone, so validating them costs
 * the same for 1 or 65535 samples; only variable-width samples are
 * walked, and strings and json are checked for UTF-8 once, here.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "codec/be.h"
#include "codec/utf8.h"
#include "codec/xmbp.h"

static const uint8_t magic[4] = {'X', 'M', 'B', 'P'};

const char *
xmbp_status_name(enum xmbp_status status)
{
	switch (status) {
	case XMBP_OK:
		return "ok";
	case XMBP_NEED_MORE:
		return "NeedMore";
	case XMBP_E_BUFFER_OVERFLOW:
		return "BufferOverflow";
	case XMBP_E_INVALID_MAGIC:
		return "InvalidMagic";
	case XMBP_E_UNSUPPORTED_VERSION:
		return "UnsupportedVersion";
	case XMBP_E_INVALID_VALUE_TYPE:
		return "InvalidValueType";
	case XMBP_E_UNEXPECTED_EOF:
		return "UnexpectedEof";
	case XMBP_E_INVALID_UTF8:
		return "InvalidUtf8";
	case XMBP_E_TRAILING_DATA:
		return "TrailingData";
	}
	return "unknown";
}

static enum xmbp_status
fail(struct xmbp_error *err, enum xmbp_status status, size_t offset,
     const char *fmt, ...)
{
	va_list ap;

	if (err != NULL) {
		err->status = status;
		err->offset = offset;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return status;
}

struct scan {
	const uint8_t *buf;
	size_t len, pos;
	bool prefix; /* running out of bytes means "need more" */
	struct xmbp_error *err;
};

/* XMBP_OK when n more bytes are there; else need-more or UnexpectedEof. */
static enum xmbp_status
need(struct scan *s, size_t n, const char *what)
{
	if (s->len - s->pos >= n)
		return XMBP_OK;
	if (s->prefix)
		return XMBP_NEED_MORE;
	return fail(s->err, XMBP_E_UNEXPECTED_EOF, s->len,
		    "input ends inside %s (%zu more bytes needed)", what,
		    n - (s->len - s->pos));
}

/* Walks the samples of a variable-width block. */
static enum xmbp_status
scan_var_samples(struct scan *s, enum sample_type type, uint16_t count)
{
	size_t elem = sample_elem_size(type);
	size_t plen = type == SAMPLE_JSON ? 4 : 2;
	enum xmbp_status st;

	for (uint32_t i = 0; i < count; i++) {
		size_t n, start;

		if ((st = need(s, 8 + plen, "a sample header")) != XMBP_OK)
			return st;
		start = s->pos + 8 + plen;
		n = plen == 4 ? be32_get(s->buf + s->pos + 8)
			      : be16_get(s->buf + s->pos + 8);
		if (elem != 0) {
			if (n > XMBP_MAX_ARRAY)
				return fail(s->err, XMBP_E_BUFFER_OVERFLOW,
					    s->pos + 8,
					    "array of %zu elements, at most %d",
					    n, XMBP_MAX_ARRAY);
			n *= elem;
		}
		s->pos = start;
		if ((st = need(s, n, "a sample value")) != XMBP_OK)
			return st;
		if ((type == SAMPLE_STRING || type == SAMPLE_JSON) &&
		    !utf8_valid(s->buf + start, n))
			return fail(s->err, XMBP_E_INVALID_UTF8, start,
				    "%s value is not valid UTF-8",
				    sample_type_name(type));
		s->pos += n;
	}
	return XMBP_OK;
}

static enum xmbp_status
scan(struct scan *s, struct xmbp_batch *b)
{
	enum xmbp_status st;
	size_t avail = s->len < 4 ? s->len : 4;

	if (memcmp(s->buf, magic, avail) != 0)
		return fail(s->err, XMBP_E_INVALID_MAGIC, 0,
			    "first bytes are not XMBP");
	if ((st = need(s, XMBP_HEADER_MIN, "the batch header")) != XMBP_OK)
		return st;
	b->buf = s->buf;
	b->version = s->buf[4];
	b->flags = s->buf[5];
	if (b->version != XMBP_VERSION)
		return fail(s->err, XMBP_E_UNSUPPORTED_VERSION, 4,
			    "version %u, only 1 is supported", b->version);
	if (b->flags & XMBP_FLAG_ZSTD)
		return fail(s->err, XMBP_E_UNSUPPORTED_VERSION, 5,
			    "flag bit 1 (zstd) is not supported in version 1");
	b->batch_seq = be16_get(s->buf + 6);
	b->has_device_id = (b->flags & XMBP_FLAG_HAS_DEVICE_ID) != 0;
	b->device_id = 0;
	s->pos = 8;
	if (b->has_device_id) {
		if ((st = need(s, 6, "the batch header")) != XMBP_OK)
			return st;
		b->device_id = be32_get(s->buf + 8);
		s->pos = 12;
	}
	b->stream_count = be16_get(s->buf + s->pos);
	if (b->stream_count > XMBP_MAX_STREAMS)
		return fail(s->err, XMBP_E_BUFFER_OVERFLOW, s->pos,
			    "%u stream blocks, at most %d", b->stream_count,
			    XMBP_MAX_STREAMS);
	s->pos += 2;

	for (unsigned int i = 0; i < b->stream_count; i++) {
		uint8_t tag;
		uint16_t count;
		size_t fixed;

		b->block_off[i] = s->pos;
		if ((st = need(s, XMBP_BLOCK_HEADER,
			       "a stream block header")) != XMBP_OK)
			return st;
		tag = s->buf[s->pos + 2];
		count = be16_get(s->buf + s->pos + 3);
		if (!sample_type_valid(tag))
			return fail(s->err, XMBP_E_INVALID_VALUE_TYPE,
				    s->pos + 2, "value type 0x%02X in block %u",
				    tag, i);
		s->pos += XMBP_BLOCK_HEADER;
		if ((fixed = sample_fixed_size(tag)) != 0) {
			size_t n = (size_t)count * (8 + fixed);

			if ((st = need(s, n, "a stream block")) != XMBP_OK)
				return st;
			s->pos += n;
		} else if ((st = scan_var_samples(s, tag, count)) != XMBP_OK)
			return st;
	}
	b->len = s->pos;
	return XMBP_OK;
}

enum xmbp_status
xmbp_decode(const uint8_t *buf, size_t len, struct xmbp_batch *batch,
	    struct xmbp_error *err)
{
	struct scan s = {buf, len, 0, false, err};
	enum xmbp_status st;

	if ((st = scan(&s, batch)) != XMBP_OK)
		return st;
	if (s.pos != len)
		return fail(err, XMBP_E_TRAILING_DATA, s.pos,
			    "%zu bytes after the last stream block",
			    len - s.pos);
	return XMBP_OK;
}

enum xmbp_status
xmbp_frame(const uint8_t *buf, size_t len, size_t *batch_len,
	   struct xmbp_error *err)
{
	struct scan s = {buf, len, 0, true, err};
	struct xmbp_batch b;
	enum xmbp_status st;

	if ((st = scan(&s, &b)) == XMBP_OK)
		*batch_len = b.len;
	return st;
}

void
xmbp_stream_at(const struct xmbp_batch *batch, uint16_t i,
	       struct xmbp_stream *stream)
{
	const uint8_t *p = batch->buf + batch->block_off[i];
	size_t end = i + 1 < batch->stream_count ? batch->block_off[i + 1]
						 : batch->len;

	stream->stream_id = be16_get(p);
	stream->type = (enum sample_type)p[2];
	stream->sample_count = be16_get(p + 3);
	stream->data = p + XMBP_BLOCK_HEADER;
	stream->data_len = end - batch->block_off[i] - XMBP_BLOCK_HEADER;
}

void
xmbp_samples(const struct xmbp_stream *stream, struct xmbp_sample_iter *it)
{
	it->p = stream->data;
	it->end = stream->data + stream->data_len;
	it->type = stream->type;
}

bool
xmbp_sample_next(struct xmbp_sample_iter *it, uint64_t *ts,
		 struct sample_value *v)
{
	const uint8_t *p = it->p;
	size_t n;

	if (p == it->end)
		return false;
	*ts = be64_get(p);
	p += 8;
	v->type = it->type;
	switch (it->type) {
	case SAMPLE_F64:
		v->u.f64 = bef64_get(p);
		p += 8;
		break;
	case SAMPLE_F32:
		v->u.f32 = bef32_get(p);
		p += 4;
		break;
	case SAMPLE_I64:
		v->u.i64 = (int64_t)be64_get(p);
		p += 8;
		break;
	case SAMPLE_I32:
		v->u.i32 = (int32_t)be32_get(p);
		p += 4;
		break;
	case SAMPLE_I16:
		v->u.i16 = (int16_t)be16_get(p);
		p += 2;
		break;
	case SAMPLE_I8:
		v->u.i8 = (int8_t)*p++;
		break;
	case SAMPLE_BOOL:
		v->u.b = *p++ != 0;
		break;
	case SAMPLE_JSON:
		v->u.raw.len = be32_get(p);
		v->u.raw.p = p + 4;
		p += 4 + v->u.raw.len;
		break;
	default: /* string, bytes and arrays: u16 prefix */
		n = be16_get(p);
		v->u.raw.len = n;
		v->u.raw.p = p + 2;
		if (sample_elem_size(it->type) != 0)
			n *= sample_elem_size(it->type);
		p += 2 + n;
		break;
	}
	it->p = p;
	return true;
}

/* Encoder. */

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
	memcpy(p, magic, 4);
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
	if (!sample_type_valid(type)) {
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
	if (sample_elem_size(type) != 0 && count > XMBP_MAX_ARRAY) {
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

	if (enc->state == XMBP_ENC_OK && !utf8_valid((const uint8_t *)s, len)) {
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
		elem = sample_elem_size(v->type);
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
