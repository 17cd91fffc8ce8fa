/* SPDX-License-Identifier: MIT */
/*
 * alarm.c - xmhub alarm ...: rules, webhooks, alarms from the command line.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "alarm.h"
#include "core/conf.h"
#include "domain/alarms.h"
#include "usage.h"
#include "web/dbjson.h"

/* The settings and a database handle, or NULL after a message. */
static struct db *
open_db(void)
{
	char detail[512];
	const char *url;
	struct db *db = NULL;

	if (!conf_init(detail, sizeof(detail)))
		fprintf(stderr, "alarm: %s\n", detail);
	else if ((url = conf_get("XMHUB_DATABASE_URL")) == NULL)
		fprintf(stderr, "alarm: XMHUB_DATABASE_URL is not set\n");
	else if ((db = db_new(url)) == NULL)
		fprintf(stderr, "alarm: out of memory\n");
	return db;
}

/* Prints the rows of res as JSON: one object (one) or an array; the exit
 * status. */
static int
print_json(const PGresult *res, bool one)
{
	json_object *j = one ? dbjson_row(res, 0) : dbjson_rows(res);
	int rc = 1;

	if (j != NULL &&
	    puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN)) >=
		    0 &&
	    fflush(stdout) == 0)
		rc = 0;
	json_object_put(j);
	return rc;
}

/*
 * What every sub-command ends with: the rows of res printed as JSON (one
 * object when one) when s is ALARMS_OK, else why what came to nothing;
 * res and db freed.  The exit status.
 */
static int
finish(struct db *db, PGresult *res, enum alarms_status s, bool one,
       const char *what)
{
	static const char *const why[] = {
		[ALARMS_NOT_FOUND] = "not found",
		[ALARMS_STATE] = "is not in a state that allows it",
		[ALARMS_INVALID] = "refused as invalid (see the log above)",
		[ALARMS_CONFLICT] = "the name is taken in the facility",
		[ALARMS_FULL] = "the facility has as many as allowed "
				"(XMHUB_ALARM_RULES_MAX, _ENDPOINTS_MAX)",
		[ALARMS_DB] = "the database failed (see the log above)",
	};
	int rc = 1;

	if (s == ALARMS_OK)
		rc = print_json(res, one);
	else
		fprintf(stderr, "alarm: %s: %s\n", what, why[s]);
	PQclear(res);
	db_free(db);
	return rc;
}

/* The value of an option: NULL when absent or empty. */
static const char *
value(const struct usage_opt *opt)
{
	return opt->value != NULL && opt->value[0] != '\0' ? opt->value : NULL;
}

/* The options of a rule's values, of rule-create and rule-update, in the
 * order rule_values() reads them. */
/* clang-format off */
#define RULE_VALUE_OPTS                                                        \
	{"severity", false, false, NULL},                                      \
	{"device", false, false, NULL},                                        \
	{"stream", false, false, NULL},                                        \
	{"op", false, false, NULL},                                            \
	{"lo", false, false, NULL},                                            \
	{"hi", false, false, NULL},                                            \
	{"for-samples", false, false, NULL},                                   \
	{"for-seconds", false, false, NULL},                                   \
	{"silence-minutes", false, false, NULL},                               \
	{"storage-percent", false, false, NULL}
/* clang-format on */
#define RULE_VALUE_NOPTS 10

/* r's values from the RULE_VALUE_OPTS at o. */
static void
rule_values(const struct usage_opt *o, struct alarms_rule *r)
{
	r->severity = value(&o[0]);
	r->device_id = value(&o[1]);
	r->stream_name = value(&o[2]);
	r->op = value(&o[3]);
	r->lo = value(&o[4]);
	r->hi = value(&o[5]);
	r->for_samples = value(&o[6]);
	r->for_seconds = value(&o[7]);
	r->silence_minutes = value(&o[8]);
	r->storage_percent = value(&o[9]);
}

int
alarm_rule_create(int argc, char *argv[])
{
	struct usage_opt o[] = {
		{"facility", false, true, NULL},
		{"name", false, true, NULL},
		{"kind", false, true, NULL},
		RULE_VALUE_OPTS,
	};
	struct alarms_rule r = {0};
	PGresult *res = NULL;
	enum db_status st;
	enum alarms_status s;
	struct db *db;
	long long max;

	if (!usage_opts(argc, argv, o, sizeof(o) / sizeof(o[0]), NULL, NULL))
		return 2;
	r.facility_id = o[0].value;
	r.name = o[1].value;
	r.kind = o[2].value;
	rule_values(&o[3], &r);
	if ((db = open_db()) == NULL)
		return 1;
	conf_get_int("XMHUB_ALARM_RULES_MAX", &max);
	s = alarms_rule_create(db, &r, max, &res, &st);
	return finish(db, res, s, true, r.name);
}

int
alarm_webhook_create(int argc, char *argv[])
{
	struct usage_opt o[] = {
		{"facility", false, true, NULL},
		{"name", false, true, NULL},
		{"url", false, true, NULL},
		{"secret", false, true, NULL},
	};
	PGresult *res = NULL;
	enum db_status st;
	enum alarms_status s;
	struct db *db;
	long long max;

	if (!usage_opts(argc, argv, o, sizeof(o) / sizeof(o[0]), NULL, NULL))
		return 2;
	if ((db = open_db()) == NULL)
		return 1;
	conf_get_int("XMHUB_ALARM_ENDPOINTS_MAX", &max);
	s = alarms_endpoint_create(db, o[0].value, o[1].value, o[2].value,
				   o[3].value, max, &res, &st);
	return finish(db, res, s, true, o[1].value);
}

/* The options o of an update (its last two --enable and --disable) and
 * its ID: enabled "true", "false" or NULL when neither is given; false
 * after a usage error (both given are one). */
static bool
update_opts(int argc, char *argv[], struct usage_opt *o, size_t n,
	    const char **id, const char **enabled)
{
	if (!usage_opts(argc, argv, o, n, "ID", id))
		return false;
	if (o[n - 2].value != NULL && o[n - 1].value != NULL) {
		usage_error("--enable and --disable: one or the other");
		return false;
	}
	*enabled = o[n - 2].value != NULL   ? "true"
		   : o[n - 1].value != NULL ? "false"
					    : NULL;
	return true;
}

int
alarm_rule_update(int argc, char *argv[])
{
	struct usage_opt o[] = {
		{"name", false, false, NULL},
		RULE_VALUE_OPTS,
		{"enable", true, false, NULL},
		{"disable", true, false, NULL},
	};
	/* The column each of the RULE_VALUE_OPTS sets. */
	static const unsigned bits[RULE_VALUE_NOPTS] = {
		ALARMS_SET_SEVERITY,	ALARMS_SET_DEVICE,
		ALARMS_SET_STREAM,	ALARMS_SET_OP,
		ALARMS_SET_LO,		ALARMS_SET_HI,
		ALARMS_SET_FOR_SAMPLES, ALARMS_SET_FOR_SECONDS,
		ALARMS_SET_SILENCE,	ALARMS_SET_STORAGE,
	};
	struct alarms_rule_change c = {0};
	const char *id;
	PGresult *res = NULL;
	enum db_status st;
	enum alarms_status s;
	struct db *db;

	if (!update_opts(argc, argv, o, sizeof(o) / sizeof(o[0]), &id,
			 &c.enabled))
		return 2;
	if (o[0].value != NULL)
		c.set |= ALARMS_SET_NAME;
	for (size_t i = 0; i < RULE_VALUE_NOPTS; i++)
		if (o[1 + i].value != NULL)
			c.set |= bits[i];
	if (c.enabled != NULL)
		c.set |= ALARMS_SET_ENABLED;
	c.r.name = value(&o[0]);
	rule_values(&o[1], &c.r);
	if ((db = open_db()) == NULL)
		return 1;
	s = alarms_rule_update(db, NULL, id, &c, &res, &st);
	return finish(db, res, s, true, id);
}

int
alarm_webhook_update(int argc, char *argv[])
{
	struct usage_opt o[] = {
		{"name", false, false, NULL},	{"url", false, false, NULL},
		{"secret", false, false, NULL}, {"enable", true, false, NULL},
		{"disable", true, false, NULL},
	};
	struct alarms_endpoint_change c = {0};
	const char *id;
	PGresult *res = NULL;
	enum db_status st;
	enum alarms_status s;
	struct db *db;

	if (!update_opts(argc, argv, o, sizeof(o) / sizeof(o[0]), &id,
			 &c.enabled))
		return 2;
	c.name = value(&o[0]);
	c.url = value(&o[1]);
	c.secret = value(&o[2]);
	if ((db = open_db()) == NULL)
		return 1;
	s = alarms_endpoint_update(db, NULL, id, &c, &res, &st);
	return finish(db, res, s, true, id);
}

/* A list of what, with --facility. */
static int
list(int argc, char *argv[], enum alarms_list what)
{
	struct usage_opt o[] = {{"facility", false, false, NULL}};
	PGresult *res = NULL;
	enum alarms_status s;
	struct db *db;

	if (!usage_opts(argc, argv, o, 1, NULL, NULL))
		return 2;
	if ((db = open_db()) == NULL)
		return 1;
	s = alarms_list(db, what, o[0].value, &res) == DB_OK ? ALARMS_OK
							     : ALARMS_DB;
	return finish(db, res, s, false, "the list");
}

int
alarm_rules(int argc, char *argv[])
{
	return list(argc, argv, ALARMS_LIST_RULES);
}

int
alarm_webhooks(int argc, char *argv[])
{
	return list(argc, argv, ALARMS_LIST_ENDPOINTS);
}

int
alarm_list(int argc, char *argv[])
{
	return list(argc, argv, ALARMS_LIST_ALARMS);
}

int
alarm_deliveries(int argc, char *argv[])
{
	return list(argc, argv, ALARMS_LIST_DELIVERIES);
}

/* Moves alarm ID to state. */
static int
move(int argc, char *argv[], const char *state)
{
	const char *id;
	PGresult *res = NULL;
	enum db_status st;
	enum alarms_status s;
	struct db *db;

	if (!usage_opts(argc, argv, NULL, 0, "ID", &id))
		return 2;
	if ((db = open_db()) == NULL)
		return 1;
	s = alarms_move(db, NULL, id, state, NULL, &res, &st);
	return finish(db, res, s, true, id);
}

int
alarm_ack(int argc, char *argv[])
{
	return move(argc, argv, "acknowledged");
}

int
alarm_clear(int argc, char *argv[])
{
	return move(argc, argv, "cleared");
}
