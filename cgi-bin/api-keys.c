/* SPDX-License-Identifier: MIT */
/*
 * api-keys - FastCGI program for /api/v1/api-keys (key administration)
 * and /api/v1/ping (a device checks its key).
 */
#include "config.h"

#include "api/apikeys.h"
#include "web/app.h"

static const struct route routes[] = {
	{"GET", "/api/v1/api-keys", ROUTE_JWT, ROLE_FACILITY_ADMIN, NULL,
	 apikeys_list},
	{"POST", "/api/v1/api-keys", ROUTE_JWT, ROLE_FACILITY_ADMIN, NULL,
	 apikeys_post},
	{"DELETE", "/api/v1/api-keys/{id}", ROUTE_JWT, ROLE_FACILITY_ADMIN,
	 NULL, apikeys_delete},
	{"GET", "/api/v1/ping", ROUTE_API_KEY, 0, NULL, apikeys_ping},
};

int
main(void)
{
	return app_main("api-keys", routes, sizeof(routes) / sizeof(routes[0]),
			NULL);
}
