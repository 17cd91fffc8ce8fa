/* SPDX-License-Identifier: MIT */
/*
 * apikey.h - the facilities' API keys (doc/api.md "API keys"): their
 * scopes, their creation, their SQL.
 *
 * Keys are made by lib/core/auth (auth_api_key_new); only their SHA-256
 * is stored (doc/auth.md).  Revocation keeps the row with is_active
 * false.  Who may list, create or revoke which facility's keys is the
 * caller's rule (lib/web/scope); lib/web/authn checks a presented key.
 */
#ifndef XMHUB_APIKEY_H
#define XMHUB_APIKEY_H

#include <stdbool.h>

#include <libpq-fe.h>

#include "core/auth.h"
#include "core/db.h"

/* Scopes as bits of a mask. */
#define APIKEY_SCOPE_UPLOAD 0x1u
#define APIKEY_SCOPE_INGEST 0x2u
#define APIKEY_SCOPE_ALL (APIKEY_SCOPE_UPLOAD | APIKEY_SCOPE_INGEST)

#define APIKEY_NAME_MAX 200 /* bytes of a key's name */

/* The bit of scope name ("upload", "ingest") into *bit; false for any
 * other name. */
bool apikey_scope_bit(const char *name, unsigned *bit);

/*
 * A comma-separated list of scope names ("upload,ingest", the CLI's
 * --scopes) as a mask into *mask; false when a name is unknown or the
 * list is empty.
 */
bool apikey_scopes_parse(const char *list, unsigned *mask);

/*
 * Creates a key of facility_id named name (1..APIKEY_NAME_MAX bytes)
 * with the scopes of mask (non-empty, within APIKEY_SCOPE_ALL) and
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
enum db_status apikey_create(struct db *db, const char *facility_id,
			     const char *name, unsigned mask,
			     const char *expires_at, const char *created_by,
			     char key[AUTH_KEY_LEN], PGresult **res);

/* The keys of facility_id (NULL: every facility's), oldest first, as
 * the API lists them: id, facility_id, key_prefix, name, scopes,
 * is_active, expires_at, last_used_at, created_by, created_at (never
 * the key or its hash), in *rows (the caller PQclear()s it). */
enum db_status apikey_list(struct db *db, const char *facility_id,
			   PGresult **rows);

/* Key id's facility_id: one row, or none when there is no such key. */
enum db_status apikey_facility(struct db *db, const char *id, PGresult **rows);

/* Revokes key id (is_active false, the row kept). */
enum db_status apikey_revoke(struct db *db, const char *id);

#endif
