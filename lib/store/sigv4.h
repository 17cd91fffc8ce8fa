/* SPDX-License-Identifier: MIT */
/*
 * sigv4.h - AWS Signature Version 4, pure computation (no I/O, no clock).
 *
 * The pieces of the algorithm as AWS documents it for S3 (canonical
 * request, string to sign, signing key, signature) and query-string
 * authentication (presigned URLs).  Callers pass the time, so the
 * published examples can be reproduced byte for byte (t/unit/sigv4.c).
 * Output goes into a struct buf (lib/codec/buf.h) owned by the caller; a
 * function returning false leaves the buffer failed or unchanged.
 */
#ifndef XMHUB_SIGV4_H
#define XMHUB_SIGV4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "codec/buf.h"

/* Hex SHA-256 of the empty string: the payload hash of a bodiless request. */
#define SIGV4_EMPTY_SHA256                                                     \
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/* The payload hash of a presigned URL or an unhashed body. */
#define SIGV4_UNSIGNED "UNSIGNED-PAYLOAD"

/* Who signs, for which region and service (e.g. "s3"). Borrowed strings. */
struct sigv4_cred {
	const char *access_key, *secret_key, *region, *service;
};

/* One header to sign: name in lower case, value already trimmed. */
struct sigv4_header {
	const char *name, *value;
};

/* One request to sign.  Borrowed strings. */
struct sigv4_req {
	const char *method; /* "GET" */
	const char *path;   /* canonical URI, already URI-encoded, "/..." */
	const char *query;  /* canonical query: sorted, encoded; "" for none */
	const struct sigv4_header *headers; /* sorted by name */
	size_t nheaders;
	const char *payload_hash; /* hex SHA-256 or SIGV4_UNSIGNED */
};

/* "YYYYMMDDTHHMMSSZ" of t (UTC) into out. */
void sigv4_amz_date(time_t t, char out[17]);

/*
 * Appends s URI-encoded as SigV4 wants (RFC 3986: everything but
 * A-Za-z0-9-._~ as %XX with upper-case hex); '/' kept when keep_slash.
 */
void sigv4_uri_encode(struct buf *out, const char *s, bool keep_slash);

/* Appends the canonical request of r. */
void sigv4_canonical_request(struct buf *out, const struct sigv4_req *r);

/*
 * Appends the string to sign for amz_date ("YYYYMMDDTHHMMSSZ") and the
 * canonical request canon (its SHA-256 is taken here).
 */
void sigv4_string_to_sign(struct buf *out, const struct sigv4_cred *c,
			  const char *amz_date, const char *canon,
			  size_t canon_len);

/* The signing key of c for the day of amz_date (its first 8 characters). */
void sigv4_signing_key(const struct sigv4_cred *c, const char *amz_date,
		       uint8_t key[32]);

/*
 * The hex signature of r at amz_date into sig (NUL-terminated).  False
 * only when memory runs out.
 */
bool sigv4_sign(const struct sigv4_cred *c, const char *amz_date,
		const struct sigv4_req *r, char sig[65]);

/*
 * Appends a presigned GET URL: base (scheme and authority, e.g.
 * "http://127.0.0.1:9000", no trailing '/') + path (encoded, "/...") +
 * the X-Amz-* query, signing only the header host (the authority as the
 * client will send it, port included) with an unsigned payload, valid
 * expires seconds from now.  False when memory runs out.
 */
bool sigv4_presign_get(struct buf *out, const struct sigv4_cred *c, time_t now,
		       unsigned expires, const char *base, const char *host,
		       const char *path);

#endif
