/* SPDX-License-Identifier: MIT */
/*
 * valid.h - input validation against typed field tables.
 *
 * As kcgi's struct kvalid: a handler declares the fields it takes (JSON
 * body members or query parameters), valid_body()/valid_query() check
 * them all once, up front, and fill a value per field; after that the
 * handler only sees checked values.  Failures answer 400 with a detail
 * naming the field.  Body members not in the table are ignored, as
 * clients may send whole objects back.
 */
#ifndef XMHUB_VALID_H
#define XMHUB_VALID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "web/http.h"

enum valid_type {
	VALID_STRING,	 /* UTF-8 text of min..max characters (bytes) */
	VALID_EMAIL,	 /* local@domain, at most 254 bytes */
	VALID_SLUG,	 /* [a-z0-9]+(-[a-z0-9]+)*, 1..64 */
	VALID_UUID,	 /* 8-4-4-4-12 hex, lower-cased */
	VALID_BOOL,	 /* true or false */
	VALID_INT,	 /* an integer in min..max (query: decimal text) */
	VALID_ROLE,	 /* user, facility_admin, super_admin */
	VALID_COLOR,	 /* #RRGGBB */
	VALID_TIMESTAMP, /* ISO 8601 with a zone, e.g. 2026-01-02T03:04:05Z */
	VALID_STRINGS,	 /* array of at most max (0: 1000) strings of 1..64
			  * bytes each, no NUL */
	VALID_UUIDS,	 /* array of at most max (0: 1000) UUIDs, kept as
			  * given (not lower-cased) */
	VALID_OBJECT	 /* a JSON object */
};

/* Bits of valid_field.flags. */
enum valid_flag {
	VALID_REQUIRED = 1 << 0, /* absent: 400 "NAME is required" */
	VALID_NULLABLE = 1 << 1	 /* JSON null accepted (value has is_null) */
};

/*
 * One field, written with designated initializers:
 * {.name = "uid", .type = VALID_INT, .flags = VALID_REQUIRED, .min = 0,
 *  .max = 4294967295LL}; members left out are 0 (optional, not nullable).
 */
struct valid_field {
	const char *name;
	enum valid_type type;
	unsigned flags;	    /* VALID_REQUIRED | VALID_NULLABLE */
	long long min, max; /* VALID_INT range; VALID_STRING length; array
			     * types: max elements */
};

struct valid_value {
	bool present; /* given (JSON null counts as given) */
	bool is_null;
	const char *str;   /* text types; points into the input or into buf */
	long long num;	   /* VALID_INT */
	bool b;		   /* VALID_BOOL */
	int role;	   /* VALID_ROLE: enum auth_role */
	json_object *json; /* VALID_OBJECT, VALID_STRINGS, VALID_UUIDS:
			    * borrowed from the body */
	char buf[48];	   /* normalised short text (UUID, e-mail ...) */
};

/*
 * Checks the members of obj against the n fields and fills out[0..n).
 * False with a 400 in resp at the first bad or missing field.  Values
 * borrow from obj: keep it until they are used.
 */
bool valid_body(json_object *obj, const struct valid_field *fields, size_t n,
		struct valid_value *out, struct http_resp *resp);

/* The text of an optional field: its string, or NULL when absent or
 * null (the SQL parameter of an optional column). */
const char *valid_text(const struct valid_value *v);

/*
 * Reads the request's body as a JSON object (at most HTTP_JSON_LIMIT
 * bytes) and checks it with valid_body().  Returns the body, which the
 * caller releases with json_object_put() after using out, or NULL with
 * the 400 or 413 answered.
 */
json_object *valid_json_body(struct http_req *req,
			     const struct valid_field *fields, size_t n,
			     struct valid_value *out, struct http_resp *resp);

/*
 * The same for the request's query parameters (text: VALID_INT, VALID_UUID,
 * VALID_BOOL, VALID_STRING and the enumerations make sense there; null does
 * not exist, so VALID_NULLABLE is ignored).  Values borrow from req.  False
 * with a 400 in resp at the first bad or missing parameter.
 */
bool valid_query(const struct http_req *req, const struct valid_field *fields,
		 size_t n, struct valid_value *out, struct http_resp *resp);

/*
 * Query parameter name as an unsigned 64-bit integer (decimal digits
 * only, no sign or blanks) into *out, *present true; when absent *out
 * is left alone and *present false.  False with a 400 naming it.
 */
bool valid_query_u64(const struct http_req *req, const char *name,
		     uint64_t *out, bool *present, struct http_resp *resp);

/*
 * Query parameter name, one of the NULL-terminated names, as its index
 * into *out (left alone when absent).  False with a 400 listing them.
 */
bool valid_query_enum(const struct http_req *req, const char *name,
		      const char *const *names, int *out,
		      struct http_resp *resp);

#endif
