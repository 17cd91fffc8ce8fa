/*
 * face - FastCGI program of the face service's public endpoints
 * (spec 3): /health, /api/v1/detect, /api/v1/mask.
 */
#include "config.h"

#include "face/service/faceapi.h"
#include "face/service/faceapi_run.h"

static const struct route routes[] = {
	{"GET", "/health", ROUTE_PUBLIC, 0, NULL, faceapi_health},
	{"POST", "/api/v1/detect", ROUTE_PUBLIC, 0, NULL, faceapi_detect},
	{"POST", "/api/v1/mask", ROUTE_PUBLIC, 0, NULL, faceapi_mask},
};

int
main(void)
{
	return faceapi_main("face", FACEAPI_PUBLIC, routes,
			    sizeof(routes) / sizeof(routes[0]));
}
