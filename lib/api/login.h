/* SPDX-License-Identifier: MIT */
/*
 * login.h - the authentication endpoints (doc/api.md "Authentication";
 * tokens: doc/auth.md "Tokens (JWT)").
 *
 *   POST /api/auth/login    email + password -> access and refresh token
 *   POST /api/auth/refresh  refresh token -> a new pair (rotation)
 *   POST /api/auth/logout   refresh token -> its login (or all) revoked
 *   GET  /api/auth/me       the caller's user
 *
 * Refresh tokens are single use.  Each is stored as the SHA-256 of its
 * text in refresh_tokens, with id = its jti and the family_id of the
 * login it descends from.  Presenting a token that was already used (or
 * revoked) revokes every token of its family: a stolen token that is
 * replayed after the owner refreshed (or the other way round) logs that
 * login out everywhere.
 */
#ifndef XMHUB_LOGIN_H
#define XMHUB_LOGIN_H

#include <stdbool.h>

#include "web/app.h"

/*
 * Reads the settings of this module once, at start-up (app_main()'s
 * init hook): XMHUB_ACCESS_TTL and XMHUB_REFRESH_TTL (seconds; defaults
 * AUTH_ACCESS_TTL and AUTH_REFRESH_TTL; 1 to 10 years).  False after
 * logging "name: reason" to stderr: the program must stop rather than
 * run with a setting it did not mean.
 */
bool login_init(const char *name);

/* The lifetimes in force (login_init()'s values; the defaults before). */
long long login_access_ttl(void);
long long login_refresh_ttl(void);

/*
 * POST /api/auth/login, JSON {email, password}.  200 {access_token,
 * refresh_token, token_type: "bearer", user: {id, email, display_name,
 * role, facility_id}}, and last_login_at set.  401 "wrong email or
 * password" for an unknown e-mail (after auth_password_dummy(), so it
 * takes as long as a wrong password), a wrong password, an inactive
 * user and a user of an inactive facility.  E-mail matching ignores
 * case.  400 for a body that is not {email: string, password: string}.
 * 429 with Retry-After (seconds) and nothing checked while the e-mail,
 * the client's address or both are throttled (lib/domain/throttle.h);
 * failed and throttled attempts are logged on stderr.
 */
void login_login(struct app_ctx *ctx);

/*
 * POST /api/auth/refresh, JSON {refresh_token}.  200 {access_token,
 * refresh_token, token_type: "bearer"}: the presented token is marked
 * used and a new one of the same family is stored, in one transaction.
 * 401 for a token that does not verify as a refresh token (an access
 * token included), is unknown, expired, already used or revoked (the
 * last two revoke its whole family first), or whose user is gone or
 * inactive (or whose facility is).  The new tokens carry the user's
 * current role and facility.
 */
void login_refresh(struct app_ctx *ctx);

/*
 * POST /api/auth/logout, JSON {refresh_token, all?: bool}.  204 after
 * revoking the token's whole login (its family), or with all true every
 * refresh token of its user (signing out everywhere); a token already
 * used or revoked is accepted (its login ends all the same).  401 for a
 * token that does not verify as a refresh token or is unknown.  Access
 * tokens stay valid until they expire.
 */
void login_logout(struct app_ctx *ctx);

/*
 * GET /api/auth/me (JWT, any role): 200 {id, email, display_name, role,
 * facility_id}; 401 when the user no longer exists or is inactive.
 */
void login_me(struct app_ctx *ctx);

#endif
