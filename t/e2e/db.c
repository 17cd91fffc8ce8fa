/* SPDX-License-Identifier: MIT */
/*
 * db - lib/core/db.c against a real PostgreSQL; run by t/e2e/db.t, which starts
 * the server (t/lib/Xmhub/Stack.pm), gives its URL in
 * XMHUB_TEST_DATABASE_URL and answers requests to stop or restart it:
 * this program prints "# driver: WHAT" and waits for a line on standard
 * input.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/db.h"
#include "tap.h"

/* Has the driver do what (stop-db, start-db, restart-db) and waits. */
static void
driver(const char *what)
{
	char line[64];

	printf("# driver: %s\n", what);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL) {
		printf("Bail out! no answer from the driver to %s\n", what);
		exit(1);
	}
}

/* Runs sql; the status, the result freed. */
static enum db_status
run(struct db *db, const char *sql, int n, const char *const *params)
{
	PGresult *res;
	enum db_status st = db_query(db, &res, sql, n, params);

	if ((st == DB_OK) != (res != NULL))
		ok(false, "a result exactly when DB_OK (%s)", sql);
	PQclear(res);
	return st;
}

/* The single value sql returns, as a number; -1 when it fails. */
static long
value(struct db *db, const char *sql, int n, const char *const *params)
{
	PGresult *res;
	long v = -1;

	if (db_query_ro(db, &res, sql, n, params) == DB_OK) {
		if (PQntuples(res) == 1 && PQnfields(res) == 1)
			v = atol(PQgetvalue(res, 0, 0));
		PQclear(res);
	}
	return v;
}

/* How many rows of dbt have this id. */
static long
rows(struct db *db, const char *id)
{
	const char *p[] = {id};

	return value(db, "SELECT count(*) FROM dbt WHERE id = $1", 1, p);
}

int
main(void)
{
	const char *url = getenv("XMHUB_TEST_DATABASE_URL");
	struct db *db, *nowhere;
	PGresult *res;

	if (url == NULL) {
		printf("1..0 # SKIP XMHUB_TEST_DATABASE_URL is not set "
		       "(t/e2e/db.t runs this)\n");
		return 0;
	}

	/* Lazy connection; an unreachable server. */
	nowhere = db_new("postgresql:///xmhub?host=/nonexistent");
	ok(nowhere != NULL, "db_new does not connect");
	is_int(db_query(nowhere, &res, "SELECT 1", 0, NULL), DB_UNAVAILABLE,
	       "no server: DB_UNAVAILABLE");
	ok(res == NULL, "and no result");
	ok(!db_ping(nowhere), "no server: db_ping false");
	is_int(db_begin(nowhere), DB_UNAVAILABLE, "no server: BEGIN too");
	db_free(nowhere);
	db_free(NULL);

	if ((db = db_new(url)) == NULL)
		abort();
	ok(db_ping(db), "db_ping");
	is_int(run(db,
		   "CREATE TABLE dbt (id integer PRIMARY KEY, "
		   "name text NOT NULL UNIQUE CHECK (name <> 'bad'), "
		   "parent integer REFERENCES dbt)",
		   0, NULL),
	       DB_OK, "CREATE TABLE");

	/* Parameters are values, never SQL; NULL is SQL NULL. */
	{
		const char *p[] = {"1", "x'); DROP TABLE dbt; --", NULL};

		is_int(run(db,
			   "INSERT INTO dbt (id, name, parent) "
			   "VALUES ($1, $2, $3)",
			   3, p),
		       DB_OK, "INSERT with parameters");
		if (db_query(db, &res,
			     "SELECT name, parent IS NULL FROM dbt "
			     "WHERE id = $1",
			     1, p) == DB_OK) {
			is_str(PQgetvalue(res, 0, 0), p[1],
			       "a parameter is stored as it is");
			is_str(PQgetvalue(res, 0, 1), "t",
			       "a NULL parameter is SQL NULL");
			PQclear(res);
		} else
			ok(false, "SELECT with a parameter");
	}

	/* SQLSTATE mapping. */
	{
		const char *secret[] = {"6", "secret-value-7f3a", NULL};
		const char *dup[] = {"7", "secret-value-7f3a", NULL};
		const char *fk[] = {"2", "b", "999"};
		const char *check[] = {"3", "bad", NULL};
		const char *null[] = {"4", NULL, NULL};
		const char *text[] = {"five", "b", NULL};
		const char *range[] = {"99999999999", "b", NULL};
		const char *ins = "INSERT INTO dbt (id, name, parent) "
				  "VALUES ($1, $2, $3)";

		is_int(run(db, ins, 3, secret), DB_OK, "INSERT");
		is_int(run(db, ins, 3, dup), DB_CONFLICT,
		       "unique_violation: DB_CONFLICT");
		is_int(run(db, ins, 3, fk), DB_FOREIGN_KEY,
		       "foreign_key_violation: DB_FOREIGN_KEY");
		is_int(run(db, ins, 3, check), DB_INVALID,
		       "check_violation: DB_INVALID");
		is_int(run(db, ins, 3, null), DB_INVALID,
		       "not_null_violation: DB_INVALID");
		is_int(run(db, ins, 3, text), DB_INVALID,
		       "bad integer text (22P02): DB_INVALID");
		is_int(run(db, ins, 3, range), DB_INVALID,
		       "integer out of range (22003): DB_INVALID");
		is_int(run(db, "SELEC 1", 0, NULL), DB_ERROR,
		       "syntax error: DB_ERROR");
		is_int(run(db, "SELECT * FROM no_such_table", 0, NULL),
		       DB_ERROR, "undefined table: DB_ERROR");
		is_int(run(db, "SELECT 1; SELECT 2", 0, NULL), DB_ERROR,
		       "two statements at once are refused");
		is_int(db_status_of(NULL), DB_ERROR, "db_status_of(NULL)");
		ok(db_ping(db), "the connection is fine after errors");
	}

	/* Transactions. */
	{
		const char *p10[] = {"10", "ten", NULL};
		const char *p11[] = {"11", "eleven", NULL};
		const char *p12[] = {"12", "bad", NULL};
		const char *ins = "INSERT INTO dbt (id, name, parent) "
				  "VALUES ($1, $2, $3)";

		is_int(db_begin(db), DB_OK, "BEGIN");
		is_int(run(db, ins, 3, p10), DB_OK, "INSERT in a transaction");
		is_int(db_rollback(db), DB_OK, "ROLLBACK");
		is_int(rows(db, "10"), 0, "rolled back");
		is_int(db_begin(db), DB_OK, "BEGIN");
		is_int(db_begin(db), DB_ERROR, "BEGIN inside a transaction");
		is_int(run(db, ins, 3, p11), DB_OK, "INSERT in a transaction");
		is_int(db_commit(db), DB_OK, "COMMIT");
		is_int(rows(db, "11"), 1, "committed");
		is_int(db_begin(db), DB_OK, "BEGIN");
		is_int(run(db, ins, 3, p12), DB_INVALID, "a failing statement");
		is_int(run(db, "SELECT 1", 0, NULL), DB_ERROR,
		       "the failed transaction refuses statements");
		is_int(db_commit(db), DB_ERROR,
		       "COMMIT of a failed transaction: DB_ERROR");
		is_int(run(db, "SELECT 1", 0, NULL), DB_OK,
		       "after it, statements run again");
		is_int(db_commit(db), DB_ERROR, "COMMIT outside a transaction");
		is_int(db_rollback(db), DB_OK,
		       "ROLLBACK outside a transaction: DB_OK");
	}

	/* The server goes away and comes back: the same handle. */
	driver("stop-db");
	is_int(db_query(db, &res, "SELECT 1", 0, NULL), DB_UNAVAILABLE,
	       "server stopped: DB_UNAVAILABLE");
	ok(res == NULL, "and no result");
	is_int(run(db, "SELECT 1", 0, NULL), DB_UNAVAILABLE,
	       "server stopped: still DB_UNAVAILABLE");
	is_int(db_query_ro(db, &res, "SELECT 1", 0, NULL), DB_UNAVAILABLE,
	       "server stopped: db_query_ro too");
	ok(!db_ping(db), "server stopped: db_ping false");
	is_int(db_begin(db), DB_UNAVAILABLE, "server stopped: BEGIN too");
	is_int(db_rollback(db), DB_OK, "ROLLBACK without a server: DB_OK");
	driver("start-db");
	is_int(run(db, "SELECT 1", 0, NULL), DB_OK,
	       "server back: DB_OK on the same handle");
	is_int(rows(db, "11"), 1, "the data is still there");

	/* A restart between two statements is not noticed. */
	driver("restart-db");
	{
		const char *p[] = {"20", "twenty", NULL};

		is_int(run(db,
			   "INSERT INTO dbt (id, name, parent) "
			   "VALUES ($1, $2, $3)",
			   3, p),
		       DB_OK, "after a restart, a write reconnects first");
	}
	driver("restart-db");
	is_int(rows(db, "11"), 1, "after a restart, a read too");
	is_int(rows(db, "20"), 1, "the write after the restart is there");

	/* A restart inside a transaction loses it, and says so. */
	{
		const char *p[] = {"30", "thirty", NULL};

		is_int(db_begin(db), DB_OK, "BEGIN");
		is_int(run(db,
			   "INSERT INTO dbt (id, name, parent) "
			   "VALUES ($1, $2, $3)",
			   3, p),
		       DB_OK, "INSERT in a transaction");
		driver("restart-db");
		is_int(run(db, "SELECT 1", 0, NULL), DB_UNAVAILABLE,
		       "restart inside a transaction: DB_UNAVAILABLE, no "
		       "reconnection");
		is_int(db_query_ro(db, &res, "SELECT 1", 0, NULL),
		       DB_UNAVAILABLE, "not even for db_query_ro");
		is_int(db_commit(db), DB_UNAVAILABLE, "COMMIT: DB_UNAVAILABLE");
		is_int(db_rollback(db), DB_OK, "ROLLBACK: DB_OK");
		is_int(rows(db, "30"), 0, "the transaction was lost");

		is_int(db_begin(db), DB_OK, "BEGIN");
		driver("restart-db");
		is_int(db_rollback(db), DB_OK,
		       "ROLLBACK of a transaction the restart took: DB_OK");
		is_int(run(db, "SELECT 1", 0, NULL), DB_OK,
		       "then statements run again");
	}

	db_free(db);
	return tap_done();
}
