/* SPDX-License-Identifier: MIT */
/*
 * wsgate.c - the checks of a WebSocket ingest request (see wsgate.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <fcgiapp.h>

#include "web/authn.h"
#include "api/ingestapi.h"
#include "api/wsgate.h"

/*
 * The WebSocket shares of ctx's key and its facility into held (which
 * hold none before); false with the 429 (or 503) given and none held.
 */
static bool
shares(struct app_ctx *ctx, struct slot held[WSGATE_SLOTS])
{
	if (!app_share(ctx, "ws", ctx->who.facility_id, "XMHUB_WS_PER_FACILITY",
		       "WebSocket connections of a facility", &held[0]))
		return false;
	if (app_share(ctx, "ws-key", ctx->who.key_id, "XMHUB_WS_PER_KEY",
		      "WebSocket connections of an API key", &held[1]))
		return true;
	slots_release(&held[0]);
	return false;
}

bool
wsgate_check(struct app_ctx *ctx, char session_id[AUTH_UUID_LEN + 1],
	     struct slot held[WSGATE_SLOTS])
{
	const char *sid;
	char detail[256];
	enum ingest_status st;

	/* A key in the URL ends up in logs and proxies' histories: refuse
	 * it by refusing every parameter that is not ours. */
	for (size_t i = 0; i < ctx->req->nquery; i++) {
		if (strcmp(ctx->req->query[i].name, "session_id") == 0)
			continue;
		http_error(ctx->resp, 400,
			   "unknown query parameter: only session_id is "
			   "accepted (an API key goes in the X-Api-Key "
			   "header, never in the query string)");
		return false;
	}
	if (!authn_api_key(ctx->req, ctx->db, "ingest", &ctx->who, ctx->resp))
		return false;
	if ((sid = http_query(ctx->req, "session_id")) == NULL) {
		http_error(ctx->resp, 400, "session_id is required");
		return false;
	}
	if (!uuid_valid(sid, strlen(sid))) {
		http_error(ctx->resp, 400, "session_id is not a UUID");
		return false;
	}
	st = ingest_session_usable(ctx->db, ctx->who.facility_id, sid, detail,
				   sizeof(detail));
	if (st != INGEST_OK) {
		ingestapi_error(ctx->resp, st, detail);
		return false;
	}
	if (!shares(ctx, held))
		return false;
	snprintf(session_id, AUTH_UUID_LEN + 1, "%s", sid);
	return true;
}

void
wsgate_authorize(struct app_ctx *ctx)
{
	char sid[AUTH_UUID_LEN + 1];
	struct slot held[WSGATE_SLOTS] = {SLOTS_NONE, SLOTS_NONE};
	const char *up;

	if (!wsgate_check(ctx, sid, held))
		return;
	/* A free share was only seen here: the connection's program takes
	 * it for good (wsgate_check_env). */
	slots_release(&held[0]);
	slots_release(&held[1]);
	/* Else websocketd would answer a plain GET with a text/plain 404. */
	up = FCGX_GetParam("HTTP_UPGRADE", ctx->req->fcgi->envp);
	/* Apache's authorizer modules drop HTTP_UPGRADE; apache.conf passes
	 * it on as XMHUB_UPGRADE (SetEnvIf, not settable by a client). */
	if (up == NULL)
		up = FCGX_GetParam("XMHUB_UPGRADE", ctx->req->fcgi->envp);
	if (up == NULL || strcasecmp(up, "websocket") != 0) {
		http_error(ctx->resp, 400,
			   "a WebSocket upgrade is required (Upgrade: "
			   "websocket)");
		return;
	}
	http_json(ctx->resp, 200, json_object_new_object());
}

bool
wsgate_check_env(struct db *db, char **env, char facility_id[AUTH_UUID_LEN + 1],
		 char session_id[AUTH_UUID_LEN + 1],
		 struct slot held[WSGATE_SLOTS], struct buf *answer)
{
	FCGX_Request fcgi; /* only its parameters are read */
	struct http_req req;
	struct http_resp resp;
	struct app_ctx ctx;
	bool ok = false;

	memset(&fcgi, 0, sizeof(fcgi));
	fcgi.envp = env;
	if (app_request(&ctx, &req, &resp, &fcgi, db))
		ok = wsgate_check(&ctx, session_id, held);
	http_req_free(&req);
	if (ok)
		snprintf(facility_id, AUTH_UUID_LEN + 1, "%s",
			 ctx.who.facility_id);
	buf_init(answer, 0);
	if (!ok)
		buf_append(answer, resp.body.p, resp.body.len);
	http_resp_free(&resp);
	return ok;
}
