/* SPDX-License-Identifier: MIT */
/*
 * xmhub-alarm - the alarm runner (doc/alarms.md): raises the alarms of
 * the rules not evaluated at ingest (silence, storage, session error, job
 * failed), and delivers alarm events to webhooks.
 *
 *   xmhub-alarm --once   one pass (cron), exit 0, 1 on failure
 *   xmhub-alarm --loop   a pass every XMHUB_ALARM_INTERVAL seconds
 *                        (default 1), and at once when alarm_raise()
 *                        notifies xmhub_alarm, until SIGTERM or SIGINT
 *
 * A pass: those rules, then every due delivery (lib/domain/alarmrun).
 * Several runners may run at once: each delivery is claimed with FOR
 * UPDATE SKIP LOCKED.  Settings (environment or env file,
 * lib/core/conf): XMHUB_DATABASE_URL, XMHUB_ALARM_INTERVAL,
 * XMHUB_ALARM_TIMEOUT, XMHUB_ALARM_RETRY_BASE, XMHUB_ALARM_MAX_ATTEMPTS,
 * XMHUB_ALARM_SENDMAIL, XMHUB_RETENTION_ALARM_DAYS (alarms cleared longer
 * ago are deleted, once an hour).
 * The rest of the main: lib/domain/jobmain.
 */
#include "config.h"

#include <stdio.h>
#include <time.h>

#include "core/conf.h"
#include "core/log.h"
#include "core/runner.h"
#include "core/settings.h"
#include "domain/alarmrun.h"
#include "domain/jobmain.h"

#define NAME "xmhub-alarm"

static bool
setup(struct jobmain *m)
{
	struct alarmrun_conf *c = m->arg;

	if (!conf_get_int("XMHUB_ALARM_INTERVAL", &m->interval) ||
	    !conf_get_int("XMHUB_ALARM_TIMEOUT", &c->timeout) ||
	    !conf_get_int("XMHUB_ALARM_RETRY_BASE", &c->retry_base) ||
	    !conf_get_int("XMHUB_ALARM_MAX_ATTEMPTS", &c->max_attempts) ||
	    !conf_get_int("XMHUB_RETENTION_ALARM_DAYS", &c->keep_days)) {
		log_error("an XMHUB_ALARM_* or XMHUB_RETENTION_ALARM_DAYS "
			  "setting is out of its range (xmhub.env(5))");
		return false;
	}
	if (!settings_bool(conf_str("XMHUB_ALARM_PRIVATE_HOSTS", "false"),
			   &c->private_hosts)) {
		log_error("XMHUB_ALARM_PRIVATE_HOSTS is not a boolean "
			  "(xmhub.env(5))");
		return false;
	}
	c->sendmail = conf_str("XMHUB_ALARM_SENDMAIL", NULL);
	return true;
}

/* Deletes the alarms cleared longer ago than c->keep_days: once an hour,
 * and at every pass while a backlog lasts (a batch at a time). */
static enum db_status
prune(struct db *db, const struct alarmrun_conf *c)
{
	static time_t last;
	static bool more;
	time_t now = time(NULL);
	unsigned long n = 0;
	enum db_status st;

	if (c->keep_days == 0 || (!more && last != 0 && now - last < 3600))
		return DB_OK;
	if ((st = alarmrun_prune(db, c->keep_days, &n)) == DB_OK) {
		last = now;
		more = n == ALARMRUN_PRUNE_BATCH;
	}
	if (n > 0)
		printf(NAME ": %lu cleared alarm(s) deleted, older than %lld "
			    "days\n",
		       n, c->keep_days);
	return st;
}

/* One pass; false when the database failed. */
static bool
pass(struct jobmain *m)
{
	const struct alarmrun_conf *c = m->arg;
	unsigned long raised, cleared, sent = 0, failed = 0;
	enum alarmrun_step s = ALARMRUN_IDLE;
	enum db_status st = alarmrun_rules(m->db, &raised, &cleared);

	while (st == DB_OK && !runner_stopping() &&
	       (s = alarmrun_deliver(m->db, c)) != ALARMRUN_IDLE &&
	       s != ALARMRUN_DB) {
		sent += s == ALARMRUN_DELIVERED;
		failed += s == ALARMRUN_FAILED;
	}
	if (st == DB_OK && s != ALARMRUN_DB)
		st = prune(m->db, c);
	if (raised + cleared + sent + failed > 0)
		printf(NAME ": %lu alarm(s) raised, %lu cleared; %lu "
			    "delivery(ies) made, %lu failed\n",
		       raised, cleared, sent, failed);
	fflush(stdout);
	if (st != DB_OK || s == ALARMRUN_DB) {
		log_error("the database failed (see above); will retry");
		return false;
	}
	return true;
}

int
main(int argc, char **argv)
{
	static const struct jobmain_def def = {
		.name = NAME,
		.setup = setup,
		.pass = pass,
		/* alarm_raise() (sql/021) NOTIFYs it with each new event's
		 * deliveries: they go out at once, not a pass later. */
		.channel = "xmhub_alarm",
	};
	struct alarmrun_conf c;

	return jobmain_run(&def, &c, argc, argv);
}
