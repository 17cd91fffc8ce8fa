/* SPDX-License-Identifier: MIT */
/*
 * facility.h - the facilities (doc/api.md "Facilities"): their SQL, their
 * storage settings (doc/storage.md "Quotas and retention") and their
 * removal with every object they store.
 *
 * A facility's rows are as the API shows a Facility: id, name, slug,
 * description, is_active, created_at, updated_at; its storage rows as
 * the API shows a FacilityStorage: facility_id, quota_bytes,
 * used_bytes, upload_bytes, sample_bytes, keep_samples_days,
 * keep_uploads_days, updated_at (both for lib/web/dbjson).  They are
 * answered in *rows, which the caller PQclear()s (NULL on failure);
 * statuses are db_query()'s.  Who may do what is the caller's rule
 * (super_admin, lib/web/scope).
 */
#ifndef XMHUB_FACILITY_H
#define XMHUB_FACILITY_H

#include <stdbool.h>

#include "core/auth.h"
#include "core/db.h"
#include "store/storage.h"

/* What a change sets: NULL name and is_active < 0 keep theirs; the
 * description is set (to NULL: cleared) only when set_description. */
struct facility_change {
	const char *name;
	bool set_description;
	const char *description;
	int is_active; /* 1, 0, or -1 to keep */
};

/* A storage setting of a change: whether it is set, and to what
 * (limited false: no limit, NULL). */
struct facility_limit {
	bool set;
	bool limited;
	long long value;
};

/* What a storage change sets. */
struct facility_storage_change {
	struct facility_limit quota_bytes;
	struct facility_limit keep_samples_days;
	struct facility_limit keep_uploads_days;
};

/* Every facility, oldest first. */
enum db_status facility_list(struct db *db, PGresult **rows);

/* Facility id: one row, or none when there is no such facility. */
enum db_status facility_get(struct db *db, const char *id, PGresult **rows);

/* A new facility (description NULL for none): its row.  DB_CONFLICT
 * when the slug is taken. */
enum db_status facility_create(struct db *db, const char *name,
			       const char *slug, const char *description,
			       PGresult **rows);

/* Changes facility id: its row as it is then (as it is, for a change
 * that sets nothing), or none when there is no such facility. */
enum db_status facility_update(struct db *db, const char *id,
			       const struct facility_change *c,
			       PGresult **rows);

/*
 * Deletes the facility whose id or slug is id, with every row that is
 * its (users, keys, devices, uploads, sessions, ...), then every object
 * of it in store (all under its id).  *found false when there is none.
 * Objects a store failure leaves are logged (orphans, the rows gone).
 */
enum db_status facility_remove(struct db *db, struct store *store,
			       const char *id, bool *found);

/* Facility id's storage: one row, or none when there is no such
 * facility. */
enum db_status facility_storage(struct db *db, const char *id, PGresult **rows);

/* Changes facility id's storage settings: its storage row as it is
 * then, or none when there is no such facility. */
enum db_status facility_storage_set(struct db *db, const char *id,
				    const struct facility_storage_change *c,
				    PGresult **rows);

#endif
