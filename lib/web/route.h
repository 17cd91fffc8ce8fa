/* SPDX-License-Identifier: MIT */
/*
 * route.h - table-driven dispatch inside one FastCGI program.
 *
 * Each cgi-bin program has a table of routes, as kcgi's disps[]: method,
 * path pattern, who may call it, and the lib/ handler.  Patterns are
 * literal segments, "{id}" segments, which match a UUID only, and "{n}"
 * segments, which take any segment of up to 36 bytes for the handler to
 * check (a number such as a stream index); the program never sees a path
 * it does not list (lighttpd's prefix match also passes
 * "/api/v1/tagsXYZ", which ends here as 404).
 */
#ifndef XMHUB_ROUTE_H
#define XMHUB_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "codec/uuid.h"

#define ROUTE_MAX_PARAMS 4
#define ROUTE_UUID_LEN UUID_LEN

struct app_ctx;

/* Who may call a route. */
enum route_auth {
	ROUTE_PUBLIC = 0, /* no credentials */
	ROUTE_JWT,	  /* Authorization: Bearer access token */
	ROUTE_API_KEY,	  /* X-Api-Key */
	/* A GET that a browser fetches by itself (<audio src>): a bearer
	 * token as ROUTE_JWT, or a signed URL (lib/web/mediaurl.h) */
	ROUTE_JWT_OR_SIGNED,
	/* Authorization: Basic with the program's admin credentials (the
	 * face service's admin endpoints, lib/face/service/faceapi, which
	 * checks them with authn_basic); lib/web/app has no such
	 * credentials and refuses to start with such a route */
	ROUTE_BASIC
};

struct route {
	const char *method;  /* "GET", "POST", ... */
	const char *pattern; /* "/api/v1/devices/{id}" */
	enum route_auth auth;
	int min_role;	   /* ROUTE_JWT*: lowest enum auth_role allowed */
	const char *scope; /* ROUTE_API_KEY: scope needed, or NULL */
	void (*fn)(struct app_ctx *ctx);
};

/* How a path fared against a table. */
enum route_match {
	ROUTE_FOUND = 0,
	ROUTE_NO_PATH,	 /* 404 */
	ROUTE_NO_METHOD, /* 405: the path exists with other methods */
	ROUTE_BAD_PARAM	 /* 400: a {id} segment is not a UUID */
};

/*
 * Finds the route for method and path in the n routes of table.  On
 * ROUTE_FOUND *found is the route and params[0..] hold its {id} values
 * (NUL-terminated copies in params' own storage).  On ROUTE_NO_METHOD,
 * allow receives the allowed methods ("GET, POST").
 */
enum route_match route_find(const struct route *table, size_t n,
			    const char *method, const char *path,
			    const struct route **found,
			    char params[ROUTE_MAX_PARAMS][ROUTE_UUID_LEN + 1],
			    char *allow, size_t allow_len);

#endif
