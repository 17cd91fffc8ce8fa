/* SPDX-License-Identifier: MIT */
/*
 * ingest-authorizer - FastCGI authorizer (lighttpd "mode" =>
 * "authorizer") in front of the WebSocket ingest: checks the key and
 * the session before the upgrade, so that a refused request is a plain
 * HTTP answer and websocketd never spawns a child for it.
 */
#include "config.h"

#include "web/app.h"
#include "api/wsgate.h"

/* Public here: wsgate_check() authenticates, after refusing a key in
 * the query string.  lighttpd gives an authorizer no SCRIPT_NAME, so its
 * path is empty (ws.conf sends it /api/v1/ingest/ws only); the full path
 * is for a server that calls it as a plain responder. */
static const struct route routes[] = {
	{"GET", "", ROUTE_PUBLIC, 0, NULL, wsgate_authorize},
	{"GET", "/api/v1/ingest/ws", ROUTE_PUBLIC, 0, NULL, wsgate_authorize},
};

int
main(void)
{
	return app_main("ingest-authorizer", routes,
			sizeof(routes) / sizeof(routes[0]), NULL);
}
