/* SPDX-License-Identifier: MIT */
/*
 * throttle.h - login throttling: failed logins counted in PostgreSQL
 * (sql/009_login_throttle.sql), so that the limits hold across the
 * processes and hosts of one database (doc/auth.md "Login throttling").
 *
 * Three counters per attempt, each counting failures in a window of
 * THROTTLE_WINDOW seconds from its first failure; past its free number
 * of failures, a counter makes every further attempt wait 2^(failures -
 * free) seconds after the last one, at most its cap:
 *
 *   pair     one e-mail from one address   5 free, cap 15 minutes
 *   address  every e-mail from one address 100 free, cap 15 minutes
 *   account  one e-mail from any address   20 free, cap 60 seconds, and
 *            not for an address that logged this e-mail in within
 *            THROTTLE_KNOWN seconds
 *
 * The account counter only slows a distributed guesser down: its wait
 * stays short and the user's own addresses pass it.  An attacker's
 * failures lock only its own address (pair, address): the right
 * password from another address works.  E-mails are keyed whether or
 * not a user has them, so an unknown e-mail and a wrong password are
 * throttled alike.  Results are domain results; the handler makes them
 * HTTP (lib/api/login).
 */
#ifndef XMHUB_THROTTLE_H
#define XMHUB_THROTTLE_H

#include <stdbool.h>

#include "core/db.h"

#define THROTTLE_PAIR_FREE 5
#define THROTTLE_PAIR_CAP 900 /* seconds */
#define THROTTLE_ADDR_FREE 100
#define THROTTLE_ADDR_CAP 900
#define THROTTLE_ACCOUNT_FREE 20
#define THROTTLE_ACCOUNT_CAP 60
#define THROTTLE_WINDOW 86400  /* seconds a counter's window lasts */
#define THROTTLE_KNOWN 2592000 /* seconds a successful address is known */
#define THROTTLE_KEY_LEN 64    /* hex digits of an e-mail's key */
#define THROTTLE_LOG_KEY 16    /* of them in log lines */
#define THROTTLE_LOG_BURST 10  /* refusals logged at once, then 1 a second */
#define THROTTLE_ADDR_MAX 64   /* bytes of an address key, NUL included */

/* The counter that refused an attempt. */
enum throttle_rule { THROTTLE_PAIR, THROTTLE_ADDRESS, THROTTLE_ACCOUNT };

/* One login attempt, as throttle_attempt() found it. */
struct throttle_attempt {
	long wait; /* 0: check the password; else refused, seconds to wait */
	enum throttle_rule rule;	      /* when wait > 0 */
	char email_key[THROTTLE_KEY_LEN + 1]; /* SHA-256 hex of the e-mail */
	char addr[THROTTLE_ADDR_MAX];	      /* the address key */
	char remote[THROTTLE_ADDR_MAX];	      /* REMOTE_ADDR, for logs */
};

/*
 * The key of client address remote (REMOTE_ADDR; NULL or not an address
 * is "unknown"): an IPv4 address as is, an IPv4-mapped IPv6 address as
 * its IPv4 address, another IPv6 address as its /64 ("2001:db8::/64"):
 * one host usually has a whole /64.
 */
void throttle_addr_key(const char *remote, char out[THROTTLE_ADDR_MAX]);

/*
 * One login attempt of email from remote, in one statement: fills *a.
 * a->wait == 0: the caller checks the password; the attempt already
 * counts as a failure (concurrent attempts cannot all pass one opening),
 * so the caller reports a success with throttle_success() and nothing
 * else.  a->wait > 0: refused without a password check, nothing counted.
 * A db_* failure is returned as is (*a then means nothing).
 */
enum db_status throttle_attempt(struct db *db, const char *email,
				const char *remote, struct throttle_attempt *a);

/*
 * Attempt a logged in: its pair and account counters start again from
 * zero, the pair's address becomes known, the address counter takes back
 * a's failure.  A db_* failure as is.
 */
enum db_status throttle_success(struct db *db,
				const struct throttle_attempt *a);

/*
 * Forgets the counters of the user user_id's e-mail (every address,
 * known addresses included).  *found false when there is no such user.
 */
enum db_status throttle_clear_user(struct db *db, const char *user_id,
				   bool *found);

/*
 * Forgets the counters of e-mail email (any user or none), of address
 * remote (keyed as throttle_addr_key()), or with both of that pair;
 * *rows gets the number of counters deleted.  At least one not NULL.
 * DB_INVALID when remote is neither an address nor "unknown".
 */
enum db_status throttle_clear(struct db *db, const char *email,
			      const char *remote, long *rows);

/*
 * Log lines on stderr (programs.log), with the first THROTTLE_LOG_KEY
 * digits of the e-mail's key, never the e-mail or the password: a failed
 * login, and a refused one.  Refusals cost an attacker nothing, so each
 * process logs THROTTLE_LOG_BURST of them at once, then one a second,
 * and says how many it left out.
 */
void throttle_log_failure(const struct throttle_attempt *a);
void throttle_log_refusal(const struct throttle_attempt *a);

#endif
