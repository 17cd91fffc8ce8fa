/* SPDX-License-Identifier: MIT */
/*
 * sigv4.c - unit tests of lib/store/sigv4 against AWS's published examples.
 *
 * s3rver, the S3 server of the end-to-end tests, does not verify
 * signatures, so these examples are what proves the signing right.
 * Source of the expected values (Amazon S3 API Reference):
 * - "Signature Calculations for the Authorization Header: Transferring
 *   Payload in a Single Chunk", example "GET Object",
 *   https://docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html
 * - "Authenticating Requests: Using Query Parameters (AWS Signature
 *   Version 4)", example presigned URL,
 *   https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html
 * Both use bucket examplebucket, key test.txt, access key
 * AKIAIOSFODNN7EXAMPLE, region us-east-1 and 2013-05-24T00:00:00Z.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "store/sigv4.h"
#include "tap.h"

static const struct sigv4_cred aws = {
	"AKIAIOSFODNN7EXAMPLE",
	"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
	"us-east-1",
	"s3",
};

#define EXAMPLE_TIME ((time_t)1369353600) /* 20130524T000000Z */

/* The buffer as a NUL-terminated string (it keeps the NUL out of len). */
static const char *
str(struct buf *b)
{
	buf_putc(b, '\0');
	b->len--;
	return b->failed ? "(failed)" : (const char *)b->p;
}

static void
test_get_object(void)
{
	static const struct sigv4_header h[] = {
		{"host", "examplebucket.s3.amazonaws.com"},
		{"range", "bytes=0-9"},
		{"x-amz-content-sha256", SIGV4_EMPTY_SHA256},
		{"x-amz-date", "20130524T000000Z"},
	};
	struct sigv4_req r = {"GET", "/test.txt", "", h, 4, SIGV4_EMPTY_SHA256};
	struct buf canon, sts;
	char sig[65];

	buf_init(&canon, 0);
	buf_init(&sts, 0);
	sigv4_canonical_request(&canon, &r);
	is_str(str(&canon),
	       "GET\n/test.txt\n\n"
	       "host:examplebucket.s3.amazonaws.com\n"
	       "range:bytes=0-9\n"
	       "x-amz-content-sha256:" SIGV4_EMPTY_SHA256 "\n"
	       "x-amz-date:20130524T000000Z\n\n"
	       "host;range;x-amz-content-sha256;x-amz-"
	       "date\n" SIGV4_EMPTY_SHA256,
	       "GET Object: canonical request as published");
	sigv4_string_to_sign(&sts, &aws, "20130524T000000Z",
			     (const char *)canon.p, canon.len);
	is_str(str(&sts),
	       "AWS4-HMAC-SHA256\n20130524T000000Z\n"
	       "20130524/us-east-1/s3/aws4_request\n"
	       "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946"
	       "972",
	       "GET Object: string to sign as published");
	ok(sigv4_sign(&aws, "20130524T000000Z", &r, sig), "GET Object: signs");
	is_str(sig,
	       "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bd"
	       "b41",
	       "GET Object: the published signature");
	/* One byte of the secret changed changes the signature. */
	struct sigv4_cred other = aws;
	other.secret_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEZ";
	ok(sigv4_sign(&other, "20130524T000000Z", &r, sig) &&
		   strcmp(sig, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba"
			       "48dd91039c6036bdb41") != 0,
	   "another secret, another signature");
	buf_free(&canon);
	buf_free(&sts);
}

static void
test_presign(void)
{
	struct buf url;

	buf_init(&url, 0);
	ok(sigv4_presign_get(&url, &aws, EXAMPLE_TIME, 86400,
			     "https://examplebucket.s3.amazonaws.com",
			     "examplebucket.s3.amazonaws.com", "/test.txt"),
	   "presign: builds");
	is_str(str(&url),
	       "https://examplebucket.s3.amazonaws.com/test.txt"
	       "?X-Amz-Algorithm=AWS4-HMAC-SHA256"
	       "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%"
	       "2F"
	       "s3%2Faws4_request"
	       "&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400"
	       "&X-Amz-SignedHeaders=host"
	       "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c26"
	       "5957d157751f604d404",
	       "presign: the published URL and signature");
	buf_free(&url);

	/* The port is part of the signed host: another port, another URL. */
	buf_init(&url, 0);
	ok(sigv4_presign_get(&url, &aws, EXAMPLE_TIME, 60,
			     "http://127.0.0.1:9000", "127.0.0.1:9000",
			     "/b/k") &&
		   strncmp(str(&url), "http://127.0.0.1:9000/b/k?X-Amz-", 32) ==
			   0 &&
		   strstr(str(&url), "&X-Amz-Expires=60&") != NULL,
	   "presign: path-style URL with a port");
	buf_free(&url);
}

static void
test_encode(void)
{
	struct buf b;
	char date[17];

	buf_init(&b, 0);
	sigv4_uri_encode(&b, "az-AZ_09.~ /+=&%\xc3\xa9", false);
	is_str(str(&b), "az-AZ_09.~%20%2F%2B%3D%26%25%C3%A9",
	       "RFC 3986 encoding, upper-case hex, '/' encoded");
	buf_free(&b);
	buf_init(&b, 0);
	sigv4_uri_encode(&b, "a/b c/d", true);
	is_str(str(&b), "a/b%20c/d", "'/' kept in a path");
	buf_free(&b);
	sigv4_amz_date(EXAMPLE_TIME, date);
	is_str(date, "20130524T000000Z", "amz date of the example time");
}

int
main(void)
{
	test_get_object();
	test_presign();
	test_encode();
	return tap_done();
}
