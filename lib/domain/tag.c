/* SPDX-License-Identifier: MIT */
/*
 * tag.c - the tags of facilities: their SQL.
 */
#include "config.h"

#include "domain/tag.h"

static const char list_sql[] =
	"SELECT id, facility_id, name, color, created_at FROM tags "
	"WHERE $1::uuid IS NULL OR facility_id = $1::uuid "
	"ORDER BY name, id";

static const char facility_sql[] =
	"SELECT facility_id FROM tags WHERE id = $1::uuid";

static const char insert_sql[] =
	"INSERT INTO tags (facility_id, name, color) "
	"VALUES ($1::uuid, $2::text, $3::text) "
	"RETURNING id, facility_id, name, color, created_at";

/* upload_tags rows go with it (ON DELETE CASCADE); uploads stay. */
static const char delete_sql[] = "DELETE FROM tags WHERE id = $1::uuid";

enum db_status
tag_list(struct db *db, const char *facility_id, PGresult **rows)
{
	return db_query_ro(db, rows, list_sql, 1, &facility_id);
}

enum db_status
tag_facility(struct db *db, const char *id, PGresult **rows)
{
	return db_query_ro(db, rows, facility_sql, 1, &id);
}

enum db_status
tag_create(struct db *db, const char *facility_id, const char *name,
	   const char *color, PGresult **rows)
{
	const char *p[3] = {facility_id, name, color};

	return db_query(db, rows, insert_sql, 3, p);
}

enum db_status
tag_delete(struct db *db, const char *id)
{
	return db_exec(db, delete_sql, 1, &id);
}
