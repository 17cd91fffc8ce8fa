/* SPDX-License-Identifier: MIT */
/*
 * faceapi_video.h - the video endpoints of the face service
 * (doc/face-video.md, doc/face-www/openapi.json), served by the program
 * cgi-bin/face-video:
 *
 *   POST   /api/v1/mask-video              multipart: video + the mask
 *                                          parameters -> 202, a job
 *   GET    /api/v1/video-jobs/{id}         the job: state, frames_done,
 *                                          frames_total, fps, error
 *   GET    /api/v1/video-jobs/{id}/result  the masked video (Range)
 *   DELETE /api/v1/video-jobs/{id}         cancels a queued or running job
 *
 * They need storage (FACE_API_STORAGE_ENABLED): without it they answer
 * 503 with a detail.  API keys as the other public endpoints; a job is
 * seen only with the key that queued it.  POST counts against the mask
 * rate limit.
 */
#ifndef XMHUB_FACEAPI_VIDEO_H
#define XMHUB_FACEAPI_VIDEO_H

#include "web/app.h"

/* POST /api/v1/mask-video. */
void faceapi_video_post(struct app_ctx *ctx);

/* GET /api/v1/video-jobs/{id}. */
void faceapi_video_get(struct app_ctx *ctx);

/* GET /api/v1/video-jobs/{id}/result. */
void faceapi_video_result(struct app_ctx *ctx);

/* DELETE /api/v1/video-jobs/{id}. */
void faceapi_video_cancel(struct app_ctx *ctx);

#endif
