/* SPDX-License-Identifier: MIT */
/*
 * tags.h - tags of a facility (/api/v1/tags).
 *
 * Tag names are unique within a facility (case counts); colors are
 * #RRGGBB or absent.  Deleting a tag removes its links to uploads (the
 * schema's cascade); the uploads stay.
 */
#ifndef XMHUB_TAGS_H
#define XMHUB_TAGS_H

#include "web/app.h"

#define TAGS_NAME_MAX 100 /* bytes of a tag's name */

/* GET /api/v1/tags: the tags of the caller's facility (a super_admin:
 * all, or ?facility_id=), by name. */
void tags_list(struct app_ctx *ctx);

/* POST /api/v1/tags: {name, color?, facility_id?}; 200 Tag; 409 when the
 * name is taken in the facility. */
void tags_post(struct app_ctx *ctx);

/* DELETE /api/v1/tags/{id}: 204; 403 another facility's; 404. */
void tags_delete(struct app_ctx *ctx);

#endif
