/* SPDX-License-Identifier: MIT */
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
 *   the child do;
 * - and a Landlock ruleset (Linux 5.13 and later) under which it opens
 *   files only beneath the system's programs, libraries and data (the
 *   table below) and the paths its caller gives (struct child_path):
 *   not the env file (the JWT secret), the rest of the configuration,
 *   the object store's other files or the PostgreSQL socket directory;
 *   from Landlock ABI 6 (Linux 6.12) it can also signal no process but
 *   its own (not its caller, not the service's other programs).
 *   Without Landlock to use (ENOSYS, EOPNOTSUPP, or EPERM from a system
 *   call filter) the children run with the rest of this and the first
 *   child_start() of the process logs a warning (doc/security.md
 *   "Decoders confined" says why).
 * A child that cannot be confined so does not run (the trampoline exits
 * 127 saying why).
 *
 * What every child may open, whatever its caller gives:
 * - /usr, /bin, /sbin, /lib, /lib32, /lib64 and the program itself:
 *   read and execute (a decoder runs no other program, but a shell does);
 * - /etc/ld.so.cache, /etc/ld.so.preload, /etc/localtime, /etc/gnutls,
 *   /etc/gcrypt: read (what the loader, libc, GnuTLS and libgcrypt linked
 *   by ffmpeg open; nothing else of /etc);
 * - /dev/null: read and write; /dev/zero, /dev/urandom, /dev/random:
 *   read;
 * - /proc/self (the child's own), /proc/sys/crypto/fips_enabled,
 *   /sys/devices/system/cpu and /sys/devices/system/node: read (CPUs and
 *   memory, for ffmpeg's threads).
 * Stat, readlink and access are not confined: the child can tell that a
 * file exists, not read it.  A path that does not exist is skipped.
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

/*
 * What a child may do with a path of its caller's table:
 * - CHILD_READ: read the file, or any file beneath the directory;
 * - CHILD_WRITE: write and truncate the file; beneath a directory, also
 *   create and remove files;
 * - CHILD_CREATE: an output file, which child_start() creates empty
 *   (mode 0600; emptied if there) before the child starts, and which the
 *   child may read and write: it then needs no right on the directory.
 */
#define CHILD_READ 1
#define CHILD_WRITE 2
#define CHILD_CREATE 4

/* A path a child may use (with CHILD_ flags), in a table that ends with
 * a NULL path: the input it decodes, the output it writes. */
struct child_path {
	const char *path;
	int access;
};

struct child {
	pid_t pid;	     /* 0 once reaped; also its process group's id */
	int pidfd;	     /* readable once the child ended; -1 if none */
	int out_fd, err_fd;  /* -1 once at end of file */
	struct buf out, err; /* the captured output, NUL-terminated */
	size_t out_max, err_max;
	int status; /* the wait status, once reaped */
};

/* Starts argv[0] (looked up in PATH, as execvp would) with argv, able
 * to open the paths of the table paths (NULL: none) besides the
 * system's.  False with a reason in detail when it cannot be started;
 * sp is then empty (child_free() is harmless on it). */
bool child_start(struct child *sp, char *const argv[],
		 const struct child_path *paths, size_t out_max, size_t err_max,
		 char *detail, size_t dlen);

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
 * Runs argv (with paths, as child_start()) to its end, for at most
 * timeout_ms (> 0): true when it
 * exited with status 0.  False with a reason in detail: it could not
 * start, it did not end in time or the runner is stopping (lib/core/
 * runner: the child is killed, child_kill(), either way), or it failed
 * (its first stderr line, or its wait status).  The output stays in sp
 * (child_free it).
 */
bool child_run(struct child *sp, char *const argv[],
	       const struct child_path *paths, size_t out_max, size_t err_max,
	       int timeout_ms, char *detail, size_t dlen);

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
