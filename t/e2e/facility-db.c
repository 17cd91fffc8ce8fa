/* SPDX-License-Identifier: MIT */
/*
 * facility-db - lib/domain/facility.c against a real PostgreSQL and a
 * filesystem store: facilities made (a slug taken), read, listed,
 * changed field by field, their storage settings set and cleared, and
 * removed by id or slug with their rows and stored objects (another
 * facility's stay).  Run by t/e2e/facility-db.t with a migrated database
 * of its own in XMHUB_TEST_DATABASE_URL; t/e2e/api-facilities.t and
 * quota.t prove the HTTP contract.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "config.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/conf.h"
#include "domain/facility.h"
#include "tap.h"
#include "testdb.h"

#define NO_ID "00000000-0000-0000-0000-000000000000"

static struct db *db;

/* Makes facility slug; its id into id ("" when refused), the status. */
static enum db_status
make(const char *slug, const char *desc, char *id, size_t len)
{
	PGresult *res = NULL;
	enum db_status st = facility_create(db, "Name", slug, desc, &res);

	snprintf(id, len, "%s", testdb_col(res, 0, "id"));
	PQclear(res);
	return st;
}

static void
test_rows(const char *a, const char *b)
{
	struct facility_change c = {.is_active = -1};
	PGresult *res = NULL;
	char x[64];

	ok(make("fac-a", NULL, x, sizeof(x)) == DB_CONFLICT,
	   "create: a slug taken is a conflict");
	ok(facility_get(db, a, &res) == DB_OK && PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "slug"), "fac-a") == 0 &&
		   strcmp(testdb_col(res, 0, "description"), "(null)") == 0 &&
		   strcmp(testdb_col(res, 0, "is_active"), "t") == 0 &&
		   PQfnumber(res, "updated_at") >= 0,
	   "get: the facility as the API shows it");
	PQclear(res);
	ok(facility_get(db, NO_ID, &res) == DB_OK && PQntuples(res) == 0,
	   "get: none for an unknown id");
	PQclear(res);
	ok(facility_list(db, &res) == DB_OK && PQntuples(res) == 2 &&
		   strcmp(testdb_col(res, 0, "id"), a) == 0 &&
		   strcmp(testdb_col(res, 1, "id"), b) == 0,
	   "list: every facility, oldest first");
	PQclear(res);
	ok(facility_update(db, a, &c, &res) == DB_OK && PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "name"), "Name") == 0,
	   "update: a change of nothing answers the facility");
	PQclear(res);
	c = (struct facility_change){.name = "Renamed",
				     .set_description = true,
				     .description = "the north site",
				     .is_active = 0};
	ok(facility_update(db, a, &c, &res) == DB_OK &&
		   strcmp(testdb_col(res, 0, "name"), "Renamed") == 0 &&
		   strcmp(testdb_col(res, 0, "description"),
			  "the north site") == 0 &&
		   strcmp(testdb_col(res, 0, "is_active"), "f") == 0,
	   "update: name, description and is_active set");
	PQclear(res);
	c = (struct facility_change){.set_description = true, .is_active = 1};
	ok(facility_update(db, a, &c, &res) == DB_OK &&
		   strcmp(testdb_col(res, 0, "name"), "Renamed") == 0 &&
		   strcmp(testdb_col(res, 0, "description"), "(null)") == 0 &&
		   strcmp(testdb_col(res, 0, "is_active"), "t") == 0,
	   "update: the description cleared, the name kept");
	PQclear(res);
	ok(facility_update(db, NO_ID, &c, &res) == DB_OK && PQntuples(res) == 0,
	   "update: none for an unknown id");
	PQclear(res);
}

static void
test_storage(const char *a)
{
	struct facility_storage_change c = {
		.quota_bytes = {.set = true, .limited = true, .value = 5000},
		.keep_samples_days = {
			.set = true, .limited = true, .value = 30}};
	PGresult *res = NULL;

	ok(facility_storage(db, a, &res) == DB_OK && PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "facility_id"), a) == 0 &&
		   strcmp(testdb_col(res, 0, "quota_bytes"), "(null)") == 0 &&
		   strcmp(testdb_col(res, 0, "used_bytes"), "0") == 0,
	   "storage: a new facility has no limit and stores nothing");
	PQclear(res);
	ok(facility_storage_set(db, a, &c, &res) == DB_OK &&
		   strcmp(testdb_col(res, 0, "quota_bytes"), "5000") == 0 &&
		   strcmp(testdb_col(res, 0, "keep_samples_days"), "30") == 0 &&
		   strcmp(testdb_col(res, 0, "keep_uploads_days"), "(null)") ==
			   0,
	   "storage: a quota and a retention set");
	PQclear(res);
	c = (struct facility_storage_change){.quota_bytes = {.set = true}};
	ok(facility_storage_set(db, a, &c, &res) == DB_OK &&
		   strcmp(testdb_col(res, 0, "quota_bytes"), "(null)") == 0 &&
		   strcmp(testdb_col(res, 0, "keep_samples_days"), "30") == 0,
	   "storage: the quota cleared, the retention kept");
	PQclear(res);
	ok(facility_storage(db, NO_ID, &res) == DB_OK && PQntuples(res) == 0,
	   "storage: none for an unknown id");
	PQclear(res);
	ok(facility_storage_set(db, NO_ID, &c, &res) == DB_OK &&
		   PQntuples(res) == 0,
	   "storage: no change for an unknown id");
	PQclear(res);
}

/* Removes one entry of a tree (nftw(), deepest first). */
static int
rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(path);
}

/* Stores a small object under key; true when it is there. */
static bool
put(struct store *st, const char *key)
{
	char d[256];

	return store_put_buf(st, key, "x", 1, NULL, d, sizeof(d)) == STORE_OK;
}

static void
test_remove(const char *a, const char *b)
{
	char dir[] = "/tmp/facility-db-XXXXXX", d[256], ka[128], kb[128];
	struct store *st = NULL;
	uint64_t size;
	bool found;

	if (!ok(mkdtemp(dir) != NULL &&
			setenv("XMHUB_STORAGE_DIR", dir, 1) == 0 &&
			(st = store_open_env(d, sizeof(d))) != NULL,
		"remove: a filesystem store"))
		return;
	snprintf(ka, sizeof(ka), "%s/uploads/one", a);
	snprintf(kb, sizeof(kb), "%s/uploads/one", b);
	ok(put(st, ka) && put(st, kb), "remove: an object of each facility");
	ok(facility_remove(db, st, "fac-a", &found) == DB_OK && found,
	   "remove: by slug");
	ok(store_size(st, ka, &size, d, sizeof(d)) == STORE_NOT_FOUND,
	   "remove: its objects are gone");
	ok(store_size(st, kb, &size, d, sizeof(d)) == STORE_OK,
	   "remove: another facility's stay");
	ok(facility_remove(db, st, b, &found) == DB_OK && found &&
		   facility_remove(db, st, b, &found) == DB_OK && !found,
	   "remove: by id, then not found");
	store_close(st);
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int
main(void)
{
	const char *url = getenv("XMHUB_TEST_DATABASE_URL");
	char a[64], b[64], detail[256];

	setenv("XMHUB_ENV_FILE", "/dev/null", 1);
	if (url == NULL || !conf_init(detail, sizeof(detail)) ||
	    (db = db_new(url)) == NULL) {
		printf("Bail out! no database (XMHUB_TEST_DATABASE_URL)\n");
		return 1;
	}
	if (ok(make("fac-a", NULL, a, sizeof(a)) == DB_OK &&
		       make("fac-b", "second", b, sizeof(b)) == DB_OK,
	       "create: two facilities")) {
		test_rows(a, b);
		test_storage(a);
		test_remove(a, b);
	}
	db_free(db);
	return tap_done();
}
