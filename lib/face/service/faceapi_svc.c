/* SPDX-License-Identifier: MIT */
/*
 * faceapi_svc.c - what the face service's modules share (faceapi_svc.h).
 */
#include "config.h"

#include "face/service/faceapi_svc.h"

const char *
faceapi_client_ip(const struct app_ctx *ctx)
{
	const char *ip = ctx->req->remote_addr;

	return ip != NULL && *ip != '\0' ? ip : "-";
}
