/* SPDX-License-Identifier: MIT */
/*
 * authn.h - who is calling: the bearer token of a user (JWT) or the
 * X-Api-Key of a device, checked before a route's handler runs.
 *
 * Part of the web framework, not of a handler: lib/web/app.c's dispatch
 * calls it for every ROUTE_JWT and ROUTE_API_KEY route, and the WebSocket
 * gate (lib/api/wsgate) for its upgrade.  Tokens are made and verified by
 * lib/core/auth; keys are stored as their SHA-256 only (doc/auth.md).
 *
 * Each process caches the accounts and keys it has checked and drops the
 * cache when PostgreSQL notifies a change (LISTEN xmhub_authn, before
 * each check, without blocking): a deactivation, a new password or a
 * revoked key takes effect on the next request of every process, and a
 * valid request costs no query (doc/auth.md "Account state").
 */
#ifndef XMHUB_AUTHN_H
#define XMHUB_AUTHN_H

#include <stdbool.h>

#include "core/auth.h"
#include "core/db.h"
#include "web/http.h"
#include "web/route.h"

#define AUTHN_BASIC_MAX 1024 /* bytes of a Basic Authorization header */

/* The authenticated caller. */
struct authn_who {
	enum route_auth kind; /* ROUTE_PUBLIC when nobody */
	enum auth_role role;  /* JWT: the user's role; keys: ROLE_USER */
	char user_id[AUTH_UUID_LEN + 1];     /* JWT */
	char facility_id[AUTH_UUID_LEN + 1]; /* "" for a super_admin */
	char key_id[AUTH_UUID_LEN + 1];	     /* API key */
	char key_name[256];		     /* API key */
};

/*
 * Checks the "Authorization: Bearer" access token of req with the HS256
 * key secret, then the account it names as it is now (db, through the
 * cache): 401 when the token is missing, malformed, forged or expired,
 * or when the user is deleted or inactive, its facility inactive, or its
 * role, facility or token version (a new password, a deactivation) are
 * not the token's; 403 when its role is below min_role (an enum
 * auth_role); 503 when the database is needed and unavailable.  On success
 * fills *who (kind ROUTE_JWT, role, user_id, facility_id) and returns
 * true; otherwise resp holds the answer and it returns false.
 */
bool authn_jwt(const struct http_req *req, struct db *db, const char *secret,
	       int min_role, struct authn_who *who, struct http_resp *resp);

/*
 * The e-mail and display name of user_id as the authn_jwt() that just
 * accepted its token read them (the cache: no query, as current as the
 * check itself, sql/022 notifying their changes).  The strings stay
 * valid until the next authn_* call.  False when the user is not cached
 * as active (no authn_jwt() accepted it in this request).
 */
bool authn_profile(const char *user_id, const char **email,
		   const char **display_name);

/*
 * Checks the X-Api-Key of req against db (the header only; a key in the query
 * string is not looked at): 401 when it is missing or malformed (no
 * query), 401 "invalid API key" when it is unknown, revoked, expired or
 * of an inactive facility, 503 when the database is unavailable, 403
 * when scope is not NULL and not one of the key's scopes.  On success
 * fills *who (kind ROUTE_API_KEY, role ROLE_USER, facility_id, key_id,
 * key_name), has set the key's last_used_at and returns true; otherwise
 * resp holds the answer and it returns false.
 */
bool authn_api_key(const struct http_req *req, struct db *db, const char *scope,
		   struct authn_who *who, struct http_resp *resp);

/*
 * authn_api_key() for a key outside a request (key NULL or "" when
 * absent): the status it would answer (200, 401, 403, 503, 500), *who
 * filled on 200, detail otherwise.  Costs no query while the key is
 * cached and no change was notified: a long-lived connection (the
 * WebSocket ingest) calls it before each batch.
 */
int authn_api_key_status(struct db *db, const char *key, const char *scope,
			 struct authn_who *who, char *detail, size_t dlen);

/*
 * True when authorization (an Authorization header, NULL when absent)
 * is "Basic" with user and password: password itself, or when hashed an
 * Argon2id hash of it (lib/core/auth).  Both are compared in constant
 * time, whatever the user; a header longer than AUTHN_BASIC_MAX bytes is
 * refused unread.  password NULL refuses everyone.
 */
bool authn_basic(const char *authorization, const char *user,
		 const char *password, bool hashed);

/*
 * After a request that used db: when it changed an account or a key (its
 * own notification came back), counts the change for the host's other
 * processes, so that their next check drops their caches.  Call before
 * the answer is sent.  Nothing to fail.
 */
void authn_settle(struct db *db);

/* Empties the per-process cache of users and keys (tests; a
 * notification does it by itself). */
void authn_forget(void);

#endif
