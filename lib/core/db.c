/* SPDX-License-Identifier: MIT */
/*
 * db.c - PostgreSQL access through libpq, parameterized queries only.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/conf.h"
#include "core/db.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/settings.h"

/* Seconds to wait for a server that does not answer a connection. */
#define CONNECT_TIMEOUT "5"

/* Statements prepared on one connection; more are run unprepared. */
#define DB_STMT_MAX 64

/* Seconds db_reader() leaves a replica alone after it failed. */
#define REPLICA_PAUSE 5

struct db {
	char *conninfo;
	PGconn *conn;
	char *stmt[DB_STMT_MAX]; /* SQL of prepared statement "xmN" */
	int nstmt;
	bool in_tx;	 /* between db_begin() and db_commit()/db_rollback() */
	bool down;	 /* the last connection attempt failed (logged once) */
	char listen[64]; /* the channel LISTENed on, "" for none */
	unsigned long epoch; /* connections made so far */
	unsigned long seen;  /* the epoch db_notified() last saw */
	bool writer;	     /* db_writer_plans() */
	bool pooled;	     /* XMHUB_DATABASE_POOLED: see db.h */
	struct db *replica;  /* db_reader(): XMHUB_DATABASE_REPLICA_URL's */
	bool replica_read;   /* that setting was looked at */
	time_t replica_off;  /* until then db_reader() does not ask it */
};

/* Logs "db: what: msg" as one line: libpq's messages may hold newlines
 * and tabs, which become single spaces.  Counts a PostgreSQL error
 * (lib/core/metrics) unless it is a notice. */
static void
log_msg(const char *what, const char *msg)
{
	char line[1024];
	size_t n = 0;
	bool space = false;

	for (; *msg != '\0' && n < sizeof(line) - 1; msg++) {
		if (*msg == '\n' || *msg == '\t' || *msg == ' ') {
			space = true;
			continue;
		}
		if (space && n > 0 && n < sizeof(line) - 2)
			line[n++] = ' ';
		space = false;
		line[n++] = *msg;
	}
	line[n] = '\0';
	if (strcmp(what, "server") == 0)
		log_warn("db: %s: %s", what, line);
	else {
		metrics_add(METRIC_DB_ERRORS, 1);
		log_error("db: %s: %s", what, line);
	}
}

/* libpq notice processor: server notices and warnings go to the log. */
static void
notice(void *arg, const char *msg)
{
	(void)arg;
	log_msg("server", msg);
}

/* A new connection has none of the old one's prepared statements. */
static void
forget_statements(struct db *db)
{
	for (int i = 0; i < db->nstmt; i++)
		free(db->stmt[i]);
	db->nstmt = 0;
}

struct db *
db_new(const char *conninfo)
{
	struct db *db;
	bool on;

	if ((db = calloc(1, sizeof(*db))) == NULL)
		return NULL;
	if ((db->conninfo = strdup(conninfo)) == NULL) {
		free(db);
		return NULL;
	}
	/* A malformed value counts as on: it works with or without a
	 * pooler, a little slower without. */
	db->pooled =
		!settings_bool(conf_get("XMHUB_DATABASE_POOLED"), &on) || on;
	return db;
}

bool
db_pooled(const struct db *db)
{
	return db->pooled;
}

void
db_writer_plans(struct db *db)
{
	db->writer = true;
}

void
db_free(struct db *db)
{
	if (db == NULL)
		return;
	PQfinish(db->conn);
	forget_statements(db);
	db_free(db->replica);
	free(db->conninfo);
	free(db);
}

/* LISTENs on db->listen on the open connection; false (connection
 * dropped) when the server refuses. */
static bool
listen_now(struct db *db)
{
	char sql[96];
	PGresult *res;
	bool ok;

	/* A channel is an identifier, not a parameter; db_listen() checked
	 * it is one. */
	snprintf(sql, sizeof(sql), "LISTEN %s", db->listen);
	res = PQexec(db->conn, sql);
	ok = PQresultStatus(res) == PGRES_COMMAND_OK;
	if (!ok) {
		log_msg("listen", PQerrorMessage(db->conn));
		PQfinish(db->conn);
		db->conn = NULL;
	}
	PQclear(res);
	return ok;
}

/*
 * Through a pooler the session settings can not be asked for (PgBouncer
 * 1.18 refuses the "options" startup parameter): its database entry sets
 * them, and each connection checks what the server reports, so that a
 * pooler without them is refused rather than answering timestamps in
 * another zone.  False (logged once per outage) when they are not set.
 */
static bool
pooled_session_ok(struct db *db)
{
	const char *tz = PQparameterStatus(db->conn, "TimeZone");
	const char *ds = PQparameterStatus(db->conn, "DateStyle");

	if (tz != NULL && strcmp(tz, "UTC") == 0 && ds != NULL &&
	    strncmp(ds, "ISO", 3) == 0)
		return true;
	if (!db->down)
		log_error("db: connect: XMHUB_DATABASE_POOLED: the server's "
			  "TimeZone is %s and DateStyle %s, not UTC and ISO: "
			  "set timezone=UTC datestyle=ISO in the pooler's "
			  "database entry (doc/scaling.md)",
			  tz != NULL ? tz : "unknown",
			  ds != NULL ? ds : "unknown");
	return false;
}

/*
 * True when db->conn can take a statement: an open connection, or a new
 * one when it is down and no transaction is open (a new connection would
 * silently run the rest of a transaction outside it).
 */
static bool
connected(struct db *db)
{
	/* lib/web/dbjson relies on ISO timestamps in UTC.  A pooled handle
	 * passes no "options": libpq skips a keyword whose value is NULL. */
	const char *const keys[] = {"connect_timeout", "options", "dbname",
				    NULL};
	const char *const vals[] = {
		CONNECT_TIMEOUT,
		db->pooled   ? NULL
		: db->writer ? "-c TimeZone=UTC -c DateStyle=ISO "
			       "-c plan_cache_mode=force_generic_plan "
			       "-c enable_seqscan=off"
			     : "-c TimeZone=UTC -c DateStyle=ISO",
		db->conninfo, NULL};

	/*
	 * Take in what the server sent while the connection was idle.  A
	 * server that shuts down sends a last error and closes: the first
	 * read may take the message, the second meets the end of the
	 * stream, and the connection is then known to be bad before a
	 * statement is lost on it.
	 */
	for (int i = 0;
	     i < 2 && db->conn != NULL && PQstatus(db->conn) == CONNECTION_OK;
	     i++)
		PQconsumeInput(db->conn);
	if (db->conn != NULL && PQstatus(db->conn) == CONNECTION_OK)
		return true;
	if (db->in_tx)
		return false;
	PQfinish(db->conn);
	/* Later keywords win: conninfo may set its own connect_timeout. */
	db->conn = PQconnectdbParams(keys, vals, 1);
	if (db->conn == NULL || PQstatus(db->conn) != CONNECTION_OK ||
	    (db->pooled && !pooled_session_ok(db))) {
		if (!db->down && PQstatus(db->conn) != CONNECTION_OK)
			log_msg("connect", db->conn != NULL
						   ? PQerrorMessage(db->conn)
						   : "out of memory");
		db->down = true;
		PQfinish(db->conn);
		db->conn = NULL;
		return false;
	}
	if (db->down)
		log_info("db: connected again");
	db->down = false;
	db->epoch++;
	forget_statements(db);
	PQsetNoticeProcessor(db->conn, notice, NULL);
	/* Before any statement: what is read after this is notified. */
	if (db->listen[0] != '\0' && !listen_now(db))
		return false;
	return true;
}

enum db_status
db_status_of(const PGresult *res)
{
	const char *s;

	if (res == NULL)
		return DB_ERROR;
	switch (PQresultStatus(res)) {
	case PGRES_COMMAND_OK:
	case PGRES_TUPLES_OK:
	case PGRES_SINGLE_TUPLE:
		return DB_OK;
	default:
		break;
	}
	if ((s = PQresultErrorField(res, PG_DIAG_SQLSTATE)) == NULL ||
	    strlen(s) != 5)
		return DB_ERROR;
	if (strcmp(s, "23505") == 0)
		return DB_CONFLICT;
	if (strcmp(s, "23503") == 0)
		return DB_FOREIGN_KEY;
	if (strncmp(s, "23", 2) == 0 || strncmp(s, "22", 2) == 0)
		return DB_INVALID;
	/* connection_exception; admin, crash shutdown; cannot connect now */
	if (strncmp(s, "08", 2) == 0 || strcmp(s, "57P01") == 0 ||
	    strcmp(s, "57P02") == 0 || strcmp(s, "57P03") == 0)
		return DB_UNAVAILABLE;
	return DB_ERROR;
}

/* Logs why res failed: its SQLSTATE and the server's primary message. */
static void
log_result(const PGresult *res)
{
	const char *state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	const char *msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

	/* Not the DETAIL: it quotes values, such as e-mail addresses. */
	log_msg(state != NULL ? state : "error",
		msg != NULL ? msg : PQresultErrorMessage(res));
}

/*
 * Runs sql as a statement prepared once per connection: the server then
 * parses and plans it once, not on every request.  Statements are the
 * program's constant strings, so the cache stays small; past
 * DB_STMT_MAX (or without memory) a statement runs unprepared.  A pooled
 * handle runs every statement unnamed: the next transaction may be on a
 * server connection that never saw the preparation.  One without
 * parameters (a constant: BEGIN, COMMIT, the change counter's read) goes
 * as a simple query, one message where the extended protocol sends five,
 * each relayed by PgBouncer (bench/pgbouncer: doc/benchmarks.md).
 */
static PGresult *
exec(struct db *db, const char *sql, int nparams, const char *const *params,
     const int *lengths, const int *formats)
{
	char name[16];
	PGresult *r;
	int i;

	if (db->pooled && nparams == 0)
		return PQexec(db->conn, sql);
	if (db->pooled)
		return PQexecParams(db->conn, sql, nparams, NULL, params,
				    lengths, formats, 0);
	for (i = 0; i < db->nstmt; i++)
		if (db->stmt[i] == sql || strcmp(db->stmt[i], sql) == 0)
			break;
	if (i == db->nstmt) {
		if (db->nstmt == DB_STMT_MAX)
			return PQexecParams(db->conn, sql, nparams, NULL,
					    params, lengths, formats, 0);
		snprintf(name, sizeof(name), "xm%d", i);
		r = PQprepare(db->conn, name, sql, nparams, NULL);
		if (db_status_of(r) != DB_OK)
			return r;
		PQclear(r);
		if ((db->stmt[i] = strdup(sql)) == NULL)
			return PQexecParams(db->conn, sql, nparams, NULL,
					    params, lengths, formats, 0);
		db->nstmt++;
	}
	snprintf(name, sizeof(name), "xm%d", i);
	return PQexecPrepared(db->conn, name, nparams, params, lengths, formats,
			      0);
}

/* db_query(), db_query_ro() and db_query_bin(); lengths and formats as
 * PQexecParams takes them (NULL: all text); retry: once after a lost
 * connection. */
static enum db_status
query(struct db *db, PGresult **res, const char *sql, int nparams,
      const char *const *params, const int *lengths, const int *formats,
      bool retry)
{
	enum db_status st;
	PGresult *r;

	*res = NULL;
	if (!connected(db))
		return DB_UNAVAILABLE;
	r = exec(db, sql, nparams, params, lengths, formats);
	if ((st = db_status_of(r)) == DB_OK) {
		*res = r;
		return DB_OK;
	}
	if (PQstatus(db->conn) == CONNECTION_BAD) {
		log_msg("connection lost", PQerrorMessage(db->conn));
		PQclear(r);
		if (retry && !db->in_tx)
			return query(db, res, sql, nparams, params, lengths,
				     formats, false);
		return DB_UNAVAILABLE;
	}
	if (r != NULL)
		log_result(r);
	else
		log_msg("error", PQerrorMessage(db->conn));
	PQclear(r);
	return st;
}

enum db_status
db_query(struct db *db, PGresult **res, const char *sql, int nparams,
	 const char *const *params)
{
	return query(db, res, sql, nparams, params, NULL, NULL, false);
}

enum db_status
db_query_ro(struct db *db, PGresult **res, const char *sql, int nparams,
	    const char *const *params)
{
	return query(db, res, sql, nparams, params, NULL, NULL, true);
}

enum db_status
db_query_bin(struct db *db, PGresult **res, const char *sql, int nparams,
	     const char *const *params, const int *lengths, const int *formats)
{
	return query(db, res, sql, nparams, params, lengths, formats, false);
}

enum db_status
db_exec(struct db *db, const char *sql, int nparams, const char *const *params)
{
	PGresult *res;
	enum db_status st =
		query(db, &res, sql, nparams, params, NULL, NULL, false);

	PQclear(res);
	return st;
}

enum db_status
db_begin(struct db *db)
{
	enum db_status st;

	if (db->in_tx) {
		log_error("db: BEGIN inside a transaction");
		return DB_ERROR;
	}
	if ((st = db_exec(db, "BEGIN", 0, NULL)) == DB_OK)
		db->in_tx = true;
	return st;
}

enum db_status
db_commit(struct db *db)
{
	enum db_status st = DB_ERROR;
	PGresult *res;

	if (!db->in_tx) {
		log_error("db: COMMIT outside a transaction");
		return DB_ERROR;
	}
	/* Whatever happens, the transaction is over. */
	if ((st = query(db, &res, "COMMIT", 0, NULL, NULL, NULL, false)) ==
		    DB_OK &&
	    strcmp(PQcmdStatus(res), "COMMIT") != 0) {
		/* The server answers a failed transaction's COMMIT so. */
		log_error("db: COMMIT of a failed transaction rolled it back");
		st = DB_ERROR;
	}
	PQclear(res);
	db->in_tx = false;
	return st;
}

enum db_status
db_rollback(struct db *db)
{
	enum db_status st = DB_OK;
	PGresult *res;

	if (!db->in_tx)
		return DB_OK;
	db->in_tx = false;
	/* A lost connection took the transaction with it. */
	if (db->conn == NULL || PQstatus(db->conn) != CONNECTION_OK)
		return DB_OK;
	res = PQexecParams(db->conn, "ROLLBACK", 0, NULL, NULL, NULL, NULL, 0);
	if (db_status_of(res) != DB_OK && PQstatus(db->conn) == CONNECTION_OK) {
		st = db_status_of(res);
		if (res != NULL)
			log_result(res);
	}
	PQclear(res);
	return st;
}

bool
db_ping(struct db *db)
{
	PGresult *res;
	enum db_status st = db_query_ro(db, &res, "SELECT 1", 0, NULL);

	PQclear(res);
	return st == DB_OK;
}

bool
db_listen(struct db *db, const char *channel)
{
	size_t n = strlen(channel);

	if (db->pooled)
		return false;
	if (strcmp(db->listen, channel) == 0)
		return true;
	if (n == 0 || n >= sizeof(db->listen) ||
	    strspn(channel, "abcdefghijklmnopqrstuvwxyz_") != n ||
	    db->listen[0] != '\0')
		return false;
	memcpy(db->listen, channel, n + 1);
	/* An open connection LISTENs now; a later one when it is made. */
	if (db->conn != NULL && PQstatus(db->conn) == CONNECTION_OK &&
	    !db->in_tx && !listen_now(db))
		return false;
	return true;
}

int
db_notified(struct db *db, bool *missed)
{
	PGnotify *n;
	int count = 0;

	*missed = db->seen != db->epoch;
	db->seen = db->epoch;
	if (db->conn == NULL || PQstatus(db->conn) != CONNECTION_OK ||
	    PQconsumeInput(db->conn) == 0 ||
	    PQstatus(db->conn) != CONNECTION_OK) {
		*missed = true;
		return 0;
	}
	/* The connection LISTENed before its first statement: what it
	 * queued is real, also on a connection new since the last call. */
	while ((n = PQnotifies(db->conn)) != NULL) {
		count++;
		PQfreemem(n);
	}
	return count;
}

int
db_socket(const struct db *db)
{
	if (db->conn == NULL || PQstatus(db->conn) != CONNECTION_OK)
		return -1;
	return PQsocket(db->conn);
}

/* True when db's replica has replayed the WAL up to lsn, the primary's
 * position when the read began. */
static bool
replica_caught_up(struct db *db, const char *lsn)
{
	PGresult *res = NULL;
	bool ok = false;

	/* NULL (no longer in recovery: promoted) is not caught up. */
	if (db_query_ro(db->replica, &res,
			"SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn", 1,
			&lsn) != DB_OK)
		db->replica_off = time(NULL) + REPLICA_PAUSE;
	else
		ok = PQntuples(res) == 1 && PQgetvalue(res, 0, 0)[0] == 't';
	PQclear(res);
	return ok;
}

struct db *
db_reader(struct db *db)
{
	const char *url, *lsn;
	PGresult *res = NULL;
	struct db *r = db;

	if (!db->replica_read) {
		db->replica_read = true;
		if ((url = conf_get("XMHUB_DATABASE_REPLICA_URL")) != NULL &&
		    (db->replica = db_new(url)) == NULL)
			log_error("db: replica: out of memory");
	}
	if (db->replica == NULL || db->in_tx || time(NULL) < db->replica_off)
		return db;
	/* Every commit acknowledged before this read is at or before this
	 * position: a replica past it shows the client its own writes. */
	if (db_query_ro(db, &res, "SELECT pg_current_wal_lsn()::text", 0,
			NULL) != DB_OK ||
	    PQntuples(res) != 1)
		goto out;
	lsn = PQgetvalue(res, 0, 0);
	if (replica_caught_up(db, lsn))
		r = db->replica;
out:
	PQclear(res);
	return r;
}
