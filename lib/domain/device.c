/* SPDX-License-Identifier: MIT */
/*
 * device.c - the devices of facilities: their SQL.
 */
#include "config.h"

#include <stdio.h>

#include "domain/device.h"

#define COLUMNS                                                                \
	"id, facility_id, device_uid, name, hardware_version, "                \
	"firmware_version, is_active, last_seen_at, created_at"

static const char list_sql[] =
	"SELECT " COLUMNS " FROM devices "
	"WHERE $1::uuid IS NULL OR facility_id = $1::uuid "
	"ORDER BY created_at, id";

static const char get_sql[] =
	"SELECT " COLUMNS " FROM devices WHERE id = $1::uuid";

static const char insert_sql[] =
	"INSERT INTO devices (facility_id, device_uid, name, "
	"hardware_version, firmware_version) "
	"VALUES ($1::uuid, $2::bigint, $3::text, $4::text, $5::text) "
	"RETURNING " COLUMNS;

/* Fields not given keep their values; the versions may be set to null. */
static const char update_sql[] =
	"UPDATE devices SET name = COALESCE($2::text, name), "
	"hardware_version = CASE WHEN $3::boolean THEN $4::text "
	"ELSE hardware_version END, "
	"firmware_version = CASE WHEN $5::boolean THEN $6::text "
	"ELSE firmware_version END, "
	"is_active = COALESCE($7::boolean, is_active) "
	"WHERE id = $1::uuid RETURNING " COLUMNS;

enum db_status
device_list(struct db *db, const char *facility_id, PGresult **rows)
{
	return db_query_ro(db, rows, list_sql, 1, &facility_id);
}

enum db_status
device_get(struct db *db, const char *id, PGresult **rows)
{
	return db_query_ro(db, rows, get_sql, 1, &id);
}

enum db_status
device_create(struct db *db, const struct device_new *d, PGresult **rows)
{
	char uid[24];
	const char *p[5] = {d->facility_id, uid, d->name, d->hardware_version,
			    d->firmware_version};

	snprintf(uid, sizeof(uid), "%lld", d->device_uid);
	return db_query(db, rows, insert_sql, 5, p);
}

enum db_status
device_update(struct db *db, const char *id, const struct device_change *c,
	      PGresult **rows)
{
	const char *p[7] = {
		id,
		c->name,
		c->set_hardware_version ? "true" : "false",
		c->hardware_version,
		c->set_firmware_version ? "true" : "false",
		c->firmware_version,
		c->is_active < 0 ? NULL : (c->is_active ? "true" : "false")};

	return db_query(db, rows, update_sql, 7, p);
}
