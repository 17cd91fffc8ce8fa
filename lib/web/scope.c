/* SPDX-License-Identifier: MIT */
/*
 * scope.c - tenant isolation.
 */
#include "config.h"

#include <string.h>

#include "web/dbjson.h"
#include "web/scope.h"

static bool
is_super(const struct app_ctx *ctx)
{
	return ctx->who.kind == ROUTE_JWT && ctx->who.role == ROLE_SUPER_ADMIN;
}

bool
scope_list(struct app_ctx *ctx, const char **facility_id)
{
	static const struct valid_field f[] = {
		{.name = "facility_id", .type = VALID_UUID},
	};
	struct valid_value v[1];

	if (!is_super(ctx)) {
		*facility_id = ctx->who.facility_id;
		return true;
	}
	if (!valid_query(ctx->req, f, 1, v, ctx->resp))
		return false;
	if (!v[0].present) {
		*facility_id = NULL;
		return true;
	}
	memcpy(ctx->facility_filter, v[0].buf, sizeof(ctx->facility_filter));
	*facility_id = ctx->facility_filter;
	return true;
}

bool
scope_create(struct app_ctx *ctx, const struct valid_value *given,
	     const char **facility_id)
{
	if (is_super(ctx)) {
		if (!given->present || given->is_null) {
			http_error(ctx->resp, 400,
				   "facility_id is required for a super_admin");
			return false;
		}
		*facility_id = given->str;
		return true;
	}
	if (given->present && !given->is_null &&
	    strcmp(given->str, ctx->who.facility_id) != 0) {
		http_error(ctx->resp, 403, "another facility's resource");
		return false;
	}
	*facility_id = ctx->who.facility_id;
	return true;
}

bool
scope_check(struct app_ctx *ctx, const char *row_facility)
{
	if (is_super(ctx))
		return true;
	if (row_facility != NULL && *ctx->who.facility_id != '\0' &&
	    strcmp(row_facility, ctx->who.facility_id) == 0)
		return true;
	http_error(ctx->resp, 403, "another facility's resource");
	return false;
}

/* Answers st, or rows as a JSON array. */
static void
answer_rows(struct app_ctx *ctx, enum db_status st, const PGresult *rows)
{
	if (st != DB_OK)
		app_db_error(ctx, st);
	else
		dbjson_rows_put(http_json_text(ctx->resp, 200), rows);
}

void
scope_list_answer(struct app_ctx *ctx, scope_lister list)
{
	const char *facility_id;
	PGresult *res = NULL;
	enum db_status st;

	if (!scope_list(ctx, &facility_id))
		return;
	/* A list may lag: a replica's, when it holds the caller's writes. */
	if ((st = list(db_reader(ctx->db), facility_id, &res)) ==
	    DB_UNAVAILABLE)
		st = list(ctx->db, facility_id, &res);
	answer_rows(ctx, st, res);
	PQclear(res);
}

void
scope_write_error(struct app_ctx *ctx, enum db_status st, const char *conflict)
{
	if (st == DB_CONFLICT)
		http_error(ctx->resp, 409, "%s", conflict);
	else if (st == DB_FOREIGN_KEY)
		http_error(ctx->resp, 400, "facility_id names no facility");
	else
		app_db_error(ctx, st);
}

bool
scope_known(struct app_ctx *ctx, enum db_status st, bool found,
	    const char *facility_id, const char *what)
{
	if (st != DB_OK) {
		app_db_error(ctx, st);
		return false;
	}
	if (!found) {
		http_error(ctx->resp, 404, "%s not found", what);
		return false;
	}
	return scope_check(ctx, facility_id);
}

bool
scope_found(struct app_ctx *ctx, enum db_status st, const PGresult *rows,
	    const char *what)
{
	int col = st == DB_OK ? PQfnumber(rows, "facility_id") : -1;
	bool found = st == DB_OK && PQntuples(rows) > 0;

	return scope_known(ctx, st, found,
			   found && col >= 0 && !PQgetisnull(rows, 0, col)
				   ? PQgetvalue(rows, 0, col)
				   : NULL,
			   what);
}

bool
scope_owned(struct app_ctx *ctx, scope_reader read, const char *what)
{
	PGresult *res = NULL;
	enum db_status st = read(ctx->db, ctx->params[0], &res);
	bool mine = scope_found(ctx, st, res, what);

	PQclear(res);
	return mine;
}
