/* SPDX-License-Identifier: MIT */
/*
 * runner.c - the stop flag and the sleep of the job runners (runner.h).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/log.h"
#include "core/runner.h"

/* Seconds between two heartbeat lines of a loop (runner_sleep). */
#define HEARTBEAT_S 60

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

void
runner_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

bool
runner_stopping(void)
{
	return stop != 0;
}

bool
runner_sleep(long long seconds)
{
	return runner_wait(seconds, -1);
}

bool
runner_wait(long long seconds, int fd)
{
	struct timespec ts = {.tv_sec = (time_t)seconds, .tv_nsec = 0};
	struct pollfd p = {.fd = fd, .events = POLLIN};
	static time_t last;
	static unsigned long long passes;
	time_t now = time(NULL);

	if (stop)
		return false;
	/* A pass ended: a line now and then shows the loop is not stuck
	 * (a runner whose heartbeats stop is). */
	passes++;
	if (last == 0 || now - last >= HEARTBEAT_S) {
		log_info("heartbeat: %llu passes since the last one, next in "
			 "%llds",
			 passes, seconds);
		last = now;
		passes = 0;
	}
	/* Another signal (EINTR without the flag) just ends the sleep.  The
	 * runners' intervals are at most a day: no overflow of the int. */
	if (fd >= 0 ? poll(&p, 1, (int)(seconds * 1000)) < 0 && errno != EINTR
		    : nanosleep(&ts, NULL) != 0 && errno != EINTR)
		return false;
	return !stop;
}
