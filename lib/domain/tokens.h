/* SPDX-License-Identifier: MIT */
/*
 * tokens.h - logins and their tokens (doc/auth.md "Tokens (JWT)"): a
 * password checked into an access and a refresh token, a refresh token
 * rotated, a login ended, the caller's user read.
 *
 * Refresh tokens are single use.  Each is stored as the SHA-256 of its
 * text in refresh_tokens, with id = its jti and the family_id of the
 * login it descends from.  A token presented after it was used (or
 * revoked) revokes every token of its family: a stolen token replayed
 * after the owner refreshed (or the other way round) ends that login
 * everywhere.
 *
 * Results are domain results (enum tokens_result and the db_* status);
 * lib/api/login makes them HTTP.  Login throttling is
 * lib/domain/throttle's, asked by the handler before tokens_login().
 */
#ifndef XMHUB_TOKENS_H
#define XMHUB_TOKENS_H

#include <stdbool.h>

#include "core/auth.h"
#include "core/db.h"

/* How tokens are signed: the JWT secret and the lifetimes, seconds. */
struct tokens_signer {
	const char *secret;
	long long access_ttl;
	long long refresh_ttl;
};

/* A signed pair, both malloc'd (tokens_pair_free()). */
struct tokens_pair {
	char *access;
	char *refresh;
};

/* A user as an answer names it (GET /api/auth/me, a login's "user"). */
struct tokens_profile {
	char id[AUTH_UUID_LEN + 1];
	char *email;	    /* malloc'd */
	char *display_name; /* malloc'd */
	enum auth_role role;
	char facility_id[AUTH_UUID_LEN + 1]; /* "" for none */
};

enum tokens_result {
	TOKENS_OK = 0,
	TOKENS_DENIED,	 /* login: no such e-mail, a wrong password, or an
			  * inactive user or facility (one answer for all);
			  * refresh, logout: unknown, expired, used or
			  * revoked token */
	TOKENS_INACTIVE, /* refresh: the token's user is gone or inactive,
			  * or its facility is */
	TOKENS_UNSIGNED	 /* the tokens could not be signed (logged) */
};

/*
 * Logs email in with password (e-mail matched whatever its case): on
 * TOKENS_OK *pair is a new login's tokens (its refresh token stored as a
 * new family), *who its user, and last_login_at is set.  The password is
 * checked whatever the user's state and an unknown e-mail spends the
 * time of a check (auth_password_dummy()), so that no answer's time
 * tells which part failed.  A db_* failure is returned as is; *pair and
 * *who are then empty, as after any result other than TOKENS_OK.
 */
enum db_status tokens_login(struct db *db, const struct tokens_signer *s,
			    const char *email, const char *password,
			    struct tokens_pair *pair,
			    struct tokens_profile *who, enum tokens_result *r);

/*
 * Rotates the refresh token c (verified, its text's SHA-256 in hash), in
 * one transaction: on TOKENS_OK it is marked used and *pair is a new
 * pair of the same family, carrying the user's current role and
 * facility.  A token used or revoked before revokes its family and is
 * TOKENS_DENIED, as is an unknown or expired one; TOKENS_INACTIVE for a
 * user gone or inactive.  A db_* failure rolls back and is returned as
 * is.
 */
enum db_status tokens_refresh(struct db *db, const struct tokens_signer *s,
			      const struct auth_claims *c, const char *hash,
			      struct tokens_pair *pair, enum tokens_result *r);

/*
 * Ends the login of the refresh token c (hash as above): its family
 * revoked, or every refresh token of its user with all.  A token used
 * or revoked already is accepted; *found false for an unknown one.
 */
enum db_status tokens_logout(struct db *db, const struct auth_claims *c,
			     const char *hash, bool all, bool *found);

/* Frees what a pair or a profile holds and empties it; fine when empty. */
void tokens_pair_free(struct tokens_pair *pair);
void tokens_profile_free(struct tokens_profile *who);

#endif
