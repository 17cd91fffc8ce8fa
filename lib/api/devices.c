/* SPDX-License-Identifier: MIT */
/*
 * devices.c - device registration.
 */
#include "config.h"

#include <stdio.h>

#include "web/dbjson.h"
#include "api/devices.h"
#include "web/scope.h"
#include "web/valid.h"

#define COLUMNS                                                                \
	"id, facility_id, device_uid, name, hardware_version, "                \
	"firmware_version, is_active, last_seen_at, created_at"

static const char list_sql[] =
	"SELECT " COLUMNS " FROM devices "
	"WHERE $1::uuid IS NULL OR facility_id = $1::uuid "
	"ORDER BY created_at, id";

void
devices_list(struct app_ctx *ctx)
{
	scope_list_rows(ctx, list_sql);
}

enum { P_UID, P_NAME, P_HW, P_FW, P_FACILITY, NPOST };

static const struct valid_field post_fields[NPOST] = {
	[P_UID] = {.name = "device_uid",
		   .type = VALID_INT,
		   .flags = VALID_REQUIRED,
		   .min = 0,
		   .max = 4294967295LL},
	[P_NAME] = {.name = "name",
		    .type = VALID_STRING,
		    .flags = VALID_REQUIRED,
		    .min = 1,
		    .max = DEVICES_NAME_MAX},
	[P_HW] = {.name = "hardware_version",
		  .type = VALID_STRING,
		  .flags = VALID_NULLABLE,
		  .min = 0,
		  .max = DEVICES_VERSION_MAX},
	[P_FW] = {.name = "firmware_version",
		  .type = VALID_STRING,
		  .flags = VALID_NULLABLE,
		  .min = 0,
		  .max = DEVICES_VERSION_MAX},
	[P_FACILITY] = {.name = "facility_id",
			.type = VALID_UUID,
			.flags = VALID_NULLABLE},
};

static const char insert_sql[] =
	"INSERT INTO devices (facility_id, device_uid, name, "
	"hardware_version, firmware_version) "
	"VALUES ($1::uuid, $2::bigint, $3::text, $4::text, $5::text) "
	"RETURNING " COLUMNS;

void
devices_post(struct app_ctx *ctx)
{
	struct valid_value v[NPOST];
	const char *params[5];
	char uid[24], detail[80];
	PGresult *res = NULL;
	json_object *body;
	enum db_status st;

	if ((body = valid_json_body(ctx->req, post_fields, NPOST, v,
				    ctx->resp)) == NULL)
		return;
	if (!scope_create(ctx, &v[P_FACILITY], &params[0]))
		goto out;
	snprintf(uid, sizeof(uid), "%lld", v[P_UID].num);
	params[1] = uid;
	params[2] = v[P_NAME].str;
	params[3] = valid_text(&v[P_HW]);
	params[4] = valid_text(&v[P_FW]);
	if ((st = db_query(ctx->db, &res, insert_sql, 5, params)) == DB_OK)
		http_json(ctx->resp, 201, dbjson_row(res, 0));
	else {
		snprintf(detail, sizeof(detail),
			 "device_uid %s is already registered in this facility",
			 uid);
		scope_write_error(ctx, st, detail);
	}
out:
	PQclear(res);
	json_object_put(body);
}

static const char get_sql[] =
	"SELECT " COLUMNS " FROM devices WHERE id = $1::uuid";

void
devices_get(struct app_ctx *ctx)
{
	PGresult *res;

	if (!scope_fetch(ctx, get_sql, 1, "device", &res))
		return;
	http_json(ctx->resp, 200, dbjson_row(res, 0));
	PQclear(res);
}

enum { U_NAME, U_HW, U_FW, U_ACTIVE, NPATCH };

static const struct valid_field patch_fields[NPATCH] = {
	[U_NAME] = {.name = "name",
		    .type = VALID_STRING,
		    .min = 1,
		    .max = DEVICES_NAME_MAX},
	[U_HW] = {.name = "hardware_version",
		  .type = VALID_STRING,
		  .flags = VALID_NULLABLE,
		  .min = 0,
		  .max = DEVICES_VERSION_MAX},
	[U_FW] = {.name = "firmware_version",
		  .type = VALID_STRING,
		  .flags = VALID_NULLABLE,
		  .min = 0,
		  .max = DEVICES_VERSION_MAX},
	[U_ACTIVE] = {.name = "is_active", .type = VALID_BOOL},
};

/* Fields not given keep their values; the versions may be set to null. */
static const char update_sql[] =
	"UPDATE devices SET name = COALESCE($2::text, name), "
	"hardware_version = CASE WHEN $3::boolean THEN $4::text "
	"ELSE hardware_version END, "
	"firmware_version = CASE WHEN $5::boolean THEN $6::text "
	"ELSE firmware_version END, "
	"is_active = COALESCE($7::boolean, is_active) "
	"WHERE id = $1::uuid RETURNING " COLUMNS;

void
devices_patch(struct app_ctx *ctx)
{
	struct valid_value v[NPATCH];
	const char *params[7];
	PGresult *res = NULL;
	json_object *body;
	enum db_status st;

	if ((body = valid_json_body(ctx->req, patch_fields, NPATCH, v,
				    ctx->resp)) == NULL)
		return;
	if (!scope_fetch(ctx, get_sql, 1, "device", &res))
		goto out;
	PQclear(res);
	res = NULL;
	params[0] = ctx->params[0];
	params[1] = valid_text(&v[U_NAME]);
	params[2] = v[U_HW].present ? "true" : "false";
	params[3] = valid_text(&v[U_HW]);
	params[4] = v[U_FW].present ? "true" : "false";
	params[5] = valid_text(&v[U_FW]);
	params[6] =
		v[U_ACTIVE].present ? (v[U_ACTIVE].b ? "true" : "false") : NULL;
	if ((st = db_query(ctx->db, &res, update_sql, 7, params)) != DB_OK)
		app_db_error(ctx, st);
	else if (PQntuples(res) == 0)
		http_error(ctx->resp, 404, "device not found");
	else
		http_json(ctx->resp, 200, dbjson_row(res, 0));
out:
	PQclear(res);
	json_object_put(body);
}
