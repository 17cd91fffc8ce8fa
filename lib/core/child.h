/*
 * child.h - a child program run with posix_spawn and an argument vector
 * (never a shell), its output captured up to a bound.
 *
 * The children decode untrusted input (ffmpeg, ffprobe), so they get as
 * little of the caller as possible:
 * - the environment is PATH and the locale (LANG, LC_*) only, never the
 *   caller's settings (the env file's database URL, JWT secret, S3 keys
 *   are in the caller's environment: lib/core/conf);
 * - stdin is /dev/null, stdout and stderr are pipes, every other file
 *   descriptor is closed; signal dispositions and mask are the defaults;
 * - the child leads a process group of its own (a signal to the caller's
 *   group does not reach it); child_kill() signals that whole group, and
 *   what is left of the group when the child ends is killed;
 * - it dies with the caller: posix_spawn can not ask for a parent-death
 *   signal, so the child is first this same program again
 *   (/proc/self/exe, argv[0] CHILD_TRAMPOLINE), which a constructor of
 *   child.c turns, before main, into prctl(PR_SET_PDEATHSIG, SIGKILL)
 *   and an exec of the real program.  The signal is tied to the thread
 *   that started the child: start children from the main thread;
 * - the trampoline confines it before the exec, and what it gets is
 *   kept across it: no core file, at most CHILD_NOFILE descriptors,
 *   CHILD_CPU_S seconds of CPU, files of CHILD_FSIZE_MAX bytes,
 *   CHILD_AS_MAX of address space (not for this program itself in a
 *   sanitizer build, whose shadow memory is larger), no new privileges,
 *   and a seccomp filter under which socket() fails with EACCES: no
 *   network and no PostgreSQL socket, whatever the decoded file makes
 *   the child do.  A child that cannot be confined so does not run (the
 *   trampoline exits 127 saying why).  It can still read what the
 *   caller's user may (doc/security.md).
 *
 * stdout and stderr are read into buffers that keep their first max
 * bytes and drop the rest (the pipes are still drained, so the child
 * never blocks on them); each buffer is NUL-terminated (the NUL not
 * counted in len), so it can be searched as a string.
 */
#ifndef XMHUB_CHILD_H
#define XMHUB_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "codec/buf.h"

/* argv[0] of the trampoline; no program of ours is called that. */
#define CHILD_TRAMPOLINE "xmhub-child-exec"

/* Bytes of a reason from child_reason(), NUL included. */
#define CHILD_REASON_MAX 256

/* The confinement of every child (above): generous for ffmpeg masking
 * ten minutes of 1080p video, far below what a machine has. */
#define CHILD_NOFILE 256
#define CHILD_CPU_S 7200
#define CHILD_FSIZE_MAX (16ULL << 30)
#define CHILD_AS_MAX (8ULL << 30)

struct child {
	pid_t pid;	     /* 0 once reaped; also its process group's id */
	int pidfd;	     /* readable once the child ended; -1 if none */
	int out_fd, err_fd;  /* -1 once at end of file */
	struct buf out, err; /* the captured output, NUL-terminated */
	size_t out_max, err_max;
	int status; /* the wait status, once reaped */
};

/* Starts argv[0] (looked up in PATH, as execvp would) with argv.  False
 * with a reason in detail when it cannot be started; sp is then empty
 * (child_free() is harmless on it). */
bool child_start(struct child *sp, char *const argv[], size_t out_max,
		 size_t err_max, char *detail, size_t dlen);

/* Reads output and waits at most ms milliseconds for the child to end:
 * true once it has ended (sp->status holds its wait status).  A signal
 * to the caller cuts the wait short (false), so a caller can look at its
 * stop flag. */
bool child_wait(struct child *sp, int ms);

/* Stops the child and its process group: SIGTERM, then SIGKILL after
 * grace_ms, and reaps it. */
void child_kill(struct child *sp, int grace_ms);

/* Kills the child if still running and frees the buffers. */
void child_free(struct child *sp);

/*
 * Runs argv to its end, for at most timeout_ms (> 0): true when it
 * exited with status 0.  False with a reason in detail: it could not
 * start, it did not end in time or the runner is stopping (lib/core/
 * runner: the child is killed, child_kill(), either way), or it failed
 * (its first stderr line, or its wait status).  The output stays in sp
 * (child_free it).
 */
bool child_run(struct child *sp, char *const argv[], size_t out_max,
	       size_t err_max, int timeout_ms, char *detail, size_t dlen);

/* How a child with wait status status (sp->status) ended, into out:
 * "exited with status 3", "was killed by signal 9". */
void child_status(int status, char *out, size_t len);

/*
 * A reason to show to clients from a child's stderr err (ffmpeg's
 * style): the last line naming a component ("[libopus @ 0x55...] msg"),
 * else the last other meaningful line; component tags become "libopus:
 * ", hex numbers (heap addresses) "<hex>", absolute paths their last
 * component, other than printable ASCII "?".  Into out (len bytes, at
 * most CHILD_REASON_MAX used); "" when err has nothing meaningful.
 */
void child_reason(const char *err, char *out, size_t len);

#endif
