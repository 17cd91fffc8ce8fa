/* SPDX-License-Identifier: MIT */
/*
 * streams - FastCGI program for /api/v1/streams.
 */
#include "config.h"

#include "web/app.h"
#include "api/streams.h"

static const struct route routes[] = {
	/* <audio src> of the console: a signed URL too (doc/auth.md) */
	{"GET", "/api/v1/streams/{id}", ROUTE_JWT_OR_SIGNED, ROLE_USER, NULL,
	 streams_get},
};

int
main(void)
{
	return app_main("streams", routes, sizeof(routes) / sizeof(routes[0]),
			app_store_needed);
}
