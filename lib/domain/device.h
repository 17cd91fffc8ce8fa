/* SPDX-License-Identifier: MIT */
/*
 * device.h - the devices of facilities (doc/api.md "Devices"): their SQL.
 *
 * A device belongs to one facility and is named there by its device_uid
 * (u32, unique within the facility).  Every function answers rows as
 * the API shows a device: id, facility_id, device_uid, name,
 * hardware_version, firmware_version, is_active, last_seen_at,
 * created_at (for lib/web/dbjson), in *rows, which the caller
 * PQclear()s; who may see or change which facility's devices is the
 * caller's rule (lib/web/scope), checked on facility_id.  Statuses are
 * db_query()'s; *rows is NULL on failure.
 */
#ifndef XMHUB_DEVICE_H
#define XMHUB_DEVICE_H

#include <stdbool.h>

#include "core/db.h"

/* A device to register. */
struct device_new {
	const char *facility_id;
	long long device_uid;
	const char *name;
	const char *hardware_version; /* NULL for none */
	const char *firmware_version; /* NULL for none */
};

/* What a change sets: NULL name and is_active < 0 keep theirs; a
 * version is set (to NULL: cleared) only when its set_ flag is. */
struct device_change {
	const char *name;
	bool set_hardware_version;
	const char *hardware_version;
	bool set_firmware_version;
	const char *firmware_version;
	int is_active; /* 1, 0, or -1 to keep */
};

/* The devices of facility_id (NULL: every facility's), oldest first. */
enum db_status device_list(struct db *db, const char *facility_id,
			   PGresult **rows);

/* Device id: one row, or none when there is no such device. */
enum db_status device_get(struct db *db, const char *id, PGresult **rows);

/* Registers d: its row.  DB_CONFLICT when its device_uid is taken in
 * its facility, DB_FOREIGN_KEY when the facility does not exist. */
enum db_status device_create(struct db *db, const struct device_new *d,
			     PGresult **rows);

/* Changes device id: its row as it is now, or none when it is gone. */
enum db_status device_update(struct db *db, const char *id,
			     const struct device_change *c, PGresult **rows);

#endif
