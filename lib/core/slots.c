/* SPDX-License-Identifier: MIT */
/*
 * slots.c - per-host slots held with flock() (slots.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/slots.h"

/* A file name of ours: no slash, no dot, not empty, not too long. */
static bool
name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= SLOTS_NAME_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyz"
			 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") == n;
}

enum slots_status
slots_take(const char *dir, const char *kind, const char *owner, int limit,
	   struct slot *s, char *detail, size_t len)
{
	char path[4096];
	enum slots_status st = SLOTS_BUSY;
	int fd = -1;

	s->fd = -1;
	if (limit <= 0)
		return SLOTS_TAKEN;
	if (!name_ok(kind) || !name_ok(owner)) {
		snprintf(detail, len, "slots: bad kind or owner name");
		return SLOTS_ERROR;
	}
	/* KIND's directory, made once; a parallel mkdir is as good. */
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, kind) >=
		    sizeof(path) ||
	    (mkdir(dir, 0700) != 0 && errno != EEXIST) ||
	    (mkdir(path, 0700) != 0 && errno != EEXIST)) {
		snprintf(detail, len, "%s: %s", path, strerror(errno));
		return SLOTS_ERROR;
	}
	for (int i = 0; i < limit && st == SLOTS_BUSY; i++) {
		snprintf(path, sizeof(path), "%s/%s/%s.%d", dir, kind, owner,
			 i);
		fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			  0600);
		if (fd < 0) {
			snprintf(detail, len, "%s: %s", path, strerror(errno));
			st = SLOTS_ERROR;
		} else if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			s->fd = fd;
			st = SLOTS_TAKEN;
		} else {
			if (errno != EWOULDBLOCK) {
				snprintf(detail, len, "%s: %s", path,
					 strerror(errno));
				st = SLOTS_ERROR;
			}
			close(fd);
		}
	}
	return st;
}

void
slots_release(struct slot *s)
{
	/* Closing the only descriptor of the open file drops its lock. */
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
