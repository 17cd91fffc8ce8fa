/* SPDX-License-Identifier: MIT */
/*
 * face-video - FastCGI program of the face service's video endpoints
 * (doc/face-video.md): POST /api/v1/mask-video and
 * /api/v1/video-jobs/{id}[/result].  It loads no model: the runner
 * jobs/face-video.c does the work.
 */
#include "config.h"

#include "face/service/faceapi.h"
#include "face/service/faceapi_video.h"

#define P ROUTE_PUBLIC

static const struct route routes[] = {
	{"POST", "/api/v1/mask-video", P, 0, NULL, faceapi_video_post},
	{"GET", "/api/v1/video-jobs/{id}", P, 0, NULL, faceapi_video_get},
	{"DELETE", "/api/v1/video-jobs/{id}", P, 0, NULL, faceapi_video_cancel},
	{"GET", "/api/v1/video-jobs/{id}/result", P, 0, NULL,
	 faceapi_video_result},
};

int
main(void)
{
	return app_main_hooks("face-video", routes,
			      sizeof(routes) / sizeof(routes[0]),
			      &faceapi_admin);
}
