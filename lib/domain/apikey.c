/* SPDX-License-Identifier: MIT */
/*
 * apikey.c - the facilities' API keys: scopes, creation, SQL.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "domain/apikey.h"

static const struct {
	const char *name;
	unsigned bit;
} scope_names[] = {
	{"upload", APIKEY_SCOPE_UPLOAD},
	{"ingest", APIKEY_SCOPE_INGEST},
};

#define NSCOPES (sizeof(scope_names) / sizeof(scope_names[0]))

bool
apikey_scope_bit(const char *name, unsigned *bit)
{
	for (size_t i = 0; i < NSCOPES; i++)
		if (strcmp(name, scope_names[i].name) == 0) {
			*bit = scope_names[i].bit;
			return true;
		}
	return false;
}

bool
apikey_scopes_parse(const char *list, unsigned *mask)
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
		if (!apikey_scope_bit(name, &bit))
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
apikey_create(struct db *db, const char *facility_id, const char *name,
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
	    n > APIKEY_NAME_MAX || mask == 0 || (mask & ~APIKEY_SCOPE_ALL) != 0)
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

static const char facility_sql[] =
	"SELECT facility_id FROM api_keys WHERE id = $1::uuid";
static const char revoke_sql[] =
	"UPDATE api_keys SET is_active = false WHERE id = $1::uuid";

enum db_status
apikey_list(struct db *db, const char *facility_id, PGresult **rows)
{
	return db_query_ro(db, rows, list_sql, 1, &facility_id);
}

enum db_status
apikey_facility(struct db *db, const char *id, PGresult **rows)
{
	return db_query_ro(db, rows, facility_sql, 1, &id);
}

enum db_status
apikey_revoke(struct db *db, const char *id)
{
	return db_exec(db, revoke_sql, 1, &id);
}
