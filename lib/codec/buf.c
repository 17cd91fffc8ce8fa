/* SPDX-License-Identifier: MIT */
/*
 * buf.c - a growable byte buffer.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#include "codec/be.h"
#include "codec/buf.h"

void
buf_init(struct buf *b, size_t limit)
{
	memset(b, 0, sizeof(*b));
	b->limit = limit;
}

void
buf_free(struct buf *b)
{
	size_t limit = b->limit;

	free(b->p);
	buf_init(b, limit);
}

bool
buf_reserve(struct buf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->failed)
		return false;
	if (b->cap - b->len >= n)
		return true;
	if (n > SIZE_MAX / 2 - b->len ||
	    (b->limit != 0 && b->len + n > b->limit)) {
		b->failed = true;
		return false;
	}
	cap = b->cap < 256 ? 256 : b->cap;
	while (cap - b->len < n)
		cap *= 2;
	if (b->limit != 0 && cap > b->limit)
		cap = b->limit;
	if ((p = realloc(b->p, cap)) == NULL) {
		b->failed = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void
buf_append(struct buf *b, const void *p, size_t n)
{
	if (n == 0 || !buf_reserve(b, n))
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void
buf_puts(struct buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void
buf_putc(struct buf *b, char c)
{
	if (!buf_reserve(b, 1))
		return;
	b->p[b->len++] = (uint8_t)c;
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	char small[256], *p = small;
	va_list ap;
	int n;

	/* Most text fits the stack buffer: one formatting pass, no malloc. */
	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->failed = true;
		return;
	}
	if ((size_t)n >= sizeof(small)) {
		if ((p = malloc((size_t)n + 1)) == NULL) {
			b->failed = true;
			return;
		}
		va_start(ap, fmt);
		vsnprintf(p, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	buf_append(b, p, (size_t)n);
	if (p != small)
		free(p);
}

void
buf_put_be32(struct buf *b, uint32_t v)
{
	uint8_t x[4];

	be32_put(x, v);
	buf_append(b, x, sizeof(x));
}

void
buf_put_be64(struct buf *b, uint64_t v)
{
	uint8_t x[8];

	be64_put(x, v);
	buf_append(b, x, sizeof(x));
}

bool
buf_read_fd(struct buf *b, int fd)
{
	ssize_t n;
	size_t want;
	char c;

	for (;;) {
		want = 64 * 1024;
		if (b->limit != 0 && b->limit - b->len < want)
			want = b->limit - b->len;
		if (want == 0) {
			/* At the limit: only end of file keeps it whole. */
			n = read(fd, &c, 1);
			if (n < 0 && errno == EINTR)
				continue;
			if (n > 0)
				b->failed = true;
			return n == 0;
		}
		if (!buf_reserve(b, want))
			return false;
		n = read(fd, b->p + b->len, want);
		if (n == 0)
			return true;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		b->len += (size_t)n;
	}
}
