/* SPDX-License-Identifier: MIT */
/*
 * devices - FastCGI program for /api/v1/devices.
 */
#include "config.h"

#include "web/app.h"
#include "api/devices.h"

static const struct route routes[] = {
	{"GET", "/api/v1/devices", ROUTE_JWT, ROLE_USER, NULL, devices_list},
	{"POST", "/api/v1/devices", ROUTE_JWT, ROLE_FACILITY_ADMIN, NULL,
	 devices_post},
	{"GET", "/api/v1/devices/{id}", ROUTE_JWT, ROLE_USER, NULL,
	 devices_get},
	{"PATCH", "/api/v1/devices/{id}", ROUTE_JWT, ROLE_FACILITY_ADMIN, NULL,
	 devices_patch},
};

int
main(void)
{
	return app_main("devices", routes, sizeof(routes) / sizeof(routes[0]),
			NULL);
}
