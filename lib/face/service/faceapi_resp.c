/* SPDX-License-Identifier: MIT */
/*
 * faceapi_resp.c - the face service's answers.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "face/service/faceapi_resp.h"

/* Headers the mask answer carries, for browsers to read (CORS). */
#define EXPOSED                                                                \
	"X-Request-Id, X-Face-Count, X-Decode-Ms, X-Inference-Ms, "            \
	"X-Mask-Ms, X-Encode-Ms, X-Total-Ms, X-Model, X-Image-Width, "         \
	"X-Image-Height, X-Blur-Method, X-Det-Scale, X-Image-Id, X-Job-Id, "   \
	"Retry-After"

void
faceapi_resp_security(struct http_resp *resp)
{
	http_header(resp, "X-Content-Type-Options", "nosniff");
	http_header(resp, "X-Frame-Options", "DENY");
	http_header(resp, "Referrer-Policy", "strict-origin-when-cross-origin");
	http_header(resp, "Permissions-Policy", "camera=(), microphone=()");
	http_header(resp, "Strict-Transport-Security",
		    "max-age=63072000; includeSubDomains");
}

static const char *
param(const struct http_req *req, const char *name)
{
	return FCGX_GetParam(name, req->fcgi->envp);
}

/* True when origin is allowed; *any when by "*". */
static bool
origin_allowed(const struct faceapi_conf *c, const char *origin, bool *any)
{
	*any = false;
	for (size_t i = 0; i < c->norigins; i++) {
		if (strcmp(c->origins[i], "*") == 0) {
			*any = true;
			return true;
		}
		if (strcasecmp(c->origins[i], origin) == 0)
			return true;
	}
	return false;
}

/* True for a list of header names (tokens, commas, blanks). */
static bool
header_list(const char *s)
{
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("-_, ", *s) != NULL))
			return false;
	return true;
}

bool
faceapi_resp_cors(const struct http_req *req, const struct faceapi_conf *c,
		  struct http_resp *resp)
{
	const char *origin = param(req, "HTTP_ORIGIN");
	const char *want = param(req, "HTTP_ACCESS_CONTROL_REQUEST_METHOD");
	const char *hdrs = param(req, "HTTP_ACCESS_CONTROL_REQUEST_HEADERS");
	bool preflight, allowed, any = false;

	if (origin == NULL || *origin == '\0')
		return false;
	preflight = strcmp(req->method, "OPTIONS") == 0 && want != NULL;
	allowed = origin_allowed(c, origin, &any);
	if (allowed) {
		/* An echoed origin varies with the request; "*" does not. */
		http_header(resp, "Access-Control-Allow-Origin", "%s",
			    any ? "*" : origin);
		if (!any)
			http_header(resp, "Vary", "Origin");
		if (!preflight)
			http_header(resp, "Access-Control-Expose-Headers", "%s",
				    EXPOSED);
	}
	if (!preflight)
		return false;
	if (!allowed) {
		http_error(resp, 400, "CORS origin not allowed");
		return true;
	}
	http_header(resp, "Access-Control-Allow-Methods",
		    "GET, POST, PATCH, DELETE, OPTIONS");
	http_header(resp, "Access-Control-Allow-Headers", "%s",
		    hdrs != NULL && header_list(hdrs)
			    ? hdrs
			    : "X-API-Key, Authorization, Content-Type");
	http_header(resp, "Access-Control-Max-Age", "600");
	resp->status = 200;
	resp->content_type = "text/plain";
	buf_puts(&resp->body, "OK");
	return true;
}

json_object *
faceapi_num(double v, int decimals)
{
	char s[64];
	char *e;

	if (!isfinite(v))
		v = 0;
	snprintf(s, sizeof(s), "%.*f", decimals, v);
	/* Trailing zeros dropped, one decimal kept: 225.3, 0.0. */
	if ((e = strchr(s, '.')) != NULL) {
		e += strlen(e) - 1;
		while (*e == '0' && e[-1] != '.')
			*e-- = '\0';
	}
	/* "-0.0" reads as 0 but looks odd. */
	if (strcmp(s, "-0.0") == 0)
		snprintf(s, sizeof(s), "0.0");
	return json_object_new_double_s(strtod(s, NULL), s);
}

double
faceapi_ms(int64_t from_us, int64_t to_us)
{
	return (double)(to_us - from_us) / 1000.0;
}

static json_object *
point(double x, double y)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "x", faceapi_num(x, 2));
	json_object_object_add(o, "y", faceapi_num(y, 2));
	return o;
}

static json_object *
detection(const struct faceapi_result *r, size_t i)
{
	static const char *const lm_names[5] = {"left_eye", "right_eye", "nose",
						"left_mouth", "right_mouth"};
	const struct face_box *b = &r->boxes[i];
	double w = b->x2 - b->x1, h = b->y2 - b->y1;
	double iw = r->probe.width, ih = r->probe.height;
	json_object *o = json_object_new_object(), *x;

	json_object_object_add(o, "index", json_object_new_int((int)i));
	x = json_object_new_object();
	json_object_object_add(x, "x1", faceapi_num(b->x1, 2));
	json_object_object_add(x, "y1", faceapi_num(b->y1, 2));
	json_object_object_add(x, "x2", faceapi_num(b->x2, 2));
	json_object_object_add(x, "y2", faceapi_num(b->y2, 2));
	json_object_object_add(o, "bbox", x);
	json_object_object_add(o, "confidence", faceapi_num(b->score, 4));
	x = NULL;
	if (b->has_landmarks) {
		x = json_object_new_object();
		for (int k = 0; k < 5; k++)
			json_object_object_add(x, lm_names[k],
					       point(b->lm[k].x, b->lm[k].y));
	}
	json_object_object_add(o, "landmarks", x);
	x = json_object_new_object();
	json_object_object_add(x, "width", faceapi_num(w, 2));
	json_object_object_add(x, "height", faceapi_num(h, 2));
	json_object_object_add(o, "size", x);
	json_object_object_add(o, "area", faceapi_num(w * h, 2));
	json_object_object_add(o, "center",
			       point((b->x1 + b->x2) / 2, (b->y1 + b->y2) / 2));
	x = json_object_new_object();
	json_object_object_add(x, "x_center",
			       faceapi_num((b->x1 + b->x2) / 2 / iw, 6));
	json_object_object_add(x, "y_center",
			       faceapi_num((b->y1 + b->y2) / 2 / ih, 6));
	json_object_object_add(x, "width", faceapi_num(w / iw, 6));
	json_object_object_add(x, "height", faceapi_num(h / ih, 6));
	json_object_object_add(o, "relative", x);
	return o;
}

json_object *
faceapi_detections(const struct faceapi_result *r)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < r->n; i++)
		json_object_array_add(a, detection(r, i));
	return a;
}

static json_object *
pair(int a, int b)
{
	json_object *o = json_object_new_array();

	json_object_array_add(o, json_object_new_int(a));
	json_object_array_add(o, json_object_new_int(b));
	return o;
}

static json_object *
summary(const struct faceapi_result *r)
{
	json_object *o = json_object_new_object();
	double sum = 0, lo = 0, hi = 0, area = 0;

	for (size_t i = 0; i < r->n; i++) {
		const struct face_box *b = &r->boxes[i];

		sum += b->score;
		lo = i == 0 || b->score < lo ? b->score : lo;
		hi = i == 0 || b->score > hi ? b->score : hi;
		area += (double)(b->x2 - b->x1) * (b->y2 - b->y1);
	}
	json_object_object_add(o, "face_count", json_object_new_int((int)r->n));
	json_object_object_add(o, "avg_confidence",
			       faceapi_num(r->n > 0 ? sum / r->n : 0, 4));
	json_object_object_add(o, "min_confidence", faceapi_num(lo, 4));
	json_object_object_add(o, "max_confidence", faceapi_num(hi, 4));
	json_object_object_add(o, "total_face_area", faceapi_num(area, 2));
	json_object_object_add(
		o, "face_area_ratio",
		faceapi_num(area / ((double)r->probe.width * r->probe.height),
			    6));
	return o;
}

static json_object *
processing(const struct faceapi_result *r)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "model", json_object_new_string(r->model));
	json_object_object_add(o, "input_size",
			       pair(r->t.det_width, r->t.det_height));
	json_object_object_add(o, "confidence_threshold",
			       faceapi_num(r->p->confidence, 4));
	json_object_object_add(o, "nms_threshold", faceapi_num(r->p->nms, 4));
	json_object_object_add(o, "inference_ms",
			       faceapi_num(r->inference_ms, 2));
	json_object_object_add(o, "total_ms", faceapi_num(r->total_ms, 2));
	return o;
}

/* A millisecond figure, or null when negative (does not apply). */
static json_object *
ms_or_null(double ms)
{
	return ms < 0 ? NULL : faceapi_num(ms, 2);
}

static json_object *
resolution(int w, int h)
{
	char s[32];

	snprintf(s, sizeof(s), "%dx%d", w, h);
	return json_object_new_string(s);
}

static json_object *
profiling(const struct faceapi_result *r)
{
	json_object *o = json_object_new_object(), *raw;
	const struct face_timings *t = &r->t;

	json_object_object_add(o, "decode_ms", faceapi_num(r->decode_ms, 2));
	json_object_object_add(o, "preprocess_ms",
			       faceapi_num(t->preprocess_ms, 2));
	json_object_object_add(o, "blob_ms", faceapi_num(t->blob_ms, 2));
	json_object_object_add(o, "inference_ms",
			       faceapi_num(t->inference_ms, 2));
	json_object_object_add(o, "postprocess_ms",
			       faceapi_num(t->postprocess_ms, 2));
	json_object_object_add(o, "nms_ms", faceapi_num(t->nms_ms, 2));
	json_object_object_add(o, "mask_ms", ms_or_null(r->mask_ms));
	json_object_object_add(o, "encode_ms", ms_or_null(r->encode_ms));
	json_object_object_add(o, "storage_ms", ms_or_null(r->storage_ms));
	json_object_object_add(o, "total_ms", faceapi_num(r->total_ms, 2));
	json_object_object_add(o, "candidates_before_nms",
			       json_object_new_int(t->candidates_before_nms));
	json_object_object_add(o, "candidates_after_nms",
			       json_object_new_int(t->candidates_after_nms));
	json_object_object_add(o, "det_scale", faceapi_num(t->det_scale, 6));
	json_object_object_add(
		o, "input_resolution",
		resolution((int)r->probe.width, (int)r->probe.height));
	json_object_object_add(o, "det_resolution",
			       resolution(t->det_width, t->det_height));
	json_object_object_add(o, "input_bytes",
			       json_object_new_int64((int64_t)r->input_bytes));
	json_object_object_add(
		o, "output_bytes",
		r->output_bytes < 0 ? NULL
				    : json_object_new_int64(r->output_bytes));
	json_object_object_add(o, "input_pixels",
			       json_object_new_int64((int64_t)r->probe.width *
						     r->probe.height));
	json_object_object_add(o, "model_name",
			       json_object_new_string(r->model));
	/* the model's own scores behind the calibrated confidences, in
	 * the order of detections (doc/face-models.md, "Confidence") */
	raw = json_object_new_array();
	for (size_t i = 0; i < r->n; i++)
		json_object_array_add(raw,
				      faceapi_num(r->boxes[i].raw_score, 4));
	json_object_object_add(o, "raw_scores", raw);
	json_object_object_add(o, "model_size_mb", faceapi_num(r->model_mb, 2));
	/* A C/OpenCV build: no ONNX Runtime and no Python (doc/face.md). */
	json_object_object_add(o, "onnx_runtime_version", NULL);
	json_object_object_add(o, "opencv_version",
			       json_object_new_string(face_opencv_version()));
	json_object_object_add(o, "python_version", NULL);
	json_object_object_add(o, "worker_pid",
			       json_object_new_int((int)getpid()));
	return o;
}

static json_object *
id_or_null(const char *id)
{
	return id[0] != '\0' ? json_object_new_string(id) : NULL;
}

json_object *
faceapi_detect_response(const struct faceapi_result *r)
{
	json_object *o = json_object_new_object(), *img;

	json_object_object_add(o, "request_id",
			       json_object_new_string(r->request_id));
	json_object_object_add(o, "image_id", id_or_null(r->image_id));
	json_object_object_add(o, "job_id", id_or_null(r->job_id));
	img = json_object_new_object();
	json_object_object_add(img, "width",
			       json_object_new_int((int)r->probe.width));
	json_object_object_add(img, "height",
			       json_object_new_int((int)r->probe.height));
	json_object_object_add(img, "channels",
			       json_object_new_int(r->probe.channels));
	json_object_object_add(img, "size_bytes",
			       json_object_new_int64((int64_t)r->input_bytes));
	json_object_object_add(o, "image", img);
	json_object_object_add(o, "detections", faceapi_detections(r));
	json_object_object_add(o, "summary", summary(r));
	json_object_object_add(o, "processing", processing(r));
	json_object_object_add(o, "profiling", profiling(r));
	return o;
}

void
faceapi_mask_headers(struct http_resp *resp, const struct faceapi_result *r)
{
	http_header(resp, "X-Face-Count", "%zu", r->n);
	http_header(resp, "X-Decode-Ms", "%.2f", r->decode_ms);
	http_header(resp, "X-Inference-Ms", "%.2f", r->inference_ms);
	http_header(resp, "X-Mask-Ms", "%.2f", r->mask_ms);
	http_header(resp, "X-Encode-Ms", "%.2f", r->encode_ms);
	http_header(resp, "X-Total-Ms", "%.2f", r->total_ms);
	http_header(resp, "X-Model", "%s", r->model);
	http_header(resp, "X-Image-Width", "%u", r->probe.width);
	http_header(resp, "X-Image-Height", "%u", r->probe.height);
	http_header(resp, "X-Blur-Method", "%s",
		    faceapi_method_name(r->p->method));
	http_header(resp, "X-Det-Scale", "%.6f", r->t.det_scale);
	if (r->image_id[0] != '\0') {
		http_header(resp, "X-Image-Id", "%s", r->image_id);
		http_header(resp, "X-Job-Id", "%s", r->job_id);
	}
}

bool
faceapi_upload_answer(struct http_resp *resp, enum faceapi_upload_result res,
		      const struct faceapi_upload_kind *k,
		      const struct faceapi_upload *up, const char *detail)
{
	long long body = k->max_file + FACEAPI_FORM_OVERHEAD;
	char note[64] = "";

	if (k->setting != NULL)
		snprintf(note, sizeof(note), " (%s)", k->setting);
	switch (res) {
	case FACEAPI_UPLOAD_NOT_FORM:
		http_error(resp, 400,
			   "the request must be multipart/form-data with %s "
			   "file: %s",
			   k->a_file, detail);
		break;
	case FACEAPI_UPLOAD_BODY_TOO_LARGE:
		if (k->setting != NULL)
			http_error(
				resp, 413,
				"the request body is larger than %lld bytes: "
				"the %s may have %lld bytes%s",
				body, k->file, k->max_file, note);
		else
			http_error(resp, 413,
				   "the request body is larger than %lld bytes",
				   body);
		break;
	case FACEAPI_UPLOAD_FILE_TOO_LARGE:
		http_error(resp, 413, "the %s is larger than %lld bytes%s",
			   k->file, k->max_file, note);
		break;
	case FACEAPI_UPLOAD_FIELD_TOO_LONG:
		if (up->bad_field != NULL)
			http_error(resp, 400, "%s: the value is too long",
				   up->bad_field);
		else
			http_error(resp, 400,
				   "a parameter's value is too long");
		break;
	case FACEAPI_UPLOAD_SECOND_FILE:
		http_error(resp, 400, "more than one %s was sent", k->file);
		break;
	case FACEAPI_UPLOAD_MALFORMED:
		http_error(resp, 400, "malformed multipart/form-data body: %s",
			   detail);
		break;
	case FACEAPI_UPLOAD_UNREADABLE:
		http_error(resp, 400, "the request body could not be read");
		break;
	case FACEAPI_UPLOAD_NO_FILE:
		http_error(resp, 400,
			   "the %s file is missing (form field \"%s\")",
			   k->file, k->file);
		break;
	case FACEAPI_UPLOAD_EMPTY_FILE:
		http_error(resp, 400, "the %s file is empty", k->file);
		break;
	case FACEAPI_UPLOAD_NOT_KEPT:
		http_error(resp, 500, "the %s could not be kept", k->file);
		break;
	default:
		http_error(resp, 500, "out of memory");
		break;
	}
	return false;
}
