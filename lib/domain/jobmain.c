/* SPDX-License-Identifier: MIT */
/*
 * jobmain.c - the job runners' one main: command line, set-up, passes
 * (jobmain.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/conf.h"
#include "core/db.h"
#include "core/log.h"
#include "core/runner.h"
#include "domain/jobmain.h"
#include "store/storage.h"

#define HOST_MAX 64 /* bytes of the host name in a default worker id */

/* A periodic runner's command line: "--once", "--loop" or "--cron". */
static bool
periodic_args(struct jobmain *m, int argc, char **argv)
{
	if (argc != 2 ||
	    (strcmp(argv[1], "--once") != 0 && strcmp(argv[1], "--loop") != 0 &&
	     strcmp(argv[1], "--cron") != 0)) {
		fprintf(stderr, "usage: %s --once|--loop|--cron\n",
			m->def->name);
		return false;
	}
	m->loop = strcmp(argv[1], "--loop") == 0;
	m->cron = strcmp(argv[1], "--cron") == 0;
	return true;
}

static bool
queue_usage(const struct jobmain *m)
{
	fprintf(stderr, "usage: %s --drain|--loop|--cron [--worker-id ID]\n",
		m->def->name);
	return false;
}

/* A queue runner's command line: "--drain" or "--loop", and
 * "--worker-id ID" or HOST:PID for the id. */
static bool
queue_args(struct jobmain *m, int argc, char **argv)
{
	char host[HOST_MAX];
	bool mode = false;

	for (int i = 1; i < argc; i++) {
		if (!mode && (strcmp(argv[i], "--drain") == 0 ||
			      strcmp(argv[i], "--loop") == 0 ||
			      strcmp(argv[i], "--cron") == 0)) {
			m->loop = strcmp(argv[i], "--loop") == 0;
			m->cron = strcmp(argv[i], "--cron") == 0;
			mode = true;
		} else if (strcmp(argv[i], "--worker-id") == 0 &&
			   i + 1 < argc && argv[i + 1][0] != '\0' &&
			   strlen(argv[i + 1]) <= m->def->worker_max) {
			snprintf(m->worker, sizeof(m->worker), "%s", argv[++i]);
		} else {
			return queue_usage(m);
		}
	}
	if (!mode)
		return queue_usage(m);
	if (m->worker[0] == '\0') {
		if (gethostname(host, sizeof(host)) != 0)
			snprintf(host, sizeof(host), "localhost");
		host[sizeof(host) - 1] = '\0';
		snprintf(m->worker, sizeof(m->worker), "%s:%ld", host,
			 (long)getpid());
	}
	return true;
}

/* Settings, the database and the store; false once one failed (said in
 * the log). */
static bool
set_up(struct jobmain *m)
{
	char detail[512];

	if (!conf_init(detail, sizeof(detail))) {
		log_error("%s", detail);
		return false;
	}
	if (!m->def->setup(m))
		return false;
	if (m->db_setting == NULL) {
		m->db_setting = "XMHUB_DATABASE_URL";
		m->db_url = conf_get("XMHUB_DATABASE_URL");
	}
	if (m->db_url == NULL) {
		log_error("%s is not set", m->db_setting);
		return false;
	}
	if (m->def->store &&
	    (m->st = store_open_env(detail, sizeof(detail))) == NULL) {
		log_error("%s", detail);
		return false;
	}
	if ((m->db = db_new(m->db_url)) == NULL ||
	    (m->def->side_db && (m->side = db_new(m->db_url)) == NULL)) {
		log_error("out of memory");
		return false;
	}
	return true;
}

/* A queue runner's pass: steps until no job is left or the runner
 * stops; false when a step failed. */
static bool
drain(struct jobmain *m)
{
	enum jobmain_step s = JOBMAIN_IDLE;

	while (!runner_stopping() && (s = m->def->step(m)) == JOBMAIN_DONE)
		;
	/* A database that went away is waited for, not fatal. */
	if (s == JOBMAIN_DB && m->loop)
		log_error("the database is unavailable; trying again");
	return s != JOBMAIN_DB && s != JOBMAIN_WAIT;
}

/* --cron: takes XMHUB_LOCK_DIR/NAME.lock (an exclusive flock, held
 * until the process ends) into *fd.  JOBMAIN_DONE when taken,
 * JOBMAIN_IDLE when another pass holds it, JOBMAIN_WAIT when the file
 * can not be used (logged). */
static enum jobmain_step
cron_lock(const struct jobmain *m, int *fd)
{
	char path[4096];
	const char *dir = conf_get("XMHUB_LOCK_DIR");

	if ((size_t)snprintf(path, sizeof(path), "%s/%s.lock", dir,
			     m->def->name) >= sizeof(path)) {
		log_error("XMHUB_LOCK_DIR is too long");
		return JOBMAIN_WAIT;
	}
	if ((*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		log_error("%s: %s", path, strerror(errno));
		return JOBMAIN_WAIT;
	}
	if (flock(*fd, LOCK_EX | LOCK_NB) == 0)
		return JOBMAIN_DONE;
	if (errno == EWOULDBLOCK)
		return JOBMAIN_IDLE;
	log_error("%s: %s", path, strerror(errno));
	return JOBMAIN_WAIT;
}

static bool
pass(struct jobmain *m)
{
	return m->def->pass != NULL ? m->def->pass(m) : drain(m);
}

/*
 * Waits for the next pass of a --loop: the interval, or with def->channel
 * until a notification on it, whichever comes first.  One that arrived
 * during the pass (or a new connection, which may have missed some)
 * starts the next one at once.  False when the runner is to stop.
 */
static bool
next_pass(struct jobmain *m)
{
	bool missed = false;
	int n, fd;

	if (m->def->channel == NULL || !db_listen(m->db, m->def->channel))
		return runner_sleep(m->interval);
	n = db_notified(m->db, &missed);
	/* No connection (the database down): the interval, as without. */
	if ((fd = db_socket(m->db)) >= 0 && (n > 0 || missed))
		return runner_sleep(0);
	if (!runner_wait(m->interval, fd))
		return false;
	/* What woke it is the next pass's to handle, not one more. */
	if (fd >= 0)
		db_notified(m->db, &missed);
	return true;
}

int
jobmain_run(const struct jobmain_def *def, void *arg, int argc, char **argv)
{
	struct jobmain m = {.def = def, .arg = arg};
	int rc = 1, lock = -1;
	bool ok;

	if (!(def->step != NULL ? queue_args(&m, argc, argv)
				: periodic_args(&m, argc, argv)))
		return 2;
	log_init(def->name);
	runner_signals();
	signal(SIGPIPE, SIG_IGN);
	m.interval = def->interval;
	if (!set_up(&m))
		goto out;
	if (m.cron) {
		switch (cron_lock(&m, &lock)) {
		case JOBMAIN_DONE:
			break;
		case JOBMAIN_IDLE:
			/* The pass of an earlier cron run goes on: this
			 * one is not needed. */
			rc = 0;
			goto out;
		default:
			goto out;
		}
	}
	ok = pass(&m);
	while (m.loop && next_pass(&m))
		ok = pass(&m);
	rc = ok || m.loop ? 0 : 1;
out:
	db_free(m.side);
	db_free(m.db);
	store_close(m.st);
	if (lock >= 0)
		close(lock);
	return rc;
}
