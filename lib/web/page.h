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

/* The envelope of pg holding items (taken over) and total; NULL when out
 * of memory.  The caller answers it. */
json_object *page_envelope(const struct page *pg, json_object *items,
			   long long total);

#endif
