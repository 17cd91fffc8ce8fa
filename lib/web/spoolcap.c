/* SPDX-License-Identifier: MIT */
/*
 * spoolcap.c - the slots of the bodies spooled whole (see spoolcap.h).
 */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "core/conf.h"
#include "web/spoolcap.h"

/* A slot record: held until until (a time(2) second) by the body with
 * id; free when until has passed (0: given back). */
struct slot {
	int64_t until;
	uint64_t id;
};

/* The slots' file (open(2)'s flags added), locked, or -1 (errno set). */
static int
open_locked(const char *path, int flags)
{
	int fd;

	if ((fd = open(path, O_RDWR | O_CLOEXEC | flags, 0600)) < 0)
		return -1;
	if (flock(fd, LOCK_EX) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

enum spoolcap_result
spoolcap_take(char token[SPOOLCAP_TOKEN_MAX])
{
	const char *path = conf_get("XMHUB_SPOOL_SLOTS");
	enum spoolcap_result res = SPOOLCAP_ERROR;
	long long max, lease, i;
	struct slot s;
	int64_t now = time(NULL);
	uint64_t id;
	ssize_t n;
	int fd;

	token[0] = '\0';
	conf_get_int("XMHUB_SPOOL_MAX", &max);
	conf_get_int("XMHUB_SPOOL_LEASE", &lease);
	if (path == NULL || max == 0)
		return SPOOLCAP_OFF;
	if (getrandom(&id, sizeof(id), 0) != sizeof(id) ||
	    (fd = open_locked(path, O_CREAT)) < 0)
		return SPOOLCAP_ERROR;
	for (i = 0; i < max; i++) {
		if ((n = pread(fd, &s, sizeof(s), i * (off_t)sizeof(s))) < 0)
			goto out;
		if (n < (ssize_t)sizeof(s) || s.until <= now)
			break;
	}
	res = SPOOLCAP_FULL;
	if (i == max)
		goto out;
	s.until = now + lease;
	s.id = id;
	res = SPOOLCAP_ERROR;
	if (pwrite(fd, &s, sizeof(s), i * (off_t)sizeof(s)) != sizeof(s))
		goto out;
	snprintf(token, SPOOLCAP_TOKEN_MAX, "%lld-%016" PRIx64, i, id);
	res = SPOOLCAP_TAKEN;
out:
	close(fd);
	return res;
}

void
spoolcap_give(const char *token)
{
	const char *path = conf_get("XMHUB_SPOOL_SLOTS");
	static const struct slot free_slot;
	struct slot s;
	long long i;
	uint64_t id;
	int fd, end;

	if (path == NULL ||
	    sscanf(token, "%lld-%16" SCNx64 "%n", &i, &id, &end) != 2 ||
	    token[end] != '\0' || i < 0 || i >= 100000)
		return;
	if ((fd = open_locked(path, 0)) < 0)
		return;
	if (pread(fd, &s, sizeof(s), i * (off_t)sizeof(s)) == sizeof(s) &&
	    s.id == id)
		(void)!pwrite(fd, &free_slot, sizeof(s), i * (off_t)sizeof(s));
	close(fd);
}
