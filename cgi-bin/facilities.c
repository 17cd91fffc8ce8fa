/* SPDX-License-Identifier: MIT */
/*
 * facilities - FastCGI program for /api/v1/facilities (super_admin; a
 * facility's storage is read by its users too).
 */
#include "config.h"

#include "web/app.h"
#include "api/facilities.h"

#define SA ROUTE_JWT, ROLE_SUPER_ADMIN, NULL

static const struct route routes[] = {
	{"GET", "/api/v1/facilities", SA, facilities_list},
	{"POST", "/api/v1/facilities", SA, facilities_post},
	{"GET", "/api/v1/facilities/{id}", SA, facilities_get},
	{"PATCH", "/api/v1/facilities/{id}", SA, facilities_patch},
	{"DELETE", "/api/v1/facilities/{id}", SA, facilities_delete},
	{"GET", "/api/v1/facilities/{id}/storage", ROUTE_JWT, ROLE_USER, NULL,
	 facilities_storage_get},
	{"PATCH", "/api/v1/facilities/{id}/storage", SA,
	 facilities_storage_patch},
};

int
main(void)
{
	return app_main("facilities", routes,
			sizeof(routes) / sizeof(routes[0]), NULL);
}
