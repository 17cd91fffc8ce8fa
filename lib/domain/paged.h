/* SPDX-License-Identifier: MIT */
/*
 * paged.h - one page of a list and the number of rows on every page
 * (doc/api.md "Paginated lists"), for the domain modules whose lists
 * the API pages: jobs, session, upload.
 *
 * A paged list is two statements of the module's: count_sql, which
 * takes the list's filters as $1..$n and answers one count, and
 * list_sql, which takes the same filters and then LIMIT as $n+1 and
 * OFFSET as $n+2.
 */
#ifndef XMHUB_PAGED_H
#define XMHUB_PAGED_H

#include "core/db.h"

/*
 * Runs count_sql with the nfilter first of params and list_sql with
 * those and the two after them (LIMIT, OFFSET): the page in *rows (the
 * caller PQclear()s it; NULL on failure), the count in *total (0 on
 * failure).  Both read-only (db_query_ro()).
 */
enum db_status paged_list(struct db *db, const char *count_sql,
			  const char *list_sql, int nfilter,
			  const char *const *params, PGresult **rows,
			  long long *total);

#endif
