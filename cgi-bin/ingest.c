/* SPDX-License-Identifier: MIT */
/*
 * ingest - FastCGI program for /api/v1/ingest (devices: sessions and
 * their XMBP batches over HTTP), with request threads and a group commit
 * (doc/ingest.md "Group commit").
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
	int rc = app_main_threads("ingest", routes,
				  sizeof(routes) / sizeof(routes[0]),
				  ingestapi_init, &ingestapi_threads);

	ingestapi_finish();
	return rc;
}
