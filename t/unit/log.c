/* SPDX-License-Identifier: MIT */
/*
 * t/unit/log.c - the logfmt lines of lib/core/log: their fields, quoting
 * of what a client sends, the request id, the request line, long lines.
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "tap.h"

static char got[2 * LOG_LINE_MAX];
static int cap_fd; /* the file of capture() */

/* Runs fn with stderr going to a file; got holds what it wrote. */
static void
capture(void (*fn)(void))
{
	char path[] = "/tmp/xmhub-log-XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	ssize_t n;

	unlink(path);
	dup2(fd, 2);
	cap_fd = fd;
	fn();
	dup2(saved, 2);
	close(saved);
	n = pread(fd, got, sizeof(got) - 1, 0);
	got[n > 0 ? n : 0] = '\0';
	close(fd);
}

/* got with its "time=... " prefix checked and cut off. */
static const char *
after_time(void)
{
	static const char form[] = "time=0000-00-00T00:00:00.000Z ";
	size_t n = strlen(form);

	for (size_t i = 0; i < n; i++)
		if (form[i] == '0' ? got[i] < '0' || got[i] > '9'
				   : got[i] != form[i])
			return "";
	return got + n;
}

static void
plain(void)
{
	log_info("db: connected again\n");
}

static void
quoted(void)
{
	log_error("bad \"x\"=1\\ \n\tend\x01");
}

static void
with_id(void)
{
	log_request_id("abc-1");
	log_warn("w");
	log_request("GET", "/api/a b", 503, 1.5);
	log_request_id(NULL);
	log_info("x");
}

static void
two_lines(void)
{
	log_info("a");
	log_info("b");
}

static void
long_line(void)
{
	char *s = malloc(3 * LOG_LINE_MAX);

	memset(s, 'y', 3 * LOG_LINE_MAX - 1);
	s[3 * LOG_LINE_MAX - 1] = '\0';
	log_info("%s", s);
	free(s);
}

/* The lines written so far to the file of capture() (during it). */
static size_t
written(void)
{
	char b[4096];
	size_t lines = 0;
	ssize_t n;

	for (off_t at = 0; (n = pread(cap_fd, b, sizeof(b), at)) > 0; at += n)
		for (ssize_t i = 0; i < n; i++)
			lines += b[i] == '\n';
	return lines;
}

static bool a_held, many_held, none_held;
static size_t many_first, many_all;
static double aged_s;

static void
held_then_info(void)
{
	log_hold_requests();
	log_request("GET", "/a", 200, 1);
	a_held = log_holding() && written() == 0;
	log_info("after");
}

static void
flushed(void)
{
	log_request("GET", "/b", 404, 1);
	log_flush();
}

static void
five_hundred(void)
{
	log_request("GET", "/c", 500, 1);
}

static void
many(void)
{
	for (int i = 0; i < 60; i++)
		log_request("GET", "/many", 200, 1);
	many_first = written();
	many_held = log_holding();
	log_flush();
	many_all = written();
	none_held = !log_holding();
}

/* A held line left alone: the seconds until it is written. */
static void
aged(void)
{
	struct timespec step = {0, 20 * 1000 * 1000};
	double t0 = clock_mono_s();

	log_request("GET", "/aged", 200, 1);
	do {
		nanosleep(&step, NULL);
		aged_s = clock_mono_s() - t0;
	} while (written() == 0 && aged_s < 5);
}

int
main(void)
{
	char pid[64], want[128];

	log_init("unit");
	snprintf(pid, sizeof(pid), "pid=%ld ", (long)getpid());

	capture(plain);
	ok(strncmp(after_time(), "level=info program=unit ", 24) == 0,
	   "time, level, program first");
	ok(strstr(got, pid) != NULL, "the pid");
	ok(strstr(got, " msg=\"db: connected again\"\n") != NULL &&
		   strchr(got, '\n') == got + strlen(got) - 1,
	   "a message with a blank quoted; a trailing newline dropped");

	capture(quoted);
	ok(strncmp(after_time(), "level=error program=unit ", 25) == 0,
	   "error level");
	ok(strstr(got, "msg=\"bad \\\"x\\\"=1\\\\ \\n\\tend\\x01\"\n") != NULL,
	   "quotes, backslashes, newlines and controls escaped: one line");

	capture(with_id);
	ok(strstr(got, "level=warn program=unit ") != NULL &&
		   strstr(got, " request_id=abc-1 msg=w\n") != NULL,
	   "a line during a request names its id");
	ok(strstr(got, "level=error program=unit ") != NULL &&
		   strstr(got, " msg=request method=GET path=\"/api/a b\" "
			       "status=503 duration_ms=1.500 "
			       "request_id=abc-1\n") != NULL,
	   "the request line; a 5xx one is an error");
	snprintf(want, sizeof(want), "%smsg=x\n", pid);
	ok(strstr(got, want) != NULL, "the id cleared: none on the next line");

	capture(two_lines);
	ok(strstr(got, "msg=a\n") != NULL && strstr(got, "msg=b\n") != NULL,
	   "two calls, two lines");

	capture(long_line);
	is_int(strlen(got), LOG_LINE_MAX, "a long line is cut to the maximum");
	ok(strcmp(got + strlen(got) - 4, "...\n") == 0, "and ends with ...");

	ok(log_request_id_valid("5f0c0a2e-1b2c-4d3e-8f40-0123456789ab"),
	   "a UUID is a valid request id");
	ok(log_request_id_valid("proxy.1:a_b-C"), "letters, digits, -_.:");
	ok(!log_request_id_valid(""), "empty: not valid");
	ok(!log_request_id_valid("a b") && !log_request_id_valid("a\"b") &&
		   !log_request_id_valid("a=b") && !log_request_id_valid("a\n"),
	   "blank, quote, = and newline: not valid");
	{
		char id[LOG_REQUEST_ID_MAX + 2];

		memset(id, 'a', sizeof(id) - 1);
		id[sizeof(id) - 1] = '\0';
		ok(!log_request_id_valid(id), "one too long: not valid");
		id[sizeof(id) - 2] = '\0';
		ok(log_request_id_valid(id), "the longest: valid");
	}

	capture(held_then_info);
	ok(a_held, "held: a 2xx request line is not written yet");
	ok(strstr(got, "path=/a ") != NULL &&
		   strstr(got, "msg=after\n") != NULL &&
		   strstr(got, "path=/a ") < strstr(got, "msg=after"),
	   "another line writes the held one first, in order");
	capture(flushed);
	ok(strstr(got, "path=/b status=404 ") != NULL,
	   "log_flush() writes what is held");
	capture(five_hundred);
	ok(strstr(got, "level=error") != NULL &&
		   strstr(got, "path=/c ") != NULL,
	   "a 5xx request line is never held");
	capture(many);
	ok(many_first > 0 && many_first < 60 && many_held,
	   "a full buffer is written; the rest held");
	ok(many_all == 60 && none_held, "and the rest at log_flush()");
	capture(aged);
	ok(strstr(got, "path=/aged ") != NULL && aged_s < 2.5,
	   "a held line left alone is written within a second or two");
	return tap_done();
}
