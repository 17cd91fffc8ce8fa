/* SPDX-License-Identifier: MIT */
/*
 * mediaurls.c - issuing signed URLs for browser-fetched GET routes.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/mediaurls.h"
#include "web/mediaurl.h"
#include "web/valid.h"

enum { F_PATH, NFIELDS };

static const struct valid_field fields[NFIELDS] = {
	[F_PATH] = {.name = "path",
		    .type = VALID_STRING,
		    .flags = VALID_REQUIRED,
		    .min = 1,
		    .max = MEDIAURL_PATH_MAX},
};

/* A path the web server passes on unchanged: /api/v1/ and then only
 * letters, digits and "/._-", without "..", "//" or a query. */
static bool
path_ok(const char *p)
{
	static const char prefix[] = "/api/v1/";

	if (strncmp(p, prefix, sizeof(prefix) - 1) != 0 ||
	    strstr(p, "..") != NULL || strstr(p, "//") != NULL)
		return false;
	for (; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("/._-", *p) != NULL))
			return false;
	return true;
}

void
mediaurls_post(struct app_ctx *ctx)
{
	struct valid_value v[NFIELDS];
	char query[MEDIAURL_QUERY_MAX], when[32];
	char url[MEDIAURL_PATH_MAX + MEDIAURL_QUERY_MAX + 2];
	json_object *body, *out;
	time_t expires = time(NULL) + MEDIAURL_TTL;
	struct tm tm;

	if ((body = valid_json_body(ctx->req, fields, NFIELDS, v, ctx->resp)) ==
	    NULL)
		return;
	if (!path_ok(v[F_PATH].str)) {
		http_error(ctx->resp, 400,
			   "path must be a path under /api/v1/ of letters, "
			   "digits and /._- without ..");
		goto out;
	}
	if (!mediaurl_sign(ctx->jwt_secret, v[F_PATH].str, &ctx->who, expires,
			   query, sizeof(query))) {
		http_error(ctx->resp, 500, "internal error");
		goto out;
	}
	gmtime_r(&expires, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(url, sizeof(url), "%s?%s", v[F_PATH].str, query);
	out = json_object_new_object();
	json_object_object_add(out, "url", json_object_new_string(url));
	json_object_object_add(out, "expires_at", json_object_new_string(when));
	http_no_store(ctx->resp);
	http_json(ctx->resp, 200, out);
out:
	json_object_put(body);
}
