/* SPDX-License-Identifier: MIT */
/*
 * storage_fs.c - the filesystem back end of lib/store/storage: each object is
 * the file ROOT/KEY.
 *
 * A put writes ROOT/KEY.tmp~XXXXXX in the object's directory ('~' is no
 * key character, so no key names a temporary file), then fsync, rename
 * onto ROOT/KEY and fsync of the directory: after a crash the final name
 * holds the old object or the whole new one, never part of one.  ROOT
 * itself is never created here: a missing store is an error, not an
 * empty store.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/fdio.h"
#include "store/storage_be.h"

/* Room left in a path for the temporary suffix. */
#define TMP_SUFFIX ".tmp~XXXXXX"

struct fs_store {
	struct store base;
	mode_t file_mode; /* 0666 less the umask, as open(2) would give */
	char root[PATH_MAX];
};

struct fs_put {
	struct store_put base;
	int fd;
	char path[PATH_MAX], tmp[PATH_MAX];
};

static const struct store_ops fs_ops;

/* ROOT/KEY into out; false when it does not fit with a temporary suffix. */
static bool
fs_path(const struct fs_store *fs, const char *key, char *out, size_t len)
{
	int n = snprintf(out, len, "%s/%s", fs->root, key);

	return n >= 0 && (size_t)n + sizeof(TMP_SUFFIX) <= len;
}

/* fsync of the directory path (its entries become durable). */
static bool
sync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = fsync(fd) == 0;
	close(fd);
	return ok;
}

/*
 * Creates the directories of key below the root (never the root), each
 * made durable in its parent.  False with errno set.
 */
static bool
make_dirs(const struct fs_store *fs, const char *key)
{
	char path[PATH_MAX];

	for (const char *p = strchr(key, '/'); p != NULL;
	     p = strchr(p + 1, '/')) {
		int n = snprintf(path, sizeof(path), "%s/%.*s", fs->root,
				 (int)(p - key), key);

		if (n < 0 || (size_t)n >= sizeof(path)) {
			errno = ENAMETOOLONG;
			return false;
		}
		if (mkdir(path, 0777) == 0) {
			*strrchr(path, '/') = '\0';
			if (!sync_dir(path))
				return false;
		} else if (errno != EEXIST) {
			return false;
		}
	}
	return true;
}

struct store *
store_fs_open(const char *dir, char *detail, size_t dlen)
{
	struct fs_store *fs;
	char cwd[PATH_MAX];
	mode_t mask;
	size_t n;
	int len;

	if ((fs = calloc(1, sizeof(*fs))) == NULL) {
		store_detail(detail, dlen, "out of memory");
		return NULL;
	}
	fs->base.ops = &fs_ops;
	if (dir[0] == '/')
		len = snprintf(fs->root, sizeof(fs->root), "%s", dir);
	else if (getcwd(cwd, sizeof(cwd)) != NULL)
		len = snprintf(fs->root, sizeof(fs->root), "%s/%s", cwd, dir);
	else
		len = -1;
	/* Room for a whole key and a temporary suffix after the root. */
	if (len < 0 ||
	    (size_t)len + 1 + 512 + sizeof(TMP_SUFFIX) > sizeof(fs->root)) {
		store_detail(detail, dlen,
			     "XMHUB_STORAGE_DIR: path too long or no "
			     "current directory");
		free(fs);
		return NULL;
	}
	for (n = strlen(fs->root); n > 1 && fs->root[n - 1] == '/'; n--)
		fs->root[n - 1] = '\0';
	/* Reading the umask sets it: put it back at once. */
	mask = umask(0);
	umask(mask);
	fs->file_mode = 0666 & ~mask;
	return &fs->base;
}

static void
fs_close(struct store *st)
{
	free(st);
}

static struct store_put *
fs_put_begin(struct store *st, const char *key, const char *content_type,
	     char *detail, size_t dlen)
{
	struct fs_store *fs = (struct fs_store *)st;
	struct fs_put *w;

	(void)content_type; /* a file has none; the database keeps it */
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		store_detail(detail, dlen, "out of memory");
		return NULL;
	}
	w->base.st = st;
	w->fd = -1;
	if (!fs_path(fs, key, w->path, sizeof(w->path)) ||
	    snprintf(w->tmp, sizeof(w->tmp), "%s" TMP_SUFFIX, w->path) >=
		    (int)sizeof(w->tmp)) {
		store_detail(detail, dlen, "object path too long");
		goto fail;
	}
	if (!make_dirs(fs, key) || (w->fd = mkstemp(w->tmp)) < 0) {
		store_detail(detail, dlen, "cannot create the object: %s",
			     strerror(errno));
		goto fail;
	}
	if (fcntl(w->fd, F_SETFD, FD_CLOEXEC) != 0 ||
	    fchmod(w->fd, fs->file_mode) != 0) {
		store_detail(detail, dlen, "cannot set up the object: %s",
			     strerror(errno));
		close(w->fd);
		unlink(w->tmp);
		goto fail;
	}
	return &w->base;
fail:
	free(w);
	return NULL;
}

static enum store_status
fs_put_write(struct store_put *base, const void *p, size_t n)
{
	struct fs_put *w = (struct fs_put *)base;

	return fdio_write_full(w->fd, p, n) ? STORE_OK : STORE_ERROR;
}

static void
fs_put_abort(struct store_put *base)
{
	struct fs_put *w = (struct fs_put *)base;

	if (w->fd >= 0)
		close(w->fd);
	unlink(w->tmp);
	free(w);
}

static enum store_status
fs_put_commit(struct store_put *base, char *detail, size_t dlen)
{
	struct fs_put *w = (struct fs_put *)base;
	char *slash;
	int fd = w->fd;

	w->fd = -1;
	if (fsync(fd) != 0) {
		store_detail(detail, dlen, "cannot sync the object: %s",
			     strerror(errno));
		close(fd);
		goto fail;
	}
	if (close(fd) != 0 || rename(w->tmp, w->path) != 0) {
		store_detail(detail, dlen, "cannot store the object: %s",
			     strerror(errno));
		goto fail;
	}
	slash = strrchr(w->path, '/');
	*slash = '\0';
	if (!sync_dir(w->path)) {
		/* The object is in place; only its durability is unsure. */
		store_detail(detail, dlen, "cannot sync the directory: %s",
			     strerror(errno));
		free(w);
		return STORE_ERROR;
	}
	free(w);
	return STORE_OK;
fail:
	fs_put_abort(base);
	return STORE_ERROR;
}

/* Opens key for reading: STORE_NOT_FOUND unless a regular file. */
static enum store_status
open_object(const struct fs_store *fs, const char *key, int *fd,
	    struct stat *sb, char *detail, size_t dlen)
{
	char path[PATH_MAX];

	*fd = -1;
	if (!fs_path(fs, key, path, sizeof(path))) {
		store_detail(detail, dlen, "object path too long");
		return STORE_ERROR;
	}
	if ((*fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return STORE_NOT_FOUND;
		store_detail(detail, dlen, "cannot open the object: %s",
			     strerror(errno));
		return STORE_ERROR;
	}
	if (fstat(*fd, sb) != 0 || !S_ISREG(sb->st_mode)) {
		close(*fd);
		*fd = -1;
		return STORE_NOT_FOUND;
	}
	return STORE_OK;
}

static enum store_status
fs_get(struct store *st, const char *key, uint64_t off, uint64_t len,
       int (*sink)(void *arg, const void *p, size_t n), void *arg, char *detail,
       size_t dlen)
{
	struct stat sb;
	enum store_status s;
	uint64_t end;
	char *piece = NULL;
	int fd;

	if ((s = open_object((struct fs_store *)st, key, &fd, &sb, detail,
			     dlen)) != STORE_OK)
		return s;
	end = off + len < (uint64_t)sb.st_size ? off + len
					       : (uint64_t)sb.st_size;
	if (off < end && (piece = malloc(STORE_PIECE)) == NULL) {
		store_detail(detail, dlen, "out of memory");
		s = STORE_ERROR;
		goto out;
	}
	while (off < end) {
		size_t want = end - off < STORE_PIECE ? (size_t)(end - off)
						      : STORE_PIECE;
		ssize_t n = pread(fd, piece, want, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* n == 0: the file shrank, which a committed object
			 * never does; say so rather than return less. */
			store_detail(detail, dlen, "cannot read the object: %s",
				     n < 0 ? strerror(errno) : "truncated");
			s = STORE_ERROR;
			goto out;
		}
		if (sink(arg, piece, (size_t)n) != 0) {
			store_detail(detail, dlen, "reading stopped");
			s = STORE_ERROR;
			goto out;
		}
		off += (uint64_t)n;
	}
out:
	free(piece);
	close(fd);
	return s;
}

static enum store_status
fs_size(struct store *st, const char *key, uint64_t *size, char *detail,
	size_t dlen)
{
	struct stat sb;
	enum store_status s;
	int fd;

	if ((s = open_object((struct fs_store *)st, key, &fd, &sb, detail,
			     dlen)) != STORE_OK)
		return s;
	*size = (uint64_t)sb.st_size;
	close(fd);
	return STORE_OK;
}

static enum store_status
fs_del(struct store *st, const char *key, char *detail, size_t dlen)
{
	char path[PATH_MAX];

	if (!fs_path((struct fs_store *)st, key, path, sizeof(path))) {
		store_detail(detail, dlen, "object path too long");
		return STORE_ERROR;
	}
	/* A directory (EISDIR, or EPERM elsewhere) is no object either. */
	if (unlink(path) != 0 && errno != ENOENT && errno != ENOTDIR &&
	    errno != EISDIR) {
		store_detail(detail, dlen, "cannot delete the object: %s",
			     strerror(errno));
		return STORE_ERROR;
	}
	return STORE_OK;
}

/*
 * Removes everything in the directory dfd (which it closes), not
 * following symbolic links.  False with errno set.
 */
static bool
remove_tree(int dfd)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;
	bool ok = true;

	if (d == NULL) {
		close(dfd);
		return false;
	}
	while (ok && (errno = 0, e = readdir(d)) != NULL) {
		int sub;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		sub = openat(dirfd(d), e->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0)
			ok = remove_tree(sub) &&
			     unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) == 0;
		else if (errno == ENOTDIR || errno == ELOOP)
			ok = unlinkat(dirfd(d), e->d_name, 0) == 0 ||
			     errno == ENOENT;
		else
			ok = errno == ENOENT; /* gone meanwhile */
	}
	if (ok && errno != 0)
		ok = false;
	closedir(d);
	return ok;
}

static enum store_status
fs_del_prefix(struct store *st, const char *prefix, char *detail, size_t dlen)
{
	char path[PATH_MAX];
	int fd;

	if (!fs_path((struct fs_store *)st, prefix, path, sizeof(path))) {
		store_detail(detail, dlen, "object path too long");
		return STORE_ERROR;
	}
	path[strlen(path) - 1] = '\0'; /* the prefix's '/' */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
		return STORE_OK; /* nothing under the prefix */
	if (fd < 0 || !remove_tree(fd) || rmdir(path) != 0) {
		store_detail(detail, dlen, "cannot delete the objects: %s",
			     strerror(errno));
		return STORE_ERROR;
	}
	return STORE_OK;
}

static bool
fs_local_path(const struct store *st, const char *key, char *path, size_t len)
{
	int n = snprintf(path, len, "%s/%s",
			 ((const struct fs_store *)st)->root, key);

	return n >= 0 && (size_t)n < len;
}

static bool
fs_presign_get(struct store *st, const char *key, unsigned expires_s, char *url,
	       size_t len)
{
	(void)st, (void)key, (void)expires_s, (void)url, (void)len;
	return false;
}

static bool
fs_free_bytes(const struct store *st, uint64_t *bytes)
{
	const struct fs_store *fs = (const struct fs_store *)st;
	struct statvfs v;

	if (statvfs(fs->root, &v) != 0)
		return false;
	*bytes = (uint64_t)v.f_bavail * v.f_frsize;
	return true;
}

static const struct store_ops fs_ops = {
	.is_fs = true,
	.close = fs_close,
	.put_begin = fs_put_begin,
	.put_write = fs_put_write,
	.put_commit = fs_put_commit,
	.put_abort = fs_put_abort,
	.get = fs_get,
	.size = fs_size,
	.del = fs_del,
	.del_prefix = fs_del_prefix,
	.local_path = fs_local_path,
	.presign_get = fs_presign_get,
	.free_bytes = fs_free_bytes,
};
