/* SPDX-License-Identifier: MIT */
/*
 * page.c - paginated lists.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "codec/buf.h"
#include "web/page.h"
#include "web/valid.h"

enum { Q_PAGE, Q_PER_PAGE, Q_STATUS, NQUERY };

static const struct valid_field fields[NQUERY] = {
	[Q_PAGE] = {.name = "page",
		    .type = VALID_INT,
		    .min = 1,
		    .max = PAGE_MAX},
	[Q_PER_PAGE] = {.name = "per_page",
			.type = VALID_INT,
			.min = 1,
			.max = PAGE_PER_PAGE_MAX},
	[Q_STATUS] = {.name = "status",
		      .type = VALID_STRING,
		      .min = 0,
		      .max = 32},
};

bool
page_query(struct app_ctx *ctx, const char *const *statuses, struct page *pg)
{
	struct valid_value v[NQUERY];
	struct buf names;

	if (!valid_query(ctx->req, fields, NQUERY, v, ctx->resp))
		return false;
	pg->page = v[Q_PAGE].present ? v[Q_PAGE].num : 1;
	pg->per_page = v[Q_PER_PAGE].present ? v[Q_PER_PAGE].num
					     : PAGE_PER_PAGE_DEFAULT;
	snprintf(pg->limit, sizeof(pg->limit), "%lld", pg->per_page);
	snprintf(pg->offset, sizeof(pg->offset), "%lld",
		 (pg->page - 1) * pg->per_page);
	pg->status = NULL;
	if (!v[Q_STATUS].present)
		return true;
	for (size_t i = 0; statuses[i] != NULL; i++)
		if (strcmp(v[Q_STATUS].str, statuses[i]) == 0) {
			pg->status = statuses[i];
			return true;
		}
	buf_init(&names, 0);
	for (size_t i = 0; statuses[i] != NULL; i++)
		buf_printf(&names, "%s%s", i > 0 ? ", " : "", statuses[i]);
	buf_putc(&names, '\0');
	http_error(ctx->resp, 400, "status must be one of %s",
		   names.failed ? "the statuses" : (const char *)names.p);
	buf_free(&names);
	return false;
}

json_object *
page_envelope(const struct page *pg, json_object *items, long long total)
{
	json_object *env = json_object_new_object();

	if (env == NULL || items == NULL) {
		json_object_put(env);
		json_object_put(items);
		return NULL;
	}
	json_object_object_add(env, "items", items);
	json_object_object_add(env, "total", json_object_new_int64(total));
	json_object_object_add(env, "page", json_object_new_int64(pg->page));
	json_object_object_add(env, "per_page",
			       json_object_new_int64(pg->per_page));
	return env;
}
