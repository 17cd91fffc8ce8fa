/* SPDX-License-Identifier: MIT */
/*
 * alarmrun.c - silence rules and webhook deliveries of the alarm runner.
 */
#define _GNU_SOURCE /* posix_spawn_file_actions_addclosefrom_np */
#include "config.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "codec/buf.h"
#include "core/allow.h"
#include "core/log.h"
#include "domain/alarmmail.h"
#include "domain/alarmrun.h"

/* Silent devices without an open alarm of the rule raise one; the value
 * is the minutes since their last data. */
static const char silence_sql[] =
	"SELECT count(*) FILTER (WHERE a.raised) FROM "
	"(SELECT r.id AS rule, d.id AS device, "
	"floor(extract(epoch FROM now() - d.last_seen_at) / 60)::float8 AS m "
	"FROM alarm_rules r JOIN devices d ON d.facility_id = r.facility_id "
	"AND (r.device_id IS NULL OR d.id = r.device_id) "
	"WHERE r.kind = 'silence' AND r.enabled AND d.is_active "
	"AND d.last_seen_at < now() - make_interval(mins => r.silence_minutes) "
	"AND NOT EXISTS (SELECT 1 FROM alarms o WHERE o.rule_id = r.id "
	"AND o.device_id = d.id AND o.state <> 'cleared')) s, "
	"LATERAL alarm_raise(s.rule, s.device, s.m, "
	"format('no data for %s minutes', s.m)) a";

/* The open silence alarms of devices that sent since they were raised. */
static const char unsilence_sql[] =
	"WITH c AS (UPDATE alarms a SET state = 'cleared', cleared_at = now() "
	"FROM alarm_rules r, devices d WHERE r.id = a.rule_id "
	"AND r.kind = 'silence' AND d.id = a.device_id "
	"AND a.state <> 'cleared' AND d.last_seen_at > a.first_seen_at "
	"RETURNING a.id), "
	"h AS (INSERT INTO alarm_history (alarm_id, state) "
	"SELECT id, 'cleared' FROM c) "
	"SELECT count(*) FROM c";

/* Facilities of storage rules at or over the rule's percent of their
 * quota, without an open alarm of the rule, raise one (no device); the
 * value is the percent used. */
static const char storage_sql[] =
	"SELECT count(*) FILTER (WHERE a.raised) FROM "
	"(SELECT r.id AS rule, 100.0 * (u.upload_bytes + u.sample_bytes) / "
	"u.quota_bytes AS p FROM alarm_rules r "
	"JOIN facility_usage u ON u.facility_id = r.facility_id "
	"WHERE r.kind = 'storage' AND r.enabled AND u.quota_bytes > 0 "
	"AND 100.0 * (u.upload_bytes + u.sample_bytes) / u.quota_bytes >= "
	"r.storage_percent "
	"AND NOT EXISTS (SELECT 1 FROM alarms o WHERE o.rule_id = r.id "
	"AND o.state <> 'cleared')) s, "
	"LATERAL alarm_raise(s.rule, NULL, s.p::float8, "
	"format('storage at %s%% of the quota', round(s.p))) a";

/* Open storage alarms of facilities back under the rule's percent (or
 * without a quota any more). */
static const char unstorage_sql[] =
	"WITH c AS (UPDATE alarms a SET state = 'cleared', cleared_at = now() "
	"FROM alarm_rules r, facility_usage u WHERE r.id = a.rule_id "
	"AND r.kind = 'storage' AND u.facility_id = r.facility_id "
	"AND a.state <> 'cleared' AND (u.quota_bytes IS NULL OR "
	"u.quota_bytes = 0 OR 100.0 * (u.upload_bytes + u.sample_bytes) / "
	"u.quota_bytes < r.storage_percent) RETURNING a.id), "
	"h AS (INSERT INTO alarm_history (alarm_id, state) "
	"SELECT id, 'cleared' FROM c) "
	"SELECT count(*) FROM c";

/* Devices with sessions ended in error since their session_error rule
 * was made and since its last alarm on them, without an open one, raise
 * it; the value is how many. */
static const char session_error_sql[] =
	"SELECT count(*) FILTER (WHERE a.raised) FROM "
	"(SELECT r.id AS rule, s.device_id AS device, count(*)::float8 AS n "
	"FROM alarm_rules r JOIN ingest_sessions s ON s.facility_id = "
	"r.facility_id AND (r.device_id IS NULL OR s.device_id = r.device_id) "
	"WHERE r.kind = 'session_error' AND r.enabled AND s.status = 'error' "
	"AND s.errored_at > r.created_at AND s.errored_at > coalesce((SELECT "
	"max(o.first_seen_at) FROM alarms o WHERE o.rule_id = r.id "
	"AND o.device_id = s.device_id), '-infinity') "
	"AND NOT EXISTS (SELECT 1 FROM alarms o WHERE o.rule_id = r.id "
	"AND o.device_id = s.device_id AND o.state <> 'cleared') "
	"GROUP BY r.id, s.device_id) x, "
	"LATERAL alarm_raise(x.rule, x.device, x.n, "
	"format('%s ingest session(s) ended in error', x.n)) a";

/* The same for transcode jobs failed (for good) since: no device. */
static const char job_failed_sql[] =
	"SELECT count(*) FILTER (WHERE a.raised) FROM "
	"(SELECT r.id AS rule, count(*)::float8 AS n "
	"FROM alarm_rules r JOIN transcode_jobs j ON j.facility_id = "
	"r.facility_id WHERE r.kind = 'job_failed' AND r.enabled "
	"AND j.status = 'failed' AND j.completed_at > r.created_at "
	"AND j.completed_at > coalesce((SELECT max(o.first_seen_at) "
	"FROM alarms o WHERE o.rule_id = r.id), '-infinity') "
	"AND NOT EXISTS (SELECT 1 FROM alarms o WHERE o.rule_id = r.id "
	"AND o.state <> 'cleared') GROUP BY r.id) x, "
	"LATERAL alarm_raise(x.rule, NULL, x.n, "
	"format('%s transcode job(s) failed', x.n)) a";

/*
 * The kinds of rules the passes check that are there, each with whether
 * one of them is enabled: its raising runs only then, its clearing
 * whenever one is there (a paused rule's open alarms still clear).  An
 * index scan of those rules alone (sql/025), so that a pass of a stack
 * without them costs this one statement, not their seven.
 */
static const char kinds_sql[] =
	"SELECT kind, bool_or(enabled) FROM alarm_rules "
	"WHERE kind <> 'threshold' GROUP BY kind";

/* The statements of each kind kinds_sql names. */
static const struct {
	const char *kind, *raise_sql, *clear_sql;
} kinds[] = {
	{"silence", silence_sql, unsilence_sql},
	{"storage", storage_sql, unstorage_sql},
	{"session_error", session_error_sql, NULL},
	{"job_failed", job_failed_sql, NULL},
};

/* Runs sql, a count, and adds it to *n (sql NULL: nothing). */
static enum db_status
count_into(struct db *db, const char *sql, unsigned long *n)
{
	PGresult *res = NULL;
	enum db_status st;

	if (sql == NULL)
		return DB_OK;
	if ((st = db_query(db, &res, sql, 0, NULL)) == DB_OK)
		*n += strtoul(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return st;
}

enum db_status
alarmrun_rules(struct db *db, unsigned long *raised, unsigned long *cleared)
{
	PGresult *res = NULL;
	enum db_status st;

	*raised = *cleared = 0;
	if ((st = db_query(db, &res, kinds_sql, 0, NULL)) != DB_OK)
		goto out;
	for (int i = 0; i < PQntuples(res) && st == DB_OK; i++)
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			bool enabled;

			if (strcmp(PQgetvalue(res, i, 0), kinds[k].kind) != 0)
				continue;
			enabled = PQgetvalue(res, i, 1)[0] == 't';
			if ((st = count_into(
				     db, enabled ? kinds[k].raise_sql : NULL,
				     raised)) == DB_OK)
				st = count_into(db, kinds[k].clear_sql,
						cleared);
		}
out:
	PQclear(res);
	return st;
}

bool
alarmrun_sign(const char *secret, long long ts, const char *body, size_t len,
	      char *out)
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	struct buf msg;
	bool ok;

	/* The one-shot HMAC(): HMAC_CTX is deprecated in OpenSSL 3. */
	buf_init(&msg, 0);
	buf_printf(&msg, "%lld.", ts);
	buf_append(&msg, body, len);
	ok = !msg.failed &&
	     HMAC(EVP_sha256(), secret, (int)strlen(secret), msg.p, msg.len,
		  mac, &n) != NULL &&
	     n == 32;
	buf_free(&msg);
	if (!ok)
		return false;
	memcpy(out, "sha256=", 7);
	for (unsigned i = 0; i < n; i++)
		snprintf(out + 7 + 2 * i, 3, "%02x", mac[i]);
	return true;
}

/*
 * Claims a due pending delivery: the fewest attempts first, then the
 * oldest; a first attempt only to an endpoint none of whose deliveries
 * waits for a retry (sql/024).  The claim is a lease, committed at once:
 * next_at moves $1 seconds on (longer than a POST may take), so that no
 * transaction, connection or row lock is held while the event is posted,
 * and a runner that dies meanwhile leaves the delivery to be posted again
 * once the lease is over.  One runner posts every facility's deliveries
 * one after another: an endpoint that does not answer then holds it
 * XMHUB_ALARM_TIMEOUT for its retries, on their backoff, and one new
 * event at a time, not for every event at once ahead of everyone
 * else's.  A disabled endpoint's deliveries wait, pending, until it is
 * enabled again (doc/alarms.md "Webhooks").  For an e-mail it also reads
 * what the event lacks for a person (lib/domain/alarmmail.h): the names
 * of the facility and device and the rule's limits, by their keys, in
 * the same statement.
 */
static const char claim_sql[] =
	"WITH c AS (SELECT d.id, d.event_id, d.endpoint_id "
	"FROM alarm_deliveries d "
	"JOIN webhook_endpoints w ON w.id = d.endpoint_id "
	"WHERE d.state = 'pending' AND d.next_at <= now() AND w.enabled "
	"AND (d.attempts > 0 OR NOT EXISTS (SELECT 1 FROM alarm_deliveries f "
	"WHERE f.endpoint_id = d.endpoint_id AND f.state = 'pending' "
	"AND f.attempts > 0 AND f.next_at > now())) "
	"ORDER BY d.attempts, d.next_at LIMIT 1 FOR UPDATE OF d SKIP LOCKED) "
	"UPDATE alarm_deliveries d "
	"SET next_at = now() + make_interval(secs => $1::float8) "
	"FROM c JOIN alarm_events e ON e.id = c.event_id "
	"JOIN webhook_endpoints w ON w.id = c.endpoint_id "
	"JOIN facilities f ON f.id = e.facility_id "
	"LEFT JOIN alarms a ON a.id = e.alarm_id "
	"LEFT JOIN alarm_rules r ON r.id = a.rule_id "
	"LEFT JOIN devices v ON v.id = a.device_id "
	"WHERE d.id = c.id "
	"RETURNING d.id, d.event_id, d.attempts, w.url, w.secret, "
	"e.payload::text, CASE WHEN w.url LIKE 'mailto:%' THEN "
	"jsonb_build_object('facility', f.name, 'device', v.name, 'rule', "
	"jsonb_build_object('stream_name', r.stream_name, 'op', r.op, "
	"'lo', r.lo, 'hi', r.hi, 'for_samples', r.for_samples, "
	"'for_seconds', r.for_seconds, 'silence_minutes', r.silence_minutes, "
	"'storage_percent', r.storage_percent))::text END";

/* Seconds a claim's lease outlasts the POST's XMHUB_ALARM_TIMEOUT. */
#define LEASE_MARGIN 5

/* $2 status (NULL: none), $3 error (NULL: delivered), $4 the retry
 * base, $5 the most attempts. */
static const char done_sql[] =
	"UPDATE alarm_deliveries SET attempts = attempts + 1, "
	"last_status = $2::integer, last_error = $3::text, "
	"state = CASE WHEN $3::text IS NULL THEN 'delivered' "
	"WHEN attempts + 1 >= $5::integer THEN 'dead' ELSE 'pending' END, "
	"delivered_at = CASE WHEN $3::text IS NULL THEN now() END, "
	"next_at = now() + make_interval(secs => least(3600, $4::float8 * "
	"power(2, attempts))) "
	"WHERE id = $1::uuid";

/* The oldest cleared alarms past their days, a batch at a time so that
 * a backlog is never one long transaction. */
static const char prune_sql[] =
	"WITH d AS (DELETE FROM alarms WHERE id IN (SELECT id FROM alarms "
	"WHERE state = 'cleared' AND cleared_at < now() - "
	"make_interval(days => $1::integer) ORDER BY cleared_at LIMIT "
	"$2::integer) RETURNING 1) SELECT count(*) FROM d";

/* What a POST came to: the HTTP status (0: none) and, unless 2xx, why. */
struct outcome {
	long status;
	char error[256];
};

/* Discards an answer's body: only the status counts. */
static size_t
discard(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

/*
 * Where a webhook may not go unless XMHUB_ALARM_PRIVATE_HOSTS: this host,
 * private and shared (CGNAT) networks, link-local, benchmarking,
 * multicast and reserved addresses (RFC 6890), in both families; an
 * IPv4-mapped IPv6 address is matched as IPv4 (core/allow).  A facility
 * admin names the URL: without this, the runner would POST into the
 * networks it sits in.
 */
static const char nonpublic[] =
	"0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 "
	"172.16.0.0/12 192.0.0.0/24 192.168.0.0/16 198.18.0.0/15 "
	"224.0.0.0/3 ::/128 ::1/128 fc00::/7 fe80::/10 ff00::/8";

/* What open_public() checks against, and why it refused. */
struct guard {
	struct allow refused;
	char why[128];
};

/*
 * True when the IPv6 address a stands for an IPv4 address, with that
 * address as text in v4: NAT64's well-known prefix (64:ff9b::/96, RFC
 * 6052: a NAT64 gateway connects to it) and 6to4 (2002::/16, RFC 3056).
 * Mapped addresses (::ffff:0:0/96) are lib/core/allow's own.
 */
static bool
embedded_v4(const struct in6_addr *a, char v4[INET_ADDRSTRLEN])
{
	static const uint8_t nat64[12] = {0x00, 0x64, 0xff, 0x9b};
	const uint8_t *b = a->s6_addr;
	const uint8_t *at = NULL;

	if (memcmp(b, nat64, 12) == 0)
		at = b + 12;
	else if (b[0] == 0x20 && b[1] == 0x02)
		at = b + 2;
	return at != NULL &&
	       inet_ntop(AF_INET, at, v4, INET_ADDRSTRLEN) != NULL;
}

/*
 * libcurl's socket opener: refuses an address of g->refused, or an IPv6
 * one that carries such an IPv4 address.  It runs after the name was
 * resolved, for each address tried, so a name that resolves to a private
 * address is refused as the address is.
 */
static curl_socket_t
open_public(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct guard *g = arg;
	char host[INET6_ADDRSTRLEN] = "", v4[INET_ADDRSTRLEN];
	const void *in = NULL;

	if (a->family == AF_INET)
		in = &((const struct sockaddr_in *)(const void *)&a->addr)
			      ->sin_addr;
	else if (a->family == AF_INET6)
		in = &((const struct sockaddr_in6 *)(const void *)&a->addr)
			      ->sin6_addr;
	if (purpose != CURLSOCKTYPE_IPCXN || in == NULL ||
	    inet_ntop(a->family, in, host, sizeof(host)) == NULL ||
	    allow_match(&g->refused, host) ||
	    (a->family == AF_INET6 && embedded_v4(in, v4) &&
	     allow_match(&g->refused, v4))) {
		snprintf(g->why, sizeof(g->why),
			 "the address %s is not public "
			 "(XMHUB_ALARM_PRIVATE_HOSTS)",
			 host[0] != '\0' ? host : "(not IP)");
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* POSTs body to url, signed with secret (alarmrun.h), into *o. */
static void
post(const struct alarmrun_conf *c, const char *url, const char *secret,
     const char *event_id, const char *delivery_id, const char *body,
     struct outcome *o)
{
	char sig[ALARMRUN_SIG_LEN + 1], line[160];
	struct guard g = {.why = ""};
	struct curl_slist *h = NULL;
	long long ts = (long long)time(NULL);
	CURL *curl = NULL;
	CURLcode rc;

	o->status = 0;
	o->error[0] = '\0';
	if (!alarmrun_sign(secret, ts, body, strlen(body), sig)) {
		snprintf(o->error, sizeof(o->error), "signing failed");
		return;
	}
	if (!c->private_hosts &&
	    !allow_parse(&g.refused, nonpublic, o->error, sizeof(o->error)))
		return;
	if ((curl = curl_easy_init()) == NULL) {
		snprintf(o->error, sizeof(o->error), "out of memory");
		return;
	}
	h = curl_slist_append(h, "Content-Type: application/json");
	snprintf(line, sizeof(line), "Idempotency-Key: %s", event_id);
	h = curl_slist_append(h, line);
	h = curl_slist_append(h, "X-Xmhub-Event: alarm.raised");
	snprintf(line, sizeof(line), "X-Xmhub-Delivery: %s", delivery_id);
	h = curl_slist_append(h, line);
	snprintf(line, sizeof(line), "X-Xmhub-Timestamp: %lld", ts);
	h = curl_slist_append(h, line);
	snprintf(line, sizeof(line), "X-Xmhub-Signature: %s", sig);
	h = curl_slist_append(h, line);
	/* No Expect: 100-continue round trip for a small body. */
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT, (long)c->timeout);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "xmhub-alarm/" VERSION);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
	if (!c->private_hosts) {
		curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, open_public);
		curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, &g);
	}
	if (h == NULL)
		snprintf(o->error, sizeof(o->error), "out of memory");
	else if ((rc = curl_easy_perform(curl)) != CURLE_OK)
		snprintf(o->error, sizeof(o->error), "%s",
			 g.why[0] != '\0' ? g.why : curl_easy_strerror(rc));
	else {
		curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &o->status);
		if (o->status < 200 || o->status > 299)
			snprintf(o->error, sizeof(o->error), "HTTP status %ld",
				 o->status);
	}
	curl_slist_free_all(h);
	curl_easy_cleanup(curl);
}

/* Writes the len bytes at p to fd whole; false on an error. */
static bool
write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

/* The host's name for Message-ID, when it is a plain domain name;
 * "localhost" otherwise. */
static void
host_domain(char *out, size_t len)
{
	out[len - 1] = '\0'; /* gethostname() may leave a long one open */
	if (gethostname(out, len - 1) != 0 || out[0] == '\0' ||
	    out[strspn(out, "abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")] != '\0')
		snprintf(out, len, "localhost");
}

/* Mails the event of the claimed row res (claim_sql) to the address of
 * its url (mailto:, checked by the schema) through c->sendmail, spawned
 * without a shell, into *o. */
static void
mail(const struct alarmrun_conf *c, const PGresult *res, struct outcome *o)
{
	/* Nothing of the runner's environment (the env file's secrets). */
	static char *const env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
	const char *to = PQgetvalue(res, 0, 3) + strlen("mailto:");
	char domain[256];
	struct alarmmail am = {.to = to,
			       .event = PQgetvalue(res, 0, 5),
			       .context = PQgetvalue(res, 0, 6),
			       .id = PQgetvalue(res, 0, 0),
			       .domain = domain,
			       .now = time(NULL)};
	char *argv[] = {(char *)"sendmail", (char *)"-i", (char *)"--",
			(char *)to, NULL};
	posix_spawn_file_actions_t fa;
	struct buf m;
	int fds[2] = {-1, -1}, status = 0, rc;
	pid_t pid = -1;

	o->status = 0;
	o->error[0] = '\0';
	if (c->sendmail == NULL) {
		snprintf(o->error, sizeof(o->error),
			 "e-mail is off (XMHUB_ALARM_SENDMAIL is not set)");
		return;
	}
	host_domain(domain, sizeof(domain));
	buf_init(&m, 0);
	if (!alarmmail_format(&am, &m) || pipe(fds) != 0) {
		snprintf(o->error, sizeof(o->error),
			 "out of resources, or an event not JSON");
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	/* Nor its other descriptors: the PostgreSQL connection among them. */
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	rc = posix_spawn(&pid, c->sendmail, &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[0]);
	if (rc != 0) {
		snprintf(o->error, sizeof(o->error), "%s: %s", c->sendmail,
			 strerror(rc));
		goto out;
	}
	if (!write_all(fds[1], (const char *)m.p, m.len))
		snprintf(o->error, sizeof(o->error), "%s: %s", c->sendmail,
			 strerror(errno));
	close(fds[1]);
	fds[1] = -1;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (o->error[0] == '\0' &&
	    (!WIFEXITED(status) || WEXITSTATUS(status) != 0))
		snprintf(o->error, sizeof(o->error), "%s exited with %d",
			 c->sendmail,
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
out:
	if (fds[1] >= 0)
		close(fds[1]);
	buf_free(&m);
}

enum db_status
alarmrun_prune(struct db *db, long long days, unsigned long *deleted)
{
	char d[24], n[24];
	const char *p[2] = {d, n};
	PGresult *res = NULL;
	enum db_status st;

	*deleted = 0;
	snprintf(d, sizeof(d), "%lld", days);
	snprintf(n, sizeof(n), "%d", ALARMRUN_PRUNE_BATCH);
	if ((st = db_query(db, &res, prune_sql, 2, p)) == DB_OK)
		*deleted = strtoul(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return st;
}

enum alarmrun_step
alarmrun_deliver(struct db *db, const struct alarmrun_conf *c)
{
	char status[24], base[24], max[24], lease[24];
	const char *params[5] = {NULL, NULL, NULL, base, max};
	const char *claim = lease;
	PGresult *res = NULL, *up = NULL;
	struct outcome o;
	enum alarmrun_step step = ALARMRUN_DB;

	snprintf(lease, sizeof(lease), "%lld", c->timeout + LEASE_MARGIN);
	if (db_query(db, &res, claim_sql, 1, &claim) != DB_OK)
		goto out;
	if (PQntuples(res) == 0) {
		step = ALARMRUN_IDLE;
		goto out;
	}
	if (strncmp(PQgetvalue(res, 0, 3), "mailto:", 7) == 0)
		mail(c, res, &o);
	else
		post(c, PQgetvalue(res, 0, 3), PQgetvalue(res, 0, 4),
		     PQgetvalue(res, 0, 1), PQgetvalue(res, 0, 0),
		     PQgetvalue(res, 0, 5), &o);
	snprintf(status, sizeof(status), "%ld", o.status);
	snprintf(base, sizeof(base), "%lld", c->retry_base);
	snprintf(max, sizeof(max), "%lld", c->max_attempts);
	params[0] = PQgetvalue(res, 0, 0);
	params[1] = o.status != 0 ? status : NULL;
	params[2] = o.error[0] != '\0' ? o.error : NULL;
	if (db_query(db, &up, done_sql, 5, params) != DB_OK)
		goto out;
	if (o.error[0] != '\0')
		log_error("delivery %s (attempt %d): %s", params[0],
			  atoi(PQgetvalue(res, 0, 2)) + 1, o.error);
	step = o.error[0] == '\0' ? ALARMRUN_DELIVERED : ALARMRUN_FAILED;
out:
	PQclear(up);
	PQclear(res);
	return step;
}
