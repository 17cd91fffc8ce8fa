/* SPDX-License-Identifier: MIT */
/*
 * xmhub - command-line tool.  Its commands are documented in xmhub(1)
 * (man/xmhub.1) and with what they serve: xmbp and xmch in doc/xmbp.md,
 * migrate in doc/database.md, user, facility, api-key, device and
 * check-config in doc/operations.md, hash-password in doc/face.md, send
 * and sim in doc/sender.md.
 *
 * A table maps "GROUP [COMMAND]" to a handler of one of two shapes:
 * filters read their whole input (a file or standard input), call one
 * lib/ function and write the whole answer; tools take options and do
 * their own output.  Every command answers --help with its own usage
 * (exit 0).  Exit status: 0 done, 1 the input was refused or the work
 * failed, 2 usage: one line saying what was wrong (usage.h), then the
 * command's usage.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <json-c/json.h>

#include "domain/admin.h"
#include "domain/apikey.h"
#include "alarm.h"
#include "backup.h"
#include "device.h"
#include "codec/buf.h"
#include "core/auth.h"
#include "core/conf.h"
#include "core/db.h"
#include "domain/facility.h"
#include "codec/jsonform.h"
#include "core/migrate.h"
#include "domain/throttle.h"
#include "domain/user.h"
#include "codec/xmbp.h"
#include "codec/xmch.h"
#include "core/settings.h"
#include "store/storage.h"
#include "web/dbjson.h"
#include "daemon.h"
#include "httpdconf.h"
#include "usage.h"

/* Input files are read whole; larger ones are refused. */
#define INPUT_MAX (1UL << 30)

struct cmd {
	const char *group, *name, *args; /* name NULL: one word */
	/* A filter: turns the whole input into the whole output; 1 after a
	 * message. */
	int (*run)(const struct buf *in, struct buf *out);
	/* A tool: given the arguments after its words; 2 for usage, after
	 * its usage_error. */
	int (*tool)(int argc, char *argv[]);
	const char *what; /* one line for --help, or NULL */
};

static int cmd_xmbp_decode(const struct buf *, struct buf *);
static int cmd_xmbp_encode(const struct buf *, struct buf *);
static int cmd_xmch_dump(const struct buf *, struct buf *);
static int cmd_xmch_pack(const struct buf *, struct buf *);
static int cmd_migrate(int, char *[]);
static int cmd_user_create(int, char *[]);
static int cmd_user_unthrottle(int, char *[]);
static int cmd_user_set_password(int, char *[]);
static int cmd_facility_create(int, char *[]);
static int cmd_api_key_create(int, char *[]);
static int cmd_hash_password(int, char *[]);
static int cmd_list(int, char *[]);
static int cmd_disable(int, char *[]);
static int cmd_delete(int, char *[]);
static int cmd_check_config(int, char *[]);
static int cmd_settings(int, char *[]);

#define LIST_ARGS "[--facility ID] [--json]"

static const struct cmd cmds[] = {
	{"xmbp", "decode", "[FILE|-]", cmd_xmbp_decode, NULL,
	 "an XMBP batch as JSON"},
	{"xmbp", "encode", "[FILE|-]", cmd_xmbp_encode, NULL,
	 "JSON as an XMBP batch"},
	{"xmch", "dump", "FILE|-", cmd_xmch_dump, NULL,
	 "a stored chunk as JSON"},
	{"xmch", "pack", "[FILE|-]", cmd_xmch_pack, NULL,
	 "JSON as a stored chunk"},
	{"migrate", NULL, "[--dir DIR] [--check]", NULL, cmd_migrate,
	 "applies the database migrations (--check: fails while one is "
	 "pending)"},
	{"check-config", NULL, "[--env-file FILE]", NULL, cmd_check_config,
	 "says what is missing or wrong in the settings"},
	{"settings", NULL, "[--env|--man]", NULL, cmd_settings,
	 "every setting: a table, an env file or xmhub.env(5)"},
	{"facility", "create", "--name N --slug S [--description D]", NULL,
	 cmd_facility_create, "creates a facility"},
	{"facility", "list", "[--json]", NULL, cmd_list,
	 "lists the facilities"},
	{"facility", "disable", "ID|SLUG", NULL, cmd_disable,
	 "deactivates a facility: its users and keys stop working"},
	{"facility", "delete", "ID|SLUG", NULL, cmd_delete,
	 "deletes a facility with its rows and stored objects"},
	{"user", "create",
	 "--email E [--password -] --role R [--facility ID] [--name N] "
	 "[--if-absent]",
	 NULL, cmd_user_create,
	 "creates a user; the password is prompted for or read from standard "
	 "input"},
	{"user", "list", LIST_ARGS, NULL, cmd_list, "lists the users"},
	{"user", "disable", "ID|EMAIL", NULL, cmd_disable,
	 "deactivates a user and revokes its refresh tokens"},
	{"user", "delete", "ID|EMAIL", NULL, cmd_delete, "deletes a user"},
	{"user", "set-password", "ID|EMAIL [--password -]", NULL,
	 cmd_user_set_password,
	 "sets a password (prompted for or from standard input), ends the "
	 "user's tokens, clears its login throttle"},
	{"user", "unthrottle", "[--email E] [--address A]", NULL,
	 cmd_user_unthrottle, "forgets failed logins"},
	{"api-key", "create",
	 "--facility ID --name N [--scopes upload,ingest] [--expires-at T]",
	 NULL, cmd_api_key_create, "creates an API key and prints it, once"},
	{"api-key", "list", LIST_ARGS, NULL, cmd_list,
	 "lists the API keys, never the keys"},
	{"api-key", "revoke", "ID", NULL, cmd_disable, "revokes an API key"},
	{"api-key", "delete", "ID", NULL, cmd_delete,
	 "deletes an API key no upload was made with"},
	{"device", "list", LIST_ARGS, NULL, cmd_list, "lists the devices"},
	{"alarm", "rule-create", ALARM_RULE_ARGS, NULL, alarm_rule_create,
	 "creates an alarm rule"},
	{"alarm", "rule-update", ALARM_RULE_UPDATE_ARGS, NULL,
	 alarm_rule_update, "changes an alarm rule"},
	{"alarm", "rules", ALARM_LIST_ARGS, NULL, alarm_rules,
	 "lists the alarm rules"},
	{"alarm", "webhook-create", ALARM_WEBHOOK_ARGS, NULL,
	 alarm_webhook_create, "creates a webhook endpoint for alarm events"},
	{"alarm", "webhook-update", ALARM_WEBHOOK_UPDATE_ARGS, NULL,
	 alarm_webhook_update, "changes a webhook endpoint"},
	{"alarm", "webhooks", ALARM_LIST_ARGS, NULL, alarm_webhooks,
	 "lists the webhook endpoints"},
	{"alarm", "list", ALARM_LIST_ARGS, NULL, alarm_list,
	 "lists the alarms"},
	{"alarm", "deliveries", ALARM_LIST_ARGS, NULL, alarm_deliveries,
	 "lists the webhook deliveries"},
	{"alarm", "ack", "ID", NULL, alarm_ack, "acknowledges an alarm"},
	{"alarm", "clear", "ID", NULL, alarm_clear, "clears an alarm"},
	{"httpd-conf", NULL,
	 "lighttpd|apache|htaccess [--var DIR] [--log DIR] [--port N] "
	 "[--face-port N] [--ws-port N] [--authz-port N] [--addr A] [--hsts V] "
	 "[--proxies LIST] [--output F] [--public DIR]",
	 NULL, httpdconf_cli,
	 "prints the web server's configuration for the installed tree; "
	 "htaccess --public DIR installs a shared host's site there"},
	{"daemon", NULL, "NAME", NULL, daemon_main,
	 "runs a daemon of the installed units with the settings' ports"},
	{"hash-password", NULL, "< PASSWORD (one line on standard input)", NULL,
	 cmd_hash_password,
	 "the Argon2id hash of a password, e.g. for FACE_API_ADMIN_PASSWORD"},
	{"send", NULL,
	 "--url BASE_URL [--key API_KEY] --session ID "
	 "--streams INDEX[:NAME]:TYPE,...|@SESSION.json [--ws] [--in-flight N] "
	 "[--spool DIR] [--batch-samples N] [--linger-ms MS] [--timeout S] "
	 "[FILE|-]",
	 NULL, send_main,
	 "sends CSV samples to an ingest session, spooled until acknowledged"},
	{"backup", NULL, "DIR", NULL, backup_main,
	 "backs up the database and the object store into DIR"},
	{"restore", NULL, "[--force] DIR", NULL, restore_main,
	 "restores a backup into an empty database and store (--force: "
	 "over existing data)"},
	{"sim", NULL,
	 "--url BASE_URL [--key API_KEY] [--devices N] [--streams M] "
	 "[--rate HZ] [--duration S | --samples N] [--batch N] [--ws] "
	 "[--in-flight N] [--json] "
	 "[--device-uid BASE] [--timeout S]",
	 NULL, sim_main,
	 "simulates devices sending generated streams, reports rates"},
};

/* The command being run (main sets it), for the handlers shared by
 * several groups. */
static const struct cmd *current;

/* The settings and a database handle, or NULL after a message. */
static struct db *
open_db(const char *prog)
{
	char detail[512];
	const char *url;
	struct db *db;

	if (!conf_init(detail, sizeof(detail))) {
		fprintf(stderr, "%s: %s\n", prog, detail);
		return NULL;
	}
	if ((url = conf_get("XMHUB_DATABASE_URL")) == NULL) {
		fprintf(stderr, "%s: XMHUB_DATABASE_URL is not set\n", prog);
		return NULL;
	}
	if ((db = db_new(url)) == NULL)
		fprintf(stderr, "%s: out of memory\n", prog);
	return db;
}

/* Says why a db_* call failed, in the CLI's words. */
static int
db_failed(const char *prog, enum db_status st, const char *what)
{
	static const char *const why[] = {
		[DB_UNAVAILABLE] = "the database is unavailable",
		[DB_CONFLICT] = "already exists",
		[DB_FOREIGN_KEY] = "refers to something that does not exist",
		[DB_INVALID] = "refused as invalid",
		[DB_ERROR] = "failed (see the log above)",
	};

	fprintf(stderr, "%s: %s %s\n", prog, what,
		st < sizeof(why) / sizeof(why[0]) && why[st] ? why[st]
							     : "failed");
	return 1;
}

/* Reads path ("-" or NULL: standard input) into b; prints why not. */
static int
read_input(const char *path, const char *prog, struct buf *b)
{
	int fd = 0, rc = 0;

	if (path != NULL && strcmp(path, "-") != 0 &&
	    (fd = open(path, O_RDONLY)) < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return 1;
	}
	if (!buf_read_fd(b, fd)) {
		if (b->failed)
			fprintf(stderr, "%s: %s: larger than %lu bytes\n", prog,
				path ? path : "-", INPUT_MAX);
		else
			fprintf(stderr, "%s: %s: %s\n", prog, path ? path : "-",
				strerror(errno));
		rc = 1;
	}
	if (fd != 0)
		close(fd);
	return rc;
}

/* Writes b to standard output. */
static int
write_output(const char *prog, const struct buf *b)
{
	if (b->failed) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return 1;
	}
	if (fwrite(b->p, 1, b->len, stdout) != b->len || fflush(stdout) != 0) {
		fprintf(stderr, "%s: standard output: %s\n", prog,
			strerror(errno));
		return 1;
	}
	return 0;
}

static int
cmd_xmbp_decode(const struct buf *in, struct buf *out)
{
	struct xmbp_batch batch;
	struct xmbp_error e;

	if (xmbp_decode(in->p, in->len, &batch, &e) != XMBP_OK) {
		fprintf(stderr, "xmbp: %s: %s (at byte %zu)\n",
			xmbp_status_name(e.status), e.msg, e.offset);
		return 1;
	}
	jsonform_batch(out, &batch);
	return 0;
}

static int
cmd_xmbp_encode(const struct buf *in, struct buf *out)
{
	struct jsonform_error e;

	if (!jsonform_encode_batch((const char *)in->p, in->len, out, &e)) {
		fprintf(stderr, "xmbp: %s: %s\n", e.kind, e.msg);
		return 1;
	}
	return 0;
}

static int
cmd_xmch_dump(const struct buf *in, struct buf *out)
{
	struct xmch_chunk chunk;
	struct xmch_error e;

	if (xmch_open(in->p, in->len, &chunk, &e) != XMCH_OK) {
		fprintf(stderr, "xmch: %s: %s\n", xmch_status_name(e.status),
			e.msg);
		return 1;
	}
	jsonform_chunk(out, &chunk);
	xmch_close(&chunk);
	return 0;
}

static int
cmd_xmch_pack(const struct buf *in, struct buf *out)
{
	struct jsonform_error e;

	if (!jsonform_pack_chunk((const char *)in->p, in->len, out, &e)) {
		fprintf(stderr, "xmch: %s: %s\n", e.kind, e.msg);
		return 1;
	}
	return 0;
}

/*
 * Applies the migrations of --dir, else of XMHUB_SQL_DIR, else the
 * installed ones, to XMHUB_DATABASE_URL.  With --check, changes nothing
 * and fails only when migrations are pending: the units run it before
 * their programs start (doc/packaging.md "Upgrades"); a database that
 * can not be reached is said and let pass, since the programs answer
 * 503 until it is back, as they do without the check.
 */
static int
cmd_migrate(int argc, char *argv[])
{
	struct usage_opt o[] = {{"dir", false, false, NULL},
				{"check", true, false, NULL}};
	struct migrate_result r;
	const char *dir, *url;
	char detail[512];

	if (!usage_opts(argc, argv, o, 2, NULL, NULL))
		return 2;
	if (!conf_init(detail, sizeof(detail))) {
		fprintf(stderr, "migrate: %s\n", detail);
		return 1;
	}
	dir = o[0].value != NULL ? o[0].value : conf_get("XMHUB_SQL_DIR");
	if ((url = conf_get("XMHUB_DATABASE_URL")) == NULL) {
		fprintf(stderr, "migrate: XMHUB_DATABASE_URL is not set\n");
		return 1;
	}
	if (o[1].value != NULL) {
		switch (migrate_check(url, dir, stdout, &r)) {
		case MIGRATE_CHECK_UP_TO_DATE:
			printf("migrate: up to date (%u migration%s)\n",
			       r.files, r.files == 1 ? "" : "s");
			return fflush(stdout) == 0 ? 0 : 1;
		case MIGRATE_CHECK_PENDING:
			fflush(stdout);
			fprintf(stderr,
				"migrate: %u migration%s pending: the programs "
				"must not run on this schema; apply them with "
				"`xmhub migrate` as the user xmhub\n",
				r.pending, r.pending == 1 ? "" : "s");
			return 1;
		case MIGRATE_CHECK_UNAVAILABLE:
			fprintf(stderr, "migrate: the database is unavailable: "
					"not checked (the programs answer 503 "
					"until it is back)\n");
			return 0;
		case MIGRATE_CHECK_FAILED:
			return 1;
		}
	}
	if (!migrate_apply(url, dir, stdout, &r))
		return 1;
	printf("migrate: up to date (%u migration%s, %u applied now)\n",
	       r.files, r.files == 1 ? "" : "s", r.applied);
	return fflush(stdout) == 0 ? 0 : 1;
}

/* Reads one line of f into buf without its line end; false at EOF. */
static bool
read_line(FILE *f, char *buf, size_t len)
{
	if (fgets(buf, (int)len, f) == NULL)
		return false;
	buf[strcspn(buf, "\r\n")] = '\0';
	return true;
}

/*
 * The password of a --password option (given, NULL when absent): "-" or
 * absent reads it from standard input, after a prompt and without echo
 * when standard input is a terminal.  A password on the command line is
 * refused (every user of the machine sees the process list).  NULL
 * after a message.
 */
static const char *
read_password(const char *prog, const char *given, char *buf, size_t len)
{
	struct termios old, quiet;
	bool quiet_set = false, ok;

	if (given != NULL && strcmp(given, "-") != 0) {
		fprintf(stderr,
			"%s: a password on the command line is visible to "
			"every user of the machine: give --password - and "
			"write it on standard input, or leave --password out "
			"to be prompted\n",
			prog);
		return NULL;
	}
	/* Echo off before the prompt: what is typed after it is not shown. */
	if (isatty(0)) {
		if (tcgetattr(0, &old) == 0) {
			quiet = old;
			quiet.c_lflag &= ~(tcflag_t)ECHO;
			quiet_set = tcsetattr(0, TCSAFLUSH, &quiet) == 0;
		}
		fprintf(stderr, "Password: ");
		fflush(stderr);
	}
	ok = read_line(stdin, buf, len);
	if (quiet_set) {
		tcsetattr(0, TCSAFLUSH, &old);
		fputc('\n', stderr);
	}
	if (!ok || buf[0] == '\0') {
		fprintf(stderr, "%s: no password on standard input\n", prog);
		return NULL;
	}
	return buf;
}

/*
 * Prints the Argon2id hash (libargon2 encoded form) of the password on
 * standard input's first line, e.g. for FACE_API_ADMIN_PASSWORD.
 */
static int
cmd_hash_password(int argc, char *argv[])
{
	char pw[AUTH_PASSWORD_MAX + 2], hash[AUTH_HASH_MAX];
	int rc = 1;

	if (!usage_opts(argc, argv, NULL, 0, NULL, NULL))
		return 2;
	if (read_password("hash-password", "-", pw, sizeof(pw)) == NULL)
		goto out;
	if (!auth_password_hash(pw, hash)) {
		fprintf(stderr,
			"hash-password: cannot hash it (longer than "
			"%d bytes?)\n",
			AUTH_PASSWORD_MAX);
		goto out;
	}
	printf("%s\n", hash);
	rc = fflush(stdout) == 0 ? 0 : 1;
out:
	return rc;
}

/* The roles in words: "user, facility_admin or super_admin". */
static const char *
role_words(char *buf, size_t len)
{
	size_t n = 0;

	while (auth_role_name((enum auth_role)n) != NULL)
		n++;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
			 i == 0	     ? ""
			 : i + 1 < n ? ", "
				     : " or ",
			 auth_role_name((enum auth_role)i));
	return buf;
}

static int
cmd_user_create(int argc, char *argv[])
{
	struct usage_opt o[] = {
		{"email", false, true, NULL}, {"password", false, false, NULL},
		{"role", false, false, NULL}, {"facility", false, false, NULL},
		{"name", false, false, NULL}, {"if-absent", true, false, NULL},
	};
	char pwbuf[AUTH_PASSWORD_MAX + 2], roles[128];
	struct user_new u;
	PGresult *res = NULL;
	const char *password;
	enum auth_role role;
	enum db_status st;
	struct db *db;
	int rc = 1;

	if (!usage_opts(argc, argv, o, sizeof(o) / sizeof(o[0]), NULL, NULL))
		return 2;
	/* --role is required, but said with the roles rather than "R". */
	if (o[2].value == NULL)
		return usage_error("--role is required (%s)",
				   role_words(roles, sizeof(roles)));
	if (!auth_role_from_name(o[2].value, &role))
		return usage_error("--role: expected %s, got \"%s\"",
				   role_words(roles, sizeof(roles)),
				   o[2].value);
	if ((password = read_password("user", o[1].value, pwbuf,
				      sizeof(pwbuf))) == NULL)
		return 1;
	if ((db = open_db("user")) == NULL)
		return 1;
	u = (struct user_new){.email = o[0].value,
			      .password = password,
			      .display_name = o[4].value,
			      .role = role,
			      .facility_id = o[3].value};
	st = user_create(db, &u, &res);
	if (st == DB_OK) {
		printf("{\"id\":\"%s\",\"created\":true}\n",
		       PQgetvalue(res, 0, PQfnumber(res, "id")));
		rc = 0;
	} else if (st == DB_CONFLICT && o[5].value != NULL) {
		printf("{\"id\":null,\"created\":false}\n");
		rc = 0;
	} else
		rc = db_failed("user", st, o[0].value);
	PQclear(res);
	db_free(db);
	return rc == 0 && fflush(stdout) != 0 ? 1 : rc;
}

/*
 * Forgets the failed logins counted for an e-mail (from every address),
 * an address (for every e-mail) or one pair (doc/auth.md "Login
 * throttling"); prints {"cleared": counters deleted}.
 */
static int
cmd_user_unthrottle(int argc, char *argv[])
{
	struct usage_opt o[] = {
		{"email", false, false, NULL},
		{"address", false, false, NULL},
	};
	enum db_status st;
	struct db *db;
	long rows;
	int rc;

	if (!usage_opts(argc, argv, o, sizeof(o) / sizeof(o[0]), NULL, NULL))
		return 2;
	if (o[0].value == NULL && o[1].value == NULL)
		return usage_error("--email E or --address A is required");
	if ((db = open_db("user")) == NULL)
		return 1;
	st = throttle_clear(db, o[0].value, o[1].value, &rows);
	if (st == DB_OK) {
		printf("{\"cleared\":%ld}\n", rows);
		rc = fflush(stdout) != 0;
	} else
		rc = db_failed("user", st,
			       o[0].value != NULL ? o[0].value : o[1].value);
	db_free(db);
	return rc;
}

static int
cmd_facility_create(int argc, char *argv[])
{
	struct usage_opt o[] = {
		{"name", false, true, NULL},
		{"slug", false, true, NULL},
		{"description", false, false, NULL},
	};
	PGresult *res = NULL;
	enum db_status st;
	struct db *db;
	int rc;

	if (!usage_opts(argc, argv, o, sizeof(o) / sizeof(o[0]), NULL, NULL))
		return 2;
	if ((db = open_db("facility")) == NULL)
		return 1;
	st = facility_create(db, o[0].value, o[1].value, o[2].value, &res);
	if (st == DB_OK) {
		printf("{\"id\":\"%s\"}\n",
		       PQgetvalue(res, 0, PQfnumber(res, "id")));
		rc = fflush(stdout) == 0 ? 0 : 1;
	} else
		rc = db_failed("facility", st, o[1].value);
	PQclear(res);
	db_free(db);
	return rc;
}

static int
cmd_api_key_create(int argc, char *argv[])
{
	struct usage_opt o[] = {
		{"facility", false, true, NULL},
		{"name", false, true, NULL},
		{"scopes", false, false, NULL},
		{"expires-at", false, false, NULL},
	};
	char key[AUTH_KEY_LEN];
	unsigned mask = APIKEY_SCOPE_ALL;
	PGresult *res = NULL;
	enum db_status st;
	struct db *db;
	int rc;

	if (!usage_opts(argc, argv, o, sizeof(o) / sizeof(o[0]), NULL, NULL))
		return 2;
	if (o[2].value != NULL && !apikey_scopes_parse(o[2].value, &mask))
		return usage_error("--scopes: expected a comma-separated list "
				   "of upload and ingest, got \"%s\"",
				   o[2].value);
	if ((db = open_db("api-key")) == NULL)
		return 1;
	st = apikey_create(db, o[0].value, o[1].value, mask, o[3].value, NULL,
			   key, &res);
	if (st == DB_OK) {
		/* The only time the key is shown. */
		printf("{\"id\":\"%s\",\"key_prefix\":\"%s\",\"key\":\"%s\"}\n",
		       PQgetvalue(res, 0, PQfnumber(res, "id")),
		       PQgetvalue(res, 0, PQfnumber(res, "key_prefix")), key);
		rc = fflush(stdout) == 0 ? 0 : 1;
	} else
		rc = db_failed("api-key", st, o[1].value);
	PQclear(res);
	db_free(db);
	return rc;
}

/* The kind of thing the current command's group administers. */
static enum admin_kind
current_kind(void)
{
	if (strcmp(current->group, "facility") == 0)
		return ADMIN_FACILITY;
	if (strcmp(current->group, "user") == 0)
		return ADMIN_USER;
	if (strcmp(current->group, "api-key") == 0)
		return ADMIN_API_KEY;
	return ADMIN_DEVICE;
}

/* A value as a table shows it: NULL as "-", booleans as yes and no. */
static const char *
cell(const PGresult *res, int row, int col)
{
	const char *v = PQgetvalue(res, row, col);

	if (PQgetisnull(res, row, col))
		return "-";
	if (PQftype(res, col) == 16 /* bool */)
		return strcmp(v, "t") == 0 ? "yes" : "no";
	return v;
}

/* Prints rows as an aligned table with a header line, or as a JSON
 * array (--json, the API's shapes); false when stdout fails. */
static bool
print_rows(const PGresult *res, bool json)
{
	int cols = PQnfields(res), rows = PQntuples(res);
	size_t w[32] = {0};
	json_object *a;
	bool ok;

	if (json) {
		if ((a = dbjson_rows(res)) == NULL)
			return false;
		ok = puts(json_object_to_json_string_ext(
			     a, JSON_C_TO_STRING_PLAIN)) >= 0;
		json_object_put(a);
		return ok && fflush(stdout) == 0;
	}
	if (cols > 32)
		cols = 32;
	for (int c = 0; c < cols; c++) {
		w[c] = strlen(PQfname(res, c));
		for (int r = 0; r < rows; r++)
			if (strlen(cell(res, r, c)) > w[c])
				w[c] = strlen(cell(res, r, c));
	}
	for (int r = -1; r < rows; r++)
		for (int c = 0; c < cols; c++)
			printf("%-*s%s", c + 1 < cols ? (int)w[c] : 0,
			       r < 0 ? PQfname(res, c) : cell(res, r, c),
			       c + 1 < cols ? "  " : "\n");
	return fflush(stdout) == 0;
}

/* facility|user|api-key|device list [--facility ID] [--json] */
static int
cmd_list(int argc, char *argv[])
{
	struct usage_opt o[] = {
		{"json", true, false, NULL},
		{"facility", false, false, NULL},
	};
	PGresult *res = NULL;
	enum db_status st;
	struct db *db;
	int rc;

	/* Facilities are in no facility: no --facility for them. */
	if (!usage_opts(argc, argv, o, current_kind() == ADMIN_FACILITY ? 1 : 2,
			NULL, NULL))
		return 2;
	if ((db = open_db(current->group)) == NULL)
		return 1;
	if ((st = admin_list(db, current_kind(), o[1].value, &res)) == DB_OK)
		rc = print_rows(res, o[0].value != NULL) ? 0 : 1;
	else
		rc = db_failed(current->group, st, "the list");
	PQclear(res);
	db_free(db);
	return rc;
}

/* Says what a disable or delete of what came to; its exit status. */
static int
done(enum db_status st, bool found, const char *what, const char *verb)
{
	if (st == DB_FOREIGN_KEY && current_kind() == ADMIN_API_KEY) {
		fprintf(stderr,
			"api-key: %s: uploads were made with it: revoke it "
			"instead\n",
			what);
		return 1;
	}
	if (st != DB_OK)
		return db_failed(current->group, st, what);
	if (!found) {
		fprintf(stderr, "%s: %s: not found\n", current->group, what);
		return 1;
	}
	printf("%s: %s %s\n", current->group, what, verb);
	return fflush(stdout) == 0 ? 0 : 1;
}

/* facility|user disable ID, api-key revoke ID */
static int
cmd_disable(int argc, char *argv[])
{
	enum db_status st;
	const char *id;
	struct db *db;
	bool found;
	int rc;

	if (!usage_opts(argc, argv, NULL, 0, current->args, &id))
		return 2;
	if ((db = open_db(current->group)) == NULL)
		return 1;
	st = admin_disable(db, current_kind(), id, &found);
	rc = done(st, found, id,
		  current_kind() == ADMIN_API_KEY ? "revoked" : "disabled");
	db_free(db);
	return rc;
}

/* facility|user|api-key delete ID */
static int
cmd_delete(int argc, char *argv[])
{
	struct store *store = NULL;
	enum db_status st;
	char detail[512];
	const char *id;
	struct db *db;
	bool found;
	int rc = 1;

	if (!usage_opts(argc, argv, NULL, 0, current->args, &id))
		return 2;
	if ((db = open_db(current->group)) == NULL)
		return 1;
	/* A facility's objects go with it: no delete without the store. */
	if (current_kind() == ADMIN_FACILITY &&
	    (store = store_open_env(detail, sizeof(detail))) == NULL) {
		fprintf(stderr, "facility: the object store: %s\n", detail);
		goto out;
	}
	st = admin_delete(db, store, current_kind(), id, &found);
	rc = done(st, found, id, "deleted");
out:
	store_close(store);
	db_free(db);
	return rc;
}

/* user set-password ID|EMAIL [--password -] */
static int
cmd_user_set_password(int argc, char *argv[])
{
	struct usage_opt o[] = {{"password", false, false, NULL}};
	char pwbuf[AUTH_PASSWORD_MAX + 2];
	const char *password, *id;
	enum db_status st;
	struct db *db;
	bool found;
	int rc;

	if (!usage_opts(argc, argv, o, 1, "ID|EMAIL", &id))
		return 2;
	if ((password = read_password("user", o[0].value, pwbuf,
				      sizeof(pwbuf))) == NULL)
		return 1;
	if ((db = open_db("user")) == NULL)
		return 1;
	st = user_set_password(db, id, password, &found);
	memset(pwbuf, 0, sizeof(pwbuf));
	if (st == DB_INVALID) {
		fprintf(stderr, "user: a password has %d to %d bytes\n",
			USER_PASSWORD_MIN, AUTH_PASSWORD_MAX);
		rc = 1;
	} else
		rc = done(st, found, id, "has a new password");
	db_free(db);
	return rc;
}

/*
 * Prints s in lines of at most 76 bytes, each after prefix, broken at
 * blanks; for mdoc (prefix NULL) a line starting with a dot or a quote
 * gets \& and a backslash is \e.
 */
static void
wrap(const char *prefix, const char *s)
{
	size_t col = 0, w;

	while (*s != '\0') {
		w = strcspn(s, " ");
		if (col > 0 && col + 1 + w > 76) {
			putchar('\n');
			col = 0;
		}
		if (col == 0) {
			if (prefix != NULL)
				col = (size_t)printf("%s", prefix);
			else if (*s == '.' || *s == '\'')
				col = (size_t)printf("\\&");
		} else
			col += (size_t)printf(" ");
		for (size_t i = 0; i < w; i++)
			if (prefix == NULL && s[i] == '\\')
				col += (size_t)printf("\\e");
			else
				col += (size_t)printf("%c", s[i]);
		s += w;
		s += strspn(s, " ");
	}
	putchar('\n');
}

/* The range of s in words ("1 to 3600"), or "" when it has none. */
static const char *
range_words(const struct setting *s, char *buf, size_t len)
{
	buf[0] = '\0';
	if (s->type == SETTING_INT || s->type == SETTING_NUM)
		snprintf(buf, len,
			 s->type == SETTING_INT ? "%.0f to %.0f" : "%g to %g",
			 s->min, s->max);
	else if (s->type == SETTING_STR && s->min > 1)
		snprintf(buf, len, "%.0f characters or more", s->min);
	return buf;
}

/* xmhub.env.example: every setting commented out with its default. */
static void
print_env_example(void)
{
	char r[96];

	printf("# xmhub.env: the settings of xmhub's programs (xmhub.env(5)).\n"
	       "# Read from %s\n# (or $XMHUB_ENV_FILE); the environment wins "
	       "over the file.\n# Every setting is shown commented out with "
	       "its default;\n# `xmhub check-config` says what is missing "
	       "or wrong.\n",
	       conf_env_file());
	for (size_t i = 0; i < settings_count; i++) {
		const struct setting *s = &settings[i];

		putchar('\n');
		wrap("# ", s->meaning);
		printf("# %s%s%s; read by: %s%s\n#%s=%s\n",
		       settings_type_name(s->type),
		       *range_words(s, r, sizeof(r)) ? ", " : "", r,
		       s->programs,
		       s->flags & SETTING_REQUIRED ? "; required" : "", s->name,
		       s->def != NULL ? s->def : "");
	}
}

/* xmhub.env(5), in mdoc. */
static void
print_man(void)
{
	char r[96], line[512];

	printf(".\\\" Made by `xmhub settings --man` from "
	       "lib/core/settings.def.\n"
	       ".Dd November 25, 2026\n.Dt XMHUB.ENV 5\n.Os\n.Sh NAME\n"
	       ".Nm xmhub.env\n"
	       ".Nd settings of the xmhub platform and face service\n"
	       ".Sh DESCRIPTION\n"
	       "The programs of xmhub read their settings from the "
	       "environment and from the file\n.Pa %s\n"
	       "(or the file named by\n.Ev XMHUB_ENV_FILE ) ,\n"
	       "made of\n.Ql NAME=VALUE\nlines; blank lines and lines "
	       "starting with\n.Ql #\nare skipped, and a value may be in "
	       "double quotes.\nThe environment wins over the file.\n"
	       "A setting that is unset or empty has its default;\n"
	       "a program given a value out of range refuses to start.\n"
	       ".Ql xmhub check-config\n(see\n.Xr xmhub 1 )\n"
	       "says what is missing or wrong.\n.Ss Settings\n.Bl -tag -width "
	       "Ds\n",
	       conf_env_file());
	for (size_t i = 0; i < settings_count; i++) {
		const struct setting *s = &settings[i];

		printf(".It Ev %s\n", s->name);
		snprintf(line, sizeof(line), "%s.", s->meaning);
		wrap(NULL, line);
		if (*range_words(s, r, sizeof(r)) != '\0')
			printf("%s: %s.\n",
			       s->type == SETTING_STR ? "Length" : "Range", r);
		if (s->type == SETTING_BOOL)
			printf("true or false.\n");
		if (s->def != NULL && *s->def != '\0')
			printf("Default:\n.Ql \"%s\" .\n", s->def);
		else if (s->flags & SETTING_REQUIRED)
			printf("Required.\n");
		printf("Read by: %s.\n", s->programs);
	}
	printf(".El\n.Sh FILES\n.Bl -tag -width Ds\n.It Pa %s\n"
	       "the settings\n.It Pa xmhub.env.example\n"
	       "every setting with its default, installed with the "
	       "package's data\n.El\n"
	       ".Sh SEE ALSO\n.Xr xmhub 1 ,\n.Xr xmhub-transcode 8\n",
	       conf_env_file());
}

/* settings [--env|--man]: the table of settings.def, as a table, an env
 * file or a man page. */
static int
cmd_settings(int argc, char *argv[])
{
	struct usage_opt o[] = {{"env", true, false, NULL},
				{"man", true, false, NULL}};

	if (!usage_opts(argc, argv, o, 2, NULL, NULL))
		return 2;
	if (o[0].value != NULL && o[1].value != NULL)
		return usage_error("--env and --man exclude each other");
	if (o[0].value != NULL)
		print_env_example();
	else if (o[1].value != NULL)
		print_man();
	else {
		printf("%-34s %-5s %-16s %s\n", "NAME", "TYPE", "DEFAULT",
		       "READ BY");
		for (size_t i = 0; i < settings_count; i++)
			printf("%-34s %-5s %-16s %s\n", settings[i].name,
			       settings_type_name(settings[i].type),
			       settings[i].def != NULL && *settings[i].def
				       ? settings[i].def
				       : "-",
			       settings[i].programs);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}

/* One problem check-config found. */
static void
problem(unsigned *n, const char *name, const char *why)
{
	printf("%s: %s\n", name, why);
	(*n)++;
}

/* check-config's look at each name of the env file: known? */
static bool
note_unknown(const char *name, const char *value, void *arg)
{
	(void)value;
	if (settings_find(name) == NULL)
		problem(arg, name, "unknown setting (xmhub.env(5) lists them)");
	return true;
}

/* A setting that must be set, with why. */
static void
need(unsigned *n, const char *name, const char *why)
{
	if (conf_str(name, NULL) == NULL)
		problem(n, name, why);
}

/* An unset directory setting: its default must be readable (a set one
 * was checked with the others). */
static void
need_default_dir(unsigned *n, const char *name)
{
	char why[512];

	if (conf_str(name, NULL) == NULL &&
	    !settings_check(settings_find(name), conf_get(name), why,
			    sizeof(why)))
		problem(n, name, why);
}

/*
 * check-config [--env-file FILE]: loads the env file as the programs do
 * and prints one line per problem: unknown names, values out of range,
 * what is required and missing, directories that cannot be read.
 */
static int
cmd_check_config(int argc, char *argv[])
{
	struct usage_opt o[] = {{"env-file", false, false, NULL}};
	const char *path;
	char detail[512], why[256];
	unsigned n = 0;

	if (!usage_opts(argc, argv, o, 1, NULL, NULL))
		return 2;
	if ((path = o[0].value) == NULL &&
	    ((path = getenv("XMHUB_ENV_FILE")) == NULL || *path == '\0'))
		path = conf_env_file();
	if (access(path, R_OK) != 0) {
		if (o[0].value != NULL || errno != ENOENT) {
			fprintf(stderr, "check-config: %s: %s\n", path,
				strerror(errno));
			return 1;
		}
		printf("%s: no such file: the environment alone\n", path);
	} else if (!conf_file_each(path, note_unknown, &n, detail,
				   sizeof(detail)) ||
		   !conf_load_file(path, detail, sizeof(detail))) {
		fprintf(stderr, "check-config: %s\n", detail);
		return 1;
	}
	for (size_t i = 0; i < settings_count; i++) {
		const struct setting *s = &settings[i];
		const char *v = conf_str(s->name, NULL);

		if (v != NULL && !settings_check(s, v, why, sizeof(why)))
			problem(&n, s->name, why);
	}
	need(&n, "XMHUB_DATABASE_URL", "not set: every program needs it");
	need(&n, "XMHUB_JWT_SECRET",
	     "not set: the platform's programs do not start without it");
	if (conf_get("XMHUB_S3_ENDPOINT") == NULL)
		need_default_dir(&n, "XMHUB_STORAGE_DIR");
	else {
		need(&n, "XMHUB_S3_BUCKET", "not set: S3 needs it");
		need(&n, "XMHUB_S3_ACCESS_KEY", "not set: S3 needs it");
		need(&n, "XMHUB_S3_SECRET_KEY", "not set: S3 needs it");
	}
	need_default_dir(&n, "FACE_API_MODEL_DIR");
	if (n == 0)
		printf("%s: ok\n", path);
	else
		printf("%u problem%s\n", n, n == 1 ? "" : "s");
	return fflush(stdout) != 0 || n != 0 ? 1 : 0;
}

/* Reads the input, runs the command, writes its output. */
static int
run(const struct cmd *c, const char *path)
{
	struct buf in, out;
	int rc;

	buf_init(&in, INPUT_MAX);
	buf_init(&out, 0);
	if ((rc = read_input(path, c->group, &in)) == 0 &&
	    (rc = c->run(&in, &out)) == 0)
		rc = write_output(c->group, &out);
	buf_free(&in);
	buf_free(&out);
	return rc;
}

/* One command's usage line, "xmhub GROUP [NAME] ARGS". */
static void
usage_line(FILE *f, const struct cmd *c)
{
	fprintf(f, "  xmhub %s%s%s %s\n", c->group, c->name ? " " : "",
		c->name ? c->name : "", c->args);
}

static void
usage(FILE *f)
{
	fprintf(f, "usage: xmhub --version | --help | COMMAND [--help]\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		usage_line(f, &cmds[i]);
	fprintf(f, "see xmhub(1)\n");
}

/* True when the arguments ask for help. */
static bool
wants_help(int argc, char *argv[])
{
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0)
			return true;
	return false;
}

int
main(int argc, char *argv[])
{
	bool group_known = false,
	     version = argc >= 2 && (strcmp(argv[1], "--version") == 0 ||
				     strcmp(argv[1], "-V") == 0),
	     help = argc >= 2 && (strcmp(argv[1], "-h") == 0 ||
				  strcmp(argv[1], "--help") == 0);

	if (version && argc == 2) {
		printf("xmhub %s\n", PACKAGE_VERSION);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (help && argc == 2) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const struct cmd *c = &cmds[i];
		int words = c->name != NULL ? 2 : 1, rest = argc - 1 - words,
		    rc;

		if (argc < 2 || strcmp(argv[1], c->group) != 0)
			continue;
		group_known = true;
		if (rest < 0 ||
		    (c->name != NULL && strcmp(argv[2], c->name) != 0))
			continue;
		current = c;
		usage_begin(c->group, c->name, c->args);
		if (wants_help(rest, argv + 1 + words)) {
			printf("usage:\n");
			usage_line(stdout, c);
			if (c->what != NULL)
				printf("%s\n", c->what);
			return fflush(stdout) == 0 ? 0 : 1;
		}
		if (c->tool != NULL)
			rc = c->tool(rest, argv + 1 + words);
		else if (rest <= 1)
			rc = run(c, rest == 1 ? argv[1 + words] : NULL);
		else
			rc = usage_error("stray argument \"%s\"",
					 argv[2 + words]);
		if (rc != 2)
			return rc;
		fprintf(stderr, "usage:\n");
		usage_line(stderr, c);
		return 2;
	}
	/* "xmhub user --help" and "xmhub user": the group's commands. */
	if (group_known) {
		FILE *f = wants_help(argc - 2, argv + 2) ? stdout : stderr;

		usage_begin(argv[1], NULL, "");
		if (f == stderr && argc == 2)
			usage_error("a command is required");
		else if (f == stderr)
			usage_error("%s: no such command", argv[2]);
		fprintf(f, "usage:\n");
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (strcmp(argv[1], cmds[i].group) == 0)
				usage_line(f, &cmds[i]);
		return f == stdout ? 0 : 2;
	}
	if (argc < 2)
		usage_error("a command is required");
	else if (version || help)
		usage_error("stray argument \"%s\"", argv[2]);
	else
		usage_error("%s: no such %s", argv[1],
			    argv[1][0] == '-' ? "option" : "command");
	usage(stderr);
	return 2;
}
