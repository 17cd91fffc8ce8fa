/* SPDX-License-Identifier: MIT */
/*
 * tag-db - lib/domain/tag.c against a real PostgreSQL: tags made (a
 * name taken, a facility that does not exist), listed by name per
 * facility and for all, their facility looked up, deleted.  Run by
 * t/e2e/tag-db.t with a migrated database of its own in
 * XMHUB_TEST_DATABASE_URL; t/e2e/api-tags.t proves the HTTP contract and
 * the facility rules.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/tag.h"
#include "tap.h"
#include "testdb.h"

#define NO_ID "00000000-0000-0000-0000-000000000000"

static struct db *db;

/* Makes tag name of fac (color NULL for none); its id into id. */
static enum db_status
make(const char *fac, const char *name, const char *color, char *id, size_t len)
{
	PGresult *res = NULL;
	enum db_status st = tag_create(db, fac, name, color, &res);

	snprintf(id, len, "%s", testdb_col(res, 0, "id"));
	PQclear(res);
	return st;
}

int
main(void)
{
	const char *url = getenv("XMHUB_TEST_DATABASE_URL");
	char fac[64], other[64], zeta[64], alpha[64], theirs[64], x[64];
	PGresult *res = NULL;

	if (url == NULL || (db = db_new(url)) == NULL) {
		printf("Bail out! no database (XMHUB_TEST_DATABASE_URL)\n");
		return 1;
	}
	testdb_one(db,
		   "INSERT INTO facilities (name, slug) VALUES ($1, $1) "
		   "RETURNING id",
		   "tag-db", fac, sizeof(fac));
	testdb_one(db,
		   "INSERT INTO facilities (name, slug) VALUES ($1, $1) "
		   "RETURNING id",
		   "tag-db-other", other, sizeof(other));
	ok(make(fac, "zeta", "#A0b1C2", zeta, sizeof(zeta)) == DB_OK &&
		   make(fac, "alpha", NULL, alpha, sizeof(alpha)) == DB_OK &&
		   make(other, "alpha", NULL, theirs, sizeof(theirs)) == DB_OK,
	   "create: three tags, one name in two facilities");
	ok(make(fac, "alpha", NULL, x, sizeof(x)) == DB_CONFLICT,
	   "create: a name taken in the facility is a conflict");
	ok(make(NO_ID, "beta", NULL, x, sizeof(x)) == DB_FOREIGN_KEY,
	   "create: a facility that does not exist");

	ok(tag_list(db, fac, &res) == DB_OK && PQntuples(res) == 2 &&
		   strcmp(testdb_col(res, 0, "id"), alpha) == 0 &&
		   strcmp(testdb_col(res, 0, "facility_id"), fac) == 0 &&
		   strcmp(testdb_col(res, 0, "color"), "(null)") == 0 &&
		   strcmp(testdb_col(res, 1, "name"), "zeta") == 0 &&
		   strcmp(testdb_col(res, 1, "color"), "#A0b1C2") == 0,
	   "list: the facility's tags, by name");
	PQclear(res);
	ok(tag_list(db, NULL, &res) == DB_OK && PQntuples(res) == 3,
	   "list: every facility's");
	PQclear(res);
	ok(tag_facility(db, theirs, &res) == DB_OK && PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "facility_id"), other) == 0,
	   "facility: the tag's");
	PQclear(res);
	ok(tag_delete(db, alpha) == DB_OK &&
		   tag_facility(db, alpha, &res) == DB_OK &&
		   PQntuples(res) == 0,
	   "delete: the tag is gone");
	PQclear(res);
	ok(tag_list(db, other, &res) == DB_OK && PQntuples(res) == 1,
	   "delete: the other facility's tag of that name stays");
	PQclear(res);
	db_free(db);
	return tap_done();
}
