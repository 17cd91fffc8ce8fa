/* SPDX-License-Identifier: MIT */
/*
 * xmbpenc.h - the XMBP batch encoder (doc/xmbp.md "The batch format"),
 * the part of libxmbp that runs on a device (doc/device.md).
 *
 * Freestanding: C99 with -ffreestanding, no allocation, nothing from libc
 * but memcpy and memset (t/xmbp-freestanding.t checks the object).  It
 * writes into a buffer the caller supplies.  A write that does not fit, or
 * that breaks a rule of the format, puts the encoder in a sticky failed
 * state: every later call is ignored and xmbp_enc_finish() reports it.  A
 * failed write leaves no partial sample.
 *
 *	struct xmbp_enc enc;
 *	xmbp_enc_init(&enc, buf, sizeof(buf));
 *	xmbp_enc_begin(&enc, seq, NULL);
 *	xmbp_enc_stream(&enc, 0, SAMPLE_F32);
 *	xmbp_enc_f32(&enc, ts_us, 21.5f);
 *	if (xmbp_enc_finish(&enc, &len) != XMBP_ENC_OK) ... xmbp_enc_detail()
 */
#ifndef XMHUB_XMBPENC_H
#define XMHUB_XMBPENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/sample.h"

#define XMBP_MAGIC "XMBP" /* the first 4 bytes of a batch */
#define XMBP_VERSION 0x01
#define XMBP_FLAG_HAS_DEVICE_ID 0x01
#define XMBP_FLAG_ZSTD 0x02 /* reserved: refused in version 1 */
#define XMBP_MAX_STREAMS 256
#define XMBP_MAX_ARRAY 4096
#define XMBP_MAX_SAMPLES 65535
#define XMBP_MAX_VAR 65535 /* string and bytes payload */
#define XMBP_HEADER_MIN 10
#define XMBP_BLOCK_HEADER 5

/* Sizes, to make a buffer fit a batch of known shape: the envelope (with
 * or without device_id), and one stream block of n samples of a
 * fixed-width type of `size` value bytes (f32 4, i16 2, ...).  Spec
 * example: 4 blocks of 100 f32 with device_id are
 * XMBP_ENVELOPE_SIZE(1) + 4 * XMBP_BLOCK_SIZE(100, 4) = 4834 bytes. */
#define XMBP_ENVELOPE_SIZE(has_device_id)                                      \
	(XMBP_HEADER_MIN + ((has_device_id) ? 4 : 0))
#define XMBP_BLOCK_SIZE(n, size)                                               \
	(XMBP_BLOCK_HEADER + (size_t)(n) * (8 + (size_t)(size)))

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
