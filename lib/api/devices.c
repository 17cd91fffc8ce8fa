/* SPDX-License-Identifier: MIT */
/*
 * devices.c - device registration.
 */
#include "config.h"

#include <stdio.h>

#include "domain/device.h"
#include "web/dbjson.h"
#include "api/devices.h"
#include "web/scope.h"
#include "web/valid.h"

void
devices_list(struct app_ctx *ctx)
{
	scope_list_answer(ctx, device_list);
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

void
devices_post(struct app_ctx *ctx)
{
	struct valid_value v[NPOST];
	struct device_new d;
	char detail[80];
	PGresult *res = NULL;
	json_object *body;
	enum db_status st;

	if ((body = valid_json_body(ctx->req, post_fields, NPOST, v,
				    ctx->resp)) == NULL)
		return;
	if (!scope_create(ctx, &v[P_FACILITY], &d.facility_id))
		goto out;
	d.device_uid = v[P_UID].num;
	d.name = v[P_NAME].str;
	d.hardware_version = valid_text(&v[P_HW]);
	d.firmware_version = valid_text(&v[P_FW]);
	if ((st = device_create(ctx->db, &d, &res)) == DB_OK)
		http_json(ctx->resp, 201, dbjson_row(res, 0));
	else {
		snprintf(detail, sizeof(detail),
			 "device_uid %lld is already registered in this "
			 "facility",
			 d.device_uid);
		scope_write_error(ctx, st, detail);
	}
out:
	PQclear(res);
	json_object_put(body);
}

void
devices_get(struct app_ctx *ctx)
{
	PGresult *res = NULL;
	enum db_status st = device_get(ctx->db, ctx->params[0], &res);

	if (scope_found(ctx, st, res, "device"))
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

void
devices_patch(struct app_ctx *ctx)
{
	struct valid_value v[NPATCH];
	struct device_change c;
	PGresult *res = NULL;
	json_object *body;
	enum db_status st;

	if ((body = valid_json_body(ctx->req, patch_fields, NPATCH, v,
				    ctx->resp)) == NULL)
		return;
	st = device_get(ctx->db, ctx->params[0], &res);
	if (!scope_found(ctx, st, res, "device"))
		goto out;
	PQclear(res);
	res = NULL;
	c.name = valid_text(&v[U_NAME]);
	c.set_hardware_version = v[U_HW].present;
	c.hardware_version = valid_text(&v[U_HW]);
	c.set_firmware_version = v[U_FW].present;
	c.firmware_version = valid_text(&v[U_FW]);
	c.is_active = v[U_ACTIVE].present ? v[U_ACTIVE].b : -1;
	if ((st = device_update(ctx->db, ctx->params[0], &c, &res)) != DB_OK)
		app_db_error(ctx, st);
	else if (PQntuples(res) == 0)
		http_error(ctx->resp, 404, "device not found");
	else
		http_json(ctx->resp, 200, dbjson_row(res, 0));
out:
	PQclear(res);
	json_object_put(body);
}
