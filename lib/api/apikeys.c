/* SPDX-License-Identifier: MIT */
/*
 * apikeys.c - platform API keys, device authentication, ping.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "api/apikeys.h"
#include "web/dbjson.h"
#include "web/scope.h"
#include "web/valid.h"

static const struct {
	const char *name;
	unsigned bit;
} scope_names[] = {
	{"upload", APIKEYS_SCOPE_UPLOAD},
	{"ingest", APIKEYS_SCOPE_INGEST},
};

#define NSCOPES (sizeof(scope_names) / sizeof(scope_names[0]))

bool
apikeys_scope_bit(const char *name, unsigned *bit)
{
	for (size_t i = 0; i < NSCOPES; i++)
		if (strcmp(name, scope_names[i].name) == 0) {
			*bit = scope_names[i].bit;
			return true;
		}
	return false;
}

bool
apikeys_scopes_parse(const char *list, unsigned *mask)
{
	char name[16];
	const char *p = list, *comma;
	unsigned bit;
	size_t n;

	*mask = 0;
	for (;;) {
		comma = strchr(p, ',');
		n = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (n == 0 || n >= sizeof(name))
			return false;
		memcpy(name, p, n);
		name[n] = '\0';
		if (!apikeys_scope_bit(name, &bit))
			return false;
		*mask |= bit;
		if (comma == NULL)
			return true;
		p = comma + 1;
	}
}

/* The text[] literal of mask's scopes ("{upload,ingest}"). */
static void
scopes_literal(unsigned mask, char *out, size_t len)
{
	size_t n = 0;

	n += (size_t)snprintf(out + n, len - n, "{");
	for (size_t i = 0; i < NSCOPES; i++)
		if (mask & scope_names[i].bit)
			n += (size_t)snprintf(out + n, len - n, "%s%s",
					      n > 1 ? "," : "",
					      scope_names[i].name);
	snprintf(out + n, len - n, "}");
}

/* The key is stored only if expires_at is still ahead: a past expiry
 * inserts nothing (DB_INVALID for the caller). */
static const char create_sql[] =
	"INSERT INTO api_keys (facility_id, name, key_prefix, key_hash, "
	"scopes, expires_at, created_by) "
	"SELECT $1::uuid, $2::text, $3::text, $4::text, $5::text[], "
	"$6::timestamptz, $7::uuid "
	"WHERE $6::timestamptz IS NULL OR $6::timestamptz > now() "
	"RETURNING id, facility_id, key_prefix, name, scopes, expires_at, "
	"created_at";

enum db_status
apikeys_create(struct db *db, const char *facility_id, const char *name,
	       unsigned mask, const char *expires_at, const char *created_by,
	       char key[AUTH_KEY_LEN], PGresult **res)
{
	char prefix[AUTH_KEY_PREFIX], hash[AUTH_SHA256_HEX], scopes[32];
	const char *params[7];
	PGresult *r = NULL;
	enum db_status st;
	size_t n;

	if (res != NULL)
		*res = NULL;
	key[0] = '\0';
	if (facility_id == NULL || name == NULL || (n = strlen(name)) == 0 ||
	    n > APIKEYS_NAME_MAX || mask == 0 ||
	    (mask & ~APIKEYS_SCOPE_ALL) != 0)
		return DB_INVALID;
	if (!auth_api_key_new(key, prefix, hash))
		return DB_ERROR;
	scopes_literal(mask, scopes, sizeof(scopes));
	params[0] = facility_id;
	params[1] = name;
	params[2] = prefix;
	params[3] = hash;
	params[4] = scopes;
	params[5] = expires_at;
	params[6] = created_by;
	st = db_query(db, &r, create_sql, 7, params);
	if (st == DB_OK && PQntuples(r) != 1)
		st = DB_INVALID;
	if (st != DB_OK) {
		PQclear(r);
		memset(key, 0, AUTH_KEY_LEN);
		return st;
	}
	if (res != NULL)
		*res = r;
	else
		PQclear(r);
	return DB_OK;
}

static const char list_sql[] =
	"SELECT id, facility_id, key_prefix, name, scopes, is_active, "
	"expires_at, last_used_at, created_by, created_at FROM api_keys "
	"WHERE $1::uuid IS NULL OR facility_id = $1::uuid "
	"ORDER BY created_at, id";

void
apikeys_list(struct app_ctx *ctx)
{
	scope_list_rows(ctx, list_sql);
}

enum { F_NAME, F_SCOPES, F_EXPIRES, F_FACILITY, NFIELDS };

static const struct valid_field post_fields[NFIELDS] = {
	[F_NAME] = {.name = "name",
		    .type = VALID_STRING,
		    .flags = VALID_REQUIRED,
		    .min = 1,
		    .max = APIKEYS_NAME_MAX},
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
		*mask = APIKEYS_SCOPE_ALL;
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

		if (!apikeys_scope_bit(s, &bit)) {
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
	st = apikeys_create(ctx->db, facility_id, v[F_NAME].str, mask,
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

static const char facility_sql[] =
	"SELECT facility_id FROM api_keys WHERE id = $1::uuid";
static const char revoke_sql[] =
	"UPDATE api_keys SET is_active = false WHERE id = $1::uuid";

void
apikeys_delete(struct app_ctx *ctx)
{
	const char *params[1] = {ctx->params[0]};
	PGresult *res = NULL;
	enum db_status st;

	if (!scope_row(ctx, facility_sql, "API key"))
		return;
	if ((st = db_query(ctx->db, &res, revoke_sql, 1, params)) != DB_OK) {
		app_db_error(ctx, st);
		return;
	}
	PQclear(res);
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
