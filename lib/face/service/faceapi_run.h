/* SPDX-License-Identifier: MIT */
/*
 * faceapi_run.h - the public endpoints of the face service (doc/face.md,
 * doc/face-www/openapi.json): GET /health, POST /api/v1/detect,
 * POST /api/v1/mask.
 *
 * A detect or mask request goes through, in this order: the per-IP rate
 * limit (429 + Retry-After), the API key (401/403), a request slot (503
 * + Retry-After: 1), the upload and its parameters (400/413), the image
 * header (format 400, pixels 413, under 10x10 400, before any decoding),
 * the decode (400), an inference slot (waited for), detection, masking
 * and encoding, storage when on, the answer.
 */
#ifndef XMHUB_FACEAPI_RUN_H
#define XMHUB_FACEAPI_RUN_H

#include "web/app.h"

#define FACEAPI_MIN_SIDE 10    /* pixels: smaller images are refused */
#define FACEAPI_MAX_FACES 1000 /* detections kept per image at most */

/* GET /health: the Health object. */
void faceapi_health(struct app_ctx *ctx);

/* POST /api/v1/detect: the DetectResponse. */
void faceapi_detect(struct app_ctx *ctx);

/* POST /api/v1/mask: the masked image with the mask headers. */
void faceapi_mask(struct app_ctx *ctx);

#endif
