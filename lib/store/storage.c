/* SPDX-License-Identifier: MIT */
/*
 * storage.c - the object store's entry points: settings, key checks,
 * dispatch to the back end, and what every back end shares (see
 * storage.h; back ends in storage_fs.c and storage_s3.c).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/conf.h"
#include "core/fdio.h"
#include "store/storage_be.h"

#define KEY_MAX 512
#define PROBE "store-check"

struct store *
store_open_env(char *detail, size_t dlen)
{
	struct store_s3_conf c;
	long long page;

	if ((c.endpoint = conf_get("XMHUB_S3_ENDPOINT")) == NULL) {
		/* Unset: settings.def's default under localstatedir (a
		 * package creates it; the readiness check reports a missing
		 * root). */
		return store_fs_open(conf_get("XMHUB_STORAGE_DIR"), detail,
				     dlen);
	}
	c.bucket = conf_get("XMHUB_S3_BUCKET");
	c.access_key = conf_get("XMHUB_S3_ACCESS_KEY");
	c.secret_key = conf_get("XMHUB_S3_SECRET_KEY");
	c.region = conf_get("XMHUB_S3_REGION");
	c.tmp_dir = conf_str("XMHUB_TMP_DIR", conf_str("TMPDIR", "/tmp"));
	if (c.bucket == NULL || c.access_key == NULL || c.secret_key == NULL) {
		store_detail(detail, dlen,
			     "XMHUB_S3_ENDPOINT is set: XMHUB_S3_BUCKET, "
			     "XMHUB_S3_ACCESS_KEY and XMHUB_S3_SECRET_KEY "
			     "must be set too");
		return NULL;
	}
	if (!conf_get_int("XMHUB_S3_PAGE_KEYS", &page)) {
		store_detail(detail, dlen,
			     "XMHUB_S3_PAGE_KEYS must be an integer from 1 "
			     "to 1000");
		return NULL;
	}
	c.page_keys = (long)page;
	return store_s3_open(&c, detail, dlen);
}

void
store_close(struct store *st)
{
	if (st != NULL)
		st->ops->close(st);
}

bool
store_is_fs(const struct store *st)
{
	return st->ops->is_fs;
}

/* True for [A-Za-z0-9._-]. */
static bool
key_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

bool
store_key_valid(const char *key)
{
	size_t n = strnlen(key, KEY_MAX + 1);
	const char *seg = key;

	if (n == 0 || n > KEY_MAX)
		return false;
	for (const char *p = key;; p++) {
		if (*p == '/' || *p == '\0') {
			size_t len = (size_t)(p - seg);

			if (len == 0 || (len == 1 && seg[0] == '.') ||
			    (len == 2 && seg[0] == '.' && seg[1] == '.'))
				return false;
			if (*p == '\0')
				return true;
			seg = p + 1;
		} else if (!key_char(*p)) {
			return false;
		}
	}
}

/* False + detail when key is not a valid key. */
static bool
check_key(const char *key, char *detail, size_t dlen)
{
	if (key != NULL && store_key_valid(key))
		return true;
	store_detail(detail, dlen,
		     "invalid object key (segments of [A-Za-z0-9._-] "
		     "separated by '/', at most %d bytes)",
		     KEY_MAX);
	return false;
}

struct store_put *
store_put_begin(struct store *st, const char *key, const char *content_type,
		char *detail, size_t dlen)
{
	if (!check_key(key, detail, dlen))
		return NULL;
	return st->ops->put_begin(st, key,
				  content_type != NULL
					  ? content_type
					  : "application/octet-stream",
				  detail, dlen);
}

enum store_status
store_put_write(struct store_put *w, const void *p, size_t n)
{
	if (w->failed)
		return STORE_ERROR;
	if (n == 0)
		return STORE_OK;
	if (w->st->ops->put_write(w, p, n) != STORE_OK) {
		w->failed = true;
		return STORE_ERROR;
	}
	return STORE_OK;
}

enum store_status
store_put_commit(struct store_put *w, char *detail, size_t dlen)
{
	if (w->failed) {
		store_detail(detail, dlen, "a write to the object failed");
		w->st->ops->put_abort(w);
		return STORE_ERROR;
	}
	return w->st->ops->put_commit(w, detail, dlen);
}

void
store_put_abort(struct store_put *w)
{
	if (w != NULL)
		w->st->ops->put_abort(w);
}

enum store_status
store_put_buf(struct store *st, const char *key, const void *p, size_t n,
	      const char *content_type, char *detail, size_t dlen)
{
	struct store_put *w;

	if ((w = store_put_begin(st, key, content_type, detail, dlen)) == NULL)
		return STORE_ERROR;
	if (store_put_write(w, p, n) != STORE_OK) {
		store_detail(detail, dlen, "cannot write the object");
		store_put_abort(w);
		return STORE_ERROR;
	}
	return store_put_commit(w, detail, dlen);
}

enum store_status
store_get(struct store *st, const char *key, uint64_t off, uint64_t len,
	  int (*sink)(void *arg, const void *p, size_t n), void *arg,
	  char *detail, size_t dlen)
{
	uint64_t size;

	if (!check_key(key, detail, dlen))
		return STORE_ERROR;
	if (len > UINT64_MAX - off)
		len = UINT64_MAX - off;
	/* Nothing to read: the answer is only whether the object exists. */
	if (len == 0)
		return store_size(st, key, &size, detail, dlen);
	return st->ops->get(st, key, off, len, sink, arg, detail, dlen);
}

struct to_buf {
	struct buf *out;
	size_t room; /* bytes still allowed */
	bool too_big;
};

static int
to_buf_sink(void *arg, const void *p, size_t n)
{
	struct to_buf *t = arg;

	if (n > t->room) {
		t->too_big = true;
		return 1;
	}
	t->room -= n;
	buf_append(t->out, p, n);
	return t->out->failed ? 1 : 0;
}

enum store_status
store_get_buf(struct store *st, const char *key, size_t max, struct buf *out,
	      char *detail, size_t dlen)
{
	struct to_buf t = {out, max, false};
	enum store_status s;

	s = store_get(st, key, 0, UINT64_MAX, to_buf_sink, &t, detail, dlen);
	if (t.too_big)
		store_detail(detail, dlen,
			     "object larger than %zu bytes refused", max);
	else if (s == STORE_ERROR && out->failed)
		store_detail(detail, dlen, "out of memory reading the object");
	return s;
}

struct to_fd {
	int fd;
	bool failed;
};

/* Writes all n bytes to the file. */
static int
to_fd_sink(void *arg, const void *p, size_t n)
{
	struct to_fd *t = arg;

	if (!fdio_write_full(t->fd, p, n)) {
		t->failed = true;
		return 1;
	}
	return 0;
}

enum store_status
store_get_file(struct store *st, const char *key, const char *path,
	       char *detail, size_t dlen)
{
	char tmp[PATH_MAX];
	enum store_status s;
	struct to_fd t = {-1, false};

	/* '~' is no key character: the temporary name is nobody's key. */
	if (snprintf(tmp, sizeof(tmp), "%s.tmp~XXXXXX", path) >=
	    (int)sizeof(tmp)) {
		store_detail(detail, dlen, "local path too long");
		return STORE_ERROR;
	}
	if ((t.fd = mkstemp(tmp)) < 0) {
		store_detail(detail, dlen, "cannot create a local file: %s",
			     strerror(errno));
		return STORE_ERROR;
	}
	s = store_get(st, key, 0, UINT64_MAX, to_fd_sink, &t, detail, dlen);
	if (t.failed)
		store_detail(detail, dlen, "cannot write the local file: %s",
			     strerror(errno));
	if (close(t.fd) != 0 && s == STORE_OK) {
		store_detail(detail, dlen, "cannot write the local file: %s",
			     strerror(errno));
		s = STORE_ERROR;
	}
	if (s == STORE_OK && rename(tmp, path) != 0) {
		store_detail(detail, dlen, "cannot rename the local file: %s",
			     strerror(errno));
		s = STORE_ERROR;
	}
	if (s != STORE_OK)
		unlink(tmp);
	return s;
}

enum store_status
store_size(struct store *st, const char *key, uint64_t *size, char *detail,
	   size_t dlen)
{
	if (!check_key(key, detail, dlen))
		return STORE_ERROR;
	return st->ops->size(st, key, size, detail, dlen);
}

enum store_status
store_delete(struct store *st, const char *key, char *detail, size_t dlen)
{
	if (!check_key(key, detail, dlen))
		return STORE_ERROR;
	return st->ops->del(st, key, detail, dlen);
}

enum store_status
store_delete_prefix(struct store *st, const char *prefix, char *detail,
		    size_t dlen)
{
	char key[KEY_MAX + 1];
	size_t n = prefix != NULL ? strnlen(prefix, KEY_MAX + 2) : 0;

	/* The prefix without its '/' must be a key. */
	if (n < 2 || n > KEY_MAX + 1 || prefix[n - 1] != '/') {
		store_detail(detail, dlen,
			     "invalid prefix (a key followed by '/')");
		return STORE_ERROR;
	}
	memcpy(key, prefix, n - 1);
	key[n - 1] = '\0';
	if (!check_key(key, detail, dlen))
		return STORE_ERROR;
	return st->ops->del_prefix(st, prefix, detail, dlen);
}

bool
store_local_path(const struct store *st, const char *key, char *path,
		 size_t len)
{
	if (key == NULL || !store_key_valid(key))
		return false;
	return st->ops->local_path(st, key, path, len);
}

bool
store_presign_get(struct store *st, const char *key, unsigned expires_s,
		  char *url, size_t len)
{
	if (key == NULL || !store_key_valid(key) || expires_s < 1 ||
	    expires_s > 604800)
		return false;
	return st->ops->presign_get(st, key, expires_s, url, len);
}

bool
store_free_bytes(const struct store *st, uint64_t *bytes)
{
	return st->ops->free_bytes != NULL && st->ops->free_bytes(st, bytes);
}

enum store_status
store_check(struct store *st, char *detail, size_t dlen)
{
	char key[64], msg[128];
	struct buf b;
	enum store_status s;

	/* One probe per process: concurrent checks of several programs do
	 * not delete each other's probe. */
	snprintf(key, sizeof(key), ".health/probe-%ld", (long)getpid());
	if (store_put_buf(st, key, PROBE, strlen(PROBE), "text/plain", msg,
			  sizeof(msg)) != STORE_OK) {
		store_detail(detail, dlen,
			     "the object store takes no write: %s", msg);
		return STORE_ERROR;
	}
	buf_init(&b, 0);
	s = store_get_buf(st, key, 64, &b, msg, sizeof(msg));
	if (s == STORE_OK &&
	    (b.len != strlen(PROBE) || memcmp(b.p, PROBE, b.len) != 0)) {
		snprintf(msg, sizeof(msg), "wrong bytes read back");
		s = STORE_ERROR;
	}
	buf_free(&b);
	if (s != STORE_OK) {
		store_detail(detail, dlen,
			     "the object store reads back no "
			     "probe: %s",
			     s == STORE_NOT_FOUND ? "not found" : msg);
		return STORE_ERROR;
	}
	if (store_delete(st, key, msg, sizeof(msg)) != STORE_OK) {
		store_detail(detail, dlen,
			     "the object store deletes nothing: %s", msg);
		return STORE_ERROR;
	}
	return STORE_OK;
}
