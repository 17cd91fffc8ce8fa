/* SPDX-License-Identifier: MIT */
/*
 * backup.c - database dump and object tree of a backup (see backup.h).
 */
#define _DEFAULT_SOURCE /* explicit_bzero */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "codec/buf.h"
#include "core/conf.h"
#include "core/db.h"
#include "core/fdio.h"
#include "domain/backup.h"

#define DUMP_NAME "xmhub.dump"
#define OBJECTS_NAME "objects"
/* The temporary name of a put in progress (lib/store/storage_fs.c). */
#define PUT_TMP_MARK ".tmp~"

extern char **environ;

/*
 * The database URL as a key=value conninfo without the password (into
 * ci, NUL-terminated) and the password (into pw, "" if none).  False
 * when libpq cannot parse the URL or memory runs out.
 */
static bool
split_conninfo(const char *url, struct buf *ci, struct buf *pw)
{
	PQconninfoOption *opts = PQconninfoParse(url, NULL), *o;

	if (opts == NULL)
		return false;
	for (o = opts; o->keyword != NULL; o++) {
		if (o->val == NULL)
			continue;
		if (strcmp(o->keyword, "password") == 0) {
			buf_puts(pw, o->val);
			continue;
		}
		/* Quoted, with \ and ' escaped, as libpq reads it. */
		buf_printf(ci, "%s%s='", ci->len > 0 ? " " : "", o->keyword);
		for (const char *p = o->val; *p != '\0'; p++) {
			if (*p == '\\' || *p == '\'')
				buf_putc(ci, '\\');
			buf_putc(ci, *p);
		}
		buf_putc(ci, '\'');
	}
	buf_putc(ci, '\0');
	buf_putc(pw, '\0');
	PQconninfoFree(opts);
	return !ci->failed && !pw->failed;
}

/*
 * Runs argv (argv[0] looked up in PATH) with the caller's environment
 * minus any PGPASSWORD, plus PGPASSWORD=pw when pw is not empty, and
 * waits for it: true when it exits 0.  Its output goes where ours does.
 */
static bool
spawn_pg(char *const argv[], const char *pw, char *detail, size_t dlen)
{
	size_t n = 0, k = 0;
	char **envp = NULL;
	struct buf pwvar;
	pid_t pid;
	int st, err;
	bool ok = false;

	buf_init(&pwvar, 0);
	while (environ[n] != NULL)
		n++;
	if ((envp = calloc(n + 2, sizeof(*envp))) == NULL) {
		snprintf(detail, dlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "PGPASSWORD=", 11) != 0)
			envp[k++] = environ[i];
	if (pw[0] != '\0') {
		buf_printf(&pwvar, "PGPASSWORD=%s", pw);
		buf_putc(&pwvar, '\0');
		if (pwvar.failed) {
			snprintf(detail, dlen, "out of memory");
			goto out;
		}
		envp[k++] = (char *)pwvar.p;
	}
	if ((err = posix_spawnp(&pid, argv[0], NULL, NULL, argv, envp)) != 0) {
		snprintf(detail, dlen, "%s: %s", argv[0], strerror(err));
		goto out;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			snprintf(detail, dlen, "waitpid: %s", strerror(errno));
			goto out;
		}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		ok = true;
	else
		snprintf(detail, dlen, "%s failed (exit status %d)", argv[0],
			 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
out:
	/* The password leaves our memory with the buffer. */
	if (pwvar.p != NULL)
		explicit_bzero(pwvar.p, pwvar.len);
	buf_free(&pwvar);
	free(envp);
	return ok;
}

/* Copies the regular file src to the new file dst (mode, and as root the
 * owner, kept), synced. */
static bool
copy_file(const char *src, const char *dst, const struct stat *sb)
{
	char b[65536];
	int in = -1, out = -1;
	ssize_t n;
	bool ok = false;

	if ((in = open(src, O_RDONLY | O_CLOEXEC)) < 0 ||
	    (out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			sb->st_mode & 07777)) < 0 ||
	    (geteuid() == 0 && fchown(out, sb->st_uid, sb->st_gid) != 0))
		goto out;
	while ((n = read(in, b, sizeof(b))) > 0)
		if (!fdio_write_full(out, b, (size_t)n))
			goto out;
	ok = n == 0 && fsync(out) == 0;
out:
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) != 0)
		ok = false;
	return ok;
}

/*
 * Puts every object under the directory src at the same place under dst
 * (directories created): a hard link, or a copy across filesystems.  An
 * object already at dst is replaced when replace, else an error.  Puts
 * in progress are skipped.
 */
static bool
tree_put(const char *src, const char *dst, bool replace,
	 struct backup_stats *stats, char *detail, size_t dlen)
{
	DIR *d = NULL;
	struct dirent *e;
	struct stat top;
	bool ok = false;

	if (stat(src, &top) != 0) {
		snprintf(detail, dlen, "%s: %s", src, strerror(errno));
		goto out;
	}
	/* The source's mode, and as root its owner: the service reads a
	 * restored store as the user it runs as. */
	if (mkdir(dst, top.st_mode & 07777) == 0) {
		if (geteuid() == 0 && chown(dst, top.st_uid, top.st_gid) != 0) {
			snprintf(detail, dlen, "%s: %s", dst, strerror(errno));
			goto out;
		}
	} else if (errno != EEXIST) {
		snprintf(detail, dlen, "%s: %s", dst, strerror(errno));
		goto out;
	}
	if ((d = opendir(src)) == NULL) {
		snprintf(detail, dlen, "%s: %s", src, strerror(errno));
		goto out;
	}
	while (errno = 0, (e = readdir(d)) != NULL) {
		char s[PATH_MAX], t[PATH_MAX];
		struct stat sb;

		if (strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0 ||
		    strstr(e->d_name, PUT_TMP_MARK) != NULL)
			continue;
		if ((size_t)snprintf(s, sizeof(s), "%s/%s", src, e->d_name) >=
			    sizeof(s) ||
		    (size_t)snprintf(t, sizeof(t), "%s/%s", dst, e->d_name) >=
			    sizeof(t)) {
			snprintf(detail, dlen, "%s: path too long", src);
			goto out;
		}
		if (lstat(s, &sb) != 0) {
			snprintf(detail, dlen, "%s: %s", s, strerror(errno));
			goto out;
		}
		if (S_ISDIR(sb.st_mode)) {
			if (!tree_put(s, t, replace, stats, detail, dlen))
				goto out;
			continue;
		}
		if (!S_ISREG(sb.st_mode))
			continue; /* the store holds nothing else */
		if (replace && unlink(t) != 0 && errno != ENOENT) {
			snprintf(detail, dlen, "%s: %s", t, strerror(errno));
			goto out;
		}
		if (link(s, t) == 0) {
			stats->linked++;
		} else if ((errno == EXDEV || errno == EPERM ||
			    errno == EMLINK) &&
			   copy_file(s, t, &sb)) {
			stats->copied++;
		} else {
			snprintf(detail, dlen, "%s: %s", t, strerror(errno));
			goto out;
		}
	}
	if (errno != 0)
		snprintf(detail, dlen, "%s: %s", src, strerror(errno));
	else
		ok = true;
out:
	if (d != NULL)
		closedir(d);
	return ok;
}

/* True when the directory path holds no regular file at any depth (a
 * missing directory is empty); false + detail too when it cannot be
 * read. */
static bool
tree_empty(const char *path, bool *empty, char *detail, size_t dlen)
{
	DIR *d;
	struct dirent *e;
	bool ok = true;

	*empty = true;
	if ((d = opendir(path)) == NULL) {
		if (errno == ENOENT)
			return true;
		snprintf(detail, dlen, "%s: %s", path, strerror(errno));
		return false;
	}
	while (ok && *empty && (e = readdir(d)) != NULL) {
		char s[PATH_MAX];
		struct stat sb;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(s, sizeof(s), "%s/%s", path, e->d_name) >=
			    sizeof(s) ||
		    lstat(s, &sb) != 0) {
			snprintf(detail, dlen, "%s: cannot be read", s);
			ok = false;
		} else if (S_ISDIR(sb.st_mode)) {
			ok = tree_empty(s, empty, detail, dlen);
		} else if (S_ISREG(sb.st_mode)) {
			*empty = false;
		}
	}
	closedir(d);
	return ok;
}

/* The settings a backup needs: the database URL split, the store's
 * directory (NULL for S3). */
struct target {
	struct buf ci, pw;
	const char *store_dir;
};

static bool
target_init(struct target *t, struct backup_stats *stats, char *detail,
	    size_t dlen)
{
	const char *url = conf_get("XMHUB_DATABASE_URL");

	memset(stats, 0, sizeof(*stats));
	buf_init(&t->ci, 0);
	buf_init(&t->pw, 0);
	/* As lib/store/storage.c decides: an endpoint means S3. */
	stats->s3 = conf_get("XMHUB_S3_ENDPOINT") != NULL;
	t->store_dir = stats->s3 ? NULL : conf_get("XMHUB_STORAGE_DIR");
	if (url == NULL) {
		snprintf(detail, dlen, "XMHUB_DATABASE_URL is not set");
		return false;
	}
	if (!stats->s3 && t->store_dir == NULL) {
		snprintf(detail, dlen,
			 "XMHUB_STORAGE_DIR (or XMHUB_S3_ENDPOINT) is not set");
		return false;
	}
	if (!split_conninfo(url, &t->ci, &t->pw)) {
		snprintf(detail, dlen, "XMHUB_DATABASE_URL cannot be parsed");
		return false;
	}
	return true;
}

static void
target_free(struct target *t)
{
	if (t->pw.p != NULL)
		explicit_bzero(t->pw.p, t->pw.len);
	buf_free(&t->pw);
	buf_free(&t->ci);
}

/* The dump's and the objects' paths in the backup directory dir, each
 * PATH_MAX long; false with a detail when they do not fit. */
static bool
paths(const char *dir, char dump[PATH_MAX], char objects[PATH_MAX],
      char *detail, size_t dlen)
{
	if ((size_t)snprintf(dump, PATH_MAX, "%s/" DUMP_NAME, dir) >=
		    PATH_MAX ||
	    (size_t)snprintf(objects, PATH_MAX, "%s/" OBJECTS_NAME, dir) >=
		    PATH_MAX) {
		snprintf(detail, dlen, "%s: path too long", dir);
		return false;
	}
	return true;
}

bool
backup_run(const char *dir, struct backup_stats *stats, char *detail,
	   size_t dlen)
{
	char dump[PATH_MAX], objects[PATH_MAX];
	struct target t;
	bool ok = false, empty;
	int fd;

	if (!target_init(&t, stats, detail, dlen))
		goto out;
	if (!paths(dir, dump, objects, detail, dlen))
		goto out;
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		snprintf(detail, dlen, "%s: %s", dir, strerror(errno));
		goto out;
	}
	if (!tree_empty(dir, &empty, detail, dlen))
		goto out;
	if (!empty) {
		snprintf(detail, dlen, "%s is not empty", dir);
		goto out;
	}
	/* pg_dump creates its file with the caller's umask (0644 under the
	 * usual 022) and keeps the mode of one that exists: made here, the
	 * dump of the password hashes is its owner's alone in any
	 * directory. */
	if ((fd = open(dump, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) <
		    0 ||
	    close(fd) != 0) {
		snprintf(detail, dlen, "%s: %s", dump, strerror(errno));
		goto out;
	}
	{
		char *const argv[] = {
			"pg_dump",  "--format=custom", "--file", dump,
			"--dbname", (char *)t.ci.p,    NULL};

		/* First the rows, then the objects they name (backup.h). */
		if (!spawn_pg(argv, (const char *)t.pw.p, detail, dlen))
			goto out;
	}
	ok = stats->s3 ||
	     tree_put(t.store_dir, objects, false, stats, detail, dlen);
out:
	target_free(&t);
	return ok;
}

/* Whether the database has a table of its own; false + detail when it
 * cannot be asked. */
static bool
db_has_tables(const char *conninfo, const char *pw, bool *has, char *detail,
	      size_t dlen)
{
	struct buf ci;
	struct db *db = NULL;
	PGresult *res = NULL;
	bool ok = false;

	buf_init(&ci, 0);
	buf_puts(&ci, conninfo);
	if (pw[0] != '\0') {
		buf_puts(&ci, " password='");
		for (const char *p = pw; *p != '\0'; p++) {
			if (*p == '\\' || *p == '\'')
				buf_putc(&ci, '\\');
			buf_putc(&ci, *p);
		}
		buf_putc(&ci, '\'');
	}
	buf_putc(&ci, '\0');
	if (ci.failed || (db = db_new((const char *)ci.p)) == NULL) {
		snprintf(detail, dlen, "out of memory");
		goto out;
	}
	if (db_query_ro(db, &res,
			"SELECT EXISTS (SELECT 1 FROM pg_class c JOIN "
			"pg_namespace n ON n.oid = c.relnamespace WHERE "
			"c.relkind IN ('r', 'p') AND n.nspname NOT IN "
			"('pg_catalog', 'information_schema') AND n.nspname "
			"NOT LIKE 'pg\\_toast%')",
			0, NULL) != DB_OK) {
		snprintf(detail, dlen, "the database cannot be read");
		goto out;
	}
	*has = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	ok = true;
out:
	PQclear(res);
	db_free(db);
	if (ci.p != NULL)
		explicit_bzero(ci.p, ci.len);
	buf_free(&ci);
	return ok;
}

bool
backup_restore(const char *dir, bool force, struct backup_stats *stats,
	       char *detail, size_t dlen)
{
	char dump[PATH_MAX], objects[PATH_MAX];
	struct target t;
	struct stat sb;
	bool ok = false, has = false, empty = true;

	if (!target_init(&t, stats, detail, dlen))
		goto out;
	if (!paths(dir, dump, objects, detail, dlen))
		goto out;
	if (stat(dump, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		snprintf(detail, dlen, "%s: no backup there (no " DUMP_NAME ")",
			 dir);
		goto out;
	}
	if (!db_has_tables((const char *)t.ci.p, (const char *)t.pw.p, &has,
			   detail, dlen) ||
	    (!stats->s3 && !tree_empty(t.store_dir, &empty, detail, dlen)))
		goto out;
	if (!force && (has || !empty)) {
		snprintf(detail, dlen,
			 "the %s is not empty (--force replaces what the "
			 "backup holds)",
			 has ? "database" : "object store");
		goto out;
	}
	{
		char *argv[12] = {"pg_restore",		  "--no-owner",
				  "--no-privileges",	  "--exit-on-error",
				  "--single-transaction", "--dbname",
				  (char *)t.ci.p};
		size_t k = 7;

		/* Forced over a database with tables: the dump's own are
		 * dropped first. */
		if (has) {
			argv[k++] = "--clean";
			argv[k++] = "--if-exists";
		}
		argv[k++] = dump;
		argv[k] = NULL;
		if (!spawn_pg(argv, (const char *)t.pw.p, detail, dlen))
			goto out;
	}
	ok = stats->s3 || stat(objects, &sb) != 0 ||
	     tree_put(objects, t.store_dir, force, stats, detail, dlen);
out:
	target_free(&t);
	return ok;
}
