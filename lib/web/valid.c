/* SPDX-License-Identifier: MIT */
/*
 * valid.c - input validation against typed field tables.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/auth.h"
#include "web/route.h"
#include "codec/utf8.h"
#include "web/valid.h"

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool
is_lower_alnum(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z');
}

static bool
slug_ok(const char *s, size_t n)
{
	if (n == 0 || n > 64 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_lower_alnum(s[i]) &&
		    !(s[i] == '-' && i > 0 && s[i - 1] != '-'))
			return false;
	return true;
}

/* A pragmatic check: one @, a non-empty local part, a dotted domain. */
static bool
email_ok(const char *s, size_t n)
{
	const char *at = memchr(s, '@', n), *dot;

	if (n > 254 || at == NULL || at == s ||
	    memchr(at + 1, '@', n - (size_t)(at - s) - 1))
		return false;
	dot = strrchr(at, '.');
	if (dot == NULL || dot == at + 1 || dot[1] == '\0')
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7F)
			return false;
	return true;
}

static bool
color_ok(const char *s, size_t n)
{
	if (n != 7 || s[0] != '#')
		return false;
	for (size_t i = 1; i < 7; i++)
		if (!is_digit(s[i]) && !((s[i] >= 'a' && s[i] <= 'f') ||
					 (s[i] >= 'A' && s[i] <= 'F')))
			return false;
	return true;
}

/* Matches n digits at *p and advances; false otherwise. */
static bool
digits(const char **p, int n)
{
	for (int i = 0; i < n; i++)
		if (!is_digit((*p)[i]))
			return false;
	*p += n;
	return true;
}

/* YYYY-MM-DDTHH:MM:SS[.f+](Z|+HH:MM|-HH:MM); PostgreSQL checks ranges. */
static bool
timestamp_ok(const char *s)
{
	const char *p = s;

	if (!digits(&p, 4) || *p++ != '-' || !digits(&p, 2) || *p++ != '-' ||
	    !digits(&p, 2))
		return false;
	if (*p != 'T' && *p != ' ')
		return false;
	p++;
	if (!digits(&p, 2) || *p++ != ':' || !digits(&p, 2) || *p++ != ':' ||
	    !digits(&p, 2))
		return false;
	if (*p == '.') {
		p++;
		if (!is_digit(*p))
			return false;
		while (is_digit(*p))
			p++;
	}
	if (*p == 'Z')
		return p[1] == '\0';
	if (*p != '+' && *p != '-')
		return false;
	p++;
	return digits(&p, 2) && *p++ == ':' && digits(&p, 2) && *p == '\0';
}

/* Lower-cases a UUID into v->buf. */
static void
set_uuid(struct valid_value *v, const char *s)
{
	for (size_t i = 0; i <= 36; i++)
		v->buf[i] =
			(char)(s[i] >= 'A' && s[i] <= 'F' ? s[i] + 32 : s[i]);
	v->str = v->buf;
}

/* Checks one text value of a text type; false with the 400 set. */
static bool
check_text(const struct valid_field *f, const char *s, size_t n,
	   struct valid_value *v, struct http_resp *resp)
{
	enum auth_role role;

	v->str = s;
	switch (f->type) {
	case VALID_STRING:
		if (!xmbp_utf8_valid((const uint8_t *)s, n) ||
		    memchr(s, 0, n) || (long long)n < f->min ||
		    (long long)n > f->max) {
			http_error(resp, 400,
				   "%s must be text of %lld to %lld bytes",
				   f->name, f->min, f->max);
			return false;
		}
		return true;
	case VALID_EMAIL:
		if (!email_ok(s, n)) {
			http_error(resp, 400, "%s is not an e-mail address",
				   f->name);
			return false;
		}
		return true;
	case VALID_SLUG:
		if (!slug_ok(s, n)) {
			http_error(resp, 400,
				   "%s must be lower-case letters, digits and "
				   "single dashes, at most 64",
				   f->name);
			return false;
		}
		return true;
	case VALID_UUID:
		if (!uuid_valid(s, n)) {
			http_error(resp, 400, "%s is not a UUID", f->name);
			return false;
		}
		set_uuid(v, s);
		return true;
	case VALID_ROLE:
		if (!auth_role_from_name(s, &role)) {
			http_error(resp, 400,
				   "%s must be user, facility_admin or "
				   "super_admin",
				   f->name);
			return false;
		}
		v->role = (int)role;
		return true;
	case VALID_COLOR:
		if (!color_ok(s, n)) {
			http_error(resp, 400, "%s must be a #RRGGBB color",
				   f->name);
			return false;
		}
		return true;
	case VALID_TIMESTAMP:
		if (n > 40 || !timestamp_ok(s)) {
			http_error(resp, 400,
				   "%s must be an ISO 8601 timestamp with a "
				   "zone",
				   f->name);
			return false;
		}
		return true;
	default:
		http_error(resp, 400, "%s has the wrong type", f->name);
		return false;
	}
}

/* Checks an array of at most max (0: 1000) elements of f's type: UUIDs, or
 * strings of 1..64 bytes without NUL; false with the 400 set. */
static bool
check_array(const struct valid_field *f, json_object *o, struct http_resp *resp)
{
	size_t n = json_object_array_length(o);

	if ((long long)n > (f->max > 0 ? f->max : 1000)) {
		http_error(resp, 400, "%s has too many elements", f->name);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(o, i);
		const char *s = json_object_get_string(e);
		size_t len = (size_t)json_object_get_string_len(e);

		if (!json_object_is_type(e, json_type_string) ||
		    (f->type == VALID_UUIDS
			     ? !uuid_valid(s, len)
			     : len == 0 || len > 64 || memchr(s, 0, len))) {
			http_error(resp, 400, "%s[%zu] is not a valid %s",
				   f->name, i,
				   f->type == VALID_UUIDS ? "UUID" : "string");
			return false;
		}
	}
	return true;
}

bool
valid_body(json_object *obj, const struct valid_field *fields, size_t n,
	   struct valid_value *out, struct http_resp *resp)
{
	for (size_t i = 0; i < n; i++) {
		const struct valid_field *f = &fields[i];
		struct valid_value *v = &out[i];
		json_object *o;
		int64_t num;

		memset(v, 0, sizeof(*v));
		if (!json_object_object_get_ex(obj, f->name, &o)) {
			if (f->flags & VALID_REQUIRED) {
				http_error(resp, 400, "%s is required",
					   f->name);
				return false;
			}
			continue;
		}
		v->present = true;
		if (o == NULL) {
			if (!(f->flags & VALID_NULLABLE)) {
				http_error(resp, 400, "%s must not be null",
					   f->name);
				return false;
			}
			v->is_null = true;
			continue;
		}
		switch (f->type) {
		case VALID_BOOL:
			if (!json_object_is_type(o, json_type_boolean)) {
				http_error(resp, 400,
					   "%s must be true or false", f->name);
				return false;
			}
			v->b = json_object_get_boolean(o);
			break;
		case VALID_INT:
			if (!json_object_is_type(o, json_type_int) ||
			    (num = json_object_get_int64(o)) < f->min ||
			    num > f->max ||
			    (num == INT64_MAX &&
			     json_object_get_uint64(o) != INT64_MAX)) {
				http_error(resp, 400,
					   "%s must be an integer from %lld to "
					   "%lld",
					   f->name, f->min, f->max);
				return false;
			}
			v->num = num;
			break;
		case VALID_OBJECT:
			if (!json_object_is_type(o, json_type_object)) {
				http_error(resp, 400, "%s must be an object",
					   f->name);
				return false;
			}
			v->json = o;
			break;
		case VALID_STRINGS:
		case VALID_UUIDS:
			if (!json_object_is_type(o, json_type_array)) {
				http_error(resp, 400, "%s must be an array",
					   f->name);
				return false;
			}
			if (!check_array(f, o, resp))
				return false;
			v->json = o;
			break;
		default:
			if (!json_object_is_type(o, json_type_string)) {
				http_error(resp, 400, "%s must be a string",
					   f->name);
				return false;
			}
			if (!check_text(f, json_object_get_string(o),
					(size_t)json_object_get_string_len(o),
					v, resp))
				return false;
			break;
		}
	}
	return true;
}

const char *
valid_text(const struct valid_value *v)
{
	return v->present && !v->is_null ? v->str : NULL;
}

json_object *
valid_json_body(struct http_req *req, const struct valid_field *fields,
		size_t n, struct valid_value *out, struct http_resp *resp)
{
	json_object *body = http_json_body(req, HTTP_JSON_LIMIT, resp);

	if (body != NULL && !valid_body(body, fields, n, out, resp)) {
		json_object_put(body);
		body = NULL;
	}
	return body;
}

bool
valid_query(const struct http_req *req, const struct valid_field *fields,
	    size_t n, struct valid_value *out, struct http_resp *resp)
{
	for (size_t i = 0; i < n; i++) {
		const struct valid_field *f = &fields[i];
		struct valid_value *v = &out[i];
		const char *s = http_query(req, f->name);
		char *end;

		memset(v, 0, sizeof(*v));
		if (s == NULL) {
			if (f->flags & VALID_REQUIRED) {
				http_error(resp, 400, "%s is required",
					   f->name);
				return false;
			}
			continue;
		}
		v->present = true;
		if (f->type == VALID_INT) {
			errno = 0;
			v->num = strtoll(s, &end, 10);
			if (errno != 0 || end == s || *end != '\0' ||
			    v->num < f->min || v->num > f->max) {
				http_error(resp, 400,
					   "%s must be an integer from %lld to "
					   "%lld",
					   f->name, f->min, f->max);
				return false;
			}
		} else if (f->type == VALID_BOOL) {
			if (strcmp(s, "true") != 0 && strcmp(s, "false") != 0) {
				http_error(resp, 400,
					   "%s must be true or false", f->name);
				return false;
			}
			v->b = s[0] == 't';
		} else if (!check_text(f, s, strlen(s), v, resp))
			return false;
	}
	return true;
}

bool
valid_query_u64(const struct http_req *req, const char *name, uint64_t *out,
		bool *present, struct http_resp *resp)
{
	const char *s = http_query(req, name);
	uint64_t v = 0;

	*present = s != NULL;
	if (s == NULL)
		return true;
	if (*s == '\0' || strspn(s, "0123456789") != strlen(s))
		goto bad;
	for (; *s != '\0'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			goto bad;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
bad:
	http_error(resp, 400,
		   "%s must be an integer from 0 to 18446744073709551615",
		   name);
	return false;
}

bool
valid_query_enum(const struct http_req *req, const char *name,
		 const char *const *names, int *out, struct http_resp *resp)
{
	const char *s = http_query(req, name);
	char list[256];
	size_t used = 0;

	if (s == NULL)
		return true;
	for (int i = 0; names[i] != NULL; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = i;
			return true;
		}
	list[0] = '\0';
	for (int i = 0; names[i] != NULL && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used,
					 "%s%s", i > 0 ? ", " : "", names[i]);
	http_error(resp, 400, "%s must be one of %s", name, list);
	return false;
}
