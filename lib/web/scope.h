/* SPDX-License-Identifier: MIT */
/*
 * scope.h - tenant isolation (doc/api.md "Roles and facilities").
 *
 * Every facility-scoped handler asks here which facility a request may
 * see or write, so the rule lives in one place: a super_admin sees every
 * facility (lists filter with ?facility_id=, creations name facility_id
 * in the body); anyone else, user or API key, only their own, and gets
 * 403 for another facility's rows.
 */
#ifndef XMHUB_SCOPE_H
#define XMHUB_SCOPE_H

#include <stdbool.h>

#include "web/app.h"
#include "web/valid.h"

/*
 * The facility a list is limited to, into *facility_id: the caller's
 * own, or for a super_admin the ?facility_id= filter or NULL for all.
 * False with a 400 in the answer when the filter is not a UUID.
 */
bool scope_list(struct app_ctx *ctx, const char **facility_id);

/*
 * The facility a new row belongs to, into *facility_id.  given is the
 * body's facility_id field (VALID_UUID, may be absent): required for a
 * super_admin (400 without it); for anyone else absent or their own
 * (403 for another).
 */
bool scope_create(struct app_ctx *ctx, const struct valid_value *given,
		  const char **facility_id);

/* True when the caller may touch a row of facility row_facility (NULL
 * for rows of no facility, which only a super_admin may); false with a
 * 403 in the answer. */
bool scope_check(struct app_ctx *ctx, const char *row_facility);

/* A domain function that lists the rows of facility_id (NULL: all). */
typedef enum db_status (*scope_lister)(struct db *db, const char *facility_id,
				       PGresult **rows);

/* Answers a facility-scoped list: the rows list (a domain function)
 * gives for the facility of scope_list() (NULL for all), as a JSON
 * array; a replica's when they may be (lib/core/db's db_reader()). */
void scope_list_answer(struct app_ctx *ctx, scope_lister list);

/* A domain function that reads the row of id, naming its facility_id. */
typedef enum db_status (*scope_reader)(struct db *db, const char *id,
				       PGresult **rows);

/*
 * Checks the row read by read (a domain function) for the route's
 * {id}: true when the caller may go on with it; false with 404
 * "<what> not found", 403 or the database's error answered.
 */
bool scope_owned(struct app_ctx *ctx, scope_reader read, const char *what);

/*
 * The row a domain function fetched for the route's {id} (st its status,
 * rows its result, which names the row's facility_id column): true when
 * the caller may go on with it; false with st answered, 404 "<what> not
 * found" without a row, or 403 as scope_check().
 */
bool scope_found(struct app_ctx *ctx, enum db_status st, const PGresult *rows,
		 const char *what);

/*
 * Answers a failed write of a facility-scoped row: 409 with the detail
 * conflict on a unique violation, 400 when facility_id names no
 * facility (the one foreign key a request body names), otherwise as
 * app_db_error().
 */
void scope_write_error(struct app_ctx *ctx, enum db_status st,
		       const char *conflict);

/*
 * The outcome of a domain function that read one row for the route's
 * {id} into a struct: true when st is DB_OK, the row found and its
 * facility (facility_id, NULL for none) the caller's to touch; false
 * with st answered, 404 "<what> not found", or 403 as scope_check().
 */
bool scope_known(struct app_ctx *ctx, enum db_status st, bool found,
		 const char *facility_id, const char *what);

#endif
