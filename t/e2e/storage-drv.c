/* SPDX-License-Identifier: MIT */
/*
 * t/e2e/storage-drv.c - runs lib/store/storage operations against the store of the
 * environment (XMHUB_STORAGE_DIR or XMHUB_S3_*), for t/e2e/storage-s3.t, so
 * that the filesystem and S3 back ends pass the same assertions.
 *
 *   storage-drv suite          TAP: the whole suite under the prefix drv/
 *   storage-drv presign KEY TEXT
 *                              stores TEXT as KEY, prints a presigned GET
 *                              URL of it (exit 1 on the filesystem)
 *   storage-drv check          store_check; exit 1 with the detail
 *   storage-drv size KEY       prints the size, "not found", or fails
 *   storage-drv delete-prefix PREFIX
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/conf.h"
#include "store/storage.h"
#include "tap.h"
#include "testutil.h"

/* A multi-MiB object with an odd tail, written in odd pieces. */
#define BIG_SIZE (5 * 1024 * 1024 + 3)
#define BIG_PIECE 65521
#define BIG_SEED 7

/* Byte i of the big object (a cheap function of i, so nothing holds it). */
static uint8_t
big_byte(uint64_t i)
{
	uint64_t z = (i + BIG_SEED) * 0x9E3779B97F4A7C15ULL;

	return (uint8_t)(z >> 56);
}

/* A sink hashing into the EVP_MD_CTX in arg. */
static int
hash_sink(void *arg, const void *p, size_t n)
{
	return EVP_DigestUpdate(arg, p, n) == 1 ? 0 : 1;
}

/* A sink appending to the struct buf in arg. */
static int
collect(void *arg, const void *p, size_t n)
{
	buf_append(arg, p, n);
	return 0;
}

/* Streams the big object to key, hashing what it writes into md. */
static bool
put_big(struct store *st, const char *key, uint8_t md[32])
{
	char d[256];
	struct store_put *w;
	uint8_t *piece = malloc(BIG_PIECE);
	EVP_MD_CTX *h = EVP_MD_CTX_new();
	uint64_t off = 0;
	bool good = false;

	EVP_DigestInit_ex(h, EVP_sha256(), NULL);
	if (piece == NULL ||
	    (w = store_put_begin(st, key, "application/octet-stream", d,
				 sizeof(d))) == NULL) {
		diag("put_begin: %s", d);
		goto out;
	}
	while (off < BIG_SIZE) {
		size_t n =
			BIG_SIZE - off < BIG_PIECE ? BIG_SIZE - off : BIG_PIECE;

		for (size_t i = 0; i < n; i++)
			piece[i] = big_byte(off + i);
		EVP_DigestUpdate(h, piece, n);
		if (store_put_write(w, piece, n) != STORE_OK)
			break;
		off += n;
	}
	if (store_put_commit(w, d, sizeof(d)) != STORE_OK)
		diag("commit: %s", d);
	else
		good = off == BIG_SIZE;
	EVP_DigestFinal_ex(h, md, NULL);
out:
	EVP_MD_CTX_free(h);
	free(piece);
	return good;
}

/* SHA-256 of bytes [off, off+len) of key read through store_get. */
static enum store_status
get_hash(struct store *st, const char *key, uint64_t off, uint64_t len,
	 uint8_t md[32])
{
	char d[256];
	EVP_MD_CTX *h = EVP_MD_CTX_new();
	enum store_status s;

	EVP_DigestInit_ex(h, EVP_sha256(), NULL);
	s = store_get(st, key, off, len, hash_sink, h, d, sizeof(d));
	if (s == STORE_ERROR)
		diag("get: %s", d);
	EVP_DigestFinal_ex(h, md, NULL);
	EVP_MD_CTX_free(h);
	return s;
}

/* SHA-256 of the local file path. */
static bool
file_hash(const char *path, uint8_t md[32])
{
	FILE *f = fopen(path, "rb");
	uint8_t piece[8192];
	EVP_MD_CTX *h = EVP_MD_CTX_new();
	size_t n;

	EVP_DigestInit_ex(h, EVP_sha256(), NULL);
	while (f != NULL && (n = fread(piece, 1, sizeof(piece), f)) > 0)
		EVP_DigestUpdate(h, piece, n);
	EVP_DigestFinal_ex(h, md, NULL);
	EVP_MD_CTX_free(h);
	if (f == NULL)
		return false;
	fclose(f);
	return true;
}

static void
suite_big(struct store *st)
{
	uint8_t want[32], got[32];
	char d[256], path[] = "/tmp/xmhub-drv-XXXXXX";
	uint64_t size = 0;
	struct buf b;
	bool same = true;
	int fd;

	ok(put_big(st, "drv/big/original", want), "streaming put of %d bytes",
	   BIG_SIZE);
	ok(store_size(st, "drv/big/original", &size, d, sizeof(d)) ==
			   STORE_OK &&
		   size == BIG_SIZE,
	   "size of the big object");
	ok(get_hash(st, "drv/big/original", 0, UINT64_MAX, got) == STORE_OK &&
		   memcmp(got, want, 32) == 0,
	   "big object read back byte-identical (SHA-256)");
	buf_init(&b, 0);
	ok(store_get(st, "drv/big/original", 1000000, 300001, collect, &b, d,
		     sizeof(d)) == STORE_OK &&
		   b.len == 300001,
	   "range read: length");
	for (size_t i = 0; i < b.len && same; i++)
		same = b.p[i] == big_byte(1000000 + i);
	ok(same, "range read: the right bytes");
	buf_free(&b);
	ok(store_get(st, "drv/big/original", BIG_SIZE - 2, 100, collect, &b, d,
		     sizeof(d)) == STORE_OK &&
		   b.len == 2 && b.p[0] == big_byte(BIG_SIZE - 2) &&
		   b.p[1] == big_byte(BIG_SIZE - 1),
	   "range read past the end is clipped");
	buf_free(&b);
	ok(store_get(st, "drv/big/original", BIG_SIZE, 100, collect, &b, d,
		     sizeof(d)) == STORE_OK &&
		   b.len == 0,
	   "range read at the end gives nothing");
	buf_free(&b);
	ok(store_get(st, "drv/big/original", 7, 0, collect, &b, d, sizeof(d)) ==
			   STORE_OK &&
		   b.len == 0,
	   "zero-length read");
	/* store_get_file replaces the file mkstemp made. */
	if ((fd = mkstemp(path)) >= 0)
		close(fd);
	ok(fd >= 0 &&
		   store_get_file(st, "drv/big/original", path, d, sizeof(d)) ==
			   STORE_OK &&
		   file_hash(path, got) && memcmp(got, want, 32) == 0,
	   "get_file: byte-identical local copy");
	unlink(path);
}

static void
suite_small(struct store *st)
{
	char d[256], url[2048];
	struct store_put *w;
	uint64_t size = 0;
	struct buf b;

	w = store_put_begin(st, "drv/a/tmp", "text/plain", d, sizeof(d));
	ok(w != NULL && store_put_write(w, "abc", 3) == STORE_OK, "put begins");
	is_int(store_size(st, "drv/a/tmp", &size, d, sizeof(d)),
	       STORE_NOT_FOUND, "nothing visible before commit");
	store_put_abort(w);
	is_int(store_size(st, "drv/a/tmp", &size, d, sizeof(d)),
	       STORE_NOT_FOUND, "nothing left after abort");
	ok(store_put_buf(st, "drv/a/x.txt", "hello", 5, "text/plain", d,
			 sizeof(d)) == STORE_OK,
	   "put_buf");
	buf_init(&b, 0);
	ok(store_get_buf(st, "drv/a/x.txt", 5, &b, d, sizeof(d)) == STORE_OK &&
		   b.len == 5 && memcmp(b.p, "hello", 5) == 0,
	   "get_buf");
	buf_free(&b);
	ok(store_get_buf(st, "drv/a/x.txt", 4, &b, d, sizeof(d)) == STORE_ERROR,
	   "get_buf refuses more than max");
	buf_free(&b);
	ok(store_put_buf(st, "drv/a/x.txt", "", 0, NULL, d, sizeof(d)) ==
			   STORE_OK &&
		   store_size(st, "drv/a/x.txt", &size, d, sizeof(d)) ==
			   STORE_OK &&
		   size == 0,
	   "replaced by an empty object");
	ok(store_get(st, "drv/a/x.txt", 0, UINT64_MAX, collect, &b, d,
		     sizeof(d)) == STORE_OK &&
		   b.len == 0,
	   "empty object reads as nothing");
	buf_free(&b);
	is_int(store_get(st, "drv/a/none", 0, UINT64_MAX, collect, &b, d,
			 sizeof(d)),
	       STORE_NOT_FOUND, "get of a missing object: not found");
	is_int(store_get(st, "drv/a/none", 5, 10, collect, &b, d, sizeof(d)),
	       STORE_NOT_FOUND, "range get of a missing object: not found");
	ok(b.len == 0, "no bytes from a missing object");
	ok(store_delete(st, "drv/a/x.txt", d, sizeof(d)) == STORE_OK &&
		   store_size(st, "drv/a/x.txt", &size, d, sizeof(d)) ==
			   STORE_NOT_FOUND,
	   "delete");
	ok(store_delete(st, "drv/a/x.txt", d, sizeof(d)) == STORE_OK,
	   "delete of a missing object is fine");
	ok(store_put_begin(st, "drv/../x", NULL, d, sizeof(d)) == NULL,
	   "bad key refused");
	ok(store_local_path(st, "drv/a/x.txt", url, sizeof(url)) ==
		   store_is_fs(st),
	   "local path only on the filesystem");
	ok(store_presign_get(st, "drv/a/x.txt", 60, url, sizeof(url)) ==
		   !store_is_fs(st),
	   "presigned URLs only on S3");
}

static void
suite_prefix(struct store *st)
{
	char d[256], key[64];
	long long page = 1000;
	int n, i, left = 0;
	uint64_t size;

	/* More keys than two listing pages (XMHUB_S3_PAGE_KEYS). */
	conf_int("XMHUB_S3_PAGE_KEYS", 1000, 1, 1000, &page);
	n = (int)(2 * page + 3);
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "drv/many/%s%d", i % 3 ? "" : "sub/",
			 i);
		if (store_put_buf(st, key, key, strlen(key), NULL, d,
				  sizeof(d)) != STORE_OK) {
			diag("%s: %s", key, d);
			break;
		}
	}
	is_int(i, n, "%d objects under drv/many/", n);
	ok(store_put_buf(st, "drv/manyx/keep", "k", 1, NULL, d, sizeof(d)) ==
		   STORE_OK,
	   "an object under drv/manyx/");
	ok(store_delete_prefix(st, "drv/many/", d, sizeof(d)) == STORE_OK,
	   "delete_prefix drv/many/");
	for (i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "drv/many/%s%d", i % 3 ? "" : "sub/",
			 i);
		left += store_size(st, key, &size, d, sizeof(d)) !=
			STORE_NOT_FOUND;
	}
	is_int(left, 0, "every object under the prefix is gone");
	ok(store_size(st, "drv/manyx/keep", &size, d, sizeof(d)) == STORE_OK,
	   "drv/manyx/keep kept");
	ok(store_delete_prefix(st, "drv/many/", d, sizeof(d)) == STORE_OK,
	   "delete_prefix of nothing");
	ok(store_delete_prefix(st, "drv/", d, sizeof(d)) == STORE_OK &&
		   store_size(st, "drv/big/original", &size, d, sizeof(d)) ==
			   STORE_NOT_FOUND &&
		   store_size(st, "drv/manyx/keep", &size, d, sizeof(d)) ==
			   STORE_NOT_FOUND,
	   "delete_prefix drv/ empties the suite's objects");
}

static int
run_suite(struct store *st)
{
	char d[256];

	suite_small(st);
	suite_big(st);
	suite_prefix(st);
	if (!ok(store_check(st, d, sizeof(d)) == STORE_OK, "check"))
		diag("%s", d);
	return tap_done();
}

int
main(int argc, char **argv)
{
	char d[256], url[4096];
	struct store *st;
	uint64_t size;
	enum store_status s;
	int rc = 1;

	if ((st = store_open_env(d, sizeof(d))) == NULL) {
		fprintf(stderr, "storage-drv: %s\n", d);
		return 2;
	}
	if (argc == 2 && strcmp(argv[1], "suite") == 0) {
		rc = run_suite(st);
	} else if (argc == 4 && strcmp(argv[1], "presign") == 0) {
		if (store_put_buf(st, argv[2], argv[3], strlen(argv[3]),
				  "text/plain", d, sizeof(d)) != STORE_OK)
			fprintf(stderr, "storage-drv: %s\n", d);
		else if (store_presign_get(st, argv[2], 300, url, sizeof(url)))
			rc = printf("%s\n", url) < 0;
	} else if (argc == 2 && strcmp(argv[1], "check") == 0) {
		if (store_check(st, d, sizeof(d)) == STORE_OK)
			rc = 0;
		else
			fprintf(stderr, "storage-drv: %s\n", d);
	} else if (argc == 3 && strcmp(argv[1], "size") == 0) {
		s = store_size(st, argv[2], &size, d, sizeof(d));
		if (s == STORE_OK)
			rc = printf("%llu\n", (unsigned long long)size) < 0;
		else if (s == STORE_NOT_FOUND)
			rc = printf("not found\n") < 0;
		else
			fprintf(stderr, "storage-drv: %s\n", d);
	} else if (argc == 3 && strcmp(argv[1], "delete-prefix") == 0) {
		if (store_delete_prefix(st, argv[2], d, sizeof(d)) == STORE_OK)
			rc = 0;
		else
			fprintf(stderr, "storage-drv: %s\n", d);
	} else {
		fprintf(stderr, "usage: storage-drv suite | presign KEY TEXT | "
				"check | size KEY | delete-prefix PREFIX\n");
		rc = 2;
	}
	store_close(st);
	return rc;
}
