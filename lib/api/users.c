/* SPDX-License-Identifier: MIT */
/*
 * users.c - the users and their endpoints.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "domain/throttle.h"
#include "web/dbjson.h"
#include "web/scope.h"
#include "api/users.h"
#include "web/valid.h"
#include "core/log.h"

/* The API's User, from a row of users. */
#define COLS                                                                   \
	"id, facility_id, email, display_name, role, is_active, "              \
	"last_login_at, created_at, updated_at"

static const char SQL_LIST[] =
	"SELECT " COLS " FROM users "
	"WHERE $1::uuid IS NULL OR facility_id = $1::uuid "
	"ORDER BY created_at, id";

static const char SQL_GET[] = "SELECT " COLS " FROM users WHERE id = $1";

static const char SQL_INSERT[] =
	"INSERT INTO users "
	"(email, password_hash, display_name, role, facility_id) "
	"VALUES ($1, $2, $3, $4, $5) RETURNING " COLS;

/* The row a PATCH or DELETE is about, locked until the end. */
static const char SQL_LOCK[] = "SELECT id, facility_id, role, password_hash "
			       "FROM users WHERE id = $1 FOR UPDATE";

/* $2, $5, $6: NULL keeps the column. */
static const char SQL_UPDATE[] =
	"UPDATE users SET display_name = coalesce($2, display_name), "
	"role = $3, facility_id = $4, "
	"is_active = coalesce($5::boolean, is_active), "
	"password_hash = coalesce($6, password_hash) "
	"WHERE id = $1 RETURNING " COLS;

static const char SQL_DEACTIVATE[] =
	"UPDATE users SET is_active = false WHERE id = $1";

static const char SQL_REVOKE[] = "UPDATE refresh_tokens SET revoked_at = now() "
				 "WHERE user_id = $1 AND revoked_at IS NULL";

/* Hashes and inserts; on DB_OK *res holds the new row (COLS). */
static enum db_status
insert(struct db *db, const char *email, const char *password,
       const char *display_name, enum auth_role role, const char *facility_id,
       PGresult **res)
{
	char hash[AUTH_HASH_MAX];
	const char *p[5];
	size_t n = strlen(password);

	*res = NULL;
	if (n < USER_PASSWORD_MIN || n > AUTH_PASSWORD_MAX ||
	    auth_role_name(role) == NULL ||
	    (role == ROLE_SUPER_ADMIN) != (facility_id == NULL))
		return DB_INVALID;
	if (!auth_password_hash(password, hash)) {
		log_error("users: password hashing failed");
		return DB_ERROR;
	}
	p[0] = email;
	p[1] = hash;
	p[2] = display_name != NULL ? display_name : email;
	p[3] = auth_role_name(role);
	p[4] = facility_id;
	return db_query(db, res, SQL_INSERT, 5, p);
}

enum db_status
users_create(struct db *db, const char *email, const char *password,
	     const char *display_name, enum auth_role role,
	     const char *facility_id, char id_out[AUTH_UUID_LEN + 1])
{
	PGresult *res;
	enum db_status st = insert(db, email, password, display_name, role,
				   facility_id, &res);

	if (st == DB_OK) {
		snprintf(id_out, AUTH_UUID_LEN + 1, "%s",
			 PQgetvalue(res, 0, 0));
		PQclear(res);
	}
	return st;
}

/* The facility_id column (1) of row 0: NULL for a super_admin. */
static const char *
facility_of(const PGresult *res)
{
	return PQgetisnull(res, 0, 1) ? NULL : PQgetvalue(res, 0, 1);
}

static bool
is_super(const struct app_ctx *ctx)
{
	return ctx->who.role == ROLE_SUPER_ADMIN;
}

void
users_list(struct app_ctx *ctx)
{
	scope_list_rows(ctx, SQL_LIST);
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
	json_object *body;
	PGresult *res = NULL;
	const char *fac;
	enum db_status st;

	if ((body = valid_json_body(ctx->req, f, 5, v, ctx->resp)) == NULL)
		return;
	if (!new_user_facility(ctx, (enum auth_role)v[3].role, &v[4], &fac))
		goto out;
	st = insert(ctx->db, v[0].str, v[1].str, v[2].str,
		    (enum auth_role)v[3].role, fac, &res);
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
	PGresult *res;
	const char *p[1] = {ctx->params[0]};
	enum db_status st = db_query_ro(ctx->db, &res, SQL_GET, 1, p);

	if (st != DB_OK) {
		app_db_error(ctx, st);
		return;
	}
	if (PQntuples(res) != 1)
		http_error(ctx->resp, 404, "user not found");
	else if (scope_check(ctx, facility_of(res)))
		http_json(ctx->resp, 200, dbjson_row(res, 0));
	PQclear(res);
}

/*
 * Inside a transaction: locks the user of the path into *res (id,
 * facility_id, role, password_hash) and checks that the caller may
 * change it.  False with the answer set (or with *st set for a database
 * failure, the answer left to the caller).
 */
static bool
lock_target(struct app_ctx *ctx, PGresult **res, enum db_status *st)
{
	const char *p[1] = {ctx->params[0]};

	if ((*st = db_query(ctx->db, res, SQL_LOCK, 1, p)) != DB_OK)
		return false;
	if (PQntuples(*res) != 1) {
		http_error(ctx->resp, 404, "user not found");
		return false;
	}
	return scope_check(ctx, facility_of(*res));
}

/* True when the locked row is the caller. */
static bool
is_self(const struct app_ctx *ctx, const PGresult *row)
{
	return strcmp(PQgetvalue(row, 0, 0), ctx->who.user_id) == 0;
}

/*
 * The role and facility a PATCH leaves the locked user with, into
 * *role and *fac; false with the answer set when not allowed.
 */
static bool
patch_target(struct app_ctx *ctx, const PGresult *row,
	     const struct valid_value *role_v, const struct valid_value *fac_v,
	     enum auth_role *role, const char **fac)
{
	enum auth_role cur;

	if (!auth_role_from_name(PQgetvalue(row, 0, 2), &cur)) {
		http_error(ctx->resp, 500, "internal error");
		return false;
	}
	*role = role_v->present ? (enum auth_role)role_v->role : cur;
	if (*role != cur && is_self(ctx, row)) {
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
		*fac = PQgetvalue(row, 0, 1);
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
password_allowed(struct app_ctx *ctx, const PGresult *row,
		 const struct valid_value *cur)
{
	enum auth_role role;

	if (is_self(ctx, row)) {
		if (!cur->present) {
			http_error(ctx->resp, 400,
				   "changing your own password needs "
				   "current_password");
			return false;
		}
		if (!auth_password_verify(PQgetvalue(row, 0, 3), cur->str)) {
			http_error(ctx->resp, 403, "current_password is wrong");
			return false;
		}
		return true;
	}
	if (is_super(ctx))
		return true;
	if (!auth_role_from_name(PQgetvalue(row, 0, 2), &role)) {
		http_error(ctx->resp, 500, "internal error");
		return false;
	}
	if (role != ROLE_USER) {
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
	json_object *body;
	PGresult *row = NULL, *res = NULL, *rev = NULL;
	enum db_status st = DB_OK;
	enum auth_role role;
	char hash[AUTH_HASH_MAX];
	const char *p[6], *fac;
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
	if (!lock_target(ctx, &row, &st) ||
	    !patch_target(ctx, row, &v[1], &v[4], &role, &fac) ||
	    (v[3].present && !password_allowed(ctx, row, &cur)))
		goto out;
	if (v[2].present && !v[2].b && is_self(ctx, row)) {
		http_error(ctx->resp, 400, "you cannot deactivate yourself");
		goto out;
	}
	p[0] = PQgetvalue(row, 0, 0);
	p[1] = v[0].present ? v[0].str : NULL;
	p[2] = auth_role_name(role);
	p[3] = fac;
	p[4] = v[2].present ? (v[2].b ? "true" : "false") : NULL;
	p[5] = v[3].present ? hash : NULL;
	if ((st = db_query(ctx->db, &res, SQL_UPDATE, 6, p)) != DB_OK)
		goto out;
	/* Logged out everywhere when deactivated or given a new password. */
	if (((v[2].present && !v[2].b) || v[3].present) &&
	    (st = db_query(ctx->db, &rev, SQL_REVOKE, 1, p)) != DB_OK)
		goto out;
	if ((st = db_commit(ctx->db)) != DB_OK)
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
	PQclear(row);
	PQclear(res);
	PQclear(rev);
	json_object_put(body);
}

/* Inside a transaction: deactivates user id and revokes its refresh
 * tokens. */
static enum db_status
deactivate(struct db *db, const char *id)
{
	PGresult *res = NULL, *rev = NULL;
	const char *p[1] = {id};
	enum db_status st;

	if ((st = db_query(db, &res, SQL_DEACTIVATE, 1, p)) == DB_OK)
		st = db_query(db, &rev, SQL_REVOKE, 1, p);
	PQclear(res);
	PQclear(rev);
	return st;
}

/* The user named by id or e-mail (any case), locked; id and e-mail are
 * both unique, so at most one row. */
static const char SQL_FIND[] =
	"SELECT id FROM users "
	"WHERE id::text = $1 OR lower(email) = lower($1) "
	"FOR UPDATE";

static const char SQL_SET_HASH[] =
	"UPDATE users SET password_hash = $2 WHERE id = $1";

enum db_status
users_deactivate(struct db *db, const char *who, bool *found)
{
	PGresult *row = NULL;
	const char *p[1] = {who};
	enum db_status st;

	*found = false;
	if ((st = db_begin(db)) != DB_OK)
		return st;
	if ((st = db_query(db, &row, SQL_FIND, 1, p)) != DB_OK ||
	    PQntuples(row) != 1)
		goto out;
	*found = true;
	if ((st = deactivate(db, PQgetvalue(row, 0, 0))) == DB_OK)
		st = db_commit(db);
out:
	db_rollback(db); /* nothing after a COMMIT */
	PQclear(row);
	return st;
}

enum db_status
users_set_password(struct db *db, const char *who, const char *password,
		   bool *found)
{
	PGresult *row = NULL, *res = NULL, *rev = NULL;
	const char *p[2];
	char hash[AUTH_HASH_MAX];
	enum db_status st;
	bool cleared;

	*found = false;
	if (strlen(password) < USER_PASSWORD_MIN ||
	    strlen(password) > AUTH_PASSWORD_MAX)
		return DB_INVALID;
	/* The slow part before the lock. */
	if (!auth_password_hash(password, hash))
		return DB_ERROR;
	if ((st = db_begin(db)) != DB_OK)
		return st;
	p[0] = who;
	if ((st = db_query(db, &row, SQL_FIND, 1, p)) != DB_OK ||
	    PQntuples(row) != 1)
		goto out;
	*found = true;
	/* As PATCH does: the new hash bumps token_version (008's trigger),
	 * the refresh tokens are revoked; then the login throttle forgets
	 * the e-mail, so the owner can log in at once. */
	p[0] = PQgetvalue(row, 0, 0);
	p[1] = hash;
	if ((st = db_query(db, &res, SQL_SET_HASH, 2, p)) != DB_OK ||
	    (st = db_query(db, &rev, SQL_REVOKE, 1, p)) != DB_OK ||
	    (st = db_commit(db)) != DB_OK)
		goto out;
	st = throttle_clear_user(db, p[0], &cleared);
out:
	db_rollback(db); /* nothing after a COMMIT */
	PQclear(row);
	PQclear(res);
	PQclear(rev);
	return st;
}

void
users_delete(struct app_ctx *ctx)
{
	PGresult *row = NULL;
	enum db_status st;

	if ((st = db_begin(ctx->db)) != DB_OK) {
		app_db_error(ctx, st);
		return;
	}
	if (!lock_target(ctx, &row, &st))
		goto out;
	if (is_self(ctx, row)) {
		http_error(ctx->resp, 400, "you cannot delete yourself");
		goto out;
	}
	if ((st = deactivate(ctx->db, PQgetvalue(row, 0, 0))) != DB_OK ||
	    (st = db_commit(ctx->db)) != DB_OK)
		goto out;
	http_no_content(ctx->resp);
out:
	db_rollback(ctx->db); /* nothing after a COMMIT */
	if (st != DB_OK)
		app_db_error(ctx, st);
	PQclear(row);
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
