/* SPDX-License-Identifier: MIT */
/*
 * apikeys.h - platform API keys: their administration (/api/v1/api-keys),
 * the authentication of device requests (X-Api-Key) and /api/v1/ping.
 *
 * Keys are made by lib/core/auth (auth_api_key_new); only their SHA-256 is
 * stored (doc/auth.md).  Decisions (doc/api.md "API keys"): a key is
 * accepted when it is active, not expired and its facility is active;
 * every accepted request sets last_used_at; a route's scope missing from
 * the key is 403; revocation (DELETE) keeps the row with is_active false.
 */
#ifndef XMHUB_APIKEYS_H
#define XMHUB_APIKEYS_H

#include <stdbool.h>

#include <libpq-fe.h>

#include "web/app.h"
#include "core/auth.h"
#include "core/db.h"

/* Scopes as bits of a mask. */
#define APIKEYS_SCOPE_UPLOAD 0x1u
#define APIKEYS_SCOPE_INGEST 0x2u
#define APIKEYS_SCOPE_ALL (APIKEYS_SCOPE_UPLOAD | APIKEYS_SCOPE_INGEST)

#define APIKEYS_NAME_MAX 200 /* bytes of a key's name */

/* The bit of scope name ("upload", "ingest") into *bit; false for any
 * other name. */
bool apikeys_scope_bit(const char *name, unsigned *bit);

/*
 * A comma-separated list of scope names ("upload,ingest", the CLI's
 * --scopes) as a mask into *mask; false when a name is unknown or the
 * list is empty.
 */
bool apikeys_scopes_parse(const char *list, unsigned *mask);

/*
 * Creates a key of facility_id named name (1..APIKEYS_NAME_MAX bytes)
 * with the scopes of mask (non-empty, within APIKEYS_SCOPE_ALL) and
 * expires_at (an ISO 8601 time with a zone, or NULL for never) made by
 * user created_by (NULL for the CLI).  On DB_OK, key holds the plaintext
 * key (shown once, never stored) and *res, when res is not NULL, one row:
 * the creation object's columns id, facility_id, key_prefix, name,
 * scopes, expires_at, created_at (the caller PQclear()s it).  Besides
 * db_query()'s statuses: DB_INVALID when expires_at is not a valid time
 * or not in the future (or the arguments are not as said),
 * DB_FOREIGN_KEY when there is no such facility, DB_ERROR when no random
 * bytes could be had.
 */
enum db_status apikeys_create(struct db *db, const char *facility_id,
			      const char *name, unsigned mask,
			      const char *expires_at, const char *created_by,
			      char key[AUTH_KEY_LEN], PGresult **res);

/* GET /api/v1/api-keys: the keys of the caller's facility (a
 * super_admin: all, or ?facility_id=), never the key or its hash. */
void apikeys_list(struct app_ctx *ctx);

/* POST /api/v1/api-keys: {name, scopes?, expires_at?, facility_id?};
 * 200 with the creation object, the plaintext key included. */
void apikeys_post(struct app_ctx *ctx);

/* DELETE /api/v1/api-keys/{id}: revokes (is_active false); 204. */
void apikeys_delete(struct app_ctx *ctx);

/* GET /api/v1/ping (API key, any scope): 200 {"pong":true,
 * "api_key_name":..., "facility_id":...}. */
void apikeys_ping(struct app_ctx *ctx);

#endif
