/* SPDX-License-Identifier: MIT */
/*
 * faceapi_keys.c - the face service's API keys.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/auth.h"
#include "web/dbjson.h"
#include "face/service/faceapi_svc.h"
#include "face/service/faceapi_admin.h"
#include "face/service/faceapi_keys.h"
#include "web/valid.h"

#define KEY_MAX 128 /* longer X-API-Key values are refused unread */
#define NAME_MAX_LEN 200

#define COLUMNS                                                                \
	"id, key, name, is_active, request_count, last_used_at, created_at"

static const char use_sql[] =
	"UPDATE face_api_keys SET request_count = request_count + 1, "
	"last_used_at = now() WHERE key = $1 AND is_active RETURNING id";
static const char revoked_sql[] =
	"SELECT 1 FROM face_api_keys WHERE key = $1 AND NOT is_active";

static const char active_sql[] =
	"SELECT id FROM face_api_keys WHERE key = $1 AND is_active";

/* The key's check; count: whether an accepted use is counted. */
static bool
check(struct app_ctx *ctx, bool count, char key_id[37])
{
	struct faceapi *svc = faceapi_of(ctx);
	const char *key = ctx->req->api_key, *params[1] = {key};
	PGresult *res = NULL;
	enum db_status st;
	bool ok = false;

	key_id[0] = '\0';
	if (!svc->conf.keys)
		return true;
	if (key == NULL || *key == '\0') {
		http_error(ctx->resp, 401,
			   "an API key is required (X-API-Key)");
		return false;
	}
	if (strlen(key) > KEY_MAX) {
		http_error(ctx->resp, 401, "invalid API key");
		return false;
	}
	st = count ? db_query(ctx->db, &res, use_sql, 1, params)
		   : db_query_ro(ctx->db, &res, active_sql, 1, params);
	if (st != DB_OK)
		goto fail;
	if (PQntuples(res) == 1) {
		snprintf(key_id, 37, "%s", PQgetvalue(res, 0, 0));
		ok = true;
		goto out;
	}
	PQclear(res);
	if ((st = db_query_ro(ctx->db, &res, revoked_sql, 1, params)) != DB_OK)
		goto fail;
	if (PQntuples(res) == 1)
		http_error(ctx->resp, 403, "the API key has been revoked");
	else
		http_error(ctx->resp, 401, "invalid API key");
	goto out;
fail:
	app_db_error(ctx, st);
out:
	PQclear(res);
	return ok;
}

bool
faceapi_keys_check(struct app_ctx *ctx, char key_id[37])
{
	return check(ctx, true, key_id);
}

bool
faceapi_keys_valid(struct app_ctx *ctx)
{
	char key_id[37];

	return check(ctx, false, key_id);
}

enum { K_NAME, K_ACTIVE, NKEY };

static const struct valid_field post_fields[1] = {
	{.name = "name",
	 .type = VALID_STRING,
	 .flags = VALID_REQUIRED,
	 .min = 1,
	 .max = NAME_MAX_LEN},
};

static const struct valid_field patch_fields[NKEY] = {
	[K_NAME] = {.name = "name",
		    .type = VALID_STRING,
		    .min = 1,
		    .max = NAME_MAX_LEN},
	[K_ACTIVE] = {.name = "is_active", .type = VALID_BOOL},
};

static const char insert_sql[] = "INSERT INTO face_api_keys (key, name) "
				 "VALUES ($1, $2) RETURNING " COLUMNS;

/* Runs sql with the n params and answers its first row with status, or
 * 404 without one.  A row holds the key itself: no cache keeps it. */
static void
answer_row(struct app_ctx *ctx, const char *sql, int n,
	   const char *const *params, int status)
{
	PGresult *res = NULL;
	enum db_status st = db_query(ctx->db, &res, sql, n, params);

	if (st != DB_OK)
		app_db_error(ctx, st);
	else if (PQntuples(res) == 0)
		http_error(ctx->resp, 404, "API key not found");
	else {
		http_no_store(ctx->resp);
		http_json(ctx->resp, status, dbjson_row(res, 0));
	}
	PQclear(res);
}

void
faceapi_keys_post(struct app_ctx *ctx)
{
	char key[AUTH_KEY_LEN], prefix[AUTH_KEY_PREFIX], hash[AUTH_SHA256_HEX];
	char face_key[AUTH_KEY_LEN + 8];
	struct valid_value v[1];
	const char *params[2];
	json_object *body;

	if ((body = valid_json_body(ctx->req, post_fields, 1, v, ctx->resp)) ==
	    NULL)
		return;
	/* lib/core/auth's key after its "xmk_": the face service's own prefix
	 * tells its keys from the platform's. */
	if (!auth_api_key_new(key, prefix, hash)) {
		http_error(ctx->resp, 500, "no random bytes");
		goto out;
	}
	snprintf(face_key, sizeof(face_key), "face_%s", key + 4);
	params[0] = face_key;
	params[1] = v[0].str;
	answer_row(ctx, insert_sql, 2, params, 201);
out:
	json_object_put(body);
}

void
faceapi_keys_list(struct app_ctx *ctx)
{
	http_no_store(ctx->resp); /* the rows hold the keys */
	faceapi_page_rows(ctx, "SELECT count(*) FROM face_api_keys",
			  "SELECT " COLUMNS " FROM face_api_keys "
			  "ORDER BY created_at, id LIMIT $1 OFFSET $2",
			  NULL, 0, false);
}

void
faceapi_keys_get(struct app_ctx *ctx)
{
	const char *params[1] = {ctx->params[0]};

	answer_row(ctx,
		   "SELECT " COLUMNS " FROM face_api_keys WHERE id = $1::uuid",
		   1, params, 200);
}

void
faceapi_keys_patch(struct app_ctx *ctx)
{
	struct valid_value v[NKEY];
	const char *params[3];
	json_object *body;

	if ((body = valid_json_body(ctx->req, patch_fields, NKEY, v,
				    ctx->resp)) == NULL)
		return;
	params[0] = ctx->params[0];
	params[1] = valid_text(&v[K_NAME]);
	params[2] =
		v[K_ACTIVE].present ? (v[K_ACTIVE].b ? "true" : "false") : NULL;
	answer_row(ctx,
		   "UPDATE face_api_keys SET "
		   "name = COALESCE($2::text, name), "
		   "is_active = COALESCE($3::boolean, is_active) "
		   "WHERE id = $1::uuid RETURNING " COLUMNS,
		   3, params, 200);
	json_object_put(body);
}

void
faceapi_keys_delete(struct app_ctx *ctx)
{
	const char *params[1] = {ctx->params[0]};
	PGresult *res = NULL;
	enum db_status st;

	st = db_query(ctx->db, &res,
		      "DELETE FROM face_api_keys WHERE id = $1::uuid "
		      "RETURNING id",
		      1, params);
	if (st != DB_OK)
		app_db_error(ctx, st);
	else if (PQntuples(res) == 0)
		http_error(ctx->resp, 404, "API key not found");
	else
		http_no_content(ctx->resp);
	PQclear(res);
}
