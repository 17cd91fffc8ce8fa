/* SPDX-License-Identifier: MIT */
/*
 * alarms - FastCGI program for /api/v1/alarm-rules, /api/v1/alarms,
 * /api/v1/webhooks and /api/v1/webhook-deliveries (doc/alarms.md).
 * Reading is for every user of the facility, acknowledging too; rules,
 * endpoints and clearing are its admins'.
 */
#include "config.h"

#include "web/app.h"
#include "api/alarmsapi.h"

static const struct route routes[] = {
	{"GET", "/api/v1/alarm-rules", ROUTE_JWT, ROLE_USER, NULL,
	 alarmsapi_rules},
	{"POST", "/api/v1/alarm-rules", ROUTE_JWT, ROLE_FACILITY_ADMIN, NULL,
	 alarmsapi_rule_post},
	{"PATCH", "/api/v1/alarm-rules/{id}", ROUTE_JWT, ROLE_FACILITY_ADMIN,
	 NULL, alarmsapi_rule_patch},
	{"DELETE", "/api/v1/alarm-rules/{id}", ROUTE_JWT, ROLE_FACILITY_ADMIN,
	 NULL, alarmsapi_rule_delete},
	{"GET", "/api/v1/alarms", ROUTE_JWT, ROLE_USER, NULL, alarmsapi_alarms},
	{"POST", "/api/v1/alarms/{id}/acknowledge", ROUTE_JWT, ROLE_USER, NULL,
	 alarmsapi_ack},
	{"POST", "/api/v1/alarms/{id}/clear", ROUTE_JWT, ROLE_FACILITY_ADMIN,
	 NULL, alarmsapi_clear},
	{"GET", "/api/v1/webhooks", ROUTE_JWT, ROLE_FACILITY_ADMIN, NULL,
	 alarmsapi_webhooks},
	{"POST", "/api/v1/webhooks", ROUTE_JWT, ROLE_FACILITY_ADMIN, NULL,
	 alarmsapi_webhook_post},
	{"PATCH", "/api/v1/webhooks/{id}", ROUTE_JWT, ROLE_FACILITY_ADMIN, NULL,
	 alarmsapi_webhook_patch},
	{"DELETE", "/api/v1/webhooks/{id}", ROUTE_JWT, ROLE_FACILITY_ADMIN,
	 NULL, alarmsapi_webhook_delete},
	{"GET", "/api/v1/webhook-deliveries", ROUTE_JWT, ROLE_FACILITY_ADMIN,
	 NULL, alarmsapi_deliveries},
};

int
main(void)
{
	return app_main("alarms", routes, sizeof(routes) / sizeof(routes[0]),
			NULL);
}
