/* SPDX-License-Identifier: MIT */
/*
 * tokens.c - logins and their tokens: the SQL of refresh_tokens and of
 * the users a token names.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "domain/tokens.h"

/* The user to log in, whatever the case of the e-mail; active means
 * the user and its facility (if any) are. */
static const char find_sql[] =
	"SELECT u.id, u.password_hash, u.role, u.facility_id, "
	"u.is_active AND coalesce(f.is_active, true) AS active, "
	"u.token_version "
	"FROM users u LEFT JOIN facilities f ON f.id = u.facility_id "
	"WHERE lower(u.email) = lower($1)";

/* Records the login and stores its first refresh token, in one
 * statement; no row when the user was deactivated in between. */
static const char login_sql[] =
	"WITH u AS (UPDATE users SET last_login_at = now() "
	"WHERE id = $1 AND is_active "
	"RETURNING id, email, display_name, role, facility_id), "
	"t AS (INSERT INTO refresh_tokens "
	"(id, user_id, family_id, token_hash, expires_at) "
	"SELECT $2::uuid, u.id, $3::uuid, $4, to_timestamp($5::bigint) "
	"FROM u) "
	"SELECT id, email, display_name, role, facility_id FROM u";

/* The presented token, locked until the rotation commits. */
static const char token_sql[] =
	"SELECT id, user_id, family_id, "
	"used_at IS NOT NULL OR revoked_at IS NOT NULL AS spent, "
	"expires_at <= now() AS expired "
	"FROM refresh_tokens WHERE token_hash = $1 FOR UPDATE";

static const char revoke_family_sql[] =
	"UPDATE refresh_tokens SET revoked_at = now() "
	"WHERE family_id = $1 AND revoked_at IS NULL";

static const char user_state_sql[] =
	"SELECT u.role, u.facility_id, "
	"u.is_active AND coalesce(f.is_active, true) AS active, "
	"u.token_version "
	"FROM users u LEFT JOIN facilities f ON f.id = u.facility_id "
	"WHERE u.id = $1";

static const char use_sql[] =
	"UPDATE refresh_tokens SET used_at = now() WHERE id = $1";

static const char store_sql[] =
	"INSERT INTO refresh_tokens "
	"(id, user_id, family_id, token_hash, expires_at) "
	"VALUES ($1, $2, $3, $4, to_timestamp($5::bigint))";

/* Revokes the family of the token (the login it belongs to), or every
 * token of its user with $2; no row when the token is unknown. */
static const char logout_sql[] =
	"WITH t AS (SELECT user_id, family_id FROM refresh_tokens "
	"WHERE token_hash = $1 AND user_id = $3::uuid), "
	"r AS (UPDATE refresh_tokens k SET revoked_at = now() FROM t "
	"WHERE k.revoked_at IS NULL AND CASE WHEN $2::boolean "
	"THEN k.user_id = t.user_id ELSE k.family_id = t.family_id END) "
	"SELECT 1 FROM t";

/* Column name of res's first row; NULL when SQL NULL.  Every statement
 * above names the columns it reads, so a missing one is a bug here. */
static const char *
val(const PGresult *res, const char *name)
{
	int c = PQfnumber(res, name);

	return c < 0 || PQgetisnull(res, 0, c) ? NULL : PQgetvalue(res, 0, c);
}

/* As val(), "" for SQL NULL: for the columns that are never NULL. */
static const char *
text(const PGresult *res, const char *name)
{
	const char *v = val(res, name);

	return v != NULL ? v : "";
}

/* A boolean column: true only for a present "t". */
static bool
is_true(const PGresult *res, const char *name)
{
	const char *v = val(res, name);

	return v != NULL && v[0] == 't';
}

void
tokens_pair_free(struct tokens_pair *pair)
{
	free(pair->access);
	free(pair->refresh);
	pair->access = pair->refresh = NULL;
}

void
tokens_profile_free(struct tokens_profile *who)
{
	free(who->email);
	free(who->display_name);
	memset(who, 0, sizeof(*who));
}

/* The profile in res's first row (login_sql's columns); false
 * with *who empty when memory ran out or the role is not one we know. */
static bool
profile_of(const PGresult *res, struct tokens_profile *who)
{
	const char *fac = val(res, "facility_id");

	memset(who, 0, sizeof(*who));
	snprintf(who->id, sizeof(who->id), "%s", text(res, "id"));
	snprintf(who->facility_id, sizeof(who->facility_id), "%s",
		 fac != NULL ? fac : "");
	who->email = strdup(text(res, "email"));
	who->display_name = strdup(text(res, "display_name"));
	if (who->email == NULL || who->display_name == NULL ||
	    !auth_role_from_name(text(res, "role"), &who->role)) {
		log_error("tokens: the user %s could not be read", who->id);
		tokens_profile_free(who);
		return false;
	}
	return true;
}

/*
 * Signs an access and a refresh token for user_id (role, facility_id:
 * NULL for none, ver its token_version) into *pair; *rc holds the
 * refresh token's claims (jti, exp) and hash its SHA-256.  False (logged)
 * with *pair empty when signing fails.
 */
static bool
issue_pair(const struct tokens_signer *s, const char *user_id,
	   enum auth_role role, const char *facility_id, const char *ver,
	   struct tokens_pair *pair, struct auth_claims *rc,
	   char hash[AUTH_SHA256_HEX])
{
	struct auth_claims ac;

	memset(&ac, 0, sizeof(ac));
	snprintf(ac.sub, sizeof(ac.sub), "%s", user_id);
	ac.role = role;
	ac.ver = strtoll(ver, NULL, 10);
	snprintf(ac.facility_id, sizeof(ac.facility_id), "%s",
		 facility_id != NULL ? facility_id : "");
	*rc = ac;
	snprintf(ac.type, sizeof(ac.type), "access");
	snprintf(rc->type, sizeof(rc->type), "refresh");
	if (!auth_jwt_issue(s->secret, &ac, s->access_ttl, &pair->access) ||
	    !auth_jwt_issue(s->secret, rc, s->refresh_ttl, &pair->refresh)) {
		tokens_pair_free(pair);
		log_error("tokens: could not sign tokens");
		return false;
	}
	auth_sha256_hex(pair->refresh, strlen(pair->refresh), hash);
	return true;
}

enum db_status
tokens_login(struct db *db, const struct tokens_signer *s, const char *email,
	     const char *password, struct tokens_pair *pair,
	     struct tokens_profile *who, enum tokens_result *r)
{
	PGresult *user = NULL, *done = NULL;
	struct auth_claims rc;
	enum auth_role role;
	enum db_status st;
	char family[AUTH_UUID_LEN + 1], hash[AUTH_SHA256_HEX], exp[24];
	const char *p[5];
	bool match;

	memset(pair, 0, sizeof(*pair));
	memset(who, 0, sizeof(*who));
	*r = TOKENS_DENIED;
	p[0] = email;
	if ((st = db_query_ro(db, &user, find_sql, 1, p)) != DB_OK)
		goto out;
	if (PQntuples(user) != 1) {
		auth_password_dummy(password);
		goto out;
	}
	/* Verified first whatever the state: the same time for all. */
	match = auth_password_verify(text(user, "password_hash"), password);
	if (!match || !is_true(user, "active") ||
	    !auth_role_from_name(text(user, "role"), &role))
		goto out;
	if (!auth_uuid(family) ||
	    !issue_pair(s, text(user, "id"), role, val(user, "facility_id"),
			text(user, "token_version"), pair, &rc, hash)) {
		*r = TOKENS_UNSIGNED;
		goto out;
	}
	snprintf(exp, sizeof(exp), "%lld", rc.exp);
	p[0] = text(user, "id");
	p[1] = rc.jti;
	p[2] = family;
	p[3] = hash;
	p[4] = exp;
	if ((st = db_query(db, &done, login_sql, 5, p)) != DB_OK ||
	    PQntuples(done) != 1)
		goto out;
	if (!profile_of(done, who))
		st = DB_ERROR;
	else
		*r = TOKENS_OK;
out:
	if (st != DB_OK || *r != TOKENS_OK)
		tokens_pair_free(pair);
	PQclear(user);
	PQclear(done);
	return st;
}

enum db_status
tokens_refresh(struct db *db, const struct tokens_signer *s,
	       const struct auth_claims *c, const char *hash,
	       struct tokens_pair *pair, enum tokens_result *r)
{
	PGresult *tok = NULL, *usr = NULL, *res = NULL;
	struct auth_claims rc;
	enum auth_role role;
	enum db_status st;
	char nhash[AUTH_SHA256_HEX], exp[24];
	const char *p[5];
	bool committed = false;

	memset(pair, 0, sizeof(*pair));
	*r = TOKENS_DENIED;
	if ((st = db_begin(db)) != DB_OK)
		return st;
	p[0] = hash;
	if ((st = db_query(db, &tok, token_sql, 1, p)) != DB_OK)
		goto out;
	if (PQntuples(tok) != 1 || strcmp(text(tok, "user_id"), c->sub) != 0)
		goto out;
	if (is_true(tok, "spent")) {
		/* Reuse: end the whole login, keep that, refuse. */
		p[0] = val(tok, "family_id");
		if ((st = db_query(db, &res, revoke_family_sql, 1, p)) !=
			    DB_OK ||
		    (st = db_commit(db)) != DB_OK)
			goto out;
		committed = true;
		log_warn("auth: a used refresh token was presented again; "
			 "token family %s revoked",
			 p[0]);
		goto out;
	}
	if (is_true(tok, "expired"))
		goto out;
	p[0] = c->sub;
	if ((st = db_query(db, &usr, user_state_sql, 1, p)) != DB_OK)
		goto out;
	if (PQntuples(usr) != 1 || !is_true(usr, "active") ||
	    !auth_role_from_name(text(usr, "role"), &role)) {
		*r = TOKENS_INACTIVE;
		goto out;
	}
	p[0] = val(tok, "id");
	if ((st = db_query(db, &res, use_sql, 1, p)) != DB_OK)
		goto out;
	if (!issue_pair(s, c->sub, role, val(usr, "facility_id"),
			text(usr, "token_version"), pair, &rc, nhash)) {
		*r = TOKENS_UNSIGNED;
		goto out;
	}
	snprintf(exp, sizeof(exp), "%lld", rc.exp);
	p[0] = rc.jti;
	p[1] = c->sub;
	p[2] = val(tok, "family_id");
	p[3] = nhash;
	p[4] = exp;
	PQclear(res);
	res = NULL;
	if ((st = db_query(db, &res, store_sql, 5, p)) != DB_OK ||
	    (st = db_commit(db)) != DB_OK)
		goto out;
	committed = true;
	*r = TOKENS_OK;
out:
	if (!committed)
		db_rollback(db);
	if (st != DB_OK || *r != TOKENS_OK)
		tokens_pair_free(pair);
	PQclear(tok);
	PQclear(usr);
	PQclear(res);
	return st;
}

enum db_status
tokens_logout(struct db *db, const struct auth_claims *c, const char *hash,
	      bool all, bool *found)
{
	PGresult *res = NULL;
	enum db_status st;
	const char *p[3] = {hash, all ? "true" : "false", c->sub};

	*found = false;
	if ((st = db_query(db, &res, logout_sql, 3, p)) == DB_OK)
		*found = PQntuples(res) == 1;
	PQclear(res);
	return st;
}
