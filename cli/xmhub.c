/*
 * xmhub - command-line tool.  Its commands are documented with what they
 * serve: xmbp and xmch in doc/xmbp.md, migrate in doc/database.md, user,
 * facility and api-key in doc/api.md and doc/auth.md, hash-password in
 * doc/face.md, send and sim in doc/sender.md.
 *
 * A table maps "GROUP [COMMAND]" to a handler of one of two shapes:
 * filters read their whole input (a file or standard input), call one
 * lib/ function and write the whole answer; tools take options and do
 * their own output.  Exit status: 0 done, 1 the input was refused or
 * the work failed, 2 usage.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api/apikeys.h"
#include "device.h"
#include "codec/buf.h"
#include "core/auth.h"
#include "core/conf.h"
#include "core/db.h"
#include "api/facilities.h"
#include "codec/jsonform.h"
#include "core/migrate.h"
#include "domain/throttle.h"
#include "api/users.h"
#include "codec/xmbp.h"
#include "codec/xmch.h"
#include "httpdconf.h"

/* Input files are read whole; larger ones are refused. */
#define INPUT_MAX (1UL << 30)

/* XMHUB_SQLDIR, the installed migrations, comes from Makefile.am. */

struct cmd {
	const char *group, *name, *args; /* name NULL: one word */
	/* A filter: turns the whole input into the whole output; 1 after a
	 * message. */
	int (*run)(const struct buf *in, struct buf *out);
	/* A tool: given the arguments after its words; 2 for usage. */
	int (*tool)(int argc, char *argv[]);
};

static int cmd_xmbp_decode(const struct buf *, struct buf *);
static int cmd_xmbp_encode(const struct buf *, struct buf *);
static int cmd_xmch_dump(const struct buf *, struct buf *);
static int cmd_xmch_pack(const struct buf *, struct buf *);
static int cmd_migrate(int, char *[]);
static int cmd_user_create(int, char *[]);
static int cmd_user_unthrottle(int, char *[]);
static int cmd_facility_create(int, char *[]);
static int cmd_api_key_create(int, char *[]);
static int cmd_hash_password(int, char *[]);

static const struct cmd cmds[] = {
	{"xmbp", "decode", "[FILE|-]", cmd_xmbp_decode, NULL},
	{"xmbp", "encode", "[FILE|-]", cmd_xmbp_encode, NULL},
	{"xmch", "dump", "FILE|-", cmd_xmch_dump, NULL},
	{"xmch", "pack", "[FILE|-]", cmd_xmch_pack, NULL},
	{"migrate", NULL, "[--dir DIR]", NULL, cmd_migrate},
	{"user", "create",
	 "--email E --password P|- --role R [--facility ID] [--name N] "
	 "[--if-absent]",
	 NULL, cmd_user_create},
	{"user", "unthrottle", "[--email E] [--address A]", NULL,
	 cmd_user_unthrottle},
	{"facility", "create", "--name N --slug S [--description D]", NULL,
	 cmd_facility_create},
	{"api-key", "create",
	 "--facility ID --name N [--scopes upload,ingest] [--expires-at T]",
	 NULL, cmd_api_key_create},
	{"httpd-conf", NULL,
	 "lighttpd|apache [--var DIR] [--port N] [--face-port N] [--output F]",
	 NULL, httpdconf_cli},
	{"hash-password", NULL, "< PASSWORD (one line on standard input)", NULL,
	 cmd_hash_password},
	{"send", NULL,
	 "--url BASE_URL [--key API_KEY] --session ID "
	 "--streams INDEX[:NAME]:TYPE,...|@SESSION.json [--ws] [--in-flight N] "
	 "[--spool DIR] [--batch-samples N] [--linger-ms MS] [--timeout S] "
	 "[FILE|-]",
	 NULL, send_main},
	{"sim", NULL,
	 "--url BASE_URL [--key API_KEY] [--devices N] [--streams M] "
	 "[--rate HZ] [--duration S | --samples N] [--batch N] [--ws] [--json] "
	 "[--device-uid BASE] [--timeout S]",
	 NULL, sim_main},
};

/* One --option of a tool: a flag, or followed by its value. */
struct opt {
	const char *name; /* without the dashes */
	bool flag;
	bool required;
	const char *value; /* the value, or "" for a flag that is set */
};

/* Fills opts from argv; false (usage) on an unknown, repeated or
 * incomplete option or a missing required one. */
static bool
parse_opts(int argc, char *argv[], struct opt *opts, size_t n)
{
	for (int i = 0; i < argc; i++) {
		size_t k;

		if (strncmp(argv[i], "--", 2) != 0)
			return false;
		for (k = 0; k < n && strcmp(argv[i] + 2, opts[k].name) != 0;
		     k++)
			continue;
		if (k == n || opts[k].value != NULL)
			return false;
		if (opts[k].flag)
			opts[k].value = "";
		else if (i + 1 < argc)
			opts[k].value = argv[++i];
		else
			return false;
	}
	for (size_t k = 0; k < n; k++)
		if (opts[k].required && opts[k].value == NULL)
			return false;
	return true;
}

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
	if ((url = conf_str("XMHUB_DATABASE_URL", NULL)) == NULL) {
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
 * installed ones, to XMHUB_DATABASE_URL.
 */
static int
cmd_migrate(int argc, char *argv[])
{
	struct migrate_result r;
	const char *dir = NULL, *url;
	char detail[512];

	if (argc == 2 && strcmp(argv[0], "--dir") == 0)
		dir = argv[1];
	else if (argc != 0)
		return 2;
	if (!conf_init(detail, sizeof(detail))) {
		fprintf(stderr, "migrate: %s\n", detail);
		return 1;
	}
	if (dir == NULL)
		dir = conf_str("XMHUB_SQL_DIR", XMHUB_SQLDIR);
	if ((url = conf_str("XMHUB_DATABASE_URL", NULL)) == NULL) {
		fprintf(stderr, "migrate: XMHUB_DATABASE_URL is not set\n");
		return 1;
	}
	if (!migrate_apply(url, dir, stdout, &r))
		return 1;
	printf("migrate: up to date (%u migration%s, %u applied now)\n",
	       r.files, r.files == 1 ? "" : "s", r.applied);
	return fflush(stdout) == 0 ? 0 : 1;
}

/*
 * A password given as "-" is read from standard input (one line), so
 * that it need not appear in the process list.
 */
static const char *
read_password(const char *given, char *buf, size_t len)
{
	size_t n;

	if (strcmp(given, "-") != 0)
		return given;
	if (fgets(buf, (int)len, stdin) == NULL)
		return NULL;
	n = strcspn(buf, "\r\n");
	buf[n] = '\0';
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

	(void)argv;
	if (argc != 0)
		return 2;
	if (read_password("-", pw, sizeof(pw)) == NULL || pw[0] == '\0') {
		fprintf(stderr, "hash-password: no password on standard "
				"input\n");
		goto out;
	}
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

static int
cmd_user_create(int argc, char *argv[])
{
	struct opt o[] = {
		{"email", false, true, NULL}, {"password", false, true, NULL},
		{"role", false, true, NULL},  {"facility", false, false, NULL},
		{"name", false, false, NULL}, {"if-absent", true, false, NULL},
	};
	char id[AUTH_UUID_LEN + 1], pwbuf[AUTH_PASSWORD_MAX + 2];
	const char *password;
	enum auth_role role;
	enum db_status st;
	struct db *db;
	int rc = 1;

	if (!parse_opts(argc, argv, o, sizeof(o) / sizeof(o[0])))
		return 2;
	if (!auth_role_from_name(o[2].value, &role)) {
		fprintf(stderr, "user: --role must be user, facility_admin or "
				"super_admin\n");
		return 1;
	}
	if ((password = read_password(o[1].value, pwbuf, sizeof(pwbuf))) ==
	    NULL) {
		fprintf(stderr, "user: no password on standard input\n");
		return 1;
	}
	if ((db = open_db("user")) == NULL)
		return 1;
	st = users_create(db, o[0].value, password, o[4].value, role,
			  o[3].value, id);
	if (st == DB_OK) {
		printf("{\"id\":\"%s\",\"created\":true}\n", id);
		rc = 0;
	} else if (st == DB_CONFLICT && o[5].value != NULL) {
		printf("{\"id\":null,\"created\":false}\n");
		rc = 0;
	} else
		rc = db_failed("user", st, o[0].value);
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
	struct opt o[] = {
		{"email", false, false, NULL},
		{"address", false, false, NULL},
	};
	enum db_status st;
	struct db *db;
	long rows;
	int rc;

	if (!parse_opts(argc, argv, o, sizeof(o) / sizeof(o[0])) ||
	    (o[0].value == NULL && o[1].value == NULL))
		return 2;
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
	struct opt o[] = {
		{"name", false, true, NULL},
		{"slug", false, true, NULL},
		{"description", false, false, NULL},
	};
	char id[AUTH_UUID_LEN + 1];
	enum db_status st;
	struct db *db;
	int rc;

	if (!parse_opts(argc, argv, o, sizeof(o) / sizeof(o[0])))
		return 2;
	if ((db = open_db("facility")) == NULL)
		return 1;
	st = facilities_create(db, o[0].value, o[1].value, o[2].value, id);
	if (st == DB_OK) {
		printf("{\"id\":\"%s\"}\n", id);
		rc = fflush(stdout) == 0 ? 0 : 1;
	} else
		rc = db_failed("facility", st, o[1].value);
	db_free(db);
	return rc;
}

static int
cmd_api_key_create(int argc, char *argv[])
{
	struct opt o[] = {
		{"facility", false, true, NULL},
		{"name", false, true, NULL},
		{"scopes", false, false, NULL},
		{"expires-at", false, false, NULL},
	};
	char key[AUTH_KEY_LEN];
	unsigned mask = APIKEYS_SCOPE_ALL;
	PGresult *res = NULL;
	enum db_status st;
	struct db *db;
	int rc;

	if (!parse_opts(argc, argv, o, sizeof(o) / sizeof(o[0])))
		return 2;
	if (o[2].value != NULL && !apikeys_scopes_parse(o[2].value, &mask)) {
		fprintf(stderr, "api-key: --scopes is a comma-separated list "
				"of upload and ingest\n");
		return 1;
	}
	if ((db = open_db("api-key")) == NULL)
		return 1;
	st = apikeys_create(db, o[0].value, o[1].value, mask, o[3].value, NULL,
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

static void
usage(FILE *f)
{
	fprintf(f, "usage:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  xmhub %s%s%s %s\n", cmds[i].group,
			cmds[i].name ? " " : "",
			cmds[i].name ? cmds[i].name : "", cmds[i].args);
}

int
main(int argc, char *argv[])
{
	if (argc == 2 &&
	    (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const struct cmd *c = &cmds[i];
		int words = c->name != NULL ? 2 : 1, rest = argc - 1 - words,
		    rc = 2;

		if (rest < 0 || strcmp(argv[1], c->group) != 0 ||
		    (c->name != NULL && strcmp(argv[2], c->name) != 0))
			continue;
		if (c->tool != NULL)
			rc = c->tool(rest, argv + 1 + words);
		else if (rest <= 1)
			rc = run(c, rest == 1 ? argv[1 + words] : NULL);
		if (rc != 2)
			return rc;
		break;
	}
	usage(stderr);
	return 2;
}
