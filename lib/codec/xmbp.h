/*
 * xmbp.h - the XMBP batch codec (doc/xmbp.md "The batch format").
 *
 * Encoder: writes into a buffer the caller supplies and never allocates.
 * A write that does not fit, or that breaks a rule of the format, puts the
 * encoder in a sticky failed state: every later call is ignored and
 * xmbp_enc_finish() reports it.  A failed write leaves no partial sample.
 *
 * Decoder: xmbp_decode() validates a whole batch once; afterwards the
 * caller walks its streams and samples with no further checks and no
 * copies (values point into the caller's buffer, which must outlive the
 * batch).  xmbp_frame() finds where a batch ends in a byte stream.
 */
#ifndef XMHUB_XMBP_H
#define XMHUB_XMBP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/sample.h"

#define XMBP_VERSION 0x01
#define XMBP_FLAG_HAS_DEVICE_ID 0x01
#define XMBP_FLAG_ZSTD 0x02 /* reserved: refused in version 1 */
#define XMBP_MAX_STREAMS 256
#define XMBP_MAX_ARRAY 4096
#define XMBP_MAX_SAMPLES 65535
#define XMBP_MAX_VAR 65535 /* string and bytes payload */
#define XMBP_HEADER_MIN 10
#define XMBP_BLOCK_HEADER 5

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

/* Encoder state: XMBP_ENC_OK until the first failed write. */
enum xmbp_enc_state {
	XMBP_ENC_OK = 0,
	XMBP_ENC_OVERFLOW, /* a write did not fit the buffer */
	XMBP_ENC_INVALID   /* a call broke a rule; see xmbp_enc_detail() */
};

/* Encoder; treat the fields as private. */
struct xmbp_enc {
	uint8_t *buf;
	size_t cap, len;
	enum xmbp_enc_state state;
	const char *detail;
	size_t count_off; /* offset of stream_count, 0 before begin */
	uint32_t nstreams;
	size_t block_off; /* offset of the open block, 0 when none */
	uint32_t nsamples;
	enum sample_type type;
};

/* Starts encoding into the cap bytes at buf. */
void xmbp_enc_init(struct xmbp_enc *enc, uint8_t *buf, size_t cap);

/* Writes the envelope; device_id NULL means none (flag bit 0 clear). */
void xmbp_enc_begin(struct xmbp_enc *enc, uint16_t batch_seq,
		    const uint32_t *device_id);

/* Opens a stream block, ending the open one; at most 256 per batch. */
void xmbp_enc_stream(struct xmbp_enc *enc, uint16_t stream_id,
		     enum sample_type type);

/*
 * Append one sample to the open block, whose type must match.  At most
 * 65535 samples per block; strings and bytes up to 65535 bytes; arrays up
 * to 4096 elements; string and json must be valid UTF-8.
 */
void xmbp_enc_f64(struct xmbp_enc *enc, uint64_t ts, double v);
void xmbp_enc_f32(struct xmbp_enc *enc, uint64_t ts, float v);
void xmbp_enc_i64(struct xmbp_enc *enc, uint64_t ts, int64_t v);
void xmbp_enc_i32(struct xmbp_enc *enc, uint64_t ts, int32_t v);
void xmbp_enc_i16(struct xmbp_enc *enc, uint64_t ts, int16_t v);
void xmbp_enc_i8(struct xmbp_enc *enc, uint64_t ts, int8_t v);
void xmbp_enc_bool(struct xmbp_enc *enc, uint64_t ts, bool v);
void xmbp_enc_string(struct xmbp_enc *enc, uint64_t ts, const char *s,
		     size_t len);
void xmbp_enc_bytes(struct xmbp_enc *enc, uint64_t ts, const void *p,
		    size_t len);
void xmbp_enc_json(struct xmbp_enc *enc, uint64_t ts, const char *s,
		   size_t len);
void xmbp_enc_f64_array(struct xmbp_enc *enc, uint64_t ts, const double *a,
			size_t n);
void xmbp_enc_f32_array(struct xmbp_enc *enc, uint64_t ts, const float *a,
			size_t n);
void xmbp_enc_i32_array(struct xmbp_enc *enc, uint64_t ts, const int32_t *a,
			size_t n);

/* Appends a decoded value (of any type) as it stands, e.g. to re-encode. */
void xmbp_enc_value(struct xmbp_enc *enc, uint64_t ts,
		    const struct sample_value *v);

/* Ends the open block, patching its sample_count in. */
void xmbp_enc_end_stream(struct xmbp_enc *enc);

/*
 * Ends the open block and the batch.  Returns the state; only when it is
 * XMBP_ENC_OK is *len set to the batch size (bytes at the buffer start).
 */
enum xmbp_enc_state xmbp_enc_finish(struct xmbp_enc *enc, size_t *len);

/* Why the encoder failed: a static string; "" while it has not. */
const char *xmbp_enc_detail(const struct xmbp_enc *enc);

#endif
