/* SPDX-License-Identifier: MIT */
/*
 * auth.c - credentials: Argon2id passwords, HS256 JWTs, API keys.
 *
 * libargon2 for passwords, libjwt 1.10.2 for signing and the signature
 * check (it checks neither exp nor the algorithm: done here), OpenSSL
 * libcrypto for SHA-256 and the constant-time compare, getrandom(2) for
 * randomness.  doc/auth.md explains the choices.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/random.h>

#include <argon2.h>
#include <jwt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core/auth.h"
#include "codec/jsonin.h"

/* Argon2id parameters for new hashes (OWASP's minimum for Argon2id). */
#define PW_T_COST 2
#define PW_M_COST 19456 /* KiB */
#define PW_PARALLELISM 1
#define PW_SALT_LEN 16
#define PW_HASH_LEN 32

/* Limits on the parameters of a stored hash that we agree to verify. */
#define PW_MAX_M_COST 262144 /* KiB: 256 MiB */
#define PW_MAX_T_COST 16
#define PW_MAX_PARALLELISM 16

#define KEY_TAG "xmk_"
#define KEY_TAG_LEN 4
#define KEY_DIGITS 43

static const char base62[] =
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

static const char *const role_names[] = {
	[ROLE_USER] = "user",
	[ROLE_FACILITY_ADMIN] = "facility_admin",
	[ROLE_SUPER_ADMIN] = "super_admin",
};

const char *
auth_role_name(enum auth_role role)
{
	if ((unsigned)role >= sizeof(role_names) / sizeof(role_names[0]))
		return NULL;
	return role_names[role];
}

bool
auth_role_from_name(const char *name, enum auth_role *role)
{
	size_t i;

	if (name == NULL)
		return false;
	for (i = 0; i < sizeof(role_names) / sizeof(role_names[0]); i++)
		if (strcmp(name, role_names[i]) == 0) {
			*role = (enum auth_role)i;
			return true;
		}
	return false;
}

/* n random bytes from getrandom(2); false when the kernel gives none. */
static bool
get_random(void *p, size_t n)
{
	unsigned char *b = p;
	ssize_t r;

	while (n > 0) {
		r = getrandom(b, n, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		b += r;
		n -= (size_t)r;
	}
	return true;
}

bool
auth_equal(const char *a, const char *b)
{
	size_t la, lb;

	if (a == NULL || b == NULL)
		return false;
	la = strlen(a);
	lb = strlen(b);
	if (la != lb) {
		/* Same work as a compare of a with itself: only the
		 * lengths show. */
		(void)CRYPTO_memcmp(a, a, la);
		return false;
	}
	return CRYPTO_memcmp(a, b, la) == 0;
}

/* True for a UUID in lower-case 8-4-4-4-12 form (any version). */
static bool
is_uuid(const char *s)
{
	size_t i;

	if (s == NULL)
		return false;
	for (i = 0; i < AUTH_UUID_LEN; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return false;
		} else if (!((s[i] >= '0' && s[i] <= '9') ||
			     (s[i] >= 'a' && s[i] <= 'f'))) {
			return false;
		}
	}
	return s[AUTH_UUID_LEN] == '\0';
}

bool
auth_uuid(char out[AUTH_UUID_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[16];
	size_t i, j;

	out[0] = '\0';
	if (!get_random(b, sizeof(b)))
		return false;
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* variant 10 */
	for (i = 0, j = 0; i < sizeof(b); i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[j++] = '-';
		out[j++] = hex[b[i] >> 4];
		out[j++] = hex[b[i] & 15];
	}
	out[j] = '\0';
	return true;
}

void
auth_sha256_hex(const void *p, size_t n, char out[AUTH_SHA256_HEX])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0, i;

	out[0] = '\0';
	if (EVP_Digest(p, n, md, &len, EVP_sha256(), NULL) != 1 || len != 32)
		return;
	for (i = 0; i < len; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[2 * len] = '\0';
}

/* Passwords. */

bool
auth_password_hash(const char *password, char out[AUTH_HASH_MAX])
{
	unsigned char salt[PW_SALT_LEN];
	size_t n;
	bool ok = false;

	out[0] = '\0';
	if (password == NULL || (n = strlen(password)) > AUTH_PASSWORD_MAX)
		goto out;
	if (argon2_encodedlen(PW_T_COST, PW_M_COST, PW_PARALLELISM, PW_SALT_LEN,
			      PW_HASH_LEN, Argon2_id) > AUTH_HASH_MAX)
		goto out;
	if (!get_random(salt, sizeof(salt)))
		goto out;
	if (argon2id_hash_encoded(PW_T_COST, PW_M_COST, PW_PARALLELISM,
				  password, n, salt, sizeof(salt), PW_HASH_LEN,
				  out, AUTH_HASH_MAX) != ARGON2_OK) {
		out[0] = '\0';
		goto out;
	}
	ok = true;
out:
	OPENSSL_cleanse(salt, sizeof(salt));
	return ok;
}

/*
 * Reads the decimal number at *s (1 to 10 digits) up to max into *v and
 * moves *s past it.
 */
static bool
param(const char **s, unsigned long max, unsigned long *v)
{
	unsigned long x = 0;
	int n = 0;

	while (**s >= '0' && **s <= '9' && n < 10) {
		x = x * 10 + (unsigned long)(**s - '0');
		(*s)++;
		n++;
	}
	if (n == 0 || (**s >= '0' && **s <= '9') || x > max)
		return false;
	*v = x;
	return true;
}

/* True when encoded looks like an argon2id hash with sane parameters. */
static bool
encoded_ok(const char *encoded)
{
	static const char head[] = "$argon2id$v=19$m=";
	const char *s = encoded;
	unsigned long m, t, p;

	if (strnlen(encoded, AUTH_HASH_MAX) >= AUTH_HASH_MAX)
		return false;
	if (strncmp(s, head, sizeof(head) - 1) != 0)
		return false;
	s += sizeof(head) - 1;
	if (!param(&s, PW_MAX_M_COST, &m) || strncmp(s, ",t=", 3) != 0)
		return false;
	s += 3;
	if (!param(&s, PW_MAX_T_COST, &t) || strncmp(s, ",p=", 3) != 0)
		return false;
	s += 3;
	if (!param(&s, PW_MAX_PARALLELISM, &p) || *s != '$')
		return false;
	return t >= 1 && p >= 1 && m >= 8 * p;
}

bool
auth_password_verify(const char *encoded, const char *password)
{
	size_t n;

	if (encoded == NULL || password == NULL || !encoded_ok(encoded))
		return false;
	if ((n = strlen(password)) > AUTH_PASSWORD_MAX)
		return false;
	return argon2id_verify(encoded, password, n) == ARGON2_OK;
}

void
auth_password_dummy(const char *password)
{
	/* A hash of a random password with the current parameters, made
	 * once per process (so the first call costs two hashes). */
	static char dummy[AUTH_HASH_MAX];
	char pw[AUTH_UUID_LEN + 1];

	if (dummy[0] == '\0' &&
	    (!auth_uuid(pw) || !auth_password_hash(pw, dummy)))
		return;
	(void)auth_password_verify(dummy, password != NULL ? password : "");
}

/* API keys. */

/* Fills n characters of out with uniform base62 digits. */
static bool
base62_random(char *out, size_t n)
{
	unsigned char pool[64];
	size_t used = sizeof(pool), i = 0;

	while (i < n) {
		if (used == sizeof(pool)) {
			if (!get_random(pool, sizeof(pool)))
				return false;
			used = 0;
		}
		/* 248 = 4 * 62: bytes below it map evenly onto the 62
		 * digits; the 8 values above are thrown away. */
		if (pool[used] < 248)
			out[i++] = base62[pool[used] % 62];
		used++;
	}
	OPENSSL_cleanse(pool, sizeof(pool));
	return true;
}

bool
auth_api_key_new(char key[AUTH_KEY_LEN], char prefix[AUTH_KEY_PREFIX],
		 char hash[AUTH_SHA256_HEX])
{
	key[0] = prefix[0] = hash[0] = '\0';
	memcpy(key, KEY_TAG, KEY_TAG_LEN);
	if (!base62_random(key + KEY_TAG_LEN, KEY_DIGITS)) {
		key[0] = '\0';
		return false;
	}
	key[KEY_TAG_LEN + KEY_DIGITS] = '\0';
	return auth_api_key_parse(key, prefix, hash);
}

bool
auth_api_key_parse(const char *key, char prefix[AUTH_KEY_PREFIX],
		   char hash[AUTH_SHA256_HEX])
{
	size_t i;

	prefix[0] = hash[0] = '\0';
	if (key == NULL || strncmp(key, KEY_TAG, KEY_TAG_LEN) != 0)
		return false;
	for (i = KEY_TAG_LEN; i < KEY_TAG_LEN + KEY_DIGITS; i++)
		if (key[i] == '\0' || strchr(base62, key[i]) == NULL)
			return false;
	if (key[i] != '\0')
		return false;
	memcpy(prefix, key, AUTH_KEY_PREFIX - 1);
	prefix[AUTH_KEY_PREFIX - 1] = '\0';
	auth_sha256_hex(key, i, hash);
	return hash[0] != '\0';
}

/* JWTs. */

static bool
type_ok(const char *type)
{
	return strcmp(type, "access") == 0 || strcmp(type, "refresh") == 0;
}

/* True when facility_id fits role: "" for a super_admin, else a UUID. */
static bool
facility_ok(enum auth_role role, const char *facility_id)
{
	if (role == ROLE_SUPER_ADMIN)
		return facility_id[0] == '\0';
	return is_uuid(facility_id);
}

bool
auth_jwt_issue(const char *secret, struct auth_claims *claims, long long ttl,
	       char **token)
{
	jwt_t *jwt = NULL;
	long long now;
	size_t klen;
	bool ok = false;

	*token = NULL;
	if (secret == NULL || (klen = strlen(secret)) < AUTH_JWT_SECRET_MIN ||
	    klen > 1024)
		goto out;
	if (ttl < -AUTH_REFRESH_TTL * 100LL || ttl > AUTH_REFRESH_TTL * 100LL)
		goto out;
	if (!is_uuid(claims->sub) || auth_role_name(claims->role) == NULL ||
	    strnlen(claims->type, sizeof(claims->type)) ==
		    sizeof(claims->type) ||
	    !type_ok(claims->type) ||
	    strnlen(claims->facility_id, sizeof(claims->facility_id)) ==
		    sizeof(claims->facility_id) ||
	    !facility_ok(claims->role, claims->facility_id) ||
	    strnlen(claims->jti, sizeof(claims->jti)) == sizeof(claims->jti))
		goto out;
	if (claims->jti[0] == '\0' && strcmp(claims->type, "refresh") == 0 &&
	    !auth_uuid(claims->jti))
		goto out;
	if (claims->jti[0] != '\0' && !is_uuid(claims->jti))
		goto out;
	now = (long long)time(NULL);
	claims->iat = now;
	claims->exp = now + ttl;
	if (jwt_new(&jwt) != 0)
		goto out;
	if (jwt_set_alg(jwt, JWT_ALG_HS256, (const unsigned char *)secret,
			(int)klen) != 0)
		goto out;
	if (jwt_add_grant(jwt, "sub", claims->sub) != 0 ||
	    jwt_add_grant(jwt, "role", auth_role_name(claims->role)) != 0 ||
	    jwt_add_grant(jwt, "facility_id", claims->facility_id) != 0 ||
	    jwt_add_grant(jwt, "type", claims->type) != 0 ||
	    jwt_add_grant_int(jwt, "iat", (long)claims->iat) != 0 ||
	    jwt_add_grant_int(jwt, "exp", (long)claims->exp) != 0 ||
	    jwt_add_grant_int(jwt, "ver", (long)claims->ver) != 0)
		goto out;
	if (claims->jti[0] != '\0' &&
	    jwt_add_grant(jwt, "jti", claims->jti) != 0)
		goto out;
	*token = jwt_encode_str(jwt);
	ok = *token != NULL;
out:
	jwt_free(jwt);
	return ok;
}

/* True for text made of base64url characters and exactly two dots, none
 * of the three parts empty (an empty signature is alg "none"). */
static bool
token_shape(const char *token, size_t n)
{
	size_t i, dots = 0, part = 0;
	char c;

	for (i = 0; i < n; i++) {
		c = token[i];
		if (c == '.') {
			if (part == 0 || ++dots > 2)
				return false;
			part = 0;
		} else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			   (c >= '0' && c <= '9') || c == '-' || c == '_') {
			part++;
		} else {
			return false;
		}
	}
	return dots == 2 && part > 0;
}

/* Copies the string member name of o into out (size bytes); false when
 * it is missing, not a string or too long. */
static bool
claim_str(json_object *o, const char *name, char *out, size_t size)
{
	json_object *v;
	const char *s;
	int len;

	if (!json_object_object_get_ex(o, name, &v) ||
	    !json_object_is_type(v, json_type_string))
		return false;
	s = json_object_get_string(v);
	len = json_object_get_string_len(v);
	if (len < 0 || (size_t)len >= size || strlen(s) != (size_t)len)
		return false;
	memcpy(out, s, (size_t)len + 1);
	return true;
}

/* Reads and checks every claim of the grants JSON into *c. */
static bool
read_claims(const char *json, struct auth_claims *c)
{
	json_object *o, *v;
	char detail[128], role[16];
	int64_t iat, exp, ver = 0;
	bool ok = false;

	o = jsonin_parse(json, strlen(json), detail, sizeof(detail));
	if (o == NULL || !json_object_is_type(o, json_type_object))
		goto out;
	if (!claim_str(o, "sub", c->sub, sizeof(c->sub)) || !is_uuid(c->sub))
		goto out;
	if (!claim_str(o, "role", role, sizeof(role)) ||
	    !auth_role_from_name(role, &c->role))
		goto out;
	if (json_object_object_get_ex(o, "facility_id", &v)) {
		if (!claim_str(o, "facility_id", c->facility_id,
			       sizeof(c->facility_id)))
			goto out;
	} else {
		c->facility_id[0] = '\0';
	}
	if (!facility_ok(c->role, c->facility_id))
		goto out;
	if (!claim_str(o, "type", c->type, sizeof(c->type)) ||
	    !type_ok(c->type))
		goto out;
	if (json_object_object_get_ex(o, "jti", &v)) {
		if (!claim_str(o, "jti", c->jti, sizeof(c->jti)) ||
		    !is_uuid(c->jti))
			goto out;
	} else if (strcmp(c->type, "refresh") == 0) {
		goto out;
	}
	if (!json_object_object_get_ex(o, "iat", &v) ||
	    !jsonin_range(v, 0, INT64_MAX / 2, &iat))
		goto out;
	if (!json_object_object_get_ex(o, "exp", &v) ||
	    !jsonin_range(v, 0, INT64_MAX / 2, &exp))
		goto out;
	/* Tokens made before versions existed have none: version 0. */
	if (json_object_object_get_ex(o, "ver", &v) &&
	    !jsonin_range(v, 0, INT32_MAX, &ver))
		goto out;
	c->iat = iat;
	c->exp = exp;
	c->ver = ver;
	ok = true;
out:
	json_object_put(o);
	return ok;
}

enum auth_jwt_result
auth_jwt_verify(const char *secret, const char *token, const char *want_type,
		struct auth_claims *claims)
{
	struct auth_claims c;
	enum auth_jwt_result r = AUTH_JWT_INVALID;
	jwt_t *jwt = NULL;
	char *grants = NULL;
	size_t klen, n;

	memset(claims, 0, sizeof(*claims));
	memset(&c, 0, sizeof(c));
	if (secret == NULL || token == NULL || want_type == NULL)
		goto out;
	klen = strlen(secret);
	if (klen < AUTH_JWT_SECRET_MIN || klen > 1024)
		goto out;
	/* libjwt copies the token onto the stack (alloca): bound it. */
	n = strnlen(token, AUTH_JWT_MAX + 1);
	if (n > AUTH_JWT_MAX || !token_shape(token, n))
		goto out;
	if (jwt_decode(&jwt, token, (const unsigned char *)secret, (int)klen))
		goto out;
	if (jwt == NULL)
		goto out;
	/*
	 * libjwt verifies with whatever HMAC the header names (comparing
	 * the base64url text of the MAC with its time-safe jwt_strcmp, so
	 * a signature has one spelling); only HS256 is ours.
	 */
	if (jwt_get_alg(jwt) != JWT_ALG_HS256)
		goto out;
	if ((grants = jwt_get_grants_json(jwt, NULL)) == NULL ||
	    !read_claims(grants, &c))
		goto out;
	if (c.exp <= (long long)time(NULL)) {
		r = AUTH_JWT_EXPIRED;
		goto out;
	}
	if (strcmp(c.type, want_type) != 0) {
		r = AUTH_JWT_WRONG_TYPE;
		goto out;
	}
	*claims = c;
	r = AUTH_JWT_OK;
out:
	free(grants);
	jwt_free(jwt);
	return r;
}
