/* SPDX-License-Identifier: MIT */
/*
 * fcgiproc.c - tests of lib/web/fcgiproc: a process ends with its
 * parent; a group's liveness file is held while one of its processes
 * lives and reported once none does.
 */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "web/fcgiproc.h"

/* A child that takes group name's lock, says so on fd, then waits to be
 * killed; its pid. */
static pid_t
holder(const char *name)
{
	int p[2];
	char c;
	pid_t pid;

	if (pipe(p) != 0 || (pid = fork()) < 0)
		exit(2);
	if (pid == 0) {
		char detail[256];

		close(p[0]);
		if (!fcgiproc_alive(name, detail, sizeof(detail)))
			_exit(3);
		(void)!write(p[1], "x", 1);
		for (;;)
			pause();
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1)
		exit(4);
	close(p[0]);
	return pid;
}

static void
reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Parent B (a child of ours) starts C, which watches B and tells us its
 * pid; B exits; C, reparented to us (a subreaper), must end by SIGTERM. */
static void
test_parent_death(void)
{
	int p[2], st = 0;
	pid_t b, c = 0;

	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 || pipe(p) != 0 ||
	    (b = fork()) < 0)
		exit(2);
	if (b == 0) {
		pid_t cc = fork();

		if (cc == 0) {
			if (!fcgiproc_watch_parent())
				_exit(5);
			cc = getpid();
			(void)!write(p[1], &cc, sizeof(cc));
			for (;;)
				pause();
		}
		/* Once C watches, B goes. */
		if (read(p[0], &cc, sizeof(cc)) != sizeof(cc))
			_exit(6);
		(void)!write(p[1], &cc, sizeof(cc));
		_exit(0);
	}
	waitpid(b, NULL, 0);
	ok(read(p[0], &c, sizeof(c)) == sizeof(c) && c > 0,
	   "the watching process started");
	ok(waitpid(c, &st, 0) == c && WIFSIGNALED(st) &&
		   WTERMSIG(st) == SIGTERM,
	   "it got SIGTERM when its parent died");
	close(p[0]);
	close(p[1]);
}

int
main(void)
{
	char dir[] = "/tmp/fcgiproc-t-XXXXXX", out[64], small[8], path[256];
	pid_t a1, a2, b;
	int fd;

	test_parent_death();

	unsetenv("XMHUB_ALIVE_DIR");
	is_int(fcgiproc_dead_groups(out, sizeof(out)), 0,
	       "unset: nothing checked");
	ok(fcgiproc_alive("x", out, sizeof(out)), "unset: alive does nothing");

	if (mkdtemp(dir) == NULL)
		return 2;
	setenv("XMHUB_ALIVE_DIR", dir, 1);
	is_int(fcgiproc_dead_groups(out, sizeof(out)), 0, "empty directory");
	ok(!fcgiproc_alive("../x", out, sizeof(out)), "a name with a slash");
	ok(!fcgiproc_alive(".x", out, sizeof(out)), "a hidden name");

	a1 = holder("alpha");
	a2 = holder("alpha");
	b = holder("beta");
	is_int(fcgiproc_dead_groups(out, sizeof(out)), 0,
	       "three processes of two groups: none dead");
	reap(a1);
	is_int(fcgiproc_dead_groups(out, sizeof(out)), 0,
	       "one of alpha's two ended: alpha lives");
	reap(a2);
	is_int(fcgiproc_dead_groups(out, sizeof(out)), 1, "alpha: dead");
	is_str(out, "alpha", "alpha named");
	reap(b);
	is_int(fcgiproc_dead_groups(out, sizeof(out)), 2, "both dead");
	ok(strcmp(out, "alpha,beta") == 0 || strcmp(out, "beta,alpha") == 0,
	   "both named: %s", out);
	is_int(fcgiproc_dead_groups(small, sizeof(small)), 2,
	       "a short buffer: still counted");
	ok(strcmp(small, "alpha") == 0 || strcmp(small, "beta") == 0,
	   "a short buffer: whole names only (%s)", small);

	/* Files that are not groups' are left out. */
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	close(fd);
	is_int(fcgiproc_dead_groups(out, sizeof(out)), 2,
	       "other files are not groups");

	setenv("XMHUB_ALIVE_DIR", "/nonexistent/fcgiproc", 1);
	is_int(fcgiproc_dead_groups(out, sizeof(out)), -1,
	       "an unreadable directory: -1");
	ok(!fcgiproc_alive("x", out, sizeof(out)) && out[0] != '\0',
	   "alive in a missing directory: false with why");

	unlink(path);
	for (const char *n = "alpha\0beta\0"; *n != '\0'; n += strlen(n) + 1) {
		snprintf(path, sizeof(path), "%s/%s.alive", dir, n);
		unlink(path);
	}
	rmdir(dir);
	return tap_done();
}
