/*
 * uploads - FastCGI program for /api/v1/uploads.
 */
#include "config.h"

#include "web/app.h"
#include "api/uploads.h"

#define ANY_USER ROUTE_JWT, ROLE_USER, NULL

static const struct route routes[] = {
	{"POST", "/api/v1/uploads", ROUTE_API_KEY, 0, "upload", uploads_post},
	{"GET", "/api/v1/uploads", ANY_USER, uploads_list},
	{"GET", "/api/v1/uploads/{id}", ANY_USER, uploads_get},
	{"PATCH", "/api/v1/uploads/{id}", ANY_USER, uploads_patch},
	{"DELETE", "/api/v1/uploads/{id}", ANY_USER, uploads_delete},
	{"POST", "/api/v1/uploads/{id}/retranscode", ANY_USER,
	 uploads_retranscode},
};

int
main(void)
{
	return app_main("uploads", routes, sizeof(routes) / sizeof(routes[0]),
			uploads_init);
}
