/* SPDX-License-Identifier: MIT */
/*
 * transcode-jobs - FastCGI program for /api/v1/transcode-jobs.
 */
#include "config.h"

#include "web/app.h"
#include "api/transcodejobs.h"

static const struct route routes[] = {
	{"GET", "/api/v1/transcode-jobs", ROUTE_JWT, ROLE_USER, NULL,
	 transcodejobs_list},
	{"GET", "/api/v1/transcode-jobs/{id}", ROUTE_JWT, ROLE_USER, NULL,
	 transcodejobs_get},
	{"POST", "/api/v1/transcode-jobs/{id}/cancel", ROUTE_JWT,
	 ROLE_FACILITY_ADMIN, NULL, transcodejobs_cancel},
};

int
main(void)
{
	return app_main("transcode-jobs", routes,
			sizeof(routes) / sizeof(routes[0]), NULL);
}
