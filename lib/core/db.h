/* SPDX-License-Identifier: MIT */
/*
 * db.h - PostgreSQL access through libpq, parameterized queries only.
 *
 * There is no function here that takes SQL built at run time from
 * input: every statement is a constant string with $1..$n parameters
 * passed as text (db_query_bin: also in binary form).  Each is prepared once
 * per connection (the first 64 distinct ones; more run unprepared), so the
 * server parses and plans it once, not on every request.  A long-lived process
 * keeps one struct db; when the server goes away, queries answer DB_UNAVAILABLE
 * (the API's 503) and the next query after it comes back reconnects, without a
 * restart.
 *
 * With XMHUB_DATABASE_POOLED=1 (read by db_new()) the URL reaches a pooler
 * in transaction mode, PgBouncer's (doc/scaling.md): consecutive
 * transactions may run on different server connections, so nothing may
 * outlive a transaction.  Statements then run unnamed (parsed and planned
 * on every execution), LISTEN is refused (db_listen()), and the session
 * settings (TimeZone UTC, ISO dates) come from the pooler's database
 * entry, checked on every connection.
 */
#ifndef XMHUB_DB_H
#define XMHUB_DB_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

enum db_status {
	DB_OK = 0,
	DB_UNAVAILABLE, /* no connection: the caller answers 503 */
	DB_CONFLICT,	/* unique_violation (23505): the caller's 409 */
	DB_FOREIGN_KEY, /* foreign_key_violation (23503) */
	DB_INVALID, /* check/not-null violation or bad text (23xxx, 22xxx) */
	DB_ERROR    /* anything else: a bug or the server's trouble; 500 */
};

struct db;

/* A handle for conninfo (a libpq URL or key=value string); NULL on
 * memory failure.  Connects lazily, on the first query. */
struct db *db_new(const char *conninfo);

/*
 * Makes the connections of db plan each prepared statement once,
 * generically, rather than for each execution's parameters, and never
 * with a sequential scan (a plan made while a table was small must not
 * scan it whole once it has grown): for a writer whose statements take
 * arrays of every size and find every row by a key.  Call it before the
 * first query.  A pooled handle plans every execution for its
 * parameters: no plan made while a table was small is kept.
 */
void db_writer_plans(struct db *db);

/* True when db runs through a pooler (XMHUB_DATABASE_POOLED): no
 * prepared statements, no LISTEN. */
bool db_pooled(const struct db *db);

/* Closes the connection and frees the handle; NULL is fine. */
void db_free(struct db *db);

/*
 * Runs one statement with nparams text parameters (a NULL entry is SQL
 * NULL).  On DB_OK *res is the result (tuples or command), to be freed
 * with PQclear() by the caller; otherwise *res is NULL and the reason is
 * logged to stderr (never sent to clients).  Reconnects first when the
 * connection is down; a statement that failed because the connection
 * broke is not retried (it may have run), except outside a transaction
 * for statements marked idempotent by the caller through db_query_ro().
 */
enum db_status db_query(struct db *db, PGresult **res, const char *sql,
			int nparams, const char *const *params);

/* As db_query(), for a statement whose result nobody reads. */
enum db_status db_exec(struct db *db, const char *sql, int nparams,
		       const char *const *params);

/* As db_query(), for a read-only statement: retried once on reconnect. */
enum db_status db_query_ro(struct db *db, PGresult **res, const char *sql,
			   int nparams, const char *const *params);

/*
 * As db_query(), with parameters of any format: formats[i] 1 makes
 * params[i] lengths[i] bytes of the type's binary form (bytea: the raw
 * bytes, no hex text), 0 text (lengths[i] ignored).
 */
enum db_status db_query_bin(struct db *db, PGresult **res, const char *sql,
			    int nparams, const char *const *params,
			    const int *lengths, const int *formats);

/*
 * The handle for a read that may be served by a streaming replica
 * (XMHUB_DATABASE_REPLICA_URL, doc/scaling.md "Read replica"): its
 * replica once that has replayed everything db's server had written when
 * this is called, so that a client reads what was acknowledged to it
 * (read-your-writes); db itself otherwise, inside a transaction, without
 * the setting, and for REPLICA_PAUSE seconds after the replica failed.
 * Costs a statement on each server.  The replica's handle is db's: not
 * to be freed, and used by one caller at a time.
 */
struct db *db_reader(struct db *db);

/* BEGIN, COMMIT, ROLLBACK.  ROLLBACK of a broken connection is DB_OK. */
enum db_status db_begin(struct db *db);
enum db_status db_commit(struct db *db);
enum db_status db_rollback(struct db *db);

/* True when the server answers a trivial query now (readiness). */
bool db_ping(struct db *db);

/*
 * LISTENs on channel (lower-case letters and '_' only, at most 63) on this
 * connection and on every one made after it (a reconnect LISTENs before
 * its first statement).  One channel per handle (naming it again is a
 * no-op).  False when channel is not such a name, another one is set,
 * the server refuses, or the handle is pooled (a LISTEN would stay on a
 * server connection that other clients get next).
 */
bool db_listen(struct db *db, const char *channel);

/*
 * Without blocking: the number of notifications received on the LISTENed
 * channel since the last call (0: none), taken off the queue.  *missed
 * is true when the connection is down or is not the one of the last call:
 * notifications may have been lost, whatever they guard is stale.
 */
int db_notified(struct db *db, bool *missed);

/* The open connection's socket, to wait on for notifications (poll for
 * reading, then db_notified()); -1 while there is none. */
int db_socket(const struct db *db);

/* The SQLSTATE-derived status of a failed result (for tests, logging). */
enum db_status db_status_of(const PGresult *res);

#endif
