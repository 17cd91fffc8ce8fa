/* SPDX-License-Identifier: MIT */
/*
 * mediaurl.h - short-lived signed URLs for the GET routes a browser
 * fetches by itself (<audio src>, <img src>), which cannot send an
 * Authorization header.
 *
 * A signed URL is the route's path with the query
 * "mu_exp=UNIX&mu_user=UUID&mu_fac=UUID|&mu_role=N&mu_sig=HEX": an
 * HMAC-SHA256, keyed with a key derived from XMHUB_JWT_SECRET, over the
 * method, the path, the expiry and the user, facility and role it was
 * issued for.  A route accepts one only when its table entry has
 * ROUTE_SIGNED_URL; the check needs no database (doc/auth.md "Signed
 * URLs").
 */
#ifndef XMHUB_MEDIAURL_H
#define XMHUB_MEDIAURL_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "web/authn.h"
#include "web/http.h"

#define MEDIAURL_TTL 600       /* seconds a signed URL lives */
#define MEDIAURL_PATH_MAX 1024 /* longest path that is signed */
#define MEDIAURL_QUERY_MAX 256 /* the query it makes, NUL included */

/*
 * Writes into out (outlen bytes, MEDIAURL_QUERY_MAX is enough) the query
 * that signs a GET of path for who (a ROUTE_JWT caller), valid until
 * expires (UNIX seconds).  secret is XMHUB_JWT_SECRET.  False when path
 * is longer than MEDIAURL_PATH_MAX or out is too small.
 */
bool mediaurl_sign(const char *secret, const char *path,
		   const struct authn_who *who, time_t expires, char *out,
		   size_t outlen);

/* Whether req's query carries a signature (mu_sig); such a request is
 * checked with mediaurl_check() instead of a bearer token. */
bool mediaurl_present(const struct http_req *req);

/*
 * Checks the signed query of req for req's method and path at time now
 * with secret: 401 when a part is missing or malformed, the signature
 * does not match (constant-time compare) or the URL expired (or claims
 * an expiry further than MEDIAURL_TTL ahead); 403 when its role is below
 * min_role.  On success fills *who (kind ROUTE_JWT) and returns true;
 * otherwise resp holds the answer and it returns false.  No database.
 */
bool mediaurl_check(const struct http_req *req, const char *secret,
		    int min_role, time_t now, struct authn_who *who,
		    struct http_resp *resp);

#endif
