/* SPDX-License-Identifier: MIT */
/*
 * route.c - table-driven dispatch inside one FastCGI program.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "web/route.h"

/*
 * Matches path against pattern: ROUTE_FOUND, ROUTE_NO_PATH, or
 * ROUTE_BAD_PARAM when only a {id} segment fails to be a UUID.  A {n}
 * segment takes any segment of up to ROUTE_UUID_LEN bytes.
 */
static enum route_match
match(const char *pattern, const char *path,
      char params[ROUTE_MAX_PARAMS][ROUTE_UUID_LEN + 1])
{
	size_t np = 0;
	bool bad = false;

	while (*pattern != '\0' && *path != '\0') {
		size_t pl = strcspn(pattern + 1, "/") + 1;
		size_t sl = strcspn(path + 1, "/") + 1;

		if (*pattern != '/' || *path != '/')
			return ROUTE_NO_PATH;
		if (pl == 5 && memcmp(pattern, "/{id}", 5) == 0) {
			if (np == ROUTE_MAX_PARAMS || sl == 1)
				return ROUTE_NO_PATH;
			if (!uuid_valid(path + 1, sl - 1))
				bad = true;
			else
				snprintf(params[np++], ROUTE_UUID_LEN + 1,
					 "%.*s", (int)(sl - 1), path + 1);
		} else if (pl == 4 && memcmp(pattern, "/{n}", 4) == 0) {
			/* Any segment; the handler checks it (a number). */
			if (np == ROUTE_MAX_PARAMS || sl == 1 ||
			    sl - 1 > ROUTE_UUID_LEN)
				return ROUTE_NO_PATH;
			snprintf(params[np++], ROUTE_UUID_LEN + 1, "%.*s",
				 (int)(sl - 1), path + 1);
		} else if (pl != sl || memcmp(pattern, path, pl) != 0)
			return ROUTE_NO_PATH;
		pattern += pl;
		path += sl;
	}
	if (*pattern != '\0' || *path != '\0')
		return ROUTE_NO_PATH;
	return bad ? ROUTE_BAD_PARAM : ROUTE_FOUND;
}

enum route_match
route_find(const struct route *table, size_t n, const char *method,
	   const char *path, const struct route **found,
	   char params[ROUTE_MAX_PARAMS][ROUTE_UUID_LEN + 1], char *allow,
	   size_t allow_len)
{
	enum route_match best = ROUTE_NO_PATH, m;
	size_t used = 0;

	if (allow_len > 0)
		allow[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		if ((m = match(table[i].pattern, path, params)) ==
		    ROUTE_NO_PATH)
			continue;
		if (m == ROUTE_BAD_PARAM) {
			best = best == ROUTE_NO_METHOD ? best : m;
			continue;
		}
		if (strcmp(table[i].method, method) == 0) {
			*found = &table[i];
			return ROUTE_FOUND;
		}
		best = ROUTE_NO_METHOD;
		if (used < allow_len)
			used += (size_t)snprintf(allow + used, allow_len - used,
						 "%s%s", used ? ", " : "",
						 table[i].method);
	}
	return best;
}
