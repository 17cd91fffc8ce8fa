/* SPDX-License-Identifier: MIT */
/*
 * alarmrun.h - the alarm runner's work (jobs/alarm.c, doc/alarms.md):
 * the rules not evaluated at ingest and the delivery of alarm events to
 * webhooks.
 *
 * Silence: a device of a silence rule (the rule's device, or every active
 * device of its facility) whose last data (devices.last_seen_at) is older
 * than the rule's minutes raises the rule's alarm (sql/021
 * alarm_raise: the alarm, its event and its deliveries); a device that
 * sends again clears it.  A device that never sent is not silent.
 *
 * Storage: a facility with a quota whose stored bytes (facility_usage,
 * sql/019) reach the rule's percent of it raises the rule's alarm, with
 * no device and the percent as its value; going back under clears it.
 *
 * Session error: a device with ingest sessions that went to error (the
 * reaper; ingest_sessions.errored_at) since the rule was made and since
 * the rule's last alarm on it raises it, the count as its value.  Job
 * failed: the same for the facility's transcode jobs failed for good, no
 * device.  Both are cleared by a person.
 *
 * Delivery: one pending delivery whose next_at has come is claimed with
 * FOR UPDATE SKIP LOCKED and leased, committed before the event is
 * POSTed: its next_at moves XMHUB_ALARM_TIMEOUT + 5 s on.  A runner that
 * dies leaves the row pending, and a runner posts it again once the lease
 * is over, with the same Idempotency-Key (the event's id), so a receiver
 * that remembers keys sees each event once.  The POST: the event's JSON,
 * Content-Type application/json, headers
 *
 *   Idempotency-Key: EVENT_ID
 *   X-Xmhub-Event: alarm.raised
 *   X-Xmhub-Delivery: DELIVERY_ID
 *   X-Xmhub-Timestamp: UNIX_SECONDS
 *   X-Xmhub-Signature: sha256=HEX
 *
 * HEX the HMAC-SHA256, with the endpoint's secret, of "UNIX_SECONDS." and
 * the body: a receiver checks it and refuses a timestamp too far from its
 * clock (a replay).  A 2xx answer delivers; anything else (a status, no
 * connection, a timeout) is a failed attempt: next_at moves to now +
 * retry_base * 2^(attempts - 1) seconds, at most an hour; after
 * max_attempts the delivery is dead (kept, shown in the console).
 *
 * An endpoint whose url is mailto:ADDRESS gets the event as an e-mail
 * instead, a message a person reads with the event's JSON after its text
 * (alarmmail.h): sendmail -i -- ADDRESS (c->sendmail, spawned without a
 * shell, with no environment but PATH), the message on its standard
 * input; exit 0 delivers, anything else fails the attempt as above (no
 * sendmail configured included).
 */
#ifndef XMHUB_ALARMRUN_H
#define XMHUB_ALARMRUN_H

#include <stdbool.h>
#include <stddef.h>

#include "core/db.h"

struct alarmrun_conf {
	const char *sendmail; /* the MTA's sendmail; NULL: e-mail is off */
	long long timeout;    /* seconds a POST may take */
	long long retry_base; /* seconds before the first retry */
	long long max_attempts;
	bool private_hosts;  /* XMHUB_ALARM_PRIVATE_HOSTS: POSTs may reach
			      * non-public addresses */
	long long keep_days; /* XMHUB_RETENTION_ALARM_DAYS: alarmrun_prune()'s
			      * days; 0 keeps alarms for ever */
};

/* What one delivery step came to. */
enum alarmrun_step {
	ALARMRUN_IDLE,	    /* nothing due */
	ALARMRUN_DELIVERED, /* one delivered */
	ALARMRUN_FAILED,    /* one attempt failed (retried later, or dead) */
	ALARMRUN_DB	    /* the database failed */
};

/* Raises the alarms of the rules above, and clears those of devices
 * that sent again and of facilities back under their percent; *raised,
 * *cleared: how many.  DB_OK or the failure. */
enum db_status alarmrun_rules(struct db *db, unsigned long *raised,
			      unsigned long *cleared);

/*
 * Deletes up to ALARMRUN_PRUNE_BATCH alarms cleared more than days ago,
 * their history, events and deliveries with them (ON DELETE CASCADE);
 * *deleted: how many.  A full batch means more may be left.
 */
#define ALARMRUN_PRUNE_BATCH 1000
enum db_status alarmrun_prune(struct db *db, long long days,
			      unsigned long *deleted);

/* Claims one due delivery and posts it (above). */
enum alarmrun_step alarmrun_deliver(struct db *db,
				    const struct alarmrun_conf *c);

/*
 * The signature header's value for body (len bytes) sent at ts with
 * secret: "sha256=" and 64 hex digits, into out (at least
 * ALARMRUN_SIG_LEN + 1 bytes); false when libcrypto fails.
 */
#define ALARMRUN_SIG_LEN (7 + 64)
bool alarmrun_sign(const char *secret, long long ts, const char *body,
		   size_t len, char *out);

#endif
