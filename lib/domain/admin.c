/* SPDX-License-Identifier: MIT */
/*
 * admin.c - the command line's administration: list, disable, delete.
 */
#include "config.h"

#include "domain/admin.h"
#include "domain/facility.h"
#include "domain/user.h"

/* Per kind: its list (the API's columns; $1 a facility or NULL, but
 * for facilities), how it is disabled and deleted ($1 the id; NULL: not
 * here). */
static const struct {
	const char *list, *disable, *delete;
} sqls[] = {
	[ADMIN_FACILITY] =
		{"SELECT id, slug, name, is_active, created_at FROM facilities "
		 "ORDER BY created_at, id",
		 "UPDATE facilities SET is_active = false "
		 "WHERE id::text = $1 OR slug = $1 RETURNING id",
		 NULL},
	[ADMIN_USER] = {"SELECT id, email, role, facility_id, is_active, "
			"last_login_at, created_at FROM users "
			"WHERE $1::uuid IS NULL OR facility_id = $1::uuid "
			"ORDER BY created_at, id",
			NULL,
			"DELETE FROM users WHERE id::text = $1 "
			"OR lower(email) = lower($1) RETURNING id"},
	[ADMIN_API_KEY] = {"SELECT id, facility_id, key_prefix, name, scopes, "
			   "is_active, expires_at, last_used_at, created_at "
			   "FROM api_keys "
			   "WHERE $1::uuid IS NULL OR facility_id = $1::uuid "
			   "ORDER BY created_at, id",
			   "UPDATE api_keys SET is_active = false "
			   "WHERE id::text = $1 RETURNING id",
			   "DELETE FROM api_keys WHERE id::text = $1 "
			   "RETURNING id"},
	[ADMIN_DEVICE] = {"SELECT id, facility_id, device_uid, name, "
			  "firmware_version, is_active, last_seen_at, "
			  "created_at FROM devices "
			  "WHERE $1::uuid IS NULL OR facility_id = $1::uuid "
			  "ORDER BY created_at, id",
			  NULL, NULL},
};

enum db_status
admin_list(struct db *db, enum admin_kind kind, const char *facility_id,
	   PGresult **res)
{
	const char *p[1] = {facility_id};

	return db_query(db, res, sqls[kind].list,
			kind == ADMIN_FACILITY ? 0 : 1, p);
}

/* Runs one statement of id that returns the rows it touched. */
static enum db_status
touch(struct db *db, const char *sql, const char *id, bool *found)
{
	PGresult *res = NULL;
	const char *p[1] = {id};
	enum db_status st;

	if ((st = db_query(db, &res, sql, 1, p)) == DB_OK)
		*found = PQntuples(res) > 0;
	PQclear(res);
	return st;
}

enum db_status
admin_disable(struct db *db, enum admin_kind kind, const char *id, bool *found)
{
	*found = false;
	if (kind == ADMIN_USER)
		return user_deactivate(db, id, found);
	if (sqls[kind].disable == NULL)
		return DB_INVALID;
	return touch(db, sqls[kind].disable, id, found);
}

enum db_status
admin_delete(struct db *db, struct store *store, enum admin_kind kind,
	     const char *id, bool *found)
{
	*found = false;
	if (kind == ADMIN_FACILITY)
		return store == NULL ? DB_INVALID
				     : facility_remove(db, store, id, found);
	if (sqls[kind].delete == NULL)
		return DB_INVALID;
	return touch(db, sqls[kind].delete, id, found);
}
