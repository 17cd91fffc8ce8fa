/* SPDX-License-Identifier: MIT */
/*
 * jobmain.h - the one skeleton of the job runners' mains (jobs/): the
 * command line, the log's name, SIGTERM and SIGINT, the settings, the
 * database connection and the object store, the passes and the sleep
 * between them, the exit status.  A runner names what differs in a
 * struct jobmain_def and keeps only its own work:
 *
 *   static const struct jobmain_def def = {
 *           .name = "xmhub-x", .interval = 60,
 *           .setup = setup, .pass = pass,
 *   };
 *   int main(int argc, char **argv)
 *   {
 *           struct x x = {0};
 *           return jobmain_run(&def, &x, argc, argv);
 *   }
 *
 * Two kinds of runner:
 *
 *   periodic (pass)  name --once|--loop|--cron: a pass, then with
 *                    --loop one every interval seconds until SIGTERM or
 *                    SIGINT.
 *   queue (step)     name --drain|--loop|--cron [--worker-id ID]: a
 *                    pass claims and runs jobs, one step each, until
 *                    none is left (--drain: once; --loop: again every
 *                    interval seconds until a signal).  The worker id
 *                    names the runner in the queue's rows: ID, or
 *                    HOST:PID.
 *
 * --cron is --once or --drain for a crontab line (doc/shared-hosting.md):
 * the pass runs under an exclusive flock of XMHUB_LOCK_DIR/NAME.lock,
 * taken after the settings are read; while an earlier pass holds it the
 * program exits 0 at once, so passes never overlap however long one
 * takes.
 *
 * What happens, in this order: the command line (anything else prints
 * the usage line, exit 2); log_init(name) (lib/core/log); the signals
 * (runner_signals(), lib/core/runner: a stop is a flag every pass
 * checks; SIGPIPE ignored, a closed pipe or socket being an error of the
 * write, not the end of the runner); conf_init() (lib/core/conf);
 * def->setup, the runner's own settings; the database URL; the object
 * store when def->store; the connection(s); the passes.  A failure
 * before the passes is logged and ends the program with 1.
 *
 * A pass that fails in --loop is tried again after the interval: the
 * database may come back.  The exit status: 0, or 1 when a --once or
 * --drain pass failed (a --loop that was stopped exits 0).
 */
#ifndef XMHUB_JOBMAIN_H
#define XMHUB_JOBMAIN_H

#include <stdbool.h>
#include <stddef.h>

struct db;
struct store;

/* Bytes of the longest worker id (the queues' JOBS_WORKER_MAX,
 * FACEAPI_VWORKER_MAX). */
#define JOBMAIN_WORKER_MAX 128

/* What one step of a queue runner came to. */
enum jobmain_step {
	JOBMAIN_IDLE, /* no job waiting: the pass is over */
	JOBMAIN_DONE, /* a job was handled (completed, failed, lost): next */
	JOBMAIN_STOP, /* the runner is stopping; the job was given back */
	JOBMAIN_DB,   /* the database failed: the pass failed */
	JOBMAIN_WAIT  /* the runner can not work yet and said why (logged):
		       * the pass failed, nothing more is logged */
};

/* The running program, handed to the def's functions. */
struct jobmain {
	const struct jobmain_def *def;
	void *arg; /* the runner's own state, as given to jobmain_run() */
	bool loop; /* --loop */
	bool cron; /* --cron */
	char worker[JOBMAIN_WORKER_MAX + 1]; /* a queue runner's id */
	long long interval; /* --loop: seconds between passes */
	/* The database's URL and the setting that names it, for the line
	 * saying it is missing.  NULL: XMHUB_DATABASE_URL; setup may set
	 * both (the face service's settings). */
	const char *db_url, *db_setting;
	struct db *db;	  /* the runner's connection */
	struct db *side;  /* a second one, with def->side_db; else NULL */
	struct store *st; /* the object store, with def->store; else NULL */
};

/* What differs between runners.  Exactly one of pass and step. */
struct jobmain_def {
	const char *name;   /* the program: usage and log lines */
	long long interval; /* the default of jobmain.interval */
	size_t worker_max;  /* a queue's longest --worker-id (at most
			     * JOBMAIN_WORKER_MAX) */
	bool store;	    /* opens the object store (store_open_env) */
	/* A periodic runner's channel: with --loop, a notification on it
	 * starts the next pass at once instead of after the interval
	 * (LISTEN on the runner's connection; through PgBouncer, which
	 * allows none, the interval alone).  NULL: none. */
	const char *channel;
	bool side_db; /* opens a second connection */
	/* After conf_init(), before the connections: reads the runner's
	 * settings (and may set m->interval, m->db_url, m->db_setting);
	 * false when the runner can not start, said in the log. */
	bool (*setup)(struct jobmain *m);
	/* A periodic runner's pass; false when it failed (logged). */
	bool (*pass)(struct jobmain *m);
	/* A queue runner's step: claims one job and runs it. */
	enum jobmain_step (*step)(struct jobmain *m);
};

/*
 * Runs the program def with the runner's state arg on its command line
 * (argc, argv as main() has them); returns main()'s exit status.  The
 * connections and the store are closed before it returns; what the
 * runner opened in arg is the caller's to close.
 */
int jobmain_run(const struct jobmain_def *def, void *arg, int argc,
		char **argv);

#endif
