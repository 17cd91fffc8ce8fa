/* SPDX-License-Identifier: MIT */
/*
 * user-db - lib/domain/user.c against a real PostgreSQL: users created
 * (each refusal: a short password, role and facility not matching, an
 * e-mail taken in another case, a facility that does not exist), read,
 * listed, locked, updated (a new password and a deactivation end the
 * user's logins), deactivated and given a password by id or e-mail, as
 * the CLI does.  Run by t/e2e/user-db.t with a migrated database of its
 * own in XMHUB_TEST_DATABASE_URL; t/e2e/api-users.t proves who may touch
 * whom through HTTP.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/user.h"
#include "tap.h"
#include "testdb.h"

#define NO_ID "00000000-0000-0000-0000-000000000000"
#define PASSWORD "a good long password"

static struct db *db;

/* Creates a user; its id into id ("" when refused), the status. */
static enum db_status
make(const char *email, const char *password, enum auth_role role,
     const char *fac, char *id, size_t len)
{
	struct user_new u = {.email = email,
			     .password = password,
			     .role = role,
			     .facility_id = fac};
	PGresult *res = NULL;
	enum db_status st = user_create(db, &u, &res);

	snprintf(id, len, "%s", testdb_col(res, 0, "id"));
	PQclear(res);
	return st;
}

/* The refresh tokens of user id not revoked. */
static long
live_tokens(const char *id)
{
	char v[32];

	testdb_one(db,
		   "SELECT count(*) FROM refresh_tokens WHERE user_id = $1 "
		   "AND revoked_at IS NULL",
		   id, v, sizeof(v));
	return strtol(v, NULL, 10);
}

/* Gives user id a refresh token. */
static void
token(const char *id)
{
	char v[64];

	testdb_one(db,
		   "INSERT INTO refresh_tokens (id, user_id, family_id, "
		   "token_hash, expires_at) SELECT gen_random_uuid(), $1, "
		   "gen_random_uuid(), encode(sha256(gen_random_uuid()::text::"
		   "bytea), 'hex'), now() + interval '1 hour' RETURNING id",
		   id, v, sizeof(v));
}

static void
test_create(const char *fac, char *ann, char *root)
{
	PGresult *res = NULL;
	char x[64];

	ok(make("ann@example.org", PASSWORD, ROLE_USER, fac, ann, 64) == DB_OK,
	   "create: a user of a facility");
	ok(user_get(db, ann, &res) == DB_OK && PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "display_name"),
			  "ann@example.org") == 0 &&
		   strcmp(testdb_col(res, 0, "role"), "user") == 0 &&
		   strcmp(testdb_col(res, 0, "is_active"), "t") == 0 &&
		   PQfnumber(res, "password_hash") < 0,
	   "create: no name is the e-mail; no hash in the row");
	PQclear(res);
	ok(make("root@example.org", PASSWORD, ROLE_SUPER_ADMIN, NULL, root,
		64) == DB_OK,
	   "create: a super_admin of no facility");
	ok(make("Ann@Example.ORG", PASSWORD, ROLE_USER, fac, x, sizeof(x)) ==
		   DB_CONFLICT,
	   "create: an e-mail taken in another case");
	ok(make("b@example.org", "short", ROLE_USER, fac, x, sizeof(x)) ==
		   DB_INVALID,
	   "create: a short password");
	ok(make("b@example.org", PASSWORD, ROLE_SUPER_ADMIN, fac, x,
		sizeof(x)) == DB_INVALID &&
		   make("b@example.org", PASSWORD, ROLE_USER, NULL, x,
			sizeof(x)) == DB_INVALID,
	   "create: role and facility not matching");
	ok(make("b@example.org", PASSWORD, ROLE_USER, NO_ID, x, sizeof(x)) ==
		   DB_FOREIGN_KEY,
	   "create: a facility that does not exist");
	ok(user_list(db, fac, &res) == DB_OK && PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "id"), ann) == 0,
	   "list: a facility's users");
	PQclear(res);
	ok(user_list(db, NULL, &res) == DB_OK && PQntuples(res) == 2,
	   "list: everyone");
	PQclear(res);
}

static void
test_update(const char *fac, const char *ann, const char *root)
{
	struct user_locked u;
	struct user_change c;
	char hash[AUTH_HASH_MAX];
	PGresult *res = NULL;
	bool found;

	db_begin(db);
	ok(user_lock(db, ann, &u, &found) == DB_OK && found &&
		   strcmp(u.id, ann) == 0 && strcmp(u.facility_id, fac) == 0 &&
		   u.role == ROLE_USER &&
		   auth_password_verify(u.password_hash, PASSWORD),
	   "lock: the user, its role, facility and hash");
	db_rollback(db);
	db_begin(db);
	ok(user_lock(db, root, &u, &found) == DB_OK && found &&
		   u.facility_id[0] == '\0' && u.role == ROLE_SUPER_ADMIN,
	   "lock: a super_admin has no facility");
	ok(user_lock(db, NO_ID, &u, &found) == DB_OK && !found,
	   "lock: none for an unknown id");
	db_rollback(db);

	token(ann);
	c = (struct user_change){.display_name = "Ann",
				 .role = ROLE_FACILITY_ADMIN,
				 .facility_id = fac,
				 .is_active = -1};
	ok(user_update(db, ann, &c, &res) == DB_OK &&
		   strcmp(testdb_col(res, 0, "display_name"), "Ann") == 0 &&
		   strcmp(testdb_col(res, 0, "role"), "facility_admin") == 0 &&
		   live_tokens(ann) == 1,
	   "update: name and role; the logins stay");
	PQclear(res);
	ok(auth_password_hash("another password", hash), "a new hash");
	c = (struct user_change){.role = ROLE_FACILITY_ADMIN,
				 .facility_id = fac,
				 .is_active = -1,
				 .password_hash = hash};
	ok(user_update(db, ann, &c, &res) == DB_OK &&
		   strcmp(testdb_col(res, 0, "display_name"), "Ann") == 0 &&
		   live_tokens(ann) == 0,
	   "update: a new password ends the logins");
	PQclear(res);
	token(ann);
	c = (struct user_change){
		.role = ROLE_USER, .facility_id = fac, .is_active = 0};
	ok(user_update(db, ann, &c, &res) == DB_OK &&
		   strcmp(testdb_col(res, 0, "is_active"), "f") == 0 &&
		   strcmp(testdb_col(res, 0, "role"), "user") == 0 &&
		   live_tokens(ann) == 0,
	   "update: deactivated, the logins end");
	PQclear(res);
	c.is_active = 1;
	ok(user_update(db, ann, &c, &res) == DB_OK &&
		   strcmp(testdb_col(res, 0, "is_active"), "t") == 0,
	   "update: active again");
	PQclear(res);
	c = (struct user_change){
		.role = ROLE_USER, .facility_id = NO_ID, .is_active = -1};
	ok(user_update(db, ann, &c, &res) == DB_FOREIGN_KEY,
	   "update: a facility that does not exist");
	PQclear(res);
}

static void
test_cli(const char *ann)
{
	PGresult *res = NULL;
	struct user_locked u;
	bool found;

	token(ann);
	ok(user_deactivate(db, "ANN@example.org", &found) == DB_OK && found &&
		   user_get(db, ann, &res) == DB_OK &&
		   strcmp(testdb_col(res, 0, "is_active"), "f") == 0 &&
		   live_tokens(ann) == 0,
	   "deactivate: by e-mail, whatever its case; logins ended");
	PQclear(res);
	ok(user_deactivate(db, "nobody@example.org", &found) == DB_OK && !found,
	   "deactivate: an unknown user is not found");
	token(ann);
	ok(user_set_password(db, ann, "the third password", &found) == DB_OK &&
		   found && live_tokens(ann) == 0,
	   "set-password: by id; logins ended");
	db_begin(db);
	ok(user_lock(db, ann, &u, &found) == DB_OK &&
		   auth_password_verify(u.password_hash, "the third password"),
	   "set-password: the new password is the user's");
	db_rollback(db);
	ok(user_set_password(db, ann, "short", &found) == DB_INVALID,
	   "set-password: a short password is refused");
	ok(user_set_password(db, "nobody@example.org", PASSWORD, &found) ==
			   DB_OK &&
		   !found,
	   "set-password: an unknown user is not found");
}

int
main(void)
{
	const char *url = getenv("XMHUB_TEST_DATABASE_URL");
	char fac[64], ann[64], root[64];

	if (url == NULL || (db = db_new(url)) == NULL) {
		printf("Bail out! no database (XMHUB_TEST_DATABASE_URL)\n");
		return 1;
	}
	testdb_one(db,
		   "INSERT INTO facilities (name, slug) VALUES ($1, $1) "
		   "RETURNING id",
		   "user-db", fac, sizeof(fac));
	if (ok(fac[0] != '\0', "a facility")) {
		test_create(fac, ann, root);
		test_update(fac, ann, root);
		test_cli(ann);
	}
	db_free(db);
	return tap_done();
}
