/* SPDX-License-Identifier: MIT */
/*
 * apikeys-db - lib/domain/apikey.c against a real PostgreSQL:
 * apikey_create() as the CLI calls it, apikey_scopes_parse(), and
 * authn_api_key() with every outcome, the scope checks included
 * (no route of the platform core needs a scope yet, so the end-to-end
 * tests can not reach them).  Run by t/e2e/apikeys-db.t with a migrated
 * database of its own in XMHUB_TEST_DATABASE_URL.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/apikey.h"
#include "web/authn.h"
#include "tap.h"
#include "testdb.h"

static struct db *db;

/* A value of the database (t/lib/testdb.h). */
static void
one(const char *sql, const char *param, char *out, size_t len)
{
	testdb_one(db, sql, param, out, len);
}

/* The status authn_api_key() answers key with for scope on d
 * (200 when it accepts), the principal in *who. */
static int
auth(struct db *d, const char *key, const char *scope, struct authn_who *who)
{
	struct http_req req;
	struct http_resp resp;
	struct authn_who w;
	int status;

	memset(&req, 0, sizeof(req));
	memset(&w, 0, sizeof(w));
	http_resp_init(&resp);
	req.method = "GET";
	req.api_key = key;
	status = authn_api_key(&req, d, scope, &w, &resp) ? 200 : resp.status;
	if (status != 200 && resp.body.len == 0)
		status = -status; /* an answer without its detail */
	if (who != NULL)
		*who = w;
	http_resp_free(&resp);
	return status;
}

static void
test_scopes_parse(void)
{
	unsigned m;

	ok(apikey_scopes_parse("upload,ingest", &m) && m == APIKEY_SCOPE_ALL,
	   "scopes: upload,ingest");
	ok(apikey_scopes_parse("upload", &m) && m == APIKEY_SCOPE_UPLOAD,
	   "scopes: upload");
	ok(apikey_scopes_parse("ingest", &m) && m == APIKEY_SCOPE_INGEST,
	   "scopes: ingest");
	ok(apikey_scopes_parse("ingest,upload,ingest", &m) &&
		   m == APIKEY_SCOPE_ALL,
	   "scopes: a repeat");
	ok(!apikey_scopes_parse("", &m), "scopes: empty");
	ok(!apikey_scopes_parse("upload,", &m), "scopes: trailing comma");
	ok(!apikey_scopes_parse(",upload", &m), "scopes: leading comma");
	ok(!apikey_scopes_parse("upload,admin", &m), "scopes: unknown");
	ok(!apikey_scopes_parse("Upload", &m), "scopes: capitals");
	ok(!apikey_scopes_parse("upload ingest", &m), "scopes: a space");
}

static void
test_create(const char *fac)
{
	char key[AUTH_KEY_LEN], v[128];
	PGresult *res = NULL;
	enum db_status st;
	static const char *const cols[] = {
		"id",	  "facility_id", "key_prefix", "name",
		"scopes", "expires_at",	 "created_at"};

	st = apikey_create(db, fac, "cli key", APIKEY_SCOPE_ALL, NULL, NULL,
			   key, &res);
	is_int(st, DB_OK, "create: DB_OK");
	ok(strncmp(key, "xmk_", 4) == 0 && strlen(key) == 47,
	   "create: the key has its form");
	ok(res != NULL && PQntuples(res) == 1 && PQnfields(res) == 7,
	   "create: one row of 7 columns");
	for (int i = 0; res != NULL && i < 7; i++)
		is_str(PQfname(res, i), cols[i], "create: column %d", i);
	if (res == NULL)
		return;
	ok(strncmp(PQgetvalue(res, 0, 2), key, 12) == 0 &&
		   strlen(PQgetvalue(res, 0, 2)) == 12,
	   "create: key_prefix");
	is_str(PQgetvalue(res, 0, 1), fac, "create: facility_id");
	is_str(PQgetvalue(res, 0, 4), "{upload,ingest}", "create: scopes");
	ok(PQgetisnull(res, 0, 5), "create: no expiry");
	one("SELECT coalesce(created_by::text, 'null') FROM api_keys "
	    "WHERE id = $1",
	    PQgetvalue(res, 0, 0), v, sizeof(v));
	is_str(v, "null", "create: created_by null (CLI)");
	PQclear(res);

	st = apikey_create(db, fac, "no result", APIKEY_SCOPE_INGEST,
			   "2099-01-01T00:00:00Z", NULL, key, NULL);
	is_int(st, DB_OK, "create without a result: DB_OK");
	is_int(apikey_create(db, fac, "n", 0, NULL, NULL, key, &res),
	       DB_INVALID, "create: no scopes");
	ok(res == NULL && key[0] == '\0', "create refused: no result, no key");
	is_int(apikey_create(db, fac, "n", 4, NULL, NULL, key, &res),
	       DB_INVALID, "create: an unknown scope bit");
	is_int(apikey_create(db, fac, "", 1, NULL, NULL, key, &res), DB_INVALID,
	       "create: empty name");
	is_int(apikey_create(db, fac, NULL, 1, NULL, NULL, key, &res),
	       DB_INVALID, "create: no name");
	is_int(apikey_create(db, fac, "n", 1, "2001-01-01T00:00:00Z", NULL, key,
			     &res),
	       DB_INVALID, "create: expiry in the past");
	ok(key[0] == '\0', "create refused: the key is wiped");
	is_int(apikey_create(db, fac, "n", 1, "2030-13-01T00:00:00Z", NULL, key,
			     &res),
	       DB_INVALID, "create: expiry not a date");
	is_int(apikey_create(db, "00000000-0000-4000-8000-000000000000", "n", 1,
			     NULL, NULL, key, &res),
	       DB_FOREIGN_KEY, "create: no such facility");
	is_int(apikey_create(db, "nope", "n", 1, NULL, NULL, key, &res),
	       DB_INVALID, "create: facility not a UUID");
	is_int(apikey_create(db, NULL, "n", 1, NULL, NULL, key, &res),
	       DB_INVALID, "create: no facility");
}

static void
test_authenticate(const char *fac)
{
	char all[AUTH_KEY_LEN], up[AUTH_KEY_LEN], v[128], id[64];
	struct authn_who who;
	PGresult *res = NULL;
	struct db *down;

	if (apikey_create(db, fac, "all scopes", APIKEY_SCOPE_ALL, NULL, NULL,
			  all, &res) != DB_OK ||
	    apikey_create(db, fac, "upload only", APIKEY_SCOPE_UPLOAD, NULL,
			  NULL, up, NULL) != DB_OK) {
		ok(false, "authenticate: keys made");
		PQclear(res);
		return;
	}
	snprintf(id, sizeof(id), "%s", PQgetvalue(res, 0, 0));
	PQclear(res);

	is_int(auth(db, all, NULL, &who), 200, "any scope: accepted");
	ok(who.kind == ROUTE_API_KEY && who.role == ROLE_USER,
	   "principal: an API key, role user");
	is_str(who.facility_id, fac, "principal: facility_id");
	is_str(who.key_id, id, "principal: key_id");
	is_str(who.key_name, "all scopes", "principal: key_name");
	ok(who.user_id[0] == '\0', "principal: no user");
	one("SELECT last_used_at IS NOT NULL FROM api_keys WHERE id = $1", id,
	    v, sizeof(v));
	is_str(v, "t", "accepted: last_used_at set");

	is_int(auth(db, all, "upload", NULL), 200, "upload on an all key");
	is_int(auth(db, all, "ingest", NULL), 200, "ingest on an all key");
	is_int(auth(db, up, "upload", NULL), 200, "upload on an upload key");
	is_int(auth(db, up, "ingest", &who), 403, "ingest on an upload key");
	ok(who.kind == ROUTE_PUBLIC && who.facility_id[0] == '\0',
	   "refused: no principal");
	is_int(auth(db, up, NULL, NULL), 200, "any scope on an upload key");

	is_int(auth(db, NULL, NULL, NULL), 401, "no key");
	is_int(auth(db, "", NULL, NULL), 401, "empty key");
	is_int(auth(db, "xmk_short", NULL, NULL), 401, "malformed key");
	is_int(auth(db, "xmk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		    "ingest", NULL),
	       401, "unknown key with a scope: 401, not 403");

	one("UPDATE api_keys SET expires_at = now() - interval '1 s' "
	    "WHERE id = $1 RETURNING 1",
	    id, v, sizeof(v));
	is_int(auth(db, all, NULL, NULL), 401, "expired");
	is_int(auth(db, all, "upload", NULL), 401, "expired, with a scope");
	one("UPDATE api_keys SET expires_at = NULL WHERE id = $1 RETURNING 1",
	    id, v, sizeof(v));
	is_int(apikey_revoke(db, id), DB_OK, "apikey_revoke");
	is_int(auth(db, all, "upload", NULL), 401, "revoked");
	ok(apikey_facility(db, id, &res) == DB_OK && PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "facility_id"), fac) == 0,
	   "revoked: the row kept, its facility read");
	PQclear(res);
	ok(apikey_list(db, fac, &res) == DB_OK && PQntuples(res) >= 2 &&
		   PQfnumber(res, "key_hash") < 0 &&
		   strcmp(testdb_col(res, PQntuples(res) - 2, "is_active"),
			  "f") == 0,
	   "list: the facility's keys, the revoked one inactive, no hash");
	PQclear(res);
	ok(apikey_list(db, "00000000-0000-4000-8000-000000000000", &res) ==
			   DB_OK &&
		   PQntuples(res) == 0,
	   "list: none of another facility");
	PQclear(res);
	one("UPDATE api_keys SET is_active = true WHERE id = $1 RETURNING 1",
	    id, v, sizeof(v));
	is_int(auth(db, all, "upload", NULL), 200, "active again");

	/* A server that is not there. */
	down = db_new("postgresql:///xmhub?host=/nonexistent-xmhub&"
		      "connect_timeout=2");
	is_int(auth(down, all, NULL, NULL), 503, "database unavailable: 503");
	is_int(auth(down, "garbage", NULL, NULL), 401,
	       "database unavailable, malformed key: 401 without a query");
	db_free(down);
}

int
main(void)
{
	char fac[64];

	if ((db = testdb_start("apikeys-db", fac, sizeof(fac))) == NULL)
		return 1;
	test_scopes_parse();
	test_create(fac);
	test_authenticate(fac);
	db_free(db);
	return tap_done();
}
