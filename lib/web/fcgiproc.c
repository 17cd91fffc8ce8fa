/* SPDX-License-Identifier: MIT */
/*
 * fcgiproc.c - a FastCGI process ends with its web server and shows that
 * it lives (fcgiproc.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "core/conf.h"
#include "web/fcgiproc.h"

#define SUFFIX ".alive"

bool
fcgiproc_watch_parent(void)
{
	pid_t parent = getppid();

	if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0)
		return false;
	/* The parent may have died before the signal was asked for. */
	if (getppid() != parent) {
		errno = ESRCH;
		return false;
	}
	return true;
}

/* The group's name is a file name of the directory: no slash, no dot
 * first, not too long. */
static bool
name_ok(const char *name)
{
	size_t n = strlen(name);

	return n > 0 && n <= FCGIPROC_NAME_MAX && name[0] != '.' &&
	       strchr(name, '/') == NULL;
}

bool
fcgiproc_alive(const char *name, char *detail, size_t len)
{
	const char *dir = conf_get("XMHUB_ALIVE_DIR");
	char path[4096];
	int fd = -1;
	bool ok = false;

	if (dir == NULL || dir[0] == '\0')
		return true;
	if (!name_ok(name) ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s%s", dir, name,
			     SUFFIX) >= sizeof(path)) {
		snprintf(detail, len, "XMHUB_ALIVE_DIR: bad group file name");
		goto out;
	}
	/* Kept open, and locked, for the life of the process; not passed on
	 * to children (a child would keep a dead group's lock). */
	if ((fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600)) < 0 ||
	    flock(fd, LOCK_SH) != 0) {
		snprintf(detail, len, "%s: %s", path, strerror(errno));
		goto out;
	}
	fd = -1;
	ok = true;
out:
	if (fd >= 0)
		close(fd);
	return ok;
}

/* True when no process holds dir/file's lock. */
static bool
unheld(int dirfd, const char *file)
{
	int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	bool free_ = false;

	if (fd < 0)
		return false; /* gone meanwhile: not a group any more */
	/* An exclusive lock is refused while any shared one is held, ours
	 * included (flock locks belong to open files, not processes). */
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		free_ = true;
		flock(fd, LOCK_UN);
	}
	close(fd);
	return free_;
}

int
fcgiproc_dead_groups(char *out, size_t len)
{
	const char *dir = conf_get("XMHUB_ALIVE_DIR");
	struct dirent *e;
	DIR *d;
	size_t used = 0, n;
	int dead = 0;

	if (len > 0)
		out[0] = '\0';
	if (dir == NULL || dir[0] == '\0')
		return 0;
	if ((d = opendir(dir)) == NULL) {
		snprintf(out, len, "%s: %s", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		n = strlen(e->d_name);
		if (e->d_name[0] == '.' || n <= strlen(SUFFIX) ||
		    strcmp(e->d_name + n - strlen(SUFFIX), SUFFIX) != 0 ||
		    !unheld(dirfd(d), e->d_name))
			continue;
		n -= strlen(SUFFIX);
		/* Whole names only: "," and the name and the NUL must fit. */
		if (used + (dead > 0) + n + 1 <= len) {
			if (dead > 0)
				out[used++] = ',';
			memcpy(out + used, e->d_name, n);
			used += n;
			out[used] = '\0';
		}
		dead++;
	}
	closedir(d);
	return dead;
}
