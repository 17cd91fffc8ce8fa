/* SPDX-License-Identifier: MIT */
/*
 * auth - FastCGI program for /api/auth (login, refresh, logout, me).
 */
#include "config.h"

#include "web/app.h"
#include "api/login.h"
#include "api/mediaurls.h"

static const struct route routes[] = {
	{"POST", "/api/auth/login", ROUTE_PUBLIC, 0, NULL, login_login},
	{"POST", "/api/auth/refresh", ROUTE_PUBLIC, 0, NULL, login_refresh},
	{"POST", "/api/auth/logout", ROUTE_PUBLIC, 0, NULL, login_logout},
	{"GET", "/api/auth/me", ROUTE_JWT, ROLE_USER, NULL, login_me},
	{"POST", "/api/auth/media-url", ROUTE_JWT, ROLE_USER, NULL,
	 mediaurls_post},
};

int
main(void)
{
	return app_main("auth", routes, sizeof(routes) / sizeof(routes[0]),
			login_init);
}
