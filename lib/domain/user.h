/* SPDX-License-Identifier: MIT */
/*
 * user.h - the users (doc/api.md "Users"): their SQL, their passwords
 * (Argon2id) and the end of their logins when they are deactivated or
 * given a new password.
 *
 * Rows are as the API shows a User: id, facility_id, email,
 * display_name, role, is_active, last_login_at, created_at, updated_at,
 * never the password hash (for lib/web/dbjson), in *rows, which the
 * caller PQclear()s (NULL on failure).  Who may touch whom is the
 * caller's rule (lib/api/users.h), decided on a user_lock()ed row inside
 * the caller's transaction.  Statuses are db_query()'s unless said.
 */
#ifndef XMHUB_USER_H
#define XMHUB_USER_H

#include <stdbool.h>

#include "core/auth.h"
#include "core/db.h"

#define USER_PASSWORD_MIN 8 /* bytes; the most is AUTH_PASSWORD_MAX */
#define USER_NAME_MAX 200   /* bytes of a display_name */

/* A user to create. */
struct user_new {
	const char *email;
	const char *password;
	const char *display_name; /* NULL: the e-mail */
	enum auth_role role;
	const char *facility_id; /* NULL exactly for ROLE_SUPER_ADMIN */
};

/* A user as user_lock() found it. */
struct user_locked {
	char id[AUTH_UUID_LEN + 1];
	char facility_id[AUTH_UUID_LEN + 1]; /* "" for a super_admin */
	enum auth_role role;
	char password_hash[AUTH_HASH_MAX];
};

/* What an update leaves: display_name, password_hash NULL and is_active
 * < 0 keep theirs; role and facility_id (NULL for none) are set. */
struct user_change {
	const char *display_name;
	enum auth_role role;
	const char *facility_id;
	int is_active;		   /* 1, 0, or -1 to keep */
	const char *password_hash; /* auth_password_hash()'s */
};

/*
 * Creates an active user (the CLI's `xmhub user create` and POST):
 * hashes the password (tens of milliseconds) and inserts the row; the
 * e-mail is stored as given and must be unique whatever its case.
 * DB_CONFLICT: the e-mail is taken.  DB_FOREIGN_KEY: no such facility.
 * DB_INVALID: a password shorter than USER_PASSWORD_MIN or longer than
 * AUTH_PASSWORD_MAX bytes, role and facility_id not matching, an
 * unknown role, or an e-mail or name the schema refuses.  DB_ERROR:
 * hashing failed, or as db_query().
 */
enum db_status user_create(struct db *db, const struct user_new *u,
			   PGresult **rows);

/* The users of facility_id (NULL: everyone), oldest first. */
enum db_status user_list(struct db *db, const char *facility_id,
			 PGresult **rows);

/* User id: one row, or none when there is no such user. */
enum db_status user_get(struct db *db, const char *id, PGresult **rows);

/* Inside the caller's transaction: locks user id until its end into *u;
 * *found false when there is no such user.  DB_ERROR for a row this
 * program cannot read (an unknown role). */
enum db_status user_lock(struct db *db, const char *id, struct user_locked *u,
			 bool *found);

/* Inside the caller's transaction, on a user_lock()ed user: applies c,
 * its row as it is then in *rows; a user deactivated or given a new
 * password is logged out everywhere (its refresh tokens revoked; its
 * access tokens end with token_version, sql/008). */
enum db_status user_update(struct db *db, const char *id,
			   const struct user_change *c, PGresult **rows);

/* Inside the caller's transaction, on a user_lock()ed user: deactivates
 * it and revokes its refresh tokens (the row is kept). */
enum db_status user_deactivate_locked(struct db *db, const char *id);

/* As user_deactivate_locked() in a transaction of its own, for the user
 * whose id or e-mail (any case) is who (the CLI's `xmhub user disable`);
 * *found false when there is none. */
enum db_status user_deactivate(struct db *db, const char *who, bool *found);

/*
 * Sets the password of the user whose id or e-mail is who (the CLI's
 * `xmhub user set-password`): as an update of the password, then the
 * e-mail's login throttle forgotten, so the owner can log in at once.
 * DB_INVALID and DB_ERROR as user_create(); *found false when there is
 * no such user.
 */
enum db_status user_set_password(struct db *db, const char *who,
				 const char *password, bool *found);

#endif
