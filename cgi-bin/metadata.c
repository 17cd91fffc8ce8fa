/*
 * metadata - FastCGI program for /api/v1/metadata (doc/queries.md).
 */
#include "config.h"

#include "web/app.h"
#include "api/metadata.h"

static const struct route routes[] = {
	{"GET", "/api/v1/metadata/sessions", ROUTE_JWT, ROLE_USER, NULL,
	 metadata_sessions_list},
	{"GET", "/api/v1/metadata/sessions/{id}", ROUTE_JWT, ROLE_USER, NULL,
	 metadata_session_get},
	{"GET", "/api/v1/metadata/sessions/{id}/streams/{n}/samples", ROUTE_JWT,
	 ROLE_USER, NULL, metadata_samples},
};

int
main(void)
{
	return app_main("metadata", routes, sizeof(routes) / sizeof(routes[0]),
			app_store_needed);
}
