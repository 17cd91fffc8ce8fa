/* SPDX-License-Identifier: MIT */
/*
 * apikeys.c - the API keys' endpoints and ping (the keys themselves:
 * lib/domain/apikey).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "api/apikeys.h"
#include "web/dbjson.h"
#include "web/scope.h"
#include "web/valid.h"

void
apikeys_list(struct app_ctx *ctx)
{
	scope_list_answer(ctx, apikey_list);
}

enum { F_NAME, F_SCOPES, F_EXPIRES, F_FACILITY, NFIELDS };

static const struct valid_field post_fields[NFIELDS] = {
	[F_NAME] = {.name = "name",
		    .type = VALID_STRING,
		    .flags = VALID_REQUIRED,
		    .min = 1,
		    .max = APIKEY_NAME_MAX},
	[F_SCOPES] = {.name = "scopes",
		      .type = VALID_STRINGS,
		      .flags = VALID_NULLABLE,
		      .min = 0,
		      .max = 16},
	[F_EXPIRES] = {.name = "expires_at",
		       .type = VALID_TIMESTAMP,
		       .flags = VALID_NULLABLE},
	[F_FACILITY] = {.name = "facility_id",
			.type = VALID_UUID,
			.flags = VALID_NULLABLE},
};

/* The mask of the body's scopes (absent or null: all); false with a 400
 * for an empty array or an unknown name. */
static bool
body_scopes(struct app_ctx *ctx, const struct valid_value *v, unsigned *mask)
{
	size_t n;
	unsigned bit;

	if (!v->present || v->is_null) {
		*mask = APIKEY_SCOPE_ALL;
		return true;
	}
	if ((n = json_object_array_length(v->json)) == 0) {
		http_error(ctx->resp, 400,
			   "scopes must name at least one scope (upload, "
			   "ingest)");
		return false;
	}
	*mask = 0;
	for (size_t i = 0; i < n; i++) {
		const char *s = json_object_get_string(
			json_object_array_get_idx(v->json, i));

		if (!apikey_scope_bit(s, &bit)) {
			http_error(ctx->resp, 400,
				   "scopes[%zu] is not a scope (upload, "
				   "ingest)",
				   i);
			return false;
		}
		*mask |= bit;
	}
	return true;
}

void
apikeys_post(struct app_ctx *ctx)
{
	struct valid_value v[NFIELDS];
	const char *facility_id;
	char key[AUTH_KEY_LEN];
	PGresult *res = NULL;
	json_object *body, *o;
	enum db_status st;
	unsigned mask;

	if ((body = valid_json_body(ctx->req, post_fields, NFIELDS, v,
				    ctx->resp)) == NULL)
		return;
	if (!body_scopes(ctx, &v[F_SCOPES], &mask) ||
	    !scope_create(ctx, &v[F_FACILITY], &facility_id))
		goto out;
	st = apikey_create(ctx->db, facility_id, v[F_NAME].str, mask,
			   v[F_EXPIRES].is_null ? NULL : v[F_EXPIRES].str,
			   ctx->who.user_id, key, &res);
	switch (st) {
	case DB_OK:
		break;
	case DB_INVALID:
		http_error(ctx->resp, 400,
			   "expires_at must be a valid time in the future");
		goto out;
	case DB_FOREIGN_KEY:
		http_error(ctx->resp, 400, "facility_id names no facility");
		goto out;
	default:
		app_db_error(ctx, st);
		goto out;
	}
	if ((o = dbjson_row(res, 0)) != NULL)
		json_object_object_add(o, "key", json_object_new_string(key));
	memset(key, 0, sizeof(key));
	http_no_store(ctx->resp);
	http_json(ctx->resp, 200, o);
out:
	PQclear(res);
	json_object_put(body);
}

void
apikeys_delete(struct app_ctx *ctx)
{
	enum db_status st;

	if (!scope_owned(ctx, apikey_facility, "API key"))
		return;
	if ((st = apikey_revoke(ctx->db, ctx->params[0])) != DB_OK)
		app_db_error(ctx, st);
	else
		http_no_content(ctx->resp);
}

void
apikeys_ping(struct app_ctx *ctx)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "pong", json_object_new_boolean(1));
	json_object_object_add(o, "api_key_name",
			       json_object_new_string(ctx->who.key_name));
	json_object_object_add(o, "facility_id",
			       json_object_new_string(ctx->who.facility_id));
	http_json(ctx->resp, 200, o);
}
