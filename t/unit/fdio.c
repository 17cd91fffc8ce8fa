/* SPDX-License-Identifier: MIT */
/*
 * fdio.c - whole reads and writes (lib/core/fdio.c) through a pipe that
 * takes less than a write at a time, and a read that meets end of file.
 */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/fdio.h"
#include "tap.h"

#define BIG (1 << 20) /* more than a pipe holds: writes come back short */

static unsigned char out[BIG], in[BIG];

int
main(void)
{
	int fds[2];
	pid_t pid;
	int status;
	unsigned char one;

	for (size_t i = 0; i < BIG; i++)
		out[i] = (unsigned char)(i * 7 + 3);
	if (pipe(fds) != 0 || (pid = fork()) < 0) {
		diag("pipe or fork failed");
		return 1;
	}
	if (pid == 0) {
		close(fds[0]);
		_exit(fdio_write_full(fds[1], out, BIG) ? 0 : 1);
	}
	close(fds[1]);
	ok(fdio_read_full(fds[0], in, BIG), "1 MiB read whole through a pipe");
	ok(memcmp(in, out, BIG) == 0, "every byte as written");
	ok(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		   WEXITSTATUS(status) == 0,
	   "1 MiB written whole into a pipe");
	errno = EINVAL;
	ok(!fdio_read_full(fds[0], &one, 1) && errno == 0,
	   "end of file before the bytes: false, errno 0");
	close(fds[0]);
	ok(!fdio_write_full(fds[0], out, 1) && errno == EBADF,
	   "a closed descriptor: false, errno set");
	ok(fdio_write_full(fds[0], out, 0) && fdio_read_full(fds[0], in, 0),
	   "nothing to move: true");
	return tap_done();
}
