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
	const char *bad_field; /* FACEAPI_UPLOAD_FIELD_TOO_LONG: its name */
};

/*
 * The parameter a form part named name sets (its field in up emptied and
 * marked sent: the last part of a name wins), or -1 for none.  For the
 * multipart readers of an upload.
 */
int faceapi_field_begin(struct faceapi_upload *up, const char *name);

/* Appends the n bytes at p to field i of up, which holds *flen; false
 * when that would pass FACEAPI_FIELD_MAX bytes. */
bool faceapi_field_data(struct faceapi_upload *up, int i, size_t *flen,
			const void *p, size_t n);

/* How reading an upload ended; the handler answers it. */
enum faceapi_upload_result {
	FACEAPI_UPLOAD_OK = 0,
	FACEAPI_UPLOAD_NOT_FORM,       /* not multipart/form-data: detail */
	FACEAPI_UPLOAD_BODY_TOO_LARGE, /* by its Content-Length */
	FACEAPI_UPLOAD_FILE_TOO_LARGE, /* the file, or the body as read */
	FACEAPI_UPLOAD_FIELD_TOO_LONG, /* a parameter: up->bad_field */
	FACEAPI_UPLOAD_SECOND_FILE,
	FACEAPI_UPLOAD_MALFORMED, /* detail says why */
	FACEAPI_UPLOAD_UNREADABLE,
	FACEAPI_UPLOAD_NO_FILE,
	FACEAPI_UPLOAD_EMPTY_FILE,
	FACEAPI_UPLOAD_NOT_KEPT, /* the file could not be written */
	FACEAPI_UPLOAD_NO_MEMORY
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
 * image may have max_image bytes (FILE_TOO_LARGE), the body max_image +
 * FACEAPI_FORM_OVERHEAD (BODY_TOO_LARGE from its Content-Length,
 * FILE_TOO_LARGE as read); a body refused before its end is drained.
 * detail (dlen bytes) says why for NOT_FORM and MALFORMED.
 */
enum faceapi_upload_result faceapi_upload_read(struct http_req *req,
					       size_t max_image,
					       struct faceapi_upload *up,
					       char *detail, size_t dlen);

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
