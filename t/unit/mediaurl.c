/* SPDX-License-Identifier: MIT */
/*
 * t/unit/mediaurl.c - lib/web/mediaurl: a signed query checks for the
 * method, path and identity it was made for and nothing else, expiry at
 * both ends, the role floor, malformed parts.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "web/mediaurl.h"

#include "tap.h"

#define SECRET "0123456789abcdef0123456789abcdef-test"
#define USER "11111111-2222-4333-8444-555555555555"
#define FAC "66666666-7777-4888-9999-aaaaaaaaaaaa"
#define PATH "/api/v1/streams/99999999-8888-4777-a666-555555555555"

/* A request for method and path with the query q ("a=b&c=d"), parsed
 * into req (q's copy in buf); resp empty. */
static void
request(struct http_req *req, struct http_resp *resp, char *buf, size_t len,
	const char *method, const char *path, const char *q)
{
	char *save = NULL, *tok;

	memset(req, 0, sizeof(*req));
	req->method = method;
	req->path = (char *)path;
	snprintf(buf, len, "%s", q);
	for (tok = strtok_r(buf, "&", &save);
	     tok != NULL && req->nquery < HTTP_MAX_QUERY;
	     tok = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(tok, '=');

		if (eq == NULL)
			continue;
		*eq = '\0';
		req->query[req->nquery].name = tok;
		req->query[req->nquery++].value = eq + 1;
	}
	http_resp_init(resp);
}

/* The status of checking query q for method and path at now. */
static int
status(const char *method, const char *path, const char *q, const char *secret,
       int min_role, time_t now, struct authn_who *who)
{
	struct http_req req;
	struct http_resp resp;
	char buf[MEDIAURL_QUERY_MAX + 64];
	int st;

	request(&req, &resp, buf, sizeof(buf), method, path, q);
	st = mediaurl_check(&req, secret, min_role, now, who, &resp)
		     ? 200
		     : resp.status;
	http_resp_free(&resp);
	return st;
}

int
main(void)
{
	struct authn_who who = {.kind = ROUTE_JWT, .role = ROLE_FACILITY_ADMIN},
			 got;
	char q[MEDIAURL_QUERY_MAX], bad[MEDIAURL_QUERY_MAX + 8];
	char longpath[MEDIAURL_PATH_MAX + 2];
	time_t now = 1800000000, exp = now + MEDIAURL_TTL;
	char *sig;

	snprintf(who.user_id, sizeof(who.user_id), "%s", USER);
	snprintf(who.facility_id, sizeof(who.facility_id), "%s", FAC);
	ok(mediaurl_sign(SECRET, PATH, &who, exp, q, sizeof(q)),
	   "a path is signed");
	ok(strncmp(q,
		   "mu_exp=1800000600&mu_user=" USER "&mu_fac=" FAC
		   "&mu_role=1&mu_sig=",
		   strlen("mu_exp=1800000600&mu_user=" USER "&mu_fac=" FAC
			  "&mu_role=1&mu_sig=")) == 0,
	   "the query names expiry, user, facility and role");
	sig = strstr(q, "mu_sig=") + 7;
	ok(strlen(sig) == 64 && strspn(sig, "0123456789abcdef") == 64,
	   "the signature is 64 lower-case hex digits");

	memset(&got, 0, sizeof(got));
	ok(status("GET", PATH, q, SECRET, ROLE_USER, now, &got) == 200,
	   "it checks for GET of the path");
	ok(got.kind == ROUTE_JWT && got.role == ROLE_FACILITY_ADMIN &&
		   strcmp(got.user_id, USER) == 0 &&
		   strcmp(got.facility_id, FAC) == 0,
	   "the caller is the one it was issued for");
	ok(status("GET", PATH, q, SECRET, ROLE_FACILITY_ADMIN, now, &got) ==
		   200,
	   "its role meets the floor");
	ok(status("GET", PATH, q, SECRET, ROLE_SUPER_ADMIN, now, &got) == 403,
	   "a role below the route's floor: 403");
	ok(status("GET", PATH, q, SECRET, ROLE_USER, exp - 1, &got) == 200,
	   "a second before its expiry: accepted");
	ok(status("GET", PATH, q, SECRET, ROLE_USER, exp, &got) == 401,
	   "at its expiry: 401");
	ok(status("GET", PATH, q, SECRET, ROLE_USER, now - 1, &got) == 401,
	   "an expiry further ahead than the lifetime: 401");
	ok(status("HEAD", PATH, q, SECRET, ROLE_USER, now, &got) == 401,
	   "another method: 401");
	ok(status("GET", PATH "x", q, SECRET, ROLE_USER, now, &got) == 401,
	   "another path: 401");
	ok(status("GET", PATH, q, SECRET "x", ROLE_USER, now, &got) == 401,
	   "another secret: 401");
	ok(status("GET", PATH, q, NULL, ROLE_USER, now, &got) == 401,
	   "no secret: 401");

	snprintf(bad, sizeof(bad), "%s", q);
	for (char *p = strstr(bad, "mu_sig=") + 7; *p != '\0'; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	ok(status("GET", PATH, bad, SECRET, ROLE_USER, now, &got) == 401,
	   "the signature in upper case: 401");
	snprintf(bad, sizeof(bad), "%s", q);
	bad[strlen(bad) - 1] = '\0';
	ok(status("GET", PATH, bad, SECRET, ROLE_USER, now, &got) == 401,
	   "a signature one digit short: 401");
	snprintf(bad, sizeof(bad), "%s0", q);
	ok(status("GET", PATH, bad, SECRET, ROLE_USER, now, &got) == 401,
	   "a signature one digit long: 401");
	ok(status("GET", PATH,
		  "mu_exp=1800000600&mu_user=" USER "&mu_fac=" FAC
		  "&mu_role=x&mu_sig=00",
		  SECRET, ROLE_USER, now, &got) == 401,
	   "a role that is not a number: 401");
	ok(status("GET", PATH,
		  "mu_exp=-5&mu_user=" USER "&mu_fac=" FAC
		  "&mu_role=1&mu_sig=00",
		  SECRET, ROLE_USER, now, &got) == 401,
	   "a negative expiry: 401");
	ok(status("GET", PATH,
		  "mu_exp=99999999999999999999&mu_user=" USER "&mu_fac=" FAC
		  "&mu_role=1&mu_sig=00",
		  SECRET, ROLE_USER, now, &got) == 401,
	   "an expiry beyond 64 bits: 401");
	ok(status("GET", PATH, "mu_sig=00", SECRET, ROLE_USER, now, &got) ==
		   401,
	   "a signature alone: 401");

	/* A super_admin: no facility. */
	who.role = ROLE_SUPER_ADMIN;
	who.facility_id[0] = '\0';
	ok(mediaurl_sign(SECRET, PATH, &who, exp, q, sizeof(q)) &&
		   strstr(q, "&mu_fac=&") != NULL,
	   "a super_admin's URL has an empty facility");
	ok(status("GET", PATH, q, SECRET, ROLE_SUPER_ADMIN, now, &got) == 200 &&
		   got.facility_id[0] == '\0' && got.role == ROLE_SUPER_ADMIN,
	   "and checks as a super_admin");

	ok(!mediaurl_sign(SECRET, "/api/v1/a\nb", &who, exp, q, sizeof(q)),
	   "a path with a newline is not signed");
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	ok(!mediaurl_sign(SECRET, longpath, &who, exp, q, sizeof(q)),
	   "a path over MEDIAURL_PATH_MAX is not signed");
	ok(!mediaurl_sign(SECRET, PATH, &who, exp, q, 40),
	   "a buffer too small: false");
	return tap_done();
}
