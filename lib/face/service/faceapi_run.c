/* SPDX-License-Identifier: MIT */
/*
 * faceapi_run.c - health, detect and mask.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/uuid.h"
#include "core/auth.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/metrics.h"
#include "face/service/faceapi_svc.h"
#include "face/service/faceapi_keys.h"
#include "face/service/faceapi_params.h"
#include "face/service/faceapi_resp.h"
#include "face/service/faceapi_run.h"
#include "face/service/faceapi_store.h"

void
faceapi_health(struct app_ctx *ctx)
{
	struct faceapi *svc = faceapi_of(ctx);
	const struct faceapi_worker_model *m =
		faceapi_worker_model(svc->worker);
	json_object *o = json_object_new_object(), *size;
	int det = m->loaded ? m->det_size : svc->conf.det_size;

	json_object_object_add(
		o, "status",
		json_object_new_string(m->loaded ? "ok" : "degraded"));
	json_object_object_add(
		o, "model",
		json_object_new_string(m->loaded ? m->name : svc->conf.model));
	json_object_object_add(o, "model_loaded",
			       json_object_new_boolean(m->loaded));
	size = json_object_new_array();
	json_object_array_add(size, json_object_new_int(det));
	json_object_array_add(size, json_object_new_int(det));
	json_object_object_add(o, "input_size", size);
	json_object_object_add(
		o, "supports_landmarks",
		json_object_new_boolean(m->loaded && m->landmarks));
	json_object_object_add(o, "storage_enabled",
			       json_object_new_boolean(svc->conf.storage));
	http_json(ctx->resp, 200, o);
}

/* One detect or mask request's resources, freed in one place. */
struct run {
	struct faceapi *svc;
	struct faceapi_upload up;
	struct faceapi_params p;
	struct faceapi_result r;
	struct face_box *boxes;
	struct buf out;
	char key_id[37];
	int64_t start;
};

/* The checks before any work: rate limit, key, request slot. */
static bool
admit(struct app_ctx *ctx, const char *kind, const struct faceapi_rate *rate,
      struct run *run)
{
	struct faceapi *svc = faceapi_of(ctx);
	char detail[256];
	int retry = 1;

	if (!faceapi_rate_allow(svc->limits, kind, faceapi_client_ip(ctx), rate,
				clock_real_us(), &retry)) {
		metrics_add(strcmp(kind, "mask") == 0
				    ? METRIC_RATE_LIMIT_MASK
				    : METRIC_RATE_LIMIT_DETECT,
			    1);
		http_header(ctx->resp, "Retry-After", "%d", retry);
		http_error(ctx->resp, 429,
			   "rate limit exceeded: %lld %s requests per %lld "
			   "seconds",
			   rate->limit, kind, rate->period_s);
		return false;
	}
	if (!faceapi_keys_check(ctx, run->key_id))
		return false;
	if (!faceapi_request_begin(svc->limits)) {
		http_header(ctx->resp, "Retry-After", "1");
		http_error(ctx->resp, 503,
			   "too many concurrent requests; retry shortly");
		return false;
	}
	if (!faceapi_worker_ready(svc->worker, detail, sizeof(detail))) {
		http_error(ctx->resp, 503, "no face detection model is loaded");
		return false;
	}
	return true;
}

/*
 * The answer to a step the worker did not do: 400 with what and the
 * worker's reason when the image is at fault (bad_image: it could not be
 * decoded, which is the client's to know), else 500 (logged); 500 when
 * the worker was lost (it is logged and replaced at the next request).
 * Returns false.
 */
static bool
worker_failed(struct app_ctx *ctx, enum faceapi_worker_result wr,
	      bool bad_image, const char *what, const char *detail)
{
	if (wr == FACEAPI_WORKER_LOST)
		http_error(ctx->resp, 500,
			   "%s: the image worker was lost (%s); the next "
			   "request gets a new one",
			   what, detail);
	else if (bad_image)
		http_error(ctx->resp, 400, "%s: %s", what, detail);
	else {
		log_error("%s: %s", what, detail);
		http_error(ctx->resp, 500, "%s", what);
	}
	return false;
}

/*
 * Reads the upload and its parameters, checks the image's header and
 * decodes it; then detects the faces within an inference slot.  False
 * with the answer set.
 */
static bool
detect(struct app_ctx *ctx, bool mask, struct run *run)
{
	struct faceapi *svc = faceapi_of(ctx);
	const struct faceapi_conf *c = &svc->conf;
	const struct faceapi_upload_kind image = {"image", "an image",
						  c->max_bytes, NULL};
	const struct faceapi_worker_model *m;
	struct faceapi_result *r = &run->r;
	enum faceapi_worker_result wr;
	enum faceapi_upload_result ur;
	char detail[256];
	size_t cap;
	int64_t t;

	if ((ur = faceapi_upload_read(ctx->req, (size_t)c->max_bytes, &run->up,
				      detail, sizeof(detail))) !=
	    FACEAPI_UPLOAD_OK)
		return faceapi_upload_answer(ctx->resp, ur, &image, &run->up,
					     detail);
	if (!faceapi_params_get(ctx->req, &run->up, c, mask, &run->p,
				ctx->resp))
		return false;
	r->p = &run->p;
	r->input_bytes = run->up.image.len;
	if (!face_image_probe(run->up.image.p, run->up.image.len, &r->probe,
			      detail, sizeof(detail))) {
		http_error(ctx->resp, 400,
			   "invalid image format (JPEG, PNG, WebP, BMP or TIFF "
			   "expected): %s",
			   detail);
		return false;
	}
	if ((uint64_t)r->probe.width * r->probe.height >
	    (uint64_t)c->max_pixels) {
		http_error(ctx->resp, 413,
			   "the image has %llu pixels, more than %lld",
			   (unsigned long long)r->probe.width * r->probe.height,
			   c->max_pixels);
		return false;
	}
	if (r->probe.width < FACEAPI_MIN_SIDE ||
	    r->probe.height < FACEAPI_MIN_SIDE) {
		http_error(ctx->resp, 400,
			   "the image is %ux%u pixels, smaller than %dx%d",
			   r->probe.width, r->probe.height, FACEAPI_MIN_SIDE,
			   FACEAPI_MIN_SIDE);
		return false;
	}
	t = clock_real_us();
	wr = faceapi_worker_decode(svc->worker, run->up.image.p,
				   run->up.image.len, detail, sizeof(detail));
	r->decode_ms = faceapi_ms(t, clock_real_us());
	if (wr != FACEAPI_WORKER_OK)
		return worker_failed(ctx, wr, true,
				     "the image could not be decoded", detail);
	cap = run->p.max_faces > 0 && run->p.max_faces < FACEAPI_MAX_FACES
		      ? (size_t)run->p.max_faces
		      : FACEAPI_MAX_FACES;
	if ((run->boxes = calloc(cap, sizeof(*run->boxes))) == NULL) {
		http_error(ctx->resp, 500, "out of memory");
		return false;
	}
	if (!faceapi_inference_begin(svc->limits)) {
		http_error(ctx->resp, 500, "the inference slots are unusable");
		return false;
	}
	t = clock_real_us();
	wr = faceapi_worker_detect(svc->worker, (float)run->p.confidence,
				   (float)run->p.nms, (size_t)run->p.max_faces,
				   mask, run->boxes, cap, &r->n, &r->t, detail,
				   sizeof(detail));
	faceapi_inference_end(svc->limits);
	if (wr == FACEAPI_WORKER_OK) {
		metrics_add(METRIC_FACE_INFERENCES, 1);
		/* The worker's whole detection: preprocessing, the
		 * network, postprocessing. */
		metrics_observe(HIST_FACE_INFERENCE,
				(double)(clock_real_us() - t) / 1e6);
	}
	if (wr != FACEAPI_WORKER_OK)
		return worker_failed(ctx, wr, false, "face detection failed",
				     detail);
	m = faceapi_worker_model(svc->worker);
	r->boxes = run->boxes;
	r->inference_ms = r->t.inference_ms;
	r->model = m->name;
	r->model_mb = (double)m->file_size / 1048576.0;
	r->landmarks = m->landmarks;
	return true;
}

/* Records the run when storage is on (sets storage_ms). */
static bool
keep(struct app_ctx *ctx, struct run *run, const struct buf *output)
{
	struct faceapi *svc = faceapi_of(ctx);
	int64_t t = clock_real_us();
	bool ok;

	if (!svc->conf.storage)
		return true;
	run->r.total_ms = faceapi_ms(run->start, t);
	ok = faceapi_store_record(ctx, &run->up, &run->r, output, run->p.format,
				  run->key_id);
	run->r.storage_ms = faceapi_ms(t, clock_real_us());
	return ok;
}

static void
run_init(struct run *run, const struct app_ctx *ctx)
{
	const char *id = ctx->request_id;

	memset(run, 0, sizeof(*run));
	run->svc = faceapi_of(ctx);
	buf_init(&run->out, 0);
	run->start = clock_real_us();
	run->r.mask_ms = run->r.encode_ms = run->r.storage_ms = -1;
	run->r.output_bytes = -1;
	/* The request's id (lib/web/app: X-Request-Id) where it is the UUID
	 * the spec's request_id is; else one of its own, even without
	 * random bytes: the clock's. */
	if (uuid_valid(id, strlen(id)))
		snprintf(run->r.request_id, sizeof(run->r.request_id), "%s",
			 id);
	else if (!auth_uuid(run->r.request_id))
		snprintf(run->r.request_id, sizeof(run->r.request_id),
			 "00000000-0000-4000-8000-%012llx",
			 (unsigned long long)run->start & 0xffffffffffffULL);
}

static void
run_free(struct run *run)
{
	faceapi_request_end(run->svc->limits);
	faceapi_upload_free(&run->up);
	free(run->boxes);
	buf_free(&run->out);
}

void
faceapi_detect(struct app_ctx *ctx)
{
	struct faceapi *svc = faceapi_of(ctx);
	struct run run;

	run_init(&run, ctx);
	if (admit(ctx, "detect", &svc->conf.rate_detect, &run) &&
	    detect(ctx, false, &run) && keep(ctx, &run, NULL)) {
		run.r.total_ms = faceapi_ms(run.start, clock_real_us());
		http_json(ctx->resp, 200, faceapi_detect_response(&run.r));
	}
	run_free(&run);
}

void
faceapi_mask(struct app_ctx *ctx)
{
	struct faceapi *svc = faceapi_of(ctx);
	enum faceapi_worker_result wr;
	struct faceapi_result *r;
	char detail[256];
	struct run run;
	int64_t t;

	run_init(&run, ctx);
	r = &run.r;
	if (!admit(ctx, "mask", &svc->conf.rate_mask, &run) ||
	    !detect(ctx, true, &run))
		goto out;
	t = clock_real_us();
	wr = faceapi_worker_mask(svc->worker, run.boxes, r->n, run.p.method,
				 run.p.strength, run.p.padding, detail,
				 sizeof(detail));
	if (wr != FACEAPI_WORKER_OK) {
		worker_failed(ctx, wr, false, "masking failed", detail);
		goto out;
	}
	r->mask_ms = faceapi_ms(t, clock_real_us());
	t = clock_real_us();
	wr = faceapi_worker_encode(svc->worker, run.p.format, run.p.quality,
				   &run.out, detail, sizeof(detail));
	if (wr != FACEAPI_WORKER_OK) {
		worker_failed(ctx, wr, false, "encoding the image failed",
			      detail);
		goto out;
	}
	r->encode_ms = faceapi_ms(t, clock_real_us());
	r->output_bytes = (long long)run.out.len;
	if (!keep(ctx, &run, &run.out))
		goto out;
	r->total_ms = faceapi_ms(run.start, clock_real_us());
	faceapi_mask_headers(ctx->resp, r);
	http_header(ctx->resp, "Content-Disposition",
		    "inline; filename=\"masked.%s\"",
		    face_fmt_name(run.p.format));
	ctx->resp->status = 200;
	ctx->resp->content_type = face_fmt_mime(run.p.format);
	/* The encoded image becomes the answer's body without a copy. */
	buf_free(&ctx->resp->body);
	ctx->resp->body = run.out;
	buf_init(&run.out, 0);
out:
	run_free(&run);
}
