/* SPDX-License-Identifier: MIT */
/*
 * mediaurls.h - POST /api/auth/media-url: a signed URL for a GET route
 * that a browser fetches by itself (doc/auth.md "Signed URLs").
 */
#ifndef XMHUB_MEDIAURLS_H
#define XMHUB_MEDIAURLS_H

#include "web/app.h"

/*
 * Answers 200 {"url", "expires_at"}: the body's "path" (an absolute path
 * under /api/v1/ of letters, digits and "/._-", no "..") with the signed
 * query of lib/web/mediaurl for the caller (a ROUTE_JWT route), valid
 * MEDIAURL_TTL seconds; 400 for a missing or bad path.  The URL works
 * only on routes that take ROUTE_JWT_OR_SIGNED, with the caller's rights.
 */
void mediaurls_post(struct app_ctx *ctx);

#endif
