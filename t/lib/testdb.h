/* SPDX-License-Identifier: MIT */
/*
 * testdb.h - helpers of the C tests that run against a database of their
 * own (t/e2e/jobs-db.c, t/e2e/apikeys-db.c: XMHUB_TEST_DATABASE_URL
 * from Xmhub::Pg).
 *
 * Header-only, like tap.h: each test program includes it once.
 */
#ifndef XMHUB_TESTDB_H
#define XMHUB_TESTDB_H

#include <stdio.h>
#include <stdlib.h>

#include "core/conf.h"
#include "core/db.h"

/* The first value of the first row of sql with up to one parameter on
 * db, copied into out ("" when there is none or the query fails). */
static void __attribute__((unused))
testdb_one(struct db *db, const char *sql, const char *param, char *out,
	   size_t len)
{
	PGresult *res = NULL;

	out[0] = '\0';
	if (db_query(db, &res, sql, param != NULL ? 1 : 0, &param) == DB_OK &&
	    PQntuples(res) > 0)
		snprintf(out, len, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
}

/* Column name of row row of res as text: "(null)" for SQL NULL, "" when
 * there is no such row or column (a test compares it with what it
 * expects). */
static __attribute__((unused)) const char *
testdb_col(const PGresult *res, int row, const char *name)
{
	int c = res != NULL && PQntuples(res) > row ? PQfnumber(res, name) : -1;

	if (c < 0)
		return "";
	return PQgetisnull(res, row, c) ? "(null)" : PQgetvalue(res, row, c);
}

/*
 * The start of every such test: the settings read (XMHUB_ENV_FILE
 * /dev/null unless the test set one, with what it put in the
 * environment), the handle of XMHUB_TEST_DATABASE_URL, and a facility
 * named and slugged name whose id goes to fac.  NULL after a "Bail out!"
 * line saying why.
 */
static __attribute__((unused)) struct db *
testdb_start(const char *name, char *fac, size_t len)
{
	const char *url = getenv("XMHUB_TEST_DATABASE_URL");
	char detail[256] = "XMHUB_TEST_DATABASE_URL is not set";
	struct db *db = NULL;

	setenv("XMHUB_ENV_FILE", "/dev/null", 0);
	if (url == NULL || !conf_init(detail, sizeof(detail)))
		goto out;
	snprintf(detail, sizeof(detail), "out of memory");
	if ((db = db_new(url)) == NULL)
		goto out;
	testdb_one(db,
		   "INSERT INTO facilities (name, slug) VALUES ($1, $1) "
		   "RETURNING id",
		   name, fac, len);
	snprintf(detail, sizeof(detail), "facility %s: not made", name);
	if (fac[0] == '\0') {
		db_free(db);
		db = NULL;
	}
out:
	if (db == NULL)
		printf("Bail out! %s\n", detail);
	return db;
}

#endif
