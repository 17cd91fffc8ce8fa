/* SPDX-License-Identifier: MIT */
/*
 * alarmsapi.c - the alarm endpoints: scope checks and JSON around
 * lib/domain/alarms.
 */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/alarmsapi.h"
#include "core/conf.h"
#include "domain/alarms.h"
#include "web/dbjson.h"
#include "web/scope.h"
#include "web/valid.h"

/* The facility the caller's changes are limited to: NULL for a
 * super_admin (scope_owned() checked the row), else their own. */
static const char *
own_facility(const struct app_ctx *ctx)
{
	return ctx->who.facility_id[0] == '\0' ? NULL : ctx->who.facility_id;
}

/* Answers a list of what. */
static void
list(struct app_ctx *ctx, enum alarms_list what)
{
	const char *facility_id;
	PGresult *res = NULL;
	enum db_status st;

	if (!scope_list(ctx, &facility_id))
		return;
	if ((st = alarms_list(ctx->db, what, facility_id, &res)) == DB_OK)
		http_json(ctx->resp, 200, dbjson_rows(res));
	else
		app_db_error(ctx, st);
	PQclear(res);
}

void
alarmsapi_rules(struct app_ctx *ctx)
{
	list(ctx, ALARMS_LIST_RULES);
}

void
alarmsapi_webhooks(struct app_ctx *ctx)
{
	list(ctx, ALARMS_LIST_ENDPOINTS);
}

void
alarmsapi_alarms(struct app_ctx *ctx)
{
	list(ctx, ALARMS_LIST_ALARMS);
}

void
alarmsapi_deliveries(struct app_ctx *ctx)
{
	list(ctx, ALARMS_LIST_DELIVERIES);
}

/* Answers the outcome s (st) of a change, with its row res. */
static void
answer(struct app_ctx *ctx, enum alarms_status s, enum db_status st,
       PGresult *res, int status, const char *what)
{
	switch (s) {
	case ALARMS_OK:
		http_json(ctx->resp, status, dbjson_row(res, 0));
		break;
	case ALARMS_NOT_FOUND:
		http_error(ctx->resp, 404, "%s not found", what);
		break;
	case ALARMS_STATE:
		http_error(ctx->resp, 409,
			   "the %s is not in a state that "
			   "allows it",
			   what);
		break;
	case ALARMS_INVALID:
		http_error(ctx->resp, 400,
			   "the fields do not fit the %s's kind, or "
			   "device_id or facility_id names nothing of the "
			   "facility",
			   what);
		break;
	case ALARMS_CONFLICT:
		http_error(ctx->resp, 409,
			   "a %s of that name exists in this "
			   "facility",
			   what);
		break;
	default:
		app_db_error(ctx, st);
	}
}

/* Answers a creation's outcome: as answer(), or 409 at the facility's
 * cap (the setting cap). */
static void
created(struct app_ctx *ctx, enum alarms_status s, enum db_status st,
	PGresult *res, const char *what, const char *cap)
{
	if (s == ALARMS_FULL)
		http_error(ctx->resp, 409,
			   "the facility has as many %ss as allowed (%s): "
			   "delete one first",
			   what, cap);
	else
		answer(ctx, s, st, res, 201, what);
}

/* Whether s is one of the NULL-terminated names. */
static bool
one_of(const char *s, const char *const *names)
{
	for (; s != NULL && *names != NULL; names++)
		if (strcmp(s, *names) == 0)
			return true;
	return s == NULL;
}

enum {
	R_NAME,
	R_KIND,
	R_SEVERITY,
	R_DEVICE,
	R_STREAM,
	R_OP,
	R_FOR_SAMPLES,
	R_FOR_SECONDS,
	R_SILENCE,
	R_STORAGE,
	R_FACILITY,
	R_NFIELDS
};

static const struct valid_field rule_fields[R_NFIELDS] = {
	[R_NAME] = {.name = "name",
		    .type = VALID_STRING,
		    .flags = VALID_REQUIRED,
		    .min = 1,
		    .max = ALARMSAPI_NAME_MAX},
	[R_KIND] = {.name = "kind",
		    .type = VALID_STRING,
		    .flags = VALID_REQUIRED,
		    .min = 1,
		    .max = 32},
	[R_SEVERITY] = {.name = "severity",
			.type = VALID_STRING,
			.min = 1,
			.max = 16},
	[R_DEVICE] = {.name = "device_id",
		      .type = VALID_UUID,
		      .flags = VALID_NULLABLE},
	[R_STREAM] = {.name = "stream_name",
		      .type = VALID_STRING,
		      .flags = VALID_NULLABLE,
		      .min = 1,
		      .max = 256},
	[R_OP] = {.name = "op",
		  .type = VALID_STRING,
		  .flags = VALID_NULLABLE,
		  .min = 1,
		  .max = 16},
	[R_FOR_SAMPLES] = {.name = "for_samples",
			   .type = VALID_INT,
			   .min = 1,
			   .max = 1000000000},
	[R_FOR_SECONDS] = {.name = "for_seconds",
			   .type = VALID_INT,
			   .min = 0,
			   .max = 31536000},
	[R_SILENCE] = {.name = "silence_minutes",
		       .type = VALID_INT,
		       .flags = VALID_NULLABLE,
		       .min = 1,
		       .max = 525600},
	[R_STORAGE] = {.name = "storage_percent",
		       .type = VALID_INT,
		       .flags = VALID_NULLABLE,
		       .min = 1,
		       .max = 100},
	[R_FACILITY] = {.name = "facility_id",
			.type = VALID_UUID,
			.flags = VALID_NULLABLE},
};

/* The text of an optional integer field into buf, or NULL. */
static const char *
int_text(const struct valid_value *v, char *buf, size_t len)
{
	if (!v->present || v->is_null)
		return NULL;
	snprintf(buf, len, "%lld", v->num);
	return buf;
}

/* The finite number member name of body into buf (NULL when absent or
 * null); false with a 400 when it is something else. */
static bool
number_text(struct app_ctx *ctx, json_object *body, const char *name, char *buf,
	    size_t len, const char **out)
{
	json_object *o;
	double d;

	*out = NULL;
	if (!json_object_object_get_ex(body, name, &o) || o == NULL)
		return true;
	if (!json_object_is_type(o, json_type_double) &&
	    !json_object_is_type(o, json_type_int)) {
		http_error(ctx->resp, 400, "%s must be a number", name);
		return false;
	}
	if (!isfinite(d = json_object_get_double(o))) {
		http_error(ctx->resp, 400, "%s must be finite", name);
		return false;
	}
	snprintf(buf, len, "%.17g", d);
	*out = buf;
	return true;
}

/* The text of a rule's numbers, for struct alarms_rule. */
struct rule_text {
	char lo[32], hi[32], n[4][24];
};

/* The members of a rule's POST or PATCH of every kind into r: false
 * with a 400 when kind, severity or op is none of its names, or lo or hi
 * no number. */
static bool
rule_of(struct app_ctx *ctx, json_object *body, const struct valid_value *v,
	struct rule_text *t, struct alarms_rule *r)
{
	static const char *const kinds[] = {"threshold",     "silence",
					    "session_error", "job_failed",
					    "storage",	     NULL};
	static const char *const severities[] = {"info", "warning", "critical",
						 NULL};
	static const char *const ops[] = {"above", "below", "outside", NULL};

	if (!number_text(ctx, body, "lo", t->lo, sizeof(t->lo), &r->lo) ||
	    !number_text(ctx, body, "hi", t->hi, sizeof(t->hi), &r->hi))
		return false;
	r->name = valid_text(&v[R_NAME]);
	r->kind = valid_text(&v[R_KIND]);
	r->severity = valid_text(&v[R_SEVERITY]);
	r->device_id = valid_text(&v[R_DEVICE]);
	r->stream_name = valid_text(&v[R_STREAM]);
	r->op = valid_text(&v[R_OP]);
	r->for_samples = int_text(&v[R_FOR_SAMPLES], t->n[0], sizeof(t->n[0]));
	r->for_seconds = int_text(&v[R_FOR_SECONDS], t->n[1], sizeof(t->n[1]));
	r->silence_minutes = int_text(&v[R_SILENCE], t->n[2], sizeof(t->n[2]));
	r->storage_percent = int_text(&v[R_STORAGE], t->n[3], sizeof(t->n[3]));
	if (!one_of(r->kind, kinds) || !one_of(r->severity, severities) ||
	    !one_of(r->op, ops)) {
		http_error(ctx->resp, 400,
			   "kind, severity or op is not one of its names");
		return false;
	}
	return true;
}

void
alarmsapi_rule_post(struct app_ctx *ctx)
{
	struct valid_value v[R_NFIELDS];
	struct rule_text t;
	struct alarms_rule r = {0};
	PGresult *res = NULL;
	json_object *body;
	enum alarms_status s;
	enum db_status st = DB_OK;
	long long max;

	if ((body = valid_json_body(ctx->req, rule_fields, R_NFIELDS, v,
				    ctx->resp)) == NULL)
		return;
	if (!scope_create(ctx, &v[R_FACILITY], &r.facility_id) ||
	    !rule_of(ctx, body, v, &t, &r))
		goto out;
	/* Malformed, it is its default: xmhub check-config says so. */
	conf_get_int("XMHUB_ALARM_RULES_MAX", &max);
	s = alarms_rule_create(ctx->db, &r, max, &res, &st);
	created(ctx, s, st, res, "alarm rule", "XMHUB_ALARM_RULES_MAX");
out:
	PQclear(res);
	json_object_put(body);
}

/* The n fields of a POST into out, none required: a PATCH's. */
static void
optional(const struct valid_field *fields, size_t n, struct valid_field *out)
{
	for (size_t i = 0; i < n; i++) {
		out[i] = fields[i];
		out[i].flags &= ~(unsigned)VALID_REQUIRED;
	}
}

/* The body of a PATCH: the n fields of the POST, none required, into v
 * and enabled into *enabled ("true", "false" or NULL); NULL with a 400
 * when they do not check. */
static json_object *
patch_body(struct app_ctx *ctx, const struct valid_field *post_fields, size_t n,
	   struct valid_value *v, const char **enabled)
{
	static const struct valid_field enabled_field = {.name = "enabled",
							 .type = VALID_BOOL};
	struct valid_field f[R_NFIELDS]; /* the larger table */
	struct valid_value e;
	json_object *body;

	optional(post_fields, n, f);
	if ((body = valid_json_body(ctx->req, f, n, v, ctx->resp)) == NULL)
		return NULL;
	if (!valid_body(body, &enabled_field, 1, &e, ctx->resp)) {
		json_object_put(body);
		return NULL;
	}
	*enabled = !e.present ? NULL : e.b ? "true" : "false";
	return body;
}

/* Answers a change's outcome: as answer(), with the ALARMS_STATE of a
 * change asking for what does not change. */
static void
changed(struct app_ctx *ctx, enum alarms_status s, enum db_status st,
	PGresult *res, const char *what, const char *fixed)
{
	if (s == ALARMS_STATE)
		http_error(ctx->resp, 409, "a %s's %s do not change", what,
			   fixed);
	else
		answer(ctx, s, st, res, 200, what);
}

void
alarmsapi_rule_patch(struct app_ctx *ctx)
{
	/* The column each member of rule_fields sets (kind and facility_id
	 * none: they are checked); lo and hi are not in the table. */
	static const unsigned set_bits[R_NFIELDS] = {
		[R_NAME] = ALARMS_SET_NAME,
		[R_SEVERITY] = ALARMS_SET_SEVERITY,
		[R_DEVICE] = ALARMS_SET_DEVICE,
		[R_STREAM] = ALARMS_SET_STREAM,
		[R_OP] = ALARMS_SET_OP,
		[R_FOR_SAMPLES] = ALARMS_SET_FOR_SAMPLES,
		[R_FOR_SECONDS] = ALARMS_SET_FOR_SECONDS,
		[R_SILENCE] = ALARMS_SET_SILENCE,
		[R_STORAGE] = ALARMS_SET_STORAGE,
	};
	struct valid_value v[R_NFIELDS];
	struct alarms_rule_change c = {0};
	struct rule_text t;
	PGresult *res = NULL;
	json_object *body;
	enum alarms_status s;
	enum db_status st = DB_OK;

	if (!scope_owned(ctx, alarms_rule_facility, "alarm rule") ||
	    (body = patch_body(ctx, rule_fields, R_NFIELDS, v, &c.enabled)) ==
		    NULL)
		return;
	if (!rule_of(ctx, body, v, &t, &c.r))
		goto out;
	c.r.facility_id = valid_text(&v[R_FACILITY]);
	for (size_t i = 0; i < R_NFIELDS; i++)
		if (v[i].present)
			c.set |= set_bits[i];
	if (json_object_object_get_ex(body, "lo", NULL))
		c.set |= ALARMS_SET_LO;
	if (json_object_object_get_ex(body, "hi", NULL))
		c.set |= ALARMS_SET_HI;
	if (c.enabled != NULL)
		c.set |= ALARMS_SET_ENABLED;
	s = alarms_rule_update(ctx->db, own_facility(ctx), ctx->params[0], &c,
			       &res, &st);
	changed(ctx, s, st, res, "alarm rule", "kind and facility_id");
out:
	PQclear(res);
	json_object_put(body);
}

enum { W_NAME, W_URL, W_SECRET, W_FACILITY, W_NFIELDS };
_Static_assert((int)W_NFIELDS <= (int)R_NFIELDS,
	       "patch_body() holds either table");

static const struct valid_field webhook_fields[W_NFIELDS] = {
	[W_NAME] = {.name = "name",
		    .type = VALID_STRING,
		    .flags = VALID_REQUIRED,
		    .min = 1,
		    .max = ALARMSAPI_NAME_MAX},
	[W_URL] = {.name = "url",
		   .type = VALID_STRING,
		   .flags = VALID_REQUIRED,
		   .min = 8,
		   .max = ALARMSAPI_URL_MAX},
	[W_SECRET] = {.name = "secret",
		      .type = VALID_STRING,
		      .flags = VALID_REQUIRED,
		      .min = 16,
		      .max = ALARMSAPI_SECRET_MAX},
	[W_FACILITY] = {.name = "facility_id",
			.type = VALID_UUID,
			.flags = VALID_NULLABLE},
};

/* Whether url (NULL: none given) is http://, https:// or mailto: (the
 * database checks a mailto's address); false with a 400. */
static bool
url_ok(struct app_ctx *ctx, const char *url)
{
	if (url == NULL || strncmp(url, "http://", 7) == 0 ||
	    strncmp(url, "https://", 8) == 0 || strncmp(url, "mailto:", 7) == 0)
		return true;
	http_error(ctx->resp, 400, "url must be http://, https:// or mailto:");
	return false;
}

void
alarmsapi_webhook_post(struct app_ctx *ctx)
{
	struct valid_value v[W_NFIELDS];
	const char *facility_id;
	PGresult *res = NULL;
	json_object *body;
	enum alarms_status s;
	enum db_status st = DB_OK;
	long long max;

	if ((body = valid_json_body(ctx->req, webhook_fields, W_NFIELDS, v,
				    ctx->resp)) == NULL)
		return;
	if (!scope_create(ctx, &v[W_FACILITY], &facility_id))
		goto out;
	if (!url_ok(ctx, v[W_URL].str))
		goto out;
	conf_get_int("XMHUB_ALARM_ENDPOINTS_MAX", &max);
	s = alarms_endpoint_create(ctx->db, facility_id, v[W_NAME].str,
				   v[W_URL].str, v[W_SECRET].str, max, &res,
				   &st);
	created(ctx, s, st, res, "webhook", "XMHUB_ALARM_ENDPOINTS_MAX");
out:
	PQclear(res);
	json_object_put(body);
}

void
alarmsapi_webhook_patch(struct app_ctx *ctx)
{
	struct valid_value v[W_NFIELDS];
	struct alarms_endpoint_change c = {0};
	PGresult *res = NULL;
	json_object *body;
	enum alarms_status s;
	enum db_status st = DB_OK;

	if (!scope_owned(ctx, alarms_endpoint_facility, "webhook") ||
	    (body = patch_body(ctx, webhook_fields, W_NFIELDS, v,
			       &c.enabled)) == NULL)
		return;
	c.facility_id = valid_text(&v[W_FACILITY]);
	c.name = valid_text(&v[W_NAME]);
	c.url = valid_text(&v[W_URL]);
	c.secret = valid_text(&v[W_SECRET]);
	if (url_ok(ctx, c.url)) {
		s = alarms_endpoint_update(ctx->db, own_facility(ctx),
					   ctx->params[0], &c, &res, &st);
		changed(ctx, s, st, res, "webhook", "facility_id");
	}
	PQclear(res);
	json_object_put(body);
}

/* Answers a delete's outcome. */
static void
deleted(struct app_ctx *ctx, enum alarms_status s, enum db_status st,
	const char *what)
{
	if (s == ALARMS_OK)
		http_no_content(ctx->resp);
	else
		answer(ctx, s, st, NULL, 204, what);
}

void
alarmsapi_rule_delete(struct app_ctx *ctx)
{
	enum db_status st = DB_OK;
	enum alarms_status s;

	if (!scope_owned(ctx, alarms_rule_facility, "alarm rule"))
		return;
	s = alarms_rule_delete(ctx->db, own_facility(ctx), ctx->params[0], &st);
	deleted(ctx, s, st, "alarm rule");
}

void
alarmsapi_webhook_delete(struct app_ctx *ctx)
{
	enum db_status st = DB_OK;
	enum alarms_status s;

	if (!scope_owned(ctx, alarms_endpoint_facility, "webhook"))
		return;
	s = alarms_endpoint_delete(ctx->db, own_facility(ctx), ctx->params[0],
				   &st);
	deleted(ctx, s, st, "webhook");
}

/* Moves the route's alarm to state, by the caller. */
static void
move(struct app_ctx *ctx, const char *state)
{
	PGresult *res = NULL;
	enum db_status st = DB_OK;
	enum alarms_status s;

	if (!scope_owned(ctx, alarms_alarm_facility, "alarm"))
		return;
	s = alarms_move(ctx->db, own_facility(ctx), ctx->params[0], state,
			ctx->who.user_id[0] != '\0' ? ctx->who.user_id : NULL,
			&res, &st);
	answer(ctx, s, st, res, 200, "alarm");
	PQclear(res);
}

void
alarmsapi_ack(struct app_ctx *ctx)
{
	move(ctx, "acknowledged");
}

void
alarmsapi_clear(struct app_ctx *ctx)
{
	move(ctx, "cleared");
}
