/* SPDX-License-Identifier: MIT */
/*
 * t/unit/runner.c - the job runners' stop flag (lib/core/runner.h): set
 * by SIGTERM and SIGINT, and the sleep a signal or a readable fd cuts
 * short.  Their command
 * line is lib/domain/jobmain's (t/unit/jobmain.c).
 */
#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/runner.h"
#include "tap.h"

/* In a child: runner_signals(), then sig; exit 0 when it only set the
 * flag. */
static bool
flag_set_by(int sig)
{
	pid_t pid;
	int status;

	fflush(stdout);
	if ((pid = fork()) < 0)
		return false;
	if (pid == 0) {
		runner_signals();
		raise(sig);
		_exit(runner_stopping() ? 0 : 1);
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

int
main(void)
{
	struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL,
			      .sigev_signo = SIGTERM};
	struct itimerspec in = {.it_value = {0, 100000000}};
	timer_t timer;

	log_init("xmhub-test");
	ok(flag_set_by(SIGTERM), "SIGTERM sets the flag, the process lives");
	ok(flag_set_by(SIGINT), "SIGINT sets the flag, the process lives");

	/* A hang would be a failure: SIGALRM ends the test. */
	alarm(30);
	runner_signals();
	ok(!runner_stopping(), "no signal, no stop");
	{
		char path[] = "/tmp/xmhub-runner-XXXXXX", got[1024] = "";
		int fd = mkstemp(path), saved = dup(2);
		ssize_t n;

		unlink(path);
		dup2(fd, 2);
		ok(runner_sleep(0), "a sleep without a signal: go on");
		ok(runner_sleep(0), "and another");
		dup2(saved, 2);
		close(saved);
		n = pread(fd, got, sizeof(got) - 1, 0);
		got[n > 0 ? n : 0] = '\0';
		close(fd);
		ok(strstr(got, " level=info program=xmhub-test ") != NULL &&
			   strstr(got, " msg=\"heartbeat: 1 passes since the "
				       "last one, next in 0s\"\n") != NULL,
		   "the first pass's end logs a heartbeat");
		ok(strchr(got, '\n') == got + strlen(got) - 1,
		   "the next one, within a minute, does not");
	}
	{
		int p[2];
		time_t t0 = time(NULL);

		if (ok(pipe(p) == 0, "a pipe")) {
			ok(write(p[1], "x", 1) == 1, "with a byte to read");
			ok(runner_wait(3600, p[0]) && time(NULL) - t0 < 60,
			   "a wait of an hour ends when its fd can be read");
			close(p[0]);
			close(p[1]);
		}
	}
	/* SIGTERM 0.1 s into an hour's sleep. */
	if (!ok(timer_create(CLOCK_MONOTONIC, &ev, &timer) == 0 &&
			timer_settime(timer, 0, &in, NULL) == 0,
		"timer armed"))
		return tap_done();
	ok(!runner_sleep(3600), "SIGTERM cuts the sleep short: stop");
	ok(runner_stopping(), "the flag stays set");
	ok(!runner_sleep(3600), "no sleep once stopped");
	timer_delete(timer);
	return tap_done();
}
