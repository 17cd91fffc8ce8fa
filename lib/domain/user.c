/* SPDX-License-Identifier: MIT */
/*
 * user.c - the users: their SQL, passwords and logins ended.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "domain/throttle.h"
#include "domain/user.h"

/* The API's User, from a row of users. */
#define COLS                                                                   \
	"id, facility_id, email, display_name, role, is_active, "              \
	"last_login_at, created_at, updated_at"

static const char list_sql[] =
	"SELECT " COLS " FROM users "
	"WHERE $1::uuid IS NULL OR facility_id = $1::uuid "
	"ORDER BY created_at, id";

static const char get_sql[] = "SELECT " COLS " FROM users WHERE id = $1";

static const char insert_sql[] =
	"INSERT INTO users "
	"(email, password_hash, display_name, role, facility_id) "
	"VALUES ($1, $2, $3, $4, $5) RETURNING " COLS;

static const char lock_sql[] = "SELECT id, facility_id, role, password_hash "
			       "FROM users WHERE id = $1 FOR UPDATE";

/* $2, $5, $6: NULL keeps the column. */
static const char update_sql[] =
	"UPDATE users SET display_name = coalesce($2, display_name), "
	"role = $3, facility_id = $4, "
	"is_active = coalesce($5::boolean, is_active), "
	"password_hash = coalesce($6, password_hash) "
	"WHERE id = $1 RETURNING " COLS;

static const char deactivate_sql[] =
	"UPDATE users SET is_active = false WHERE id = $1";

static const char revoke_sql[] = "UPDATE refresh_tokens SET revoked_at = now() "
				 "WHERE user_id = $1 AND revoked_at IS NULL";

/* The user named by id or e-mail (any case), locked; id and e-mail are
 * both unique, so at most one row. */
static const char find_sql[] =
	"SELECT id FROM users "
	"WHERE id::text = $1 OR lower(email) = lower($1) "
	"FOR UPDATE";

static const char set_hash_sql[] =
	"UPDATE users SET password_hash = $2 WHERE id = $1";

/* A password's length as the users' rule allows. */
static bool
password_fits(const char *password)
{
	size_t n = strlen(password);

	return n >= USER_PASSWORD_MIN && n <= AUTH_PASSWORD_MAX;
}

enum db_status
user_create(struct db *db, const struct user_new *u, PGresult **rows)
{
	char hash[AUTH_HASH_MAX];
	const char *p[5] = {u->email, hash,
			    u->display_name != NULL ? u->display_name
						    : u->email,
			    auth_role_name(u->role), u->facility_id};

	*rows = NULL;
	if (!password_fits(u->password) || p[3] == NULL ||
	    (u->role == ROLE_SUPER_ADMIN) != (u->facility_id == NULL))
		return DB_INVALID;
	if (!auth_password_hash(u->password, hash)) {
		log_error("users: password hashing failed");
		return DB_ERROR;
	}
	return db_query(db, rows, insert_sql, 5, p);
}

enum db_status
user_list(struct db *db, const char *facility_id, PGresult **rows)
{
	return db_query_ro(db, rows, list_sql, 1, &facility_id);
}

enum db_status
user_get(struct db *db, const char *id, PGresult **rows)
{
	return db_query_ro(db, rows, get_sql, 1, &id);
}

enum db_status
user_lock(struct db *db, const char *id, struct user_locked *u, bool *found)
{
	PGresult *res = NULL;
	enum db_status st;
	int fac;

	memset(u, 0, sizeof(*u));
	*found = false;
	if ((st = db_query(db, &res, lock_sql, 1, &id)) != DB_OK ||
	    PQntuples(res) != 1)
		goto out;
	fac = PQfnumber(res, "facility_id");
	snprintf(u->id, sizeof(u->id), "%s",
		 PQgetvalue(res, 0, PQfnumber(res, "id")));
	snprintf(u->facility_id, sizeof(u->facility_id), "%s",
		 PQgetisnull(res, 0, fac) ? "" : PQgetvalue(res, 0, fac));
	snprintf(u->password_hash, sizeof(u->password_hash), "%s",
		 PQgetvalue(res, 0, PQfnumber(res, "password_hash")));
	if (!auth_role_from_name(PQgetvalue(res, 0, PQfnumber(res, "role")),
				 &u->role)) {
		log_error("users: user %s has a role this program does not "
			  "know",
			  u->id);
		st = DB_ERROR;
		goto out;
	}
	*found = true;
out:
	PQclear(res);
	return st;
}

enum db_status
user_update(struct db *db, const char *id, const struct user_change *c,
	    PGresult **rows)
{
	const char *p[6] = {
		id,
		c->display_name,
		auth_role_name(c->role),
		c->facility_id,
		c->is_active < 0 ? NULL : (c->is_active ? "true" : "false"),
		c->password_hash};
	enum db_status st;

	if ((st = db_query(db, rows, update_sql, 6, p)) != DB_OK)
		return st;
	/* Logged out everywhere when deactivated or given a new password. */
	if (c->is_active == 0 || c->password_hash != NULL)
		st = db_exec(db, revoke_sql, 1, &id);
	return st;
}

enum db_status
user_deactivate_locked(struct db *db, const char *id)
{
	enum db_status st = db_exec(db, deactivate_sql, 1, &id);

	return st == DB_OK ? db_exec(db, revoke_sql, 1, &id) : st;
}

/* In a transaction of its own: finds and locks the user whose id or
 * e-mail is who into id; *found false when there is none.  The caller
 * ends the transaction. */
static enum db_status
find(struct db *db, const char *who, char id[AUTH_UUID_LEN + 1], bool *found)
{
	PGresult *row = NULL;
	enum db_status st;

	*found = false;
	if ((st = db_begin(db)) != DB_OK)
		return st;
	if ((st = db_query(db, &row, find_sql, 1, &who)) == DB_OK &&
	    PQntuples(row) == 1) {
		*found = true;
		snprintf(id, AUTH_UUID_LEN + 1, "%s", PQgetvalue(row, 0, 0));
	}
	PQclear(row);
	return st;
}

enum db_status
user_deactivate(struct db *db, const char *who, bool *found)
{
	char id[AUTH_UUID_LEN + 1];
	enum db_status st;

	if ((st = find(db, who, id, found)) == DB_OK && *found &&
	    (st = user_deactivate_locked(db, id)) == DB_OK)
		st = db_commit(db);
	db_rollback(db); /* nothing after a COMMIT */
	return st;
}

enum db_status
user_set_password(struct db *db, const char *who, const char *password,
		  bool *found)
{
	char id[AUTH_UUID_LEN + 1], hash[AUTH_HASH_MAX];
	const char *p[2] = {id, hash};
	PGresult *res = NULL;
	enum db_status st;
	bool cleared;

	*found = false;
	if (!password_fits(password))
		return DB_INVALID;
	/* The slow part before the lock. */
	if (!auth_password_hash(password, hash))
		return DB_ERROR;
	if ((st = find(db, who, id, found)) != DB_OK || !*found)
		goto out;
	/* As an update does: the new hash bumps token_version (008's
	 * trigger), the refresh tokens are revoked; then the login
	 * throttle forgets the e-mail. */
	if ((st = db_query(db, &res, set_hash_sql, 2, p)) != DB_OK ||
	    (st = db_exec(db, revoke_sql, 1, p)) != DB_OK ||
	    (st = db_commit(db)) != DB_OK)
		goto out;
	st = throttle_clear_user(db, id, &cleared);
out:
	db_rollback(db); /* nothing after a COMMIT */
	PQclear(res);
	return st;
}
