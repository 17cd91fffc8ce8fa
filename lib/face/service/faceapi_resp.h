/* SPDX-License-Identifier: MIT */
/*
 * faceapi_resp.h - what the face service answers: the security headers and CORS
 * of every response (doc/face.md), the DetectResponse of
 * doc/face-www/openapi.json, the Detection objects (also stored with a job) and
 * the mask headers.
 */
#ifndef XMHUB_FACEAPI_RESP_H
#define XMHUB_FACEAPI_RESP_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "face/face.h"
#include "face/service/faceapi_conf.h"
#include "face/service/faceapi_params.h"
#include "web/http.h"

/* One detect or mask run, as the answer reports it. */
struct faceapi_result {
	char request_id[37];
	char image_id[37]; /* "" when storage is off */
	char job_id[37];
	struct face_probe probe; /* the input's header facts */
	size_t input_bytes;
	const struct face_box *boxes;
	size_t n;
	struct face_timings t;
	double decode_ms, inference_ms;
	double mask_ms, encode_ms, storage_ms; /* < 0: null */
	double total_ms;
	long long output_bytes; /* < 0: null */
	const struct faceapi_params *p;
	const char *model;
	double model_mb;
	bool landmarks; /* the model gives the 5 points */
};

/* Adds the security headers of doc/face.md (every response). */
void faceapi_resp_security(struct http_resp *resp);

/*
 * Adds the CORS headers when the request's Origin is one of c's origins
 * (or c allows "*").  For an OPTIONS preflight (Origin and
 * Access-Control-Request-Method present) it answers: 200 with the
 * allowed methods and headers, or 400 for an origin not allowed; true
 * then (the request is answered).  False for every other request.
 */
bool faceapi_resp_cors(const struct http_req *req, const struct faceapi_conf *c,
		       struct http_resp *resp);

/* A JSON number rounded to decimals places (printed as such). */
json_object *faceapi_num(double v, int decimals);

/* The Detection objects of r's boxes (a new array). */
json_object *faceapi_detections(const struct faceapi_result *r);

/* The whole DetectResponse of r (a new object). */
json_object *faceapi_detect_response(const struct faceapi_result *r);

/* Adds the mask response headers (doc/face-www/openapi.json) for r but
 * X-Request-Id, which lib/web/app gives every answer. */
void faceapi_mask_headers(struct http_resp *resp,
			  const struct faceapi_result *r);

/* Milliseconds between two clock_real_us() values (lib/core/clock). */
double faceapi_ms(int64_t from_us, int64_t to_us);

/* What the answers to an upload not read whole say of its file. */
struct faceapi_upload_kind {
	const char *file;   /* its form field, named so: "image" */
	const char *a_file; /* "an image" */
	long long max_file; /* bytes it may have; the body FORM_OVERHEAD more */
	const char *setting; /* of max_file, named in the 413s (NULL: not) */
};

/*
 * Answers an upload of kind k that faceapi_upload_read() or the video's
 * reader did not take (res not FACEAPI_UPLOAD_OK): 413 over the limits,
 * 500 for what failed here (NOT_KEPT, NO_MEMORY), 400 for the rest.
 * up->bad_field names a field too long (NULL: "a parameter"), detail
 * the reason of NOT_FORM and MALFORMED.  Returns false.
 */
bool faceapi_upload_answer(struct http_resp *resp,
			   enum faceapi_upload_result res,
			   const struct faceapi_upload_kind *k,
			   const struct faceapi_upload *up, const char *detail);

#endif
