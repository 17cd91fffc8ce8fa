/* SPDX-License-Identifier: MIT */
/*
 * migrate.c - applies the numbered SQL migrations of a directory, each
 * once.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "codec/buf.h"
#include "core/migrate.h"

/* The advisory lock every migration transaction takes first ("xmhb"). */
#define LOCK_SQL "SELECT pg_advisory_xact_lock(2020435042)"
#define TABLE_SQL                                                              \
	"CREATE TABLE IF NOT EXISTS schema_migrations ("                       \
	"version text PRIMARY KEY, "                                           \
	"applied_at timestamptz NOT NULL DEFAULT now())"

/* Migration files larger than this are refused. */
#define FILE_MAX (64UL << 20)

/* Length of the leading digits of s. */
static size_t
digits(const char *s)
{
	size_t n = 0;

	while (s[n] >= '0' && s[n] <= '9')
		n++;
	return n;
}

/* scandir() filter: NNN_WORDS.sql. */
static int
is_migration(const struct dirent *e)
{
	const char *s = e->d_name;
	size_t n = digits(s), len = strlen(s);

	return n >= 3 && s[n] == '_' && len > n + 1 + 4 &&
	       strcmp(s + len - 4, ".sql") == 0;
}

/* scandir() order: bytes, whatever the locale. */
static int
by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* True when the two names carry the same number (leading zeros aside). */
static bool
same_number(const char *a, const char *b)
{
	size_t na = digits(a), nb = digits(b);

	while (na > 1 && *a == '0')
		a++, na--;
	while (nb > 1 && *b == '0')
		b++, nb--;
	return na == nb && memcmp(a, b, na) == 0;
}

/* Prints "migrate: what: " and the server's or libpq's message. */
static void
fail(const char *what, const char *msg)
{
	size_t n = strlen(msg);

	while (n > 0 && msg[n - 1] == '\n')
		n--;
	fprintf(stderr, "migrate: %s: %.*s\n", what, (int)n, msg);
}

/*
 * Runs one statement (parameterized, or several at once when nparams is
 * negative: a migration file's text); true when it succeeded.  With
 * found, tells whether it returned a row.
 */
static bool
run_sql(PGconn *conn, const char *what, const char *sql, int nparams,
	const char *const *params, bool *found)
{
	PGresult *res;
	bool ok;

	if (nparams < 0)
		res = PQexec(conn, sql);
	else
		res = PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL,
				   0);
	ok = res != NULL && (PQresultStatus(res) == PGRES_COMMAND_OK ||
			     PQresultStatus(res) == PGRES_TUPLES_OK);
	if (!ok)
		fail(what, res != NULL ? PQresultErrorMessage(res)
				       : PQerrorMessage(conn));
	else if (found != NULL)
		*found = PQntuples(res) > 0;
	PQclear(res);
	return ok;
}

/* Reads the file name of dir into b, NUL-terminated. */
static bool
read_file(const char *dir, const char *name, struct buf *b)
{
	struct stat st;
	int dfd = -1, fd = -1;
	bool ok = false;

	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY)) < 0 ||
	    (fd = openat(dfd, name, O_RDONLY)) < 0 || fstat(fd, &st) != 0) {
		fail(name, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		fail(name, "not a regular file");
		goto out;
	}
	if (!buf_read_fd(b, fd)) {
		fail(name, b->failed ? "too large" : strerror(errno));
		goto out;
	}
	if (memchr(b->p, '\0', b->len) != NULL) {
		fail(name, "contains a NUL byte");
		goto out;
	}
	buf_putc(b, '\0');
	ok = !b->failed;
	if (!ok)
		fail(name, "out of memory");
out:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	return ok;
}

/*
 * Applies one file unless schema_migrations lists it; *applied tells
 * which.  Leaves no transaction open.
 */
static bool
apply_one(PGconn *conn, const char *dir, const char *name, bool *applied)
{
	char version[256];
	const char *params[1] = {version};
	struct buf text;
	bool done = false, ok = false;

	buf_init(&text, FILE_MAX);
	*applied = false;
	snprintf(version, sizeof(version), "%.*s",
		 (int)(strlen(name) - strlen(".sql")), name);
	if (!run_sql(conn, name, "BEGIN", 0, NULL, NULL))
		goto out;
	if (!run_sql(conn, name, LOCK_SQL, 0, NULL, NULL) ||
	    !run_sql(conn, name, TABLE_SQL, 0, NULL, NULL) ||
	    !run_sql(conn, name,
		     "SELECT 1 FROM schema_migrations WHERE version = $1", 1,
		     params, &done))
		goto rollback;
	if (done) {
		ok = true;
		goto rollback;
	}
	if (!read_file(dir, name, &text) ||
	    !run_sql(conn, name, (const char *)text.p, -1, NULL, NULL))
		goto rollback;
	if (PQtransactionStatus(conn) != PQTRANS_INTRANS) {
		fail(name, "the file ended the migration's transaction "
			   "(no BEGIN, COMMIT or ROLLBACK in migrations)");
		goto rollback;
	}
	if (!run_sql(conn, name,
		     "INSERT INTO schema_migrations (version) VALUES ($1)", 1,
		     params, NULL) ||
	    !run_sql(conn, name, "COMMIT", 0, NULL, NULL))
		goto rollback;
	*applied = ok = true;
	goto out;
rollback:
	/* Nothing to report: the first failure has been. */
	PQclear(PQexec(conn, "ROLLBACK"));
out:
	buf_free(&text);
	return ok;
}

/*
 * libpq's notice receiver of the migrations: warnings and worse go to
 * stderr; notices ("already exists, skipping") and below are dropped here
 * rather than by SET client_min_messages, which would stay on the server
 * connection a pooler gives the next client.
 */
static void
quiet_notices(void *arg, const PGresult *res)
{
	static const char *const quiet[] = {"NOTICE", "INFO", "LOG", "DEBUG"};
	const char *sev =
		PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED);

	(void)arg;
	for (size_t i = 0; sev != NULL && i < sizeof(quiet) / sizeof(quiet[0]);
	     i++)
		if (strcmp(sev, quiet[i]) == 0)
			return;
	fprintf(stderr, "migrate: %s", PQresultErrorMessage(res));
}

/*
 * Lists the migrations of dir and connects to conninfo: *ents and *n
 * (the caller frees them, also on failure) and *conn (PQfinish()).
 * False after saying why; *unavailable when the server was not reached.
 */
static bool
open_run(const char *conninfo, const char *dir, struct dirent ***ents, int *n,
	 PGconn **conn, bool *unavailable)
{
	const char *const keys[] = {"application_name", "dbname", NULL};
	const char *const vals[] = {"xmhub-migrate", conninfo, NULL};

	*conn = NULL;
	*unavailable = false;
	if ((*n = scandir(dir, ents, is_migration, by_name)) < 0) {
		*n = 0;
		*ents = NULL;
		fail(dir, strerror(errno));
		return false;
	}
	for (int i = 0; i < *n; i++)
		for (int j = i + 1; j < *n; j++)
			if (same_number((*ents)[i]->d_name,
					(*ents)[j]->d_name)) {
				fprintf(stderr,
					"migrate: %s and %s: the same "
					"number\n",
					(*ents)[i]->d_name, (*ents)[j]->d_name);
				return false;
			}
	/* Later keywords win: conninfo may name its own application. */
	*conn = PQconnectdbParams(keys, vals, 1);
	if (*conn == NULL || PQstatus(*conn) != CONNECTION_OK) {
		fail("connect",
		     *conn != NULL ? PQerrorMessage(*conn) : "out of memory");
		*unavailable = true;
		return false;
	}
	PQsetNoticeReceiver(*conn, quiet_notices, NULL);
	return true;
}

/* Frees what open_run() made. */
static void
close_run(struct dirent **ents, int n, PGconn *conn)
{
	PQfinish(conn);
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
}

bool
migrate_apply(const char *conninfo, const char *dir, FILE *out,
	      struct migrate_result *r)
{
	struct dirent **ents;
	PGconn *conn;
	bool ok = false, applied, unavailable;
	int n;

	memset(r, 0, sizeof(*r));
	if (!open_run(conninfo, dir, &ents, &n, &conn, &unavailable))
		goto out;
	r->files = (unsigned int)n;
	for (int i = 0; i < n; i++) {
		if (!apply_one(conn, dir, ents[i]->d_name, &applied))
			goto out;
		if (applied) {
			r->applied++;
			fprintf(out, "migrate: applied %.*s\n",
				(int)(strlen(ents[i]->d_name) - 4),
				ents[i]->d_name);
			fflush(out);
		}
	}
	ok = true;
out:
	close_run(ents, n, conn);
	return ok;
}

enum migrate_check
migrate_check(const char *conninfo, const char *dir, FILE *out,
	      struct migrate_result *r)
{
	enum migrate_check c = MIGRATE_CHECK_FAILED;
	struct dirent **ents;
	PGconn *conn;
	bool table, done, unavailable;
	int n;

	memset(r, 0, sizeof(*r));
	if (!open_run(conninfo, dir, &ents, &n, &conn, &unavailable)) {
		if (unavailable)
			c = MIGRATE_CHECK_UNAVAILABLE;
		goto out;
	}
	r->files = (unsigned int)n;
	/* Read only: a database never migrated has no table yet. */
	if (!run_sql(conn, "check",
		     "SELECT 1 WHERE to_regclass('schema_migrations') "
		     "IS NOT NULL",
		     0, NULL, &table))
		goto out;
	for (int i = 0; i < n; i++) {
		char version[256];
		const char *params[1] = {version};

		snprintf(version, sizeof(version), "%.*s",
			 (int)(strlen(ents[i]->d_name) - strlen(".sql")),
			 ents[i]->d_name);
		done = false;
		if (table && !run_sql(conn, ents[i]->d_name,
				      "SELECT 1 FROM schema_migrations "
				      "WHERE version = $1",
				      1, params, &done))
			goto out;
		if (!done) {
			r->pending++;
			fprintf(out, "migrate: pending %s\n", version);
		}
	}
	c = r->pending > 0 ? MIGRATE_CHECK_PENDING : MIGRATE_CHECK_UP_TO_DATE;
out:
	close_run(ents, n, conn);
	return c;
}
