/* SPDX-License-Identifier: MIT */
/*
 * tokens-db - lib/domain/tokens.c against a real PostgreSQL: logins
 * (every way one is denied), rotation (reuse revokes the family, expiry,
 * a user deactivated in between), logout of one login and of all, and
 * the caller's profile, each checked against the rows.  Run by
 * t/e2e/tokens-db.t with a migrated database of its own in
 * XMHUB_TEST_DATABASE_URL; t/e2e/api-auth.t proves the HTTP contract.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/tokens.h"
#include "tap.h"
#include "testdb.h"

#define SECRET "tokens-db: a secret of at least 32 bytes, for tests"
#define PASSWORD "correct horse battery staple"

static struct db *db;
static const struct tokens_signer signer = {
	.secret = SECRET, .access_ttl = 900, .refresh_ttl = 3600};

/* A value of the database (t/lib/testdb.h). */
static void
one(const char *sql, const char *param, char *out, size_t len)
{
	testdb_one(db, sql, param, out, len);
}

/* Runs sql with up to one parameter; true when it succeeded. */
static bool
run(const char *sql, const char *param)
{
	PGresult *res = NULL;
	enum db_status st =
		db_query(db, &res, sql, param != NULL ? 1 : 0, &param);

	PQclear(res);
	return st == DB_OK;
}

/* A user of facility fac ("" for a super admin) with PASSWORD; its id
 * into id ("" when it could not be made). */
static void
user(const char *email, const char *fac, char id[AUTH_UUID_LEN + 1])
{
	char hash[AUTH_HASH_MAX], name[128];
	PGresult *res = NULL;
	const char *p[5] = {email, hash, name,
			    fac[0] != '\0' ? "user" : "super_admin",
			    fac[0] != '\0' ? fac : NULL};

	id[0] = '\0';
	snprintf(name, sizeof(name), "Name of %s", email);
	if (auth_password_hash(PASSWORD, hash) &&
	    db_query(db, &res,
		     "INSERT INTO users (email, password_hash, display_name, "
		     "role, facility_id) VALUES ($1, $2, $3, $4, $5::uuid) "
		     "RETURNING id",
		     5, p) == DB_OK)
		snprintf(id, AUTH_UUID_LEN + 1, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
}

/* The claims and hash of a refresh token, as lib/api/login reads them. */
static bool
claims_of(const char *refresh, struct auth_claims *c,
	  char hash[AUTH_SHA256_HEX])
{
	auth_sha256_hex(refresh, strlen(refresh), hash);
	return auth_jwt_verify(SECRET, refresh, "refresh", c) == AUTH_JWT_OK;
}

/* A count of rows: sql's first value as a number. */
static long
count(const char *sql, const char *param)
{
	char v[32];

	one(sql, param, v, sizeof(v));
	return v[0] != '\0' ? strtol(v, NULL, 10) : -1;
}

static void
test_login(const char *fac, const char *uid)
{
	struct tokens_pair pair;
	struct tokens_profile who;
	struct auth_claims c;
	enum tokens_result r;
	char hash[AUTH_SHA256_HEX], v[64];

	ok(tokens_login(db, &signer, "nobody@example.org", PASSWORD, &pair,
			&who, &r) == DB_OK &&
		   r == TOKENS_DENIED && pair.access == NULL,
	   "login: an unknown e-mail is denied, no tokens");
	ok(tokens_login(db, &signer, "ann@example.org", "wrong", &pair, &who,
			&r) == DB_OK &&
		   r == TOKENS_DENIED && pair.refresh == NULL,
	   "login: a wrong password is denied");
	ok(count("SELECT count(*) FROM refresh_tokens WHERE user_id = $1",
		 uid) == 0,
	   "login: denied ones store no token");
	ok(tokens_login(db, &signer, "ANN@Example.org", PASSWORD, &pair, &who,
			&r) == DB_OK &&
		   r == TOKENS_OK,
	   "login: the right password, the e-mail in another case");
	ok(strcmp(who.id, uid) == 0 &&
		   strcmp(who.email, "ann@example.org") == 0 &&
		   strcmp(who.display_name, "Name of ann@example.org") == 0 &&
		   who.role == ROLE_USER && strcmp(who.facility_id, fac) == 0,
	   "login: the profile is the user's");
	ok(pair.access != NULL && pair.refresh != NULL &&
		   claims_of(pair.refresh, &c, hash) && strcmp(c.sub, uid) == 0,
	   "login: a refresh token for the user");
	ok(count("SELECT count(*) FROM refresh_tokens WHERE token_hash = $1 "
		 "AND used_at IS NULL AND revoked_at IS NULL",
		 hash) == 1,
	   "login: its refresh token is stored, unused");
	one("SELECT last_login_at IS NOT NULL FROM users WHERE id = $1", uid, v,
	    sizeof(v));
	ok(strcmp(v, "t") == 0, "login: last_login_at is set");
	tokens_pair_free(&pair);
	tokens_profile_free(&who);

	run("UPDATE users SET is_active = false WHERE id = $1", uid);
	ok(tokens_login(db, &signer, "ann@example.org", PASSWORD, &pair, &who,
			&r) == DB_OK &&
		   r == TOKENS_DENIED,
	   "login: an inactive user is denied");
	run("UPDATE users SET is_active = true WHERE id = $1", uid);
	run("UPDATE facilities SET is_active = false WHERE id = $1", fac);
	ok(tokens_login(db, &signer, "ann@example.org", PASSWORD, &pair, &who,
			&r) == DB_OK &&
		   r == TOKENS_DENIED,
	   "login: a user of an inactive facility is denied");
	run("UPDATE facilities SET is_active = true WHERE id = $1", fac);
}

/* Logs ann in: the refresh token's claims and hash. */
static bool
login(struct auth_claims *c, char hash[AUTH_SHA256_HEX])
{
	struct tokens_pair pair;
	struct tokens_profile who;
	enum tokens_result r;
	bool good;

	good = tokens_login(db, &signer, "ann@example.org", PASSWORD, &pair,
			    &who, &r) == DB_OK &&
	       r == TOKENS_OK && claims_of(pair.refresh, c, hash);
	tokens_pair_free(&pair);
	tokens_profile_free(&who);
	return good;
}

static void
test_refresh(const char *uid)
{
	struct tokens_pair pair;
	struct auth_claims c, c2, other;
	enum tokens_result r;
	char hash[AUTH_SHA256_HEX], hash2[AUTH_SHA256_HEX], fam[64];

	if (!ok(login(&c, hash), "refresh: a login"))
		return;
	one("SELECT family_id FROM refresh_tokens WHERE token_hash = $1", hash,
	    fam, sizeof(fam));
	ok(tokens_refresh(db, &signer, &c, hash, &pair, &r) == DB_OK &&
		   r == TOKENS_OK && claims_of(pair.refresh, &c2, hash2) &&
		   strcmp(hash, hash2) != 0,
	   "refresh: a new pair");
	tokens_pair_free(&pair);
	ok(count("SELECT count(*) FROM refresh_tokens WHERE token_hash = $1 "
		 "AND used_at IS NOT NULL",
		 hash) == 1,
	   "refresh: the presented token is used");
	ok(count("SELECT count(*) FROM refresh_tokens WHERE family_id = $1",
		 fam) == 2,
	   "refresh: the new token is of the same family");

	other = c;
	snprintf(other.sub, sizeof(other.sub), "%s",
		 "00000000-0000-0000-0000-000000000000");
	ok(tokens_refresh(db, &signer, &other, hash2, &pair, &r) == DB_OK &&
		   r == TOKENS_DENIED,
	   "refresh: another user's claims are denied");
	ok(tokens_refresh(db, &signer, &c, hash, &pair, &r) == DB_OK &&
		   r == TOKENS_DENIED && pair.access == NULL,
	   "refresh: a used token is denied");
	ok(count("SELECT count(*) FROM refresh_tokens WHERE family_id = $1 "
		 "AND revoked_at IS NULL",
		 fam) == 0,
	   "refresh: ... and its whole family is revoked");
	ok(tokens_refresh(db, &signer, &c2, hash2, &pair, &r) == DB_OK &&
		   r == TOKENS_DENIED,
	   "refresh: the family's newest token is refused too");

	if (!login(&c, hash))
		return;
	run("UPDATE refresh_tokens SET expires_at = now() - interval '1 s' "
	    "WHERE token_hash = $1",
	    hash);
	ok(tokens_refresh(db, &signer, &c, hash, &pair, &r) == DB_OK &&
		   r == TOKENS_DENIED,
	   "refresh: an expired token is denied");
	ok(count("SELECT count(*) FROM refresh_tokens WHERE token_hash = $1 "
		 "AND used_at IS NULL AND revoked_at IS NULL",
		 hash) == 1,
	   "refresh: ... and left as it was (rolled back)");

	if (!login(&c, hash))
		return;
	run("UPDATE users SET is_active = false WHERE id = $1", uid);
	ok(tokens_refresh(db, &signer, &c, hash, &pair, &r) == DB_OK &&
		   r == TOKENS_INACTIVE,
	   "refresh: an inactive user's token is refused as such");
	ok(count("SELECT count(*) FROM refresh_tokens WHERE token_hash = $1 "
		 "AND used_at IS NULL",
		 hash) == 1,
	   "refresh: ... and not used up");
	run("UPDATE users SET is_active = true WHERE id = $1", uid);
}

static void
test_logout(const char *uid)
{
	struct auth_claims c, c2;
	char hash[AUTH_SHA256_HEX], hash2[AUTH_SHA256_HEX];
	bool found;

	if (!ok(login(&c, hash) && login(&c2, hash2), "logout: two logins"))
		return;
	ok(tokens_logout(db, &c, hash, false, &found) == DB_OK && found,
	   "logout: one login");
	ok(count("SELECT count(*) FROM refresh_tokens WHERE token_hash = $1 "
		 "AND revoked_at IS NOT NULL",
		 hash) == 1 &&
		   count("SELECT count(*) FROM refresh_tokens "
			 "WHERE token_hash = $1 AND revoked_at IS NULL",
			 hash2) == 1,
	   "logout: its token is revoked, the other login's is not");
	ok(tokens_logout(db, &c, hash, false, &found) == DB_OK && found,
	   "logout: a revoked token is accepted again");
	ok(tokens_logout(db, &c, hash, true, &found) == DB_OK && found &&
		   count("SELECT count(*) FROM refresh_tokens WHERE user_id = "
			 "$1 AND revoked_at IS NULL",
			 uid) == 0,
	   "logout: all ends every login of the user");
	memset(hash, '0', AUTH_SHA256_HEX - 1);
	ok(tokens_logout(db, &c, hash, false, &found) == DB_OK && !found,
	   "logout: an unknown token is not found");
}

int
main(void)
{
	char fac[64], uid[AUTH_UUID_LEN + 1];

	if ((db = testdb_start("tokens-db", fac, sizeof(fac))) == NULL)
		return 1;
	user("ann@example.org", fac, uid);
	if (ok(uid[0] != '\0', "a user of the facility")) {
		test_login(fac, uid);
		test_refresh(uid);
		test_logout(uid);
	}
	db_free(db);
	return tap_done();
}
