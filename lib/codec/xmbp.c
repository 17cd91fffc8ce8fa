/* SPDX-License-Identifier: MIT */
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
	size_t elem = xmbp_sample_elem_size(type);
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
		    !xmbp_utf8_valid(s->buf + start, n))
			return fail(s->err, XMBP_E_INVALID_UTF8, start,
				    "%s value is not valid UTF-8",
				    xmbp_sample_type_name(type));
		s->pos += n;
	}
	return XMBP_OK;
}

static enum xmbp_status
scan(struct scan *s, struct xmbp_batch *b)
{
	enum xmbp_status st;
	size_t avail = s->len < 4 ? s->len : 4;

	if (memcmp(s->buf, XMBP_MAGIC, avail) != 0)
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
		if (!xmbp_sample_type_valid(tag))
			return fail(s->err, XMBP_E_INVALID_VALUE_TYPE,
				    s->pos + 2, "value type 0x%02X in block %u",
				    tag, i);
		s->pos += XMBP_BLOCK_HEADER;
		if ((fixed = xmbp_sample_fixed_size(tag)) != 0) {
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
		if (xmbp_sample_elem_size(it->type) != 0)
			n *= xmbp_sample_elem_size(it->type);
		p += 2 + n;
		break;
	}
	it->p = p;
	return true;
}
