/* SPDX-License-Identifier: MIT */
/*
 * login.c - the authentication endpoints.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/conf.h"
#include "core/metrics.h"
#include "domain/throttle.h"
#include "web/dbjson.h"
#include "api/login.h"
#include "web/valid.h"
#include "core/log.h"

#define TTL_MAX 315360000LL /* ten years */

static long long access_ttl = AUTH_ACCESS_TTL;
static long long refresh_ttl = AUTH_REFRESH_TTL;

/* The one answer for every failed login: nothing tells which part. */
#define LOGIN_DENIED "wrong email or password"
#define REFRESH_DENIED "invalid or expired refresh token"
#define LOGIN_THROTTLED "too many failed logins; try again in %ld seconds"

/* The user to log in, whatever the case of the e-mail; active means
 * the user and its facility (if any) are. */
static const char SQL_FIND[] =
	"SELECT u.id, u.password_hash, u.role, u.facility_id, "
	"u.is_active AND coalesce(f.is_active, true) AS active, "
	"u.token_version "
	"FROM users u LEFT JOIN facilities f ON f.id = u.facility_id "
	"WHERE lower(u.email) = lower($1)";

/* Records the login and stores its first refresh token, in one
 * statement; no row when the user was deactivated in between. */
static const char SQL_LOGIN[] =
	"WITH u AS (UPDATE users SET last_login_at = now() "
	"WHERE id = $1 AND is_active "
	"RETURNING id, email, display_name, role, facility_id), "
	"t AS (INSERT INTO refresh_tokens "
	"(id, user_id, family_id, token_hash, expires_at) "
	"SELECT $2::uuid, u.id, $3::uuid, $4, to_timestamp($5::bigint) "
	"FROM u) "
	"SELECT id, email, display_name, role, facility_id FROM u";

static const char SQL_TOKEN[] =
	"SELECT id, user_id, family_id, "
	"used_at IS NOT NULL OR revoked_at IS NOT NULL AS spent, "
	"expires_at <= now() AS expired "
	"FROM refresh_tokens WHERE token_hash = $1 FOR UPDATE";

static const char SQL_REVOKE_FAMILY[] =
	"UPDATE refresh_tokens SET revoked_at = now() "
	"WHERE family_id = $1 AND revoked_at IS NULL";

static const char SQL_USER_STATE[] =
	"SELECT u.role, u.facility_id, "
	"u.is_active AND coalesce(f.is_active, true) AS active, "
	"u.token_version "
	"FROM users u LEFT JOIN facilities f ON f.id = u.facility_id "
	"WHERE u.id = $1";

static const char SQL_USE[] =
	"UPDATE refresh_tokens SET used_at = now() WHERE id = $1";

static const char SQL_STORE[] =
	"INSERT INTO refresh_tokens "
	"(id, user_id, family_id, token_hash, expires_at) "
	"VALUES ($1, $2, $3, $4, to_timestamp($5::bigint))";

/* Revokes the family of the token (the login it belongs to), or every
 * token of its user with $2; no row when the token is unknown. */
static const char SQL_LOGOUT[] =
	"WITH t AS (SELECT user_id, family_id FROM refresh_tokens "
	"WHERE token_hash = $1 AND user_id = $3::uuid), "
	"r AS (UPDATE refresh_tokens k SET revoked_at = now() FROM t "
	"WHERE k.revoked_at IS NULL AND CASE WHEN $2::boolean "
	"THEN k.user_id = t.user_id ELSE k.family_id = t.family_id END) "
	"SELECT 1 FROM t";

static const char SQL_ME[] =
	"SELECT u.id, u.email, u.display_name, u.role, u.facility_id "
	"FROM users u LEFT JOIN facilities f ON f.id = u.facility_id "
	"WHERE u.id = $1 AND u.is_active AND coalesce(f.is_active, true)";

bool
login_init(const char *name)
{
	static const struct {
		const char *name;
		long long *out;
	} ttls[] = {
		{"XMHUB_ACCESS_TTL", &access_ttl},
		{"XMHUB_REFRESH_TTL", &refresh_ttl},
	};

	(void)name; /* lib/core/log names the program */
	for (size_t i = 0; i < sizeof(ttls) / sizeof(ttls[0]); i++)
		if (!conf_get_int(ttls[i].name, ttls[i].out)) {
			log_error(
				"%s must be a number of seconds from 1 to %lld",
				ttls[i].name, TTL_MAX);
			return false;
		}
	return true;
}

long long
login_access_ttl(void)
{
	return access_ttl;
}

long long
login_refresh_ttl(void)
{
	return refresh_ttl;
}

/*
 * Signs an access and a refresh token for user_id (role, facility_id
 * from the database: NULL or "" for none; ver its token_version).  On success
 * *access and *refresh are malloc'd, rc holds the refresh token's claims (jti,
 * exp) and hash its SHA-256.
 */
static bool
issue_pair(const char *secret, const char *user_id, enum auth_role role,
	   const char *facility_id, const char *ver, char **access,
	   char **refresh, struct auth_claims *rc, char hash[AUTH_SHA256_HEX])
{
	struct auth_claims ac;

	*access = *refresh = NULL;
	memset(&ac, 0, sizeof(ac));
	snprintf(ac.sub, sizeof(ac.sub), "%s", user_id);
	ac.role = role;
	ac.ver = strtoll(ver, NULL, 10);
	snprintf(ac.facility_id, sizeof(ac.facility_id), "%s",
		 facility_id != NULL ? facility_id : "");
	*rc = ac;
	snprintf(ac.type, sizeof(ac.type), "access");
	snprintf(rc->type, sizeof(rc->type), "refresh");
	if (!auth_jwt_issue(secret, &ac, access_ttl, access) ||
	    !auth_jwt_issue(secret, rc, refresh_ttl, refresh)) {
		free(*access);
		free(*refresh);
		*access = *refresh = NULL;
		log_error("login: could not sign tokens");
		return false;
	}
	auth_sha256_hex(*refresh, strlen(*refresh), hash);
	return true;
}

/* {access_token, refresh_token, token_type}; takes the two tokens. */
static json_object *
pair_json(char *access, char *refresh)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "access_token",
			       json_object_new_string(access));
	json_object_object_add(o, "refresh_token",
			       json_object_new_string(refresh));
	json_object_object_add(o, "token_type",
			       json_object_new_string("bearer"));
	free(access);
	free(refresh);
	return o;
}

/* Column col of row 0, or NULL when it is SQL NULL. */
static const char *
col(const PGresult *res, int c)
{
	return PQgetisnull(res, 0, c) ? NULL : PQgetvalue(res, 0, c);
}

/* A failed login: logged, then the one answer. */
static void
denied(struct app_ctx *ctx, const struct throttle_attempt *ta)
{
	throttle_log_failure(ta);
	http_error(ctx->resp, 401, LOGIN_DENIED);
}

void
login_login(struct app_ctx *ctx)
{
	static const struct valid_field f[] = {
		{.name = "email",
		 .type = VALID_STRING,
		 .flags = VALID_REQUIRED,
		 .min = 1,
		 .max = 254},
		{.name = "password",
		 .type = VALID_STRING,
		 .flags = VALID_REQUIRED,
		 .min = 1,
		 .max = AUTH_PASSWORD_MAX},
	};
	struct valid_value v[2];
	struct auth_claims rc;
	struct throttle_attempt ta;
	json_object *body, *out;
	PGresult *res = NULL, *res2 = NULL;
	enum db_status st;
	enum auth_role role;
	char *access = NULL, *refresh = NULL, hash[AUTH_SHA256_HEX];
	char family[AUTH_UUID_LEN + 1], exp[24];
	const char *p[5];
	bool match;

	if ((body = valid_json_body(ctx->req, f, 2, v, ctx->resp)) == NULL)
		return;
	/* Before the lookup: a refused attempt costs no password check. */
	if ((st = throttle_attempt(ctx->db, v[0].str, ctx->req->remote_addr,
				   &ta)) != DB_OK) {
		app_db_error(ctx, st);
		goto out;
	}
	if (ta.wait > 0) {
		throttle_log_refusal(&ta);
		http_header(ctx->resp, "Retry-After", "%ld", ta.wait);
		http_error(ctx->resp, 429, LOGIN_THROTTLED, ta.wait);
		metrics_add(METRIC_RATE_LIMIT_LOGIN, 1);
		goto out;
	}
	p[0] = v[0].str;
	if ((st = db_query_ro(ctx->db, &res, SQL_FIND, 1, p)) != DB_OK) {
		app_db_error(ctx, st);
		goto out;
	}
	if (PQntuples(res) != 1) {
		auth_password_dummy(v[1].str);
		denied(ctx, &ta);
		goto out;
	}
	/* Verified first whatever the state: the same time for all. */
	match = auth_password_verify(PQgetvalue(res, 0, 1), v[1].str);
	if (!match || PQgetvalue(res, 0, 4)[0] != 't' ||
	    !auth_role_from_name(PQgetvalue(res, 0, 2), &role)) {
		denied(ctx, &ta);
		goto out;
	}
	if (!auth_uuid(family) ||
	    !issue_pair(ctx->jwt_secret, PQgetvalue(res, 0, 0), role,
			col(res, 3), PQgetvalue(res, 0, 5), &access, &refresh,
			&rc, hash)) {
		http_error(ctx->resp, 500, "internal error");
		goto out;
	}
	snprintf(exp, sizeof(exp), "%lld", rc.exp);
	p[0] = PQgetvalue(res, 0, 0);
	p[1] = rc.jti;
	p[2] = family;
	p[3] = hash;
	p[4] = exp;
	if ((st = db_query(ctx->db, &res2, SQL_LOGIN, 5, p)) != DB_OK) {
		app_db_error(ctx, st);
		goto out;
	}
	if (PQntuples(res2) != 1) {
		denied(ctx, &ta);
		goto out;
	}
	/* Logged in whatever happens here: the attempt stays counted. */
	if (throttle_success(ctx->db, &ta) != DB_OK)
		log_error("login: could not reset the login throttle");
	out = pair_json(access, refresh);
	access = refresh = NULL;
	json_object_object_add(out, "user", dbjson_row(res2, 0));
	http_no_store(ctx->resp);
	http_json(ctx->resp, 200, out);
out:
	free(access);
	free(refresh);
	PQclear(res);
	PQclear(res2);
	json_object_put(body);
}

/*
 * The refresh transaction after the token verified: answers and
 * returns true, or returns false with st set for a database failure
 * (the caller rolls back and answers it).
 */
static bool
rotate(struct app_ctx *ctx, const struct auth_claims *c, const char *hash,
       enum db_status *st)
{
	PGresult *tok = NULL, *usr = NULL, *res = NULL;
	struct auth_claims rc;
	enum auth_role role;
	char *access = NULL, *refresh = NULL, nhash[AUTH_SHA256_HEX], exp[24];
	const char *p[5];
	bool done = false;

	p[0] = hash;
	if ((*st = db_query(ctx->db, &tok, SQL_TOKEN, 1, p)) != DB_OK)
		goto out;
	if (PQntuples(tok) != 1 || strcmp(PQgetvalue(tok, 0, 1), c->sub) != 0) {
		db_rollback(ctx->db);
		http_error(ctx->resp, 401, REFRESH_DENIED);
		done = true;
		goto out;
	}
	if (PQgetvalue(tok, 0, 3)[0] == 't') {
		/* Reuse: log the whole login out, keep that, refuse. */
		p[0] = PQgetvalue(tok, 0, 2);
		if ((*st = db_query(ctx->db, &res, SQL_REVOKE_FAMILY, 1, p)) !=
			    DB_OK ||
		    (*st = db_commit(ctx->db)) != DB_OK)
			goto out;
		log_warn("auth: a used refresh token was presented again; "
			 "token family %s revoked",
			 p[0]);
		http_error(ctx->resp, 401, REFRESH_DENIED);
		done = true;
		goto out;
	}
	if (PQgetvalue(tok, 0, 4)[0] == 't') {
		db_rollback(ctx->db);
		http_error(ctx->resp, 401, REFRESH_DENIED);
		done = true;
		goto out;
	}
	p[0] = PQgetvalue(tok, 0, 1);
	if ((*st = db_query(ctx->db, &usr, SQL_USER_STATE, 1, p)) != DB_OK)
		goto out;
	if (PQntuples(usr) != 1 || PQgetvalue(usr, 0, 2)[0] != 't' ||
	    !auth_role_from_name(PQgetvalue(usr, 0, 0), &role)) {
		db_rollback(ctx->db);
		http_error(ctx->resp, 401, "the user is missing or inactive");
		done = true;
		goto out;
	}
	p[0] = PQgetvalue(tok, 0, 0);
	if ((*st = db_query(ctx->db, &res, SQL_USE, 1, p)) != DB_OK)
		goto out;
	if (!issue_pair(ctx->jwt_secret, c->sub, role, col(usr, 1),
			PQgetvalue(usr, 0, 3), &access, &refresh, &rc, nhash)) {
		*st = DB_ERROR;
		goto out;
	}
	snprintf(exp, sizeof(exp), "%lld", rc.exp);
	p[0] = rc.jti;
	p[1] = c->sub;
	p[2] = PQgetvalue(tok, 0, 2);
	p[3] = nhash;
	p[4] = exp;
	PQclear(res);
	res = NULL;
	if ((*st = db_query(ctx->db, &res, SQL_STORE, 5, p)) != DB_OK ||
	    (*st = db_commit(ctx->db)) != DB_OK)
		goto out;
	http_no_store(ctx->resp);
	http_json(ctx->resp, 200, pair_json(access, refresh));
	access = refresh = NULL;
	done = true;
out:
	free(access);
	free(refresh);
	PQclear(tok);
	PQclear(usr);
	PQclear(res);
	return done;
}

/* The body field every refresh-token route starts with. */
#define REFRESH_FIELD                                                          \
	{                                                                      \
		.name = "refresh_token", .type = VALID_STRING,                 \
		.flags = VALID_REQUIRED, .min = 1, .max = AUTH_JWT_MAX         \
	}

/*
 * Reads a JSON body of the n fields f (f[0] REFRESH_FIELD) into v,
 * verifies its refresh token into *c and hashes it into hash.  The body
 * (the caller frees it), or NULL after answering 400 or 401.
 */
static json_object *
refresh_body(struct app_ctx *ctx, const struct valid_field *f, size_t n,
	     struct valid_value *v, struct auth_claims *c,
	     char hash[AUTH_SHA256_HEX])
{
	json_object *body = valid_json_body(ctx->req, f, n, v, ctx->resp);

	if (body == NULL)
		return NULL;
	if (auth_jwt_verify(ctx->jwt_secret, v[0].str, "refresh", c) !=
	    AUTH_JWT_OK) {
		http_error(ctx->resp, 401, REFRESH_DENIED);
		json_object_put(body);
		return NULL;
	}
	auth_sha256_hex(v[0].str, strlen(v[0].str), hash);
	return body;
}

void
login_refresh(struct app_ctx *ctx)
{
	static const struct valid_field f[] = {REFRESH_FIELD};
	struct valid_value v[1];
	struct auth_claims c;
	json_object *body;
	enum db_status st;
	char hash[AUTH_SHA256_HEX];

	if ((body = refresh_body(ctx, f, 1, v, &c, hash)) == NULL)
		return;
	if ((st = db_begin(ctx->db)) != DB_OK) {
		app_db_error(ctx, st);
		goto out;
	}
	if (!rotate(ctx, &c, hash, &st)) {
		db_rollback(ctx->db);
		app_db_error(ctx, st);
	}
out:
	json_object_put(body);
}

void
login_logout(struct app_ctx *ctx)
{
	static const struct valid_field f[] = {
		REFRESH_FIELD,
		{.name = "all", .type = VALID_BOOL},
	};
	struct valid_value v[2];
	struct auth_claims c;
	json_object *body;
	PGresult *res = NULL;
	enum db_status st;
	char hash[AUTH_SHA256_HEX];
	const char *p[3];

	if ((body = refresh_body(ctx, f, 2, v, &c, hash)) == NULL)
		return;
	p[0] = hash;
	p[1] = v[1].present && v[1].b ? "true" : "false";
	p[2] = c.sub;
	if ((st = db_query(ctx->db, &res, SQL_LOGOUT, 3, p)) != DB_OK)
		app_db_error(ctx, st);
	else if (PQntuples(res) != 1)
		http_error(ctx->resp, 401, REFRESH_DENIED);
	else
		http_no_content(ctx->resp);
	PQclear(res);
	json_object_put(body);
}

void
login_me(struct app_ctx *ctx)
{
	PGresult *res = NULL;
	enum db_status st;
	const char *p[1] = {ctx->who.user_id};

	if ((st = db_query_ro(ctx->db, &res, SQL_ME, 1, p)) != DB_OK) {
		app_db_error(ctx, st);
		return;
	}
	if (PQntuples(res) != 1)
		http_error(ctx->resp, 401, "the user is missing or inactive");
	else
		http_json(ctx->resp, 200, dbjson_row(res, 0));
	PQclear(res);
}
