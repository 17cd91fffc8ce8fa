/* SPDX-License-Identifier: MIT */
/*
 * t/unit/jobmain.c - the job runners' one main (lib/domain/jobmain.h):
 * both command lines, the worker id, the set-up's failures, the passes
 * of --once, --drain and --loop, the exit status and what a --loop logs
 * after a failed pass.  No database is reached: a connection is made on
 * its first query (lib/core/db), and these passes make none.
 */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "domain/jobmain.h"
#include "tap.h"

#define NAME "xmhub-test"
#define URL "postgresql:///xmhub_test_never_reached"

/* What the callbacks of one run saw and are to answer. */
struct probe {
	bool setup_ok;	    /* setup's answer */
	const char *db_url; /* setup sets m->db_url and m->db_setting */
	bool pass_ok;	    /* a periodic pass's answer */
	int stop_after;	    /* raise SIGTERM in the pass this many */
	const enum jobmain_step *steps; /* a queue's answers, in turn */
	int passes, nsteps;		/* calls seen */
	bool loop, had_db, had_side;
	char worker[JOBMAIN_WORKER_MAX + 1];
};

static bool
setup(struct jobmain *m)
{
	struct probe *p = m->arg;

	if (p->db_url != NULL) {
		m->db_url = p->db_url;
		m->db_setting = "XMT_URL";
	}
	m->interval = 0;
	return p->setup_ok;
}

static bool
pass(struct jobmain *m)
{
	struct probe *p = m->arg;

	p->loop = m->loop;
	p->had_db = m->db != NULL;
	p->had_side = m->side != NULL;
	if (++p->passes == p->stop_after)
		raise(SIGTERM);
	return p->pass_ok;
}

static enum jobmain_step
step(struct jobmain *m)
{
	struct probe *p = m->arg;
	enum jobmain_step s = p->steps[p->nsteps++];

	snprintf(p->worker, sizeof(p->worker), "%s", m->worker);
	p->loop = m->loop;
	/* JOBMAIN_STOP stands for a step that saw the stop flag. */
	if (s == JOBMAIN_STOP)
		raise(SIGTERM);
	return s;
}

static const struct jobmain_def periodic = {
	.name = NAME, .side_db = true, .setup = setup, .pass = pass};
static const struct jobmain_def queue = {
	.name = NAME, .worker_max = 8, .setup = setup, .step = step};

/* jobmain_run() of def with p on the arguments (NULL-terminated),
 * standard error into err (its first errlen - 1 bytes). */
static int
run(const struct jobmain_def *def, struct probe *p, char *err, size_t errlen,
    const char *a1, const char *a2, const char *a3)
{
	char *argv[] = {NAME, (char *)a1, (char *)a2, (char *)a3, NULL};
	char path[] = "/tmp/xmhub-jobmain-XXXXXX";
	int argc = 1, fd = mkstemp(path), saved = dup(2), rc;
	ssize_t n;

	while (argv[argc] != NULL)
		argc++;
	unlink(path);
	fflush(stderr);
	dup2(fd, 2);
	rc = jobmain_run(def, p, argc, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, err, errlen - 1, 0);
	err[n > 0 ? n : 0] = '\0';
	close(fd);
	return rc;
}

/* In a child (the stop flag is process-wide and stays set): run(), then
 * exit 0 when it returned 0 after want passes or steps, err kept in a
 * file the parent reads into err. */
static bool
loop_child(const struct jobmain_def *def, struct probe *p, int want, char *err,
	   size_t errlen, const char *a1)
{
	char path[] = "/tmp/xmhub-jobmain-XXXXXX";
	int fd = mkstemp(path), status = -1;
	ssize_t n;
	pid_t pid;

	unlink(path);
	fflush(stdout);
	if ((pid = fork()) < 0)
		return false;
	if (pid == 0) {
		char e[4096];
		int rc = run(def, p, e, sizeof(e), a1, NULL, NULL);

		if (write(fd, e, strlen(e)) < 0)
			_exit(3);
		_exit(rc == 0 && p->passes + p->nsteps == want ? 0 : 1);
	}
	n = waitpid(pid, &status, 0) == pid ? pread(fd, err, errlen - 1, 0)
					    : -1;
	err[n > 0 ? n : 0] = '\0';
	close(fd);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void
periodic_tests(void)
{
	struct probe p = {.setup_ok = true, .pass_ok = true};
	char err[4096];

	is_int(run(&periodic, &p, err, sizeof(err), "--once", NULL, NULL), 0,
	       "--once: exit 0");
	ok(p.passes == 1 && !p.loop, "one pass, not a loop");
	ok(p.had_db && p.had_side, "with the connection and the side one");

	p = (struct probe){.setup_ok = true, .pass_ok = false};
	is_int(run(&periodic, &p, err, sizeof(err), "--once", NULL, NULL), 1,
	       "--once whose pass failed: exit 1");

	p = (struct probe){.setup_ok = true};
	is_int(run(&periodic, &p, err, sizeof(err), NULL, NULL, NULL), 2,
	       "no argument: exit 2");
	is_str(err, "usage: " NAME " --once|--loop|--cron\n",
	       "with the usage line");
	is_int(run(&periodic, &p, err, sizeof(err), "--drain", NULL, NULL), 2,
	       "a queue's --drain: usage");
	is_int(run(&periodic, &p, err, sizeof(err), "--once", "--loop", NULL),
	       2, "two arguments: usage");
	ok(p.passes == 0, "no pass after a usage error");

	p = (struct probe){.setup_ok = false};
	is_int(run(&periodic, &p, err, sizeof(err), "--once", NULL, NULL), 1,
	       "setup failed: exit 1");
	ok(p.passes == 0, "and no pass");

	p = (struct probe){.setup_ok = true, .pass_ok = true};
	unsetenv("XMHUB_DATABASE_URL");
	is_int(run(&periodic, &p, err, sizeof(err), "--once", NULL, NULL), 1,
	       "no XMHUB_DATABASE_URL: exit 1");
	ok(strstr(err, " level=error program=" NAME " ") != NULL &&
		   strstr(err, "msg=\"XMHUB_DATABASE_URL is not set\"") != NULL,
	   "logged under the runner's name");
	p.db_url = URL;
	is_int(run(&periodic, &p, err, sizeof(err), "--once", NULL, NULL), 0,
	       "a URL of setup's own serves instead");
	p.db_url = NULL;
	setenv("XMHUB_DATABASE_URL", URL, 1);

	p = (struct probe){.setup_ok = true, .pass_ok = false, .stop_after = 3};
	ok(loop_child(&periodic, &p, 3, err, sizeof(err), "--loop"),
	   "--loop: passes until SIGTERM, then exit 0 though they failed");
	ok(strstr(err, "heartbeat: 1 passes since the last one") != NULL,
	   "the sleep between passes logs its heartbeat");
}

static void
queue_tests(void)
{
	static const enum jobmain_step two[] = {JOBMAIN_DONE, JOBMAIN_DONE,
						JOBMAIN_IDLE};
	static const enum jobmain_step db[] = {JOBMAIN_DONE, JOBMAIN_DB};
	static const enum jobmain_step wait[] = {JOBMAIN_WAIT};
	static const enum jobmain_step stop[] = {JOBMAIN_DONE, JOBMAIN_STOP,
						 JOBMAIN_DONE};
	static const enum jobmain_step loop_db[] = {JOBMAIN_DB, JOBMAIN_WAIT,
						    JOBMAIN_STOP};
	struct probe p = {.setup_ok = true, .steps = two};
	char err[4096], want[64];

	is_int(run(&queue, &p, err, sizeof(err), "--drain", NULL, NULL), 0,
	       "--drain: exit 0");
	ok(p.nsteps == 3 && !p.loop, "steps until no job is left");
	snprintf(want, sizeof(want), ":%ld", (long)getpid());
	ok(strlen(p.worker) > strlen(want) &&
		   strcmp(p.worker + strlen(p.worker) - strlen(want), want) ==
			   0,
	   "the worker id is HOST:PID (%s)", p.worker);

	p = (struct probe){.setup_ok = true, .steps = two};
	is_int(run(&queue, &p, err, sizeof(err), "--worker-id", "w1",
		   "--drain"),
	       0, "--worker-id before the mode");
	is_str(p.worker, "w1", "names the worker");

	p = (struct probe){.setup_ok = true, .steps = db};
	is_int(run(&queue, &p, err, sizeof(err), "--drain", NULL, NULL), 1,
	       "--drain whose database failed: exit 1");
	ok(p.nsteps == 2, "after the failed step");
	ok(strstr(err, "the database is unavailable") == NULL,
	   "--drain does not say it will try again");
	p = (struct probe){.setup_ok = true, .steps = wait};
	is_int(run(&queue, &p, err, sizeof(err), "--drain", NULL, NULL), 1,
	       "--drain that must wait: exit 1");

	p = (struct probe){.setup_ok = true, .steps = stop};
	ok(loop_child(&queue, &p, 2, err, sizeof(err), "--drain"),
	   "a stop ends the drain at once, exit 0");

	p = (struct probe){.setup_ok = true, .steps = two};
	is_int(run(&queue, &p, err, sizeof(err), "--once", NULL, NULL), 2,
	       "a periodic --once: usage");
	is_str(err, "usage: " NAME " --drain|--loop|--cron [--worker-id ID]\n",
	       "with the queue's usage line");
	is_int(run(&queue, &p, err, sizeof(err), "--drain", "--loop", NULL), 2,
	       "two modes: usage");
	is_int(run(&queue, &p, err, sizeof(err), "--worker-id", NULL, NULL), 2,
	       "--worker-id without an id: usage");
	is_int(run(&queue, &p, err, sizeof(err), "--drain", "--worker-id",
		   "123456789"),
	       2, "an id over worker_max: usage");
	is_int(run(&queue, &p, err, sizeof(err), "--drain", "--worker-id", ""),
	       2, "an empty id: usage");
	ok(p.nsteps == 0, "no step after a usage error");

	p = (struct probe){.setup_ok = true, .steps = loop_db};
	ok(loop_child(&queue, &p, 3, err, sizeof(err), "--loop"),
	   "--loop: a pass after a failed one, until SIGTERM; exit 0");
	ok(strstr(err, "msg=\"the database is unavailable; trying "
		       "again\"") != NULL &&
		   strstr(strstr(err, "trying again") + 1, "trying again") ==
			   NULL,
	   "a failed database is said once, a wait not at all");
}

/* --cron: one pass under XMHUB_LOCK_DIR/NAME.lock; none while another
 * holds it; the lock file's directory unusable: exit 1, no pass. */
static void
cron_tests(void)
{
	static const enum jobmain_step idle[] = {JOBMAIN_DONE, JOBMAIN_IDLE};
	struct probe p = {.setup_ok = true, .pass_ok = true};
	char dir[] = "/tmp/xmhub-jobmain-lock-XXXXXX", lock[128], err[4096];
	int fd;

	if (mkdtemp(dir) == NULL)
		abort();
	setenv("XMHUB_LOCK_DIR", dir, 1);
	snprintf(lock, sizeof(lock), "%s/" NAME ".lock", dir);
	is_int(run(&periodic, &p, err, sizeof(err), "--cron", NULL, NULL), 0,
	       "--cron: exit 0");
	ok(p.passes == 1 && !p.loop, "--cron: one pass, not a loop");
	ok(access(lock, F_OK) == 0, "--cron: the lock file made");
	p = (struct probe){.setup_ok = true, .steps = idle};
	is_int(run(&queue, &p, err, sizeof(err), "--cron", NULL, NULL), 0,
	       "a queue's --cron: exit 0");
	ok(p.nsteps == 2 && !p.loop, "a queue's --cron: drained once");

	/* Another pass holds the lock (a descriptor of its own). */
	if ((fd = open(lock, O_RDWR)) < 0 || flock(fd, LOCK_EX) != 0)
		abort();
	p = (struct probe){.setup_ok = true, .pass_ok = true};
	is_int(run(&periodic, &p, err, sizeof(err), "--cron", NULL, NULL), 0,
	       "--cron while a pass holds the lock: exit 0");
	ok(p.passes == 0, "and no pass");
	close(fd);
	is_int(run(&periodic, &p, err, sizeof(err), "--cron", NULL, NULL), 0,
	       "--cron once it is given back");
	ok(p.passes == 1, "a pass again");
	unlink(lock);

	setenv("XMHUB_LOCK_DIR", "/nonexistent/xmhub-locks", 1);
	p = (struct probe){.setup_ok = true, .pass_ok = true};
	is_int(run(&periodic, &p, err, sizeof(err), "--cron", NULL, NULL), 1,
	       "--cron without a usable lock directory: exit 1");
	ok(p.passes == 0 && strstr(err, "/nonexistent/xmhub-locks/" NAME
					".lock") != NULL,
	   "no pass, the lock file named in the log");
	unsetenv("XMHUB_LOCK_DIR");
	rmdir(dir);
}

int
main(void)
{
	char path[] = "/tmp/xmhub-jobmain-env-XXXXXX";
	int fd = mkstemp(path);

	/* An empty env file: the settings are this process's. */
	close(fd);
	setenv("XMHUB_ENV_FILE", path, 1);
	setenv("XMHUB_DATABASE_URL", URL, 1);
	alarm(60);
	periodic_tests();
	queue_tests();
	cron_tests();
	unlink(path);
	return tap_done();
}
