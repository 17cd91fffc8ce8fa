/* SPDX-License-Identifier: MIT */
/*
 * users.c - the users and their endpoints.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "domain/throttle.h"
#include "domain/user.h"
#include "web/dbjson.h"
#include "web/scope.h"
#include "api/users.h"
#include "web/valid.h"
#include "core/log.h"

static bool
is_super(const struct app_ctx *ctx)
{
	return ctx->who.role == ROLE_SUPER_ADMIN;
}

void
users_list(struct app_ctx *ctx)
{
	scope_list_answer(ctx, user_list);
}

/*
 * The facility of a new user of role role, into *fac (NULL for none):
 * false with the answer set when the caller may not create it so.
 */
static bool
new_user_facility(struct app_ctx *ctx, enum auth_role role,
		  const struct valid_value *given, const char **fac)
{
	if (role == ROLE_SUPER_ADMIN) {
		if (!is_super(ctx)) {
			http_error(ctx->resp, 403,
				   "only a super_admin can create a "
				   "super_admin");
			return false;
		}
		if (given->present && !given->is_null) {
			http_error(ctx->resp, 400,
				   "a super_admin belongs to no facility: "
				   "leave facility_id out");
			return false;
		}
		*fac = NULL;
		return true;
	}
	/* A facility's user: the super_admin names it; others get theirs. */
	return scope_create(ctx, given, fac);
}

void
users_post(struct app_ctx *ctx)
{
	static const struct valid_field f[] = {
		{.name = "email", .type = VALID_EMAIL, .flags = VALID_REQUIRED},
		{.name = "password",
		 .type = VALID_STRING,
		 .flags = VALID_REQUIRED,
		 .min = USER_PASSWORD_MIN,
		 .max = AUTH_PASSWORD_MAX},
		{.name = "display_name",
		 .type = VALID_STRING,
		 .flags = VALID_REQUIRED,
		 .min = 1,
		 .max = USER_NAME_MAX},
		{.name = "role", .type = VALID_ROLE, .flags = VALID_REQUIRED},
		{.name = "facility_id",
		 .type = VALID_UUID,
		 .flags = VALID_NULLABLE},
	};
	struct valid_value v[5];
	struct user_new u;
	json_object *body;
	PGresult *res = NULL;
	enum db_status st;

	if ((body = valid_json_body(ctx->req, f, 5, v, ctx->resp)) == NULL)
		return;
	u.email = v[0].str;
	u.password = v[1].str;
	u.display_name = v[2].str;
	u.role = (enum auth_role)v[3].role;
	if (!new_user_facility(ctx, u.role, &v[4], &u.facility_id))
		goto out;
	st = user_create(ctx->db, &u, &res);
	switch (st) {
	case DB_OK:
		http_json(ctx->resp, 200, dbjson_row(res, 0));
		break;
	case DB_INVALID:
		http_error(ctx->resp, 400, "the user was refused as invalid");
		break;
	default:
		scope_write_error(ctx, st, "a user with this email exists");
		break;
	}
	PQclear(res);
out:
	json_object_put(body);
}

void
users_get(struct app_ctx *ctx)
{
	PGresult *res = NULL;
	enum db_status st = user_get(ctx->db, ctx->params[0], &res);

	if (scope_found(ctx, st, res, "user"))
		http_json(ctx->resp, 200, dbjson_row(res, 0));
	PQclear(res);
}

/*
 * Inside a transaction: locks the user of the path into *u and checks
 * that the caller may change it.  False with the answer set (or with
 * *st set for a database failure, the answer left to the caller).
 */
static bool
lock_target(struct app_ctx *ctx, struct user_locked *u, enum db_status *st)
{
	bool found;

	if ((*st = user_lock(ctx->db, ctx->params[0], u, &found)) != DB_OK)
		return false;
	if (!found) {
		http_error(ctx->resp, 404, "user not found");
		return false;
	}
	return scope_check(ctx,
			   u->facility_id[0] != '\0' ? u->facility_id : NULL);
}

/* True when the locked user is the caller. */
static bool
is_self(const struct app_ctx *ctx, const struct user_locked *u)
{
	return strcmp(u->id, ctx->who.user_id) == 0;
}

/*
 * The role and facility a PATCH leaves the locked user with, into
 * *role and *fac; false with the answer set when not allowed.
 */
static bool
patch_target(struct app_ctx *ctx, const struct user_locked *u,
	     const struct valid_value *role_v, const struct valid_value *fac_v,
	     enum auth_role *role, const char **fac)
{
	enum auth_role cur = u->role;

	*role = role_v->present ? (enum auth_role)role_v->role : cur;
	if (*role != cur && is_self(ctx, u)) {
		http_error(ctx->resp, 400, "you cannot change your own role");
		return false;
	}
	if (!is_super(ctx)) {
		if (*role == ROLE_SUPER_ADMIN) {
			http_error(ctx->resp, 403,
				   "only a super_admin can promote to "
				   "super_admin");
			return false;
		}
		if (fac_v->present &&
		    strcmp(fac_v->str, ctx->who.facility_id) != 0) {
			http_error(ctx->resp, 403,
				   "another facility's resource");
			return false;
		}
	}
	if (*role == ROLE_SUPER_ADMIN) {
		if (fac_v->present) {
			http_error(ctx->resp, 400,
				   "a super_admin belongs to no facility: "
				   "leave facility_id out");
			return false;
		}
		*fac = NULL;
	} else if (fac_v->present) {
		*fac = fac_v->str;
	} else if (cur == ROLE_SUPER_ADMIN) {
		http_error(ctx->resp, 400,
			   "demoting a super_admin needs a facility_id");
		return false;
	} else {
		*fac = u->facility_id;
	}
	return true;
}

/*
 * Whether the caller may set the locked user's password (doc/auth.md
 * "Who sets whose password"): its own only with the right
 * current_password (cur); a super_admin anyone else's; a facility_admin
 * only a `user`'s (lock_target checked the facility).  False with the
 * answer set.
 */
static bool
password_allowed(struct app_ctx *ctx, const struct user_locked *u,
		 const struct valid_value *cur)
{
	if (is_self(ctx, u)) {
		if (!cur->present) {
			http_error(ctx->resp, 400,
				   "changing your own password needs "
				   "current_password");
			return false;
		}
		if (!auth_password_verify(u->password_hash, cur->str)) {
			http_error(ctx->resp, 403, "current_password is wrong");
			return false;
		}
		return true;
	}
	if (is_super(ctx))
		return true;
	if (u->role != ROLE_USER) {
		http_error(ctx->resp, 403,
			   "a facility_admin sets the password of a user only, "
			   "not of another administrator");
		return false;
	}
	return true;
}

/* PATCH's current_password, checked apart from the other members: only
 * a change of one's own password reads it. */
static const struct valid_field current_password = {
	.name = "current_password",
	.type = VALID_STRING,
	.min = 1,
	.max = AUTH_PASSWORD_MAX,
};

void
users_patch(struct app_ctx *ctx)
{
	static const struct valid_field f[] = {
		{.name = "display_name",
		 .type = VALID_STRING,
		 .min = 1,
		 .max = USER_NAME_MAX},
		{.name = "role", .type = VALID_ROLE},
		{.name = "is_active", .type = VALID_BOOL},
		{.name = "password",
		 .type = VALID_STRING,
		 .min = USER_PASSWORD_MIN,
		 .max = AUTH_PASSWORD_MAX},
		{.name = "facility_id", .type = VALID_UUID},
	};
	struct valid_value v[5], cur;
	struct user_locked u;
	struct user_change c;
	json_object *body;
	PGresult *res = NULL;
	enum db_status st = DB_OK;
	char hash[AUTH_HASH_MAX];
	bool tx = false;

	if ((body = valid_json_body(ctx->req, f, 5, v, ctx->resp)) == NULL)
		return;
	if (!valid_body(body, &current_password, 1, &cur, ctx->resp))
		goto out;
	/* The slow part before the lock. */
	if (v[3].present && !auth_password_hash(v[3].str, hash)) {
		http_error(ctx->resp, 500, "internal error");
		goto out;
	}
	if ((st = db_begin(ctx->db)) != DB_OK)
		goto out;
	tx = true;
	if (!lock_target(ctx, &u, &st) ||
	    !patch_target(ctx, &u, &v[1], &v[4], &c.role, &c.facility_id) ||
	    (v[3].present && !password_allowed(ctx, &u, &cur)))
		goto out;
	if (v[2].present && !v[2].b && is_self(ctx, &u)) {
		http_error(ctx->resp, 400, "you cannot deactivate yourself");
		goto out;
	}
	c.display_name = v[0].present ? v[0].str : NULL;
	c.is_active = v[2].present ? v[2].b : -1;
	c.password_hash = v[3].present ? hash : NULL;
	if ((st = user_update(ctx->db, u.id, &c, &res)) != DB_OK ||
	    (st = db_commit(ctx->db)) != DB_OK)
		goto out;
	tx = false;
	http_json(ctx->resp, 200, dbjson_row(res, 0));
out:
	if (tx)
		db_rollback(ctx->db);
	if (st == DB_FOREIGN_KEY)
		http_error(ctx->resp, 400, "facility_id names no facility");
	else if (st != DB_OK)
		app_db_error(ctx, st);
	PQclear(res);
	json_object_put(body);
}

void
users_delete(struct app_ctx *ctx)
{
	struct user_locked u;
	enum db_status st;

	if ((st = db_begin(ctx->db)) != DB_OK) {
		app_db_error(ctx, st);
		return;
	}
	if (!lock_target(ctx, &u, &st))
		goto out;
	if (is_self(ctx, &u)) {
		http_error(ctx->resp, 400, "you cannot delete yourself");
		goto out;
	}
	if ((st = user_deactivate_locked(ctx->db, u.id)) != DB_OK ||
	    (st = db_commit(ctx->db)) != DB_OK)
		goto out;
	http_no_content(ctx->resp);
out:
	db_rollback(ctx->db); /* nothing after a COMMIT */
	if (st != DB_OK)
		app_db_error(ctx, st);
}

void
users_unthrottle(struct app_ctx *ctx)
{
	enum db_status st;
	bool found;

	if ((st = throttle_clear_user(ctx->db, ctx->params[0], &found)) !=
	    DB_OK)
		app_db_error(ctx, st);
	else if (!found)
		http_error(ctx->resp, 404, "user not found");
	else
		http_no_content(ctx->resp);
}
