/* SPDX-License-Identifier: MIT */
/*
 * metadata.h - session queries and sample read-back
 * (/api/v1/metadata/..., JWT, any user).
 *
 * Tenant rules as everywhere (lib/web/scope): a user or facility_admin sees
 * the sessions of their facility and gets 403 for another's; a
 * super_admin sees all, lists filter with ?facility_id=.  The user's
 * description, with the limits and the paging of samples, is
 * doc/queries.md.
 */
#ifndef XMHUB_METADATA_H
#define XMHUB_METADATA_H

#include <stdbool.h>

#include "web/app.h"

#define METADATA_LIMIT_DEFAULT 10000 /* samples or buckets per answer */
#define METADATA_LIMIT_MAX 100000
/* An answer stops before the sample that takes its body past this. */
#define METADATA_BODY_MAX (32u << 20)
/* Budget of the chunks one read holds open at once (lib/domain/chunks). */
#define METADATA_CHUNK_MEMORY (256u << 20)

/* GET /api/v1/metadata/sessions: the pagination envelope of Ingest
 * sessions with their streams, newest first; ?page, ?per_page (1-100),
 * ?status, ?device_id, ?facility_id (super_admin). */
void metadata_sessions_list(struct app_ctx *ctx);

/* GET /api/v1/metadata/sessions/{id}: the session with its streams;
 * 403 another facility's, 404. */
void metadata_session_get(struct app_ctx *ctx);

/* GET /api/v1/metadata/sessions/{id}/streams/{n}/samples: the samples
 * of stream_index n in time order (json or csv), or with ?bucket_us
 * per-bucket aggregates of a numeric stream. */
void metadata_samples(struct app_ctx *ctx);

#endif
