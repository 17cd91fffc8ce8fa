/* SPDX-License-Identifier: MIT */
/*
 * valid.t - typed validation of bodies and queries (lib/web/valid.c).
 */
#include "config.h"

#include <stdlib.h>

#include "codec/jsonin.h"
#include "tap.h"
#include "web/valid.h"

static const struct valid_field fields[] = {
	{.name = "name",
	 .type = VALID_STRING,
	 .flags = VALID_REQUIRED,
	 .min = 1,
	 .max = 10},
	{.name = "email", .type = VALID_EMAIL},
	{.name = "slug", .type = VALID_SLUG},
	{.name = "id", .type = VALID_UUID},
	{.name = "active", .type = VALID_BOOL},
	{.name = "uid", .type = VALID_INT, .min = 0, .max = 4294967295LL},
	{.name = "role", .type = VALID_ROLE},
	{.name = "color", .type = VALID_COLOR, .flags = VALID_NULLABLE},
	{.name = "expires_at",
	 .type = VALID_TIMESTAMP,
	 .flags = VALID_NULLABLE},
	{.name = "scopes", .type = VALID_STRINGS, .min = 0, .max = 8},
	{.name = "tags", .type = VALID_UUIDS, .min = 0, .max = 100},
	{.name = "metadata", .type = VALID_OBJECT},
};
#define N (sizeof(fields) / sizeof(fields[0]))

/* The body of the last check(): values borrow from it until the next. */
static json_object *last;

/* Validates JSON text; true when accepted.  The 400's detail goes to
 * detail. */
static bool
check(const char *text, struct valid_value *v, char *detail, size_t len)
{
	struct http_resp resp;
	char d[160];
	json_object *o = jsonin_parse(text, strlen(text), d, sizeof(d));
	bool okay;

	if (o == NULL)
		abort();
	json_object_put(last);
	last = o;
	http_resp_init(&resp);
	okay = valid_body(o, fields, N, v, &resp);
	snprintf(detail, len, "%.*s", (int)resp.body.len,
		 resp.body.p ? (const char *)resp.body.p : "");
	if (!okay && resp.status != 400)
		okay = true; /* a failure must be a 400: make it show */
	http_resp_free(&resp);
	return okay;
}

int
main(void)
{
	static const char *bad[] = {
		"{}",
		"{\"name\":\"\"}",
		"{\"name\":\"01234567890\"}",
		"{\"name\":5}",
		"{\"name\":null}",
		"{\"name\":\"a\",\"email\":\"nobody\"}",
		"{\"name\":\"a\",\"email\":\"a@b\"}",
		"{\"name\":\"a\",\"email\":\"a b@c.d\"}",
		"{\"name\":\"a\",\"slug\":\"Upper\"}",
		"{\"name\":\"a\",\"slug\":\"a--b\"}",
		"{\"name\":\"a\",\"slug\":\"-a\"}",
		"{\"name\":\"a\",\"id\":\"42\"}",
		"{\"name\":\"a\",\"active\":1}",
		"{\"name\":\"a\",\"uid\":-1}",
		"{\"name\":\"a\",\"uid\":4294967296}",
		"{\"name\":\"a\",\"uid\":1.5}",
		"{\"name\":\"a\",\"uid\":\"1\"}",
		"{\"name\":\"a\",\"role\":\"root\"}",
		"{\"name\":\"a\",\"color\":\"red\"}",
		"{\"name\":\"a\",\"color\":\"#12345g\"}",
		"{\"name\":\"a\",\"expires_at\":\"tomorrow\"}",
		"{\"name\":\"a\",\"expires_at\":\"2026-01-02T03:04:05\"}",
		"{\"name\":\"a\",\"scopes\":\"upload\"}",
		"{\"name\":\"a\",\"scopes\":[1]}",
		"{\"name\":\"a\",\"scopes\":[\"\"]}",
		"{\"name\":\"a\",\"tags\":[\"x\"]}",
		"{\"name\":\"a\",\"metadata\":[]}",
	};
	struct valid_value v[N];
	char detail[256];

	ok(check("{\"name\":\"Ada\",\"email\":\"ada@example.org\","
		 "\"slug\":\"north-1\","
		 "\"id\":\"0B7C3F0E-8F1A-4C2B-9D3E-5F6A7B8C9D0E\","
		 "\"active\":false,\"uid\":4294967295,\"role\":"
		 "\"facility_admin\",\"color\":\"#a0B1c2\","
		 "\"expires_at\":\"2026-01-02T03:04:05.123+02:00\","
		 "\"scopes\":[\"upload\",\"ingest\"],"
		 "\"tags\":[\"0b7c3f0e-8f1a-4c2b-9d3e-5f6a7b8c9d0e\"],"
		 "\"metadata\":{\"k\":1},\"unknown\":1}",
		 v, detail, sizeof(detail)),
	   "every type accepted, unknown members ignored");
	is_str(v[0].str, "Ada", "string value");
	is_str(v[3].str, "0b7c3f0e-8f1a-4c2b-9d3e-5f6a7b8c9d0e",
	       "UUID lower-cased");
	ok(v[4].present && !v[4].b, "bool false");
	is_int(v[5].num, 4294967295LL, "integer at its maximum");
	is_int(v[6].role, 1, "role facility_admin");
	ok(v[9].json != NULL && v[11].json != NULL, "arrays and objects kept");
	ok(check("{\"name\":\"a\",\"color\":null,\"expires_at\":null}", v,
		 detail, sizeof(detail)) &&
		   v[7].present && v[7].is_null && v[8].is_null &&
		   !v[1].present,
	   "nullable fields take null; absent ones are not present");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(!check(bad[i], v, detail, sizeof(detail)) &&
			   strstr(detail, "{\"detail\":\"") == detail,
		   "refused with a 400 detail: %s", bad[i]);
	ok(!check("{\"name\":\"a\",\"uid\":5}", v, detail, sizeof(detail)) ==
		   false,
	   "a valid small integer");
	{
		/* Built with json-c, as the parser may refuse \u0000 first. */
		json_object *o = json_object_new_object(),
			    *a = json_object_new_array();
		struct http_resp resp;

		json_object_object_add(o, "name",
				       json_object_new_string_len("a\0", 2));
		http_resp_init(&resp);
		ok(!valid_body(o, fields, N, v, &resp) && resp.status == 400,
		   "a NUL in a string refused with a 400");
		http_resp_free(&resp);
		json_object_array_add(
			a, json_object_new_string_len("upload\0x", 8));
		json_object_object_add(o, "name", json_object_new_string("a"));
		json_object_object_add(o, "scopes", a);
		http_resp_init(&resp);
		ok(!valid_body(o, fields, N, v, &resp) && resp.status == 400,
		   "a NUL in an array's string refused with a 400");
		http_resp_free(&resp);
		json_object_put(o);
	}
	{
		struct http_req req;
		struct http_resp resp;
		static const struct valid_field q[] = {
			{.name = "page",
			 .type = VALID_INT,
			 .min = 1,
			 .max = 1000000},
			{.name = "per_page",
			 .type = VALID_INT,
			 .min = 1,
			 .max = 100},
			{.name = "device_id", .type = VALID_UUID},
		};
		struct valid_value qv[3];
		char n1[] = "page", v1[] = "2", n2[] = "per_page", v2[] = "101";

		memset(&req, 0, sizeof(req));
		req.query[0].name = n1;
		req.query[0].value = v1;
		req.query[1].name = n2;
		req.query[1].value = v2;
		req.nquery = 2;
		http_resp_init(&resp);
		ok(!valid_query(&req, q, 3, qv, &resp) && resp.status == 400,
		   "per_page 101 refused");
		http_resp_free(&resp);
		v2[0] = '0';
		v2[1] = '\0';
		http_resp_init(&resp);
		ok(!valid_query(&req, q, 3, qv, &resp) && resp.status == 400,
		   "per_page 0 refused");
		http_resp_free(&resp);
		v2[0] = '9';
		http_resp_init(&resp);
		ok(valid_query(&req, q, 3, qv, &resp) && qv[0].num == 2 &&
			   qv[1].num == 9 && !qv[2].present,
		   "page 2, per_page 9, no device_id");
		http_resp_free(&resp);
	}
	{
		static const char *const formats[] = {"json", "csv", NULL};
		static const struct {
			const char *text;
			bool good;
			uint64_t want;
		} u64s[] = {
			{"0", true, 0},
			{"18446744073709551615", true, UINT64_MAX},
			{"18446744073709551616", false, 0},
			{"-1", false, 0},
			{"+1", false, 0},
			{" 1", false, 0},
			{"1x", false, 0},
			{"", false, 0},
		};
		struct http_req req;
		struct http_resp resp;
		char name[] = "from_us", value[32], fname[] = "format",
		     fvalue[8] = "csv";
		uint64_t u;
		bool present;
		int which = -1;

		memset(&req, 0, sizeof(req));
		req.query[0].name = name;
		req.query[0].value = value;
		req.query[1].name = fname;
		req.query[1].value = fvalue;
		req.nquery = 2;
		for (size_t i = 0; i < sizeof(u64s) / sizeof(u64s[0]); i++) {
			snprintf(value, sizeof(value), "%s", u64s[i].text);
			u = 7;
			http_resp_init(&resp);
			ok(valid_query_u64(&req, "from_us", &u, &present,
					   &resp) == u64s[i].good &&
				   (u64s[i].good ? u == u64s[i].want && present
						 : resp.status == 400),
			   "valid_query_u64 \"%s\"", u64s[i].text);
			http_resp_free(&resp);
		}
		http_resp_init(&resp);
		ok(valid_query_u64(&req, "to_us", &u, &present, &resp) &&
			   !present && u == 7,
		   "valid_query_u64: absent leaves the value");
		ok(valid_query_enum(&req, "format", formats, &which, &resp) &&
			   which == 1,
		   "valid_query_enum: the index");
		snprintf(fvalue, sizeof(fvalue), "xml");
		ok(!valid_query_enum(&req, "format", formats, &which, &resp) &&
			   resp.status == 400 &&
			   strstr((const char *)resp.body.p, "json, csv"),
		   "valid_query_enum: 400 naming the choices");
		http_resp_free(&resp);
	}
	json_object_put(last);
	return tap_done();
}
