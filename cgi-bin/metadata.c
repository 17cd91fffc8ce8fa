/* SPDX-License-Identifier: MIT */
/*
 * metadata - FastCGI program for /api/v1/metadata (doc/queries.md).
 */
#include "config.h"

#include <string.h>

#include "web/app.h"
#include "api/audioapi.h"
#include "api/metadata.h"
#include "core/spectro.h"

static const struct route routes[] = {
	{"GET", "/api/v1/metadata/sessions", ROUTE_JWT, ROLE_USER, NULL,
	 metadata_sessions_list},
	{"GET", "/api/v1/metadata/sessions/{id}", ROUTE_JWT, ROLE_USER, NULL,
	 metadata_session_get},
	{"GET", "/api/v1/metadata/sessions/{id}/streams/{n}/samples",
	 ROUTE_JWT_OR_SIGNED, ROLE_USER, NULL, metadata_samples},
	{"GET", "/api/v1/metadata/sessions/{id}/streams/{n}/spectrogram.png",
	 ROUTE_JWT_OR_SIGNED, ROLE_USER, NULL, audioapi_spectrogram},
};

int
main(int argc, char **argv)
{
	/* The spectrogram's child (lib/core/spectro.h): before any setting
	 * is read, so that what parses the audio holds no secret. */
	if (argc > 1 && strcmp(argv[1], SPECTRO_ARG) == 0)
		return spectro_main(argc, argv);
	return app_main("metadata", routes, sizeof(routes) / sizeof(routes[0]),
			app_store_needed);
}
