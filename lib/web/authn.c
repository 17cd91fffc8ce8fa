/*
 * authn.c - who is calling: bearer tokens and API keys (see authn.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/auth.h"
#include "web/authn.h"

/* Answers a failed query: 503 when the database is unavailable. */
static void
db_refused(struct http_resp *resp, enum db_status st)
{
	if (st == DB_UNAVAILABLE)
		http_error(resp, 503, "the database is unavailable");
	else
		http_error(resp, 500, "internal error");
}

bool
authn_jwt(const struct http_req *req, const char *secret, int min_role,
	  struct authn_who *who, struct http_resp *resp)
{
	const char *h = req->authorization;
	struct auth_claims c;

	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0 || h[7] == '\0') {
		http_error(resp, 401, "a bearer token is required");
		return false;
	}
	switch (auth_jwt_verify(secret, h + 7, "access", &c)) {
	case AUTH_JWT_OK:
		break;
	case AUTH_JWT_EXPIRED:
		http_error(resp, 401, "the access token has expired");
		return false;
	default:
		http_error(resp, 401, "invalid access token");
		return false;
	}
	if ((int)c.role < min_role) {
		http_error(resp, 403, "insufficient role");
		return false;
	}
	who->kind = ROUTE_JWT;
	who->role = c.role;
	snprintf(who->user_id, sizeof(who->user_id), "%s", c.sub);
	snprintf(who->facility_id, sizeof(who->facility_id), "%s",
		 c.facility_id);
	return true;
}

/*
 * A usable key (active, not expired, of an active facility) that has the
 * scope ($2 NULL: any), returned.  last_used_at is kept to the minute: it
 * is written only when unset or older, so a device's steady traffic does
 * not cost a write (and a WAL flush) per request.
 */
static const char use_sql[] =
	"WITH k AS (SELECT k.id, k.facility_id, k.name, k.last_used_at "
	"FROM api_keys k JOIN facilities f ON f.id = k.facility_id "
	"WHERE k.key_hash = $1 AND k.is_active "
	"AND (k.expires_at IS NULL OR k.expires_at > now()) AND f.is_active "
	"AND ($2::text IS NULL OR $2::text = ANY (k.scopes))), "
	"u AS (UPDATE api_keys SET last_used_at = now() WHERE id IN "
	"(SELECT id FROM k WHERE last_used_at IS NULL "
	"OR last_used_at < now() - interval '60 seconds')) "
	"SELECT id, facility_id, name FROM k";

/* Whether a usable key exists, whatever its scopes (403 versus 401). */
static const char usable_sql[] =
	"SELECT 1 FROM api_keys k JOIN facilities f ON f.id = k.facility_id "
	"WHERE k.key_hash = $1 AND k.is_active "
	"AND (k.expires_at IS NULL OR k.expires_at > now()) AND f.is_active";

bool
authn_api_key(const struct http_req *req, struct db *db, const char *scope,
	      struct authn_who *who, struct http_resp *resp)
{
	char prefix[AUTH_KEY_PREFIX], hash[AUTH_SHA256_HEX];
	const char *params[2] = {hash, scope};
	PGresult *res = NULL;
	enum db_status st;
	bool usable;

	if (req->api_key == NULL || *req->api_key == '\0') {
		http_error(resp, 401, "an X-Api-Key header is required");
		return false;
	}
	if (!auth_api_key_parse(req->api_key, prefix, hash)) {
		http_error(resp, 401, "invalid API key");
		return false;
	}
	if ((st = db_query(db, &res, use_sql, 2, params)) != DB_OK) {
		db_refused(resp, st);
		return false;
	}
	if (PQntuples(res) == 1) {
		who->kind = ROUTE_API_KEY;
		who->role = ROLE_USER;
		snprintf(who->key_id, sizeof(who->key_id), "%s",
			 PQgetvalue(res, 0, 0));
		snprintf(who->facility_id, sizeof(who->facility_id), "%s",
			 PQgetvalue(res, 0, 1));
		snprintf(who->key_name, sizeof(who->key_name), "%s",
			 PQgetvalue(res, 0, 2));
		PQclear(res);
		return true;
	}
	PQclear(res);
	res = NULL;
	if (scope == NULL) {
		http_error(resp, 401, "invalid API key");
		return false;
	}
	if ((st = db_query_ro(db, &res, usable_sql, 1, params)) != DB_OK) {
		db_refused(resp, st);
		return false;
	}
	usable = PQntuples(res) > 0;
	PQclear(res);
	if (usable)
		http_error(resp, 403, "the API key lacks the %s scope", scope);
	else
		http_error(resp, 401, "invalid API key");
	return false;
}
