/* SPDX-License-Identifier: MIT */
/*
 * fdio.h - whole reads and writes on a file descriptor: the loops over
 * short transfers and EINTR that every caller would otherwise repeat.
 * For blocking descriptors (files, pipes, sockets without O_NONBLOCK).
 */
#ifndef XMHUB_FDIO_H
#define XMHUB_FDIO_H

#include <stdbool.h>
#include <stddef.h>

/* Writes all n bytes at p to fd, retrying short writes and EINTR.  False
 * (errno set) on an error or a write of 0 bytes. */
bool fdio_write_full(int fd, const void *p, size_t n);

/* Reads exactly n bytes from fd into p, retrying short reads and EINTR.
 * False on an error (errno set) or at end of file before n bytes (errno
 * 0). */
bool fdio_read_full(int fd, void *p, size_t n);

#endif
