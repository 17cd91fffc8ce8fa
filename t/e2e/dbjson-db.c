/* SPDX-License-Identifier: MIT */
/*
 * dbjson-db - lib/web/dbjson.c against a real PostgreSQL: rows of every
 * type it maps (booleans, integers, numeric, floats, timestamps, text[],
 * json, jsonb, NULL, text with every byte json-c escapes), written by
 * dbjson_rows_put() and built by dbjson_rows() then serialized as
 * http_json() does, are the same text.  Run by t/e2e/dbjson-db.t with a
 * migrated database of its own in XMHUB_TEST_DATABASE_URL.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "web/dbjson.h"
#include "tap.h"
#include "testdb.h"

/* Each column's name and type differ from the others'; the second row
 * is all NULL; the text holds a quote, a backslash, a slash, each
 * control character json-c names, others, DEL and UTF-8. */
static const char rows_sql[] =
	"SELECT true AS \"t\"\"b\", false AS f, 7::smallint AS i2, "
	"'-2147483648'::integer AS i4, 9223372036854775807::bigint AS i8, "
	"18446744073709551615::numeric AS n, 1.5::real AS r, "
	"0.1::double precision AS d, "
	"'2026-11-21 10:20:33.123456+00'::timestamptz AS ts, "
	"'{a,\"b c\",\"d\\\\\\\"e\"}'::text[] AS arr, "
	"'{\"k\": [1, 2.5, null]}'::json AS j, "
	"'{\"k\": \"v/w\"}'::jsonb AS jb, "
	"'q\"b\\s/' || chr(8) || chr(12) || chr(10) || chr(13) || chr(9) || "
	"chr(1) || chr(31) || chr(127) || 'é€' AS txt, "
	"'6e1b2d90-8f70-4100-9852-d6eb52fe5a55'::uuid AS id "
	"UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
	"NULL, NULL, NULL, NULL, NULL, NULL";

/* True when dbjson_rows_put() writes what json-c serializes of res. */
static bool
same(const PGresult *res)
{
	json_object *a = dbjson_rows(res);
	const char *want = json_object_to_json_string_ext(
		a, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	struct buf b;
	bool eq;

	buf_init(&b, 0);
	dbjson_rows_put(&b, res);
	buf_putc(&b, '\0');
	eq = !b.failed && strcmp((const char *)b.p, want) == 0;
	if (!eq)
		diag("got %s, want %s", b.failed ? "(failed)" : (char *)b.p,
		     want);
	buf_free(&b);
	json_object_put(a);
	return eq;
}

int
main(void)
{
	char fac[64] = "";
	struct db *db = testdb_start("dbjson", fac, sizeof(fac));
	PGresult *res = NULL;

	if (db == NULL)
		return 1;
	ok(db_query_ro(db, &res, rows_sql, 0, NULL) == DB_OK &&
		   PQntuples(res) == 2,
	   "the rows are read");
	ok(res != NULL && same(res),
	   "every type, and NULL: the same JSON as json-c's");
	PQclear(res);
	ok(db_query_ro(db, &res, "SELECT 1 AS x WHERE false", 0, NULL) ==
			   DB_OK &&
		   same(res),
	   "no rows: []");
	PQclear(res);
	db_free(db);
	return tap_done();
}
