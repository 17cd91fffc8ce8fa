/* SPDX-License-Identifier: MIT */
/*
 * streams.t - Range header parsing (lib/api/streams.c) and child programs
 * with bounded output (lib/core/child.c).
 */
#include "config.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "core/child.h"
#include "api/streams.h"
#include "tap.h"

static void
range(const char *h, uint64_t size, enum streams_range want, uint64_t off,
      uint64_t len)
{
	uint64_t o = 99, l = 99;
	enum streams_range got = streams_parse_range(h, size, &o, &l);

	is_int(got, want, "%s of %llu: kind", h != NULL ? h : "(none)",
	       (unsigned long long)size);
	if (want == STREAMS_PARTIAL && got == want) {
		is_int(o, off, "%s: offset", h);
		is_int(l, len, "%s: length", h);
	}
}

static void
ranges(void)
{
	range(NULL, 100, STREAMS_WHOLE, 0, 0);
	range("bytes=0-9", 100, STREAMS_PARTIAL, 0, 10);
	range("bytes=10-10", 100, STREAMS_PARTIAL, 10, 1);
	range("bytes=90-", 100, STREAMS_PARTIAL, 90, 10);
	range("bytes=90-1000", 100, STREAMS_PARTIAL, 90, 10);
	range("bytes=99-99", 100, STREAMS_PARTIAL, 99, 1);
	range("bytes=-10", 100, STREAMS_PARTIAL, 90, 10);
	range("bytes=-1000", 100, STREAMS_PARTIAL, 0, 100);
	range("bytes=100-", 100, STREAMS_UNSATISFIED, 0, 0);
	range("bytes=100-200", 100, STREAMS_UNSATISFIED, 0, 0);
	range("bytes=-0", 100, STREAMS_UNSATISFIED, 0, 0);
	range("bytes=0-", 0, STREAMS_UNSATISFIED, 0, 0);
	range("bytes=-5", 0, STREAMS_UNSATISFIED, 0, 0);
	/* Malformed: refused, as lighttpd does. */
	range("bytes=9-0", 100, STREAMS_UNSATISFIED, 0, 0);
	range("bytes=", 100, STREAMS_UNSATISFIED, 0, 0);
	range("bytes=-", 100, STREAMS_UNSATISFIED, 0, 0);
	range("bytes=a-b", 100, STREAMS_UNSATISFIED, 0, 0);
	range("bytes= 0-9", 100, STREAMS_UNSATISFIED, 0, 0);
	range("bytes=0-9 ", 100, STREAMS_UNSATISFIED, 0, 0);
	range("bytes=-5x", 100, STREAMS_UNSATISFIED, 0, 0);
	range("bytes=99999999999999999999-", 100, STREAMS_UNSATISFIED, 0, 0);
	/* Ignored: the whole file. */
	range("bytes=0-1,5-9", 100, STREAMS_WHOLE, 0, 0);
	range("items=0-9", 100, STREAMS_WHOLE, 0, 0);
	range("Bytes=0-9", 100, STREAMS_WHOLE, 0, 0);
	range("bytes=18446744073709551614-", 100, STREAMS_UNSATISFIED, 0, 0);
}

static void
children(void)
{
	char *const echo[] = {"sh", "-c", "printf 0123456789; echo oops >&2",
			      NULL};
	char *const fail[] = {"sh", "-c",
			      "echo first line >&2; echo second >&2; exit 3",
			      NULL};
	char *const nosuch[] = {"/nonexistent/program", NULL};
	char *const sleeper[] = {"sleep", "60", NULL};
	char *const flood[] = {"head", "-c", "1000000", "/dev/zero", NULL};
	char detail[128];
	struct child ch;

	ok(child_run(&ch, echo, NULL, 4, 100, 10000, detail, sizeof(detail)),
	   "a child that exits 0");
	is_int(ch.out.len, 4, "stdout kept to its bound");
	ok(memcmp(ch.out.p, "0123", 4) == 0, "the first bytes kept");
	is_int(ch.err.len, 5, "stderr captured");
	child_free(&ch);

	ok(!child_run(&ch, fail, NULL, 100, 100, 10000, detail, sizeof(detail)),
	   "a child that exits 3");
	is_str(detail, "first line", "its first stderr line as the reason");
	ok(WIFEXITED(ch.status) && WEXITSTATUS(ch.status) == 3,
	   "its exit status");
	child_free(&ch);

	ok(!child_run(&ch, nosuch, NULL, 100, 100, 10000, detail,
		      sizeof(detail)),
	   "a program that does not exist");
	child_free(&ch);

	ok(child_run(&ch, flood, NULL, 10, 10, 10000, detail, sizeof(detail)),
	   "1 MB of output to a 10-byte bound: drained, no deadlock");
	is_int(ch.out.len, 10, "10 bytes kept");
	child_free(&ch);

	ok(child_start(&ch, sleeper, NULL, 10, 10, detail, sizeof(detail)),
	   "a long child starts");
	ok(!child_wait(&ch, 100), "child_wait: still running after 100 ms");
	pid_t pid = ch.pid;
	child_kill(&ch, 1000);
	is_int(ch.pid, 0, "child_kill: reaped");
	ok(WIFSIGNALED(ch.status) && WTERMSIG(ch.status) == SIGTERM,
	   "it ended by SIGTERM");
	ok(kill(pid, 0) != 0, "the process is gone");
	child_free(&ch);
}

int
main(void)
{
	ranges();
	children();
	return tap_done();
}
