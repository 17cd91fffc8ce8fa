/* SPDX-License-Identifier: MIT */
/*
 * sigv4.c - AWS Signature Version 4 (see sigv4.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "store/sigv4.h"

#define ALGORITHM "AWS4-HMAC-SHA256"

void
sigv4_amz_date(time_t t, char out[17])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

void
sigv4_uri_encode(struct buf *out, const char *s, bool keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~' || (c == '/' && keep_slash)) {
			buf_putc(out, (char)c);
		} else {
			buf_putc(out, '%');
			buf_putc(out, hex[c >> 4]);
			buf_putc(out, hex[c & 15]);
		}
	}
}

/* Lower-case hex of the n bytes at p into out (2n + 1 bytes). */
static void
to_hex(const uint8_t *p, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[p[i] >> 4];
		out[2 * i + 1] = hex[p[i] & 15];
	}
	out[2 * n] = '\0';
}

void
sigv4_canonical_request(struct buf *out, const struct sigv4_req *r)
{
	buf_printf(out, "%s\n%s\n%s\n", r->method, r->path, r->query);
	for (size_t i = 0; i < r->nheaders; i++)
		buf_printf(out, "%s:%s\n", r->headers[i].name,
			   r->headers[i].value);
	buf_putc(out, '\n');
	for (size_t i = 0; i < r->nheaders; i++) {
		if (i > 0)
			buf_putc(out, ';');
		buf_puts(out, r->headers[i].name);
	}
	buf_printf(out, "\n%s", r->payload_hash);
}

/* "YYYYMMDD/region/service/aws4_request" of c at amz_date. */
static void
scope(struct buf *out, const struct sigv4_cred *c, const char *amz_date)
{
	buf_printf(out, "%.8s/%s/%s/aws4_request", amz_date, c->region,
		   c->service);
}

void
sigv4_string_to_sign(struct buf *out, const struct sigv4_cred *c,
		     const char *amz_date, const char *canon, size_t canon_len)
{
	uint8_t md[SHA256_DIGEST_LENGTH];
	char hex[2 * SHA256_DIGEST_LENGTH + 1];

	SHA256((const unsigned char *)canon, canon_len, md);
	to_hex(md, sizeof(md), hex);
	buf_printf(out, ALGORITHM "\n%s\n", amz_date);
	scope(out, c, amz_date);
	buf_printf(out, "\n%s", hex);
}

/* out = HMAC-SHA256(key, msg). */
static void
hmac(const void *key, size_t klen, const void *msg, size_t mlen,
     uint8_t out[32])
{
	unsigned int olen = 32;

	HMAC(EVP_sha256(), key, (int)klen, msg, mlen, out, &olen);
}

void
sigv4_signing_key(const struct sigv4_cred *c, const char *amz_date,
		  uint8_t key[32])
{
	char first[256];
	int n = snprintf(first, sizeof(first), "AWS4%s", c->secret_key);

	/* A secret too long for first would be a setting error caught by the
	 * caller; clamp rather than read past the array. */
	if (n < 0 || (size_t)n >= sizeof(first))
		n = (int)sizeof(first) - 1;
	hmac(first, (size_t)n, amz_date, 8, key);
	hmac(key, 32, c->region, strlen(c->region), key);
	hmac(key, 32, c->service, strlen(c->service), key);
	hmac(key, 32, "aws4_request", 12, key);
	OPENSSL_cleanse(first, sizeof(first));
}

bool
sigv4_sign(const struct sigv4_cred *c, const char *amz_date,
	   const struct sigv4_req *r, char sig[65])
{
	struct buf canon, sts;
	uint8_t key[32], md[32];
	bool ok;

	buf_init(&canon, 0);
	buf_init(&sts, 0);
	sigv4_canonical_request(&canon, r);
	sigv4_string_to_sign(&sts, c, amz_date, (const char *)canon.p,
			     canon.len);
	if ((ok = !canon.failed && !sts.failed)) {
		sigv4_signing_key(c, amz_date, key);
		hmac(key, sizeof(key), sts.p, sts.len, md);
		to_hex(md, sizeof(md), sig);
		OPENSSL_cleanse(key, sizeof(key));
	}
	buf_free(&canon);
	buf_free(&sts);
	return ok;
}

bool
sigv4_presign_get(struct buf *out, const struct sigv4_cred *c, time_t now,
		  unsigned expires, const char *base, const char *host,
		  const char *path)
{
	char date[17], sig[65];
	struct buf q, cred;
	struct sigv4_header h = {"host", host};
	struct sigv4_req r = {"GET", path, NULL, &h, 1, SIGV4_UNSIGNED};
	bool ok = false;

	sigv4_amz_date(now, date);
	buf_init(&q, 0);
	buf_init(&cred, 0);
	buf_printf(&cred, "%s/", c->access_key);
	scope(&cred, c, date);
	buf_putc(&cred, '\0');
	/* Already in canonical (sorted) order. */
	buf_puts(&q, "X-Amz-Algorithm=" ALGORITHM "&X-Amz-Credential=");
	if (!cred.failed)
		sigv4_uri_encode(&q, (const char *)cred.p, false);
	buf_printf(&q,
		   "&X-Amz-Date=%s&X-Amz-Expires=%u&X-Amz-SignedHeaders=host",
		   date, expires);
	buf_putc(&q, '\0');
	if (cred.failed || q.failed)
		goto out;
	r.query = (const char *)q.p;
	if (!sigv4_sign(c, date, &r, sig))
		goto out;
	buf_printf(out, "%s%s?%s&X-Amz-Signature=%s", base, path, r.query, sig);
	ok = !out->failed;
out:
	buf_free(&q);
	buf_free(&cred);
	return ok;
}
