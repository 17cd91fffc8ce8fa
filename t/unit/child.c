/*
 * child.t - child programs (lib/core/child.c): the minimal environment
 * (nothing of the settings, from the environment or the env file,
 * reaches a child), the process group, the deadline that kills a child
 * and its grandchildren, the bounded and terminated output, the death of
 * a child with its parent (a real SIGKILL), the runner's stop, and the
 * reasons made from ffmpeg's stderr.
 *
 * The test is a child subreaper, so that orphaned grandchildren come to
 * it and their end can be read with waitpid().
 */
#define _GNU_SOURCE /* prctl's PR_SET_CHILD_SUBREAPER */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/child.h"
#include "core/conf.h"
#include "core/runner.h"
#include "tap.h"

extern char **environ;

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits at most ms for pid (ours, or an orphan come to us) to end; its
 * wait status, or -1 if it did not end. */
static int
reap_within(pid_t pid, int ms)
{
	long long end = now_ms() + ms;
	int status;

	while (now_ms() < end) {
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

	ok(child_run(&ch, env, 65536, 4096, 10000, detail, sizeof(detail)),
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
	ok(child_run(&ch, check, 4096, 4096, 10000, detail, sizeof(detail)),
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

	ok(child_start(&ch, tree, 64, 64, detail, sizeof(detail)),
	   "a child with a grandchild starts");
	ok(getpgid(ch.pid) == ch.pid, "it leads a process group of its own");
	ok(getpgid(ch.pid) != getpgrp(), "not the parent's group");
	child_free(&ch);

	t0 = now_ms();
	ok(!child_run(&ch, tree, 64, 64, 1000, detail, sizeof(detail)),
	   "child_run with a 1 s deadline: false");
	ok(now_ms() - t0 < 1000 + 1500,
	   "it returned within the deadline and "
	   "the grace (%lld ms)",
	   now_ms() - t0);
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

	t0 = now_ms();
	ok(!child_run(&ch, deaf, 64, 64, 500, detail, sizeof(detail)),
	   "a child deaf to SIGTERM, 0.5 s deadline: false");
	ok(now_ms() - t0 < 500 + 1000 + 1000,
	   "it returned within the deadline and the grace (%lld ms)",
	   now_ms() - t0);
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

	ok(child_run(&ch, lots, 1000, 16, 10000, detail, sizeof(detail)),
	   "100 kB of output, 1000 kept");
	is_int(ch.out.len, 1000, "cut at the bound");
	is_int(ch.out.p[1000], '\0', "and terminated after it");
	is_int(strlen((char *)ch.out.p), 1000, "a string of 1000 bytes");
	child_free(&ch);

	ok(!child_run(&ch, noline, 64, 5, 10000, detail, sizeof(detail)),
	   "stderr with no newline past its bound");
	is_int(ch.err.len, 5, "stderr cut at 5 bytes");
	is_str(detail, "abcde", "the reason is what was kept, no more");
	child_status(ch.status, how, sizeof(how));
	is_str(how, "exited with status 4", "child_status");
	child_free(&ch);

	ok(child_run(&ch, empty, 64, 64, 10000, detail, sizeof(detail)),
	   "a silent child");
	ok(ch.out.p != NULL && ch.out.p[0] == '\0' && ch.err.p != NULL &&
		   ch.err.p[0] == '\0',
	   "its empty output is \"\"");
	child_free(&ch);

	ok(!child_start(&ch, nosuch, 64, 64, detail, sizeof(detail)),
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
		if (!child_start(&ch, sleeper, 64, 64, detail, sizeof(detail)))
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

	if (!ok(child_run(&ch, limits, 16384, 1024, 5000, detail,
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
	ok(child_run(&ch, sock, 1024, 1024, 5000, detail, sizeof(detail)),
	   "perl as a child");
	is_str((const char *)ch.out.p, "socket: Permission denied",
	       "socket() fails with EACCES: no network, no database socket");
	child_free(&ch);
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
	t0 = now_ms();
	ok(!child_run(&ch, sleeper, 64, 64, 30000, detail, sizeof(detail)),
	   "SIGTERM to the runner: child_run returns false");
	ok(now_ms() - t0 < 300 + 1500, "soon (%lld ms), not after 30 s",
	   now_ms() - t0);
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
	environment();
	descriptors();
	group_and_deadline();
	output();
	dies_with_parent();
	confined();
	reasons();
	stop();
	return tap_done();
}
