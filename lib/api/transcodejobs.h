/* SPDX-License-Identifier: MIT */
/*
 * transcodejobs.h - /api/v1/transcode-jobs: reading and cancelling
 * transcode jobs (the queue itself is lib/domain/jobs).
 *
 * Any user of a facility reads its jobs; a facility_admin or higher
 * cancels them.  Another facility's job is 403, an unknown one 404, as
 * everywhere (lib/web/scope).
 */
#ifndef XMHUB_TRANSCODEJOBS_H
#define XMHUB_TRANSCODEJOBS_H

#include "web/app.h"

/* GET /api/v1/transcode-jobs?page=&per_page=&status=&upload_id=: the
 * pagination envelope of the facility's jobs (of one upload), newest
 * first; 400 on a bad page, per_page (1-100), status or upload_id. */
void transcodejobs_list(struct app_ctx *ctx);

/* GET /api/v1/transcode-jobs/{id}: 200 Transcode job; 403; 404. */
void transcodejobs_get(struct app_ctx *ctx);

/* POST /api/v1/transcode-jobs/{id}/cancel: 204 for a queued or running
 * job (a running ffmpeg is stopped by its runner within seconds); 409
 * for a job already completed, failed or cancelled; 403; 404. */
void transcodejobs_cancel(struct app_ctx *ctx);

#endif
