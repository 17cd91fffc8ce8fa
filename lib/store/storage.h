/* SPDX-License-Identifier: MIT */
/*
 * storage.h - the object store: uploads, transcode outputs, sample chunks.
 *
 * Two back ends behind one API: the filesystem (objects are files under
 * XMHUB_STORAGE_DIR) and S3 (any S3-compatible endpoint, requests signed
 * with AWS Signature Version 4).  Keys are relative paths of restricted
 * characters (see below), so the same key names the same object in both.
 *
 * Atomicity: an object becomes visible under its key only when its put is
 * committed; an aborted or crashed put never leaves a partial object under
 * the final key.  See doc/storage.md for settings, key layout and notes.
 *
 * Errors: every call that can fail returns STORE_ERROR (or STORE_NOT_FOUND
 * for a missing object) and writes a one-line reason into detail
 * (NUL-terminated, truncated to dlen).  Nothing here exits the process.
 */
#ifndef XMHUB_STORAGE_H
#define XMHUB_STORAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/buf.h"

enum store_status { STORE_OK = 0, STORE_NOT_FOUND, STORE_ERROR };

struct store;	  /* a configured back end; one per process, not thread-safe */
struct store_put; /* one object being written */

/*
 * Opens the store from the settings (call after conf_init):
 * XMHUB_S3_ENDPOINT set -> S3 (XMHUB_S3_BUCKET, XMHUB_S3_ACCESS_KEY,
 * XMHUB_S3_SECRET_KEY, XMHUB_S3_REGION default us-east-1), else the
 * filesystem under XMHUB_STORAGE_DIR.  Caller owns the result (store_close).
 * NULL + detail on a bad or missing setting.  Does no I/O to the store.
 */
struct store *store_open_env(char *detail, size_t dlen);

/* Frees the store (NULL is fine).  Puts still open must be ended first. */
void store_close(struct store *st);

/* True for the filesystem back end. */
bool store_is_fs(const struct store *st);

/*
 * Keys: [A-Za-z0-9._-] segments separated by '/', no "." or ".." segment,
 * no empty segment, no leading '/', at most 512 bytes; anything else is
 * STORE_ERROR with a detail.  True when key is such a key.
 */
bool store_key_valid(const char *key);

/*
 * Starts writing the object key (replacing any object there once
 * committed).  content_type may be NULL (application/octet-stream).
 * Returns the put, owned by the caller until store_put_commit or
 * store_put_abort; NULL + detail on a bad key or an I/O failure.
 */
struct store_put *store_put_begin(struct store *st, const char *key,
				  const char *content_type, char *detail,
				  size_t dlen);

/*
 * Appends n bytes to the put.  Memory stays bounded whatever the total.
 * STORE_ERROR makes the put failed (commit then fails; abort it).
 */
enum store_status store_put_write(struct store_put *w, const void *p, size_t n);

/* Durable and visible under key only after this returns STORE_OK; frees w
 * either way (on failure nothing is left behind). */
enum store_status store_put_commit(struct store_put *w, char *detail,
				   size_t dlen);

/* Frees w (NULL is fine); nothing is left behind. */
void store_put_abort(struct store_put *w);

/* Writes the n bytes at p as the object key (begin + write + commit). */
enum store_status store_put_buf(struct store *st, const char *key,
				const void *p, size_t n,
				const char *content_type, char *detail,
				size_t dlen);

/*
 * Streams bytes [off, off+len) (len UINT64_MAX = to the end) to sink in
 * pieces of bounded size; sink returns 0 to go on, non-zero to stop (then
 * STORE_ERROR).  A range past the end is clipped to the object (an off at
 * or past the end gives no bytes and STORE_OK).  STORE_NOT_FOUND when the
 * object does not exist (sink not called).
 */
enum store_status store_get(struct store *st, const char *key, uint64_t off,
			    uint64_t len,
			    int (*sink)(void *arg, const void *p, size_t n),
			    void *arg, char *detail, size_t dlen);

/*
 * Appends the whole object to out (struct buf of lib/codec/buf.h, caller owns it),
 * refusing (STORE_ERROR) an object of more than max bytes.
 */
enum store_status store_get_buf(struct store *st, const char *key, size_t max,
				struct buf *out, char *detail, size_t dlen);

/*
 * Copies the object to the local file path (created 0600, replaced
 * atomically: written to a temporary name next to it, then renamed).
 */
enum store_status store_get_file(struct store *st, const char *key,
				 const char *path, char *detail, size_t dlen);

/* The object's size in bytes into *size. */
enum store_status store_size(struct store *st, const char *key, uint64_t *size,
			     char *detail, size_t dlen);

/* Deletes the object.  A missing object is STORE_OK. */
enum store_status store_delete(struct store *st, const char *key, char *detail,
			       size_t dlen);

/*
 * Deletes every object whose key starts with prefix (which must be a valid
 * key followed by '/', e.g. "{facility_id}/").  Nothing there is STORE_OK.
 */
enum store_status store_delete_prefix(struct store *st, const char *prefix,
				      char *detail, size_t dlen);

/*
 * Filesystem back end only: the absolute path of key (for X-Sendfile)
 * into path (len bytes); false for S3, a bad key or a path too long.
 * The object need not exist.
 */
bool store_local_path(const struct store *st, const char *key, char *path,
		      size_t len);

/*
 * S3 only: a presigned GET URL of key valid expires_s seconds (1 to
 * 604800) into url (len bytes); false for the filesystem, a bad key, a bad
 * expiry or a URL too long.
 */
bool store_presign_get(struct store *st, const char *key, unsigned expires_s,
		       char *url, size_t len);

/*
 * Readiness: the store can be written, read back and deleted (a tiny probe
 * object under the key ".health/probe-{pid}").  STORE_ERROR + detail else.
 */
enum store_status store_check(struct store *st, char *detail, size_t dlen);

/*
 * Filesystem back end only: the bytes an unprivileged writer may still
 * put on the store's filesystem (statvfs f_bavail) into *bytes; false
 * for S3 (a bucket has no such figure) or when it cannot be read.
 */
bool store_free_bytes(const struct store *st, uint64_t *bytes);

#endif
