/* SPDX-License-Identifier: MIT */
/*
 * page.h - paginated lists (doc/api.md "Paginated lists"): the page,
 * per_page and status query parameters and the envelope {items, total,
 * page, per_page}.
 */
#ifndef XMHUB_PAGE_H
#define XMHUB_PAGE_H

#include <stdbool.h>

#include <json-c/json.h>
#include <libpq-fe.h>

#include "web/app.h"

#define PAGE_MAX 1000000 /* pages beyond are 400, not a huge OFFSET */
#define PAGE_PER_PAGE_MAX 100
#define PAGE_PER_PAGE_DEFAULT 20

struct page {
	long long page, per_page;
	char limit[24], offset[24]; /* SQL parameters LIMIT and OFFSET */
	const char *status;	    /* one of the statuses, or NULL */
};

/*
 * Reads ?page= (1-based, default 1, at most PAGE_MAX), ?per_page= (1 to
 * 100, default 20) and ?status= (one of the NULL-terminated statuses;
 * NULL when absent) into pg.  False with a 400 naming the parameter.
 */
bool page_query(struct app_ctx *ctx, const char *const *statuses,
		struct page *pg);

/*
 * Runs a paginated list of a facility-scoped table: reads the query
 * (page_query() with statuses, scope_list()), then count_sql ($1 the
 * facility or NULL for all, $2 the status or NULL) and list_sql (the
 * same, $3 LIMIT, $4 OFFSET).  True with pg, *total and *rows set (the
 * caller PQclear()s *rows); false with the answer set (400, 503, 500).
 */
bool page_fetch(struct app_ctx *ctx, const char *const *statuses,
		const char *count_sql, const char *list_sql, struct page *pg,
		long long *total, PGresult **rows);

/* The envelope of pg holding items (taken over) and total; NULL when out
 * of memory.  The caller answers it. */
json_object *page_envelope(const struct page *pg, json_object *items,
			   long long total);

#endif
