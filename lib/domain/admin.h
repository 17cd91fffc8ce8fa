/* SPDX-License-Identifier: MIT */
/*
 * admin.h - what the command line administers without the API
 * (`xmhub facility|user|api-key|device list`, disable, delete; doc/
 * operations.md): the same rows and rules as the endpoints, for the
 * operator who holds the database URL, with no caller and no scope.
 */
#ifndef XMHUB_ADMIN_H
#define XMHUB_ADMIN_H

#include <stdbool.h>

#include <libpq-fe.h>

#include "core/db.h"
#include "store/storage.h"

enum admin_kind {
	ADMIN_FACILITY,
	ADMIN_USER,
	ADMIN_API_KEY,
	ADMIN_DEVICE,
};

/*
 * The rows of kind, oldest first, into *res (the caller PQclear()s it),
 * with the columns the API's list shows (never a password hash or a
 * key's hash).  facility_id (a uuid, or NULL for all) keeps one
 * facility's users, keys or devices; it is ignored for facilities.
 * Statuses as db_query() (DB_INVALID for a facility_id not a uuid).
 */
enum db_status admin_list(struct db *db, enum admin_kind kind,
			  const char *facility_id, PGresult **res);

/*
 * Disables the thing id names (a uuid; a user's e-mail, a facility's
 * slug too): a
 * facility's is_active false (its users and keys then fail, as through
 * the API), a user deactivated with its refresh tokens revoked
 * (user_deactivate()), a key revoked.  Devices cannot be disabled here
 * (DB_INVALID).  *found false when there is no such row.
 */
enum db_status admin_disable(struct db *db, enum admin_kind kind,
			     const char *id, bool *found);

/*
 * Deletes the row id names (as admin_disable()) and what hangs on it: a
 * facility with its
 * rows and stored objects (facility_remove(); store must not be NULL),
 * a user (its uploads keep no uploader), a key (DB_FOREIGN_KEY while
 * uploads made with it exist: revoke it instead).  Devices are not
 * deleted here (DB_INVALID): their sessions' chunks are in the store.
 * *found false when there is no such row.
 */
enum db_status admin_delete(struct db *db, struct store *store,
			    enum admin_kind kind, const char *id, bool *found);

#endif
