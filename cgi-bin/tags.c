/* SPDX-License-Identifier: MIT */
/*
 * tags - FastCGI program for /api/v1/tags.
 */
#include "config.h"

#include "web/app.h"
#include "api/tags.h"

static const struct route routes[] = {
	{"GET", "/api/v1/tags", ROUTE_JWT, ROLE_USER, NULL, tags_list},
	{"POST", "/api/v1/tags", ROUTE_JWT, ROLE_FACILITY_ADMIN, NULL,
	 tags_post},
	{"DELETE", "/api/v1/tags/{id}", ROUTE_JWT, ROLE_FACILITY_ADMIN, NULL,
	 tags_delete},
};

int
main(void)
{
	return app_main("tags", routes, sizeof(routes) / sizeof(routes[0]),
			NULL);
}
