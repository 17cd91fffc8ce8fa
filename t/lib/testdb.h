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

#endif
