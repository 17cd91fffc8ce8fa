/* SPDX-License-Identifier: MIT */
/*
 * faceapi_keys.h - the face service's API keys (doc/face.md "API keys"): the
 * X-API-Key check of the public endpoints and their administration under
 * /api/v1/admin/api-keys.
 *
 * Keys are "face_" + 43 base62 digits (256 random bits, lib/core/auth's
 * generator), stored in plaintext in face_api_keys as the face API defines them
 * (always visible through the admin API), so the admin API shows them whenever
 * asked; only HTTP Basic admins can.  A revoked key (is_active false) is 403,
 * an unknown one 401; every accepted request adds one to request_count and sets
 * last_used_at.
 */
#ifndef XMHUB_FACEAPI_KEYS_H
#define XMHUB_FACEAPI_KEYS_H

#include <stdbool.h>

#include "web/app.h"

/*
 * Checks X-API-Key when FACE_API_API_KEY_ENABLED (else true at once):
 * 401 missing or unknown, 403 revoked, 503/500 on database failure; on
 * success counts the use and writes the key's id into key_id (37 bytes;
 * "" when keys are off).  False with the answer set.
 */
bool faceapi_keys_check(struct app_ctx *ctx, char key_id[37]);

/*
 * The same check without counting a use: what the web server asks before
 * it reads a body (faceapi.h's hooks as a FastCGI authorizer, doc/face.md
 * "Bodies read after the key"); the program counts the use when it runs.
 */
bool faceapi_keys_valid(struct app_ctx *ctx);

/* POST /api/v1/admin/api-keys {name}: 201 with the key object. */
void faceapi_keys_post(struct app_ctx *ctx);

/* GET /api/v1/admin/api-keys?page&per_page: paginated key objects. */
void faceapi_keys_list(struct app_ctx *ctx);

/* GET /api/v1/admin/api-keys/{id}: the key object, or 404. */
void faceapi_keys_get(struct app_ctx *ctx);

/* PATCH /api/v1/admin/api-keys/{id} {name?, is_active?}: the key. */
void faceapi_keys_patch(struct app_ctx *ctx);

/* DELETE /api/v1/admin/api-keys/{id}: 204, the key is gone. */
void faceapi_keys_delete(struct app_ctx *ctx);

#endif
