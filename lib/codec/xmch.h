/* SPDX-License-Identifier: MIT */
/*
 * xmch.h - XMCH stored chunks (doc/xmbp.md "Stored chunks (XMCH)"): one
 * stream's samples as a timestamp column and a value column, optionally
 * zstd-compressed.
 *
 * A stored chunk is either a plain chunk (it starts with "XMCH") or one
 * zstd frame whose content is a plain chunk.  Readers tell them apart by
 * the magic; decompressed content is limited to XMCH_MAX_BYTES and memory
 * grows with the bytes actually produced, never with the size a frame
 * claims.  Writers refuse to build what readers would refuse to read.
 */
#ifndef XMHUB_XMCH_H
#define XMHUB_XMCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/buf.h"
#include "codec/sample.h"

#define XMCH_VERSION 0x01
#define XMCH_HEADER_SIZE 32
#define XMCH_MAX_BYTES (64u << 20) /* a plain chunk, header included */

enum xmch_status {
	XMCH_OK = 0,
	XMCH_E_INVALID_MAGIC,	    /* InvalidMagic */
	XMCH_E_UNSUPPORTED_VERSION, /* UnsupportedVersion */
	XMCH_E_INVALID_VALUE_TYPE,  /* InvalidValueType */
	XMCH_E_UNEXPECTED_EOF,	    /* UnexpectedEof */
	XMCH_E_INVALID_UTF8,	    /* InvalidUtf8 */
	XMCH_E_TRAILING_DATA,	    /* TrailingData */
	XMCH_E_INVALID_HEADER,	    /* InvalidHeader: fields disagree */
	XMCH_E_UNORDERED,	    /* UnorderedTimestamps */
	XMCH_E_TOO_LARGE,	    /* TooLarge: over XMCH_MAX_BYTES */
	XMCH_E_CORRUPT,		    /* CorruptCompression: bad zstd frame */
	XMCH_E_INVALID_VALUE,	    /* InvalidValue: writer given a bad value */
	XMCH_E_NOMEM		    /* OutOfMemory */
};

/* Where and why.  msg is always NUL-terminated. */
struct xmch_error {
	enum xmch_status status;
	char msg[128];
};

/* An opened, validated chunk; read-only.  Release with xmch_close(). */
struct xmch_chunk {
	enum sample_type type;
	uint32_t sample_count;
	uint64_t start_ts, end_ts;
	bool compressed;	/* it was stored as a zstd frame */
	size_t stored_len;	/* bytes as stored */
	const uint8_t *ts_col;	/* sample_count big-endian u64 */
	const uint8_t *val_col; /* the value column */
	size_t val_len;
	uint8_t *owned; /* decompressed copy, or NULL */
};

/* Cursor over a chunk's samples. */
struct xmch_iter {
	const struct xmch_chunk *chunk;
	uint32_t i;
	const uint8_t *v;
};

/* Builds one chunk; treat the fields as private. */
struct xmch_writer {
	enum sample_type type;
	uint32_t count;
	uint64_t first_ts, last_ts;
	struct buf ts, val;
};

/* The name of a status ("InvalidMagic", ...). */
const char *xmch_status_name(enum xmch_status status);

/*
 * Validates the len bytes at buf as one stored chunk (plain or
 * compressed) and fills *chunk.  A plain chunk is read in place (buf must
 * outlive *chunk); a compressed one is decompressed into memory the chunk
 * owns.  On failure nothing is left to release.
 */
enum xmch_status xmch_open(const uint8_t *buf, size_t len,
			   struct xmch_chunk *chunk, struct xmch_error *err);

/* Releases what xmch_open() allocated. */
void xmch_close(struct xmch_chunk *chunk);

/* Starts a walk over the samples, in timestamp order. */
void xmch_iter_init(const struct xmch_chunk *chunk, struct xmch_iter *it);

/* Next sample; false at the end.  Values point into the chunk. */
bool xmch_next(struct xmch_iter *it, uint64_t *ts, struct sample_value *v);

/* Starts a chunk of one value type. */
void xmch_writer_init(struct xmch_writer *w, enum sample_type type);

/*
 * Appends a sample (copied).  Refuses, with the writer unchanged: a value
 * of another type, a timestamp below the previous one (equal is allowed),
 * string or json that is not UTF-8, and anything that would take the
 * chunk past XMCH_MAX_BYTES.
 */
enum xmch_status xmch_writer_add(struct xmch_writer *w, uint64_t ts,
				 const struct sample_value *v,
				 struct xmch_error *err);

/*
 * Appends the stored chunk to out.  With compress, it is stored as a
 * zstd frame when that pays: the plain chunk is 128 bytes or more and the
 * frame saves at least an eighth of it.  The writer may be reused after
 * xmch_writer_free().
 */
enum xmch_status xmch_writer_finish(struct xmch_writer *w, bool compress,
				    struct buf *out, struct xmch_error *err);

/*
 * Appends n samples of the writer's fixed-width type (not bool, whose
 * values the writer makes 0 or 1) laid out as an XMBP stream block holds
 * them: a big-endian u64 timestamp, then the big-endian value, for each.
 * The checks of xmch_writer_add(); on failure none of them is added.
 */
enum xmch_status xmch_writer_add_packed(struct xmch_writer *w, const uint8_t *p,
					uint32_t n, struct xmch_error *err);

/* The bytes the plain chunk of w would take now, header included. */
size_t xmch_writer_size(const struct xmch_writer *w);

/* Releases the writer's memory. */
void xmch_writer_free(struct xmch_writer *w);

#endif
