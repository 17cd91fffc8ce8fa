/* SPDX-License-Identifier: MIT */
/*
 * tag.h - the tags of facilities (doc/api.md "Tags"): their SQL.
 *
 * Rows are as the API shows a tag: id, facility_id, name, color,
 * created_at (for lib/web/dbjson), in *rows, which the caller
 * PQclear()s; who may see or change which facility's tags is the
 * caller's rule (lib/web/scope), checked on facility_id.  Statuses are
 * db_query()'s; *rows is NULL on failure.
 */
#ifndef XMHUB_TAG_H
#define XMHUB_TAG_H

#include "core/db.h"

/* The tags of facility_id (NULL: every facility's), by name. */
enum db_status tag_list(struct db *db, const char *facility_id,
			PGresult **rows);

/* Tag id's facility_id: one row, or none when there is no such tag. */
enum db_status tag_facility(struct db *db, const char *id, PGresult **rows);

/* A new tag of facility_id (color NULL for none): its row.  DB_CONFLICT
 * when the facility has a tag of that name, DB_FOREIGN_KEY when the
 * facility does not exist. */
enum db_status tag_create(struct db *db, const char *facility_id,
			  const char *name, const char *color, PGresult **rows);

/* Deletes tag id; the uploads it was on stay (their upload_tags rows
 * go with it). */
enum db_status tag_delete(struct db *db, const char *id);

#endif
