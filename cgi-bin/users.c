/* SPDX-License-Identifier: MIT */
/*
 * users - FastCGI program for /api/v1/users (facility_admin or higher;
 * clearing a login throttle: super_admin).
 */
#include "config.h"

#include "web/app.h"
#include "api/users.h"

#define FA ROUTE_JWT, ROLE_FACILITY_ADMIN, NULL

static const struct route routes[] = {
	{"GET", "/api/v1/users", FA, users_list},
	{"POST", "/api/v1/users", FA, users_post},
	{"GET", "/api/v1/users/{id}", FA, users_get},
	{"PATCH", "/api/v1/users/{id}", FA, users_patch},
	{"DELETE", "/api/v1/users/{id}", FA, users_delete},
	{"DELETE", "/api/v1/users/{id}/login-throttle", ROUTE_JWT,
	 ROLE_SUPER_ADMIN, NULL, users_unthrottle},
};

int
main(void)
{
	return app_main("users", routes, sizeof(routes) / sizeof(routes[0]),
			NULL);
}
