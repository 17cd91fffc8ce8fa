/* SPDX-License-Identifier: MIT */
/*
 * t/unit/buf.c - the growable byte buffer (lib/codec/buf.h).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/buf.h"
#include "tap.h"

/* True when b holds exactly the n bytes at p. */
static bool
holds(const struct buf *b, const void *p, size_t n)
{
	return b->len == n && (n == 0 || memcmp(b->p, p, n) == 0);
}

static void
test_appends(void)
{
	static const uint8_t be32[] = {0xDE, 0xAD, 0xBE, 0xEF};
	static const uint8_t be64[] = {0x01, 0x23, 0x45, 0x67,
				       0x89, 0xAB, 0xCD, 0xEF};
	struct buf b;

	buf_init(&b, 0);
	ok(b.len == 0 && !b.failed, "a new buffer is empty and not failed");

	buf_append(&b, "ab", 2);
	buf_puts(&b, "cd");
	buf_putc(&b, 'e');
	buf_putc(&b, '\0');
	buf_append(&b, "ignored", 0);
	ok(holds(&b, "abcde\0", 6),
	   "append, puts, putc (NUL too), empty append");

	buf_free(&b);
	buf_printf(&b, "%d-%s-%05.1f|%c", -42, "x", 3.25, 'z');
	ok(holds(&b, "-42-x-003.2|z", 13) || holds(&b, "-42-x-003.3|z", 13),
	   "printf formats");
	/* printf's terminating NUL must not be counted. */
	buf_printf(&b, "%s", "");
	is_int(b.len, 13, "printf of an empty string adds nothing");
	buf_printf(&b, "%s", "tail");
	ok(b.len == 17 && memcmp(b.p + 13, "tail", 4) == 0,
	   "a second printf appends right after the first");
	buf_free(&b);

	buf_put_be32(&b, 0xDEADBEEFu);
	ok(holds(&b, be32, 4), "be32 is big-endian");
	buf_free(&b);
	buf_put_be64(&b, 0x0123456789ABCDEFull);
	ok(holds(&b, be64, 8), "be64 is big-endian");
	buf_put_be32(&b, 0);
	buf_put_be64(&b, UINT64_MAX);
	ok(b.len == 20 && memcmp(b.p + 8,
				 "\0\0\0\0\xFF\xFF\xFF\xFF\xFF\xFF"
				 "\xFF\xFF",
				 12) == 0,
	   "be32 0 and be64 max append after earlier data");
	ok(!b.failed, "nothing failed");
	buf_free(&b);
}

/* Many small appends of varying size; the content must survive realloc. */
static void
test_growth(void)
{
	struct buf b;
	size_t want = 0;
	unsigned int bad = 0;
	uint8_t chunk[97];

	buf_init(&b, 0);
	for (unsigned int i = 0; i < 20000; i++) {
		size_t n = i % sizeof(chunk);

		for (size_t k = 0; k < n; k++)
			chunk[k] = (uint8_t)(want + k);
		buf_append(&b, chunk, n);
		want += n;
	}
	is_int(b.len, want, "20000 appends: length is the sum");
	ok(b.cap >= b.len, "capacity covers the length");
	for (size_t k = 0; k < b.len; k++)
		if (b.p[k] != (uint8_t)k)
			bad++;
	ok(bad == 0, "content is intact after growth (%u bytes wrong)", bad);

	/* One append much larger than the capacity at hand. */
	{
		size_t big = b.cap * 3 + 1, old = b.len;
		uint8_t *p = malloc(big);

		if (p == NULL)
			abort();
		memset(p, 0x5A, big);
		buf_append(&b, p, big);
		ok(b.len == old + big && b.p[old] == 0x5A &&
			   b.p[old + big - 1] == 0x5A &&
			   b.p[old - 1] == (uint8_t)(old - 1),
		   "one append of three times the capacity");
		free(p);
	}
	ok(!b.failed, "no failure without a limit");

	ok(buf_reserve(&b, 1000) && b.cap - b.len >= 1000,
	   "buf_reserve makes room");
	buf_free(&b);
	ok(b.p == NULL && b.len == 0 && b.cap == 0 && !b.failed,
	   "buf_free empties the buffer");
	buf_puts(&b, "again");
	ok(holds(&b, "again", 5), "usable after buf_free");
	buf_free(&b);
}

static void
test_limit(void)
{
	struct buf b;

	buf_init(&b, 10);
	buf_append(&b, "0123456789", 10);
	ok(holds(&b, "0123456789", 10) && !b.failed,
	   "appending exactly up to the limit works");
	buf_putc(&b, 'x');
	ok(b.failed && b.len == 10, "one byte past the limit fails");
	buf_free(&b);
	ok(!b.failed && b.len == 0 && b.limit == 10,
	   "buf_free clears failed and keeps the limit");

	buf_append(&b, "01234", 5);
	buf_append(&b, "567890", 6);
	ok(b.failed && holds(&b, "01234", 5),
	   "an append crossing the limit fails whole, no partial bytes");
	/* Sticky: appends that would fit in what is left are ignored too. */
	buf_putc(&b, 'y');
	buf_append(&b, "z", 1);
	buf_puts(&b, "w");
	buf_printf(&b, "%d", 7);
	buf_put_be32(&b, 1);
	ok(b.failed && holds(&b, "01234", 5),
	   "failed is sticky: later appends that fit are ignored");
	ok(!buf_reserve(&b, 1), "buf_reserve refuses once failed");
	buf_free(&b);

	buf_init(&b, 8);
	buf_put_be64(&b, 1);
	buf_put_be32(&b, 1);
	ok(b.failed && b.len == 8, "be32 past a limit fails");
	buf_free(&b);

	/*
	 * printf text that fits the limit exactly.  The header promises
	 * failure only for appends that "would pass the buffer's limit".
	 */
	buf_init(&b, 5);
	buf_printf(&b, "%s", "hello");
	ok(!b.failed && holds(&b, "hello", 5),
	   "printf of exactly the limit's worth of text works");
	buf_free(&b);

	buf_init(&b, 5);
	buf_printf(&b, "%s", "hello!");
	ok(b.failed && b.len == 0, "printf past the limit fails");
	buf_free(&b);

	/* Growth under a large limit never allocates past it. */
	buf_init(&b, 1000);
	for (int i = 0; i < 100; i++)
		buf_append(&b, "0123456789", 10);
	ok(!b.failed && b.len == 1000 && b.cap <= 1000,
	   "growth stops at the limit (cap %zu)", b.cap);
	buf_free(&b);
}

/* Writes n bytes of a known pattern into fd and closes it. */
static bool
fill(int fd, size_t n)
{
	uint8_t chunk[4096];
	size_t done = 0;

	while (done < n) {
		size_t k = n - done < sizeof(chunk) ? n - done : sizeof(chunk);
		ssize_t w;

		for (size_t i = 0; i < k; i++)
			chunk[i] = (uint8_t)((done + i) * 7);
		if ((w = write(fd, chunk, k)) < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		done += (size_t)w;
	}
	return close(fd) == 0;
}

static bool
pattern(const struct buf *b, size_t off, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b->p[off + i] != (uint8_t)(i * 7))
			return false;
	return true;
}

/* A temporary file holding n pattern bytes, opened for reading at 0. */
static int
tempfile(size_t n)
{
	char path[] = "/tmp/xmhub-buf-XXXXXX";
	int fd = mkstemp(path), rd;

	if (fd < 0)
		return -1;
	rd = dup(fd);
	unlink(path);
	if (rd < 0 || !fill(fd, n))
		return -1;
	if (lseek(rd, 0, SEEK_SET) != 0)
		return -1;
	return rd;
}

/* More than one 64 KiB read, not a multiple of it. */
#define BIG ((size_t)200 * 1000 + 3)

/* Files of size pattern bytes read into a buffer of limit (0: none). */
static const struct {
	size_t size, limit;
	bool fits;
	const char *name;
} files[] = {
	{BIG, 0, true, "buf_read_fd of a 200003-byte file"},
	{0, 0, true, "buf_read_fd of an empty file"},
	/* Over the limit: refused, failed set. */
	{BIG, BIG - 1, false,
	 "buf_read_fd of a file larger than the limit fails"},
	/* Within the limit: must work whatever the read size inside is. */
	{100, 1000, true, "buf_read_fd of 100 bytes under a 1000-byte limit"},
	{BIG, BIG, true, "buf_read_fd of a file exactly as large as the limit"},
};

static void
test_read_fd(void)
{
	struct buf b;
	int fds[2], fd;

	/* A pipe small enough for the writer to finish before we read. */
	if (pipe(fds) != 0)
		abort();
	buf_init(&b, 0);
	buf_puts(&b, "hd");
	ok(fill(fds[1], 1000), "wrote 1000 bytes into a pipe");
	ok(buf_read_fd(&b, fds[0]), "buf_read_fd from a pipe");
	ok(b.len == 1002 && memcmp(b.p, "hd", 2) == 0 && pattern(&b, 2, 1000),
	   "pipe content appended after what was there");
	close(fds[0]);
	buf_free(&b);

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t size = files[i].size, limit = files[i].limit;

		if ((fd = tempfile(size)) < 0)
			abort();
		buf_init(&b, limit);
		if (files[i].fits)
			ok(buf_read_fd(&b, fd) && !b.failed && b.len == size &&
				   pattern(&b, 0, size),
			   "%s", files[i].name);
		else
			ok(!buf_read_fd(&b, fd) && b.failed, "%s",
			   files[i].name);
		close(fd);
		buf_free(&b);
	}

	/* A bad descriptor: false, errno set, but not a buffer failure. */
	buf_init(&b, 0);
	errno = 0;
	ok(!buf_read_fd(&b, -1) && errno == EBADF,
	   "buf_read_fd(-1) fails with EBADF");
	buf_free(&b);
}

int
main(void)
{
	test_appends();
	test_growth();
	test_limit();
	test_read_fd();
	return tap_done();
}
