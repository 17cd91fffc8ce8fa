/* SPDX-License-Identifier: MIT */
/*
 * face - FastCGI program of the face service's public endpoints
 * (doc/face.md): /health, /api/v1/detect, /api/v1/mask.  Run with
 * FACEAPI_WORKER_ARG it is the image worker each of its processes starts
 * (lib/face/service/faceapi_worker.h).
 */
#include "config.h"

#include <string.h>

#include "face/service/faceapi.h"
#include "face/service/faceapi_run.h"
#include "face/service/faceapi_worker.h"

static const struct route routes[] = {
	{"GET", "/health", ROUTE_PUBLIC, 0, NULL, faceapi_health},
	{"GET", "/metrics", ROUTE_PUBLIC, 0, NULL, faceapi_metrics},
	{"POST", "/api/v1/detect", ROUTE_PUBLIC, 0, NULL, faceapi_detect},
	{"POST", "/api/v1/mask", ROUTE_PUBLIC, 0, NULL, faceapi_mask},
};

int
main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], FACEAPI_WORKER_ARG) == 0)
		return faceapi_worker_main();
	return app_main_hooks("face", routes,
			      sizeof(routes) / sizeof(routes[0]),
			      &faceapi_public);
}
