/* SPDX-License-Identifier: MIT */
/*
 * t/unit/xmch.c - XMCH stored chunks (doc/xmbp.md): the exact layout, round
 * trips of every value type, compression when it pays, timestamp order, every
 * reader error, the 64 MiB limit on both sides, and status names.
 *
 * Every chunk handed to xmch_open() by the error tests is an exact-size
 * heap copy, so AddressSanitizer reports any read past its end.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <zstd.h>

#include "codec/be.h"
#include "codec/buf.h"
#include "codec/sample.h"
#include "codec/xmch.h"

#include "tap.h"
#include "testutil.h"

#define MIB (1024u * 1024u)

static const uint8_t zmagic[4] = {0x28, 0xB5, 0x2F, 0xFD};

/* A nested row of a table, written like a call so that clang-format packs
 * the rows: LIST(a, b) is {a, b}. */
#define LIST(...)                                                              \
	{                                                                      \
		__VA_ARGS__                                                    \
	}

/* Hex lines of n bytes, for a failed byte comparison. */
static void
dump(const char *what, const uint8_t *p, size_t n)
{
	char line[3 * 16 + 1];

	for (size_t i = 0; i < n; i += 16) {
		size_t o = 0;

		line[0] = '\0';
		for (size_t k = i; k < n && k < i + 16; k++)
			o += (size_t)snprintf(line + o, sizeof(line) - o,
					      "%02X ", p[k]);
		diag("%s %04zx: %s", what, i, line);
	}
}

/* Byte comparison with both sides dumped on failure. */
static bool __attribute__((format(printf, 5, 6)))
is_bytes(const uint8_t *got, size_t gotlen, const uint8_t *want, size_t wantlen,
	 const char *fmt, ...)
{
	char name[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (ok(gotlen == wantlen && memcmp(got, want, wantlen) == 0, "%s",
	       name))
		return true;
	diag("got %zu bytes, want %zu", gotlen, wantlen);
	dump("got ", got, gotlen);
	dump("want", want, wantlen);
	return false;
}

/* Plain chunks by hand, for what the writer refuses to build. */

/* Header fields as given; data_bytes from what follows. */
static void
mkchunk(struct buf *b, uint8_t tag, uint32_t count, uint64_t start,
	uint64_t end, const uint64_t *ts, size_t nts, const void *vals,
	size_t vlen)
{
	buf_init(b, 0);
	buf_append(b, "XMCH", 4);
	buf_putc(b, XMCH_VERSION);
	buf_putc(b, (char)tag);
	buf_putc(b, 0);
	buf_putc(b, 0);
	buf_put_be32(b, count);
	buf_put_be64(b, start);
	buf_put_be64(b, end);
	buf_put_be32(b, (uint32_t)(nts * 8 + vlen));
	for (size_t i = 0; i < nts; i++)
		buf_put_be64(b, ts[i]);
	buf_append(b, vals, vlen);
}

/* Builds a chunk with the writer; true when every add and finish worked. */
static bool
write_chunk(enum sample_type t, const uint64_t *ts,
	    const struct sample_value *v, size_t n, bool compress,
	    struct buf *out)
{
	struct xmch_writer w;
	struct xmch_error err;
	bool good = true;

	buf_init(out, 0);
	xmch_writer_init(&w, t);
	for (size_t i = 0; i < n && good; i++)
		if (xmch_writer_add(&w, ts[i], &v[i], &err) != XMCH_OK) {
			diag("add %zu: %s: %s", i, xmch_status_name(err.status),
			     err.msg);
			good = false;
		}
	if (good && xmch_writer_finish(&w, compress, out, &err) != XMCH_OK) {
		diag("finish: %s: %s", xmch_status_name(err.status), err.msg);
		good = false;
	}
	xmch_writer_free(&w);
	return good;
}

/*
 * Opens an exact-size heap copy of the n bytes at p.  On success every
 * sample is walked (so ASan sees the iterator too) and the chunk closed.
 * A failure must report the same status in err, with a message.
 */
static enum xmch_status
open_copy(const uint8_t *p, size_t n, struct xmch_error *err)
{
	struct xmch_chunk c;
	struct xmch_iter it;
	struct sample_value v;
	enum xmch_status st;
	uint64_t ts;
	uint8_t *copy;

	if ((copy = malloc(n > 0 ? n : 1)) == NULL)
		abort();
	if (n > 0)
		memcpy(copy, p, n);
	memset(err, 0, sizeof(*err));
	st = xmch_open(copy, n, &c, err);
	if (st == XMCH_OK) {
		xmch_iter_init(&c, &it);
		while (xmch_next(&it, &ts, &v))
			continue;
		xmch_close(&c);
	} else if (err->status != st || err->msg[0] == '\0') {
		diag("error record disagrees: status %s, msg \"%s\"",
		     xmch_status_name(err->status), err->msg);
		st = XMCH_OK; /* fail the caller's check */
	}
	free(copy);
	return st;
}

/* One check: opening the bytes gives want. */
static void
expect_open(const uint8_t *p, size_t n, enum xmch_status want, const char *name)
{
	struct xmch_error err;
	enum xmch_status st = open_copy(p, n, &err);

	if (!ok(st == want, "%s: %s", name, xmch_status_name(want)))
		diag("got %s (%s)", xmch_status_name(st), err.msg);
}

/* Bytes written over a chunk at offset at (AT_END: appended to it). */
struct patch {
	size_t at;
	const char *bytes;
	size_t n;
};
#define AT_END SIZE_MAX

static void
apply(struct buf *b, const struct patch *pt)
{
	if (pt->bytes == NULL)
		return;
	if (pt->at == AT_END)
		buf_append(b, pt->bytes, pt->n);
	else
		memcpy(b->p + pt->at, pt->bytes, pt->n);
}

/* One chunk made by hand with mkchunk(), then patched, and what opening
 * it gives. */
struct hand {
	const char *name;
	enum xmch_status want;
	uint8_t tag;
	uint32_t count;
	uint64_t start, end;
	uint64_t ts[3];
	size_t nts;
	const void *vals;
	size_t vlen;
	struct patch patch;
};

/* Value bytes whose content does not matter. */
static const uint8_t zero_vals[64];

static void
expect_hand(const struct hand *h, size_t n)
{
	struct buf b;

	for (size_t i = 0; i < n; i++) {
		mkchunk(&b, h[i].tag, h[i].count, h[i].start, h[i].end, h[i].ts,
			h[i].nts, h[i].vals, h[i].vlen);
		apply(&b, &h[i].patch);
		expect_open(b.p, b.len, h[i].want, h[i].name);
		buf_free(&b);
	}
}

/* Status names. */

static void
test_status_names(void)
{
	static const struct {
		enum xmch_status st;
		const char *name;
	} names[] = {
		{XMCH_OK, "ok"},
		{XMCH_E_INVALID_MAGIC, "InvalidMagic"},
		{XMCH_E_UNSUPPORTED_VERSION, "UnsupportedVersion"},
		{XMCH_E_INVALID_VALUE_TYPE, "InvalidValueType"},
		{XMCH_E_UNEXPECTED_EOF, "UnexpectedEof"},
		{XMCH_E_INVALID_UTF8, "InvalidUtf8"},
		{XMCH_E_TRAILING_DATA, "TrailingData"},
		{XMCH_E_INVALID_HEADER, "InvalidHeader"},
		{XMCH_E_UNORDERED, "UnorderedTimestamps"},
		{XMCH_E_TOO_LARGE, "TooLarge"},
		{XMCH_E_CORRUPT, "CorruptCompression"},
		{XMCH_E_INVALID_VALUE, "InvalidValue"},
		{XMCH_E_NOMEM, "OutOfMemory"},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		is_str(xmch_status_name(names[i].st), names[i].name,
		       "xmch_status_name(%d)", (int)names[i].st);
	/* A value outside the enum still gets a string, not NULL. */
	is_str(xmch_status_name((enum xmch_status)99), "unknown",
	       "xmch_status_name of an unknown status");
}

/* Layout, byte for byte. */

static void
test_layout(void)
{
	/* The layout shows in the rows: keep clang-format off them. */
	/* clang-format off */
	static const uint8_t want_i32[] = {
		'X', 'M', 'C', 'H', 0x01, 0x03, 0x00, 0x00, /* magic ver tag */
		0x00, 0x00, 0x00, 0x02,			    /* sample_count */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* start */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x09, /* end */
		0x00, 0x00, 0x00, 0x18,			    /* data_bytes */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* ts col */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x09,
		0xFF, 0xFF, 0xFF, 0xFE, 0x7F, 0x00, 0x00, 0x01, /* values */
	};
	static const uint8_t want_str[] = {
		'X', 'M', 'C', 'H', 0x01, 0x05, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x03,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06,
		0x00, 0x00, 0x00, 0x28,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x06,
		0x00, 0x00, 0x00, 0x02, 'h', 'i', /* u32 length prefixes */
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x02, 0xC3, 0xA9,
	};
	static const uint8_t want_f32a[] = {
		'X', 'M', 'C', 'H', 0x01, 0x08, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x02,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08,
		0x00, 0x00, 0x00, 0x20,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08,
		0x00, 0x00, 0x00, 0x02, /* u32 element count */
		0x3F, 0x80, 0x00, 0x00, 0xC0, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00,
	};
	static const uint8_t f32a[] = {0x3F, 0x80, 0x00, 0x00,
				       0xC0, 0x00, 0x00, 0x00};
	/* clang-format on */
	/* Chunks the writer builds from n samples, and their bytes. */
	static const struct {
		enum sample_type type;
		size_t n;
		uint64_t ts[3];
		struct test_value v[3];
		const uint8_t *want;
		size_t wantlen;
		const char *built, *name;
	} chunks[] = {
		{SAMPLE_I32, 2,
		 LIST(0x0102030405060708ULL, 0x0102030405060709ULL),
		 LIST(TV(SAMPLE_I32, (uint64_t)-2), TV(SAMPLE_I32, 0x7F000001)),
		 want_i32, sizeof(want_i32), "i32 chunk built",
		 "i32 chunk: header, then timestamp column, then values"},
		{SAMPLE_STRING, 3, LIST(5, 6, 6),
		 LIST(TV_RAW(SAMPLE_STRING, "hi", 2),
		      TV_RAW(SAMPLE_STRING, "", 0),
		      TV_RAW(SAMPLE_STRING, "\xC3\xA9", 2)),
		 want_str, sizeof(want_str), "string chunk built",
		 "string chunk: u32 length prefixes in the value column"},
		{SAMPLE_F32_ARRAY, 2, LIST(7, 8),
		 LIST(TV_RAW(SAMPLE_F32_ARRAY, f32a, 2),
		      TV_RAW(SAMPLE_F32_ARRAY, NULL, 0)),
		 want_f32a, sizeof(want_f32a), "f32_array chunk built",
		 "f32_array chunk: u32 element counts in the value column"},
	};
	uint64_t ts[258];
	struct sample_value v[258];
	struct buf out;

	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		for (size_t k = 0; k < chunks[i].n; k++)
			v[k] = val_row(&chunks[i].v[k]);
		ok(write_chunk(chunks[i].type, chunks[i].ts, v, chunks[i].n,
			       false, &out),
		   "%s", chunks[i].built);
		is_bytes(out.p, out.len, chunks[i].want, chunks[i].wantlen,
			 "%s", chunks[i].name);
		buf_free(&out);
	}

	/* A count above 255 shows sample_count is a big-endian u32. */
	for (size_t i = 0; i < 258; i++) {
		ts[i] = i;
		v[i] = val_bits(SAMPLE_BOOL, i % 3 == 0);
	}
	if (ok(write_chunk(SAMPLE_BOOL, ts, v, 258, false, &out) &&
		       out.len == 32 + 258 * 9,
	       "258 bool samples: 32 + 258 * 9 bytes")) {
		is_bytes(out.p + 8, 4, (const uint8_t *)"\x00\x00\x01\x02", 4,
			 "sample_count 258 is 00 00 01 02");
		is_bytes(out.p + 20, 8,
			 (const uint8_t *)"\x00\x00\x00\x00\x00\x00\x01\x01", 8,
			 "end_ts_us 257 is big-endian");
		is_bytes(out.p + 28, 4, (const uint8_t *)"\x00\x00\x09\x12", 4,
			 "data_bytes 2322 is 00 00 09 12");
		ok(out.p[32 + 258 * 8] == 1 && out.p[32 + 258 * 8 + 1] == 0,
		   "bool values are bytes 01 and 00 after the timestamps");
	}
	buf_free(&out);
}

static void
test_empty(void)
{
	static const enum sample_type types[] = {SAMPLE_F64, SAMPLE_STRING,
						 SAMPLE_I32_ARRAY};
	struct xmch_chunk c;
	struct xmch_iter it;
	struct xmch_error err;
	struct sample_value v;
	struct buf out;
	uint64_t ts;

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		for (int z = 0; z <= 1; z++) {
			uint8_t want[32] = {'X', 'M', 'C', 'H', 0x01};
			const char *name = xmbp_sample_type_name(types[i]);

			want[5] = (uint8_t)types[i];
			ok(write_chunk(types[i], NULL, NULL, 0, z, &out),
			   "empty %s chunk built (compress %d)", name, z);
			/* 32 bytes never shrink under zstd: stays plain. */
			is_bytes(out.p, out.len, want, sizeof(want),
				 "empty %s chunk (compress %d) is the 32-byte "
				 "header, data_bytes 0",
				 name, z);
			if (xmch_open(out.p, out.len, &c, &err) == XMCH_OK) {
				xmch_iter_init(&c, &it);
				ok(c.sample_count == 0 && !c.compressed &&
					   c.start_ts == 0 && c.end_ts == 0 &&
					   !xmch_next(&it, &ts, &v),
				   "empty %s chunk opens with no samples",
				   name);
				xmch_close(&c);
			} else
				ok(false, "empty %s chunk opens: %s", name,
				   err.msg);
			buf_free(&out);
		}
}

/* Round trips of all 13 types. */

#define ARRAY_MAX 4096
#define LONG_VAR 70000 /* past the u16 of XMBP: XMCH prefixes are u32 */

static const uint64_t f64_edges[] = {
	0x0000000000000000ULL, 0x8000000000000000ULL, /* 0.0, -0.0 */
	0x3FB999999999999AULL, 0x3FF8000000000000ULL, /* 0.1, 1.5 */
	0x7FF8000000000000ULL, 0xFFF8000000000000ULL, /* quiet NaNs */
	0x7FF0000000000001ULL, 0x7FF4000000000000ULL, /* signalling NaNs */
	0x7FFFFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFFFULL, /* all-ones NaNs */
	0x7FF0000000000000ULL, 0xFFF0000000000000ULL, /* infinities */
	0x0000000000000001ULL, 0x800FFFFFFFFFFFFFULL, /* subnormals */
	0x7FEFFFFFFFFFFFFFULL,			      /* DBL_MAX */
};
static const uint32_t f32_edges[] = {
	0x00000000, 0x80000000, 0x3DCCCCCD, 0x3FC00000, 0x7FC00000,
	0xFFC00000, 0x7F800001, 0x7FA00000, 0x7FFFFFFF, 0xFFFFFFFF,
	0x7F800000, 0xFF800000, 0x00000001, 0x807FFFFF, 0x7F7FFFFF,
};
#define NF64 (sizeof(f64_edges) / sizeof(f64_edges[0]))
#define NF32 (sizeof(f32_edges) / sizeof(f32_edges[0]))

/* Big-endian element storage for the array values. */
static uint8_t f64a_edges[NF64 * 8], f64a_big[ARRAY_MAX * 8];
static uint8_t f32a_edges[NF32 * 4], f32a_big[ARRAY_MAX * 4];
static uint8_t i32a_edges[5 * 4], i32a_big[ARRAY_MAX * 4];
static uint8_t long_var[LONG_VAR], all_bytes[256];

static void
fill_arrays(void)
{
	static const int32_t i32e[5] = {INT32_MIN, -1, 0, 1, INT32_MAX};

	for (size_t i = 0; i < NF64; i++)
		be64_put(f64a_edges + 8 * i, f64_edges[i]);
	for (size_t i = 0; i < NF32; i++)
		be32_put(f32a_edges + 4 * i, f32_edges[i]);
	for (size_t i = 0; i < 5; i++)
		be32_put(i32a_edges + 4 * i, (uint32_t)i32e[i]);
	/* Mostly a ramp (compressible), with the edge patterns mixed in. */
	for (size_t i = 0; i < ARRAY_MAX; i++) {
		double d = (double)i * 0.5;
		uint64_t b;
		uint32_t b32;
		float f = (float)i * 0.25f;

		memcpy(&b, &d, sizeof(b));
		memcpy(&b32, &f, sizeof(b32));
		be64_put(f64a_big + 8 * i,
			 i % 97 == 0 ? f64_edges[i % NF64] : b);
		be32_put(f32a_big + 4 * i,
			 i % 89 == 0 ? f32_edges[i % NF32] : b32);
		be32_put(i32a_big + 4 * i, (uint32_t)((int32_t)i - 2048));
	}
	for (size_t i = 0; i < LONG_VAR; i++)
		long_var[i] = (uint8_t)('a' + i % 26);
	for (size_t i = 0; i < 256; i++)
		all_bytes[i] = (uint8_t)i;
}

/* The edge values of the types other than f64 and f32, in order. */
static const struct test_value edges[] = {
	TV(SAMPLE_I64, (uint64_t)INT64_MIN),
	TV(SAMPLE_I64, (uint64_t)INT64_MIN + 1),
	TV(SAMPLE_I64, (uint64_t)-1),
	TV(SAMPLE_I64, 0),
	TV(SAMPLE_I64, INT64_MAX),
	TV(SAMPLE_I32, (uint64_t)INT32_MIN),
	TV(SAMPLE_I32, (uint64_t)-1),
	TV(SAMPLE_I32, 0),
	TV(SAMPLE_I32, INT32_MAX),
	TV(SAMPLE_I16, (uint64_t)INT16_MIN),
	TV(SAMPLE_I16, (uint64_t)-1),
	TV(SAMPLE_I16, 0),
	TV(SAMPLE_I16, INT16_MAX),
	TV(SAMPLE_I8, (uint64_t)INT8_MIN),
	TV(SAMPLE_I8, (uint64_t)-1),
	TV(SAMPLE_I8, 0),
	TV(SAMPLE_I8, INT8_MAX),
	TV(SAMPLE_BOOL, false),
	TV(SAMPLE_BOOL, true),
	TV(SAMPLE_BOOL, true),
	TV(SAMPLE_BOOL, false),
	TV_RAW(SAMPLE_STRING, "", 0),
	TV_RAW(SAMPLE_STRING, NULL, 0),
	TV_RAW(SAMPLE_STRING, "a", 1),
	TV_RAW(SAMPLE_STRING, "caf\xC3\xA9", 5),
	TV_RAW(SAMPLE_STRING, "\xF0\x9F\x98\x80", 4), /* U+1F600 */
	TV_RAW(SAMPLE_STRING, "\xF4\x8F\xBF\xBF", 4), /* U+10FFFF */
	TV_RAW(SAMPLE_STRING, "nul\0inside", 10),     /* U+0000 */
	TV_RAW(SAMPLE_STRING, long_var, LONG_VAR),
	TV_RAW(SAMPLE_BYTES, NULL, 0),
	TV_RAW(SAMPLE_BYTES, "\x00", 1),
	TV_RAW(SAMPLE_BYTES, "\x00\x00\xFF", 3),
	TV_RAW(SAMPLE_BYTES, "\xC3\x28\xFF", 3), /* not UTF-8: fine */
	TV_RAW(SAMPLE_BYTES, all_bytes, 256),
	TV_RAW(SAMPLE_BYTES, long_var, LONG_VAR),
	TV_RAW(SAMPLE_F64_ARRAY, NULL, 0),
	TV_RAW(SAMPLE_F64_ARRAY, f64a_edges, NF64),
	TV_RAW(SAMPLE_F64_ARRAY, f64a_big, ARRAY_MAX),
	TV_RAW(SAMPLE_F64_ARRAY, f64a_big + 8, 1),
	TV_RAW(SAMPLE_F32_ARRAY, NULL, 0),
	TV_RAW(SAMPLE_F32_ARRAY, f32a_edges, NF32),
	TV_RAW(SAMPLE_F32_ARRAY, f32a_big, ARRAY_MAX),
	TV_RAW(SAMPLE_F32_ARRAY, f32a_big + 4, 1),
	TV_RAW(SAMPLE_I32_ARRAY, NULL, 0),
	TV_RAW(SAMPLE_I32_ARRAY, i32a_edges, 5),
	TV_RAW(SAMPLE_I32_ARRAY, i32a_big, ARRAY_MAX),
	TV_RAW(SAMPLE_JSON, "", 0), /* the chunk checks UTF-8 only */
	TV_RAW(SAMPLE_JSON, "{}", 2),
	TV_RAW(SAMPLE_JSON, "[1,2,{\"a\":null}]", 16),
	TV_RAW(SAMPLE_JSON, "\"\xF0\x9F\x98\x80\"", 6),
	TV_RAW(SAMPLE_JSON, long_var, LONG_VAR),
};

/* The edge values of type t into v; returns how many. */
static size_t
edge_set(enum sample_type t, struct sample_value *v)
{
	size_t n = 0;

	if (t == SAMPLE_F64)
		for (size_t i = 0; i < NF64; i++)
			v[n++] = val_f64_bits(f64_edges[i]);
	else if (t == SAMPLE_F32)
		for (size_t i = 0; i < NF32; i++)
			v[n++] = val_f32_bits(f32_edges[i]);
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++)
		if (edges[i].type == t)
			v[n++] = val_row(&edges[i]);
	return n;
}

/*
 * Timestamps for n samples: pairs of equal ones (allowed), starting at 0
 * and ending at the largest u64.
 */
static void
edge_times(uint64_t *ts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ts[i] = (uint64_t)(i / 2) * 1000;
	if (n > 1)
		ts[n - 1] = UINT64_MAX;
}

static void
roundtrip(enum sample_type t, bool compress)
{
	const char *name = xmbp_sample_type_name(t);
	const char *how = compress ? "compress" : "plain";
	struct sample_value want[32], got;
	uint64_t ts[32], gts;
	struct xmch_chunk c;
	struct xmch_iter it;
	struct xmch_error err;
	struct buf out;
	size_t n = edge_set(t, want), i, bad = SIZE_MAX;
	bool zstd;

	edge_times(ts, n);
	if (!ok(write_chunk(t, ts, want, n, compress, &out),
		"%s (%s): writer takes %zu edge values", name, how, n)) {
		buf_free(&out);
		return;
	}
	zstd = out.len >= 4 && memcmp(out.p, zmagic, 4) == 0;
	if (compress)
		ok(zstd || (out.len >= 6 && out.p[5] == (uint8_t)t),
		   "%s (%s): stored as zstd or as a plain %s chunk", name, how,
		   name);
	else
		ok(!zstd && out.len >= 32 &&
			   memcmp(out.p, "XMCH\x01", 5) == 0 &&
			   out.p[5] == (uint8_t)t,
		   "%s (%s): plain, magic XMCH, version 1, tag 0x%02X", name,
		   how, (unsigned int)t);
	if (xmch_open(out.p, out.len, &c, &err) != XMCH_OK) {
		ok(false, "%s (%s): opens: %s: %s", name, how,
		   xmch_status_name(err.status), err.msg);
		buf_free(&out);
		return;
	}
	ok(c.type == t && c.sample_count == n && c.start_ts == ts[0] &&
		   c.end_ts == ts[n - 1] && c.compressed == zstd &&
		   c.stored_len == out.len,
	   "%s (%s): type, count %zu, start/end, compressed %d, stored_len",
	   name, how, n, zstd);
	xmch_iter_init(&c, &it);
	for (i = 0; xmch_next(&it, &gts, &got); i++)
		if (bad == SIZE_MAX && (i >= n || gts != ts[i] ||
					!xmbp_sample_equal(&got, &want[i])))
			bad = i;
	if (!ok(i == n && bad == SIZE_MAX,
		"%s (%s): all %zu samples read back bit-exact", name, how, n))
		diag("read %zu samples, first difference at %zu", i, bad);
	ok(!xmch_next(&it, &gts, &got), "%s (%s): the walk stays at its end",
	   name, how);
	xmch_close(&c);
	buf_free(&out);
}

static void
test_roundtrips(void)
{
	for (unsigned int t = 0; t < SAMPLE__MAX; t++) {
		roundtrip((enum sample_type)t, false);
		roundtrip((enum sample_type)t, true);
	}
}

/* Compression when it pays, and not otherwise. */

static void
test_compression(void)
{
	enum { N = 10000 };
	static uint64_t ts[N];
	static struct sample_value v[N];
	struct xmch_chunk c;
	struct xmch_iter it;
	struct xmch_error err;
	struct sample_value got;
	struct buf plain, packed;
	uint64_t gts;
	uint8_t *back;
	size_t i, bad = SIZE_MAX, blen;

	for (i = 0; i < N; i++) {
		ts[i] = 1700000000000000ULL + i * 1000;
		v[i] = val_f64_bits(0x4034000000000000ULL); /* 20.0 */
	}
	ok(write_chunk(SAMPLE_F64, ts, v, N, false, &plain) &&
		   plain.len == 32 + (size_t)N * 16,
	   "10000 f64 plain: 32 + 10000 * 16 bytes");
	ok(write_chunk(SAMPLE_F64, ts, v, N, true, &packed),
	   "10000 f64 compressed: built");
	ok(packed.len >= 4 && memcmp(packed.p, zmagic, 4) == 0,
	   "stored as a zstd frame (28 B5 2F FD)");
	diag("plain %zu bytes, compressed %zu", plain.len, packed.len);
	ok(packed.len * 4 < plain.len,
	   "compressed is much smaller than plain (under 1/4)");

	/* The frame's content is exactly the plain chunk. */
	back = malloc(plain.len + 1);
	blen = back == NULL ? 0
			    : ZSTD_decompress(back, plain.len + 1, packed.p,
					      packed.len);
	ok(back != NULL && !ZSTD_isError(blen) && blen == plain.len &&
		   memcmp(back, plain.p, blen) == 0,
	   "the zstd frame holds exactly the plain chunk");
	free(back);

	if (xmch_open(packed.p, packed.len, &c, &err) == XMCH_OK) {
		ok(c.compressed && c.stored_len == packed.len &&
			   c.sample_count == N && c.start_ts == ts[0] &&
			   c.end_ts == ts[N - 1],
		   "xmch_open reports compressed, stored_len and the header");
		xmch_iter_init(&c, &it);
		for (i = 0; xmch_next(&it, &gts, &got); i++)
			if (bad == SIZE_MAX &&
			    (i >= N || gts != ts[i] ||
			     !xmbp_sample_equal(&got, &v[i])))
				bad = i;
		ok(i == N && bad == SIZE_MAX,
		   "compressed chunk reads back all 10000 samples");
		xmch_close(&c);
	} else
		ok(false, "compressed chunk opens: %s", err.msg);
	buf_free(&plain);
	buf_free(&packed);

	/*
	 * xmch.h: compression pays from 128 plain bytes on.  One bytes
	 * sample of zeros makes a chunk of 44 + n bytes that zstd shrinks
	 * far more than an eighth either way, so only the size decides.
	 */
	{
		static const uint8_t zeros[84];
		struct sample_value z;

		ts[0] = 0;
		z = val_raw(SAMPLE_BYTES, zeros, 83);
		ok(write_chunk(SAMPLE_BYTES, ts, &z, 1, true, &packed) &&
			   packed.len == 127 &&
			   memcmp(packed.p, "XMCH", 4) == 0,
		   "127-byte chunk of zeros with compress: stored plain");
		buf_free(&packed);
		z = val_raw(SAMPLE_BYTES, zeros, 84);
		ok(write_chunk(SAMPLE_BYTES, ts, &z, 1, true, &packed) &&
			   packed.len < 128 - 128 / 8 &&
			   memcmp(packed.p, zmagic, 4) == 0,
		   "128-byte chunk of zeros with compress: a zstd frame");
		buf_free(&packed);
	}

	/* One random sample: zstd's frame overhead exceeds any gain. */
	ts[0] = rnd();
	v[0] = val_f64_bits(rnd());
	ok(write_chunk(SAMPLE_F64, ts, v, 1, true, &packed),
	   "one random f64 with compress: built");
	ok(packed.len == 48 && memcmp(packed.p, "XMCH", 4) == 0,
	   "stored plain (48 bytes): compression would not pay");
	if (xmch_open(packed.p, packed.len, &c, &err) == XMCH_OK) {
		xmch_iter_init(&c, &it);
		ok(!c.compressed && xmch_next(&it, &gts, &got) &&
			   gts == ts[0] && xmbp_sample_equal(&got, &v[0]),
		   "opens as plain, the sample intact");
		xmch_close(&c);
	} else
		ok(false, "tiny chunk opens: %s", err.msg);
	buf_free(&packed);
}

/* Timestamp order and header agreement. */

/* Chunks the writer would not build. */
static const struct hand order_chunks[] = {
	{"descending timestamp column (9, 5)", XMCH_E_UNORDERED, SAMPLE_F64, 2,
	 9, 5, LIST(9, 5), 2, zero_vals, 16, LIST(0)},
	{"timestamp column (5, 3, 7) dips in the middle", XMCH_E_UNORDERED,
	 SAMPLE_I64, 3, 5, 7, LIST(5, 3, 7), 3, long_var, 24, LIST(0)},
	{"start_ts_us 4, first timestamp 5", XMCH_E_INVALID_HEADER, SAMPLE_I64,
	 3, 4, 7, LIST(5, 6, 7), 3, long_var, 24, LIST(0)},
	{"end_ts_us 8, last timestamp 7", XMCH_E_INVALID_HEADER, SAMPLE_I64, 3,
	 5, 8, LIST(5, 6, 7), 3, long_var, 24, LIST(0)},
	{"empty chunk with start_ts_us 1", XMCH_E_INVALID_HEADER, SAMPLE_I64, 0,
	 1, 0, LIST(0), 0, NULL, 0, LIST(0)},
	{"empty chunk with end_ts_us 1", XMCH_E_INVALID_HEADER, SAMPLE_I64, 0,
	 0, 1, LIST(0), 0, NULL, 0, LIST(0)},
	{"the same chunk, consistent", XMCH_OK, SAMPLE_I64, 3, 5, 7,
	 LIST(5, 6, 7), 3, long_var, 24, LIST(0)},
	{"reserved bytes 01 00", XMCH_E_INVALID_HEADER, SAMPLE_I64, 3, 5, 7,
	 LIST(5, 6, 7), 3, long_var, 24, LIST(6, "\x01", 1)},
	{"reserved bytes 00 80", XMCH_E_INVALID_HEADER, SAMPLE_I64, 3, 5, 7,
	 LIST(5, 6, 7), 3, long_var, 24, LIST(7, "\x80", 1)},
};

static void
test_timestamps(void)
{
	struct xmch_writer w;
	struct xmch_error err;
	struct xmch_chunk c;
	struct xmch_iter it;
	struct sample_value v, got;
	struct buf out;
	uint64_t gts;
	enum xmch_status st;
	bool good;

	/* Equal timestamps are allowed. */
	xmch_writer_init(&w, SAMPLE_I8);
	v = val_bits(SAMPLE_I8, 1);
	good = xmch_writer_add(&w, 5, &v, &err) == XMCH_OK &&
	       xmch_writer_add(&w, 5, &v, &err) == XMCH_OK &&
	       xmch_writer_add(&w, 5, &v, &err) == XMCH_OK;
	ok(good, "writer accepts three equal timestamps");
	buf_init(&out, 0);
	ok(xmch_writer_finish(&w, false, &out, &err) == XMCH_OK &&
		   open_copy(out.p, out.len, &err) == XMCH_OK,
	   "chunk with equal timestamps opens");
	buf_free(&out);
	xmch_writer_free(&w);

	/* A step back is refused and leaves the writer as it was. */
	xmch_writer_init(&w, SAMPLE_F64);
	v = val_f64_bits(0x3FF0000000000000ULL); /* 1.0 */
	is_int(xmch_writer_add(&w, 10, &v, &err), XMCH_OK, "add ts 10");
	v = val_f64_bits(0x4000000000000000ULL); /* 2.0 */
	memset(&err, 0, sizeof(err));
	st = xmch_writer_add(&w, 9, &v, &err);
	ok(st == XMCH_E_UNORDERED && err.status == XMCH_E_UNORDERED &&
		   err.msg[0] != '\0',
	   "add ts 9 after 10: UnorderedTimestamps (%s)", err.msg);
	v = val_f64_bits(0x4008000000000000ULL); /* 3.0 */
	is_int(xmch_writer_add(&w, 10, &v, &err), XMCH_OK,
	       "add ts 10 again after the refusal");
	v = val_f64_bits(0x4010000000000000ULL); /* 4.0 */
	is_int(xmch_writer_add(&w, UINT64_MAX, &v, &err), XMCH_OK,
	       "add ts 2^64-1");
	v = val_f64_bits(0x4014000000000000ULL); /* 5.0 */
	is_int(xmch_writer_add(&w, 0, &v, &err), XMCH_E_UNORDERED,
	       "add ts 0 after 2^64-1: UnorderedTimestamps");
	buf_init(&out, 0);
	if (xmch_writer_finish(&w, false, &out, &err) == XMCH_OK &&
	    xmch_open(out.p, out.len, &c, &err) == XMCH_OK) {
		static const uint64_t wts[3] = {10, 10, UINT64_MAX};
		static const uint64_t wbits[3] = {0x3FF0000000000000ULL,
						  0x4008000000000000ULL,
						  0x4010000000000000ULL};
		size_t i;

		good = c.sample_count == 3 && c.start_ts == 10 &&
		       c.end_ts == UINT64_MAX;
		xmch_iter_init(&c, &it);
		for (i = 0; xmch_next(&it, &gts, &got); i++) {
			v = val_f64_bits(i < 3 ? wbits[i] : 0);
			good = good && i < 3 && gts == wts[i] &&
			       xmbp_sample_equal(&got, &v);
		}
		ok(good && i == 3,
		   "the chunk holds only the accepted samples, in order");
		xmch_close(&c);
	} else
		ok(false, "chunk after refusals opens: %s", err.msg);
	buf_free(&out);
	xmch_writer_free(&w);

	expect_hand(order_chunks,
		    sizeof(order_chunks) / sizeof(order_chunks[0]));
}

/* Reader errors. */

/* Changes to a valid i32 chunk, and what opening it then gives. */
static const struct {
	const char *name;
	enum xmch_status want;
	struct patch patch;
} header_patches[] = {
	{"magic XMCI", XMCH_E_INVALID_MAGIC, LIST(3, "I", 1)},
	{"magic XMBP (a batch, not a chunk)", XMCH_E_INVALID_MAGIC,
	 LIST(0, "XMBP", 4)},
	{"version 0", XMCH_E_UNSUPPORTED_VERSION, LIST(4, "\x00", 1)},
	{"version 2", XMCH_E_UNSUPPORTED_VERSION, LIST(4, "\x02", 1)},
	{"value type 0x0D", XMCH_E_INVALID_VALUE_TYPE, LIST(5, "\x0D", 1)},
	{"value type 0xFF", XMCH_E_INVALID_VALUE_TYPE, LIST(5, "\xFF", 1)},
	{"one byte after an i32 chunk", XMCH_E_TRAILING_DATA,
	 LIST(AT_END, "\x00", 1)},
};

/* Chunks with more data than they announce, or less. */
static const struct hand bad_chunks[] = {
	{"one byte after an empty chunk", XMCH_E_TRAILING_DATA, SAMPLE_STRING,
	 0, 0, 0, LIST(0), 0, NULL, 0, LIST(AT_END, "x", 1)},
	/* Extra bytes inside data_bytes, after the last value. */
	{"i32 value column one byte too long", XMCH_E_TRAILING_DATA, SAMPLE_I32,
	 2, 1, 2, LIST(1, 2), 2, zero_vals, 9, LIST(0)},
	{"string value column one byte too long", XMCH_E_TRAILING_DATA,
	 SAMPLE_STRING, 2, 1, 2, LIST(1, 2), 2,
	 "\x00\x00\x00\x01"
	 "a"
	 "\x00\x00\x00\x00"
	 "z",
	 10, LIST(0)},
	/* Announced sizes the data cannot hold. */
	{"string length 5 with 2 bytes left", XMCH_E_UNEXPECTED_EOF,
	 SAMPLE_STRING, 1, 1, 1, LIST(1), 1,
	 "\x00\x00\x00\x05"
	 "ab",
	 6, LIST(0)},
	{"f64_array count 2^32-1 with 8 bytes left", XMCH_E_UNEXPECTED_EOF,
	 SAMPLE_F64_ARRAY, 1, 1, 1, LIST(1), 1,
	 "\xFF\xFF\xFF\xFF"
	 "abcdefgh",
	 12, LIST(0)},
	/* Counts whose byte size wraps in 32 bits to what is present. */
	{"f64_array count 0x20000001 with 8 bytes left", XMCH_E_UNEXPECTED_EOF,
	 SAMPLE_F64_ARRAY, 1, 1, 1, LIST(1), 1,
	 "\x20\x00\x00\x01"
	 "abcdefgh",
	 12, LIST(0)},
	{"i32_array count 0x40000001 with 4 bytes left", XMCH_E_UNEXPECTED_EOF,
	 SAMPLE_I32_ARRAY, 1, 1, 1, LIST(1), 1,
	 "\x40\x00\x00\x01"
	 "abcd",
	 8, LIST(0)},
	{"sample_count 5, data for 2", XMCH_E_UNEXPECTED_EOF, SAMPLE_F64, 5, 1,
	 2, LIST(1, 2), 2, zero_vals, 16, LIST(0)},
	{"sample_count 2^32-1, data for 2", XMCH_E_UNEXPECTED_EOF, SAMPLE_F64,
	 UINT32_MAX, 1, 2, LIST(1, 2), 2, zero_vals, 16, LIST(0)},
	{"data_bytes 2^32-1 with 32 present", XMCH_E_UNEXPECTED_EOF, SAMPLE_F64,
	 2, 1, 2, LIST(1, 2), 2, zero_vals, 16,
	 LIST(28, "\xFF\xFF\xFF\xFF", 4)},
};

/* A small valid plain chunk of type t from its edge values. */
static void
sample_chunk(enum sample_type t, size_t max, bool compress, struct buf *out)
{
	struct sample_value v[32];
	uint64_t ts[32];
	size_t n = edge_set(t, v);

	if (n > max)
		n = max;
	edge_times(ts, n);
	if (!write_chunk(t, ts, v, n, compress, out))
		diag("could not build a %s chunk", xmbp_sample_type_name(t));
}

/*
 * Opens every strict prefix of the chunk: true when each gives want, or
 * any failure when want is XMCH_OK.
 */
static bool
prefixes_fail(const struct buf *b, enum xmch_status want)
{
	struct xmch_error err;
	enum xmch_status st;

	for (size_t n = 0; n < b->len; n++) {
		st = open_copy(b->p, n, &err);
		if (st == XMCH_OK || (want != XMCH_OK && st != want)) {
			diag("prefix of %zu of %zu bytes: %s", n, b->len,
			     xmch_status_name(st));
			return false;
		}
	}
	return true;
}

/* A zstd frame of the n bytes at p, with a content checksum. */
static bool
zstd_checksummed(const uint8_t *p, size_t n, struct buf *out)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	size_t r;

	buf_init(out, 0);
	if (cc == NULL || !buf_reserve(out, ZSTD_compressBound(n)))
		return false;
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 3);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
	r = ZSTD_compress2(cc, out->p, out->cap, p, n);
	ZSTD_freeCCtx(cc);
	if (ZSTD_isError(r))
		return false;
	out->len = r;
	return true;
}

static void
test_reader_errors(void)
{
	static const enum sample_type var_types[] = {
		SAMPLE_STRING,	  SAMPLE_BYTES,	    SAMPLE_F64_ARRAY,
		SAMPLE_F32_ARRAY, SAMPLE_I32_ARRAY, SAMPLE_JSON};
	static const struct {
		const char *bytes;
		size_t len;
		const char *what;
	} bad_utf8[] = {
		{"\xC3\x28", 2, "C3 28 (bad continuation)"},
		{"\xC0\x80", 2, "C0 80 (overlong U+0000)"},
		{"\xED\xA0\x80", 3, "ED A0 80 (surrogate U+D800)"},
		{"\xF4\x90\x80\x80", 4, "F4 90 80 80 (above U+10FFFF)"},
		{"ok\xE2\x82", 4, "E2 82 (sequence cut at the end)"},
		{"\xFF", 1, "FF"},
	};
	struct xmch_error err;
	struct buf b, z, two;
	uint8_t vals[64];
	uint64_t ts[2] = {1, 2};
	size_t i, errors = 0, mid;

	/* Magic, version, value type, and a byte after the chunk. */
	sample_chunk(SAMPLE_I32, 4, false, &b);
	expect_open(b.p, b.len, XMCH_OK, "i32 chunk as built");
	for (i = 0; i < sizeof(header_patches) / sizeof(header_patches[0]);
	     i++) {
		buf_init(&two, 0);
		buf_append(&two, b.p, b.len);
		apply(&two, &header_patches[i].patch);
		expect_open(two.p, two.len, header_patches[i].want,
			    header_patches[i].name);
		buf_free(&two);
	}
	buf_free(&b);
	expect_open((const uint8_t *)"Y", 1, XMCH_E_INVALID_MAGIC,
		    "the single byte Y");
	expect_hand(bad_chunks, sizeof(bad_chunks) / sizeof(bad_chunks[0]));

	/* Every strict prefix of a plain chunk, for each variable type. */
	for (i = 0; i < sizeof(var_types) / sizeof(var_types[0]); i++) {
		sample_chunk(var_types[i], 4, false, &b);
		ok(prefixes_fail(&b, XMCH_E_UNEXPECTED_EOF),
		   "every strict prefix (0..%zu) of a plain %s chunk: "
		   "UnexpectedEof",
		   b.len - 1, xmbp_sample_type_name(var_types[i]));
		buf_free(&b);
	}
	sample_chunk(SAMPLE_F64, 32, false, &b);
	ok(prefixes_fail(&b, XMCH_E_UNEXPECTED_EOF),
	   "every strict prefix of a plain f64 chunk: UnexpectedEof");
	buf_free(&b);

	/* UTF-8 in string and json values. */
	for (i = 0; i < sizeof(bad_utf8) / sizeof(bad_utf8[0]); i++) {
		be32_put(vals, (uint32_t)bad_utf8[i].len);
		memcpy(vals + 4, bad_utf8[i].bytes, bad_utf8[i].len);
		mkchunk(&b, SAMPLE_STRING, 1, 1, 1, ts, 1, vals,
			4 + bad_utf8[i].len);
		expect_open(b.p, b.len, XMCH_E_INVALID_UTF8, bad_utf8[i].what);
		b.p[5] = SAMPLE_JSON;
		expect_open(b.p, b.len, XMCH_E_INVALID_UTF8,
			    "json value with invalid UTF-8");
		b.p[5] = SAMPLE_BYTES;
		expect_open(b.p, b.len, XMCH_OK,
			    "the same bytes as a bytes value");
		buf_free(&b);
	}

	/* Compressed chunks: truncation, trailing bytes, corruption. */
	{
		struct sample_value v[300];
		uint64_t t300[300];
		char text[300][16];

		for (i = 0; i < 300; i++) {
			int n = snprintf(text[i], sizeof(text[i]),
					 "sensor-%zu ok", i % 7);

			t300[i] = 1000 + i * 10;
			v[i] = val_raw(SAMPLE_STRING, text[i], (size_t)n);
		}
		ok(write_chunk(SAMPLE_STRING, t300, v, 300, true, &z) &&
			   z.len >= 4 && memcmp(z.p, zmagic, 4) == 0,
		   "300 strings: compressed");
		ok(write_chunk(SAMPLE_STRING, t300, v, 300, false, &b),
		   "300 strings: plain");
	}
	expect_open(z.p, z.len, XMCH_OK, "the compressed chunk");
	ok(prefixes_fail(&z, XMCH_OK),
	   "every strict prefix (0..%zu) of the compressed chunk fails",
	   z.len - 1);

	buf_init(&two, 0);
	buf_append(&two, z.p, z.len);
	buf_append(&two, "\x00\x01\x02", 3);
	expect_open(two.p, two.len, XMCH_E_TRAILING_DATA,
		    "3 bytes after the zstd frame");
	two.len = z.len;
	buf_append(&two, z.p, z.len);
	expect_open(two.p, two.len, XMCH_E_TRAILING_DATA,
		    "a second zstd frame after the first");
	buf_free(&two);

	/* With a content checksum any changed byte must be noticed. */
	ok(zstd_checksummed(b.p, b.len, &two), "checksummed frame built");
	expect_open(two.p, two.len, XMCH_OK, "the checksummed frame");
	mid = two.len / 2;
	for (i = mid - 2; i <= mid + 2; i++)
		two.p[i] ^= 0xA5;
	{
		enum xmch_status st = open_copy(two.p, two.len, &err);

		ok(st != XMCH_OK,
		   "checksummed frame with 5 bytes flipped in the middle "
		   "fails (%s)",
		   xmch_status_name(st));
	}
	for (i = mid - 2; i <= mid + 2; i++)
		two.p[i] ^= 0xA5;

	/* Flip each byte of both frames in turn: errors, never a crash. */
	for (i = 0; i < z.len; i++) {
		z.p[i] ^= 0xFF;
		if (open_copy(z.p, z.len, &err) != XMCH_OK)
			errors++;
		z.p[i] ^= 0xFF;
	}
	for (i = 0; i < two.len; i++) {
		two.p[i] ^= 0xFF;
		if (open_copy(two.p, two.len, &err) != XMCH_OK)
			errors++;
		two.p[i] ^= 0xFF;
	}
	ok(errors > 0, "byte flips over both frames: refusals, no crash");
	/*
	 * The writer's frames carry no content checksum, so a flip inside
	 * literal bytes can decode to another valid chunk: only the
	 * checksummed frame above must always fail.
	 */
	diag("byte flips: %zu of %zu frame bytes refused", errors,
	     z.len + two.len);
	buf_free(&two);
	buf_free(&z);
	buf_free(&b);

	/* The error record is optional. */
	ok(xmch_open((const uint8_t *)"XMCX", 4, &(struct xmch_chunk){0},
		     NULL) == XMCH_E_INVALID_MAGIC,
	   "xmch_open with a NULL error record");
}

/* The 64 MiB limit. */

/*
 * The first 44 bytes of a one-sample bytes chunk of total bytes: the
 * header, the timestamp and the value's length prefix.  Zeros after it
 * make the chunk valid, whatever its size.
 */
static void
bytes_head(uint8_t h[44], size_t total)
{
	memcpy(h, "XMCH\x01\x06\x00\x00", 8);
	be32_put(h + 8, 1);
	be64_put(h + 12, 0);
	be64_put(h + 20, 0);
	be32_put(h + 28, (uint32_t)(total - XMCH_HEADER_SIZE));
	be64_put(h + 32, 0);
	be32_put(h + 40, (uint32_t)(total - 44));
}

/* Runs the n bytes at p through the compressor, appending its output. */
static bool
feed(ZSTD_CCtx *cc, const void *p, size_t n, ZSTD_EndDirective end,
     struct buf *out)
{
	ZSTD_inBuffer in = {p, n, 0};
	uint8_t tmp[16384];
	size_t r;

	do {
		ZSTD_outBuffer ob = {tmp, sizeof(tmp), 0};

		r = ZSTD_compressStream2(cc, &ob, &in, end);
		if (ZSTD_isError(r))
			return false;
		buf_append(out, tmp, ob.pos);
	} while (end == ZSTD_e_end ? r != 0 : in.pos < in.size);
	return !out->failed;
}

/*
 * A zstd frame whose content is head then zeros up to total bytes.  It
 * is compressed as a stream from a small zero block, so the test itself
 * never holds the content (and its own peak RSS stays low).  With
 * pledge the frame header carries the content size.
 */
static bool
zero_frame(const uint8_t *head, size_t hlen, size_t total, bool pledge,
	   struct buf *out)
{
	static const uint8_t zeros[64 * 1024];
	ZSTD_CCtx *cc;
	size_t left = total - hlen, k;
	bool good;

	buf_init(out, 0);
	if ((cc = ZSTD_createCCtx()) == NULL)
		return false;
	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1);
	if (pledge)
		ZSTD_CCtx_setPledgedSrcSize(cc, total);
	good = feed(cc, head, hlen, ZSTD_e_continue, out);
	for (; good && left > 0; left -= k) {
		k = left < sizeof(zeros) ? left : sizeof(zeros);
		good = feed(cc, zeros, k, ZSTD_e_continue, out);
	}
	good = good && feed(cc, NULL, 0, ZSTD_e_end, out);
	ZSTD_freeCCtx(cc);
	return good;
}

/*
 * A zstd frame made by hand: the n bytes at p in raw blocks, with an
 * 8-byte Frame_Content_Size field that says fcs, whatever n is (RFC 8878
 * section 3.1.1: descriptor 0xC0 = 8-byte size, a window descriptor, no
 * checksum, no dictionary; window 2^17; blocks of at most 128 KiB).
 */
static void
raw_frame(struct buf *out, const uint8_t *p, size_t n, uint64_t fcs)
{
	uint8_t h[14] = {0x28, 0xB5, 0x2F, 0xFD, 0xC0, 7 << 3};

	for (int i = 0; i < 8; i++)
		h[6 + i] = (uint8_t)(fcs >> (8 * i));
	buf_init(out, 0);
	buf_append(out, h, sizeof(h));
	do {
		size_t k = n < 128 * 1024 ? n : 128 * 1024;
		uint32_t bh = (uint32_t)(k << 3) | (k == n ? 1 : 0);
		uint8_t x[3] = {(uint8_t)bh, (uint8_t)(bh >> 8),
				(uint8_t)(bh >> 16)};

		buf_append(out, x, 3);
		buf_append(out, p, k);
		p += k;
		n -= k;
	} while (n > 0);
}

/* Peak resident set size of this process so far, in KiB (Linux). */
static long
peak_rss_kib(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return -1;
	return ru.ru_maxrss;
}

static void
test_decompression_cap(void)
{
	uint8_t head[44];
	struct buf bomb65p, bomb65, bomb1g, claim, plain;
	struct xmch_error err;
	enum xmch_status st;
	long rss0, rss1;

	/* The frames are built first: the RSS peak below is the reader's. */
	bytes_head(head, 65 * MIB);
	ok(zero_frame(head, 44, 65 * MIB, true, &bomb65p),
	   "65 MiB chunk as a zstd frame with content size");
	ok(zero_frame(head, 44, 65 * MIB, false, &bomb65),
	   "65 MiB chunk as a zstd frame without content size");
	bytes_head(head, 32);
	head[28] = head[29] = head[30] = head[31] = 0xFF; /* "4 GiB of data" */
	ok(zero_frame(head, 32, 1024 * MIB, false, &bomb1g),
	   "1 GiB of content as a zstd frame");
	diag("bomb frames: %zu, %zu and %zu bytes", bomb65p.len, bomb65.len,
	     bomb1g.len);
	sample_chunk(SAMPLE_STRING, 8, false, &plain);
	raw_frame(&claim, plain.p, plain.len, plain.len);
	expect_open(claim.p, claim.len, XMCH_OK,
		    "hand-made raw-block frame with the true content size");
	buf_free(&claim);
	raw_frame(&claim, plain.p, plain.len, 1ULL << 62);

	/*
	 * Only the 1 GiB bomb and the false claim run between the two
	 * readings: ASan keeps freed blocks in quarantine (up to 256 MiB),
	 * so several 64 MiB decompressions in a row would add up even
	 * though each is freed.  This runs before any other big test, so
	 * the earlier peak is small.
	 */
	rss0 = peak_rss_kib();
	expect_open(bomb1g.p, bomb1g.len, XMCH_E_TOO_LARGE,
		    "1 GiB content: stops at the limit");
	/*
	 * A frame that claims 2^62 bytes but holds a small chunk.  A reader
	 * that sized its buffer from the claim would get OutOfMemory (or,
	 * under ASan, abort on an allocation over its maximum); this one
	 * grows with what comes out and finds the claim false at the end.
	 */
	st = open_copy(claim.p, claim.len, &err);
	ok(st != XMCH_OK && st != XMCH_E_NOMEM,
	   "frame claiming 2^62 bytes of content fails without allocating "
	   "them (%s: %s)",
	   xmch_status_name(st), err.msg);
	rss1 = peak_rss_kib();
	/*
	 * The reader may hold up to 64 MiB of output, and its doubling
	 * reallocs pass through 32 MiB + 64 MiB.  ASan keeps the freed
	 * smaller blocks in quarantine and adds 1/8 shadow, so about
	 * 150 MiB is expected under the sanitizers (about 64-96 MiB
	 * without); 200 MiB still rules out decompressing the 1 GiB or
	 * allocating any claimed size.
	 */
	if (!ok(rss0 > 0 && rss1 - rss0 < 200 * 1024,
		"peak RSS grew by under 200 MiB while refusing the bomb"))
		diag("peak RSS %ld KiB before, %ld KiB after", rss0, rss1);
	else
		diag("peak RSS grew by %ld KiB", rss1 - rss0);
	expect_open(bomb65p.p, bomb65p.len, XMCH_E_TOO_LARGE,
		    "65 MiB content, size in the frame header");
	expect_open(bomb65.p, bomb65.len, XMCH_E_TOO_LARGE,
		    "65 MiB content, size not in the frame header");
	buf_free(&claim);
	buf_free(&bomb65p);
	buf_free(&bomb65);
	buf_free(&bomb1g);

	raw_frame(&claim, plain.p, plain.len, XMCH_MAX_BYTES + 1ULL);
	st = open_copy(claim.p, claim.len, &err);
	ok(st != XMCH_OK && st != XMCH_E_NOMEM,
	   "frame claiming 64 MiB + 1 of content, holding less, fails (%s)",
	   xmch_status_name(st));
	buf_free(&claim);
	/* Block_Type 3 is reserved (RFC 8878 3.1.1.2): a corrupt frame. */
	raw_frame(&claim, plain.p, plain.len, plain.len);
	claim.p[14] |= 0x06;
	expect_open(claim.p, claim.len, XMCH_E_CORRUPT,
		    "frame whose block has the reserved type 3");
	buf_free(&claim);
	raw_frame(&claim, plain.p, plain.len, 10);
	st = open_copy(claim.p, claim.len, &err);
	ok(st != XMCH_OK, "frame claiming 10 bytes, holding more, fails (%s)",
	   xmch_status_name(st));
	buf_free(&claim);
	buf_free(&plain);

	/* Exactly at the limit, compressed: allowed; one byte more: not. */
	bytes_head(head, XMCH_MAX_BYTES);
	ok(zero_frame(head, 44, XMCH_MAX_BYTES, true, &bomb65),
	   "chunk of exactly 64 MiB compressed");
	expect_open(bomb65.p, bomb65.len, XMCH_OK,
		    "compressed chunk of exactly 64 MiB (size in header)");
	buf_free(&bomb65);
	ok(zero_frame(head, 44, XMCH_MAX_BYTES, false, &bomb65),
	   "chunk of exactly 64 MiB compressed without content size");
	expect_open(bomb65.p, bomb65.len, XMCH_OK,
		    "compressed chunk of exactly 64 MiB (size not in header)");
	buf_free(&bomb65);
	bytes_head(head, XMCH_MAX_BYTES + 1);
	ok(zero_frame(head, 44, XMCH_MAX_BYTES + 1, true, &bomb65),
	   "valid-looking chunk of 64 MiB + 1 compressed");
	expect_open(bomb65.p, bomb65.len, XMCH_E_TOO_LARGE,
		    "compressed chunk of 64 MiB + 1");
	buf_free(&bomb65);

	/* Plain input: the same limit, before anything else is read. */
	{
		uint8_t *big = calloc(1, XMCH_MAX_BYTES + 1);

		if (big == NULL)
			abort();
		bytes_head(big, XMCH_MAX_BYTES);
		is_int(xmch_open(big, XMCH_MAX_BYTES, &(struct xmch_chunk){0},
				 &err),
		       XMCH_OK, "plain chunk of exactly 64 MiB opens");
		bytes_head(big, XMCH_MAX_BYTES + 1);
		is_int(xmch_open(big, XMCH_MAX_BYTES + 1,
				 &(struct xmch_chunk){0}, &err),
		       XMCH_E_TOO_LARGE,
		       "valid-looking plain chunk of 64 MiB + 1: TooLarge");
		free(big);
	}
}

/* Writer limits. */

static void
test_writer_limits(void)
{
	/* Values a writer of another type refuses. */
	static const struct {
		enum sample_type writer;
		struct test_value v;
		const char *name;
	} wrong[] = {
		{SAMPLE_F64, TV(SAMPLE_I64, 1),
		 "an i64 value in an f64 writer: InvalidValue"},
		{SAMPLE_F64, TV(SAMPLE_F32, 0),
		 "an f32 value in an f64 writer: InvalidValue"},
		{SAMPLE_STRING, TV_RAW(SAMPLE_BYTES, "x", 1),
		 "a bytes value in a string writer: InvalidValue"},
		{SAMPLE_F32_ARRAY, TV_RAW(SAMPLE_F64_ARRAY, f64a_edges, 1),
		 "an f64_array value in an f32_array writer: InvalidValue"},
	};
	/* Strings a string writer refuses, at timestamps 1, 2, 3. */
	static const struct {
		const char *bytes;
		size_t n;
		const char *name;
	} bad_text[] = {
		{"\xC3\x28", 2, "string C3 28: InvalidUtf8"},
		{"\xED\xA0\x80", 3,
		 "string ED A0 80 (a surrogate): InvalidUtf8"},
		{"\xC0\x80", 2, "string C0 80 (overlong): InvalidUtf8"},
	};
	static uint8_t payload[65535];
	const size_t per = 8 + 4 + sizeof(payload);
	struct xmch_writer w;
	struct xmch_error err;
	struct xmch_chunk c;
	struct sample_value v, tiny;
	struct buf out;
	enum xmch_status st = XMCH_OK;
	size_t n, rest;

	/* Wrong types. */
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		xmch_writer_init(&w, wrong[i].writer);
		v = val_row(&wrong[i].v);
		is_int(xmch_writer_add(&w, 1, &v, &err), XMCH_E_INVALID_VALUE,
		       "%s", wrong[i].name);
		xmch_writer_free(&w);
	}

	/* A type that is not one of the 13: nothing a reader would refuse. */
	xmch_writer_init(&w, SAMPLE__MAX);
	v = val_raw(SAMPLE__MAX, "x", 1);
	st = xmch_writer_add(&w, 1, &v, &err);
	buf_init(&out, 0);
	if (st == XMCH_OK)
		st = xmch_writer_finish(&w, false, &out, &err) != XMCH_OK
			     ? XMCH_E_INVALID_VALUE
			     : open_copy(out.p, out.len, &err);
	if (!ok(st == XMCH_E_INVALID_VALUE,
		"value type 0x0D in a 0x0D writer is refused: InvalidValue"))
		diag("got %s: %s", xmch_status_name(st), err.msg);
	buf_free(&out);
	xmch_writer_free(&w);

	/* UTF-8, and the writer unchanged after each refusal. */
	xmch_writer_init(&w, SAMPLE_STRING);
	for (size_t i = 0; i < sizeof(bad_text) / sizeof(bad_text[0]); i++) {
		v = val_raw(SAMPLE_STRING, bad_text[i].bytes, bad_text[i].n);
		is_int(xmch_writer_add(&w, i + 1, &v, &err),
		       XMCH_E_INVALID_UTF8, "%s", bad_text[i].name);
	}
	v = val_raw(SAMPLE_STRING, "ok", 2);
	is_int(xmch_writer_add(&w, 0, &v, &err), XMCH_OK,
	       "then a valid string at ts 0 (refusals set no timestamp)");
	buf_init(&out, 0);
	if (xmch_writer_finish(&w, false, &out, &err) == XMCH_OK &&
	    xmch_open(out.p, out.len, &c, &err) == XMCH_OK) {
		ok(c.sample_count == 1 && c.start_ts == 0,
		   "the chunk holds the valid string only");
		xmch_close(&c);
	} else
		ok(false, "string chunk after refusals opens: %s", err.msg);
	buf_free(&out);
	xmch_writer_free(&w);
	xmch_writer_init(&w, SAMPLE_JSON);
	v = val_raw(SAMPLE_JSON, "\"\xFF\"", 3);
	is_int(xmch_writer_add(&w, 1, &v, &err), XMCH_E_INVALID_UTF8,
	       "json \"FF\": InvalidUtf8");
	xmch_writer_free(&w);

	/* Fill a bytes chunk with 65535-byte values until refused. */
	memset(payload, 0xAB, sizeof(payload));
	xmch_writer_init(&w, SAMPLE_BYTES);
	v = val_raw(SAMPLE_BYTES, payload, sizeof(payload));
	for (n = 0; n < 2 * (XMCH_MAX_BYTES / per); n++)
		if ((st = xmch_writer_add(&w, n, &v, &err)) != XMCH_OK)
			break;
	is_int(st, XMCH_E_TOO_LARGE, "65535-byte values: refused, TooLarge");
	if (!ok(XMCH_HEADER_SIZE + n * per <= XMCH_MAX_BYTES &&
			XMCH_HEADER_SIZE + (n + 1) * per > XMCH_MAX_BYTES,
		"refused exactly when the next value would pass 64 MiB "
		"(%zu taken)",
		n))
		diag("%zu values of %zu bytes each", n, per);
	/* What is left fits one value of exactly the remaining size. */
	rest = XMCH_MAX_BYTES - XMCH_HEADER_SIZE - n * per;
	v = val_raw(SAMPLE_BYTES, payload, rest - 12);
	is_int(xmch_writer_add(&w, n, &v, &err), XMCH_OK,
	       "a value filling the chunk to exactly 64 MiB is taken");
	tiny = val_raw(SAMPLE_BYTES, NULL, 0);
	is_int(xmch_writer_add(&w, n, &tiny, &err), XMCH_E_TOO_LARGE,
	       "then even an empty value is refused");
	buf_init(&out, 0);
	ok(xmch_writer_finish(&w, false, &out, &err) == XMCH_OK &&
		   out.len == XMCH_MAX_BYTES,
	   "finished plain chunk is exactly 64 MiB");
	if (xmch_open(out.p, out.len, &c, &err) == XMCH_OK) {
		ok(c.sample_count == n + 1, "it opens with %zu samples", n + 1);
		xmch_close(&c);
	} else
		ok(false, "64 MiB plain chunk opens: %s: %s",
		   xmch_status_name(err.status), err.msg);
	buf_free(&out);
	/* The writer must not build what the reader refuses. */
	buf_init(&out, 0);
	ok(xmch_writer_finish(&w, true, &out, &err) == XMCH_OK &&
		   out.len >= 4 && memcmp(out.p, zmagic, 4) == 0,
	   "the same chunk compressed");
	if (xmch_open(out.p, out.len, &c, &err) == XMCH_OK) {
		ok(c.sample_count == n + 1 && c.compressed,
		   "the compressed 64 MiB chunk opens");
		xmch_close(&c);
	} else
		ok(false, "the compressed 64 MiB chunk opens: %s: %s",
		   xmch_status_name(err.status), err.msg);
	buf_free(&out);
	xmch_writer_free(&w);
}

/* Packed adds: the same chunk as one add per sample, the checks, nothing
 * added on a refusal. */
static void
test_packed(void)
{
	static const enum sample_type types[] = {SAMPLE_F64, SAMPLE_F32,
						 SAMPLE_I64, SAMPLE_I32,
						 SAMPLE_I16, SAMPLE_I8};
	struct xmch_writer a, b;
	struct xmch_error err;
	struct buf ca, cb;
	uint8_t block[10 * 16];

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
		size_t width = xmbp_sample_fixed_size(types[t]),
		       step = 8 + width;
		bool good = true;

		for (size_t i = 0; i < 10; i++) {
			be64_put(block + i * step, 1000 + i / 2);
			for (size_t k = 0; k < width; k++)
				block[i * step + 8 + k] =
					(uint8_t)(rnd() & 0xFF);
		}
		xmch_writer_init(&a, types[t]);
		xmch_writer_init(&b, types[t]);
		for (size_t i = 0; i < 10; i++) {
			struct sample_value v = {.type = types[t]};
			uint8_t x[8] = {0};

			memcpy(x + 8 - width, block + i * step + 8, width);
			switch (types[t]) {
			case SAMPLE_F64:
				v.u.f64 = bef64_get(block + i * step + 8);
				break;
			case SAMPLE_F32:
				v.u.f32 = bef32_get(block + i * step + 8);
				break;
			case SAMPLE_I64:
				v.u.i64 = (int64_t)be64_get(x);
				break;
			case SAMPLE_I32:
				v.u.i32 = (int32_t)be32_get(x + 4);
				break;
			case SAMPLE_I16:
				v.u.i16 = (int16_t)be16_get(x + 6);
				break;
			default:
				v.u.i8 = (int8_t)x[7];
				break;
			}
			good &= xmch_writer_add(&a, be64_get(block + i * step),
						&v, &err) == XMCH_OK;
		}
		good &= xmch_writer_add_packed(&b, block, 4, &err) == XMCH_OK &&
			xmch_writer_add_packed(&b, block + 4 * step, 6, &err) ==
				XMCH_OK;
		buf_init(&ca, 0);
		buf_init(&cb, 0);
		good &= xmch_writer_finish(&a, false, &ca, &err) == XMCH_OK &&
			xmch_writer_finish(&b, false, &cb, &err) == XMCH_OK;
		ok(good && ca.len == cb.len && memcmp(ca.p, cb.p, ca.len) == 0,
		   "packed %s: the chunk of one add per sample",
		   xmbp_sample_type_name(types[t]));
		buf_free(&ca);
		buf_free(&cb);
		xmch_writer_free(&a);
		xmch_writer_free(&b);
	}

	xmch_writer_init(&b, SAMPLE_I32);
	for (size_t i = 0; i < 3; i++) {
		be64_put(block + i * 12, i == 2 ? 5 : 10 + i);
		be32_put(block + i * 12 + 8, (uint32_t)i);
	}
	is_int(xmch_writer_add_packed(&b, block, 3, &err), XMCH_E_UNORDERED,
	       "packed: a step back inside the block is refused");
	is_int(b.count, 0, "and nothing of the block is added");
	is_int(xmch_writer_add_packed(&b, block, 2, &err), XMCH_OK,
	       "packed: two in order");
	is_int(xmch_writer_add_packed(&b, block + 24, 1, &err),
	       XMCH_E_UNORDERED, "packed: a block before the chunk's last");
	is_int(b.count, 2, "leaves the chunk as it was");
	xmch_writer_free(&b);
	xmch_writer_init(&b, SAMPLE_BOOL);
	is_int(xmch_writer_add_packed(&b, block, 1, &err), XMCH_E_INVALID_VALUE,
	       "packed: bool refused");
	xmch_writer_free(&b);
}

int
main(void)
{
	rnd_seed(0x20240601u);
	fill_arrays();
	test_status_names();
	/* First of the big ones: it measures the peak RSS. */
	test_decompression_cap();
	test_layout();
	test_empty();
	test_roundtrips();
	test_compression();
	test_timestamps();
	test_reader_errors();
	test_writer_limits();
	test_packed();
	return tap_done();
}
