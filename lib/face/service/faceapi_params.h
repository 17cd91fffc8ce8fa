/* SPDX-License-Identifier: MIT */
/*
 * faceapi_params.h - the input of POST /api/v1/detect and /api/v1/mask: the
 * multipart/form-data upload and the parameters of doc/face-www/openapi.json,
 * each a form field or a query parameter, every range checked up front.
 */
#ifndef XMHUB_FACEAPI_PARAMS_H
#define XMHUB_FACEAPI_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include "codec/buf.h"
#include "face/service/faceapi_conf.h"
#include "web/http.h"

#define FACEAPI_FIELD_MAX 64	    /* bytes of one form field's value */
#define FACEAPI_FILENAME_MAX 255    /* bytes of a kept file name */
#define FACEAPI_FORM_OVERHEAD 65536 /* body bytes allowed beyond the image */

/* The parameters, by index (faceapi_param_names[]). */
enum faceapi_param {
	FACEAPI_P_CONFIDENCE,
	FACEAPI_P_NMS,
	FACEAPI_P_MAX_FACES,
	FACEAPI_P_METHOD,
	FACEAPI_P_STRENGTH,
	FACEAPI_P_PADDING,
	FACEAPI_P_FORMAT,
	FACEAPI_P_QUALITY,
	FACEAPI_NPARAMS
};

/* The parameters' names as the API spells them. */
extern const char *const faceapi_param_names[FACEAPI_NPARAMS];

/* What the body held. */
struct faceapi_upload {
	struct buf image; /* the "image" file part */
	bool has_image;
	char filename[FACEAPI_FILENAME_MAX + 1]; /* valid UTF-8, or "" */
	char fields[FACEAPI_NPARAMS][FACEAPI_FIELD_MAX + 1];
	bool has_field[FACEAPI_NPARAMS];
};

/* The checked parameters. */
struct faceapi_params {
	double confidence, nms;
	long max_faces; /* 0: all */
	enum face_method method;
	int strength;
	double padding;
	enum face_fmt format;
	int quality;
};

/*
 * Reads the request's multipart/form-data body into up (initialised
 * here; free it with faceapi_upload_free() whatever the result).  The
 * image is refused beyond max_image bytes (413), the body beyond
 * max_image + FACEAPI_FORM_OVERHEAD (413; checked from Content-Length
 * first).  Other media types, a malformed body, a form field too long
 * and a missing image are 400.  False with the answer in resp.
 */
bool faceapi_upload_read(struct http_req *req, size_t max_image,
			 struct faceapi_upload *up, struct http_resp *resp);

/* Frees what faceapi_upload_read() allocated. */
void faceapi_upload_free(struct faceapi_upload *up);

/*
 * The parameters from up's form fields, else from the query string, else
 * the defaults of c; the mask parameters only when mask.  False with a
 * 400 naming the parameter and its range in resp.
 */
bool faceapi_params_get(const struct http_req *req,
			const struct faceapi_upload *up,
			const struct faceapi_conf *c, bool mask,
			struct faceapi_params *p, struct http_resp *resp);

#endif
