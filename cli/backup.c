/*
 * backup.c - the backup and restore commands of xmhub: settings read,
 * lib/domain/backup called, one JSON line reported on stdout.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "backup.h"
#include "core/conf.h"
#include "domain/backup.h"

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

	if (argc != 1 || argv[0][0] == '-')
		return 2;
	if (!conf_init(detail, sizeof(detail)) ||
	    !backup_run(argv[0], &st, detail, sizeof(detail))) {
		fprintf(stderr, "xmhub backup: %s\n", detail);
		return 1;
	}
	return report("backup", &st);
}

int
restore_main(int argc, char *argv[])
{
	struct backup_stats st;
	char detail[512];
	bool force = argc == 2 && strcmp(argv[0], "--force") == 0;

	if (argc != 1 + force || argv[force][0] == '-')
		return 2;
	if (!conf_init(detail, sizeof(detail)) ||
	    !backup_restore(argv[force], force, &st, detail, sizeof(detail))) {
		fprintf(stderr, "xmhub restore: %s\n", detail);
		return 1;
	}
	return report("restored", &st);
}
