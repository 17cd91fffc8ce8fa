/*
 * ingest - FastCGI program for /api/v1/ingest (devices: sessions and
 * their XMBP batches over HTTP).
 */
#include "config.h"

#include "web/app.h"
#include "api/ingestapi.h"

static const struct route routes[] = {
	{"POST", "/api/v1/ingest/sessions", ROUTE_API_KEY, 0, "ingest",
	 ingestapi_post_session},
	{"POST", "/api/v1/ingest/sessions/{id}/data", ROUTE_API_KEY, 0,
	 "ingest", ingestapi_post_data},
	{"POST", "/api/v1/ingest/sessions/{id}/close", ROUTE_API_KEY, 0,
	 "ingest", ingestapi_post_close},
};

int
main(void)
{
	return app_main("ingest", routes, sizeof(routes) / sizeof(routes[0]),
			NULL);
}
