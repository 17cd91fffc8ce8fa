/* SPDX-License-Identifier: MIT */
/*
 * slots.c - per-host slots (lib/core/slots.c): LIMIT holders at once per
 * kind and owner, the next one busy, a released slot and one whose holder
 * was killed (SIGKILL) taken again, owners and kinds apart, limit 0
 * unlimited, bad names refused, descriptors close-on-exec.
 */
#include "config.h"

#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/slots.h"
#include "tap.h"

#define FAC_A "11111111-2222-4333-8444-555555555555"
#define FAC_B "66666666-7777-4888-9999-aaaaaaaaaaaa"

/* Removes dir/kind's files, then it. */
static void
rm_kind(const char *dir, const char *kind)
{
	char path[512], f[1024];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", dir, kind);
	if ((d = opendir(path)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		snprintf(f, sizeof(f), "%s/%s", path, e->d_name);
		if (e->d_name[0] != '.')
			unlink(f);
	}
	closedir(d);
	rmdir(path);
}

int
main(void)
{
	char tmp[] = "/tmp/xmhub-slots-XXXXXX", dir[256], err[256];
	struct slot a = SLOTS_NONE, b = SLOTS_NONE, c = SLOTS_NONE;
	int ready[2], st;
	pid_t pid;
	char x;

	if (mkdtemp(tmp) == NULL)
		return 1;
	snprintf(dir, sizeof(dir), "%s/slots", tmp);
	ok(slots_take(dir, "render", FAC_A, 2, &a, err, sizeof(err)) ==
		   SLOTS_TAKEN,
	   "first slot (directories made)");
	ok(slots_take(dir, "render", FAC_A, 2, &b, err, sizeof(err)) ==
		   SLOTS_TAKEN,
	   "second slot, same process");
	ok(slots_take(dir, "render", FAC_A, 2, &c, err, sizeof(err)) ==
			   SLOTS_BUSY &&
		   c.fd < 0,
	   "a third is busy, nothing held");
	ok(slots_take(dir, "render", FAC_B, 2, &c, err, sizeof(err)) ==
		   SLOTS_TAKEN,
	   "another owner is not affected");
	slots_release(&c);
	ok(slots_take(dir, "ws", FAC_A, 1, &c, err, sizeof(err)) == SLOTS_TAKEN,
	   "another kind is not affected");
	slots_release(&c);
	ok((fcntl(a.fd, F_GETFD) & FD_CLOEXEC) != 0, "close-on-exec");
	slots_release(&a);
	ok(a.fd == -1, "released: holds none");
	slots_release(&a);
	ok(slots_take(dir, "render", FAC_A, 2, &a, err, sizeof(err)) ==
		   SLOTS_TAKEN,
	   "a released slot is taken again");
	slots_release(&a);
	slots_release(&b);

	/* A holder killed with SIGKILL: the kernel drops its lock. */
	if (pipe(ready) != 0 || (pid = fork()) < 0)
		return 1;
	if (pid == 0) {
		struct slot k = SLOTS_NONE;

		close(ready[0]);
		if (slots_take(dir, "render", FAC_A, 1, &k, err, sizeof(err)) ==
		    SLOTS_TAKEN)
			(void)!write(ready[1], "t", 1);
		for (;;)
			pause();
	}
	close(ready[1]);
	ok(read(ready[0], &x, 1) == 1, "a child holds the only slot");
	ok(slots_take(dir, "render", FAC_A, 1, &a, err, sizeof(err)) ==
		   SLOTS_BUSY,
	   "busy while it lives");
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(ready[0]);
	ok(slots_take(dir, "render", FAC_A, 1, &a, err, sizeof(err)) ==
		   SLOTS_TAKEN,
	   "free once it is killed");
	slots_release(&a);

	ok(slots_take(dir, "render", FAC_A, 0, &a, err, sizeof(err)) ==
			   SLOTS_TAKEN &&
		   a.fd == -1,
	   "limit 0: no limit, nothing held");
	ok(slots_take(dir, "render", "../x", 1, &a, err, sizeof(err)) ==
			   SLOTS_ERROR &&
		   strstr(err, "name") != NULL,
	   "an owner with a slash is refused");
	ok(slots_take(dir, "", FAC_A, 1, &a, err, sizeof(err)) == SLOTS_ERROR,
	   "an empty kind is refused");
	ok(slots_take("/nonexistent/xmhub/slots", "render", FAC_A, 1, &a, err,
		      sizeof(err)) == SLOTS_ERROR &&
		   strstr(err, "/nonexistent") != NULL,
	   "a directory that can not be made: the error names it");

	rm_kind(dir, "render");
	rm_kind(dir, "ws");
	rmdir(dir);
	rmdir(tmp);
	return tap_done();
}
