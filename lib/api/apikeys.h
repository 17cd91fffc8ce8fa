/* SPDX-License-Identifier: MIT */
/*
 * apikeys.h - platform API keys: their administration (/api/v1/api-keys),
 * the authentication of device requests (X-Api-Key) and /api/v1/ping.
 *
 * Keys are made by lib/core/auth (auth_api_key_new); only their SHA-256 is
 * stored (doc/auth.md).  Decisions (doc/api.md "API keys"): a key is
 * accepted when it is active, not expired and its facility is active;
 * every accepted request sets last_used_at; a route's scope missing from
 * the key is 403; revocation (DELETE) keeps the row with is_active false.
 */
#ifndef XMHUB_APIKEYS_H
#define XMHUB_APIKEYS_H

#include "domain/apikey.h"
#include "web/app.h"

/* GET /api/v1/api-keys: the keys of the caller's facility (a
 * super_admin: all, or ?facility_id=), never the key or its hash. */
void apikeys_list(struct app_ctx *ctx);

/* POST /api/v1/api-keys: {name, scopes?, expires_at?, facility_id?};
 * 200 with the creation object, the plaintext key included. */
void apikeys_post(struct app_ctx *ctx);

/* DELETE /api/v1/api-keys/{id}: revokes (is_active false); 204. */
void apikeys_delete(struct app_ctx *ctx);

/* GET /api/v1/ping (API key, any scope): 200 {"pong":true,
 * "api_key_name":..., "facility_id":...}. */
void apikeys_ping(struct app_ctx *ctx);

#endif
