/* SPDX-License-Identifier: MIT */
/*
 * metrics - FastCGI program for /api/metrics (Prometheus text format).
 */
#include "config.h"

#include "web/app.h"
#include "api/metricsapi.h"

static const struct route routes[] = {
	{"GET", "/api/metrics", ROUTE_PUBLIC, 0, NULL, metricsapi_get},
};

int
main(void)
{
	return app_main("metrics", routes, sizeof(routes) / sizeof(routes[0]),
			metricsapi_init);
}
