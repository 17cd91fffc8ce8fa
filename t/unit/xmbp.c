/* SPDX-License-Identifier: MIT */
/*
 * t/unit/xmbp.c - the XMBP batch codec (lib/codec/xmbp.h, doc/xmbp.md).
 *
 * Batches are described by a small model (streams of samples whose
 * fixed-width values are kept as raw bits), encoded with the typed
 * functions and checked after decoding bit for bit, so NaN payloads and
 * -0.0 count.  Inputs for the decoder are copied into heap blocks of
 * exactly their size so that ASan catches any read past the end.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/be.h"
#include "tap.h"
#include "testutil.h"
#include "codec/xmbp.h"

/* One sample of the model.  The stream gives its type. */
struct tval {
	uint64_t ts;
	uint64_t bits; /* fixed-width value: f64/f32 bits, ints, bool 0/1 */
	const void *p; /* string/bytes/json bytes; arrays: uint64_t bits */
	size_t n;      /* bytes, or elements for arrays */
};

struct tstream {
	uint16_t id;
	enum sample_type type;
	const struct tval *s;
	size_t n;
};

/* Encoded size of one sample, from doc/xmbp.md "Value types". */
static size_t
sample_size(enum sample_type type, const struct tval *tv)
{
	size_t fixed = xmbp_sample_fixed_size(type),
	       elem = xmbp_sample_elem_size(type);

	if (fixed != 0)
		return 8 + fixed;
	if (type == SAMPLE_JSON)
		return 8 + 4 + tv->n;
	return 8 + 2 + tv->n * (elem != 0 ? elem : 1);
}

/* The batch size formula of doc/xmbp.md. */
static size_t
model_size(const struct tstream *st, size_t nst, bool dev)
{
	size_t n = 8 + (dev ? 4 : 0) + 2;

	for (size_t i = 0; i < nst; i++) {
		n += XMBP_BLOCK_HEADER;
		for (size_t j = 0; j < st[i].n; j++)
			n += sample_size(st[i].type, &st[i].s[j]);
	}
	return n;
}

/* Appends tv with the typed function for type. */
static void
enc_tval(struct xmbp_enc *enc, enum sample_type type, const struct tval *tv)
{
	/* One element more than allowed, for the misuse tests' sake too. */
	static double da[XMBP_MAX_ARRAY + 1];
	static float fa[XMBP_MAX_ARRAY + 1];
	static int32_t ia[XMBP_MAX_ARRAY + 1];
	const uint64_t *e = tv->p;

	switch (type) {
	case SAMPLE_F64:
		xmbp_enc_f64(enc, tv->ts, val_f64_bits(tv->bits).u.f64);
		break;
	case SAMPLE_F32:
		xmbp_enc_f32(enc, tv->ts,
			     val_f32_bits((uint32_t)tv->bits).u.f32);
		break;
	case SAMPLE_I64:
		xmbp_enc_i64(enc, tv->ts, (int64_t)tv->bits);
		break;
	case SAMPLE_I32:
		xmbp_enc_i32(enc, tv->ts, (int32_t)(uint32_t)tv->bits);
		break;
	case SAMPLE_I16:
		xmbp_enc_i16(enc, tv->ts, (int16_t)(uint16_t)tv->bits);
		break;
	case SAMPLE_I8:
		xmbp_enc_i8(enc, tv->ts, (int8_t)(uint8_t)tv->bits);
		break;
	case SAMPLE_BOOL:
		xmbp_enc_bool(enc, tv->ts, tv->bits != 0);
		break;
	case SAMPLE_STRING:
		xmbp_enc_string(enc, tv->ts, tv->p, tv->n);
		break;
	case SAMPLE_JSON:
		xmbp_enc_json(enc, tv->ts, tv->p, tv->n);
		break;
	case SAMPLE_BYTES:
		xmbp_enc_bytes(enc, tv->ts, tv->p, tv->n);
		break;
	case SAMPLE_F64_ARRAY:
		for (size_t k = 0; k < tv->n; k++)
			da[k] = val_f64_bits(e[k]).u.f64;
		xmbp_enc_f64_array(enc, tv->ts, da, tv->n);
		break;
	case SAMPLE_F32_ARRAY:
		for (size_t k = 0; k < tv->n; k++)
			fa[k] = val_f32_bits((uint32_t)e[k]).u.f32;
		xmbp_enc_f32_array(enc, tv->ts, fa, tv->n);
		break;
	case SAMPLE_I32_ARRAY:
		for (size_t k = 0; k < tv->n; k++)
			ia[k] = (int32_t)(uint32_t)e[k];
		xmbp_enc_i32_array(enc, tv->ts, ia, tv->n);
		break;
	default:
		abort();
	}
}

/* Encodes a model into cap bytes at buf; the state of finish. */
static enum xmbp_enc_state
encode_model(uint8_t *buf, size_t cap, const struct tstream *st, size_t nst,
	     uint16_t seq, const uint32_t *dev, size_t *len)
{
	struct xmbp_enc enc;

	xmbp_enc_init(&enc, buf, cap);
	xmbp_enc_begin(&enc, seq, dev);
	for (size_t i = 0; i < nst; i++) {
		xmbp_enc_stream(&enc, st[i].id, st[i].type);
		for (size_t j = 0; j < st[i].n; j++)
			enc_tval(&enc, st[i].type, &st[i].s[j]);
	}
	return xmbp_enc_finish(&enc, len);
}

/* True when the decoded sample (ts, v) is tv, bit for bit. */
static bool
tval_eq(enum sample_type type, const struct tval *tv, uint64_t ts,
	const struct sample_value *v)
{
	size_t elem = xmbp_sample_elem_size(type);
	const uint64_t *e = tv->p;

	if (ts != tv->ts || v->type != type)
		return false;
	if (xmbp_sample_fixed_size(type) != 0) {
		struct sample_value want = val_bits(type, tv->bits);

		/* Each member of the union starts at its beginning. */
		return memcmp(&v->u, &want.u, xmbp_sample_fixed_size(type)) ==
		       0;
	}
	switch (type) {
	case SAMPLE_STRING:
	case SAMPLE_BYTES:
	case SAMPLE_JSON:
		return v->u.raw.len == tv->n &&
		       (tv->n == 0 || memcmp(v->u.raw.p, tv->p, tv->n) == 0);
	default:
		if (v->u.raw.len != tv->n)
			return false;
		for (size_t k = 0; k < tv->n; k++) {
			const uint8_t *q = v->u.raw.p + k * elem;
			uint64_t got = elem == 8 ? be64_get(q) : be32_get(q);
			uint64_t want = elem == 8 ? e[k] : (uint32_t)e[k];

			if (got != want)
				return false;
		}
		return true;
	}
}

/*
 * Decodes len bytes at buf and compares everything with the model;
 * false with the first difference in why.  flags is the flags byte
 * expected, or -1 for what the encoder writes (0x01 with a device_id).
 */
static bool
check_model(const uint8_t *buf, size_t len, const struct tstream *st,
	    size_t nst, uint16_t seq, const uint32_t *dev, int flags, char *why,
	    size_t whylen)
{
	struct xmbp_batch b;
	struct xmbp_error err;
	enum xmbp_status s;

	if ((s = xmbp_decode(buf, len, &b, &err)) != XMBP_OK) {
		snprintf(why, whylen, "decode: %s at %zu: %s",
			 xmbp_status_name(s), err.offset, err.msg);
		return false;
	}
	if (b.version != 1 || b.batch_seq != seq ||
	    b.has_device_id != (dev != NULL) ||
	    (dev != NULL && b.device_id != *dev) ||
	    b.flags != (flags >= 0    ? flags
			: dev != NULL ? 1
				      : 0) ||
	    b.stream_count != nst || b.len != len) {
		snprintf(why, whylen,
			 "header: version %u seq %u dev %d/%" PRIu32
			 " flags 0x%02X streams %u len %zu",
			 b.version, b.batch_seq, b.has_device_id, b.device_id,
			 b.flags, b.stream_count, b.len);
		return false;
	}
	for (size_t i = 0; i < nst; i++) {
		struct xmbp_stream xs;
		struct xmbp_sample_iter it;
		struct sample_value v;
		uint64_t ts;
		size_t bytes = 0;

		xmbp_stream_at(&b, (uint16_t)i, &xs);
		for (size_t j = 0; j < st[i].n; j++)
			bytes += sample_size(st[i].type, &st[i].s[j]);
		if (xs.stream_id != st[i].id || xs.type != st[i].type ||
		    xs.sample_count != st[i].n || xs.data_len != bytes) {
			snprintf(
				why, whylen,
				"stream %zu: id %u type %d count %u bytes %zu, "
				"want %u %d %zu %zu",
				i, xs.stream_id, (int)xs.type, xs.sample_count,
				xs.data_len, st[i].id, (int)st[i].type, st[i].n,
				bytes);
			return false;
		}
		xmbp_samples(&xs, &it);
		for (size_t j = 0; j < st[i].n; j++) {
			if (!xmbp_sample_next(&it, &ts, &v)) {
				snprintf(why, whylen,
					 "stream %zu ends after %zu samples", i,
					 j);
				return false;
			}
			if (!tval_eq(st[i].type, &st[i].s[j], ts, &v)) {
				snprintf(why, whylen,
					 "stream %zu (%s) sample %zu differs",
					 i, xmbp_sample_type_name(st[i].type),
					 j);
				return false;
			}
		}
		if (xmbp_sample_next(&it, &ts, &v)) {
			snprintf(why, whylen, "stream %zu has an extra sample",
				 i);
			return false;
		}
	}
	return true;
}

/* The edge values, one array per type. */

#define NV(a) (sizeof(a) / sizeof((a)[0]))

/* A nested row of a table, written like a call so that clang-format packs
 * the rows: LIST(a, b) is {a, b}. */
#define LIST(...)                                                              \
	{                                                                      \
		__VA_ARGS__                                                    \
	}

static const struct tval f64_edge[] = {
	{0, 0x0000000000000000, NULL, 0},	   /* 0.0 */
	{1, 0x8000000000000000, NULL, 0},	   /* -0.0 */
	{2, 0x7FF8000000000000, NULL, 0},	   /* NaN */
	{3, 0xFFF8DEADBEEF0001, NULL, 0},	   /* NaN, sign and payload */
	{4, 0x7FF0000000000000, NULL, 0},	   /* +Inf */
	{5, 0xFFF0000000000000, NULL, 0},	   /* -Inf */
	{6, 0x0000000000000001, NULL, 0},	   /* smallest subnormal */
	{7, 0x7FEFFFFFFFFFFFFF, NULL, 0},	   /* DBL_MAX */
	{UINT64_MAX, 0x3FF8000000000000, NULL, 0}, /* 1.5 */
};
static const struct tval f32_edge[] = {
	{0, 0x00000000, NULL, 0},
	{1, 0x80000000, NULL, 0},
	{2, 0x7FC00000, NULL, 0},
	{3, 0xFFC12345, NULL, 0},
	{4, 0x7F800000, NULL, 0},
	{5, 0xFF800000, NULL, 0},
	{6, 0x00000001, NULL, 0},
	{7, 0x7F7FFFFF, NULL, 0},
	{0x0102030405060708, 0xC0200000, NULL, 0}, /* -2.5f */
};
static const struct tval i64_edge[] = {
	{10, 0x8000000000000000, NULL, 0}, /* INT64_MIN */
	{11, 0xFFFFFFFFFFFFFFFF, NULL, 0}, /* -1 */
	{12, 0, NULL, 0},
	{13, 1, NULL, 0},
	{14, 0x7FFFFFFFFFFFFFFF, NULL, 0}, /* INT64_MAX */
};
static const struct tval i32_edge[] = {
	{0, 0x80000000, NULL, 0},
	{1, 0xFFFFFFFF, NULL, 0},
	{2, 0, NULL, 0},
	{3, 0x7FFFFFFF, NULL, 0},
};
static const struct tval i16_edge[] = {
	{0, 0x8000, NULL, 0},
	{1, 0xFFFF, NULL, 0},
	{2, 0, NULL, 0},
	{3, 0x7FFF, NULL, 0},
};
static const struct tval i8_edge[] = {
	{0, 0x80, NULL, 0},
	{1, 0xFF, NULL, 0},
	{2, 0, NULL, 0},
	{3, 0x7F, NULL, 0},
};
static const struct tval bool_edge[] = {
	{0, 0, NULL, 0},
	{UINT64_MAX, 1, NULL, 0},
	{5, 0, NULL, 0},
};
static const struct tval string_edge[] = {
	{0, 0, "", 0},
	{1, 0, "a", 1},
	{2, 0, "h\xC3\xA9llo", 6},     /* 2-byte */
	{3, 0, "\xE2\x82\xAC", 3},     /* 3-byte euro sign */
	{4, 0, "\xF0\x9F\x98\x80", 4}, /* 4-byte U+1F600 */
	{5, 0, "\xF4\x8F\xBF\xBF", 4}, /* U+10FFFF */
	{6, 0, "a\0b", 3},	       /* U+0000 is valid */
};
static const uint8_t bytes_b[] = {0x00, 0xFF, 0x80, 0x7F, 0x00};
static const struct tval bytes_edge[] = {
	{0, 0, "", 0},
	{1, 0, bytes_b, 1},
	{2, 0, bytes_b + 1, 1},
	{3, 0, bytes_b, sizeof(bytes_b)},
	{4, 0, "\xC0\x80\xED\xA0\x80", 5}, /* not UTF-8: bytes don't care */
};
static const uint64_t f64_elems[] = {
	0x7FF8000000000000, 0x8000000000000000, 0x7FF0000000000000,
	0xFFF0000000000000, 0x3FF0000000000000, 0x7FF4000000000001,
};
static const uint64_t f32_elems[] = {
	0x7FC00000, 0x80000000, 0x7F800000, 0xFF800000, 0x00000001, 0x7FC12345,
};
static const uint64_t i32_elems[] = {0x80000000, 0x7FFFFFFF, 0, 0xFFFFFFFF};
static const struct tval f64_array_edge[] = {
	{0, 0, NULL, 0},
	{1, 0, f64_elems, 1},
	{2, 0, f64_elems, NV(f64_elems)},
};
static const struct tval f32_array_edge[] = {
	{0, 0, NULL, 0},
	{1, 0, f32_elems + 3, 1},
	{2, 0, f32_elems, NV(f32_elems)},
};
static const struct tval i32_array_edge[] = {
	{0, 0, NULL, 0},
	{1, 0, i32_elems, NV(i32_elems)},
};
static const struct tval json_edge[] = {
	{0, 0, "", 0},
	{1, 0, "{}", 2},
	{2, 0, "null", 4},
	{3, 0, "{\"a\":[1,2.5,\"\xC3\xA9\xF0\x9F\x98\x80\"],\"b\":null}", 31},
};

/* All 13 types, in tag order, as one batch. */
static const struct tstream mixed[] = {
	{100, SAMPLE_F64, f64_edge, NV(f64_edge)},
	{101, SAMPLE_F32, f32_edge, NV(f32_edge)},
	{102, SAMPLE_I64, i64_edge, NV(i64_edge)},
	{103, SAMPLE_I32, i32_edge, NV(i32_edge)},
	{104, SAMPLE_BOOL, bool_edge, NV(bool_edge)},
	{105, SAMPLE_STRING, string_edge, NV(string_edge)},
	{106, SAMPLE_BYTES, bytes_edge, NV(bytes_edge)},
	{107, SAMPLE_F64_ARRAY, f64_array_edge, NV(f64_array_edge)},
	{108, SAMPLE_F32_ARRAY, f32_array_edge, NV(f32_array_edge)},
	{109, SAMPLE_I32_ARRAY, i32_array_edge, NV(i32_array_edge)},
	{110, SAMPLE_JSON, json_edge, NV(json_edge)},
	{111, SAMPLE_I16, i16_edge, NV(i16_edge)},
	{0xFFFF, SAMPLE_I8, i8_edge, NV(i8_edge)},
};

static const uint32_t devid = 0xDEADBEEF;

/* An empty batch without device_id (seq 0). */
static const uint8_t empty10[] = {0x58, 0x4D, 0x42, 0x50, 0x01,
				  0x00, 0x00, 0x00, 0x00, 0x00};

/* The mixed batch, encoded once; the reference for later tests. */
static uint8_t mixed_buf[4096];
static size_t mixed_len;

static void
test_types(void)
{
	static uint8_t buf[4096];
	char why[256];
	size_t len;
	enum xmbp_enc_state st;

	/* The json literal's length is counted by hand; make sure. */
	ok(strlen(json_edge[3].p) == json_edge[3].n, "json edge length");

	for (size_t i = 0; i < NV(mixed); i++) {
		const uint32_t *dev = i % 2 ? &devid : NULL;
		bool good;

		len = 0;
		st = encode_model(buf, sizeof(buf), &mixed[i], 1,
				  (uint16_t)(i * 1000), dev, &len);
		good = st == XMBP_ENC_OK &&
		       len == model_size(&mixed[i], 1, dev != NULL) &&
		       check_model(buf, len, &mixed[i], 1, (uint16_t)(i * 1000),
				   dev, -1, why, sizeof(why));
		if (!ok(good, "%s alone: encode, size, decode bit-exact",
			xmbp_sample_type_name(mixed[i].type)))
			diag("state %d len %zu: %s", (int)st, len,
			     st == XMBP_ENC_OK ? why : "");
	}

	st = encode_model(mixed_buf, sizeof(mixed_buf), mixed, NV(mixed), 7,
			  &devid, &mixed_len);
	is_int(st, XMBP_ENC_OK, "mixed batch of all 13 types encodes");
	is_int(mixed_len, model_size(mixed, NV(mixed), true),
	       "mixed batch has the size of doc/xmbp.md's formula");
	if (!ok(check_model(mixed_buf, mixed_len, mixed, NV(mixed), 7, &devid,
			    -1, why, sizeof(why)),
		"mixed batch decodes bit-exact"))
		diag("%s", why);
}

/* The size facts and header layout of doc/xmbp.md, byte for byte. */
static void
test_layout(void)
{
	static const uint8_t want27[] = {
		0x58, 0x4D, 0x42, 0x50, 0x01, 0x00, 0x12, 0x34, 0x00,
		0x01, 0x00, 0x07, 0x01, 0x00, 0x01, 0x01, 0x02, 0x03,
		0x04, 0x05, 0x06, 0x07, 0x08, 0xC0, 0x20, 0x00, 0x00,
	};
	static const uint8_t want14[] = {
		0x58, 0x4D, 0x42, 0x50, 0x01, 0x01, 0xAB,
		0xCD, 0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x00,
	};
	static uint8_t buf[8192];
	struct xmbp_enc enc;
	struct xmbp_batch b;
	size_t len = 0;
	uint32_t dev = 0xDEADBEEF;
	bool same;

	xmbp_enc_init(&enc, buf, sizeof(buf));
	xmbp_enc_begin(&enc, 0, NULL);
	ok(xmbp_enc_finish(&enc, &len) == XMBP_ENC_OK && len == 10 &&
		   memcmp(buf, empty10, 10) == 0,
	   "empty batch without device_id: 10 bytes, exact");
	ok(xmbp_decode(buf, len, &b, NULL) == XMBP_OK && b.stream_count == 0 &&
		   !b.has_device_id,
	   "empty batch decodes");

	xmbp_enc_init(&enc, buf, sizeof(buf));
	xmbp_enc_begin(&enc, 0xABCD, &dev);
	ok(xmbp_enc_finish(&enc, &len) == XMBP_ENC_OK && len == 14 &&
		   memcmp(buf, want14, 14) == 0,
	   "empty batch with device_id: 14 bytes, flags 0x01, big-endian "
	   "seq and device_id");
	ok(xmbp_decode(buf, len, &b, NULL) == XMBP_OK && b.has_device_id &&
		   b.device_id == 0xDEADBEEF && b.batch_seq == 0xABCD &&
		   b.flags == 0x01,
	   "empty batch with device_id decodes");

	xmbp_enc_init(&enc, buf, sizeof(buf));
	xmbp_enc_begin(&enc, 0x1234, NULL);
	xmbp_enc_stream(&enc, 7, SAMPLE_F32);
	xmbp_enc_f32(&enc, 0x0102030405060708, -2.5f);
	len = 0;
	ok(xmbp_enc_finish(&enc, &len) == XMBP_ENC_OK, "one f32 sample");
	is_int(len, 27,
	       "one f32 stream with one sample, no device_id: 27 "
	       "bytes");
	same = len == 27 && memcmp(buf, want27, 27) == 0;
	if (!ok(same, "27-byte batch is exact: magic, version, flags 0, "
		      "block header, timestamp, -2.5f as C0 20 00 00"))
		for (size_t i = 0; i < 27 && i < len; i++)
			if (buf[i] != want27[i]) {
				diag("byte %zu is 0x%02X, want 0x%02X", i,
				     buf[i], want27[i]);
				break;
			}

	xmbp_enc_init(&enc, buf, sizeof(buf));
	xmbp_enc_begin(&enc, 1, &dev);
	for (int s = 0; s < 4; s++) {
		xmbp_enc_stream(&enc, (uint16_t)s, SAMPLE_F32);
		for (int i = 0; i < 100; i++)
			xmbp_enc_f32(&enc, (uint64_t)i, (float)i * 0.5f);
	}
	len = 0;
	ok(xmbp_enc_finish(&enc, &len) == XMBP_ENC_OK, "4 x 100 f32 encodes");
	is_int(len, 4834, "4 streams x 100 f32 with device_id: 4834 bytes");
	ok(xmbp_decode(buf, len, &b, NULL) == XMBP_OK && b.stream_count == 4,
	   "4834-byte batch decodes");
	/* Block 2 starts at 14 + 2 * 1205; its sample 1 holds 0.5f. */
	ok(be16_get(buf + 12) == 4 && be16_get(buf + 14 + 2 * 1205) == 2 &&
		   buf[14 + 2 * 1205 + 2] == 0x01 &&
		   be16_get(buf + 14 + 2 * 1205 + 3) == 100 &&
		   be32_get(buf + 14 + 2 * 1205 + 5 + 12 + 8) == 0x3F000000,
	   "stream_count, block header and f32 bits at their offsets");

	/* The 10- and 27-byte batches above showed flags 0x00 exactly. */
	ok(buf[5] == 0x01 && mixed_buf[5] == 0x01,
	   "encoder writes flags 0x01 with device_id, reserved bits 0");
}

/* Decodes a heap copy of exactly len bytes; err is always filled. */
static enum xmbp_status
decode_copy(const uint8_t *p, size_t len, struct xmbp_error *err)
{
	uint8_t *q = malloc(len > 0 ? len : 1);
	struct xmbp_batch *b = malloc(sizeof(*b));
	enum xmbp_status s;

	if (q == NULL || b == NULL)
		abort();
	if (len > 0)
		memcpy(q, p, len);
	memset(err, 0, sizeof(*err));
	s = xmbp_decode(q, len, b, err);
	free(q);
	free(b);
	return s;
}

/* Same for xmbp_frame(). */
static enum xmbp_status
frame_copy(const uint8_t *p, size_t len, size_t *batch_len)
{
	uint8_t *q = malloc(len > 0 ? len : 1);
	struct xmbp_error err;
	enum xmbp_status s;

	if (q == NULL)
		abort();
	if (len > 0)
		memcpy(q, p, len);
	s = xmbp_frame(q, len, batch_len, &err);
	free(q);
	return s;
}

/* A hand-made batch, for what the encoder refuses to write. */
static uint8_t hb[1 << 17];
static size_t hlen;

static void
hput(const void *p, size_t n)
{
	if (hlen + n > sizeof(hb))
		abort();
	memcpy(hb + hlen, p, n);
	hlen += n;
}

static void
h8(unsigned int v)
{
	uint8_t b = (uint8_t)v;

	hput(&b, 1);
}

static void
h16(unsigned int v)
{
	uint8_t b[2];

	be16_put(b, (uint16_t)v);
	hput(b, 2);
}

static void
h32(uint32_t v)
{
	uint8_t b[4];

	be32_put(b, v);
	hput(b, 4);
}

static void
h64(uint64_t v)
{
	uint8_t b[8];

	be64_put(b, v);
	hput(b, 8);
}

/* Starts a batch: magic, version 1, flags, seq, [device_id], count. */
static void
hstart(unsigned int flags, unsigned int nstreams)
{
	hlen = 0;
	hput("XMBP", 4);
	h8(1);
	h8(flags);
	h16(0x0102);
	if (flags & 1)
		h32(0x0A0B0C0D);
	h16(nstreams);
}

static void
hblock(unsigned int id, unsigned int tag, unsigned int count)
{
	h16(id);
	h8(tag);
	h16(count);
}

/* Expects status s from decoding the hand batch; diag on failure. */
static bool
expect(enum xmbp_status want, struct xmbp_error *err, const char *what)
{
	enum xmbp_status got = decode_copy(hb, hlen, err);

	if (!ok(got == want && err->status == got, "%s: %s", what,
		xmbp_status_name(want)))
		diag("got %s (err.status %s) at %zu: %s", xmbp_status_name(got),
		     xmbp_status_name(err->status), err->offset, err->msg);
	return got == want;
}

static void
test_status_names(void)
{
	static const struct {
		enum xmbp_status s;
		const char *name;
	} names[] = {
		{XMBP_OK, "ok"},
		{XMBP_NEED_MORE, "NeedMore"},
		{XMBP_E_BUFFER_OVERFLOW, "BufferOverflow"},
		{XMBP_E_INVALID_MAGIC, "InvalidMagic"},
		{XMBP_E_UNSUPPORTED_VERSION, "UnsupportedVersion"},
		{XMBP_E_INVALID_VALUE_TYPE, "InvalidValueType"},
		{XMBP_E_UNEXPECTED_EOF, "UnexpectedEof"},
		{XMBP_E_INVALID_UTF8, "InvalidUtf8"},
		{XMBP_E_TRAILING_DATA, "TrailingData"},
	};

	for (size_t i = 0; i < NV(names); i++)
		is_str(xmbp_status_name(names[i].s), names[i].name,
		       "status name %s", names[i].name);
}

/* One byte of the empty batch changed (at 10: one byte added), and what
 * decoding it gives: status and offset (-1: any). */
static const struct {
	size_t at;
	uint8_t value;
	enum xmbp_status want;
	long offset;
	const char *name;
} header_changes[] = {
	{0, 'X' ^ 0x20, XMBP_E_INVALID_MAGIC, 0,
	 "magic byte 0 changed: InvalidMagic at 0"},
	{1, 'M' ^ 0x20, XMBP_E_INVALID_MAGIC, 0,
	 "magic byte 1 changed: InvalidMagic at 0"},
	{2, 'B' ^ 0x20, XMBP_E_INVALID_MAGIC, 0,
	 "magic byte 2 changed: InvalidMagic at 0"},
	{3, 'P' ^ 0x20, XMBP_E_INVALID_MAGIC, 0,
	 "magic byte 3 changed: InvalidMagic at 0"},
	{4, 0, XMBP_E_UNSUPPORTED_VERSION, 4,
	 "version 0: UnsupportedVersion at 4"},
	{4, 2, XMBP_E_UNSUPPORTED_VERSION, 4,
	 "version 2: UnsupportedVersion at 4"},
	{4, 0xFF, XMBP_E_UNSUPPORTED_VERSION, 4,
	 "version 255: UnsupportedVersion at 4"},
	{5, 0x02, XMBP_E_UNSUPPORTED_VERSION, 5,
	 "flag bit 1 (zstd): UnsupportedVersion at 5"},
	{5, 0xFE, XMBP_E_UNSUPPORTED_VERSION, -1,
	 "flag bit 1 with all reserved bits: UnsupportedVersion"},
	/* Flag bit 0 set but only 10 bytes: device_id is cut off. */
	{5, 0x01, XMBP_E_UNEXPECTED_EOF, -1,
	 "device_id flag on a 10-byte batch: UnexpectedEof"},
	/* Trailing data: one extra byte after a valid batch. */
	{10, 0, XMBP_E_TRAILING_DATA, 10,
	 "one byte after an empty batch: TrailingData at 10"},
};

static void
test_header_errors(void)
{
	struct xmbp_error err;
	uint8_t b[16];

	for (size_t i = 0; i < NV(header_changes); i++) {
		size_t at = header_changes[i].at;
		long off = header_changes[i].offset;

		memcpy(b, empty10, 10);
		b[at] = header_changes[i].value;
		if (!ok(decode_copy(b, at < 10 ? 10 : at + 1, &err) ==
					header_changes[i].want &&
				(off < 0 || err.offset == (size_t)off) &&
				err.msg[0] != '\0',
			"%s", header_changes[i].name))
			diag("got %s at %zu", xmbp_status_name(err.status),
			     err.offset);
	}
	/* A short input that is not a prefix of XMBP is no batch at all. */
	ok(decode_copy((const uint8_t *)"XZ", 2, &err) == XMBP_E_INVALID_MAGIC,
	   "2 bytes \"XZ\": InvalidMagic");
	memcpy(b, empty10, 10);
	b[10] = 0;
	ok(xmbp_decode(b, 11, &(struct xmbp_batch){0}, NULL) ==
		   XMBP_E_TRAILING_DATA,
	   "a NULL err is allowed");
}

/* Every reserved tag, in a second block so the offset is not trivial. */
static void
test_value_types(void)
{
	struct xmbp_error err;
	unsigned int bad_status = 0, bad_off = 0, bad_valid = 0;
	char first[160] = "";

	for (unsigned int tag = 0; tag <= 0xFF; tag++) {
		enum xmbp_status s;
		size_t tagpos;

		hstart(tag % 2, 2);
		hblock(1, SAMPLE_I8, 1);
		h64(5);
		h8(0x80);
		tagpos = hlen + 2;
		hblock(2, tag, 0);
		s = decode_copy(hb, hlen, &err);
		if (tag < SAMPLE__MAX) {
			bad_valid += s != XMBP_OK;
			continue;
		}
		if (s != XMBP_E_INVALID_VALUE_TYPE) {
			if (bad_status++ == 0)
				snprintf(first, sizeof(first),
					 "tag 0x%02X: got %s", tag,
					 xmbp_status_name(s));
		} else if (err.offset != tagpos) {
			if (bad_off++ == 0)
				snprintf(first, sizeof(first),
					 "tag 0x%02X: offset %zu, want %zu",
					 tag, err.offset, tagpos);
		}
	}
	is_int(bad_valid, 0, "tags 0x00..0x0C in an empty block decode");
	if (!ok(bad_status == 0, "tags 0x0D..0xFF: InvalidValueType"))
		diag("%u bad; first %s", bad_status, first);
	if (!ok(bad_off == 0, "InvalidValueType offset is the tag byte"))
		diag("%u bad; first %s", bad_off, first);

	/* A reserved tag with samples after it is refused the same way. */
	hstart(0, 1);
	hblock(9, 0x0D, 1);
	h64(0);
	h32(0);
	if (expect(XMBP_E_INVALID_VALUE_TYPE, &err, "tag 0x0D with a sample"))
		is_int(err.offset, 12, "offset of the tag in the first block");
}

/* A string literal as (bytes, length), embedded NULs and all. */
#define S(x) x, sizeof(x) - 1

/*
 * Batches of one stream cut short: the block header (none when count is
 * 0 and tag is 0xFF), then the bytes that follow it.
 */
static const struct {
	unsigned int tag, count;
	const char *tail;
	size_t n;
	const char *name;
} cut_short[] = {
	{0xFF, 0, S(""), "stream_count 1, no block"},
	{SAMPLE_F64, 65535, S("\0\0\0\0\0\0\0\0"),
	 "65535 f64 announced, 8 bytes"},
	/* ts 0, length 100, 3 bytes */
	{SAMPLE_STRING, 1,
	 S("\0\0\0\0\0\0\0\0\x00\x64"
	   "abc"),
	 "string of 100 with 3 bytes"},
	/* ts 0, length 2^32-1, 2 bytes */
	{SAMPLE_JSON, 1, S("\0\0\0\0\0\0\0\0\xFF\xFF\xFF\xFF{}"),
	 "json of 4 GiB with 2 bytes"},
	/* ts 0, count 1, element 7, ts 0, count 4096 */
	{SAMPLE_I32_ARRAY, 2,
	 S("\0\0\0\0\0\0\0\0\x00\x01\x00\x00\x00\x07"
	   "\0\0\0\0\0\0\0\0\x10\x00"),
	 "second array cut off"},
	/* ts 0, one byte of the length */
	{SAMPLE_BYTES, 1, S("\0\0\0\0\0\0\0\0\0"), "length prefix cut in half"},
};

static void
test_eof(void)
{
	struct xmbp_error err;

	for (size_t i = 0; i < NV(cut_short); i++) {
		hstart(0, 1);
		if (cut_short[i].tag != 0xFF)
			hblock(1, cut_short[i].tag, cut_short[i].count);
		hput(cut_short[i].tail, cut_short[i].n);
		expect(XMBP_E_UNEXPECTED_EOF, &err, cut_short[i].name);
	}
}

static void
test_utf8(void)
{
	static const struct {
		const char *name, *s;
		size_t n;
		bool valid;
	} cases[] = {
		{"overlong C0 80", "\xC0\x80", 2, false},
		{"surrogate ED A0 80", "\xED\xA0\x80", 3, false},
		{"truncated E2 82", "\xE2\x82", 2, false},
		{"truncated 4-byte at the end", "ab\xF0\x9F\x98", 5, false},
		{"0xFF", "\xFF", 1, false},
		{"0xFF after ASCII", "abcdefghij\xFF", 11, false},
		{"above U+10FFFF", "\xF4\x90\x80\x80", 4, false},
		{"valid 4-byte F0 9F 98 80", "\xF0\x9F\x98\x80", 4, true},
		{"valid mixed", "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 10,
		 true},
	};
	struct xmbp_error err;

	for (int json = 0; json < 2; json++)
		for (size_t i = 0; i < NV(cases); i++) {
			enum sample_type t = json ? SAMPLE_JSON : SAMPLE_STRING;
			size_t start;
			char what[96];

			/* A valid sample first, then the one under test. */
			hstart(1, 1);
			hblock(3, t, 2);
			h64(1);
			json ? h32(2) : h16(2);
			hput("ok", 2);
			h64(2);
			json ? h32((uint32_t)cases[i].n)
			     : h16((unsigned int)cases[i].n);
			start = hlen;
			hput(cases[i].s, cases[i].n);
			snprintf(what, sizeof(what), "%s %s",
				 xmbp_sample_type_name(t), cases[i].name);
			if (cases[i].valid) {
				expect(XMBP_OK, &err, what);
				continue;
			}
			if (expect(XMBP_E_INVALID_UTF8, &err, what) &&
			    !ok(err.offset >= start &&
					err.offset < start + cases[i].n,
				"%s: offset inside the value", what))
				diag("offset %zu, value at %zu..%zu",
				     err.offset, start, start + cases[i].n);
		}
}

static void
test_limits(void)
{
	static const enum sample_type arrays[] = {
		SAMPLE_F64_ARRAY, SAMPLE_F32_ARRAY, SAMPLE_I32_ARRAY};
	struct xmbp_error err;
	struct xmbp_batch b;
	struct xmbp_stream xs;

	for (unsigned int n = 256; n <= 257; n++) {
		hstart(0, n);
		for (unsigned int i = 0; i < n; i++)
			hblock(i, i % SAMPLE__MAX, 0);
		if (n == 256) {
			expect(XMBP_OK, &err, "256 stream blocks");
			continue;
		}
		if (expect(XMBP_E_BUFFER_OVERFLOW, &err, "257 stream blocks"))
			is_int(err.offset, 8, "offset is stream_count");
	}
	hstart(1, 0xFFFF);
	expect(XMBP_E_BUFFER_OVERFLOW, &err, "stream_count 65535");

	for (size_t a = 0; a < NV(arrays); a++) {
		size_t elem = xmbp_sample_elem_size(arrays[a]);

		for (unsigned int n = 4096; n <= 4097; n++) {
			size_t cpos;
			char what[64];

			hstart(0, 1);
			hblock(1, arrays[a], 1);
			h64(0);
			cpos = hlen;
			h16(n);
			for (size_t k = 0; k < n * elem; k++)
				h8((unsigned int)k);
			snprintf(what, sizeof(what), "%s of %u elements",
				 xmbp_sample_type_name(arrays[a]), n);
			if (n == 4096) {
				expect(XMBP_OK, &err, what);
				continue;
			}
			if (expect(XMBP_E_BUFFER_OVERFLOW, &err, what))
				is_int(err.offset, cpos,
				       "%s: offset is the element count", what);
		}
	}

	/* The 256-block batch again, walked: the last block is reachable. */
	hstart(0, 256);
	for (unsigned int i = 0; i < 256; i++)
		hblock(i, SAMPLE_BOOL, 0);
	ok(xmbp_decode(hb, hlen, &b, NULL) == XMBP_OK && b.stream_count == 256,
	   "256 blocks decode in place");
	xmbp_stream_at(&b, 255, &xs);
	ok(xs.stream_id == 255 && xs.type == SAMPLE_BOOL &&
		   xs.sample_count == 0 && xs.data_len == 0,
	   "block 255 reads back");
}

/* Every strict prefix of the mixed batch, and the batch in a stream. */
static void
test_truncation(void)
{
	unsigned int bad_dec = 0, bad_frame = 0, bad_cat = 0, magic = 0;
	size_t first_dec = 0, first_frame = 0, first_cat = 0, blen = 0;
	enum xmbp_status s;
	struct xmbp_error err;
	uint8_t *two;
	static uint8_t second[64];
	size_t second_len = 0;
	struct xmbp_enc enc;

	for (size_t n = 0; n < mixed_len; n++) {
		s = decode_copy(mixed_buf, n, &err);
		magic += s == XMBP_E_INVALID_MAGIC;
		if (s != XMBP_E_UNEXPECTED_EOF && bad_dec++ == 0)
			first_dec = n;
		s = frame_copy(mixed_buf, n, &blen);
		if (s != XMBP_NEED_MORE && bad_frame++ == 0)
			first_frame = n;
	}
	if (!ok(bad_dec == 0, "each of the %zu strict prefixes: UnexpectedEof",
		mixed_len))
		diag("%u bad, first at length %zu: %s", bad_dec, first_dec,
		     xmbp_status_name(decode_copy(mixed_buf, first_dec, &err)));
	is_int(magic, 0, "no prefix is InvalidMagic");
	if (!ok(bad_frame == 0, "each strict prefix: frame says NeedMore"))
		diag("%u bad, first at length %zu: %s", bad_frame, first_frame,
		     xmbp_status_name(
			     frame_copy(mixed_buf, first_frame, &blen)));
	is_int(decode_copy(mixed_buf, mixed_len, &err), XMBP_OK,
	       "the full batch decodes");
	blen = 0;
	ok(frame_copy(mixed_buf, mixed_len, &blen) == XMBP_OK &&
		   blen == mixed_len,
	   "frame of the full batch: OK, batch_len = size");

	/* The batch followed by any prefix of the next one. */
	xmbp_enc_init(&enc, second, sizeof(second));
	xmbp_enc_begin(&enc, 8, NULL);
	xmbp_enc_stream(&enc, 1, SAMPLE_I16);
	xmbp_enc_i16(&enc, 1, -2);
	if (xmbp_enc_finish(&enc, &second_len) != XMBP_ENC_OK)
		abort();
	if ((two = malloc(mixed_len + second_len)) == NULL)
		abort();
	memcpy(two, mixed_buf, mixed_len);
	memcpy(two + mixed_len, second, second_len);
	for (size_t k = 0; k <= second_len; k++) {
		blen = 0;
		s = frame_copy(two, mixed_len + k, &blen);
		if ((s != XMBP_OK || blen != mixed_len) && bad_cat++ == 0)
			first_cat = k;
		if (k > 0 &&
		    decode_copy(two, mixed_len + k, &err) !=
			    XMBP_E_TRAILING_DATA &&
		    bad_cat++ == 0)
			first_cat = k;
	}
	if (!ok(bad_cat == 0, "batch + first k bytes of the next: frame OK "
			      "with the first's length, decode TrailingData"))
		diag("%u bad, first at k = %zu", bad_cat, first_cat);
	free(two);
}

/* Reserved flag bits 2-7 are ignored on read and reported as received. */
static void
test_reserved_flags(void)
{
	uint8_t *b = malloc(mixed_len);
	struct xmbp_batch batch;
	char why[256];
	unsigned int bad = 0;

	if (b == NULL)
		abort();
	for (unsigned int bit = 2; bit <= 8; bit++) {
		/* bit 8 stands for all of 2-7 at once */
		uint8_t flags = bit == 8 ? 0xFD : (uint8_t)(1u | 1u << bit);

		memcpy(b, mixed_buf, mixed_len);
		b[5] = flags;
		if (xmbp_decode(b, mixed_len, &batch, NULL) != XMBP_OK ||
		    batch.flags != flags || !batch.has_device_id ||
		    batch.device_id != devid)
			bad++;
	}
	is_int(bad, 0,
	       "reserved flag bits 2-7 (one at a time, all): decode "
	       "OK, flags as received");
	memcpy(b, mixed_buf, mixed_len);
	b[5] = 0xFD;
	if (!ok(check_model(b, mixed_len, mixed, NV(mixed), 7, &devid, 0xFD,
			    why, sizeof(why)),
		"with all reserved bits set every sample still decodes "
		"bit-exact"))
		diag("%s", why);
	free(b);

	hstart(0xFC, 0);
	ok(xmbp_decode(hb, hlen, &batch, NULL) == XMBP_OK &&
		   batch.flags == 0xFC && !batch.has_device_id &&
		   batch.stream_count == 0,
	   "flags 0xFC without device_id: 10-byte batch decodes");
}

/* The encoder never writes past its buffer, for every size. */
static void
test_guard(void)
{
	size_t full = mixed_len;
	uint8_t *area = malloc(full + 64);
	unsigned int bad_guard = 0, bad_state = 0;
	size_t first_guard = 0, first_state = 0;
	bool exact = false;

	if (area == NULL)
		abort();
	for (size_t n = 0; n <= full; n++) {
		enum xmbp_enc_state st;
		size_t len = 12345;

		memset(area, 0xA5, full + 64);
		st = encode_model(area, n, mixed, NV(mixed), 7, &devid, &len);
		for (size_t k = n; k < full + 64; k++)
			if (area[k] != 0xA5) {
				if (bad_guard++ == 0)
					first_guard = n;
				break;
			}
		if (n < full ? st != XMBP_ENC_OVERFLOW || len != 12345
			     : st != XMBP_ENC_OK || len != full) {
			if (bad_state++ == 0)
				first_state = n;
		}
		if (n == full)
			exact = st == XMBP_ENC_OK &&
				memcmp(area, mixed_buf, full) == 0;
	}
	if (!ok(bad_guard == 0,
		"encoding into N bytes, N = 0..%zu: nothing "
		"written past N",
		full))
		diag("%u bad, first N = %zu", bad_guard, first_guard);
	if (!ok(bad_state == 0,
		"finish: overflow below %zu (len untouched), "
		"OK at %zu",
		full, full))
		diag("%u bad, first N = %zu", bad_state, first_state);
	ok(exact, "at the full size the bytes equal the reference");
	free(area);
}

static void
test_sticky_overflow(void)
{
	uint8_t buf[64];
	char big[40];
	struct xmbp_enc enc;
	size_t len = 999, before;

	memset(big, 'x', sizeof(big));
	memset(buf, 0xA5, sizeof(buf));
	/* Header 10 + block 5 + 20 bytes of room. */
	xmbp_enc_init(&enc, buf, 35);
	xmbp_enc_begin(&enc, 0, NULL);
	xmbp_enc_stream(&enc, 1, SAMPLE_STRING);
	xmbp_enc_string(&enc, 1, "ok", 2);
	before = enc.len;
	xmbp_enc_string(&enc, 2, big, sizeof(big));
	ok(enc.state == XMBP_ENC_OVERFLOW && enc.len == before,
	   "a sample that does not fit: overflow, nothing of it written");
	ok(xmbp_enc_detail(&enc)[0] != '\0', "overflow has a detail");
	xmbp_enc_string(&enc, 3, "a", 1);
	xmbp_enc_stream(&enc, 2, SAMPLE_I8);
	xmbp_enc_i8(&enc, 3, 1);
	xmbp_enc_end_stream(&enc);
	is_int(enc.len, before, "later appends that would fit are ignored");
	ok(xmbp_enc_finish(&enc, &len) == XMBP_ENC_OVERFLOW && len == 999,
	   "finish still reports overflow and leaves len alone");
	ok(xmbp_enc_finish(&enc, &len) == XMBP_ENC_OVERFLOW,
	   "and again on a second finish");
	ok(buf[35] == 0xA5, "nothing written past cap");
}

/* Checks enc failed INVALID at call `what` and stays failed. */
static void
check_invalid(struct xmbp_enc *enc, size_t before, const char *what)
{
	const char *detail = xmbp_enc_detail(enc);
	size_t len = 4321, after;
	bool good = enc->state == XMBP_ENC_INVALID && enc->len == before &&
		    detail != NULL && detail[0] != '\0';

	/* Calls that would otherwise be fine change nothing now. */
	xmbp_enc_stream(enc, 9, SAMPLE_I8);
	xmbp_enc_i8(enc, 1, 1);
	xmbp_enc_end_stream(enc);
	after = enc->len;
	good = good && after == before && xmbp_enc_detail(enc) == detail &&
	       xmbp_enc_finish(enc, &len) == XMBP_ENC_INVALID && len == 4321;
	if (!ok(good, "%s: invalid, sticky, with a detail", what))
		diag("state %d, len %zu -> %zu, detail \"%s\"", (int)enc->state,
		     before, enc->len, detail ? detail : "");
}

/* The steps of a misuse test; the last one is the misuse. */
enum step {
	ST_NONE, /* ends the list */
	ST_BEGIN,
	ST_256_STREAMS, /* 256 bool streams, ids 0..255 */
	ST_STREAM_256,	/* one more bool stream, id 256 */
	ST_I32,
	ST_F64,
	ST_END_STREAM,
	ST_VALUE_0D, /* xmbp_enc_value() of the reserved type 0x0D */
	ST_STREAM    /* plus a type tag: a stream of that type, id 1 */
};

/* Calls that put the encoder in its INVALID state. */
static const struct {
	const char *name;
	enum step steps[6];
} misuses[] = {
	{"f64 sample in an f32 block",
	 LIST(ST_BEGIN, ST_STREAM + SAMPLE_F32, ST_F64)},
	{"sample before any stream", LIST(ST_BEGIN, ST_I32)},
	{"sample after end_stream",
	 LIST(ST_BEGIN, ST_STREAM + SAMPLE_I32, ST_I32, ST_END_STREAM, ST_I32)},
	{"stream before begin", LIST(ST_STREAM + SAMPLE_I8)},
	{"begin twice", LIST(ST_BEGIN, ST_BEGIN)},
	{"stream of type 0x0D", LIST(ST_BEGIN, ST_STREAM + 0x0D)},
	{"enc_value of type 0x0D",
	 LIST(ST_BEGIN, ST_STREAM + SAMPLE_I8, ST_VALUE_0D)},
	{"a 257th stream", LIST(ST_BEGIN, ST_256_STREAMS, ST_STREAM_256)},
};

/* Step k of a misuse test. */
static void
step(struct xmbp_enc *enc, enum step st, size_t k)
{
	switch (st) {
	case ST_NONE:
		abort();
	case ST_BEGIN:
		xmbp_enc_begin(enc, (uint16_t)k, NULL);
		break;
	case ST_256_STREAMS:
		for (unsigned int i = 0; i < 256; i++)
			xmbp_enc_stream(enc, (uint16_t)i, SAMPLE_BOOL);
		break;
	case ST_STREAM_256:
		xmbp_enc_stream(enc, 256, SAMPLE_BOOL);
		break;
	case ST_I32:
		xmbp_enc_i32(enc, k, 1);
		break;
	case ST_F64:
		xmbp_enc_f64(enc, k, 1.0);
		break;
	case ST_END_STREAM:
		xmbp_enc_end_stream(enc);
		break;
	case ST_VALUE_0D:
		xmbp_enc_value(
			enc, k,
			&(struct sample_value){.type = (enum sample_type)0x0D});
		break;
	default:
		xmbp_enc_stream(enc, 1, (enum sample_type)(st - ST_STREAM));
		break;
	}
}

/* Element bits of the largest arrays (zeros), and the largest texts. */
static const uint64_t zero_elems[XMBP_MAX_ARRAY + 1];
static char text[XMBP_MAX_VAR + 1];

/*
 * What fits a block, what does not: one value of n elements or bytes of
 * type, or for i8 n samples of it.  Each type's first row is the most
 * that fits, the second one more.
 */
static const struct {
	enum sample_type type;
	size_t fits, over;
	const char *fits_name, *over_name;
} limits[] = {
	{SAMPLE_F64_ARRAY, XMBP_MAX_ARRAY, XMBP_MAX_ARRAY + 1,
	 "f64_array of 4096 elements encodes", "f64_array of 4097 elements"},
	{SAMPLE_F32_ARRAY, XMBP_MAX_ARRAY, XMBP_MAX_ARRAY + 1,
	 "f32_array of 4096 elements encodes", "f32_array of 4097 elements"},
	{SAMPLE_I32_ARRAY, XMBP_MAX_ARRAY, XMBP_MAX_ARRAY + 1,
	 "i32_array of 4096 elements encodes", "i32_array of 4097 elements"},
	{SAMPLE_STRING, XMBP_MAX_VAR, XMBP_MAX_VAR + 1,
	 "string of 65535 bytes encodes", "string of 65536 bytes"},
	{SAMPLE_BYTES, XMBP_MAX_VAR, XMBP_MAX_VAR + 1, "bytes of 65535 encode",
	 "bytes of 65536"},
	/* 65535 samples in a block are fine; the 65536th is refused. */
	{SAMPLE_I8, XMBP_MAX_SAMPLES, 1, "65535 samples in one block",
	 "a 65536th sample in one block"},
};

/* Appends one value of n elements or bytes of type, or n i8 samples. */
static void
put(struct xmbp_enc *enc, enum sample_type type, size_t n)
{
	struct tval tv = {1, 0,
			  type == SAMPLE_STRING || type == SAMPLE_BYTES
				  ? (const void *)text
				  : (const void *)zero_elems,
			  n};

	if (type != SAMPLE_I8) {
		enc_tval(enc, type, &tv);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		tv.ts = i;
		tv.bits = i;
		enc_tval(enc, type, &tv);
	}
}

static void
test_misuse(void)
{
	static uint8_t buf[1 << 20];
	struct xmbp_enc enc;
	struct xmbp_batch b;
	struct xmbp_stream xs;
	size_t before, len, k;

	memset(text, 'y', sizeof(text));

	xmbp_enc_init(&enc, buf, sizeof(buf));
	is_str(xmbp_enc_detail(&enc), "", "no detail before a failure");
	for (size_t i = 0; i < NV(misuses); i++) {
		const enum step *st = misuses[i].steps;

		xmbp_enc_init(&enc, buf, sizeof(buf));
		for (k = 0; st[k + 1] != ST_NONE; k++)
			step(&enc, st[k], k);
		before = enc.len;
		step(&enc, st[k], k);
		check_invalid(&enc, before, misuses[i].name);
	}

	/* 256 streams are fine and decode. */
	xmbp_enc_init(&enc, buf, sizeof(buf));
	step(&enc, ST_BEGIN, 0);
	step(&enc, ST_256_STREAMS, 1);
	len = 0;
	ok(enc.state == XMBP_ENC_OK &&
		   xmbp_enc_finish(&enc, &len) == XMBP_ENC_OK &&
		   xmbp_decode(buf, len, &b, NULL) == XMBP_OK &&
		   b.stream_count == 256,
	   "256 streams encode and decode");

	for (size_t i = 0; i < NV(limits); i++) {
		xmbp_enc_init(&enc, buf, sizeof(buf));
		xmbp_enc_begin(&enc, 0, NULL);
		xmbp_enc_stream(&enc, 1, limits[i].type);
		put(&enc, limits[i].type, limits[i].fits);
		ok(enc.state == XMBP_ENC_OK, "%s", limits[i].fits_name);
		before = enc.len;
		put(&enc, limits[i].type, limits[i].over);
		check_invalid(&enc, before, limits[i].over_name);
	}

	/* json has a u32 prefix: 65536 bytes are fine. */
	xmbp_enc_init(&enc, buf, sizeof(buf));
	xmbp_enc_begin(&enc, 0, NULL);
	xmbp_enc_stream(&enc, 1, SAMPLE_JSON);
	xmbp_enc_json(&enc, 1, text, XMBP_MAX_VAR + 1);
	len = 0;
	ok(xmbp_enc_finish(&enc, &len) == XMBP_ENC_OK &&
		   len == 10 + 5 + 8 + 4 + 65536 &&
		   xmbp_decode(buf, len, &b, NULL) == XMBP_OK,
	   "json of 65536 bytes encodes and decodes");

	/* Invalid UTF-8 in string and json. */
	for (int json = 0; json < 2; json++) {
		static const char *const bad[] = {"\xC0\x80", "\xED\xA0\x80",
						  "\xE2\x82", "\xFF"};

		for (size_t i = 0; i < NV(bad); i++) {
			char what[64];

			xmbp_enc_init(&enc, buf, sizeof(buf));
			xmbp_enc_begin(&enc, 0, NULL);
			xmbp_enc_stream(&enc, 1,
					json ? SAMPLE_JSON : SAMPLE_STRING);
			before = enc.len;
			if (json)
				xmbp_enc_json(&enc, 1, bad[i], strlen(bad[i]));
			else
				xmbp_enc_string(&enc, 1, bad[i],
						strlen(bad[i]));
			snprintf(what, sizeof(what),
				 "%s with invalid UTF-8 #%zu",
				 json ? "json" : "string", i);
			check_invalid(&enc, before, what);
		}
	}

	/* A block of 65535 samples decodes. */
	xmbp_enc_init(&enc, buf, sizeof(buf));
	xmbp_enc_begin(&enc, 0, NULL);
	xmbp_enc_stream(&enc, 1, SAMPLE_I8);
	put(&enc, SAMPLE_I8, XMBP_MAX_SAMPLES);
	len = 0;
	ok(xmbp_enc_finish(&enc, &len) == XMBP_ENC_OK &&
		   len == 10 + 5 + 65535 * 9 &&
		   xmbp_decode(buf, len, &b, NULL) == XMBP_OK,
	   "a block of 65535 samples decodes");
	xmbp_stream_at(&b, 0, &xs);
	is_int(xs.sample_count, 65535, "its sample_count is 65535");

	xmbp_enc_init(&enc, buf, sizeof(buf));
	len = 77;
	ok(xmbp_enc_finish(&enc, &len) == XMBP_ENC_INVALID && len == 77 &&
		   xmbp_enc_detail(&enc)[0] != '\0',
	   "finish without begin: invalid, with a detail");
}

/* end_stream patches sample_count; stream and finish close open blocks. */
static void
test_end_stream(void)
{
	uint8_t buf[4096];
	struct xmbp_enc enc;
	struct xmbp_batch b;
	struct xmbp_stream xs;
	size_t b1, b2, b3, len = 0;

	xmbp_enc_init(&enc, buf, sizeof(buf));
	xmbp_enc_begin(&enc, 0, NULL);
	b1 = enc.len;
	xmbp_enc_stream(&enc, 7, SAMPLE_I16);
	for (int i = 0; i < 3; i++)
		xmbp_enc_i16(&enc, (uint64_t)i, (int16_t)i);
	ok(buf[b1 + 3] == 0 && buf[b1 + 4] == 0,
	   "sample_count is 0 while the block is open");
	xmbp_enc_end_stream(&enc);
	ok(buf[b1 + 3] == 0 && buf[b1 + 4] == 3,
	   "end_stream patches sample_count 3 at block + 3");
	xmbp_enc_end_stream(&enc);
	ok(enc.state == XMBP_ENC_OK && buf[b1 + 4] == 3,
	   "a second end_stream is harmless");

	b2 = enc.len;
	xmbp_enc_stream(&enc, 8, SAMPLE_BOOL);
	xmbp_enc_bool(&enc, 1, true);
	xmbp_enc_bool(&enc, 2, false);
	b3 = enc.len;
	xmbp_enc_stream(&enc, 9, SAMPLE_I8);
	ok(be16_get(buf + b2 + 3) == 2,
	   "opening a stream closes the open one (count 2)");
	for (int i = 0; i < 300; i++)
		xmbp_enc_i8(&enc, (uint64_t)i, (int8_t)i);
	ok(xmbp_enc_finish(&enc, &len) == XMBP_ENC_OK &&
		   be16_get(buf + b3 + 3) == 300 && be16_get(buf + 8) == 3,
	   "finish closes the last block (count 300, big-endian) and "
	   "writes stream_count 3");
	ok(xmbp_decode(buf, len, &b, NULL) == XMBP_OK && b.stream_count == 3,
	   "the three blocks decode");
	xmbp_stream_at(&b, 2, &xs);
	ok(xs.stream_id == 9 && xs.sample_count == 300 &&
		   xs.data_len == 300 * 9,
	   "the last block reads back");
}

/* Decoded variable-width values point into the input, not at copies. */
static void
test_no_copy(void)
{
	struct xmbp_batch b;
	bool inside = true;

	if (xmbp_decode(mixed_buf, mixed_len, &b, NULL) != XMBP_OK) {
		ok(false, "mixed batch decodes for the no-copy check");
		return;
	}
	for (uint16_t i = 0; i < b.stream_count; i++) {
		struct xmbp_stream xs;
		struct xmbp_sample_iter it;
		struct sample_value v;
		uint64_t ts;

		xmbp_stream_at(&b, i, &xs);
		if (xmbp_sample_fixed_size(xs.type) != 0)
			continue;
		xmbp_samples(&xs, &it);
		while (xmbp_sample_next(&it, &ts, &v)) {
			/* The payload follows the prefix just read by it. */
			size_t plen = xs.type == SAMPLE_JSON ? 4 : 2;

			if (v.u.raw.p < mixed_buf ||
			    v.u.raw.p > mixed_buf + mixed_len ||
			    be64_get(v.u.raw.p - plen - 8) != ts)
				inside = false;
		}
	}
	ok(inside, "string, bytes, array and json values point into the "
		   "input buffer, right after their prefix");

	/* The first string of the mixed batch, at a computable place. */
	{
		struct xmbp_stream xs;
		struct xmbp_sample_iter it;
		struct sample_value v;
		uint64_t ts;

		xmbp_stream_at(&b, 5, &xs);
		xmbp_samples(&xs, &it);
		xmbp_sample_next(&it, &ts, &v); /* "" */
		xmbp_sample_next(&it, &ts, &v); /* "a" */
		ok(xs.type == SAMPLE_STRING &&
			   v.u.raw.p == mixed_buf + b.block_off[5] + 5 +
						(8 + 2) + (8 + 2) &&
			   v.u.raw.len == 1 && v.u.raw.p[0] == 'a',
		   "string \"a\" is read in place in the input buffer");
	}
}

/* Random batches: testutil.h's rnd(), seeded in test_random(). */

static uint64_t
below(uint64_t n)
{
	return n == 0 ? 0 : rnd() % n;
}

/* Random valid UTF-8 of at most max bytes, characters of every width. */
static size_t
gen_utf8(uint8_t *p, size_t max)
{
	size_t n = 0;

	for (;;) {
		uint32_t c;
		size_t k;

		switch (below(4)) {
		case 0:
			c = (uint32_t)below(0x80);
			break;
		case 1:
			c = 0x80 + (uint32_t)below(0x780);
			break;
		case 2:
			do
				c = 0x800 + (uint32_t)below(0xF800);
			while (c >= 0xD800 && c <= 0xDFFF);
			break;
		default:
			c = 0x10000 + (uint32_t)below(0x100000);
			break;
		}
		k = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
		if (n + k > max)
			return n;
		if (k == 1) {
			p[n] = (uint8_t)c;
		} else {
			static const uint8_t lead[] = {0, 0, 0xC0, 0xE0, 0xF0};

			p[n] = (uint8_t)(lead[k] | c >> (6 * (k - 1)));
			for (size_t i = 1; i < k; i++)
				p[n + i] = (uint8_t)(0x80 |
						     (c >> (6 * (k - 1 - i)) &
						      0x3F));
		}
		n += k;
	}
}

/* Edge bit patterns mixed into the random floats. */
static const uint64_t f64_special[] = {
	0x7FF8000000000000,
	0xFFF8000000000000,
	0x7FF0000000000001,
	0x7FF0000000000000,
	0xFFF0000000000000,
	0x8000000000000000,
	0,
};
static const uint32_t f32_special[] = {
	0x7FC00000, 0xFFC00000, 0x7F800001, 0x7F800000,
	0xFF800000, 0x80000000, 0,
};

/* Arenas for one random batch's model. */
#define R_STREAMS 256
#define R_VALS (1 << 15)
#define R_BYTES (4u << 20)
#define R_ELEMS (1 << 18)
static struct tstream r_st[R_STREAMS];
static struct tval r_val[R_VALS];
static uint8_t r_bytes[R_BYTES];
static uint64_t r_elems[R_ELEMS];

/*
 * Draws one batch.  Sizes are bounded so that it stays below 4 MiB: big
 * values only in short blocks of small batches, long blocks only with
 * small values, many streams only with short blocks.
 */
static size_t
gen_batch(void)
{
	size_t nst = below(100) < 97 ? below(9) : below(257);
	size_t nv = 0, nb = 0, ne = 0;

	for (size_t i = 0; i < nst; i++) {
		struct tstream *s = &r_st[i];
		uint64_t r = below(100);
		size_t count = nst > 8 || r < 90 ? below(5)
			       : r < 99		 ? below(51)
						 : below(3001);
		bool big = nst <= 8 && count <= 4;

		s->id = (uint16_t)rnd();
		s->type = (enum sample_type)below(SAMPLE__MAX);
		s->s = &r_val[nv];
		if (count > R_VALS - nv)
			count = R_VALS - nv;
		s->n = count;
		for (size_t j = 0; j < count; j++) {
			struct tval *tv = &r_val[nv++];
			size_t max, elem = xmbp_sample_elem_size(s->type);

			tv->ts = below(4) == 0 ? below(1000) : rnd();
			tv->bits = rnd();
			tv->p = NULL;
			tv->n = 0;
			switch (s->type) {
			case SAMPLE_F64:
				if (below(8) == 0)
					tv->bits = f64_special[below(
						NV(f64_special))];
				break;
			case SAMPLE_F32:
				tv->bits = below(8) == 0
						   ? f32_special[below(
							     NV(f32_special))]
						   : (uint32_t)tv->bits;
				break;
			case SAMPLE_I64:
				if (below(16) == 0)
					tv->bits = below(2) ? 0x8000000000000000
							    : INT64_MAX;
				break;
			case SAMPLE_BOOL:
				tv->bits = below(2);
				break;
			case SAMPLE_STRING:
			case SAMPLE_JSON:
			case SAMPLE_BYTES:
				max = big && below(100) == 0 ? below(65536)
							     : below(33);
				if (max > R_BYTES - nb)
					max = R_BYTES - nb;
				if (s->type == SAMPLE_BYTES)
					for (size_t k = 0; k < max; k++)
						r_bytes[nb + k] =
							(uint8_t)rnd();
				else
					max = gen_utf8(r_bytes + nb, max);
				tv->p = r_bytes + nb;
				tv->n = max;
				nb += max;
				break;
			case SAMPLE_F64_ARRAY:
			case SAMPLE_F32_ARRAY:
			case SAMPLE_I32_ARRAY:
				max = !big		? below(9)
				      : below(200) == 0 ? XMBP_MAX_ARRAY
				      : below(20) == 0	? below(4097)
							: below(9);
				if (max > R_ELEMS - ne)
					max = R_ELEMS - ne;
				for (size_t k = 0; k < max; k++) {
					uint64_t e = rnd();

					if (below(8) == 0)
						e = elem == 8
							    ? f64_special[below(NV(
								      f64_special))]
							    : f32_special[below(NV(
								      f32_special))];
					r_elems[ne + k] = e;
				}
				tv->p = r_elems + ne;
				tv->n = max;
				ne += max;
				break;
			default: /* ints: the random bits, truncated */
				break;
			}
		}
	}
	return nst;
}

/* Re-encodes a decoded batch sample by sample with xmbp_enc_value(). */
static enum xmbp_enc_state
reencode(const struct xmbp_batch *b, uint8_t *buf, size_t cap, size_t *len,
	 const char **detail)
{
	struct xmbp_enc enc;

	xmbp_enc_init(&enc, buf, cap);
	xmbp_enc_begin(&enc, b->batch_seq,
		       b->has_device_id ? &b->device_id : NULL);
	for (uint16_t i = 0; i < b->stream_count; i++) {
		struct xmbp_stream xs;
		struct xmbp_sample_iter it;
		struct sample_value v;
		uint64_t ts;

		xmbp_stream_at(b, i, &xs);
		xmbp_enc_stream(&enc, xs.stream_id, xs.type);
		xmbp_samples(&xs, &it);
		while (xmbp_sample_next(&it, &ts, &v))
			xmbp_enc_value(&enc, ts, &v);
	}
	*detail = xmbp_enc_detail(&enc);
	return xmbp_enc_finish(&enc, len);
}

static void
test_random(void)
{
	const size_t cap = 8u << 20;
	uint8_t *a = malloc(cap), *c = malloc(cap);
	struct xmbp_batch *b = malloc(sizeof(*b));
	unsigned int bad_rt = 0, bad_model = 0, nbatches = 10000;
	unsigned long long samples = 0;
	unsigned int big_batches = 0, long_blocks = 0, full_arrays = 0,
		     long_texts = 0;
	size_t maxlen = 0;
	char why[256];
	const char *env = getenv("XMBP_TEST_SEED");
	uint64_t seed;

	if (a == NULL || c == NULL || b == NULL)
		abort();
	seed = env != NULL ? strtoull(env, NULL, 0) : 0x2545F4914F6CDD1DULL;
	rnd_seed(seed);
	diag("random round trip: splitmix64 seed 0x%016" PRIX64
	     " (set XMBP_TEST_SEED to change)",
	     seed);
	for (unsigned int n = 0; n < nbatches; n++) {
		size_t nst = gen_batch(), alen = 0, clen = 0, want;
		uint16_t seq = (uint16_t)rnd();
		uint32_t dev = (uint32_t)rnd();
		const char *detail = "";
		const uint32_t *devp = below(2) ? &dev : NULL;
		enum xmbp_enc_state st;
		size_t flen = 0;

		big_batches += nst > 8;
		for (size_t i = 0; i < nst; i++) {
			samples += r_st[i].n;
			long_blocks += r_st[i].n > 1000;
			for (size_t j = 0; j < r_st[i].n; j++) {
				size_t vn = r_st[i].s[j].n;

				full_arrays +=
					vn == XMBP_MAX_ARRAY &&
					xmbp_sample_elem_size(r_st[i].type);
				long_texts += vn > 1000;
			}
		}
		want = model_size(r_st, nst, devp != NULL);
		st = encode_model(a, cap, r_st, nst, seq, devp, &alen);
		if (st != XMBP_ENC_OK || alen != want) {
			if (bad_model++ == 0)
				diag("batch %u: encode state %d, len %zu, "
				     "want %zu",
				     n, (int)st, alen, want);
			continue;
		}
		if (alen > maxlen)
			maxlen = alen;
		if (!check_model(a, alen, r_st, nst, seq, devp, -1, why,
				 sizeof(why)) ||
		    xmbp_frame(a, alen, &flen, NULL) != XMBP_OK ||
		    flen != alen) {
			if (bad_model++ == 0)
				diag("batch %u (%zu streams): %s", n, nst, why);
			continue;
		}
		if (xmbp_decode(a, alen, b, NULL) != XMBP_OK)
			abort(); /* check_model just decoded it */
		st = reencode(b, c, cap, &clen, &detail);
		if (st != XMBP_ENC_OK || clen != alen ||
		    memcmp(a, c, alen) != 0) {
			if (bad_rt++ == 0) {
				size_t k = 0;

				while (st == XMBP_ENC_OK && k < alen &&
				       k < clen && a[k] == c[k])
					k++;
				diag("batch %u: re-encode state %d (%s), len "
				     "%zu vs %zu, first difference at %zu",
				     n, (int)st, detail, clen, alen, k);
			}
		}
	}
	diag("%u batches, %llu samples, largest %zu bytes; %u with over 8 "
	     "streams, %u blocks over 1000 samples, %u arrays of 4096, %u "
	     "values over 1000 bytes or elements",
	     nbatches, samples, maxlen, big_batches, long_blocks, full_arrays,
	     long_texts);
	if (!ok(bad_model == 0,
		"%u random batches: encoded size is doc/xmbp.md's "
		"formula, decode is bit-exact, frame finds the "
		"end",
		nbatches))
		diag("%u bad", bad_model);
	if (!ok(bad_rt == 0,
		"%u random batches: decode then re-encode with "
		"xmbp_enc_value gives identical bytes",
		nbatches))
		diag("%u bad", bad_rt);
	free(a);
	free(c);
	free(b);
}

int
main(void)
{
	test_types();
	test_layout();
	test_status_names();
	test_header_errors();
	test_value_types();
	test_eof();
	test_utf8();
	test_limits();
	test_truncation();
	test_reserved_flags();
	test_guard();
	test_sticky_overflow();
	test_misuse();
	test_end_stream();
	test_no_copy();
	test_random();
	return tap_done();
}
