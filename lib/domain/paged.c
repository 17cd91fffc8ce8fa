/* SPDX-License-Identifier: MIT */
/*
 * paged.c - one page of a list and its count.
 */
#include "config.h"

#include <stdlib.h>

#include "domain/paged.h"

enum db_status
paged_list(struct db *db, const char *count_sql, const char *list_sql,
	   int nfilter, const char *const *params, PGresult **rows,
	   long long *total)
{
	PGresult *count = NULL;
	enum db_status st;

	*rows = NULL;
	*total = 0;
	if ((st = db_query_ro(db, &count, count_sql, nfilter, params)) ==
		    DB_OK &&
	    (st = db_query_ro(db, rows, list_sql, nfilter + 2, params)) ==
		    DB_OK)
		*total = strtoll(PQgetvalue(count, 0, 0), NULL, 10);
	PQclear(count);
	return st;
}
