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
#include "domain/tokens.h"
#include "api/login.h"
#include "web/authn.h"
#include "web/valid.h"
#include "core/log.h"

#define TTL_MAX 315360000LL /* ten years */

static long long access_ttl = AUTH_ACCESS_TTL;
static long long refresh_ttl = AUTH_REFRESH_TTL;

/* The one answer for every failed login: nothing tells which part. */
#define LOGIN_DENIED "wrong email or password"
#define REFRESH_DENIED "invalid or expired refresh token"
#define LOGIN_THROTTLED "too many failed logins; try again in %ld seconds"
#define USER_INACTIVE "the user is missing or inactive"

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

/* How this process signs: the secret and the lifetimes in force. */
static struct tokens_signer
signer(const struct app_ctx *ctx)
{
	return (struct tokens_signer){.secret = ctx->jwt_secret,
				      .access_ttl = access_ttl,
				      .refresh_ttl = refresh_ttl};
}

/* {access_token, refresh_token, token_type}. */
static json_object *
pair_json(const struct tokens_pair *pair)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "access_token",
			       json_object_new_string(pair->access));
	json_object_object_add(o, "refresh_token",
			       json_object_new_string(pair->refresh));
	json_object_object_add(o, "token_type",
			       json_object_new_string("bearer"));
	return o;
}

/* {id, email, display_name, role, facility_id} (null for ""). */
static json_object *
user_json(const char *id, const char *email, const char *display_name,
	  enum auth_role role, const char *facility_id)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "email", json_object_new_string(email));
	json_object_object_add(o, "display_name",
			       json_object_new_string(display_name));
	json_object_object_add(o, "role",
			       json_object_new_string(auth_role_name(role)));
	json_object_object_add(o, "facility_id",
			       facility_id[0] != '\0'
				       ? json_object_new_string(facility_id)
				       : NULL);
	return o;
}

static json_object *
profile_json(const struct tokens_profile *who)
{
	return user_json(who->id, who->email, who->display_name, who->role,
			 who->facility_id);
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
	struct tokens_signer s = signer(ctx);
	struct valid_value v[2];
	struct throttle_attempt ta;
	struct tokens_pair pair = {0};
	struct tokens_profile who = {0};
	enum tokens_result r;
	json_object *body, *out;
	enum db_status st;

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
	if ((st = tokens_login(ctx->db, &s, v[0].str, v[1].str, &pair, &who,
			       &r)) != DB_OK) {
		app_db_error(ctx, st);
		goto out;
	}
	if (r == TOKENS_UNSIGNED) {
		http_error(ctx->resp, 500, "internal error");
		goto out;
	}
	if (r != TOKENS_OK) {
		throttle_log_failure(&ta);
		http_error(ctx->resp, 401, LOGIN_DENIED);
		goto out;
	}
	/* Logged in whatever happens here: the attempt stays counted. */
	if (throttle_success(ctx->db, &ta) != DB_OK)
		log_error("login: could not reset the login throttle");
	out = pair_json(&pair);
	json_object_object_add(out, "user", profile_json(&who));
	http_no_store(ctx->resp);
	http_json(ctx->resp, 200, out);
out:
	tokens_pair_free(&pair);
	tokens_profile_free(&who);
	json_object_put(body);
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
	struct tokens_signer s = signer(ctx);
	struct valid_value v[1];
	struct auth_claims c;
	struct tokens_pair pair = {0};
	enum tokens_result r;
	json_object *body;
	enum db_status st;
	char hash[AUTH_SHA256_HEX];

	if ((body = refresh_body(ctx, f, 1, v, &c, hash)) == NULL)
		return;
	if ((st = tokens_refresh(ctx->db, &s, &c, hash, &pair, &r)) != DB_OK)
		app_db_error(ctx, st);
	else if (r == TOKENS_OK) {
		http_no_store(ctx->resp);
		http_json(ctx->resp, 200, pair_json(&pair));
	} else if (r == TOKENS_INACTIVE)
		http_error(ctx->resp, 401, USER_INACTIVE);
	else if (r == TOKENS_DENIED)
		http_error(ctx->resp, 401, REFRESH_DENIED);
	else
		http_error(ctx->resp, 500, "internal error");
	tokens_pair_free(&pair);
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
	enum db_status st;
	char hash[AUTH_SHA256_HEX];
	bool found;

	if ((body = refresh_body(ctx, f, 2, v, &c, hash)) == NULL)
		return;
	if ((st = tokens_logout(ctx->db, &c, hash, v[1].present && v[1].b,
				&found)) != DB_OK)
		app_db_error(ctx, st);
	else if (!found)
		http_error(ctx->resp, 401, REFRESH_DENIED);
	else
		http_no_content(ctx->resp);
	json_object_put(body);
}

/*
 * Answered from what the check that let the request in read (lib/web/authn:
 * the account as it is now, its profile with it), so it costs no statement
 * of its own: the token's role and facility are the account's, or the
 * check refused it.
 */
void
login_me(struct app_ctx *ctx)
{
	const struct authn_who *w = &ctx->who;
	const char *email, *name;

	if (!authn_profile(w->user_id, &email, &name))
		http_error(ctx->resp, 401, USER_INACTIVE);
	else
		http_json(ctx->resp, 200,
			  user_json(w->user_id, email, name, w->role,
				    w->facility_id));
}
