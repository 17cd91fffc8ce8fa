/* SPDX-License-Identifier: MIT */
/*
 * face-admin - FastCGI program of the face service's admin endpoints
 * (doc/face.md "Admin authentication", HTTP Basic) and of the signed download
 * URLs of its filesystem store (/api/v1/files/..., authorised by their
 * signature).
 */
#include "config.h"

#include "face/service/faceapi.h"
#include "face/service/faceapi_admin.h"
#include "face/service/faceapi_keys.h"

/* HTTP Basic with FACE_API_ADMIN_USER/_PASSWORD, the IP lockout, and
 * storage required (501 without): faceapi.h. */
#define A ROUTE_BASIC

static const struct route routes[] = {
	{"GET", "/api/v1/admin/stats", A, 0, NULL, faceapi_admin_stats},
	{"GET", "/api/v1/admin/images", A, 0, NULL, faceapi_admin_images},
	{"GET", "/api/v1/admin/images/{id}", A, 0, NULL, faceapi_admin_image},
	{"DELETE", "/api/v1/admin/images/{id}", A, 0, NULL,
	 faceapi_admin_image_delete},
	{"GET", "/api/v1/admin/images/{id}/download", A, 0, NULL,
	 faceapi_admin_image_download},
	{"GET", "/api/v1/admin/jobs", A, 0, NULL, faceapi_admin_jobs},
	{"GET", "/api/v1/admin/jobs/{id}", A, 0, NULL, faceapi_admin_job},
	{"GET", "/api/v1/admin/jobs/{id}/download", A, 0, NULL,
	 faceapi_admin_job_download},
	{"POST", "/api/v1/admin/api-keys", A, 0, NULL, faceapi_keys_post},
	{"GET", "/api/v1/admin/api-keys", A, 0, NULL, faceapi_keys_list},
	{"GET", "/api/v1/admin/api-keys/{id}", A, 0, NULL, faceapi_keys_get},
	{"PATCH", "/api/v1/admin/api-keys/{id}", A, 0, NULL,
	 faceapi_keys_patch},
	{"DELETE", "/api/v1/admin/api-keys/{id}", A, 0, NULL,
	 faceapi_keys_delete},
	{"GET", "/api/v1/files/images/{id}", ROUTE_PUBLIC, 0, NULL,
	 faceapi_admin_file_image},
	{"GET", "/api/v1/files/jobs/{id}", ROUTE_PUBLIC, 0, NULL,
	 faceapi_admin_file_job},
};

int
main(void)
{
	return app_main_hooks("face-admin", routes,
			      sizeof(routes) / sizeof(routes[0]),
			      &faceapi_admin);
}
