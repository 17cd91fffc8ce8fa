/* SPDX-License-Identifier: MIT */
/*
 * runner.h - the stop flag of the job runners (jobs/): SIGTERM and
 * SIGINT asking a loop to stop, and the sleep between passes, which such
 * a signal cuts short.  Their one main, lib/domain/jobmain, sets them
 * up; a pass that takes long checks runner_stopping() between its steps,
 * and child_run() (lib/core/child) stops its child when the flag is set.
 * One runner per process: the stop flag is process-wide.
 */
#ifndef XMHUB_RUNNER_H
#define XMHUB_RUNNER_H

#include <stdbool.h>

/*
 * Makes SIGTERM and SIGINT set the stop flag instead of ending the
 * process.  Without SA_RESTART, so the signal also interrupts a sleep or
 * a blocking call.
 */
void runner_signals(void);

/* True once SIGTERM or SIGINT arrived after runner_signals(). */
bool runner_stopping(void);

/*
 * Sleeps seconds between two passes, cut short by a signal.  True when
 * the next pass should run: no stop asked before or during the sleep,
 * and the sleep itself did not fail.  Logs a heartbeat line (passes done)
 * at the first call and then at most once a minute, so that a stuck loop
 * shows in the log by its silence.
 */
bool runner_sleep(long long seconds);

/* As runner_sleep(), also cut short when fd (if not -1) has something to
 * read: a database connection that LISTENs (lib/domain/jobmain). */
bool runner_wait(long long seconds, int fd);

#endif
