/* SPDX-License-Identifier: MIT */
/*
 * fuzz/xmbp.c - libFuzzer target for the XMBP batch codec.
 *
 * Every input is given to xmbp_decode() and xmbp_frame(), which must
 * agree: they share one scanner and differ only in what running out of
 * bytes means.  A batch that decodes is walked sample by sample and
 * re-encoded with xmbp_enc_value(); the result must be the input again,
 * up to the two things a reader is told to ignore: reserved flag bits
 * (written as 0) and bool bytes other than 0 and 1 (read as true).
 * Violations abort(), so libFuzzer keeps the input as a crash artifact.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codec/xmbp.h"

#include "check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An error report must match the status and stay inside its buffer. */
static void
check_error(const struct xmbp_error *err, enum xmbp_status st, size_t size)
{
	CHECK(err->status == st);
	CHECK(err->offset <= size);
	CHECK(memchr(err->msg, '\0', sizeof(err->msg)) != NULL);
}

/*
 * The two entry points see the same bytes through one scanner, so they
 * can only differ where the input ends: decode's UnexpectedEof is
 * frame's NeedMore, and a batch that frame finds inside longer input is
 * decode's TrailingData.  Any other fault is the same fault.
 */
static void
check_frame(const uint8_t *data, size_t size, enum xmbp_status dst)
{
	struct xmbp_batch b;
	struct xmbp_error err;
	enum xmbp_status fst;
	size_t blen = (size_t)-1;

	memset(&err, 0, sizeof(err));
	fst = xmbp_frame(data, size, &blen, &err);
	CHECK(xmbp_status_name(fst) != NULL);
	CHECK(fst != XMBP_E_TRAILING_DATA && fst != XMBP_E_UNEXPECTED_EOF);
	if (fst != XMBP_OK && fst != XMBP_NEED_MORE)
		check_error(&err, fst, size);

	if (dst == XMBP_OK)
		CHECK(fst == XMBP_OK && blen == size);
	if (fst == XMBP_OK) {
		CHECK(blen >= XMBP_HEADER_MIN && blen <= size);
		if (blen < size) {
			CHECK(dst == XMBP_E_TRAILING_DATA);
			/* The framed prefix is a batch on its own. */
			CHECK(xmbp_decode(data, blen, &b, NULL) == XMBP_OK);
			CHECK(b.len == blen);
		}
	} else if (fst == XMBP_NEED_MORE)
		CHECK(dst == XMBP_E_UNEXPECTED_EOF);
	else
		CHECK(dst == fst);
	if (dst == XMBP_E_UNEXPECTED_EOF)
		CHECK(fst == XMBP_NEED_MORE);
}

/* Walks every sample; checks each block holds what its header says. */
static void
walk(const struct xmbp_batch *b)
{
	struct xmbp_stream s;
	struct xmbp_sample_iter it;
	struct sample_value v;
	uint64_t ts, sum = 0;
	uint32_t n;

	for (uint16_t i = 0; i < b->stream_count; i++) {
		xmbp_stream_at(b, i, &s);
		CHECK(xmbp_sample_type_valid(s.type));
		CHECK(s.data >= b->buf &&
		      s.data + s.data_len <= b->buf + b->len);
		xmbp_samples(&s, &it);
		for (n = 0; xmbp_sample_next(&it, &ts, &v); n++) {
			CHECK(n < s.sample_count);
			CHECK(v.type == s.type);
			sum += ts + touch_value(&v);
		}
		CHECK(n == s.sample_count);
	}
	sink += sum;
}

/* Encodes the batch's samples again into cap bytes at out. */
static enum xmbp_enc_state
reencode(const struct xmbp_batch *b, uint8_t *out, size_t cap, size_t *len)
{
	struct xmbp_enc enc;
	struct xmbp_stream s;
	struct xmbp_sample_iter it;
	struct sample_value v;
	uint64_t ts;

	xmbp_enc_init(&enc, out, cap);
	xmbp_enc_begin(&enc, b->batch_seq,
		       b->has_device_id ? &b->device_id : NULL);
	for (uint16_t i = 0; i < b->stream_count; i++) {
		xmbp_stream_at(b, i, &s);
		xmbp_enc_stream(&enc, s.stream_id, s.type);
		xmbp_samples(&s, &it);
		while (xmbp_sample_next(&it, &ts, &v))
			xmbp_enc_value(&enc, ts, &v);
	}
	return xmbp_enc_finish(&enc, len);
}

/*
 * The input as the encoder writes it: reserved flag bits cleared (bit 1
 * never gets here, decode refuses it) and every bool byte 0 or 1.
 */
static void
canonical(const struct xmbp_batch *b, uint8_t *want)
{
	struct xmbp_stream s;

	want[5] &= XMBP_FLAG_HAS_DEVICE_ID | XMBP_FLAG_ZSTD;
	for (uint16_t i = 0; i < b->stream_count; i++) {
		xmbp_stream_at(b, i, &s);
		if (s.type != SAMPLE_BOOL)
			continue;
		for (size_t k = 0; k < s.sample_count; k++) {
			size_t off = (size_t)(s.data - b->buf) + k * 9 + 8;

			if (want[off] != 0)
				want[off] = 1;
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xmbp_batch b;
	struct xmbp_error err;
	enum xmbp_status dst;
	uint8_t *out, *want;
	size_t len = 0;

	memset(&err, 0, sizeof(err));
	dst = xmbp_decode(data, size, &b, &err);
	check_frame(data, size, dst);
	if (dst != XMBP_OK) {
		check_error(&err, dst, size);
		return 0;
	}
	CHECK(b.buf == data && b.len == size);
	CHECK(b.stream_count <= XMBP_MAX_STREAMS);
	walk(&b);

	/* Exactly the input's size: a byte too many written is ASan's. */
	if ((out = malloc(size)) == NULL || (want = malloc(size)) == NULL)
		abort();
	CHECK(reencode(&b, out, size, &len) == XMBP_ENC_OK);
	CHECK(len == size);
	memcpy(want, data, size);
	canonical(&b, want);
	CHECK(memcmp(out, want, size) == 0);

	/* One byte short: the encoder must say so, not write past it. */
	CHECK(reencode(&b, out, size - 1, &len) == XMBP_ENC_OVERFLOW);

	free(want);
	free(out);
	return 0;
}
