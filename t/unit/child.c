/* SPDX-License-Identifier: MIT */
/*
 * child.t - child programs (lib/core/child.c): the minimal environment
 * (nothing of the settings, from the environment or the env file,
 * reaches a child), the process group, the deadline that kills a child
 * and its grandchildren, the bounded and terminated output, the death of
 * a child with its parent (a real SIGKILL), the runner's stop, the
 * Landlock ruleset (a child opens its own paths, not the env file nor
 * another facility's object beside them; ffmpeg and ffprobe work under
 * it) and the fallback without Landlock, and the reasons made from
 * ffmpeg's stderr.
 *
 * The test is a child subreaper, so that orphaned grandchildren come to
 * it and their end can be read with waitpid().
 */
#define _GNU_SOURCE /* prctl's PR_SET_CHILD_SUBREAPER */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/child.h"
#include "core/clock.h"
#include "core/conf.h"
#include "core/runner.h"
#include "tap.h"

extern char **environ;

/* Waits at most ms for pid (ours, or an orphan come to us) to end; its
 * wait status, or -1 if it did not end. */
static int
reap_within(pid_t pid, int ms)
{
	long long end = clock_mono_ms() + ms;
	int status;

	while (clock_mono_ms() < end) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		/* An orphan may not have come to us yet. */
		if (r < 0 && errno != ECHILD)
			return -1;
		nanosleep(&(struct timespec){0, 20000000}, NULL);
	}
	return -1;
}

/* True when the line name=... of env's output is one a child may see. */
static bool
allowed(const char *line)
{
	return strncmp(line, "PATH=", 5) == 0 ||
	       strncmp(line, "LANG=", 5) == 0 || strncmp(line, "LC_", 3) == 0;
}

static void
environment(void)
{
	char path[] = "/tmp/child-t-XXXXXX", detail[256], *save, *line;
	char *const env[] = {"env", NULL};
	char want_path[4096];
	int fd, seen = 0, bad = 0, lines = 0, want = 0;
	bool lang = false, lc = false, path_same = false;
	struct child ch;

	/* The secrets a runner has: set in the environment... */
	setenv("XMHUB_DATABASE_URL", "postgresql://u:pw@db/xmhub", 1);
	setenv("XMHUB_JWT_SECRET", "jwt-secret-of-the-test", 1);
	setenv("FACE_API_KEY", "face-key-of-the-test", 1);
	setenv("FACE_API_MODEL_DIR", "/srv/models", 1);
	/* ... and loaded from the env file (lib/core/conf: setenv). */
	unsetenv("XMHUB_S3_SECRET_KEY");
	unsetenv("XMHUB_S3_ACCESS_KEY");
	if ((fd = mkstemp(path)) < 0)
		abort();
	dprintf(fd, "XMHUB_S3_SECRET_KEY=s3-secret-of-the-test\n"
		    "XMHUB_S3_ACCESS_KEY=s3-access-of-the-test\n");
	close(fd);
	ok(conf_load_file(path, detail, sizeof(detail)) &&
		   getenv("XMHUB_S3_SECRET_KEY") != NULL,
	   "the env file is loaded into the environment");
	unlink(path);
	setenv("LANG", "C.UTF-8", 1);
	setenv("LC_MESSAGES", "C", 1);
	setenv("OTHER_THING", "not for children", 1);
	snprintf(want_path, sizeof(want_path), "PATH=%s", getenv("PATH"));
	for (char **e = environ; *e != NULL; e++)
		want += allowed(*e);

	ok(child_run(&ch, env, NULL, 65536, 4096, 10000, detail,
		     sizeof(detail)),
	   "env runs");
	for (line = strtok_r((char *)ch.out.p, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		lines++;
		if (strstr(line, "XMHUB_") != NULL ||
		    strstr(line, "FACE_API_") != NULL ||
		    strstr(line, "secret") != NULL)
			seen++;
		if (!allowed(line)) {
			bad++;
			diag("the child saw %s", line);
		}
		lang |= strcmp(line, "LANG=C.UTF-8") == 0;
		lc |= strcmp(line, "LC_MESSAGES=C") == 0;
		path_same |= strcmp(line, want_path) == 0;
	}
	is_int(seen, 0, "no XMHUB_* or FACE_API_* variable reaches the child");
	is_int(bad, 0, "nothing but PATH, LANG and LC_* reaches the child");
	ok(path_same, "PATH is passed on");
	ok(lang && lc, "LANG and LC_* are passed on");
	is_int(lines, want, "exactly the parent's PATH, LANG and LC_*");
	child_free(&ch);
	unsetenv("OTHER_THING");
}

static void
descriptors(void)
{
	char *const check[] = {"sh", "-c",
			       "for f in /proc/$$/fd/*; do echo ${f##*/}; "
			       "done",
			       NULL};
	char detail[256];
	/* High: sh's glob opens a descriptor of its own, the lowest free. */
	int leak = dup2(STDIN_FILENO, 57); /* no O_CLOEXEC */
	char name[16];
	struct child ch;

	ok(leak == 57, "a descriptor without O_CLOEXEC in the parent");
	ok(child_run(&ch, check, NULL, 4096, 4096, 10000, detail,
		     sizeof(detail)),
	   "sh lists its descriptors");
	snprintf(name, sizeof(name), "\n%d\n", leak);
	ok(strncmp((char *)ch.out.p, "0\n1\n2\n", 6) == 0,
	   "stdin, stdout, stderr are there");
	ok(strstr((char *)ch.out.p, name) == NULL,
	   "the parent's descriptor %d is not", leak);
	child_free(&ch);
	close(leak);
}

static void
group_and_deadline(void)
{
	/* A grandchild in the background, its pid on stdout; sh becomes
	 * the foreground sleep, which never reaps: only we can (sh could
	 * reap a child while it dies). */
	char *const tree[] = {"sh", "-c", "sleep 30 & echo $!; exec sleep 30",
			      NULL};
	/* Deaf to SIGTERM: SIGKILL after the grace. */
	char *const deaf[] = {"sh", "-c", "trap '' TERM; sleep 30 & wait",
			      NULL};
	char detail[256];
	struct child ch;
	long long t0;
	pid_t grand;
	int st;

	ok(child_start(&ch, tree, NULL, 64, 64, detail, sizeof(detail)),
	   "a child with a grandchild starts");
	ok(getpgid(ch.pid) == ch.pid, "it leads a process group of its own");
	ok(getpgid(ch.pid) != getpgrp(), "not the parent's group");
	child_free(&ch);

	t0 = clock_mono_ms();
	ok(!child_run(&ch, tree, NULL, 64, 64, 1000, detail, sizeof(detail)),
	   "child_run with a 1 s deadline: false");
	ok(clock_mono_ms() - t0 < 1000 + 1500,
	   "it returned within the deadline and "
	   "the grace (%lld ms)",
	   clock_mono_ms() - t0);
	is_str(detail, "sh did not finish within 1 s", "the reason says so");
	ok(WIFSIGNALED(ch.status) && WTERMSIG(ch.status) == SIGTERM,
	   "the child ended by SIGTERM");
	grand = (pid_t)atoi((char *)ch.out.p);
	ok(grand > 0, "the grandchild's pid %d was read", (int)grand);
	st = reap_within(grand, 2000);
	if (!ok(st != -1 && WIFSIGNALED(st),
		"the grandchild was killed too, by the group's signal"))
		diag("its wait status: %d", st);
	child_free(&ch);

	t0 = clock_mono_ms();
	ok(!child_run(&ch, deaf, NULL, 64, 64, 500, detail, sizeof(detail)),
	   "a child deaf to SIGTERM, 0.5 s deadline: false");
	ok(clock_mono_ms() - t0 < 500 + 1000 + 1000,
	   "it returned within the deadline and the grace (%lld ms)",
	   clock_mono_ms() - t0);
	ok(WIFSIGNALED(ch.status) && WTERMSIG(ch.status) == SIGKILL,
	   "it ended by SIGKILL");
	is_str(detail, "sh did not finish within 500 ms", "the reason says so");
	child_free(&ch);
}

static void
output(void)
{
	char *const lots[] = {"sh", "-c", "yes 0123456789 | head -c 100000",
			      NULL};
	char *const noline[] = {"sh", "-c", "printf abcdefghij >&2; exit 4",
				NULL};
	char *const empty[] = {"true", NULL};
	char *const nosuch[] = {"xmhub-no-such-program", NULL};
	char detail[256], how[64];
	struct child ch;

	ok(child_run(&ch, lots, NULL, 1000, 16, 10000, detail, sizeof(detail)),
	   "100 kB of output, 1000 kept");
	is_int(ch.out.len, 1000, "cut at the bound");
	is_int(ch.out.p[1000], '\0', "and terminated after it");
	is_int(strlen((char *)ch.out.p), 1000, "a string of 1000 bytes");
	child_free(&ch);

	ok(!child_run(&ch, noline, NULL, 64, 5, 10000, detail, sizeof(detail)),
	   "stderr with no newline past its bound");
	is_int(ch.err.len, 5, "stderr cut at 5 bytes");
	is_str(detail, "abcde", "the reason is what was kept, no more");
	child_status(ch.status, how, sizeof(how));
	is_str(how, "exited with status 4", "child_status");
	child_free(&ch);

	ok(child_run(&ch, empty, NULL, 64, 64, 10000, detail, sizeof(detail)),
	   "a silent child");
	ok(ch.out.p != NULL && ch.out.p[0] == '\0' && ch.err.p != NULL &&
		   ch.err.p[0] == '\0',
	   "its empty output is \"\"");
	child_free(&ch);

	ok(!child_start(&ch, nosuch, NULL, 64, 64, detail, sizeof(detail)),
	   "a program not in PATH does not start");
	is_str(detail, "cannot run xmhub-no-such-program: not found in PATH",
	       "with a reason");
	child_free(&ch);
	child_status(9, how, sizeof(how));
	is_str(how, "was killed by signal 9", "child_status of a signal");
}

/* In a process of its own, killed by SIGKILL once its child runs: the
 * child (sleep 30) must die with it. */
static void
dies_with_parent(void)
{
	char *const sleeper[] = {"sleep", "30", NULL};
	int p[2], st;
	pid_t mid, kid = 0;

	if (pipe(p) != 0)
		abort();
	fflush(stdout);
	if ((mid = fork()) == 0) {
		struct child ch;
		char detail[256];

		close(p[0]);
		if (!child_start(&ch, sleeper, NULL, 64, 64, detail,
				 sizeof(detail)))
			_exit(1);
		/* Past the trampoline: the child is sleep itself. */
		nanosleep(&(struct timespec){0, 300000000}, NULL);
		if (write(p[1], &ch.pid, sizeof(ch.pid)) != sizeof(ch.pid))
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &kid, sizeof(kid)) != sizeof(kid))
		kid = 0;
	ok(kid > 0, "a process started sleep 30 (pid %d)", (int)kid);
	close(p[0]);
	kill(mid, SIGKILL);
	st = reap_within(mid, 2000);
	ok(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	   "that process was killed with SIGKILL");
	st = reap_within(kid, 2000);
	ok(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
	   "its child died with it, by SIGKILL, within 2 s");
}

/* The value of the line of /proc/self/limits (the child's, in out)
 * whose name starts with name: its soft limit, or "" when none. */
static const char *
soft_limit(const char *out, const char *name, char v[32])
{
	const char *l = strstr(out, name);

	v[0] = '\0';
	if (l != NULL)
		sscanf(l + strlen(name), " %31s", v);
	return v;
}

/* What the trampoline leaves a child (child.h): its limits, no new
 * privileges, a seccomp filter, no socket. */
static void
confined(void)
{
	char *const limits[] = {"cat", "/proc/self/limits", "/proc/self/status",
				NULL};
	char *const sock[] = {"perl", "-MSocket", "-e",
			      "socket(my $s, PF_UNIX, SOCK_STREAM, 0) or "
			      "print qq{socket: $!}",
			      NULL};
	/* A line of /proc/self/limits or status and its value. */
	static const struct {
		const char *line, *what;
		unsigned long long value;
	} want[] = {
		{"Max core file size", "no core file", 0},
		{"Max open files", "open files: CHILD_NOFILE", CHILD_NOFILE},
		{"Max cpu time", "CPU seconds: CHILD_CPU_S", CHILD_CPU_S},
		{"Max file size", "file size: CHILD_FSIZE_MAX",
		 CHILD_FSIZE_MAX},
		{"Max address space", "address space: CHILD_AS_MAX",
		 CHILD_AS_MAX},
		{"NoNewPrivs:", "no new privileges", 1},
		{"Seccomp:", "a seccomp filter", 2},
	};
	struct child ch;
	char detail[256];

	if (!ok(child_run(&ch, limits, NULL, 16384, 1024, 5000, detail,
			  sizeof(detail)),
		"cat /proc/self/limits as a child"))
		diag("%s", detail);
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		char v[32], w[32];

		snprintf(w, sizeof(w), "%llu", want[i].value);
		is_str(soft_limit((const char *)ch.out.p, want[i].line, v), w,
		       "%s", want[i].what);
	}
	child_free(&ch);
	ok(child_run(&ch, sock, NULL, 1024, 1024, 5000, detail, sizeof(detail)),
	   "perl as a child");
	is_str((const char *)ch.out.p, "socket: Permission denied",
	       "socket() fails with EACCES: no network, no database socket");
	child_free(&ch);
}

/* The kernel's Landlock ABI version, 0 without Landlock. */
static int
landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0,
			 LANDLOCK_CREATE_RULESET_VERSION);

	return v > 0 ? (int)v : 0;
}

/* Writes len bytes of s to the new file path. */
static void
put_file(const char *path, const char *s, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || write(fd, s, len) != (ssize_t)len || close(fd) != 0)
		abort();
}

/* Half a second of 8 kHz mono 16-bit silence as WAV at path. */
static void
put_wav(const char *path)
{
	static char wav[44 + 8000] = "RIFF\x64\x1f\0\0WAVEfmt "
				     "\x10\0\0\0\x01\0\x01\0"
				     "\x40\x1f\0\0\x80\x3e\0\0\x02\0\x10\0"
				     "data\x40\x1f\0\0";

	put_file(path, wav, sizeof(wav));
}

/* The env file, another facility's object, a directory: each denied
 * under Landlock; without it, the documented fallback: readable. */
static void
denied(const char *what, char *const argv[], const struct child_path *paths,
       bool landlock)
{
	char detail[512] = "";
	struct child ch;
	bool ran = child_run(&ch, argv, paths, 4096, 4096, 5000, detail,
			     sizeof(detail));

	if (landlock) {
		ok(!ran && strstr(detail, "Permission denied") != NULL,
		   "%s: EACCES (%s)", what, detail);
		ok(strstr((char *)ch.out.p, "secret") == NULL,
		   "%s: nothing of it read", what);
	} else
		ok(ran, "no Landlock: %s is read (the fallback)", what);
	child_free(&ch);
}

/* Landlock (child.h): a child opens the paths of its table and the
 * system's, nothing else of the caller's. */
static void
landlocked(void)
{
	/* What the test makes in dir, in an order to remove it. */
	static const char *const made_here[] = {
		"xmhub.env",	  "fac-a/original", "fac-a/in.wav", "fac-a",
		"fac-b/original", "fac-b",	    "output",	    "work/new",
		"work",		  "out.webm",	    "loose"};
	char dir[] = "/tmp/child-t-XXXXXX", env[64], in[64], other[64], out[64],
	     work[64], loose[64], wav[64], webm[64], detail[512], made[64];
	bool ll = landlock_abi() > 0;
	struct child ch;
	struct stat st;
	int fd;
	ssize_t n;

	if (mkdtemp(dir) == NULL)
		abort();
	snprintf(env, sizeof(env), "%s/xmhub.env", dir);
	snprintf(in, sizeof(in), "%s/fac-a", dir);
	snprintf(other, sizeof(other), "%s/fac-b", dir);
	if (mkdir(in, 0700) != 0 || mkdir(other, 0700) != 0)
		abort();
	snprintf(in, sizeof(in), "%s/fac-a/original", dir);
	snprintf(other, sizeof(other), "%s/fac-b/original", dir);
	snprintf(out, sizeof(out), "%s/output", dir);
	snprintf(work, sizeof(work), "%s/work", dir);
	snprintf(loose, sizeof(loose), "%s/loose", dir);
	snprintf(wav, sizeof(wav), "%s/fac-a/in.wav", dir);
	snprintf(webm, sizeof(webm), "%s/out.webm", dir);
	if (mkdir(work, 0700) != 0)
		abort();
	put_file(env, "XMHUB_JWT_SECRET=secret-of-the-test\n", 36);
	put_file(in, "the input\n", 10);
	put_file(other, "the secret of another facility\n", 31);
	put_file(out, "stale", 5);
	put_wav(wav);

	{
		const struct child_path paths[] = {
			{in, CHILD_READ},
			{out, CHILD_CREATE},
			{work, CHILD_READ | CHILD_WRITE},
			{NULL, 0}};
		char *const cat_in[] = {"cat", in, NULL};
		char *const cat_env[] = {"cat", env, NULL};
		char *const cat_other[] = {"cat", other, NULL};
		char *const ls_dir[] = {"ls", dir, NULL};
		char *const write[] = {"sh",
				       "-c",
				       "echo made > \"$0\"; echo new > "
				       "\"$1/new\"; cat \"$0\" \"$1/new\"",
				       out,
				       work,
				       NULL};
		char *const write_loose[] = {"sh", "-c", "echo x > \"$0\"",
					     loose, NULL};
		char *const sock_dir[] = {"ls", "/run/postgresql", NULL};
		char *const signal[] = {"sh", "-c", "kill -0 $PPID", NULL};

		if (!ok(child_run(&ch, cat_in, paths, 4096, 4096, 5000, detail,
				  sizeof(detail)),
			"a child reads its input"))
			diag("%s", detail);
		is_str((char *)ch.out.p, "the input\n", "all of it");
		child_free(&ch);
		denied("the env file", cat_env, paths, ll);
		denied("another facility's object", cat_other, paths, ll);
		denied("listing the directory they are in", ls_dir, paths, ll);
		if (access("/run/postgresql", F_OK) == 0)
			denied("PostgreSQL's socket directory", sock_dir, paths,
			       ll);
		detail[0] = '\0';
		if (landlock_abi() >= 6)
			ok(!child_run(&ch, signal, paths, 4096, 4096, 5000,
				      detail, sizeof(detail)),
			   "ABI 6: it can not signal its caller (%s)", detail);
		else
			ok(child_run(&ch, signal, paths, 4096, 4096, 5000,
				     detail, sizeof(detail)),
			   "before ABI 6: it can signal its caller (%s)",
			   detail);
		child_free(&ch);
		if (!ok(child_run(&ch, write, paths, 4096, 4096, 5000, detail,
				  sizeof(detail)),
			"it writes its output file and in its work directory"))
			diag("%s", detail);
		is_str((char *)ch.out.p, "made\nnew\n", "and reads them back");
		child_free(&ch);
		fd = open(out, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? read(fd, made, sizeof(made) - 1) : -1;
		made[n > 0 ? n : 0] = '\0';
		if (fd >= 0)
			close(fd);
		is_str(made, "made\n", "the output file holds what it wrote");
		detail[0] = '\0';
		ok(child_run(&ch, write_loose, paths, 4096, 4096, 5000, detail,
			     sizeof(detail)) != ll &&
			   (stat(loose, &st) == 0) != ll,
		   ll ? "it creates no file beside them (%s)"
		      : "no Landlock: it creates a file beside them (%s)",
		   detail);
		child_free(&ch);
	}
	{
		const struct child_path tpaths[] = {
			{wav, CHILD_READ}, {webm, CHILD_CREATE}, {NULL, 0}};
		const struct child_path ppaths[] = {{webm, CHILD_READ},
						    {NULL, 0}};
		char *const ffmpeg[] = {"ffmpeg",    "-nostdin", "-hide_banner",
					"-loglevel", "error",	 "-y",
					"-i",	     wav,	 "-c:a",
					"libopus",   "-f",	 "webm",
					webm,	     NULL};
		char *const ffprobe[] = {"ffprobe",
					 "-v",
					 "error",
					 "-show_entries",
					 "stream=codec_name",
					 "-of",
					 "csv=p=0",
					 webm,
					 NULL};

		if (!ok(child_run(&ch, ffmpeg, tpaths, 4096, 4096, 30000,
				  detail, sizeof(detail)),
			"ffmpeg transcodes under it"))
			diag("%s", detail);
		child_free(&ch);
		if (!ok(child_run(&ch, ffprobe, ppaths, 4096, 4096, 30000,
				  detail, sizeof(detail)),
			"ffprobe reads the output under it"))
			diag("%s", detail);
		is_str((char *)ch.out.p, "opus\n", "an Opus stream");
		child_free(&ch);
	}
	{
		char *const cat[] = {"cat", in, NULL};
		char *const noop[] = {"true", NULL};
		char longer[PATH_MAX + 16];
		const struct child_path bad[] = {{longer, CHILD_READ},
						 {NULL, 0}};
		const struct child_path nodir[] = {
			{"/nonexistent-dir/output", CHILD_CREATE}, {NULL, 0}};

		memset(longer, 'a', sizeof(longer) - 1);
		longer[0] = '/';
		longer[sizeof(longer) - 1] = '\0';
		if (ll) {
			if (!ok(!child_run(&ch, cat, bad, 4096, 4096, 5000,
					   detail, sizeof(detail)) &&
					strncmp(detail,
						"cannot confine cat: /aaa",
						24) == 0,
				"a rule that can not be made: the child does "
				"not run"))
				diag("%s", detail);
		} else
			ok(child_run(&ch, cat, bad, 4096, 4096, 5000, detail,
				     sizeof(detail)),
			   "no Landlock: no rule is made, the child runs");
		child_free(&ch);
		ok(!child_start(&ch, noop, nodir, 64, 64, detail,
				sizeof(detail)),
		   "an output that can not be created: no child");
		is_str(detail,
		       "cannot create /nonexistent-dir/output: No such file "
		       "or directory",
		       "the reason says so");
		child_free(&ch);
	}
	for (size_t i = 0; i < sizeof(made_here) / sizeof(*made_here); i++) {
		snprintf(loose, sizeof(loose), "%s/%s", dir, made_here[i]);
		if (remove(loose) != 0 && errno != ENOENT)
			diag("%s: %s", loose, strerror(errno));
	}
	rmdir(dir);
}

/*
 * Without Landlock (its calls made to fail with err by a seccomp filter
 * in a process of its own: ENOSYS as on a kernel without it, EPERM as
 * under systemd's SystemCallFilter=@system-service): the child runs and
 * can read the env file, and the first child_start() of the process
 * warns, once.  First in main(): the warning is looked for once a
 * process, before any child of the test's own process.  The process's
 * exit status is a mask of what failed.
 */
static void
without_landlock(int err, const char *name)
{
	char path[] = "/tmp/child-t-XXXXXX", log[] = "/tmp/child-t-XXXXXX";
	int fd, lfd, st;
	pid_t pid;

	if ((fd = mkstemp(path)) < 0 || (lfd = mkstemp(log)) < 0)
		abort();
	dprintf(fd, "XMHUB_JWT_SECRET=secret-of-the-test\n");
	close(fd);
	fflush(stdout);
	if ((pid = fork()) == 0) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
				 offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K,
				 __NR_landlock_create_ruleset, 0, 2),
			BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K,
				 __NR_landlock_restrict_self, 1, 0),
			BPF_STMT(BPF_RET | BPF_K,
				 SECCOMP_RET_ERRNO | (unsigned)err),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = {sizeof(f) / sizeof(*f), f};
		char *const cat[] = {"cat", path, NULL};
		char detail[256], text[4096], *at;
		struct child ch;
		int fails = 0, warnings = 0;
		ssize_t n;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0 ||
		    dup2(lfd, 2) != 2)
			_exit(64);
		for (int i = 0; i < 2; i++) {
			if (!child_run(&ch, cat, NULL, 4096, 4096, 5000, detail,
				       sizeof(detail)) ||
			    strstr((char *)ch.out.p, "secret-of-the-test") ==
				    NULL)
				fails |= 1;
			child_free(&ch);
		}
		n = pread(lfd, text, sizeof(text) - 1, 0);
		text[n > 0 ? n : 0] = '\0';
		for (at = text; (at = strstr(at, "no Landlock")) != NULL; at++)
			warnings++;
		_exit(fails | (warnings == 1 ? 0 : 2));
	}
	st = reap_within(pid, 10000);
	ok(st != -1 && WIFEXITED(st) && (WEXITSTATUS(st) & ~3) == 0,
	   "no Landlock (%s): a process of its own ran children", name);
	ok(st != -1 && WIFEXITED(st) && (WEXITSTATUS(st) & 1) == 0,
	   "no Landlock (%s): the fallback, children run and read the env "
	   "file",
	   name);
	ok(st != -1 && WIFEXITED(st) && (WEXITSTATUS(st) & 2) == 0,
	   "no Landlock (%s): the first child_start() warned, once", name);
	close(lfd);
	unlink(log);
	unlink(path);
}

static void
reasons(void)
{
	static const struct {
		const char *err, *want, *name;
	} cases[] = {
		{"[libopus @ 0x55d9fee6b640] Opus mapping family undefined "
		 "for 9 channels.\nError initializing output stream 0:0 -- "
		 "Error while opening encoder for output stream #0:0 - maybe "
		 "incorrect parameters such as bit_rate, rate, width or "
		 "height\nConversion failed!\n",
		 "libopus: Opus mapping family undefined for 9 channels.",
		 "the component's line, its address gone"},
		{"/tmp/xmhub-transcode-run-Ab12Cd/input: Invalid data found "
		 "when processing input\n",
		 "input: Invalid data found when processing input",
		 "a path becomes its last component"},
		{"[auto_aresample_0 @ 0x559997d754c0] [SWR @ 0x559997d75600] "
		 "Failed to set option\nError reinitializing filters!\n",
		 "auto_aresample_0: SWR: Failed to set option",
		 "nested component tags"},
		{"[mp3float @ 0x55b62f05d540] Header missing\nError while "
		 "decoding stream #0:0: Invalid data found when processing "
		 "input\n    Last message repeated 54 times\n",
		 "mp3float: Header missing", "the last tagged line"},
		{"Invalid tag 0xDEADbeef (ptr 0x7ffc12345678) at offset 12\n",
		 "Invalid tag <hex> (ptr <hex>) at offset 12",
		 "hex numbers out of the text"},
		{"Could not open '/var/lib/xmhub/secret dir/f.wav' or "
		 "file:/etc/passwd\n",
		 "Could not open 'f.wav' or file:passwd",
		 "quoted and URL paths"},
		{"bad \x01\xff\xfe byte\n", "bad ??? byte", "non-ASCII bytes"},
		{"first\nsecond\n\nlast one\r\n", "last one",
		 "the last line of untagged text"},
		{"Conversion failed!\n", "", "nothing meaningful"},
		{"", "", "empty stderr"},
		{"a / b and 1/2\n", "a / b and 1/2",
		 "slashes that are no paths"},
		{"[0x12ab @ 0x55] at ab0x1234 in /tmp/0xdead/0x99.wav\n",
		 "<hex>: at ab<hex> in <hex>.wav",
		 "hex in a component's name, a word, a path"},
	};
	char out[CHILD_REASON_MAX], small[8], big[2000];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		child_reason(cases[i].err, out, sizeof(out));
		is_str(out, cases[i].want, "child_reason: %s", cases[i].name);
		ok(strstr(out, "0x") == NULL, "child_reason: %s: no 0x",
		   cases[i].name);
	}
	memset(big, 'x', sizeof(big) - 2);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	child_reason(big, out, sizeof(out));
	is_int(strlen(out), CHILD_REASON_MAX - 1,
	       "child_reason: a long line is cut to the bound");
	child_reason(cases[0].err, small, sizeof(small));
	is_str(small, "libopus",
	       "child_reason: a small buffer is filled and "
	       "terminated");
}

/* Last: the stop flag, once set, stays for the process. */
static void
stop(void)
{
	char *const sleeper[] = {"sleep", "30", NULL};
	char detail[256];
	struct child ch;
	long long t0;
	pid_t killer, me = getpid();

	runner_signals();
	fflush(stdout);
	if ((killer = fork()) == 0) {
		nanosleep(&(struct timespec){0, 300000000}, NULL);
		kill(me, SIGTERM);
		_exit(0);
	}
	t0 = clock_mono_ms();
	ok(!child_run(&ch, sleeper, NULL, 64, 64, 30000, detail,
		      sizeof(detail)),
	   "SIGTERM to the runner: child_run returns false");
	ok(clock_mono_ms() - t0 < 300 + 1500, "soon (%lld ms), not after 30 s",
	   clock_mono_ms() - t0);
	is_str(detail, "sleep was stopped: the runner is stopping",
	       "the reason says so");
	ok(WIFSIGNALED(ch.status), "the child was killed");
	child_free(&ch);
	reap_within(killer, 2000);
}

int
main(void)
{
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		abort();
	without_landlock(ENOSYS, "ENOSYS");
	without_landlock(EPERM, "EPERM");
	environment();
	descriptors();
	group_and_deadline();
	output();
	dies_with_parent();
	confined();
	landlocked();
	reasons();
	stop();
	return tap_done();
}
