/* SPDX-License-Identifier: MIT */
/*
 * throttle.c - login throttling: the rules, and their counters through
 * the functions of sql/009_login_throttle.sql.
 */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "domain/throttle.h"
#include "core/log.h"

#define STR_(x) #x
#define STR(x) STR_(x)

/* $3..$10: the rules (throttle_attempt() passes this header's numbers). */
static const char SQL_ATTEMPT[] =
	"SELECT wait, rule, email_key FROM login_throttle_attempt($1, $2, "
	"$3::int, $4::int, $5::int, $6::int, $7::int, $8::int, $9::int, "
	"$10::int)";

static const char SQL_SUCCESS[] =
	"SELECT login_throttle_success($1, $2, $3::int)";

static const char SQL_CLEAR_USER[] =
	"SELECT login_throttle_clear(email, NULL) FROM users WHERE id = $1";

static const char SQL_CLEAR[] = "SELECT login_throttle_clear($1, $2)";

void
throttle_addr_key(const char *remote, char out[THROTTLE_ADDR_MAX])
{
	struct in6_addr a6;
	struct in_addr a4;

	if (remote != NULL && inet_pton(AF_INET, remote, &a4) == 1) {
		inet_ntop(AF_INET, &a4, out, THROTTLE_ADDR_MAX);
	} else if (remote != NULL && inet_pton(AF_INET6, remote, &a6) == 1) {
		if (IN6_IS_ADDR_V4MAPPED(&a6)) {
			memcpy(&a4, a6.s6_addr + 12, sizeof(a4));
			inet_ntop(AF_INET, &a4, out, THROTTLE_ADDR_MAX);
		} else {
			memset(a6.s6_addr + 8, 0, 8);
			inet_ntop(AF_INET6, &a6, out, THROTTLE_ADDR_MAX);
			strcat(out, "/64"); /* INET6_ADDRSTRLEN + 3 fits */
		}
	} else
		snprintf(out, THROTTLE_ADDR_MAX, "unknown");
}

enum db_status
throttle_attempt(struct db *db, const char *email, const char *remote,
		 struct throttle_attempt *a)
{
	PGresult *res = NULL;
	enum db_status st;
	const char *p[10] = {
		email,
		a->addr,
		STR(THROTTLE_PAIR_FREE),
		STR(THROTTLE_PAIR_CAP),
		STR(THROTTLE_ADDR_FREE),
		STR(THROTTLE_ADDR_CAP),
		STR(THROTTLE_ACCOUNT_FREE),
		STR(THROTTLE_ACCOUNT_CAP),
		STR(THROTTLE_WINDOW),
		STR(THROTTLE_KNOWN),
	};
	const char *rule;

	memset(a, 0, sizeof(*a));
	throttle_addr_key(remote, a->addr);
	/* Only a string that parsed as an address reaches the log. */
	snprintf(a->remote, sizeof(a->remote), "%s",
		 strcmp(a->addr, "unknown") == 0 ? "unknown" : remote);
	if ((st = db_query(db, &res, SQL_ATTEMPT, 10, p)) != DB_OK)
		goto out;
	if (PQntuples(res) != 1 || PQgetisnull(res, 0, 0) ||
	    PQgetisnull(res, 0, 2)) {
		st = DB_ERROR;
		goto out;
	}
	a->wait = atol(PQgetvalue(res, 0, 0));
	rule = PQgetvalue(res, 0, 1);
	a->rule = strcmp(rule, "account") == 0	 ? THROTTLE_ACCOUNT
		  : strcmp(rule, "address") == 0 ? THROTTLE_ADDRESS
						 : THROTTLE_PAIR;
	snprintf(a->email_key, sizeof(a->email_key), "%s",
		 PQgetvalue(res, 0, 2));
out:
	PQclear(res);
	return st;
}

enum db_status
throttle_success(struct db *db, const struct throttle_attempt *a)
{
	PGresult *res = NULL;
	const char *p[3] = {a->email_key, a->addr, STR(THROTTLE_KNOWN)};
	enum db_status st = db_query(db, &res, SQL_SUCCESS, 3, p);

	PQclear(res);
	return st;
}

enum db_status
throttle_clear_user(struct db *db, const char *user_id, bool *found)
{
	PGresult *res = NULL;
	const char *p[1] = {user_id};
	enum db_status st = db_query(db, &res, SQL_CLEAR_USER, 1, p);

	*found = st == DB_OK && PQntuples(res) == 1;
	PQclear(res);
	return st;
}

enum db_status
throttle_clear(struct db *db, const char *email, const char *remote, long *rows)
{
	PGresult *res = NULL;
	char addr[THROTTLE_ADDR_MAX];
	const char *p[2] = {email, NULL};
	enum db_status st;

	*rows = 0;
	if (remote != NULL) {
		throttle_addr_key(remote, addr);
		if (strcmp(addr, "unknown") == 0 &&
		    strcmp(remote, "unknown") != 0)
			return DB_INVALID;
		p[1] = addr;
	}
	if ((st = db_query(db, &res, SQL_CLEAR, 2, p)) == DB_OK &&
	    PQntuples(res) == 1)
		*rows = atol(PQgetvalue(res, 0, 0));
	PQclear(res);
	return st;
}

static const char *
rule_name(enum throttle_rule r)
{
	return r == THROTTLE_ACCOUNT   ? "account"
	       : r == THROTTLE_ADDRESS ? "address"
				       : "pair";
}

void
throttle_log_failure(const struct throttle_attempt *a)
{
	log_warn("auth: login failed for email#%.*s from %s", THROTTLE_LOG_KEY,
		 a->email_key, a->remote);
}

void
throttle_log_refusal(const struct throttle_attempt *a)
{
	static long tokens = THROTTLE_LOG_BURST;
	static int64_t last;
	static unsigned long left_out;
	int64_t now = clock_mono_ms() / 1000;
	char more[64] = "";

	/* A token bucket: THROTTLE_LOG_BURST lines, then one a second. */
	tokens += now - last;
	if (tokens > THROTTLE_LOG_BURST)
		tokens = THROTTLE_LOG_BURST;
	last = now;
	if (tokens < 1) {
		left_out++;
		return;
	}
	tokens--;
	if (left_out > 0)
		snprintf(more, sizeof(more),
			 " (%lu more throttled attempts not logged)", left_out);
	/* One write: the line must not interleave with other processes'. */
	log_warn("auth: login throttled for email#%.*s from %s: %s limit, "
		 "retry in %ld s%s",
		 THROTTLE_LOG_KEY, a->email_key, a->remote, rule_name(a->rule),
		 a->wait, more);
	left_out = 0;
}
