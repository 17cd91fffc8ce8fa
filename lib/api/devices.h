/* SPDX-License-Identifier: MIT */
/*
 * devices.h - device registration (/api/v1/devices).
 *
 * A device belongs to one facility and is named there by its device_uid
 * (u32, unique within the facility).  Any user of the facility reads its
 * devices; a facility_admin or higher registers and changes them.  The
 * ingest endpoints also create devices, on their own.
 */
#ifndef XMHUB_DEVICES_H
#define XMHUB_DEVICES_H

#include "web/app.h"

#define DEVICES_NAME_MAX 200	/* bytes of a device's name */
#define DEVICES_VERSION_MAX 100 /* bytes of hardware/firmware_version */

/* GET /api/v1/devices: the devices of the caller's facility (a
 * super_admin: all, or ?facility_id=), oldest first. */
void devices_list(struct app_ctx *ctx);

/* POST /api/v1/devices: {device_uid, name, hardware_version?,
 * firmware_version?, facility_id?}; 201 Device, 409 when the device_uid
 * is taken in the facility. */
void devices_post(struct app_ctx *ctx);

/* GET /api/v1/devices/{id}: 200 Device; 403 another facility's; 404. */
void devices_get(struct app_ctx *ctx);

/* PATCH /api/v1/devices/{id}: {name?, hardware_version?,
 * firmware_version?, is_active?} (the versions may be null to clear
 * them); 200 Device; 403; 404. */
void devices_patch(struct app_ctx *ctx);

#endif
