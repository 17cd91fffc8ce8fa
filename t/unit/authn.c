/* SPDX-License-Identifier: MIT */
/*
 * t/unit/authn.c - lib/web/authn's HTTP Basic check (authn_basic, the
 * credentials of a ROUTE_BASIC route): the user and the password, in
 * clear or as an Argon2id hash, and what is not a Basic header.
 */
#include "config.h"

#include <string.h>

#include "codec/base64.h"
#include "core/auth.h"
#include "web/authn.h"

#include "tap.h"

/* "Basic " and the base64 of "user:password" in out. */
static const char *
basic(struct buf *out, const char *userpass)
{
	out->len = 0;
	buf_puts(out, "Basic ");
	base64_encode(out, (const uint8_t *)userpass, strlen(userpass));
	buf_putc(out, '\0');
	return (const char *)out->p;
}

int
main(void)
{
	char hash[AUTH_HASH_MAX], long_h[AUTHN_BASIC_MAX + 16];
	struct buf b;

	buf_init(&b, 0);
	ok(authn_basic(basic(&b, "admin:s3cret"), "admin", "s3cret", false),
	   "the user and its password in clear");
	ok(!authn_basic(basic(&b, "admin:s3cre"), "admin", "s3cret", false),
	   "another password: refused");
	ok(!authn_basic(basic(&b, "root:s3cret"), "admin", "s3cret", false),
	   "another user: refused");
	ok(!authn_basic(basic(&b, "admin:s3cret"), "admin", NULL, false),
	   "no password set: everyone refused");
	ok(authn_basic(basic(&b, "admin:pa:ss"), "admin", "pa:ss", false),
	   "a password holding a colon (the user ends at the first)");
	ok(!authn_basic(basic(&b, "admins3cret"), "admin", "s3cret", false),
	   "no colon: refused");
	ok(auth_password_hash("s3cret", hash), "an Argon2id hash made");
	ok(authn_basic(basic(&b, "admin:s3cret"), "admin", hash, true),
	   "the password against its hash");
	ok(!authn_basic(basic(&b, "admin:s3cre"), "admin", hash, true),
	   "another password against the hash: refused");
	ok(!authn_basic(basic(&b, "admin:s3cret"), "admin", hash, false),
	   "the hash taken as a password in clear: refused");
	ok(!authn_basic(NULL, "admin", "s3cret", false),
	   "no Authorization: refused");
	ok(!authn_basic("Bearer abc", "admin", "s3cret", false),
	   "a bearer token: refused");
	ok(!authn_basic("Basic !!!!", "admin", "s3cret", false),
	   "not base64: refused");
	ok(authn_basic("basic YWRtaW46czNjcmV0", "admin", "s3cret", false),
	   "the scheme's name in any case (RFC 7235)");
	memset(long_h, 'A', sizeof(long_h) - 1);
	long_h[sizeof(long_h) - 1] = '\0';
	memcpy(long_h, "Basic ", 6);
	ok(!authn_basic(long_h, "admin", "s3cret", false),
	   "a header over AUTHN_BASIC_MAX bytes: refused unread");
	buf_free(&b);
	return tap_done();
}
