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

#endif
