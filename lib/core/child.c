/* SPDX-License-Identifier: MIT */
/*
 * child.c - child programs with a minimal environment, bounded captured
 * output, a deadline, and a death tied to ours (child.h).
 */
#define _GNU_SOURCE /* pipe2, pidfd_open, addclosefrom_np, asprintf */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "codec/hex.h"
#include "core/child.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/runner.h"
#include "core/sandbox.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define STEP_MS 50	  /* without a pidfd: how often the end is looked for */
#define STOP_STEP_MS 250  /* child_run: how often the stop flag is read */
#define RUN_GRACE_MS 1000 /* child_run: SIGTERM to SIGKILL */
#define FLUSH_MS 1000	  /* output still read once the child ended */

/* Landlock's rights of ABI 3 and 5, which older headers lack. */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
/* The rights a rule on a file (not a directory) may hold. */
#define FILE_RIGHTS                                                            \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |          \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |          \
	 LANDLOCK_ACCESS_FS_IOCTL_DEV)
#define EXEC 8 /* with the CHILD_ flags: may be executed (system table) */
/* ABI 6's scopes: no abstract UNIX socket of, no signal to, a process
 * outside the child's domain (the caller, the service's other
 * programs). */
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* struct landlock_ruleset_attr as of ABI 6 (older headers stop at the
 * first field); the kernel takes the fields it knows, the others 0. */
struct ruleset_attr {
	__u64 handled_access_fs, handled_access_net, scoped;
};

extern char **environ;

/* What every child may open (child.h); missing paths are skipped. */
static const struct child_path system_paths[] = {
	{"/usr", CHILD_READ | EXEC},
	{"/bin", CHILD_READ | EXEC},
	{"/sbin", CHILD_READ | EXEC},
	{"/lib", CHILD_READ | EXEC},
	{"/lib32", CHILD_READ | EXEC},
	{"/lib64", CHILD_READ | EXEC},
	{"/etc/ld.so.cache", CHILD_READ},
	{"/etc/ld.so.preload", CHILD_READ},
	{"/etc/localtime", CHILD_READ},
	{"/etc/gnutls", CHILD_READ},
	{"/etc/gcrypt", CHILD_READ},
	{"/dev/null", CHILD_READ | CHILD_WRITE},
	{"/dev/zero", CHILD_READ},
	{"/dev/urandom", CHILD_READ},
	{"/dev/random", CHILD_READ},
	{"/proc/self", CHILD_READ},
	{"/proc/sys/crypto/fips_enabled", CHILD_READ},
	{"/sys/devices/system/cpu", CHILD_READ},
	{"/sys/devices/system/node", CHILD_READ},
	{NULL, 0},
};

static bool
limit(int resource, rlim_t v)
{
	struct rlimit rl = {v, v};

	return setrlimit(resource, &rl) == 0;
}

#ifdef SANDBOX_UNDER_ASAN
/* Whether path is this program (a child of ours such as the libsox
 * probe, lib/core/probe). */
static bool
is_self(const char *path)
{
	char self[PATH_MAX], real[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0 || realpath(path, real) == NULL)
		return false;
	self[n] = '\0';
	return strcmp(self, real) == 0;
}
#endif

/* The kernel's Landlock ABI version; 0 when there is no Landlock to
 * use, errno saying why: ENOSYS (not built, or refused by a container's
 * filter), EOPNOTSUPP (not enabled at boot), EPERM (refused by a
 * system call filter: a container's, or systemd's SystemCallFilter
 * without the Landlock calls); -1 on another error. */
static int
landlock_abi(void)
{
#ifdef SYS_landlock_create_ruleset
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0,
			 LANDLOCK_CREATE_RULESET_VERSION);

	if (v >= 0)
		return (int)v;
#else
	errno = ENOSYS;
#endif
	if (errno == ENOSYS || errno == EOPNOTSUPP || errno == EPERM)
		return 0;
	return -1;
}

/* The filesystem rights ABI version abi knows: all of them are handled,
 * so what no rule allows is denied. */
static __u64
handled(int abi)
{
	__u64 h = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1 */

	if (abi >= 2)
		h |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		h |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		h |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return h;
}

/* The rights of access (CHILD_ flags and EXEC) on a directory or a
 * file. */
static __u64
rights(int access, bool dir)
{
	__u64 r = 0;

	if (access & CHILD_CREATE)
		access |= CHILD_READ | CHILD_WRITE;
	if (access & CHILD_READ)
		r |= LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
	if (access & CHILD_WRITE)
		r |= LANDLOCK_ACCESS_FS_WRITE_FILE |
		     LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_MAKE_REG |
		     LANDLOCK_ACCESS_FS_REMOVE_FILE;
	if (access & EXEC)
		r |= LANDLOCK_ACCESS_FS_EXECUTE;
	return dir ? r : r & FILE_RIGHTS;
}

/* Adds to the ruleset rs a rule giving access beneath path (of the
 * rights handled h); a path that does not exist gives nothing. */
static bool
allow(int rs, __u64 h, const char *path, int access)
{
	struct landlock_path_beneath_attr pb;
	struct stat st;
	int fd = open(path, O_PATH | O_CLOEXEC), e;
	bool ok;

	if (fd < 0)
		return errno == ENOENT;
	ok = fstat(fd, &st) == 0;
	pb.parent_fd = fd;
	pb.allowed_access = rights(access, S_ISDIR(st.st_mode)) & h;
	if (ok && pb.allowed_access != 0)
		ok = syscall(SYS_landlock_add_rule, rs,
			     LANDLOCK_RULE_PATH_BENEATH, &pb, 0) == 0;
	e = errno;
	close(fd);
	errno = e;
	return ok;
}

/*
 * Applies the Landlock ruleset of child.h to the trampoline: the system's
 * paths, the program self, and the caller's rules (each a CHILD_ flags
 * digit, then the path).  Without Landlock in the kernel, nothing.
 */
static bool
landlock(const char *self, char *const rules[], int n, const char **step)
{
	struct ruleset_attr attr = {0, 0, 0};
	int abi = landlock_abi(), rs, e;
	bool ok = true;

	*step = "landlock";
	if (abi <= 0)
		return abi == 0;
	attr.handled_access_fs = handled(abi);
	if (abi >= 6)
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET |
			      LANDLOCK_SCOPE_SIGNAL;
	if ((rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr),
			       0)) < 0)
		return false;
	for (const struct child_path *p = system_paths; ok && p->path != NULL;
	     p++)
		if (!(ok = allow(rs, attr.handled_access_fs, p->path,
				 p->access)))
			*step = p->path;
	if (ok &&
	    !(ok = allow(rs, attr.handled_access_fs, self, CHILD_READ | EXEC)))
		*step = self;
	for (int i = 0; ok && i < n; i++)
		if (!(ok = allow(rs, attr.handled_access_fs, rules[i] + 1,
				 rules[i][0] - '0')))
			*step = rules[i] + 1;
	if (ok) {
		*step = "landlock_restrict_self";
		ok = syscall(SYS_landlock_restrict_self, rs, 0) == 0;
	}
	e = errno;
	close(rs);
	errno = e;
	return ok;
}

/*
 * Confines the trampoline before it execs path (child.h), with the n
 * caller's rules of landlock(); the step that failed into *step.  The seccomp
 * filter allows every call but socket(), which fails with EACCES, and kills a
 * call of another architecture's numbers (the x32 ABI's too), which would pass
 * it by.
 */
static bool
confine(const char *path, char *const rules[], int n, const char **step)
{
#ifdef SANDBOX_ARCH
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SANDBOX_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
#ifdef __x86_64__
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
#endif
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(*f), f};
#endif

	/* Landlock first: its failures (a path of the caller's) are then
	 * reported before RLIMIT_AS, under which a sanitizer's runtime can
	 * not allocate what printing them takes. */
	*step = "PR_SET_NO_NEW_PRIVS";
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    !landlock(path, rules, n, step))
		return false;
	*step = "RLIMIT_CORE";
	if (!limit(RLIMIT_CORE, 0))
		return false;
	*step = "RLIMIT_NOFILE";
	if (!limit(RLIMIT_NOFILE, CHILD_NOFILE))
		return false;
	*step = "RLIMIT_CPU";
	if (!limit(RLIMIT_CPU, CHILD_CPU_S))
		return false;
	*step = "RLIMIT_FSIZE";
	if (!limit(RLIMIT_FSIZE, (rlim_t)CHILD_FSIZE_MAX))
		return false;
	*step = "RLIMIT_AS";
#ifdef SANDBOX_UNDER_ASAN
	if (!is_self(path) && !limit(RLIMIT_AS, (rlim_t)CHILD_AS_MAX))
		return false;
#else
	if (!limit(RLIMIT_AS, (rlim_t)CHILD_AS_MAX))
		return false;
#endif
#ifdef SANDBOX_ARCH
	*step = "seccomp";
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0;
#else
	*step = "seccomp: no filter for this architecture";
	errno = ENOSYS;
	return false;
#endif
}

/*
 * The trampoline (child.h), before main: argv is {CHILD_TRAMPOLINE,
 * parent pid, path, n, n rules of landlock(), the child's argv...}, envp
 * the child's environment (glibc passes a program's constructors argc,
 * argv and envp).  The parent may have died before the signal was asked
 * for: then getppid() is another process and the child gives up.
 */
__attribute__((constructor)) static void
trampoline(int argc, char **argv, char **envp)
{
	const char *step;
	char *end, **args;
	long parent, n;

	if (argc < 5 || strcmp(argv[0], CHILD_TRAMPOLINE) != 0)
		return;
	errno = 0;
	parent = strtol(argv[1], &end, 10);
	if (errno != 0 || *end != '\0' ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(127);
	n = strtol(argv[3], &end, 10);
	if (*end != '\0' || n < 0 || n > argc - 5)
		_exit(127);
	args = argv + 4 + n;
	if (!confine(argv[2], argv + 4, (int)n, &step)) {
		dprintf(2, "cannot confine %s: %s: %s\n", args[0], step,
			strerror(errno));
		_exit(127);
	}
	execve(argv[2], args, envp);
	dprintf(2, "cannot run %s: %s\n", args[0], strerror(errno));
	_exit(127);
}

/* Logs that there is no Landlock to use, and why (child.h). */
static void
landlock_check(void)
{
	if (landlock_abi() == 0)
		log_warn("no Landlock (%s): decoders run able to read what "
			 "this user may, the env file among it "
			 "(doc/security.md \"Decoders confined\")",
			 strerror(errno));
}

/* The trampoline's rules (landlock()) for the n paths into rule (each
 * allocated; *made of them); CHILD_CREATE's files are made here. */
static bool
rule_args(const struct child_path *paths, size_t n, char **rule, size_t *made,
	  char *detail, size_t dlen)
{
	for (size_t i = 0; i < n; i++) {
		const struct child_path *p = &paths[i];
		int fd;

		if ((p->access & CHILD_CREATE) &&
		    ((fd = open(p->path,
				O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
					O_CLOEXEC,
				0600)) < 0 ||
		     close(fd) != 0)) {
			snprintf(detail, dlen, "cannot create %s: %s", p->path,
				 strerror(errno));
			return false;
		}
		if (asprintf(&rule[i], "%d%s",
			     p->access &
				     (CHILD_READ | CHILD_WRITE | CHILD_CREATE),
			     p->path) < 0) {
			snprintf(detail, dlen, "out of memory");
			return false;
		}
		(*made)++;
	}
	return true;
}

/* The file name resolves to, into path: name itself when it has a
 * slash, else the first executable regular file of that name in a PATH
 * directory (empty entries, the current directory, are not searched). */
static bool
resolve(const char *name, char *path, size_t len, char *detail, size_t dlen)
{
	const char *p = getenv("PATH");
	struct stat st;

	if (strchr(name, '/') != NULL) {
		snprintf(path, len, "%s", name);
		if (strlen(name) < len && access(path, X_OK) == 0)
			return true;
		snprintf(detail, dlen, "cannot run %s: %s", name,
			 strlen(name) < len ? strerror(errno)
					    : "name too long");
		return false;
	}
	if (p == NULL || *p == '\0')
		p = DEFAULT_PATH;
	for (;;) {
		size_t n = strcspn(p, ":");

		if (n > 0 &&
		    snprintf(path, len, "%.*s/%s", (int)n, p, name) <
			    (int)len &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(path, X_OK) == 0)
			return true;
		if (p[n] == '\0')
			break;
		p += n + 1;
	}
	snprintf(detail, dlen, "cannot run %s: not found in PATH", name);
	return false;
}

/* An entry of environ a child gets: PATH and the locale. */
static bool
kept(const char *e)
{
	return strncmp(e, "PATH=", 5) == 0 || strncmp(e, "LANG=", 5) == 0 ||
	       strncmp(e, "LC_", 3) == 0;
}

bool
child_start(struct child *sp, char *const argv[],
	    const struct child_path *paths, size_t out_max, size_t err_max,
	    char *detail, size_t dlen)
{
	static pthread_once_t checked = PTHREAD_ONCE_INIT;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t all, none;
	char path[PATH_MAX], parent[24], count[24];
	char **args = NULL, **env = NULL;
	size_t na = 0, ne = 0, np = 0, made = 0, k = 0;
	int out[2] = {-1, -1}, err[2] = {-1, -1}, rc;
	bool ok = false;

	memset(sp, 0, sizeof(*sp));
	sp->pidfd = sp->out_fd = sp->err_fd = -1;
	buf_init(&sp->out, 0);
	buf_init(&sp->err, 0);
	sp->out_max = out_max;
	sp->err_max = err_max;
	/* Terminated from the start: empty output is "" too. */
	buf_putc(&sp->out, '\0');
	buf_putc(&sp->err, '\0');
	sp->out.len = sp->err.len = 0;
	if (sp->out.failed || sp->err.failed) {
		snprintf(detail, dlen, "cannot run %s: out of memory", argv[0]);
		goto out;
	}
	pthread_once(&checked, landlock_check);
	if (!resolve(argv[0], path, sizeof(path), detail, dlen))
		goto out;
	while (argv[na] != NULL)
		na++;
	while (environ[ne] != NULL)
		ne++;
	while (paths != NULL && paths[np].path != NULL)
		np++;
	if ((args = calloc(4 + np + na + 1, sizeof(*args))) == NULL ||
	    (env = calloc(ne + 1, sizeof(*env))) == NULL) {
		snprintf(detail, dlen, "cannot run %s: out of memory", argv[0]);
		goto out;
	}
	snprintf(parent, sizeof(parent), "%ld", (long)getpid());
	snprintf(count, sizeof(count), "%zu", np);
	args[0] = (char *)CHILD_TRAMPOLINE;
	args[1] = parent;
	args[2] = path;
	args[3] = count;
	if (!rule_args(paths, np, args + 4, &made, detail, dlen))
		goto out;
	memcpy(args + 4 + np, argv, na * sizeof(*args));
	for (size_t i = 0; i < ne; i++)
		if (kept(environ[i]))
			env[k++] = environ[i];
	/* Only the child's dup2'ed copies may outlive exec. */
	if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
		snprintf(detail, dlen, "pipe: %s", strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	/* Descriptors a library opened without O_CLOEXEC (a database or
	 * store connection) are not the child's business. */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	sigfillset(&all);
	sigemptyset(&none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
						POSIX_SPAWN_SETSIGDEF |
						POSIX_SPAWN_SETSIGMASK);
	rc = posix_spawn(&sp->pid, "/proc/self/exe", &fa, &attr, args, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		snprintf(detail, dlen, "cannot run %s: %s", argv[0],
			 strerror(rc));
		sp->pid = 0;
		goto out;
	}
	/* Without a pidfd (a kernel before 5.3) the end is polled for. */
	sp->pidfd = pidfd_open(sp->pid, 0);
	sp->out_fd = out[0];
	sp->err_fd = err[0];
	out[0] = err[0] = -1;
	ok = true;
out:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
	for (size_t i = 0; i < made; i++)
		free(args[4 + i]);
	free(args);
	free(env);
	if (!ok) {
		buf_free(&sp->out);
		buf_free(&sp->err);
	}
	return ok;
}

/* Reads what fd has into b (keeping max bytes, then a NUL); closes it at
 * the end. */
static void
drain(int *fd, struct buf *b, size_t max)
{
	char chunk[8192];
	ssize_t n = read(*fd, chunk, sizeof(chunk));

	if (n > 0) {
		size_t take = b->len < max ? max - b->len : 0;

		if (take > (size_t)n)
			take = (size_t)n;
		/* A buffer that can not grow keeps what it has, terminated. */
		if (take > 0 && buf_reserve(b, take + 1)) {
			memcpy(b->p + b->len, chunk, take);
			b->len += take;
			b->p[b->len] = '\0';
		}
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		close(*fd);
		*fd = -1;
	}
}

/* True once the child has ended; it stays a zombie (not reaped), which
 * keeps its pid, the group's id, from being reused. */
static bool
ended(const struct child *sp)
{
	siginfo_t si;

	si.si_pid = 0;
	if (waitid(P_PID, (id_t)sp->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
		return errno != EINTR; /* not ours to wait: reap() says so */
	return si.si_pid != 0;
}

/* The child has ended: kills what is left of its group, reads the rest
 * of the output (for at most FLUSH_MS: a process that left the group may
 * hold the pipes), reaps the child. */
static void
reap(struct child *sp)
{
	long long end = clock_mono_ms() + FLUSH_MS;

	kill(-sp->pid, SIGKILL);
	while (sp->out_fd >= 0 || sp->err_fd >= 0) {
		struct pollfd p[2] = {{sp->out_fd, POLLIN, 0},
				      {sp->err_fd, POLLIN, 0}};
		long long left = end - clock_mono_ms();
		int r;

		if (left <= 0)
			break;
		if ((r = poll(p, 2, (int)left)) == 0 ||
		    (r < 0 && errno != EINTR))
			break;
		if (r > 0 && p[0].revents != 0)
			drain(&sp->out_fd, &sp->out, sp->out_max);
		if (r > 0 && p[1].revents != 0)
			drain(&sp->err_fd, &sp->err, sp->err_max);
	}
	if (sp->out_fd >= 0)
		close(sp->out_fd);
	if (sp->err_fd >= 0)
		close(sp->err_fd);
	sp->out_fd = sp->err_fd = -1;
	while (waitpid(sp->pid, &sp->status, 0) < 0)
		if (errno != EINTR) {
			sp->status = -1; /* reaped by someone else */
			break;
		}
	if (sp->pidfd >= 0)
		close(sp->pidfd);
	sp->pidfd = -1;
	sp->pid = 0;
}

bool
child_wait(struct child *sp, int ms)
{
	long long end = clock_mono_ms() + ms;

	while (sp->pid > 0) {
		struct pollfd p[3] = {{sp->out_fd, POLLIN, 0},
				      {sp->err_fd, POLLIN, 0},
				      {sp->pidfd, POLLIN, 0}};
		long long left = end - clock_mono_ms();
		int step;

		if (ended(sp)) {
			reap(sp);
			break;
		}
		if (left <= 0)
			return false;
		step = left < STEP_MS || sp->pidfd >= 0 ? (int)left : STEP_MS;
		/* EINTR: a signal, which the caller may be waiting for. */
		if (poll(p, 3, step) < 0)
			return false;
		if (p[0].revents != 0)
			drain(&sp->out_fd, &sp->out, sp->out_max);
		if (p[1].revents != 0)
			drain(&sp->err_fd, &sp->err, sp->err_max);
	}
	return true;
}

/* child_wait() until end (clock_mono_ms()), whatever signals come. */
static bool
wait_until(struct child *sp, long long end)
{
	for (;;) {
		long long left = end - clock_mono_ms();

		if (child_wait(sp, left > 0 ? (int)left : 0))
			return true;
		if (left <= 0)
			return false;
	}
}

void
child_kill(struct child *sp, int grace_ms)
{
	if (sp->pid <= 0)
		return;
	kill(-sp->pid, SIGTERM);
	if (wait_until(sp, clock_mono_ms() + grace_ms))
		return;
	kill(-sp->pid, SIGKILL);
	while (!child_wait(sp, 1000))
		;
}

void
child_free(struct child *sp)
{
	child_kill(sp, 1000);
	if (sp->out_fd >= 0)
		close(sp->out_fd);
	if (sp->err_fd >= 0)
		close(sp->err_fd);
	sp->out_fd = sp->err_fd = -1;
	buf_free(&sp->out);
	buf_free(&sp->err);
}

void
child_status(int status, char *out, size_t len)
{
	if (status == -1)
		snprintf(out, len, "ended (its status is unknown)");
	else if (WIFEXITED(status))
		snprintf(out, len, "exited with status %d",
			 WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(out, len, "was killed by signal %d", WTERMSIG(status));
	else
		snprintf(out, len, "ended with wait status %d", status);
}

bool
child_run(struct child *sp, char *const argv[], const struct child_path *paths,
	  size_t out_max, size_t err_max, int timeout_ms, char *detail,
	  size_t dlen)
{
	long long end;
	char how[64];
	size_t n;

	if (!child_start(sp, argv, paths, out_max, err_max, detail, dlen))
		return false;
	end = clock_mono_ms() + timeout_ms;
	for (;;) {
		long long left = end - clock_mono_ms();
		int step = left < STOP_STEP_MS ? (left > 0 ? (int)left : 0)
					       : STOP_STEP_MS;

		if (child_wait(sp, step))
			break;
		if (runner_stopping()) {
			child_kill(sp, RUN_GRACE_MS);
			snprintf(detail, dlen,
				 "%s was stopped: the runner is stopping",
				 argv[0]);
			return false;
		}
		if (left <= 0) {
			child_kill(sp, RUN_GRACE_MS);
			if (timeout_ms % 1000 == 0)
				snprintf(detail, dlen,
					 "%s did not finish within %d s",
					 argv[0], timeout_ms / 1000);
			else
				snprintf(detail, dlen,
					 "%s did not finish within %d ms",
					 argv[0], timeout_ms);
			return false;
		}
	}
	if (WIFEXITED(sp->status) && WEXITSTATUS(sp->status) == 0)
		return true;
	n = strcspn((const char *)sp->err.p, "\r\n");
	if (n > 0) {
		snprintf(detail, dlen, "%.*s", n < dlen ? (int)n : (int)dlen,
			 (const char *)sp->err.p);
	} else {
		child_status(sp->status, how, sizeof(how));
		snprintf(detail, dlen, "%s %s", argv[0], how);
	}
	return false;
}

/* ffmpeg's closing lines that say nothing of the cause. */
static bool
generic(const char *s, size_t n)
{
	static const char *const lines[] = {"Conversion failed!",
					    "Last message repeated"};

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		size_t l = strlen(lines[i]);

		if (n >= l && strncmp(s, lines[i], l) == 0)
			return true;
	}
	return false;
}

/* A component tag at s: "[name @ 0x...]": its length, 0 if none; *name_n
 * the length of the name. */
static size_t
tag(const char *s, size_t n, size_t *name_n)
{
	const char *close, *at;

	if (n == 0 || s[0] != '[' || (close = memchr(s, ']', n)) == NULL)
		return 0;
	for (at = s + 1; at + 3 <= close; at++)
		if (memcmp(at, " @ ", 3) == 0) {
			*name_n = (size_t)(at - s - 1);
			return (size_t)(close - s) + 1;
		}
	return 0;
}

/* Appends s[0..n) to out (o bytes used of cap), printable ASCII only. */
static void
put(char *out, size_t *o, size_t cap, const char *s, size_t n)
{
	for (size_t i = 0; i < n && *o + 1 < cap; i++)
		out[(*o)++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
}

/* Appends s[0..n) as put() does, hex numbers ("0x55d9fee6b640") as
 * "<hex>". */
static void
put_text(char *out, size_t *o, size_t cap, const char *s, size_t n)
{
	for (size_t i = 0; i < n && *o + 1 < cap;)
		if (s[i] == '0' && i + 2 < n && (s[i + 1] | 0x20) == 'x' &&
		    hex_value(s[i + 2]) >= 0) {
			for (i += 2; i < n && hex_value(s[i]) >= 0; i++)
				;
			put(out, o, cap, "<hex>", 5);
		} else
			put(out, o, cap, s + i++, 1);
}

/* True when the slash at s[i] starts an absolute path: first in a word
 * (after a blank, a quote, a bracket, "=", "," or ":"), a name after it. */
static bool
path_start(const char *s, size_t n, size_t i)
{
	return (i == 0 || strchr(" \t'\"([=,:", s[i - 1]) != NULL) &&
	       i + 1 < n && strchr(" \t'\"),", s[i + 1]) == NULL;
}

/* The end of the path that starts at s[i]: a quoted path's quote, else
 * a blank, a quote, or a colon ending a word; *base the start of its
 * last component. */
static size_t
path_end(const char *s, size_t n, size_t i, size_t *base)
{
	char quote = i > 0 && (s[i - 1] == '\'' || s[i - 1] == '"') ? s[i - 1]
								    : '\0';

	for (*base = i + 1; i < n; i++) {
		if (quote != '\0' ? s[i] == quote
				  : strchr(" \t'\"),", s[i]) != NULL ||
					    (s[i] == ':' &&
					     (i + 1 == n || s[i + 1] == ' ')))
			break;
		if (s[i] == '/')
			*base = i + 1;
	}
	return i;
}

/* The line s[0..n), made safe to show, into out (child_reason()). */
static void
clean(const char *s, size_t n, char *out, size_t cap)
{
	size_t i = 0, o = 0, t, name;

	while ((t = tag(s + i, n - i, &name)) > 0) {
		put_text(out, &o, cap, s + i + 1, name);
		put(out, &o, cap, ": ", 2);
		i += t;
		while (i < n && s[i] == ' ')
			i++;
	}
	/* Text up to a path, the path's last component, and so on. */
	for (size_t from = i; i <= n && o + 1 < cap; i++) {
		size_t base, e;

		if (i < n && (s[i] != '/' || !path_start(s, n, i)))
			continue;
		put_text(out, &o, cap, s + from, i - from);
		if (i == n)
			break;
		e = path_end(s, n, i, &base);
		put_text(out, &o, cap, s + base, e - base);
		from = e;
		i = e - 1;
	}
	while (o > 0 && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
}

void
child_reason(const char *err, char *out, size_t len)
{
	const char *p = err, *line = NULL, *tagged = NULL;
	size_t line_n = 0, tagged_n = 0, name;

	if (len == 0)
		return;
	while (*p != '\0') {
		size_t n = strcspn(p, "\r\n"), m = n;
		const char *s = p;

		while (m > 0 && (*s == ' ' || *s == '\t')) {
			s++;
			m--;
		}
		while (m > 0 && (s[m - 1] == ' ' || s[m - 1] == '\t'))
			m--;
		if (m > 0 && !generic(s, m)) {
			if (tag(s, m, &name) > 0) {
				tagged = s;
				tagged_n = m;
			} else {
				line = s;
				line_n = m;
			}
		}
		p += n;
		p += strspn(p, "\r\n");
	}
	if (tagged != NULL) {
		line = tagged;
		line_n = tagged_n;
	}
	out[0] = '\0';
	if (line != NULL)
		clean(line, line_n, out,
		      len < CHILD_REASON_MAX ? len : CHILD_REASON_MAX);
}
