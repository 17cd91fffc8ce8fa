/* SPDX-License-Identifier: MIT */
/*
 * backup.h - a backup of the platform's state into a directory, and its
 * restore (doc/operations.md, "Backups").
 *
 * A backup directory holds DIR/xmhub.dump, pg_dump's custom format of
 * the database (one consistent snapshot), and, for the filesystem store,
 * DIR/objects/, the objects as hard links when DIR is on the store's
 * filesystem (objects are never changed in place: a put renames a new
 * file over the key) and as copies otherwise.  The dump is taken before
 * the objects: an object is written before the row that names it, so
 * every object a dumped row names is there; an object written later
 * without a row is harmless.  An S3 store is not copied (see the doc).
 *
 * pg_dump and pg_restore run with posix_spawn and an argument vector; the
 * database password, if the URL holds one, is given to them in
 * PGPASSWORD in their environment only, never in their arguments.
 */
#ifndef XMHUB_BACKUP_H
#define XMHUB_BACKUP_H

#include <stdbool.h>
#include <stddef.h>

/* What a backup or a restore did, for its report. */
struct backup_stats {
	unsigned long linked; /* objects hard-linked */
	unsigned long copied; /* objects copied */
	bool s3;	      /* the store is S3: objects left to the operator */
};

/*
 * Backs up the database (XMHUB_DATABASE_URL) and the store (settings read
 * by conf_init before) into dir, which is created (0700) or must be
 * empty.  False with a one-line reason in detail; dir may then hold part
 * of a backup.
 */
bool backup_run(const char *dir, struct backup_stats *stats, char *detail,
		size_t dlen);

/*
 * Restores the backup in dir into the database and the store of the
 * settings.  Refuses (false + detail) a database that has tables or a
 * store that holds objects, unless force: then the dump's objects are
 * dropped and recreated and the backup's objects replace those of the
 * same key.  False with a one-line reason in detail.
 */
bool backup_restore(const char *dir, bool force, struct backup_stats *stats,
		    char *detail, size_t dlen);

#endif
