/* SPDX-License-Identifier: MIT */
/*
 * route.t - route table matching (lib/web/route.c).
 */
#include "config.h"

#include "web/route.h"
#include "tap.h"

static void
fn(struct app_ctx *ctx)
{
	(void)ctx;
}

static const struct route table[] = {
	{"GET", "/api/v1/devices", ROUTE_JWT, 0, NULL, fn},
	{"POST", "/api/v1/devices", ROUTE_JWT, 1, NULL, fn},
	{"GET", "/api/v1/devices/{id}", ROUTE_JWT, 0, NULL, fn},
	{"PATCH", "/api/v1/devices/{id}", ROUTE_JWT, 1, NULL, fn},
	{"POST", "/api/v1/uploads/{id}/retranscode", ROUTE_JWT, 0, NULL, fn},
	{"GET", "/api/v1/s/{id}/streams/{n}/samples", ROUTE_JWT, 0, NULL, fn},
};
#define N (sizeof(table) / sizeof(table[0]))

static const char *uuid = "0b7c3f0e-8f1a-4c2b-9d3e-5f6a7b8c9d0e";

static enum route_match
find(const char *method, const char *path, const struct route **r,
     char params[ROUTE_MAX_PARAMS][ROUTE_UUID_LEN + 1], char *allow)
{
	*r = NULL;
	return route_find(table, N, method, path, r, params, allow, 64);
}

int
main(void)
{
	char params[ROUTE_MAX_PARAMS][ROUTE_UUID_LEN + 1], allow[64], path[128];
	const struct route *r;

	ok(find("GET", "/api/v1/devices", &r, params, allow) == ROUTE_FOUND &&
		   r == &table[0],
	   "literal path and method");
	ok(find("POST", "/api/v1/devices", &r, params, allow) == ROUTE_FOUND &&
		   r == &table[1],
	   "same path, other method, other route");
	snprintf(path, sizeof(path), "/api/v1/devices/%s", uuid);
	ok(find("PATCH", path, &r, params, allow) == ROUTE_FOUND &&
		   r == &table[3] && strcmp(params[0], uuid) == 0,
	   "{id} captured");
	snprintf(path, sizeof(path), "/api/v1/uploads/%s/retranscode", uuid);
	ok(find("POST", path, &r, params, allow) == ROUTE_FOUND &&
		   r == &table[4] && strcmp(params[0], uuid) == 0,
	   "{id} in the middle");
	ok(find("DELETE", "/api/v1/devices", &r, params, allow) ==
			   ROUTE_NO_METHOD &&
		   strcmp(allow, "GET, POST") == 0,
	   "405 lists the allowed methods");
	is_str(allow, "GET, POST", "Allow value");
	ok(find("GET", "/api/v1/devicesXYZ", &r, params, allow) ==
		   ROUTE_NO_PATH,
	   "a longer segment is not a prefix match");
	ok(find("GET", "/api/v1/devices/", &r, params, allow) == ROUTE_NO_PATH,
	   "trailing slash with an empty id");
	ok(find("GET", "/api/v1/devices/42", &r, params, allow) ==
		   ROUTE_BAD_PARAM,
	   "a non-UUID id is a bad parameter");
	snprintf(path, sizeof(path), "/api/v1/devices/%s/x", uuid);
	ok(find("GET", path, &r, params, allow) == ROUTE_NO_PATH,
	   "extra segment after the id");
	ok(find("GET", "", &r, params, allow) == ROUTE_NO_PATH, "empty path");
	ok(find("GET", "/api/v1", &r, params, allow) == ROUTE_NO_PATH,
	   "shorter path");
	ok(uuid_valid(uuid, 36), "a UUID");
	ok(uuid_valid("0B7C3F0E-8F1A-4C2B-9D3E-5F6A7B8C9D0E", 36),
	   "upper case accepted");
	ok(!uuid_valid("0b7c3f0e-8f1a-4c2b-9d3e-5f6a7b8c9d0", 35),
	   "one digit short");
	ok(!uuid_valid("0b7c3f0e+8f1a-4c2b-9d3e-5f6a7b8c9d0e", 36),
	   "wrong separator");
	ok(!uuid_valid("0b7c3f0e-8f1a-4c2b-9d3e-5f6a7b8c9d0g", 36),
	   "non-hex digit");
	snprintf(path, sizeof(path), "/api/v1/s/%s/streams/65535/samples",
		 uuid);
	ok(find("GET", path, &r, params, allow) == ROUTE_FOUND &&
		   r == &table[5] && strcmp(params[0], uuid) == 0 &&
		   strcmp(params[1], "65535") == 0,
	   "{n} captured after an {id}");
	snprintf(path, sizeof(path), "/api/v1/s/%s/streams/x%%20y/samples",
		 uuid);
	ok(find("GET", path, &r, params, allow) == ROUTE_FOUND &&
		   strcmp(params[1], "x%20y") == 0,
	   "{n} takes any segment: the handler checks it");
	snprintf(path, sizeof(path), "/api/v1/s/%s/streams//samples", uuid);
	ok(find("GET", path, &r, params, allow) == ROUTE_NO_PATH,
	   "{n} is not empty");
	snprintf(path, sizeof(path), "/api/v1/s/%s/streams/%s0/samples", uuid,
		 uuid);
	ok(find("GET", path, &r, params, allow) == ROUTE_NO_PATH,
	   "{n} holds at most 36 bytes");
	return tap_done();
}
