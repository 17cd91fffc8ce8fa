/* SPDX-License-Identifier: MIT */
/*
 * health - FastCGI program for /api/health (liveness, readiness).
 */
#include "config.h"

#include "web/app.h"
#include "api/health.h"

static const struct route routes[] = {
	{"GET", "/api/health", ROUTE_PUBLIC, 0, NULL, health_live},
	{"GET", "/api/health/ready", ROUTE_PUBLIC, 0, NULL, health_ready},
};

int
main(void)
{
	return app_main("health", routes, sizeof(routes) / sizeof(routes[0]),
			health_init);
}
