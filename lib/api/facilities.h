/* SPDX-License-Identifier: MIT */
/*
 * facilities.h - the facilities (tenants) and their endpoints (doc/api.md
 * "Facilities").  Every endpoint is for a super_admin only: the route table
 * asks for ROLE_SUPER_ADMIN, so anyone else gets 403 before a handler runs.
 *
 *   GET    /api/v1/facilities       200 Facility[], oldest first
 *   POST   /api/v1/facilities       200 Facility; 409 slug exists
 *   GET    /api/v1/facilities/{id}  200 Facility; 404
 *   PATCH  /api/v1/facilities/{id}  200 Facility; 404
 *   DELETE /api/v1/facilities/{id}  204, with all its rows and stored
 *                                    objects ("{id}/..."); 404
 *
 * A Facility is {id, name, slug, description, is_active, created_at,
 * updated_at}; description is null when none was given.
 *
 * A facility's storage (doc/storage.md "Quotas and retention"):
 *
 *   GET   /api/v1/facilities/{id}/storage  any user of the facility, a
 *                                          super_admin any: 200
 *                                          FacilityStorage; 403; 404
 *   PATCH /api/v1/facilities/{id}/storage  super_admin: {quota_bytes?,
 *                                          keep_samples_days?,
 *                                          keep_uploads_days?}, each null
 *                                          for no limit; 200; 400; 404
 *
 * The SQL is lib/domain/facility's.
 *
 * A FacilityStorage is {facility_id, quota_bytes, used_bytes,
 * upload_bytes, sample_bytes, keep_samples_days, keep_uploads_days,
 * updated_at}: the limits (null: none) and what is stored now, in bytes.
 */
#ifndef XMHUB_FACILITIES_H
#define XMHUB_FACILITIES_H

#include "web/app.h"

#define FACILITY_NAME_MAX 200	     /* bytes of a name */
#define FACILITY_DESC_MAX 4000	     /* bytes of a description */
#define FACILITY_KEEP_DAYS_MAX 36500 /* keep_*_days, as sql/019 checks */

/* The handlers, in the order of the table above. */
void facilities_list(struct app_ctx *ctx);
void facilities_post(struct app_ctx *ctx);
void facilities_get(struct app_ctx *ctx);
void facilities_patch(struct app_ctx *ctx);
void facilities_delete(struct app_ctx *ctx);
void facilities_storage_get(struct app_ctx *ctx);
void facilities_storage_patch(struct app_ctx *ctx);

#endif
