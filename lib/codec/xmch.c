/* SPDX-License-Identifier: MIT */
/*
 * xmch.c - XMCH stored chunks.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "codec/be.h"
#include "codec/utf8.h"
#include "codec/xmch.h"

static const uint8_t magic[4] = {'X', 'M', 'C', 'H'};
static const uint8_t zstd_magic[4] = {0x28, 0xB5, 0x2F, 0xFD};

/* zstd level for stored chunks: fast, and most of the gain on samples. */
#define XMCH_ZSTD_LEVEL 3
/*
 * Compression pays when it saves an eighth or more of a chunk that is not
 * tiny: below that, reading it back costs more than the bytes it saves.
 */
#define XMCH_COMPRESS_MIN 128
/* A window above the content limit is never needed to read a chunk. */
#define XMCH_ZSTD_WINDOW_LOG 26

const char *
xmch_status_name(enum xmch_status status)
{
	switch (status) {
	case XMCH_OK:
		return "ok";
	case XMCH_E_INVALID_MAGIC:
		return "InvalidMagic";
	case XMCH_E_UNSUPPORTED_VERSION:
		return "UnsupportedVersion";
	case XMCH_E_INVALID_VALUE_TYPE:
		return "InvalidValueType";
	case XMCH_E_UNEXPECTED_EOF:
		return "UnexpectedEof";
	case XMCH_E_INVALID_UTF8:
		return "InvalidUtf8";
	case XMCH_E_TRAILING_DATA:
		return "TrailingData";
	case XMCH_E_INVALID_HEADER:
		return "InvalidHeader";
	case XMCH_E_UNORDERED:
		return "UnorderedTimestamps";
	case XMCH_E_TOO_LARGE:
		return "TooLarge";
	case XMCH_E_CORRUPT:
		return "CorruptCompression";
	case XMCH_E_INVALID_VALUE:
		return "InvalidValue";
	case XMCH_E_NOMEM:
		return "OutOfMemory";
	}
	return "unknown";
}

static enum xmch_status
fail(struct xmch_error *err, enum xmch_status status, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL) {
		err->status = status;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return status;
}

/* Size in *len of the value at p, with avail bytes left in the column. */
static enum xmch_status
value_len(enum sample_type type, const uint8_t *p, size_t avail, size_t *len,
	  struct xmch_error *err)
{
	size_t fixed = xmbp_sample_fixed_size(type), elem, n;

	if (fixed != 0) {
		if (avail < fixed)
			return fail(err, XMCH_E_UNEXPECTED_EOF,
				    "value column ends inside a value");
		*len = fixed;
		return XMCH_OK;
	}
	if (avail < 4)
		return fail(err, XMCH_E_UNEXPECTED_EOF,
			    "value column ends inside a length prefix");
	n = be32_get(p);
	if ((elem = xmbp_sample_elem_size(type)) != 0)
		n *= elem;
	if (avail - 4 < n)
		return fail(err, XMCH_E_UNEXPECTED_EOF,
			    "value column ends inside a value");
	if ((type == SAMPLE_STRING || type == SAMPLE_JSON) &&
	    !xmbp_utf8_valid(p + 4, n))
		return fail(err, XMCH_E_INVALID_UTF8,
			    "%s value is not valid UTF-8",
			    xmbp_sample_type_name(type));
	*len = 4 + n;
	return XMCH_OK;
}

/* Validates a plain chunk of exactly len bytes. */
static enum xmch_status
parse(const uint8_t *buf, size_t len, struct xmch_chunk *c,
      struct xmch_error *err)
{
	size_t avail = len < 4 ? len : 4, data_bytes, vlen = 0, off;
	uint8_t tag;
	enum xmch_status st;

	if (memcmp(buf, magic, avail) != 0)
		return fail(err, XMCH_E_INVALID_MAGIC,
			    "first bytes are not XMCH");
	if (len < XMCH_HEADER_SIZE)
		return fail(err, XMCH_E_UNEXPECTED_EOF,
			    "%zu bytes, the header alone is 32", len);
	if (buf[4] != XMCH_VERSION)
		return fail(err, XMCH_E_UNSUPPORTED_VERSION,
			    "version %u, only 1 is supported", buf[4]);
	tag = buf[5];
	if (!xmbp_sample_type_valid(tag))
		return fail(err, XMCH_E_INVALID_VALUE_TYPE, "value type 0x%02X",
			    tag);
	if (be16_get(buf + 6) != 0)
		return fail(err, XMCH_E_INVALID_HEADER,
			    "reserved header bytes are not zero");
	c->type = (enum sample_type)tag;
	c->sample_count = be32_get(buf + 8);
	c->start_ts = be64_get(buf + 12);
	c->end_ts = be64_get(buf + 20);
	data_bytes = be32_get(buf + 28);
	if (len - XMCH_HEADER_SIZE < data_bytes)
		return fail(err, XMCH_E_UNEXPECTED_EOF,
			    "data section of %zu bytes announced, %zu present",
			    data_bytes, len - XMCH_HEADER_SIZE);
	if (len - XMCH_HEADER_SIZE > data_bytes)
		return fail(err, XMCH_E_TRAILING_DATA,
			    "%zu bytes after the data section",
			    len - XMCH_HEADER_SIZE - data_bytes);
	if (data_bytes / 8 < c->sample_count)
		return fail(err, XMCH_E_UNEXPECTED_EOF,
			    "data section too short for %u timestamps",
			    c->sample_count);
	c->ts_col = buf + XMCH_HEADER_SIZE;
	c->val_col = c->ts_col + (size_t)c->sample_count * 8;
	c->val_len = data_bytes - (size_t)c->sample_count * 8;

	if (c->sample_count == 0) {
		if (c->start_ts != 0 || c->end_ts != 0)
			return fail(err, XMCH_E_INVALID_HEADER,
				    "empty chunk with non-zero timestamps");
	} else if (be64_get(c->ts_col) != c->start_ts ||
		   be64_get(c->ts_col + ((size_t)c->sample_count - 1) * 8) !=
			   c->end_ts)
		return fail(
			err, XMCH_E_INVALID_HEADER,
			"start_ts_us or end_ts_us differs from the samples");
	for (uint32_t i = 1; i < c->sample_count; i++)
		if (be64_get(c->ts_col + (size_t)i * 8) <
		    be64_get(c->ts_col + ((size_t)i - 1) * 8))
			return fail(err, XMCH_E_UNORDERED,
				    "timestamp of sample %u is below the one "
				    "before it",
				    i);

	if (xmbp_sample_fixed_size(c->type) != 0) {
		size_t want = (size_t)c->sample_count *
			      xmbp_sample_fixed_size(c->type);

		if (c->val_len < want)
			return fail(err, XMCH_E_UNEXPECTED_EOF,
				    "value column too short for %u values",
				    c->sample_count);
		if (c->val_len > want)
			return fail(err, XMCH_E_TRAILING_DATA,
				    "%zu bytes after the last value",
				    c->val_len - want);
		return XMCH_OK;
	}
	off = 0;
	for (uint32_t i = 0; i < c->sample_count; i++) {
		st = value_len(c->type, c->val_col + off, c->val_len - off,
			       &vlen, err);
		if (st != XMCH_OK)
			return st;
		off += vlen;
	}
	if (off != c->val_len)
		return fail(err, XMCH_E_TRAILING_DATA,
			    "%zu bytes after the last value", c->val_len - off);
	return XMCH_OK;
}

/* Decompresses one zstd frame into *out, growing it up to the limit. */
static enum xmch_status
inflate(const uint8_t *buf, size_t len, uint8_t **out, size_t *outlen,
	struct xmch_error *err)
{
	ZSTD_DStream *ds;
	ZSTD_inBuffer in = {buf, len, 0};
	ZSTD_outBuffer ob = {NULL, 0, 0};
	enum xmch_status st = XMCH_OK;
	size_t ret, cap = 64 * 1024;
	uint8_t *p;

	if ((ds = ZSTD_createDStream()) == NULL)
		return fail(err, XMCH_E_NOMEM, "out of memory");
	if (ZSTD_isError(ZSTD_DCtx_setParameter(ds, ZSTD_d_windowLogMax,
						XMCH_ZSTD_WINDOW_LOG))) {
		st = fail(err, XMCH_E_NOMEM, "zstd refused its settings");
		goto out;
	}
	for (;;) {
		if (ob.pos == ob.size) {
			if (ob.size == XMCH_MAX_BYTES) {
				st = fail(err, XMCH_E_TOO_LARGE,
					  "decompressed chunk exceeds %u bytes",
					  XMCH_MAX_BYTES);
				goto out;
			}
			cap = ob.size == 0 ? cap : ob.size * 2;
			if (cap > XMCH_MAX_BYTES)
				cap = XMCH_MAX_BYTES;
			if ((p = realloc(ob.dst, cap)) == NULL) {
				st = fail(err, XMCH_E_NOMEM, "out of memory");
				goto out;
			}
			ob.dst = p;
			ob.size = cap;
		}
		ret = ZSTD_decompressStream(ds, &ob, &in);
		if (ZSTD_isError(ret)) {
			st = fail(err, XMCH_E_CORRUPT, "zstd: %s",
				  ZSTD_getErrorName(ret));
			goto out;
		}
		if (ret == 0)
			break;
		if (in.pos == in.size && ob.pos < ob.size) {
			st = fail(err, XMCH_E_UNEXPECTED_EOF,
				  "compressed chunk is truncated");
			goto out;
		}
	}
	if (in.pos != in.size) {
		st = fail(err, XMCH_E_TRAILING_DATA,
			  "%zu bytes after the compressed chunk",
			  in.size - in.pos);
		goto out;
	}
	*out = ob.dst;
	*outlen = ob.pos;
	ob.dst = NULL;
out:
	free(ob.dst);
	ZSTD_freeDStream(ds);
	return st;
}

enum xmch_status
xmch_open(const uint8_t *buf, size_t len, struct xmch_chunk *chunk,
	  struct xmch_error *err)
{
	enum xmch_status st;
	uint8_t *plain = NULL;
	size_t plain_len = 0;

	memset(chunk, 0, sizeof(*chunk));
	chunk->stored_len = len;
	if (len >= 4 && memcmp(buf, zstd_magic, 4) == 0) {
		if ((st = inflate(buf, len, &plain, &plain_len, err)) !=
		    XMCH_OK)
			return st;
		if ((st = parse(plain, plain_len, chunk, err)) != XMCH_OK) {
			free(plain);
			return st;
		}
		chunk->compressed = true;
		chunk->owned = plain;
		return XMCH_OK;
	}
	if (len > XMCH_MAX_BYTES)
		return fail(err, XMCH_E_TOO_LARGE, "chunk exceeds %u bytes",
			    XMCH_MAX_BYTES);
	return parse(buf, len, chunk, err);
}

void
xmch_close(struct xmch_chunk *chunk)
{
	free(chunk->owned);
	chunk->owned = NULL;
}

void
xmch_iter_init(const struct xmch_chunk *chunk, struct xmch_iter *it)
{
	it->chunk = chunk;
	it->i = 0;
	it->v = chunk->val_col;
}

bool
xmch_next(struct xmch_iter *it, uint64_t *ts, struct sample_value *v)
{
	const struct xmch_chunk *c = it->chunk;
	const uint8_t *p = it->v;
	size_t n;

	if (it->i == c->sample_count)
		return false;
	*ts = be64_get(c->ts_col + (size_t)it->i * 8);
	it->i++;
	v->type = c->type;
	switch (c->type) {
	case SAMPLE_F64:
		v->u.f64 = bef64_get(p);
		break;
	case SAMPLE_F32:
		v->u.f32 = bef32_get(p);
		break;
	case SAMPLE_I64:
		v->u.i64 = (int64_t)be64_get(p);
		break;
	case SAMPLE_I32:
		v->u.i32 = (int32_t)be32_get(p);
		break;
	case SAMPLE_I16:
		v->u.i16 = (int16_t)be16_get(p);
		break;
	case SAMPLE_I8:
		v->u.i8 = (int8_t)*p;
		break;
	case SAMPLE_BOOL:
		v->u.b = *p != 0;
		break;
	default:
		v->u.raw.len = be32_get(p);
		v->u.raw.p = p + 4;
		n = v->u.raw.len;
		if (xmbp_sample_elem_size(c->type) != 0)
			n *= xmbp_sample_elem_size(c->type);
		it->v = p + 4 + n;
		return true;
	}
	it->v = p + xmbp_sample_fixed_size(c->type);
	return true;
}

void
xmch_writer_init(struct xmch_writer *w, enum sample_type type)
{
	memset(w, 0, sizeof(*w));
	w->type = type;
	buf_init(&w->ts, 0);
	buf_init(&w->val, 0);
}

void
xmch_writer_free(struct xmch_writer *w)
{
	buf_free(&w->ts);
	buf_free(&w->val);
	xmch_writer_init(w, w->type);
}

/* Encodes a value for the value column into x; returns its size. */
static size_t
fixed_value(const struct sample_value *v, uint8_t x[8])
{
	switch (v->type) {
	case SAMPLE_F64:
		bef64_put(x, v->u.f64);
		return 8;
	case SAMPLE_F32:
		bef32_put(x, v->u.f32);
		return 4;
	case SAMPLE_I64:
		be64_put(x, (uint64_t)v->u.i64);
		return 8;
	case SAMPLE_I32:
		be32_put(x, (uint32_t)v->u.i32);
		return 4;
	case SAMPLE_I16:
		be16_put(x, (uint16_t)v->u.i16);
		return 2;
	case SAMPLE_I8:
		x[0] = (uint8_t)v->u.i8;
		return 1;
	default:
		x[0] = v->u.b ? 1 : 0;
		return 1;
	}
}

enum xmch_status
xmch_writer_add(struct xmch_writer *w, uint64_t ts,
		const struct sample_value *v, struct xmch_error *err)
{
	uint8_t x[8];
	size_t n, payload = 0, elem;

	if (!xmbp_sample_type_valid(v->type) || v->type != w->type)
		return fail(err, XMCH_E_INVALID_VALUE,
			    "a value of type 0x%02X in a chunk of type 0x%02X",
			    (unsigned int)v->type, (unsigned int)w->type);
	if (w->count > 0 && ts < w->last_ts)
		return fail(err, XMCH_E_UNORDERED,
			    "timestamp %llu is below the previous %llu",
			    (unsigned long long)ts,
			    (unsigned long long)w->last_ts);
	if ((n = xmbp_sample_fixed_size(v->type)) == 0) {
		if (v->u.raw.len > UINT32_MAX)
			return fail(err, XMCH_E_TOO_LARGE, "value too long");
		elem = xmbp_sample_elem_size(v->type);
		payload = elem != 0 ? v->u.raw.len * elem : v->u.raw.len;
		if ((v->type == SAMPLE_STRING || v->type == SAMPLE_JSON) &&
		    !xmbp_utf8_valid(v->u.raw.p, payload))
			return fail(err, XMCH_E_INVALID_UTF8,
				    "%s value is not valid UTF-8",
				    xmbp_sample_type_name(v->type));
		n = 4 + payload;
	}
	if (n > XMCH_MAX_BYTES ||
	    XMCH_HEADER_SIZE + w->ts.len + w->val.len + 8 + n > XMCH_MAX_BYTES)
		return fail(err, XMCH_E_TOO_LARGE,
			    "the chunk would exceed %u bytes", XMCH_MAX_BYTES);
	if (!buf_reserve(&w->ts, 8) || !buf_reserve(&w->val, n))
		return fail(err, XMCH_E_NOMEM, "out of memory");
	buf_put_be64(&w->ts, ts);
	if (xmbp_sample_fixed_size(v->type) != 0)
		buf_append(&w->val, x, fixed_value(v, x));
	else {
		buf_put_be32(&w->val, (uint32_t)v->u.raw.len);
		buf_append(&w->val, v->u.raw.p, payload);
	}
	if (w->count == 0)
		w->first_ts = ts;
	w->last_ts = ts;
	w->count++;
	return XMCH_OK;
}

/*
 * One zstd frame with a content checksum, so that a damaged stored chunk
 * is an error rather than other samples; its size, or 0 on failure.
 */
static size_t
compress_frame(uint8_t *dst, size_t cap, const uint8_t *src, size_t len)
{
	ZSTD_CCtx *cc;
	size_t n;

	if ((cc = ZSTD_createCCtx()) == NULL)
		return 0;
	n = ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel,
				   XMCH_ZSTD_LEVEL);
	if (!ZSTD_isError(n))
		n = ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
	if (!ZSTD_isError(n))
		n = ZSTD_compress2(cc, dst, cap, src, len);
	ZSTD_freeCCtx(cc);
	return ZSTD_isError(n) ? 0 : n;
}

enum xmch_status
xmch_writer_add_packed(struct xmch_writer *w, const uint8_t *p, uint32_t n,
		       struct xmch_error *err)
{
	size_t width = xmbp_sample_fixed_size(w->type), step = 8 + width;
	uint64_t last = w->last_ts, ts;

	if (width == 0 || w->type == SAMPLE_BOOL)
		return fail(err, XMCH_E_INVALID_VALUE,
			    "type 0x%02X is not packed", (unsigned int)w->type);
	if (n == 0)
		return XMCH_OK;
	if ((uint64_t)n * step >
	    XMCH_MAX_BYTES - XMCH_HEADER_SIZE - w->ts.len - w->val.len)
		return fail(err, XMCH_E_TOO_LARGE,
			    "the chunk would exceed %u bytes", XMCH_MAX_BYTES);
	for (uint32_t i = 0; i < n; i++) {
		ts = be64_get(p + i * step);
		if ((w->count > 0 || i > 0) && ts < last)
			return fail(err, XMCH_E_UNORDERED,
				    "timestamp %llu is below the previous %llu",
				    (unsigned long long)ts,
				    (unsigned long long)last);
		last = ts;
	}
	if (!buf_reserve(&w->ts, (size_t)n * 8) ||
	    !buf_reserve(&w->val, (size_t)n * width))
		return fail(err, XMCH_E_NOMEM, "out of memory");
	/* Both columns are big-endian, as the block is. */
	for (uint32_t i = 0; i < n; i++) {
		memcpy(w->ts.p + w->ts.len, p + i * step, 8);
		memcpy(w->val.p + w->val.len, p + i * step + 8, width);
		w->ts.len += 8;
		w->val.len += width;
	}
	if (w->count == 0)
		w->first_ts = be64_get(p);
	w->last_ts = last;
	w->count += n;
	return XMCH_OK;
}

size_t
xmch_writer_size(const struct xmch_writer *w)
{
	return XMCH_HEADER_SIZE + w->ts.len + w->val.len;
}

enum xmch_status
xmch_writer_finish(struct xmch_writer *w, bool compress, struct buf *out,
		   struct xmch_error *err)
{
	uint8_t h[XMCH_HEADER_SIZE];
	size_t plain_len = XMCH_HEADER_SIZE + w->ts.len + w->val.len;
	size_t start = out->len, bound, clen;
	struct buf plain;
	enum xmch_status st = XMCH_OK;

	memcpy(h, magic, 4);
	h[4] = XMCH_VERSION;
	h[5] = (uint8_t)w->type;
	be16_put(h + 6, 0);
	be32_put(h + 8, w->count);
	be64_put(h + 12, w->count ? w->first_ts : 0);
	be64_put(h + 20, w->count ? w->last_ts : 0);
	be32_put(h + 28, (uint32_t)(w->ts.len + w->val.len));

	buf_init(&plain, 0);
	buf_append(&plain, h, sizeof(h));
	buf_append(&plain, w->ts.p, w->ts.len);
	buf_append(&plain, w->val.p, w->val.len);
	if (plain.failed) {
		st = fail(err, XMCH_E_NOMEM, "out of memory");
		goto out;
	}
	if (compress && plain_len >= XMCH_COMPRESS_MIN) {
		bound = ZSTD_compressBound(plain_len);
		if (!buf_reserve(out, bound)) {
			st = fail(err, XMCH_E_NOMEM, "out of memory");
			goto out;
		}
		clen = compress_frame(out->p + start, bound, plain.p,
				      plain_len);
		if (clen != 0 && clen <= plain_len - plain_len / 8) {
			out->len = start + clen;
			goto out;
		}
	}
	buf_append(out, plain.p, plain_len);
	if (out->failed)
		st = fail(err, XMCH_E_NOMEM, "out of memory");
out:
	buf_free(&plain);
	return st;
}
