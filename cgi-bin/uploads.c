/* SPDX-License-Identifier: MIT */
/*
 * uploads - FastCGI program for /api/v1/uploads.
 */
#include "config.h"

#include <string.h>

#include "web/app.h"
#include "api/uploads.h"
#include "api/uploadviews.h"
#include "core/spectro.h"

#define ANY_USER ROUTE_JWT, ROLE_USER, NULL
/* What a browser fetches by itself (<img src>) may carry a signed URL. */
#define MEDIA ROUTE_JWT_OR_SIGNED, ROLE_USER, NULL

static const struct route routes[] = {
	{"POST", "/api/v1/uploads", ROUTE_API_KEY, 0, "upload", uploads_post},
	{"GET", "/api/v1/uploads", ANY_USER, uploads_list},
	{"GET", "/api/v1/uploads/{id}", ANY_USER, uploads_get},
	{"PATCH", "/api/v1/uploads/{id}", ANY_USER, uploads_patch},
	{"DELETE", "/api/v1/uploads/{id}", ANY_USER, uploads_delete},
	{"POST", "/api/v1/uploads/{id}/retranscode", ANY_USER,
	 uploads_retranscode},
	{"GET", "/api/v1/uploads/{id}/spectrogram.png", MEDIA,
	 uploadviews_spectrogram},
	{"GET", "/api/v1/uploads/{id}/waveform.json", MEDIA,
	 uploadviews_waveform},
};

int
main(int argc, char **argv)
{
	/* The spectrogram's child (lib/core/spectro.h): before any setting
	 * is read, so that what parses the upload holds no secret. */
	if (argc > 1 && strcmp(argv[1], SPECTRO_ARG) == 0)
		return spectro_main(argc, argv);
	return app_main("uploads", routes, sizeof(routes) / sizeof(routes[0]),
			uploads_init);
}
