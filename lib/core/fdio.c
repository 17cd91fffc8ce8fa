/* SPDX-License-Identifier: MIT */
/*
 * fdio.c - whole reads and writes on a file descriptor (see fdio.h).
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "core/fdio.h"

bool
fdio_write_full(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n > 0) {
		ssize_t k = write(fd, b, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		b += k;
		n -= (size_t)k;
	}
	return true;
}

bool
fdio_read_full(int fd, void *p, size_t n)
{
	uint8_t *b = p;

	while (n > 0) {
		ssize_t k = read(fd, b, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0)
			errno = 0;
		if (k <= 0)
			return false;
		b += k;
		n -= (size_t)k;
	}
	return true;
}
