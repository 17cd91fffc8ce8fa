/* SPDX-License-Identifier: MIT */
/*
 * auth.h - credentials: Argon2id passwords, HS256 JWTs, API keys,
 * refresh tokens (doc/auth.md: "Tokens (JWT)", "Passwords", "API keys").
 *
 * Nothing here touches the database: callers store the hashes this
 * module makes and hand back what they stored.  Secrets and tokens are
 * compared in constant time.  Random bytes come from getrandom(2).
 */
#ifndef XMHUB_AUTH_H
#define XMHUB_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/uuid.h"

#define AUTH_UUID_LEN UUID_LEN
#define AUTH_HASH_MAX 128  /* Argon2id encoded hash, NUL included */
#define AUTH_SHA256_HEX 65 /* 64 hex digits and a NUL */
#define AUTH_KEY_LEN 48	   /* "xmk_" + 43 base62 digits + NUL, rounded */
#define AUTH_KEY_PREFIX 13 /* first 12 characters + NUL */

#define AUTH_PASSWORD_MAX 1024	 /* longer passwords are refused (bytes) */
#define AUTH_JWT_SECRET_MIN 32	 /* shortest accepted XMHUB_JWT_SECRET */
#define AUTH_JWT_MAX 4096	 /* longer tokens are refused unread */
#define AUTH_ACCESS_TTL 900	 /* default XMHUB_ACCESS_TTL, seconds */
#define AUTH_REFRESH_TTL 2592000 /* default XMHUB_REFRESH_TTL, 30 days */

enum auth_role { ROLE_USER = 0, ROLE_FACILITY_ADMIN, ROLE_SUPER_ADMIN };

/* "user", "facility_admin", "super_admin"; NULL for anything else. */
const char *auth_role_name(enum auth_role role);

/* Looks a role name up; false when it is not one. */
bool auth_role_from_name(const char *name, enum auth_role *role);

/*
 * Hashes a password with Argon2id (t=2, m=19456 KiB, p=1, 16-byte salt,
 * 32-byte hash; doc/auth.md) into out, the libargon2 encoded form
 * "$argon2id$v=19$m=...,t=...,p=...$SALT$HASH".  False on failure or
 * for a password longer than AUTH_PASSWORD_MAX bytes.  Takes tens of
 * milliseconds on purpose.
 */
bool auth_password_hash(const char *password, char out[AUTH_HASH_MAX]);

/*
 * True when password matches the encoded Argon2id hash.  The encoded
 * form carries its own parameters, so hashes made with older parameters
 * keep verifying.  False for anything that is not an argon2id encoded
 * hash, for parameters above sane limits (m > 256 MiB, t > 16, p > 16:
 * a corrupt row must not exhaust memory) and for over-long passwords.
 */
bool auth_password_verify(const char *encoded, const char *password);

/*
 * Spends the time of one auth_password_verify() and returns nothing:
 * login calls it when the email is unknown, so that an unknown email
 * and a wrong password take the same time.  The first call in a
 * process also makes the dummy hash (kept in a static buffer: not for
 * threads).
 */
void auth_password_dummy(const char *password);

/*
 * What a token says.  Strings are NUL-terminated.  sub, facility_id and
 * jti are UUIDs in lower-case 8-4-4-4-12 form.  facility_id is "" for a
 * super_admin and a UUID for every other role.  jti is always set in a
 * refresh token, and "" in an access token unless the caller set one.
 */
struct auth_claims {
	char sub[AUTH_UUID_LEN + 1];
	enum auth_role role;
	char facility_id[AUTH_UUID_LEN + 1];
	char type[8];		     /* "access" or "refresh" */
	char jti[AUTH_UUID_LEN + 1]; /* refresh tokens: the token's id */
	long long iat, exp;
	long long ver; /* users.token_version when issued ("ver"; 0 when
			* absent) */
};

/*
 * Signs claims as an HS256 JWT with secret (at least AUTH_JWT_SECRET_MIN
 * characters).  iat and exp are set here, in claims too, from now and
 * ttl seconds (ttl may be negative, for tests).  type must be "access"
 * or "refresh"; for a refresh token with jti "" a new random UUID is put
 * in claims->jti.  *token is malloc'd, the caller frees it.  False on
 * failure or when the claims are not well-formed as described above.
 */
bool auth_jwt_issue(const char *secret, struct auth_claims *claims,
		    long long ttl, char **token);

enum auth_jwt_result {
	AUTH_JWT_OK = 0,
	AUTH_JWT_INVALID, /* malformed, wrong signature, alg none, ... */
	AUTH_JWT_EXPIRED,
	AUTH_JWT_WRONG_TYPE /* valid, but not the type asked for */
};

/*
 * Verifies token: signature with secret, header alg HS256 only, all
 * claims present with the right JSON types and well-formed (as struct
 * auth_claims says; unknown extra claims are ignored), exp in the future
 * (exp <= now is expired), claim "type" equal to want_type.  Checked in
 * that order: a token that is both expired and of the wrong type is
 * AUTH_JWT_EXPIRED.  Tokens longer than AUTH_JWT_MAX are
 * AUTH_JWT_INVALID.  Fills *claims on AUTH_JWT_OK and clears it
 * otherwise.
 */
enum auth_jwt_result auth_jwt_verify(const char *secret, const char *token,
				     const char *want_type,
				     struct auth_claims *claims);

/* Lower-case hex SHA-256 of n bytes ("" should OpenSSL ever fail, which
 * then matches no stored hash). */
void auth_sha256_hex(const void *p, size_t n, char out[AUTH_SHA256_HEX]);

/*
 * A new platform API key: "xmk_" + 43 uniformly random base62 digits
 * (0-9A-Za-z; 256 bits, the entropy of 32 random bytes), its key_prefix
 * (first 12 characters) and the SHA-256 hex of the whole key, to store.
 * False when no random bytes could be had.
 */
bool auth_api_key_new(char key[AUTH_KEY_LEN], char prefix[AUTH_KEY_PREFIX],
		      char hash[AUTH_SHA256_HEX]);

/*
 * For a key presented by a client: true when key has the form of a
 * platform key ("xmk_" + 43 base62 digits), with its key_prefix and
 * SHA-256 hex, to look the stored key up by that hash (or by prefix,
 * comparing hashes with auth_equal()).  False for anything else: answer
 * 401 without a database query.
 */
bool auth_api_key_parse(const char *key, char prefix[AUTH_KEY_PREFIX],
			char hash[AUTH_SHA256_HEX]);

/* A random version 4 UUID in its 36-character lower-case form.  False
 * when no random bytes could be had. */
bool auth_uuid(char out[AUTH_UUID_LEN + 1]);

/*
 * Constant-time equality of two NUL-terminated strings: the time
 * depends on the lengths only, never on where they differ.  False when
 * either is NULL.
 */
bool auth_equal(const char *a, const char *b);

#endif
