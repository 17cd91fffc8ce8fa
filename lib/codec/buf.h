/* SPDX-License-Identifier: MIT */
/*
 * buf.h - a growable byte buffer.
 *
 * The buffer owns its memory (free it with buf_free()).  Appends that
 * cannot allocate, or that would pass the buffer's limit, set the sticky
 * `failed` flag and are ignored; check it once at the end.
 */
#ifndef XMHUB_BUF_H
#define XMHUB_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct buf {
	uint8_t *p;
	size_t len, cap;
	size_t limit; /* 0 for no limit other than memory */
	bool failed;
};

/* An empty buffer that refuses to grow past limit bytes (0: no limit). */
void buf_init(struct buf *b, size_t limit);

/* Frees the memory; the buffer is empty and usable again. */
void buf_free(struct buf *b);

/* Makes room for n more bytes; false (and failed) if it cannot. */
bool buf_reserve(struct buf *b, size_t n);

/* Appends n bytes. */
void buf_append(struct buf *b, const void *p, size_t n);

/* Appends a NUL-terminated string, without the NUL. */
void buf_puts(struct buf *b, const char *s);

/* Appends one byte. */
void buf_putc(struct buf *b, char c);

/* Appends printf-formatted text. */
void buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Appends everything read from fd until end of file.  False when reading
 * fails (errno set) or the buffer fails (limit or memory).
 */
bool buf_read_fd(struct buf *b, int fd);

/* Big-endian appends. */
void buf_put_be32(struct buf *b, uint32_t v);
void buf_put_be64(struct buf *b, uint64_t v);

#endif
