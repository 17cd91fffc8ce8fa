/* SPDX-License-Identifier: MIT */
/*
 * dbjson.h - result rows as JSON objects.
 *
 * Handlers select exactly the columns a response carries, named as the
 * API names them, and turn each row into an object here: one place that
 * knows how PostgreSQL's text forms map to JSON (booleans, integers,
 * numeric, timestamps in ISO 8601 UTC, text[] arrays, jsonb objects).
 * The connection runs with TimeZone UTC (lib/core/db), which this relies on.
 */
#ifndef XMHUB_DBJSON_H
#define XMHUB_DBJSON_H

#include <json-c/json.h>
#include <libpq-fe.h>

#include "codec/buf.h"

/* Row row of res as a new object (NULL columns become null); NULL on
 * memory failure.  The caller releases it with json_object_put(). */
json_object *dbjson_row(const PGresult *res, int row);

/* Every row of res as a new array of objects. */
json_object *dbjson_rows(const PGresult *res);

/*
 * Every row of res appended to b as the JSON text of dbjson_rows()
 * serialized by http_json(), byte for byte, without building its
 * objects: a list's answer costs a fraction of the allocations.
 */
void dbjson_rows_put(struct buf *b, const PGresult *res);

/* Column col of row row as JSON (see dbjson_row()); NULL when the
 * column does not exist or is SQL NULL. */
json_object *dbjson_value(const PGresult *res, int row, int col);

#endif
