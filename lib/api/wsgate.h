/* SPDX-License-Identifier: MIT */
/*
 * wsgate.h - the checks of a WebSocket ingest request
 * (GET /api/v1/ingest/ws?session_id=...), made twice: by the lighttpd
 * FastCGI authorizer before the upgrade (cgi-bin/ingest-authorizer), so
 * that a refused request is a plain HTTP answer and websocketd spawns
 * nothing, and again by the ws binary itself (ws/ingest-ws) when it
 * starts, which also gives it the key's facility.  doc/websocket.md.
 */
#ifndef XMHUB_WSGATE_H
#define XMHUB_WSGATE_H

#include <stdbool.h>

#include "web/app.h"
#include "core/auth.h"
#include "codec/buf.h"
#include "core/db.h"
#include "core/slots.h"

#define WSGATE_SLOTS 2 /* shares a connection holds: facility, key */

/*
 * Checks the request of ctx, in this order: no query parameter other
 * than session_id (400: a key in the query string is refused, whatever
 * its name), the X-Api-Key header (401, 403 without the ingest scope,
 * 503; lib/api/apikeys), session_id present and a UUID (400), a session of
 * the key's facility (404) that is active (409), then a WebSocket share
 * of the facility (XMHUB_WS_PER_FACILITY) and one of the key
 * (XMHUB_WS_PER_KEY) taken into held (429 with Retry-After when either
 * is full; app_share()).  True with session_id filled (and ctx->who) and
 * both shares held, which the caller gives back (slots_release());
 * otherwise the answer is set in ctx->resp and none is held.
 */
bool wsgate_check(struct app_ctx *ctx, char session_id[AUTH_UUID_LEN + 1],
		  struct slot held[WSGATE_SLOTS]);

/* GET /api/v1/ingest/ws as a FastCGI authorizer: wsgate_check() (its
 * shares only tried: given back at once, so that a full share is a 429
 * before the upgrade), then 400 unless the request asks for a WebSocket
 * upgrade; 200 (the empty object) lets lighttpd go on to websocketd; any
 * other answer is final. */
void wsgate_authorize(struct app_ctx *ctx);

/*
 * wsgate_check() on a CGI environment (env: NAME=VALUE strings, as
 * websocketd gives its child), with db.  True with facility_id and
 * session_id filled and the connection's shares in held, for its life;
 * otherwise false with the JSON {"detail": ...} answer in *answer
 * (initialised here; the caller frees it either way).  Two connections
 * that both passed the authorizer for the last share race here: the
 * loser gets the 429's detail as its one message and is closed.
 */
bool wsgate_check_env(struct db *db, char **env,
		      char facility_id[AUTH_UUID_LEN + 1],
		      char session_id[AUTH_UUID_LEN + 1],
		      struct slot held[WSGATE_SLOTS], struct buf *answer);

#endif
