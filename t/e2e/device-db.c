/* SPDX-License-Identifier: MIT */
/*
 * device-db - lib/domain/device.c against a real PostgreSQL: devices
 * registered (a taken device_uid, a facility that does not exist), read,
 * listed per facility and for all, and changed field by field.  Run by
 * t/e2e/device-db.t with a migrated database of its own in
 * XMHUB_TEST_DATABASE_URL; t/e2e/api-devices.t proves the HTTP contract
 * and the facility rules.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/device.h"
#include "tap.h"
#include "testdb.h"

#define NO_FACILITY "00000000-0000-0000-0000-000000000000"

static struct db *db;

/* A new facility's id into id. */
static void
facility(const char *slug, char *id, size_t len)
{
	testdb_one(db,
		   "INSERT INTO facilities (name, slug) VALUES ($1, $1) "
		   "RETURNING id",
		   slug, id, len);
}

static void
test_create(const char *fac, char *id, size_t len)
{
	struct device_new d = {.facility_id = fac,
			       .device_uid = 4294967295LL,
			       .name = "recorder 1",
			       .hardware_version = "rev B",
			       .firmware_version = NULL};
	PGresult *res = NULL;

	ok(device_create(db, &d, &res) == DB_OK && PQntuples(res) == 1,
	   "create: one row");
	ok(strcmp(testdb_col(res, 0, "facility_id"), fac) == 0 &&
		   strcmp(testdb_col(res, 0, "device_uid"), "4294967295") ==
			   0 &&
		   strcmp(testdb_col(res, 0, "name"), "recorder 1") == 0 &&
		   strcmp(testdb_col(res, 0, "hardware_version"), "rev B") ==
			   0 &&
		   strcmp(testdb_col(res, 0, "firmware_version"), "(null)") ==
			   0 &&
		   strcmp(testdb_col(res, 0, "is_active"), "t") == 0 &&
		   strcmp(testdb_col(res, 0, "last_seen_at"), "(null)") == 0 &&
		   PQfnumber(res, "created_at") >= 0,
	   "create: the row is the device as the API shows it");
	snprintf(id, len, "%s", testdb_col(res, 0, "id"));
	PQclear(res);
	d.name = "another";
	ok(device_create(db, &d, &res) == DB_CONFLICT && res == NULL,
	   "create: a device_uid taken in the facility is a conflict");
	d.facility_id = NO_FACILITY;
	ok(device_create(db, &d, &res) == DB_FOREIGN_KEY,
	   "create: a facility that does not exist");
}

static void
test_read(const char *fac, const char *other, const char *id)
{
	struct device_new d = {
		.facility_id = other, .device_uid = 7, .name = "theirs"};
	PGresult *res = NULL;

	ok(device_get(db, id, &res) == DB_OK && PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "id"), id) == 0,
	   "get: the device");
	PQclear(res);
	ok(device_get(db, NO_FACILITY, &res) == DB_OK && PQntuples(res) == 0,
	   "get: none for an unknown id");
	PQclear(res);
	device_create(db, &d, &res);
	PQclear(res);
	ok(device_list(db, fac, &res) == DB_OK && PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "id"), id) == 0,
	   "list: a facility's devices only");
	PQclear(res);
	ok(device_list(db, NULL, &res) == DB_OK && PQntuples(res) == 2 &&
		   strcmp(testdb_col(res, 0, "id"), id) == 0,
	   "list: every facility's, oldest first");
	PQclear(res);
}

static void
test_update(const char *id)
{
	struct device_change c = {.name = NULL,
				  .set_hardware_version = true,
				  .hardware_version = NULL,
				  .set_firmware_version = false,
				  .firmware_version = "ignored",
				  .is_active = -1};
	PGresult *res = NULL;

	ok(device_update(db, id, &c, &res) == DB_OK && PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "hardware_version"), "(null)") ==
			   0 &&
		   strcmp(testdb_col(res, 0, "firmware_version"), "(null)") ==
			   0 &&
		   strcmp(testdb_col(res, 0, "name"), "recorder 1") == 0 &&
		   strcmp(testdb_col(res, 0, "is_active"), "t") == 0,
	   "update: a version cleared, the rest kept");
	PQclear(res);
	c = (struct device_change){.name = "renamed",
				   .set_firmware_version = true,
				   .firmware_version = "2.1",
				   .is_active = 0};
	ok(device_update(db, id, &c, &res) == DB_OK &&
		   strcmp(testdb_col(res, 0, "name"), "renamed") == 0 &&
		   strcmp(testdb_col(res, 0, "firmware_version"), "2.1") == 0 &&
		   strcmp(testdb_col(res, 0, "hardware_version"), "(null)") ==
			   0 &&
		   strcmp(testdb_col(res, 0, "is_active"), "f") == 0,
	   "update: name, firmware and is_active set");
	PQclear(res);
	ok(device_update(db, NO_FACILITY, &c, &res) == DB_OK &&
		   PQntuples(res) == 0,
	   "update: no row for an unknown id");
	PQclear(res);
}

int
main(void)
{
	const char *url = getenv("XMHUB_TEST_DATABASE_URL");
	char fac[64], other[64], id[64];

	if (url == NULL || (db = db_new(url)) == NULL) {
		printf("Bail out! no database (XMHUB_TEST_DATABASE_URL)\n");
		return 1;
	}
	facility("device-db", fac, sizeof(fac));
	facility("device-db-other", other, sizeof(other));
	if (ok(fac[0] != '\0' && other[0] != '\0', "two facilities")) {
		test_create(fac, id, sizeof(id));
		test_read(fac, other, id);
		test_update(id);
	}
	db_free(db);
	return tap_done();
}
