/* SPDX-License-Identifier: MIT */
/*
 * backup.h - xmhub backup and xmhub restore (doc/operations.md,
 * "Backups").  Both take the arguments after their word and return the
 * exit status (0 done, 1 failed, 2 usage).
 */
#ifndef XMHUB_CLI_BACKUP_H
#define XMHUB_CLI_BACKUP_H

/* xmhub backup DIR: the database dump and the object store into DIR. */
int backup_main(int argc, char *argv[]);

/* xmhub restore [--force] DIR: a backup back into an empty stack. */
int restore_main(int argc, char *argv[]);

#endif
