/* SPDX-License-Identifier: MIT */
/*
 * storage_be.h - between lib/store/storage.c and its back ends (not for
 * callers: use storage.h).
 *
 * storage.c checks keys and arguments, then calls the back end through
 * its ops table; a back end's store and put structs start with struct
 * store and struct store_put.  Back-end functions get valid keys only.
 */
#ifndef XMHUB_STORAGE_BE_H
#define XMHUB_STORAGE_BE_H

#include <stdarg.h>
#include <stdio.h>

#include "store/storage.h"

struct store_ops {
	bool is_fs;
	void (*close)(struct store *st);
	struct store_put *(*put_begin)(struct store *st, const char *key,
				       const char *content_type, char *detail,
				       size_t dlen);
	/* Called only while the put has not failed. */
	enum store_status (*put_write)(struct store_put *w, const void *p,
				       size_t n);
	/* Frees w either way. */
	enum store_status (*put_commit)(struct store_put *w, char *detail,
					size_t dlen);
	void (*put_abort)(struct store_put *w);
	/* len > 0 and off + len does not overflow. */
	enum store_status (*get)(struct store *st, const char *key,
				 uint64_t off, uint64_t len,
				 int (*sink)(void *arg, const void *p,
					     size_t n),
				 void *arg, char *detail, size_t dlen);
	enum store_status (*size)(struct store *st, const char *key,
				  uint64_t *size, char *detail, size_t dlen);
	enum store_status (*del)(struct store *st, const char *key,
				 char *detail, size_t dlen);
	/* prefix is a valid key followed by '/'. */
	enum store_status (*del_prefix)(struct store *st, const char *prefix,
					char *detail, size_t dlen);
	bool (*local_path)(const struct store *st, const char *key, char *path,
			   size_t len);
	bool (*presign_get)(struct store *st, const char *key,
			    unsigned expires_s, char *url, size_t len);
	/* NULL when the back end cannot tell. */
	bool (*free_bytes)(const struct store *st, uint64_t *bytes);
};

struct store {
	const struct store_ops *ops;
};

struct store_put {
	struct store *st;
	bool failed; /* a write failed: commit refuses */
};

/* The bytes an object is read in at most, per sink call. */
#define STORE_PIECE (64 * 1024)

/* The filesystem store rooted at dir (made absolute; need not exist yet). */
struct store *store_fs_open(const char *dir, char *detail, size_t dlen);

/* S3 settings, borrowed for the call (the store keeps copies). */
struct store_s3_conf {
	const char *endpoint; /* scheme://host[:port][/path] */
	const char *bucket, *access_key, *secret_key, *region;
	const char *tmp_dir; /* where streaming puts are spooled */
	long page_keys;	     /* ListObjectsV2 max-keys, 1..1000 */
};

/* The S3 store of c (no request is made). */
struct store *store_s3_open(const struct store_s3_conf *c, char *detail,
			    size_t dlen);

/* The drivers' shared helper is inline here, so that storage.c (which
 * opens the drivers) and the drivers do not call into each other. */

/* snprintf into detail, never failing (detail may be NULL). */
static inline void __attribute__((format(printf, 3, 4)))
store_detail(char *detail, size_t dlen, const char *fmt, ...)
{
	va_list ap;

	if (detail == NULL || dlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(detail, dlen, fmt, ap);
	va_end(ap);
}

#endif
