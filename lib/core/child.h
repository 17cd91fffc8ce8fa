/*
 * child.h - a child program run with posix_spawn and an argument vector
 * (never a shell), its output captured up to a bound.
 *
 * stdin is /dev/null; stdout and stderr are read into buffers that keep
 * their first max bytes and drop the rest (the pipes are still drained,
 * so the child never blocks on them).  The child leads a process group
 * of its own, so a signal sent to the caller's group does not reach it;
 * child_kill() stops it on demand.
 */
#ifndef XMHUB_CHILD_H
#define XMHUB_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "codec/buf.h"

struct child {
	pid_t pid;	     /* 0 once reaped */
	int out_fd, err_fd;  /* -1 once at end of file */
	struct buf out, err; /* the captured output */
	size_t out_max, err_max;
	int status; /* the wait status, once reaped */
};

/* Starts argv[0] (looked up in PATH) with argv.  False with a reason in
 * detail when it cannot be started; sp is then empty. */
bool child_start(struct child *sp, char *const argv[], size_t out_max,
		 size_t err_max, char *detail, size_t dlen);

/* Reads output and waits at most ms milliseconds for the child to end:
 * true once it has ended (sp->status holds its wait status). */
bool child_wait(struct child *sp, int ms);

/* Stops the child: SIGTERM, then SIGKILL after grace_ms, and reaps it. */
void child_kill(struct child *sp, int grace_ms);

/* Kills the child if still running and frees the buffers. */
void child_free(struct child *sp);

/* Runs argv to its end (child_start + child_wait): true when it exited
 * with status 0; false with the reason or its first stderr line in
 * detail.  The output stays in sp (child_free it). */
bool child_run(struct child *sp, char *const argv[], size_t out_max,
	       size_t err_max, char *detail, size_t dlen);

#endif
