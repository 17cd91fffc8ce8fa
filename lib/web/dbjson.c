/* SPDX-License-Identifier: MIT */
/*
 * dbjson.c - result rows as JSON objects.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "web/dbjson.h"
#include "codec/jsonin.h"

/* Type OIDs of pg_type that get more than a string (catalog constants). */
#define OID_BOOL 16
#define OID_INT8 20
#define OID_INT2 21
#define OID_INT4 23
#define OID_JSON 114
#define OID_FLOAT4 700
#define OID_FLOAT8 701
#define OID_TEXT_ARRAY 1009
#define OID_TIMESTAMPTZ 1184
#define OID_NUMERIC 1700
#define OID_JSONB 3802

/*
 * "2026-11-21 10:20:33.123456+00" as "2026-11-21T10:20:33.123456Z"; the
 * session's TimeZone is UTC so the offset is always +00.
 */
static json_object *
timestamp(const char *s)
{
	char out[40];
	size_t n = strlen(s);

	if (n < 4 || n >= sizeof(out) || strcmp(s + n - 3, "+00") != 0)
		return json_object_new_string(s);
	memcpy(out, s, n - 3);
	out[n - 3] = 'Z';
	out[n - 2] = '\0';
	if (out[10] == ' ')
		out[10] = 'T';
	return json_object_new_string(out);
}

/* A text[] in its text form {a,b,"c d"}: the elements, unquoted. */
static json_object *
text_array(const char *s)
{
	json_object *a = json_object_new_array();
	char elem[256];
	size_t n;

	if (a == NULL || *s++ != '{')
		return a;
	while (*s != '\0' && *s != '}') {
		n = 0;
		if (*s == '"') {
			for (s++; *s != '\0' && *s != '"'; s++) {
				if (*s == '\\' && s[1] != '\0')
					s++;
				if (n < sizeof(elem) - 1)
					elem[n++] = *s;
			}
			if (*s == '"')
				s++;
		} else
			while (*s != '\0' && *s != ',' && *s != '}') {
				if (n < sizeof(elem) - 1)
					elem[n++] = *s;
				s++;
			}
		json_object_array_add(a,
				      json_object_new_string_len(elem, (int)n));
		if (*s == ',')
			s++;
	}
	return a;
}

json_object *
dbjson_value(const PGresult *res, int row, int col)
{
	const char *s;
	char detail[8];

	if (col < 0 || PQgetisnull(res, row, col))
		return NULL;
	s = PQgetvalue(res, row, col);
	switch (PQftype(res, col)) {
	case OID_BOOL:
		return json_object_new_boolean(s[0] == 't');
	case OID_INT2:
	case OID_INT4:
	case OID_INT8:
		return json_object_new_int64(strtoll(s, NULL, 10));
	case OID_FLOAT4:
	case OID_FLOAT8:
		return json_object_new_double(strtod(s, NULL));
	case OID_NUMERIC:
		/* u64 microsecond timestamps: exact, as the literal. */
		return json_object_new_uint64(strtoull(s, NULL, 10));
	case OID_TIMESTAMPTZ:
		return timestamp(s);
	case OID_TEXT_ARRAY:
		return text_array(s);
	case OID_JSON:
	case OID_JSONB:
		return jsonin_parse(s, strlen(s), detail, sizeof(detail));
	default:
		return json_object_new_string(s);
	}
}

json_object *
dbjson_row(const PGresult *res, int row)
{
	json_object *o = json_object_new_object();

	if (o == NULL)
		return NULL;
	for (int c = 0; c < PQnfields(res); c++)
		json_object_object_add(o, PQfname(res, c),
				       dbjson_value(res, row, c));
	return o;
}

json_object *
dbjson_rows(const PGresult *res)
{
	json_object *a = json_object_new_array();

	for (int r = 0; a != NULL && r < PQntuples(res); r++)
		json_object_array_add(a, dbjson_row(res, r));
	return a;
}
