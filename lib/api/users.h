/* SPDX-License-Identifier: MIT */
/*
 * users.h - the users and their endpoints (doc/api.md "Users"; the
 * super_admin's rules: doc/api.md "Roles and facilities").  Every endpoint
 * needs a facility_admin or higher (the route table's ROLE_FACILITY_ADMIN).
 *
 *   GET    /api/v1/users       200 User[], oldest first: a facility_admin
 *                              gets its facility's users, a super_admin
 *                              everyone's (?facility_id= to filter; a
 *                              super_admin, belonging to no facility, is
 *                              then left out)
 *   POST   /api/v1/users       200 User; 400, 403, 409 e-mail exists
 *   GET    /api/v1/users/{id}  200 User; 403, 404
 *   PATCH  /api/v1/users/{id}  200 User; 400, 403, 404
 *   DELETE /api/v1/users/{id}  204: is_active false, refresh tokens
 *                              revoked, the row kept; 400, 403, 404
 *   DELETE /api/v1/users/{id}/login-throttle
 *                              (super_admin only) 204: the user's e-mail
 *                              is no longer throttled from anywhere
 *                              (lib/domain/throttle); 404
 *
 * A User is {id, facility_id, email, display_name, role, is_active,
 * last_login_at, created_at, updated_at}; never the password hash.
 *
 * Who may touch whom: a super_admin everybody; a facility_admin the
 * users of its own facility, never a super_admin (403 for those and for
 * other facilities' users), and it cannot create or promote anyone to
 * super_admin (403).  Nobody changes their own role or deactivates or
 * deletes themselves (400): the last administrator cannot lock everyone
 * out by accident.
 *
 * The SQL and the passwords are lib/domain/user's.
 */
#ifndef XMHUB_USERS_H
#define XMHUB_USERS_H

#include "domain/user.h"
#include "web/app.h"

/*
 * Handlers.  POST takes {email, password (USER_PASSWORD_MIN to
 * AUTH_PASSWORD_MAX bytes), display_name, role, facility_id?}: only a
 * super_admin names facility_id (a facility_admin may name its own;
 * another is 403); a super_admin must name it for a facility_admin or a
 * user and must not for a super_admin (400).  An unknown facility_id is
 * 400.
 *
 * PATCH takes, all optional, {display_name, role, is_active, password,
 * current_password, facility_id}.  Making a user super_admin clears its
 * facility; demoting a super_admin needs a facility_id in the same
 * request (400 without); facility_id otherwise moves a user to another
 * facility (super_admin only).  password (doc/auth.md "Who sets whose
 * password"): one's own needs current_password (400 without, 403 when
 * wrong); someone else's a super_admin sets, a facility_admin only a
 * `user`'s (403 for an administrator's).  is_active false or a new
 * password revokes the user's refresh tokens; is_active true
 * reactivates a deleted user.
 */
void users_list(struct app_ctx *ctx);
void users_post(struct app_ctx *ctx);
void users_get(struct app_ctx *ctx);
void users_patch(struct app_ctx *ctx);
void users_delete(struct app_ctx *ctx);

/* DELETE /api/v1/users/{id}/login-throttle; the route table lets only a
 * super_admin in. */
void users_unthrottle(struct app_ctx *ctx);

#endif
