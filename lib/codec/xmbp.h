/* SPDX-License-Identifier: MIT */
/*
 * xmbp.h - the XMBP batch codec (doc/xmbp.md "The batch format"): the
 * decoder here, the encoder in codec/xmbpenc.h (included: one header
 * serves a program that does both).  Both are libxmbp (doc/device.md).
 *
 * Decoder: xmbp_decode() validates a whole batch once; afterwards the
 * caller walks its streams and samples with no further checks and no
 * copies (values point into the caller's buffer, which must outlive the
 * batch).  xmbp_frame() finds where a batch ends in a byte stream.
 * Unlike the encoder it needs a hosted C library (vsnprintf).
 */
#ifndef XMHUB_XMBP_H
#define XMHUB_XMBP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/sample.h"
#include "codec/xmbpenc.h"

/* Decoder results.  The names of the error kinds (doc/xmbp.md "Decoding
 * rules and error kinds") are in the comments. */
enum xmbp_status {
	XMBP_OK = 0,
	XMBP_NEED_MORE,		    /* xmbp_frame() only: prefix of a batch */
	XMBP_E_BUFFER_OVERFLOW,	    /* BufferOverflow */
	XMBP_E_INVALID_MAGIC,	    /* InvalidMagic */
	XMBP_E_UNSUPPORTED_VERSION, /* UnsupportedVersion (also zstd flag) */
	XMBP_E_INVALID_VALUE_TYPE,  /* InvalidValueType */
	XMBP_E_UNEXPECTED_EOF,	    /* UnexpectedEof */
	XMBP_E_INVALID_UTF8,	    /* InvalidUtf8 */
	XMBP_E_TRAILING_DATA /* TrailingData: bytes after the last block */
};

/* Where and why decoding stopped.  msg is always NUL-terminated. */
struct xmbp_error {
	enum xmbp_status status;
	size_t offset; /* byte offset in the input where the fault lies */
	char msg[128];
};

/* A validated batch.  Filled by xmbp_decode(); read-only afterwards. */
struct xmbp_batch {
	const uint8_t *buf;
	size_t len;
	uint8_t version;
	uint8_t flags; /* as received, reserved bits included */
	uint16_t batch_seq;
	bool has_device_id;
	uint32_t device_id;
	uint16_t stream_count;
	size_t block_off[XMBP_MAX_STREAMS]; /* offset of each stream block */
};

/* One stream block of a validated batch. */
struct xmbp_stream {
	uint16_t stream_id;
	enum sample_type type;
	uint16_t sample_count;
	const uint8_t *data; /* first sample */
	size_t data_len;     /* bytes of all samples */
};

/* Cursor over the samples of one stream block. */
struct xmbp_sample_iter {
	const uint8_t *p, *end;
	enum sample_type type;
};

/* The name of an error kind ("InvalidMagic", ...); "ok", "NeedMore". */
const char *xmbp_status_name(enum xmbp_status status);

/*
 * Validates the len bytes at buf as exactly one batch and fills *batch.
 * Returns XMBP_OK or an error kind, with details in *err (may be NULL).
 */
enum xmbp_status xmbp_decode(const uint8_t *buf, size_t len,
			     struct xmbp_batch *batch, struct xmbp_error *err);

/*
 * Looks at a prefix of a byte stream.  Returns XMBP_OK with *batch_len set
 * when a complete, valid batch starts at buf; XMBP_NEED_MORE when the
 * bytes so far are a valid beginning; otherwise the error kind (never
 * XMBP_E_TRAILING_DATA or XMBP_E_UNEXPECTED_EOF).  Stateless: call it
 * again from the start of buf when more bytes arrive.
 */
enum xmbp_status xmbp_frame(const uint8_t *buf, size_t len, size_t *batch_len,
			    struct xmbp_error *err);

/* Stream block i (i < batch->stream_count) of a decoded batch. */
void xmbp_stream_at(const struct xmbp_batch *batch, uint16_t i,
		    struct xmbp_stream *stream);

/* Starts a walk over the samples of a stream block. */
void xmbp_samples(const struct xmbp_stream *stream,
		  struct xmbp_sample_iter *it);

/* Next sample; false at the end of the block.  No allocation, no copy. */
bool xmbp_sample_next(struct xmbp_sample_iter *it, uint64_t *ts,
		      struct sample_value *v);

#endif
