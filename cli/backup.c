/* SPDX-License-Identifier: MIT */
/*
 * backup.c - the backup and restore commands of xmhub: settings read,
 * lib/domain/backup called, one JSON line reported on stdout.
 */
#include "config.h"

#include <stdio.h>

#include "backup.h"
#include "core/conf.h"
#include "domain/backup.h"
#include "usage.h"

/* Prints what was done as one JSON line; 0, or 1 when stdout fails. */
static int
report(const char *what, const struct backup_stats *st)
{
	printf("{\"%s\": true, \"linked\": %lu, \"copied\": %lu, "
	       "\"objects\": \"%s\"}\n",
	       what, st->linked, st->copied,
	       st->s3 ? "left in S3 (doc/operations.md)" : "filesystem");
	return fflush(stdout) == 0 ? 0 : 1;
}

int
backup_main(int argc, char *argv[])
{
	struct backup_stats st;
	char detail[512];
	const char *dir;

	if (!usage_opts(argc, argv, NULL, 0, "DIR", &dir))
		return 2;
	if (!conf_init(detail, sizeof(detail)) ||
	    !backup_run(dir, &st, detail, sizeof(detail))) {
		fprintf(stderr, "xmhub backup: %s\n", detail);
		return 1;
	}
	return report("backup", &st);
}

int
restore_main(int argc, char *argv[])
{
	struct usage_opt o[] = {{"force", true, false, NULL}};
	struct backup_stats st;
	char detail[512];
	const char *dir;

	if (!usage_opts(argc, argv, o, 1, "DIR", &dir))
		return 2;
	if (!conf_init(detail, sizeof(detail)) ||
	    !backup_restore(dir, o[0].value != NULL, &st, detail,
			    sizeof(detail))) {
		fprintf(stderr, "xmhub restore: %s\n", detail);
		return 1;
	}
	return report("restored", &st);
}
