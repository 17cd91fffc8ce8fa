/* SPDX-License-Identifier: MIT */
/*
 * alarmrun-db - the alarm runner's rules (lib/domain/alarmrun.c
 * alarmrun_rules) against a real PostgreSQL, no stack: the states the
 * other programs leave (a device's last data, a session the reaper moved
 * to error, a transcode job failed for good) are written here as those
 * programs write them.  Silence raises once and clears when the device
 * sends again; a session in error raises once per device, not again for
 * the same sessions once cleared, again for a newer one; a failed job
 * raises a facility's alarm of no device; a session that went to error
 * before the rule was made raises nothing.  A webhook at 127.0.0.1 is
 * not reached unless XMHUB_ALARM_PRIVATE_HOSTS.  t/e2e/alarms.t proves
 * silence and storage through the stack and the webhooks.  Run by
 * t/e2e/alarmrun-db.t with a migrated database of its own in
 * XMHUB_TEST_DATABASE_URL.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/conf.h"
#include "domain/alarmrun.h"
#include "domain/alarms.h"
#include "domain/ingest.h"
#include "tap.h"
#include "testdb.h"

static struct db *db;
static char fac[64];

static const char *
one(const char *sql, const char *param)
{
	static char out[256];

	testdb_one(db, sql, param, out, sizeof(out));
	return out;
}

/* A pass of the rules: "raised cleared". */
static const char *
pass(void)
{
	static char out[64];
	unsigned long raised = 99, cleared = 99;

	if (alarmrun_rules(db, &raised, &cleared) != DB_OK)
		return "failed";
	snprintf(out, sizeof(out), "%lu %lu", raised, cleared);
	return out;
}

/* A new session of device uid; its id into sid. */
static void
session(uint32_t uid, char *sid)
{
	char detail[256];

	if (ingest_session_create(db, fac, uid, NULL, NULL,
				  "[{\"stream_index\":0,\"name\":\"t\","
				  "\"value_type\":\"f32\"}]",
				  sid, detail, sizeof(detail)) != INGEST_OK)
		printf("Bail out! session: %s\n", detail);
}

static void
rule(const char *name, const char *kind, const char *minutes)
{
	struct alarms_rule r = {.facility_id = fac,
				.name = name,
				.kind = kind,
				.silence_minutes = minutes};
	PGresult *res = NULL;
	enum db_status st;

	is_int(alarms_rule_create(db, &r, 1000, &res, &st), ALARMS_OK,
	       "rule %s created", name);
	PQclear(res);
}

static const char *
alarms_of(const char *name)
{
	return one("SELECT count(*) FILTER (WHERE a.state <> 'cleared') || ' ' "
		   "|| count(*) FROM alarms a JOIN alarm_rules r ON r.id = "
		   "a.rule_id WHERE r.name = $1",
		   name);
}

/* The reaper's move of session sid to error. */
static void
reap(const char *sid)
{
	one("UPDATE ingest_sessions SET status = 'error' WHERE id = $1::uuid "
	    "RETURNING errored_at IS NOT NULL",
	    sid);
}

static void
test_silence(void)
{
	char sid[64];

	session(1, sid);
	rule("quiet", "silence", "5");
	is_str(pass(), "0 0", "a device that never sent is not silent");
	one("UPDATE devices SET last_seen_at = now() - interval '6 minutes' "
	    "WHERE device_uid = $1::bigint RETURNING 1",
	    "1");
	is_str(pass(), "1 0", "silent for 6 minutes of 5: raised");
	is_str(pass(), "0 0", "once");
	is_str(alarms_of("quiet"), "1 1", "one open alarm");
	one("UPDATE devices SET last_seen_at = now() WHERE device_uid = "
	    "$1::bigint RETURNING 1",
	    "1");
	is_str(pass(), "0 1", "the device sent again: cleared");
	is_str(alarms_of("quiet"), "0 1", "no open alarm");
}

static void
test_session_error(void)
{
	char old[64], s1[64], s2[64], s3[64];
	PGresult *res = NULL;
	enum db_status st;

	session(2, old);
	reap(old);
	/* The rule is made after: its created_at is later. */
	one("SELECT pg_sleep(0.01)", NULL);
	rule("errors", "session_error", NULL);
	is_str(pass(), "0 0", "a session in error before the rule: nothing");
	session(2, s1);
	session(3, s2);
	reap(s1);
	reap(s2);
	is_str(pass(), "2 0", "two devices' sessions in error: two alarms");
	is_str(pass(), "0 0", "once");
	is_str(one("SELECT value FROM alarms WHERE device_id = (SELECT "
		   "device_id FROM ingest_sessions WHERE id = $1::uuid)",
		   s1),
	       "1", "the count as the value");
	is_int(alarms_move(
		       db, NULL,
		       one("SELECT id FROM alarms WHERE device_id = (SELECT "
			   "device_id FROM ingest_sessions WHERE id = "
			   "$1::uuid) AND state = 'active'",
			   s1),
		       "cleared", NULL, &res, &st),
	       ALARMS_OK, "the first device's alarm cleared");
	PQclear(res);
	is_str(pass(), "0 0", "the same sessions do not raise it again");
	session(2, s3);
	reap(s3);
	is_str(pass(), "1 0", "a newer session in error does");
	is_str(alarms_of("errors"), "2 3", "two open, three in all");
}

static void
test_job_failed(void)
{
	char key[64], up[64];

	rule("jobs", "job_failed", NULL);
	testdb_one(db,
		   "INSERT INTO api_keys (facility_id, name, key_prefix, "
		   "key_hash) VALUES ($1, 'k', 'xmh_alarmrun', "
		   "repeat('0', 64)) RETURNING id",
		   fac, key, sizeof(key));
	testdb_one(db,
		   "INSERT INTO uploads (facility_id, api_key_id, "
		   "original_filename, original_format, original_size_bytes) "
		   "SELECT facility_id, id, 'a.wav', 'wav', 4 FROM api_keys "
		   "WHERE id = $1::uuid RETURNING id",
		   key, up, sizeof(up));
	one("INSERT INTO transcode_jobs (upload_id, facility_id, "
	    "target_format, target_codec, target_container, target_bitrate) "
	    "SELECT id, facility_id, 'opus', 'opus', 'webm', '128k' FROM "
	    "uploads WHERE id = $1::uuid RETURNING 1",
	    up);
	is_str(pass(), "0 0", "a queued job: nothing");
	one("UPDATE transcode_jobs SET status = 'failed', completed_at = now() "
	    "WHERE upload_id = $1::uuid RETURNING 1",
	    up);
	is_str(pass(), "1 0", "a failed job: raised");
	is_str(one("SELECT coalesce(a.device_id::text, 'none') FROM alarms a "
		   "JOIN alarm_rules r ON r.id = a.rule_id WHERE r.name = $1",
		   "jobs"),
	       "none", "an alarm of no device");
	is_str(pass(), "0 0", "once");
}

/* A listening socket on 127.0.0.1 that accepts nothing by itself; its
 * port into *port; -1 on failure. */
static int
listener(unsigned *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(fd, 4) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* Whether a connection reached l since the last call (taken and closed). */
static bool
reached(int l)
{
	int fd = accept(l, NULL, NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* An endpoint of the facility named name at url. */
static void
endpoint(const char *name, const char *url)
{
	PGresult *res = NULL;
	enum db_status st;

	is_int(alarms_endpoint_create(db, fac, name, url, "local-secret-0123",
				      20, &res, &st),
	       ALARMS_OK, "an endpoint %s at %s", name, url);
	PQclear(res);
}

static void
test_private_hosts(void)
{
	struct alarmrun_conf c = {
		.timeout = 1, .retry_base = 1, .max_attempts = 5};
	char url[64];
	unsigned port = 0;
	int l = listener(&port);

	if (!ok(l >= 0, "a listener on 127.0.0.1"))
		return;
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/hook", port);
	endpoint("local", url);
	rule("private", "job_failed", NULL);
	is_str(one("SELECT raised FROM alarm_raise((SELECT id FROM "
		   "alarm_rules WHERE name = $1), NULL, NULL, 'a test')",
		   "private"),
	       "t", "an alarm raised: its delivery is due");
	is_int(alarmrun_deliver(db, &c), ALARMRUN_FAILED,
	       "XMHUB_ALARM_PRIVATE_HOSTS off: the POST fails");
	ok(!reached(l), "no connection reached 127.0.0.1");
	is_str(one("SELECT last_error FROM alarm_deliveries d JOIN "
		   "webhook_endpoints w ON w.id = d.endpoint_id WHERE "
		   "w.name = $1",
		   "local"),
	       "the address 127.0.0.1 is not public "
	       "(XMHUB_ALARM_PRIVATE_HOSTS)",
	       "its last_error says why");
	one("UPDATE alarm_deliveries SET next_at = now() WHERE state = "
	    "'pending' RETURNING 1",
	    NULL);
	c.private_hosts = true;
	is_int(alarmrun_deliver(db, &c), ALARMRUN_FAILED,
	       "on: the POST is sent (and times out: no one answers)");
	ok(reached(l), "a connection reached 127.0.0.1");
	close(l);
}

/* IPv6 addresses that stand for a private IPv4 one are refused as it is:
 * NAT64's and 6to4's (no such gateway here: without the check the POST
 * would fail for want of a route, with another error). */
static void
test_embedded_v4(void)
{
	struct alarmrun_conf c = {
		.timeout = 1, .retry_base = 1, .max_attempts = 5};
	static const char *const hosts[][2] = {
		{"[64:ff9b::a00:1]", "10.0.0.1"},
		{"[2002:c0a8:101::1]", "192.168.1.1"},
	};
	char url[64], want[128];

	one("DELETE FROM webhook_endpoints RETURNING 1", NULL);
	for (size_t i = 0; i < 2; i++) {
		snprintf(url, sizeof(url), "http://%s:9/hook", hosts[i][0]);
		endpoint(hosts[i][1], url);
	}
	rule("embedded", "job_failed", NULL);
	is_str(one("SELECT raised FROM alarm_raise((SELECT id FROM "
		   "alarm_rules WHERE name = $1), NULL, NULL, 'a test')",
		   "embedded"),
	       "t", "an alarm raised: a delivery to each");
	for (size_t i = 0; i < 2; i++) {
		is_int(alarmrun_deliver(db, &c), ALARMRUN_FAILED,
		       "a POST fails");
	}
	for (size_t i = 0; i < 2; i++) {
		snprintf(want, sizeof(want),
			 "the address %.*s is not public "
			 "(XMHUB_ALARM_PRIVATE_HOSTS)",
			 (int)strlen(hosts[i][0]) - 2, hosts[i][0] + 1);
		is_str(one("SELECT last_error FROM alarm_deliveries d JOIN "
			   "webhook_endpoints w ON w.id = d.endpoint_id "
			   "WHERE w.name = $1",
			   hosts[i][1]),
		       want, "%s, which is %s: refused", hosts[i][0],
		       hosts[i][1]);
	}
}

/* An endpoint that does not answer is tried once per retry, not once per
 * event, while the facility's e-mail endpoint gets every event. */
static void
test_failing_endpoint(void)
{
	static const char mta[] = "#!/bin/sh\nexec cat >/dev/null\n";
	char sendmail[] = "/tmp/xmhub-sendmail-XXXXXX";
	struct alarmrun_conf c = {.sendmail = sendmail,
				  .timeout = 1,
				  .retry_base = 600,
				  .max_attempts = 5,
				  .private_hosts = true};
	char url[64], name[16];
	unsigned port = 0;
	int l = listener(&port), steps = 0, fd = mkstemp(sendmail);
	enum alarmrun_step s;

	/* A sendmail that reads the message, as a real one does. */
	if (!ok(fd >= 0 &&
			write(fd, mta, strlen(mta)) == (ssize_t)strlen(mta) &&
			fchmod(fd, 0755) == 0 && close(fd) == 0,
		"a stand-in sendmail") ||
	    !ok(l >= 0, "a listener that never answers"))
		return;
	one("DELETE FROM webhook_endpoints RETURNING 1", NULL);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/hole", port);
	endpoint("hole", url);
	endpoint("mail", "mailto:ops@example.com");
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "fair %d", i);
		rule(name, "job_failed", NULL);
		one("SELECT raised FROM alarm_raise((SELECT id FROM "
		    "alarm_rules WHERE name = $1), NULL, NULL, 'a test')",
		    name);
	}
	while (steps < 10 && (s = alarmrun_deliver(db, &c)) != ALARMRUN_IDLE &&
	       s != ALARMRUN_DB)
		steps++;
	is_int(steps, 4, "four steps until nothing is due");
	is_str(one("SELECT count(*) FILTER (WHERE d.state = 'delivered') || "
		   "' ' || sum(d.attempts) FROM alarm_deliveries d JOIN "
		   "webhook_endpoints w ON w.id = d.endpoint_id WHERE w.name = "
		   "$1",
		   "mail"),
	       "3 3", "every event mailed");
	is_str(one("SELECT sum(d.attempts) || ' ' || count(*) FROM "
		   "alarm_deliveries d JOIN webhook_endpoints w ON w.id = "
		   "d.endpoint_id WHERE w.name = $1 AND d.state = 'pending'",
		   "hole"),
	       "1 3", "the endpoint that times out: tried once, three waiting");
	close(l);
	unlink(sendmail);
}

/* Alarms cleared longer ago than the days kept go, with their events and
 * deliveries; the recent and the open ones stay. */
static const char *
rows_counted(void)
{
	return one("SELECT count(*) || ' ' || (SELECT count(*) FROM "
		   "alarm_events) || ' ' || (SELECT count(*) FROM "
		   "alarm_deliveries) FROM alarms",
		   NULL);
}

static void
test_prune(void)
{
	unsigned long n = 99;
	long a = 0, e = 0, d = 0;
	char want[256];

	one("UPDATE alarms SET state = 'cleared', cleared_at = now() - "
	    "interval '100 days' WHERE id IN (SELECT a.id FROM alarms a JOIN "
	    "alarm_rules r ON r.id = a.rule_id WHERE r.name = $1) "
	    "RETURNING 1",
	    "fair 0");
	one("UPDATE alarms SET state = 'cleared', cleared_at = now() - "
	    "interval '10 days' WHERE id IN (SELECT a.id FROM alarms a JOIN "
	    "alarm_rules r ON r.id = a.rule_id WHERE r.name = $1) "
	    "RETURNING 1",
	    "fair 1");
	snprintf(want, sizeof(want), "%s", rows_counted());
	ok(sscanf(want, "%ld %ld %ld", &a, &e, &d) == 3,
	   "before: %s alarms, events and deliveries", want);
	snprintf(want, sizeof(want), "%ld %ld %ld", a - 1, e - 1, d - 2);
	is_int(alarmrun_prune(db, 365, &n), DB_OK, "kept a year: a pass");
	is_int((long long)n, 0, "nothing that old");
	is_int(alarmrun_prune(db, 90, &n), DB_OK, "kept 90 days: a pass");
	is_int((long long)n, 1, "one alarm cleared 100 days ago deleted");
	is_str(rows_counted(), want,
	       "its event and its two deliveries went with it");
	is_str(one("SELECT count(*) FROM alarms a JOIN alarm_rules r ON "
		   "r.id = a.rule_id WHERE r.name = $1",
		   "fair 1"),
	       "1", "the one cleared 10 days ago stays");
}

int
main(void)
{
	if ((db = testdb_start("alarmrun", fac, sizeof(fac))) == NULL)
		return 1;
	test_silence();
	test_session_error();
	test_job_failed();
	test_private_hosts();
	test_embedded_v4();
	test_failing_endpoint();
	test_prune();
	db_free(db);
	return tap_done();
}
