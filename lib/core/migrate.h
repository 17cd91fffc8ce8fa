/* SPDX-License-Identifier: MIT */
/*
 * migrate.h - applies the numbered SQL migrations of a directory, each
 * once (doc/database.md "Migrations").
 *
 * A migration is a file named NNN_WORDS.sql: at least three digits, an
 * underscore, then anything, ending in ".sql"; other names in the
 * directory are ignored.  Files apply in byte order of their names.  Its
 * version is the name without ".sql" ("001_schema"); two files with the
 * same number are refused before anything runs.
 *
 * Each file runs inside one transaction together with the INSERT of its
 * row into schema_migrations(version text primary key, applied_at
 * timestamptz), which is created when missing: a file applies completely
 * or not at all.  A file must therefore not contain BEGIN, COMMIT or
 * statements that refuse a transaction block (CREATE INDEX CONCURRENTLY,
 * CREATE DATABASE).  Every transaction first takes a transaction-level
 * advisory lock, so that concurrent runs against one database wait for
 * each other and never apply a file twice.
 *
 * The files are trusted (they come from the installation, not from
 * clients): their text is sent as it is, several statements at once,
 * through libpq's simple query protocol on a connection of this module's
 * own.  Applications use db.h, which takes parameterized statements only.
 */
#ifndef XMHUB_MIGRATE_H
#define XMHUB_MIGRATE_H

#include <stdbool.h>
#include <stdio.h>

struct migrate_result {
	unsigned int files;   /* migrations found in the directory */
	unsigned int applied; /* applied by this run */
	unsigned int pending; /* found not applied (migrate_check) */
};

/*
 * Connects to conninfo (a libpq URL or key=value string) and applies the
 * migrations of dir that schema_migrations does not list yet, printing
 * "migrate: applied VERSION" on out for each one as it commits.  True
 * when the database ends up with every file applied (*r tells how many
 * now).  False after printing why on stderr ("migrate: FILE: reason",
 * with the server's message): the failing file left nothing behind,
 * files before it stay applied.
 */
bool migrate_apply(const char *conninfo, const char *dir, FILE *out,
		   struct migrate_result *r);

/* What migrate_check() found. */
enum migrate_check {
	MIGRATE_CHECK_UP_TO_DATE,  /* every file applied */
	MIGRATE_CHECK_PENDING,	   /* r->pending files not applied yet */
	MIGRATE_CHECK_UNAVAILABLE, /* the server could not be reached */
	MIGRATE_CHECK_FAILED	   /* the directory, a query (said why) */
};

/*
 * Tells, without changing anything, which migrations of dir the
 * database at conninfo has not applied: "migrate: pending VERSION" on
 * out for each.  The programs' units run it before they start (`xmhub
 * migrate --check`), so that new programs never run on an old schema
 * (doc/packaging.md "Upgrades").  Reasons of the last two results on
 * stderr, as migrate_apply().
 */
enum migrate_check migrate_check(const char *conninfo, const char *dir,
				 FILE *out, struct migrate_result *r);

#endif
