/* SPDX-License-Identifier: MIT */
/*
 * t/unit/storage.c - lib/store/storage: settings, keys and the filesystem back end.
 *
 * The S3 back end runs the same operations end to end against a real
 * S3 server in t/e2e/storage-s3.t (through t/e2e/storage-drv.c).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/storage.h"
#include "tap.h"
#include "testutil.h"

static char root[PATH_MAX];

/* A sink appending to the struct buf in arg. */
static int
collect(void *arg, const void *p, size_t n)
{
	buf_append(arg, p, n);
	return 0;
}

/* A sink that stops at once. */
static int
stop(void *arg, const void *p, size_t n)
{
	(void)arg, (void)p, (void)n;
	return 1;
}

/* Counts the files under dir, recursively; removes them and dir too when
 * remove is set. */
static int
walk(const char *dir, bool remove)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (d == NULL) {
		if (remove)
			unlink(dir);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		char p[PATH_MAX];
		struct stat sb;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			n += walk(p, remove);
		} else {
			n++;
			if (remove)
				unlink(p);
		}
	}
	closedir(d);
	if (remove)
		rmdir(dir);
	return n;
}

/* Bytes [off, off+len) of key, or "(status N)". */
static enum store_status
range(struct store *st, const char *key, uint64_t off, uint64_t len,
      struct buf *out)
{
	char detail[200];

	buf_free(out);
	return store_get(st, key, off, len, collect, out, detail,
			 sizeof(detail));
}

static void
test_settings(void)
{
	char d[200], url[1024];
	struct store *st;

	unsetenv("XMHUB_S3_ENDPOINT");
	unsetenv("XMHUB_STORAGE_DIR");
	st = store_open_env(d, sizeof(d));
	ok(st != NULL && store_is_fs(st),
	   "no setting: the filesystem store at settings.def's default");
	store_close(st);
	setenv("XMHUB_S3_ENDPOINT", "http://127.0.0.1:9/", 1);
	ok(store_open_env(d, sizeof(d)) == NULL && strstr(d, "XMHUB_S3_BUCKET"),
	   "S3 without a bucket: refused");
	setenv("XMHUB_S3_BUCKET", "xmhub-t", 1);
	setenv("XMHUB_S3_ACCESS_KEY", "AK", 1);
	setenv("XMHUB_S3_SECRET_KEY", "SK", 1);
	setenv("XMHUB_S3_PAGE_KEYS", "0", 1);
	ok(store_open_env(d, sizeof(d)) == NULL &&
		   strstr(d, "XMHUB_S3_PAGE_KEYS"),
	   "S3 page size out of range: refused");
	unsetenv("XMHUB_S3_PAGE_KEYS");
	setenv("XMHUB_S3_BUCKET", "Bad_Bucket", 1);
	ok(store_open_env(d, sizeof(d)) == NULL, "bad bucket name refused");
	setenv("XMHUB_S3_BUCKET", "xmhub-t", 1);
	setenv("XMHUB_S3_ENDPOINT", "ftp://127.0.0.1:9", 1);
	ok(store_open_env(d, sizeof(d)) == NULL &&
		   strstr(d, "XMHUB_S3_ENDPOINT"),
	   "non-HTTP endpoint refused");
	setenv("XMHUB_S3_ENDPOINT", "http://127.0.0.1:9/", 1);
	st = store_open_env(d, sizeof(d));
	if (!ok(st != NULL, "S3 settings accepted"))
		diag("%s", d);
	if (st == NULL)
		return;
	ok(!store_is_fs(st), "S3: not the filesystem");
	ok(!store_local_path(st, "a/b", url, sizeof(url)), "S3: no local path");
	ok(store_presign_get(st, "a/b.webm", 300, url, sizeof(url)) &&
		   strncmp(url, "http://127.0.0.1:9/xmhub-t/a/b.webm?", 36) ==
			   0 &&
		   strstr(url, "X-Amz-Expires=300&") != NULL &&
		   strstr(url, "X-Amz-Credential=AK%2F") != NULL,
	   "S3: presigned URL, path style, trailing '/' of the endpoint "
	   "dropped");
	ok(!store_presign_get(st, "a/b", 0, url, sizeof(url)) &&
		   !store_presign_get(st, "a/b", 604801, url, sizeof(url)) &&
		   !store_presign_get(st, "a/../b", 60, url, sizeof(url)) &&
		   !store_presign_get(st, "a/b", 60, url, 20),
	   "S3: presign refuses a bad expiry, a bad key, a short buffer");
	store_close(st);
	unsetenv("XMHUB_S3_ENDPOINT");
}

static void
test_keys(void)
{
	static const char *bad[] = {
		"",	     "/a",  "a/",    "a//b", ".",    "..",
		"a/..",	     "./a", "a/./b", "a b",  "a\\b", "a~",
		"a\xc3\xa9", "a?b", "a%2Fb", "a\nb", "a/b/", "a:b",
	};
	static const char *good[] = {"a",	".a",		"a..b",
				     "a/b/c.d", "F-1_2/x.webm", "..."};
	char big[600];
	bool all = true;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (store_key_valid(bad[i])) {
			diag("accepted: \"%s\"", bad[i]);
			all = false;
		}
	ok(all, "bad keys refused");
	all = true;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!store_key_valid(good[i])) {
			diag("refused: \"%s\"", good[i]);
			all = false;
		}
	ok(all, "good keys accepted");
	memset(big, 'a', sizeof(big));
	for (size_t i = 100; i < 512; i += 100)
		big[i] = '/';
	big[512] = '\0';
	ok(store_key_valid(big), "512-byte key accepted");
	big[512] = 'a';
	big[513] = '\0';
	ok(!store_key_valid(big), "513-byte key refused");
}

static void
test_fs(void)
{
	char d[200], path[PATH_MAX], tmpl[PATH_MAX + 8];
	struct store *st;
	struct store_put *w;
	struct buf b;
	uint8_t *data;
	size_t n = 300 * 1024 + 7; /* several read pieces, odd tail */
	uint64_t size = 0;
	struct stat sb;

	snprintf(root, sizeof(root), "%s/xmhub-storage-XXXXXX",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(root) == NULL) {
		ok(false, "mkdtemp: %s", strerror(errno));
		return;
	}
	setenv("XMHUB_STORAGE_DIR", root, 1);
	st = store_open_env(d, sizeof(d));
	if (!ok(st != NULL && store_is_fs(st), "filesystem store opens"))
		return;
	buf_init(&b, 0);
	data = malloc(n);
	rnd_seed(42);
	for (size_t i = 0; i < n; i++)
		data[i] = (uint8_t)rnd();

	/* Refused keys never reach the disk. */
	ok(store_put_begin(st, "a/../../x", NULL, d, sizeof(d)) == NULL &&
		   strstr(d, "invalid object key") != NULL,
	   "put of a bad key refused with a detail");
	ok(store_get(st, "../x", 0, UINT64_MAX, collect, &b, d, sizeof(d)) ==
			   STORE_ERROR &&
		   store_size(st, "/etc/passwd", &size, d, sizeof(d)) ==
			   STORE_ERROR &&
		   store_delete(st, "a/..", d, sizeof(d)) == STORE_ERROR,
	   "get, size, delete of bad keys refused");

	/* Abort leaves nothing; an open put is invisible. */
	w = store_put_begin(st, "f1/uploads/u1/original", "audio/wav", d,
			    sizeof(d));
	ok(w != NULL && store_put_write(w, data, 1000) == STORE_OK,
	   "put begins and takes bytes");
	is_int(store_size(st, "f1/uploads/u1/original", &size, d, sizeof(d)),
	       STORE_NOT_FOUND, "an uncommitted object is not there");
	store_put_abort(w);
	is_int(walk(root, false), 0, "abort leaves no file behind");

	/* Round trip, byte for byte. */
	w = store_put_begin(st, "f1/uploads/u1/original", "audio/wav", d,
			    sizeof(d));
	for (size_t off = 0; w != NULL && off < n; off += 4099)
		store_put_write(w, data + off, n - off < 4099 ? n - off : 4099);
	ok(w != NULL && store_put_commit(w, d, sizeof(d)) == STORE_OK,
	   "put commits");
	is_int(walk(root, false), 1, "exactly one file: no temporary left");
	ok(store_size(st, "f1/uploads/u1/original", &size, d, sizeof(d)) ==
			   STORE_OK &&
		   size == n,
	   "size is right");
	ok(store_get_buf(st, "f1/uploads/u1/original", n, &b, d, sizeof(d)) ==
			   STORE_OK &&
		   b.len == n && memcmp(b.p, data, n) == 0,
	   "read back byte-identical");
	buf_free(&b);
	ok(store_get_buf(st, "f1/uploads/u1/original", n - 1, &b, d,
			 sizeof(d)) == STORE_ERROR &&
		   strstr(d, "larger") != NULL,
	   "get_buf refuses more than max");
	buf_free(&b);

	/* Ranges. */
	ok(range(st, "f1/uploads/u1/original", 0, 10, &b) == STORE_OK &&
		   b.len == 10 && memcmp(b.p, data, 10) == 0,
	   "range: first 10 bytes");
	ok(range(st, "f1/uploads/u1/original", 70000, 100000, &b) == STORE_OK &&
		   b.len == 100000 && memcmp(b.p, data + 70000, 100000) == 0,
	   "range: across read pieces");
	ok(range(st, "f1/uploads/u1/original", n - 1, 1, &b) == STORE_OK &&
		   b.len == 1 && b.p[0] == data[n - 1],
	   "range: last byte");
	ok(range(st, "f1/uploads/u1/original", n - 5, 100, &b) == STORE_OK &&
		   b.len == 5 && memcmp(b.p, data + n - 5, 5) == 0,
	   "range: past the end clipped");
	ok(range(st, "f1/uploads/u1/original", 123, UINT64_MAX, &b) ==
			   STORE_OK &&
		   b.len == n - 123 && memcmp(b.p, data + 123, n - 123) == 0,
	   "range: to the end");
	ok(range(st, "f1/uploads/u1/original", n, 10, &b) == STORE_OK &&
		   b.len == 0,
	   "range: at the end gives nothing");
	ok(range(st, "f1/uploads/u1/original", UINT64_MAX - 1, UINT64_MAX,
		 &b) == STORE_OK &&
		   b.len == 0,
	   "range: huge offset and length, no overflow");
	ok(range(st, "f1/uploads/u1/original", 5, 0, &b) == STORE_OK &&
		   b.len == 0,
	   "range: zero length");
	is_int(range(st, "f1/uploads/u1/nothing", 5, 0, &b), STORE_NOT_FOUND,
	       "range: zero length of a missing object is not found");
	is_int(range(st, "f1/uploads/u1/nothing", 0, UINT64_MAX, &b),
	       STORE_NOT_FOUND, "get of a missing object: not found");
	is_int(range(st, "f1/uploads/u1", 0, UINT64_MAX, &b), STORE_NOT_FOUND,
	       "a key naming a directory is not found");
	ok(store_get(st, "f1/uploads/u1/original", 0, UINT64_MAX, stop, NULL, d,
		     sizeof(d)) == STORE_ERROR,
	   "a sink that stops makes STORE_ERROR");
	buf_free(&b);

	/* Replace; empty object. */
	ok(store_put_buf(st, "f1/uploads/u1/original", "new", 3, NULL, d,
			 sizeof(d)) == STORE_OK &&
		   store_get_buf(st, "f1/uploads/u1/original", 100, &b, d,
				 sizeof(d)) == STORE_OK &&
		   b.len == 3 && memcmp(b.p, "new", 3) == 0,
	   "a second put replaces the object");
	buf_free(&b);
	ok(store_put_buf(st, "f1/empty", "", 0, NULL, d, sizeof(d)) ==
			   STORE_OK &&
		   store_size(st, "f1/empty", &size, d, sizeof(d)) ==
			   STORE_OK &&
		   size == 0 &&
		   range(st, "f1/empty", 0, UINT64_MAX, &b) == STORE_OK &&
		   b.len == 0,
	   "an empty object");
	buf_free(&b);
	ok(store_put_begin(st, "f1/empty/below", NULL, d, sizeof(d)) == NULL,
	   "a key below an object's key is refused on the filesystem");

	/* Local path and local copy. */
	ok(store_local_path(st, "f1/uploads/u1/original", path, sizeof(path)) &&
		   strncmp(path, root, strlen(root)) == 0 &&
		   strcmp(path + strlen(root), "/f1/uploads/u1/original") == 0,
	   "local path is ROOT/KEY");
	ok(stat(path, &sb) == 0 && sb.st_size == 3,
	   "the local path is the file");
	ok(!store_local_path(st, "a/../b", path, sizeof(path)) &&
		   !store_local_path(st, "a", path, 4),
	   "local path: bad key or short buffer refused");
	snprintf(tmpl, sizeof(tmpl), "%s-copy", root);
	ok(store_put_buf(st, "f1/big", data, n, NULL, d, sizeof(d)) ==
			   STORE_OK &&
		   store_put_buf(st, "f1/small", "x", 1, NULL, d, sizeof(d)) ==
			   STORE_OK,
	   "two more objects");
	ok(store_get_file(st, "f1/big", tmpl, d, sizeof(d)) == STORE_OK &&
		   store_get_file(st, "f1/small", tmpl, d, sizeof(d)) ==
			   STORE_OK &&
		   stat(tmpl, &sb) == 0 && sb.st_size == 1 &&
		   (sb.st_mode & 0777) == 0600,
	   "get_file copies, replaces, mode 0600");
	is_int(store_get_file(st, "f1/none", tmpl, d, sizeof(d)),
	       STORE_NOT_FOUND, "get_file of a missing object: not found");
	ok(stat(tmpl, &sb) == 0 && sb.st_size == 1,
	   "a failed get_file leaves the old file alone");
	unlink(tmpl);

	/* Delete, delete_prefix. */
	ok(store_delete(st, "f1/small", d, sizeof(d)) == STORE_OK &&
		   store_size(st, "f1/small", &size, d, sizeof(d)) ==
			   STORE_NOT_FOUND,
	   "delete removes");
	ok(store_delete(st, "f1/small", d, sizeof(d)) == STORE_OK &&
		   store_delete(st, "nowhere/x", d, sizeof(d)) == STORE_OK,
	   "deleting a missing object is fine");
	ok(store_put_buf(st, "f1/ingest/s/0/c.xmch", "c", 1, NULL, d,
			 sizeof(d)) == STORE_OK &&
		   store_put_buf(st, "f10/keep", "k", 1, NULL, d, sizeof(d)) ==
			   STORE_OK,
	   "objects under f1/ and f10/");
	ok(store_delete_prefix(st, "f1", d, sizeof(d)) == STORE_ERROR &&
		   store_delete_prefix(st, "/", d, sizeof(d)) == STORE_ERROR &&
		   store_delete_prefix(st, "../", d, sizeof(d)) ==
			   STORE_ERROR &&
		   store_delete_prefix(st, "a//", d, sizeof(d)) == STORE_ERROR,
	   "bad prefixes refused");
	ok(store_delete_prefix(st, "f1/", d, sizeof(d)) == STORE_OK,
	   "delete_prefix f1/");
	ok(store_size(st, "f1/big", &size, d, sizeof(d)) == STORE_NOT_FOUND &&
		   store_size(st, "f1/ingest/s/0/c.xmch", &size, d,
			      sizeof(d)) == STORE_NOT_FOUND &&
		   store_size(st, "f10/keep", &size, d, sizeof(d)) == STORE_OK,
	   "everything under f1/ gone, f10/keep kept");
	ok(store_delete_prefix(st, "f1/", d, sizeof(d)) == STORE_OK &&
		   store_delete_prefix(st, "f10/keep/", d, sizeof(d)) ==
			   STORE_OK,
	   "delete_prefix of nothing is fine");

	/* Readiness. */
	ok(store_check(st, d, sizeof(d)) == STORE_OK, "check passes");
	is_int(walk(root, false), 1, "check leaves no probe behind");
	walk(root, true);
	ok(store_check(st, d, sizeof(d)) == STORE_ERROR &&
		   strstr(d, "object store") != NULL,
	   "check fails with the store directory gone");
	ok(stat(root, &sb) != 0, "the store directory is not recreated");
	/* A file where the directory was: fails as root too. */
	ok(store_put_buf(st, "x", "", 0, NULL, d, sizeof(d)) == STORE_ERROR,
	   "no put without the store directory");
	fclose(fopen(root, "w"));
	ok(store_check(st, d, sizeof(d)) == STORE_ERROR,
	   "check fails with a file in place of the directory");
	unlink(root);
	store_close(st);
	free(data);
}

static void
test_relative(void)
{
	char d[200], path[PATH_MAX], cwd[PATH_MAX];
	struct store *st;

	setenv("XMHUB_STORAGE_DIR", "var/objects/", 1);
	st = store_open_env(d, sizeof(d));
	ok(st != NULL && getcwd(cwd, sizeof(cwd)) != NULL &&
		   store_local_path(st, "k", path, sizeof(path)) &&
		   strncmp(path, cwd, strlen(cwd)) == 0 &&
		   strcmp(path + strlen(cwd), "/var/objects/k") == 0,
	   "a relative directory is made absolute, trailing '/' dropped");
	store_close(st);
}

int
main(void)
{
	test_settings();
	test_keys();
	test_fs();
	test_relative();
	return tap_done();
}
