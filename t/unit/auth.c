/* SPDX-License-Identifier: MIT */
/*
 * t/unit/auth.c - passwords, JWTs, API keys, UUIDs, SHA-256 (lib/core/auth.h).
 *
 * Hostile tokens are built by hand (base64url and HMAC from OpenSSL), so
 * the checks do not rest on libjwt's own encoder.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <argon2.h>
#include <jwt.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/auth.h"
#include "core/clock.h"
#include "codec/base64.h"
#include "codec/buf.h"
#include "tap.h"
#include "testutil.h"

#define SECRET "test-secret-0123456789abcdefghijklmnopqrstuvwxyz"
#define SUB "0b6f1c2e-4d5a-4e8f-9a1b-2c3d4e5f6a7b"
#define FAC "7e57fac1-1111-4222-8333-944455556666"

static const char b62[] =
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
static const char b64url[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* A UUID in lower-case 8-4-4-4-12 form, as the claims carry them. */
static bool
is_uuid(const char *s)
{
	size_t i;

	if (strlen(s) != 36)
		return false;
	for (i = 0; i < 36; i++)
		if ((i == 8 || i == 13 || i == 18 || i == 23)
			    ? s[i] != '-'
			    : strchr("0123456789abcdef", s[i]) == NULL ||
				      s[i] == '\0')
			return false;
	return true;
}

/* Appends the unpadded base64url text of n bytes to out. */
static void
b64url_append(struct buf *out, const void *p, size_t n)
{
	struct buf b;
	size_t i;

	buf_init(&b, 0);
	base64_encode(&b, p, n);
	for (i = 0; i < b.len; i++) {
		char c = (char)b.p[i];

		if (c == '=')
			break;
		if (c == '+')
			c = '-';
		else if (c == '/')
			c = '_';
		buf_putc(out, c);
	}
	buf_free(&b);
}

/*
 * A token header.payload.signature built by hand: md NULL gives an
 * empty signature, else HMAC-md with key over the first two parts.
 * Returns a malloc'd string.
 */
static char *
hand_token(const char *header, const char *payload, const EVP_MD *md,
	   const char *key)
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0;
	struct buf b;
	char *s;

	buf_init(&b, 0);
	b64url_append(&b, header, strlen(header));
	buf_putc(&b, '.');
	b64url_append(&b, payload, strlen(payload));
	if (md != NULL)
		HMAC(md, key, (int)strlen(key), b.p, b.len, mac, &maclen);
	buf_putc(&b, '.');
	b64url_append(&b, mac, maclen);
	s = malloc(b.len + 1);
	memcpy(s, b.p, b.len);
	s[b.len] = '\0';
	buf_free(&b);
	return s;
}

/* auth_jwt_verify (want_type "access") of a hand-built token signed
 * with SECRET. */
static enum auth_jwt_result
verify_hand(const char *header, const char *payload, const EVP_MD *md)
{
	struct auth_claims c;
	enum auth_jwt_result r;
	char *t;

	t = hand_token(header, payload, md, SECRET);
	r = auth_jwt_verify(SECRET, t, "access", &c);
	free(t);
	return r;
}

/* auth_jwt_verify of an HS256 token with payload, signed with SECRET. */
static enum auth_jwt_result
verify_payload(const char *payload, const char *want_type)
{
	struct auth_claims c;
	enum auth_jwt_result r;
	char *t;

	t = hand_token("{\"alg\":\"HS256\",\"typ\":\"JWT\"}", payload,
		       EVP_sha256(), SECRET);
	r = auth_jwt_verify(SECRET, t, want_type, &c);
	free(t);
	return r;
}

/* A payload with every claim, role and facility_id as given, the rest
 * fixed; extra is spliced in before the closing brace. */
static char *
payload(const char *sub, const char *role, const char *fac, const char *type,
	const char *extra)
{
	static char p[1024];
	long long now = (long long)time(NULL);

	snprintf(p, sizeof(p),
		 "{\"sub\":\"%s\",\"role\":\"%s\",\"facility_id\":\"%s\","
		 "\"type\":\"%s\",\"iat\":%lld,\"exp\":%lld%s}",
		 sub, role, fac, type, now, now + 600, extra);
	return p;
}

static void
test_roles(void)
{
	enum auth_role r,
		all[] = {ROLE_USER, ROLE_FACILITY_ADMIN, ROLE_SUPER_ADMIN};
	size_t i;

	for (i = 0; i < 3; i++) {
		r = (enum auth_role)99;
		ok(auth_role_name(all[i]) != NULL &&
			   auth_role_from_name(auth_role_name(all[i]), &r) &&
			   r == all[i],
		   "role %s round trip", auth_role_name(all[i]));
	}
	is_str(auth_role_name(ROLE_USER), "user", "user");
	is_str(auth_role_name(ROLE_FACILITY_ADMIN), "facility_admin",
	       "facility_admin");
	is_str(auth_role_name(ROLE_SUPER_ADMIN), "super_admin", "super_admin");
	ok(auth_role_name((enum auth_role)3) == NULL, "role 3 has no name");
	ok(!auth_role_from_name("admin", &r) && !auth_role_from_name("", &r) &&
		   !auth_role_from_name("User", &r) &&
		   !auth_role_from_name("super_admin ", &r) &&
		   !auth_role_from_name(NULL, &r),
	   "unknown role names refused");
}

static void
test_equal(void)
{
	ok(auth_equal("secret", "secret"), "equal strings");
	ok(!auth_equal("secret", "secreT"), "different last character");
	ok(!auth_equal("Secret", "secret"), "different first character");
	ok(!auth_equal("secret", "secrets"), "different lengths");
	ok(!auth_equal("secrets", "secret"), "different lengths, other way");
	ok(auth_equal("", ""), "empty equals empty");
	ok(!auth_equal("", "x") && !auth_equal("x", ""), "empty vs not");
	ok(!auth_equal(NULL, "x") && !auth_equal("x", NULL) &&
		   !auth_equal(NULL, NULL),
	   "NULL never equal");
}

static void
test_sha256(void)
{
	char out[AUTH_SHA256_HEX], *m;

	auth_sha256_hex("abc", 3, out);
	is_str(out,
	       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a"
	       "d",
	       "SHA-256 \"abc\" (FIPS 180-2 B.1)");
	m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	auth_sha256_hex(m, strlen(m), out);
	is_str(out,
	       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c"
	       "1",
	       "SHA-256 448-bit message (FIPS 180-2 B.2)");
	m = malloc(1000000);
	memset(m, 'a', 1000000);
	auth_sha256_hex(m, 1000000, out);
	free(m);
	is_str(out,
	       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd"
	       "0",
	       "SHA-256 one million 'a' (FIPS 180-2 B.3)");
	auth_sha256_hex("", 0, out);
	is_str(out,
	       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85"
	       "5",
	       "SHA-256 of nothing");
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* True when the n strings of size bytes each at p are all distinct. */
static bool
distinct(char *p, size_t n, size_t size)
{
	size_t i;

	qsort(p, n, size, cmp_str);
	for (i = 1; i < n; i++)
		if (strcmp(p + (i - 1) * size, p + i * size) == 0)
			return false;
	return true;
}

static bool
uuid_v4_form(const char *u)
{
	return is_uuid(u) && u[14] == '4' && strchr("89ab", u[19]) &&
	       u[19] != '\0';
}

static void
test_uuid(void)
{
	static char all[1000][AUTH_UUID_LEN + 1];
	bool good = true;
	size_t i;

	for (i = 0; i < 1000; i++)
		good = good && auth_uuid(all[i]) && uuid_v4_form(all[i]) &&
		       strlen(all[i]) == 36;
	ok(good, "1000 UUIDs: 8-4-4-4-12 lower-case hex, version 4, "
		 "variant 8/9/a/b");
	if (!good)
		diag("last: %s", all[i - 1]);
	ok(distinct(&all[0][0], 1000, sizeof(all[0])), "1000 UUIDs distinct");
}

static bool
key_form(const char *key, const char *prefix, const char *hash)
{
	char want[AUTH_SHA256_HEX];
	size_t i;

	if (strncmp(key, "xmk_", 4) != 0 || strlen(key) != 4 + 43)
		return false;
	for (i = 4; key[i] != '\0'; i++)
		if (strchr(b62, key[i]) == NULL)
			return false;
	if (strlen(prefix) != 12 || strncmp(prefix, key, 12) != 0)
		return false;
	auth_sha256_hex(key, strlen(key), want);
	return strcmp(hash, want) == 0;
}

/* Chi-square statistic of counts[n] against a uniform expectation. */
static double
chi2(const unsigned long *counts, size_t n)
{
	unsigned long total = 0;
	double e, x = 0;
	size_t i;

	for (i = 0; i < n; i++)
		total += counts[i];
	e = (double)total / (double)n;
	for (i = 0; i < n; i++)
		x += ((double)counts[i] - e) * ((double)counts[i] - e) / e;
	return x;
}

static void
test_api_keys(void)
{
	static char keys[1000][AUTH_KEY_LEN];
	static unsigned long all[62], pos[43][62];
	char key[AUTH_KEY_LEN], prefix[AUTH_KEY_PREFIX], hash[AUTH_SHA256_HEX];
	char p2[AUTH_KEY_PREFIX], h2[AUTH_SHA256_HEX], bad[64];
	double x, worst = 0;
	bool good = true;
	size_t i, j;

	ok(auth_api_key_new(key, prefix, hash), "auth_api_key_new");
	diag("example key %s, prefix %s", key, prefix);
	is_int(strlen(key), 47, "key length 4 + 43");
	ok(strncmp(key, "xmk_", 4) == 0, "key starts with xmk_");
	ok(key_form(key, prefix, hash),
	   "base62 after the prefix; key_prefix the first 12 characters; "
	   "hash the SHA-256 hex of the key");
	ok(auth_api_key_parse(key, p2, h2) && strcmp(p2, prefix) == 0 &&
		   strcmp(h2, hash) == 0,
	   "auth_api_key_parse gives the same prefix and hash");

	for (i = 0; i < 1000; i++)
		good = good && auth_api_key_new(keys[i], prefix, hash) &&
		       key_form(keys[i], prefix, hash);
	ok(good, "1000 keys well-formed");
	ok(distinct(&keys[0][0], 1000, sizeof(keys[0])), "1000 keys distinct");

	for (i = 0; i < 10000; i++) {
		if (!auth_api_key_new(key, prefix, hash))
			break;
		for (j = 0; j < 43; j++) {
			size_t d = (size_t)(strchr(b62, key[4 + j]) - b62);

			all[d]++;
			pos[j][d]++;
		}
	}
	/* 61 degrees of freedom: mean 61, sd 11; 200 is beyond 1e-15. */
	x = chi2(all, 62);
	ok(x < 200,
	   "base62 digits of 10000 keys uniform (chi-square %.1f, "
	   "61 df)",
	   x);
	for (j = 0; j < 43; j++)
		if ((x = chi2(pos[j], 62)) > worst)
			worst = x;
	/* 43 tests of 10000 digits each; a bias of the leading digit (as a
	 * plain big-number conversion has) would be far above. */
	ok(worst < 200, "every digit position uniform (worst chi-square %.1f)",
	   worst);

	ok(!auth_api_key_parse("", p2, h2) && p2[0] == '\0' && h2[0] == '\0',
	   "parse refuses empty");
	ok(!auth_api_key_parse(NULL, p2, h2), "parse refuses NULL");
	strcpy(bad, keys[0]);
	bad[0] = 'X';
	ok(!auth_api_key_parse(bad, p2, h2), "parse refuses another prefix");
	strcpy(bad, keys[0]);
	bad[46] = '\0';
	ok(!auth_api_key_parse(bad, p2, h2), "parse refuses 42 digits");
	strcpy(bad, keys[0]);
	strcat(bad, "A");
	ok(!auth_api_key_parse(bad, p2, h2), "parse refuses 44 digits");
	strcpy(bad, keys[0]);
	bad[20] = '-';
	ok(!auth_api_key_parse(bad, p2, h2),
	   "parse refuses a non-base62 digit");
	strcpy(bad, keys[0]);
	bad[20] = '\n';
	ok(!auth_api_key_parse(bad, p2, h2), "parse refuses a newline");
}

static void
test_passwords(void)
{
	char h[AUTH_HASH_MAX], h2[AUTH_HASH_MAX], old[AUTH_HASH_MAX];
	char long_pw[AUTH_PASSWORD_MAX + 2];
	unsigned char salt[16] = "0123456789abcdef";
	double t0, t;
	size_t i;

	ok(auth_password_hash("correct horse battery staple", h),
	   "password hash");
	diag("encoded: %s", h);
	ok(strncmp(h, "$argon2id$v=19$m=19456,t=2,p=1$", 31) == 0,
	   "encoded form names argon2id, m=19456, t=2, p=1");
	ok(strlen(h) < AUTH_HASH_MAX, "fits AUTH_HASH_MAX");
	ok(auth_password_verify(h, "correct horse battery staple"),
	   "right password verifies");
	ok(!auth_password_verify(h, "correct horse battery stapler"),
	   "wrong password refused");
	ok(!auth_password_verify(h, ""), "empty password refused");
	ok(auth_password_hash("correct horse battery staple", h2) &&
		   strcmp(h, h2) != 0,
	   "same password, different salt, different hash");
	ok(auth_password_hash("", h2) && auth_password_verify(h2, "") &&
		   !auth_password_verify(h2, " "),
	   "empty password hashes and verifies only itself");
	ok(auth_password_hash("p\xc3\xa4ss\xe2\x82\xac", h2) &&
		   auth_password_verify(h2, "p\xc3\xa4ss\xe2\x82\xac"),
	   "UTF-8 password");

	ok(argon2id_hash_encoded(1, 8192, 2, "old password", 12, salt,
				 sizeof(salt), 32, old,
				 sizeof(old)) == ARGON2_OK,
	   "a hash made with t=1, m=8192, p=2");
	ok(auth_password_verify(old, "old password"),
	   "hash of another parameter set verifies");
	ok(!auth_password_verify(old, "old passworD"),
	   "... and refuses a wrong password");
	ok(argon2i_hash_encoded(2, 8192, 1, "old password", 12, salt,
				sizeof(salt), 32, h2,
				sizeof(h2)) == ARGON2_OK &&
		   !auth_password_verify(h2, "old password"),
	   "argon2i (not id) hash refused");

	memset(long_pw, 'x', sizeof(long_pw) - 1);
	long_pw[sizeof(long_pw) - 1] = '\0';
	ok(!auth_password_hash(long_pw, h2), "password over %d bytes refused",
	   AUTH_PASSWORD_MAX);
	long_pw[AUTH_PASSWORD_MAX] = '\0';
	ok(auth_password_hash(long_pw, h2) && auth_password_verify(h2, long_pw),
	   "password of %d bytes accepted", AUTH_PASSWORD_MAX);

	{
		static const char *garbage[] = {
			"",
			"garbage",
			"$argon2id$",
			"$argon2id$v=19$m=19456,t=2,p=1$",
			"$argon2id$v=19$m=19456,t=2,p=1$$",
			"$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$",
			"$argon2id$v=19$m=4194304,t=2,p=1$c2FsdHNhbHRzYWx0$"
			"aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g",
			"$argon2id$v=19$m=19456,t=4000000000,p=1$"
			"c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA",
			"$argon2id$v=19$m=19456,t=2,p=99999999999$"
			"c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA",
			"$argon2id$v=19$m=19456,t=0,p=1$c2FsdHNhbHRzYWx0$"
			"aGFzaGhhc2hoYXNoaGFzaA",
			"$argon2id$v=16$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$"
			"aGFzaGhhc2hoYXNoaGFzaA",
			"$argon2id$v=19$m=19456,t=2,p=1$!!!!$????",
			"$argon2id$v=19$m=-1,t=2,p=1$c2FsdA$aGFzaA",
			"$2b$12$"
			"abcdefghijklmnopqrstuuABCDEFGHIJKLMNOPQRSTUVWXYZ012",
		};

		bool refused = true;

		for (i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++)
			refused = refused &&
				  !auth_password_verify(garbage[i], "password");
		ok(refused, "%zu garbage encoded strings refused",
		   sizeof(garbage) / sizeof(garbage[0]));
		strcpy(h2, h);
		h2[strlen(h2) - 5] = '\0';
		ok(!auth_password_verify(h2, "correct horse battery staple"),
		   "truncated hash refused");
		strcpy(h2, h);
		h2[strlen(h2) - 3] ^= 1;
		ok(!auth_password_verify(h2, "correct horse battery staple"),
		   "altered hash refused");
		memset(long_pw, '$', sizeof(long_pw) - 1);
		ok(!auth_password_verify(long_pw, "x"), "long garbage refused");
		ok(!auth_password_verify(NULL, "x") &&
			   !auth_password_verify(h, NULL),
		   "NULL refused");
	}

	t0 = clock_mono_s();
	auth_password_dummy("whatever");
	auth_password_dummy("whatever");
	t = clock_mono_s() - t0;
	ok(1,
	   "auth_password_dummy runs (%.0f ms for two calls, the first "
	   "also hashes)",
	   t * 1000);

	t0 = clock_mono_s();
	for (i = 0; i < 5; i++)
		auth_password_hash("timing", h2);
	t = (clock_mono_s() - t0) / 5;
	diag("Argon2id hash: %.1f ms each (mean of 5, this build)", t * 1000);
	t0 = clock_mono_s();
	for (i = 0; i < 5; i++)
		auth_password_verify(h2, "timing");
	t = (clock_mono_s() - t0) / 5;
	diag("Argon2id verify: %.1f ms each (mean of 5, this build)", t * 1000);
}

static bool
same_claims(const struct auth_claims *a, const struct auth_claims *b)
{
	return strcmp(a->sub, b->sub) == 0 && a->role == b->role &&
	       strcmp(a->facility_id, b->facility_id) == 0 &&
	       strcmp(a->type, b->type) == 0 && strcmp(a->jti, b->jti) == 0 &&
	       a->iat == b->iat && a->exp == b->exp;
}

static struct auth_claims
claims_of(const char *sub, enum auth_role role, const char *fac,
	  const char *type)
{
	struct auth_claims c;

	memset(&c, 0, sizeof(c));
	snprintf(c.sub, sizeof(c.sub), "%s", sub);
	c.role = role;
	snprintf(c.facility_id, sizeof(c.facility_id), "%s", fac);
	snprintf(c.type, sizeof(c.type), "%s", type);
	return c;
}

/* Issues a token for *c with ttl and verifies it as want_type into *got;
 * -1 when the issue fails. */
static int
roundtrip(struct auth_claims *c, long long ttl, const char *want_type,
	  struct auth_claims *got)
{
	char *t;
	int r;

	if (!auth_jwt_issue(SECRET, c, ttl, &t))
		return -1;
	r = (int)auth_jwt_verify(SECRET, t, want_type, got);
	free(t);
	return r;
}

/* Replaces the character at i of t by another base64url character. */
static void
flip(char *t, size_t i)
{
	t[i] = t[i] == 'A' ? 'B' : 'A';
}

static void
test_jwt_issue_verify(void)
{
	struct auth_claims c, got;
	char *t = NULL, *t2 = NULL;
	long long now;

	c = claims_of(SUB, ROLE_FACILITY_ADMIN, FAC, "access");
	now = (long long)time(NULL);
	ok(auth_jwt_issue(SECRET, &c, AUTH_ACCESS_TTL, &t), "issue access");
	diag("access token: %s (%zu bytes)", t, strlen(t));
	ok(c.iat >= now && c.iat <= now + 2 && c.exp == c.iat + AUTH_ACCESS_TTL,
	   "iat now, exp iat + 900");
	ok(c.jti[0] == '\0', "access token has no jti");
	is_int(auth_jwt_verify(SECRET, t, "access", &got), AUTH_JWT_OK,
	       "verify access");
	ok(same_claims(&c, &got), "every claim round trips");
	is_str(got.sub, SUB, "sub");
	is_int(got.role, ROLE_FACILITY_ADMIN, "role");
	is_str(got.facility_id, FAC, "facility_id");
	is_str(got.type, "access", "type");
	is_int(got.exp - got.iat, AUTH_ACCESS_TTL, "exp - iat");
	is_int(auth_jwt_verify(SECRET, t, "refresh", &got), AUTH_JWT_WRONG_TYPE,
	       "access token verified as refresh");
	ok(got.sub[0] == '\0' && got.exp == 0, "claims cleared on failure");

	/* Wrong secret, tampering. */
	is_int(auth_jwt_verify(SECRET "x", t, "access", &got), AUTH_JWT_INVALID,
	       "wrong secret");
	is_int(auth_jwt_verify("another-secret-0123456789abcdefghij", t,
			       "access", &got),
	       AUTH_JWT_INVALID, "another secret");
	t2 = strdup(t);
	flip(t2, (size_t)(strchr(t2, '.') - t2) + 10);
	is_int(auth_jwt_verify(SECRET, t2, "access", &got), AUTH_JWT_INVALID,
	       "tampered payload");
	strcpy(t2, t);
	flip(t2, (size_t)(strrchr(t2, '.') - t2) + 20);
	is_int(auth_jwt_verify(SECRET, t2, "access", &got), AUTH_JWT_INVALID,
	       "tampered signature");
	strcpy(t2, t);
	flip(t2, 5);
	is_int(auth_jwt_verify(SECRET, t2, "access", &got), AUTH_JWT_INVALID,
	       "tampered header");
	/* The last of 43 characters holds 4 bits and 2 unused ones: setting
	 * the lowest spells the same signature another way. */
	strcpy(t2, t);
	t2[strlen(t2) - 1] =
		b64url[(strchr(b64url, t2[strlen(t2) - 1]) - b64url) ^ 1];
	is_int(auth_jwt_verify(SECRET, t2, "access", &got), AUTH_JWT_INVALID,
	       "same signature with an unused bit set (non-canonical)");
	strcpy(t2, t);
	*strrchr(t2, '.') = '\0';
	is_int(auth_jwt_verify(SECRET, t2, "access", &got), AUTH_JWT_INVALID,
	       "signature removed");
	free(t2);
	t2 = NULL;

	/* Random single-character changes anywhere never verify. */
	{
		static const size_t rounds = 2000;
		size_t i, n = strlen(t), bad = 0;

		rnd_seed(42);
		t2 = strdup(t);
		for (i = 0; i < rounds; i++) {
			size_t at = (size_t)(rnd() % n);
			char was = t2[at];

			if (was == '.')
				continue;
			do
				t2[at] = b64url[rnd() % 64];
			while (t2[at] == was);
			if (auth_jwt_verify(SECRET, t2, "access", &got) !=
			    AUTH_JWT_INVALID)
				bad++;
			t2[at] = was;
		}
		is_int(bad, 0, "%zu random one-character changes all invalid",
		       rounds);
		free(t2);
		t2 = NULL;
	}
	free(t);
	t = NULL;

	/* Expiry. */
	c = claims_of(SUB, ROLE_USER, FAC, "access");
	is_int(roundtrip(&c, -10, "access", &got), AUTH_JWT_EXPIRED,
	       "expired token (ttl -10)");
	is_int(roundtrip(&c, -10, "refresh", &got), AUTH_JWT_EXPIRED,
	       "expired and wrong type: expired");
	is_int(roundtrip(&c, 0, "access", &got), AUTH_JWT_EXPIRED,
	       "exp == now is expired");

	/* Refresh tokens carry a jti. */
	c = claims_of(SUB, ROLE_USER, FAC, "refresh");
	is_int(roundtrip(&c, AUTH_REFRESH_TTL, "refresh", &got), AUTH_JWT_OK,
	       "issue and verify refresh");
	ok(is_uuid(c.jti), "refresh token got a jti %s", c.jti);
	ok(same_claims(&c, &got), "refresh claims round trip, jti included");
	is_int(got.exp - got.iat, AUTH_REFRESH_TTL, "refresh lifetime");
	c = claims_of(SUB, ROLE_USER, FAC, "refresh");
	is_int(roundtrip(&c, 60, "access", &got), AUTH_JWT_WRONG_TYPE,
	       "refresh token verified as access");
	c = claims_of(SUB, ROLE_USER, FAC, "refresh");
	snprintf(c.jti, sizeof(c.jti), "%s", FAC);
	is_int(roundtrip(&c, 60, "refresh", &got), AUTH_JWT_OK,
	       "refresh with a given jti");
	ok(strcmp(c.jti, FAC) == 0 && strcmp(got.jti, FAC) == 0,
	   "... keeps it");

	/* super_admin: facility_id "". */
	c = claims_of(SUB, ROLE_SUPER_ADMIN, "", "access");
	is_int(roundtrip(&c, 60, "access", &got), AUTH_JWT_OK,
	       "issue and verify super_admin");
	ok(same_claims(&c, &got) && got.role == ROLE_SUPER_ADMIN &&
		   got.facility_id[0] == '\0',
	   "super_admin claims, facility_id \"\"");
	c = claims_of(SUB, ROLE_USER, FAC, "access");
	is_int(roundtrip(&c, 60, "access", &got), AUTH_JWT_OK,
	       "issue and verify user");
	ok(same_claims(&c, &got) && got.role == ROLE_USER, "user claims");
	t = NULL;

	/* What issue refuses. */
	c = claims_of("not-a-uuid", ROLE_USER, FAC, "access");
	ok(!auth_jwt_issue(SECRET, &c, 60, &t) && t == NULL,
	   "issue refuses a non-UUID sub");
	c = claims_of(SUB, ROLE_SUPER_ADMIN, FAC, "access");
	ok(!auth_jwt_issue(SECRET, &c, 60, &t),
	   "issue refuses a super_admin with a facility");
	c = claims_of(SUB, ROLE_USER, "", "access");
	ok(!auth_jwt_issue(SECRET, &c, 60, &t),
	   "issue refuses a user without a facility");
	c = claims_of(SUB, (enum auth_role)7, FAC, "access");
	ok(!auth_jwt_issue(SECRET, &c, 60, &t), "issue refuses role 7");
	c = claims_of(SUB, ROLE_USER, FAC, "other");
	ok(!auth_jwt_issue(SECRET, &c, 60, &t), "issue refuses type other");
	c = claims_of(SUB, ROLE_USER, FAC, "access");
	ok(!auth_jwt_issue("short", &c, 60, &t),
	   "issue refuses a secret under %d characters", AUTH_JWT_SECRET_MIN);
	ok(!auth_jwt_issue(NULL, &c, 60, &t), "issue refuses a NULL secret");
	c = claims_of(SUB, ROLE_USER, FAC, "access");
	ok(auth_jwt_issue(SECRET, &c, 60, &t) &&
		   auth_jwt_verify("short", t, "access", &got) ==
			   AUTH_JWT_INVALID,
	   "verify refuses a short secret");
	free(t);
}

static void
test_jwt_hostile(void)
{
	struct auth_claims got;
	char *p, *t, extra[128];
	jwt_t *j;
	size_t i;

	p = payload(SUB, "user", FAC, "access", "");
	is_int(verify_payload(p, "access"), AUTH_JWT_OK,
	       "hand-built HS256 token verifies");
	is_int(verify_hand("{\"alg\":\"HS256\"}", p, EVP_sha256()), AUTH_JWT_OK,
	       "header without typ verifies");
	t = hand_token("{\"alg\":\"none\",\"typ\":\"JWT\"}", p, NULL, NULL);
	diag("alg none token: %s", t);
	is_int(auth_jwt_verify(SECRET, t, "access", &got), AUTH_JWT_INVALID,
	       "alg none, empty signature");
	free(t);
	{
		static const struct {
			const char *header, *what;
			const EVP_MD *(*md)(void);
		} hs[] = {
			{"{\"alg\":\"none\",\"typ\":\"JWT\"}",
			 "alg none with "
			 "an HS256 signature",
			 EVP_sha256},
			{"{\"typ\":\"JWT\"}", "no alg", EVP_sha256},
			{"{\"alg\":\"HS512\",\"typ\":\"JWT\"}",
			 "HS512 token "
			 "signed with the same secret (by hand)",
			 EVP_sha512},
			{"{\"alg\":\"HS384\",\"typ\":\"JWT\"}",
			 "HS384 token "
			 "signed with the same secret",
			 EVP_sha384},
			{"{\"alg\":\"HS256\",\"typ\":\"JWT\"}",
			 "header HS256, "
			 "signature HMAC-SHA512",
			 EVP_sha512},
			{"{\"alg\":\"RS256\",\"typ\":\"JWT\"}",
			 "RS256 header, "
			 "HMAC signature",
			 EVP_sha256},
			{"[]", "header an array", EVP_sha256},
			{"not json", "header not JSON", EVP_sha256},
		};

		for (i = 0; i < sizeof(hs) / sizeof(hs[0]); i++)
			is_int(verify_hand(hs[i].header, p, hs[i].md()),
			       AUTH_JWT_INVALID, "%s", hs[i].what);
	}

	/* HS512 made by libjwt with the same secret and claims. */
	t = NULL;
	if (jwt_new(&j) == 0) {
		if (jwt_set_alg(j, JWT_ALG_HS512, (const unsigned char *)SECRET,
				(int)strlen(SECRET)) == 0 &&
		    jwt_add_grants_json(j, p) == 0)
			t = jwt_encode_str(j);
		jwt_free(j);
	}
	ok(t != NULL && auth_jwt_verify(SECRET, t, "access", &got) ==
				AUTH_JWT_INVALID,
	   "HS512 token from libjwt with the same secret");
	free(t);

	/* Missing claims, each in turn. */
	{
		static const char *names[] = {"sub",  "role", "facility_id",
					      "type", "iat",  "exp"};
		long long now = (long long)time(NULL);
		char q[512];

		for (i = 0; i < 6; i++) {
			snprintf(q, sizeof(q), "{");
			if (i != 0)
				strcat(q, "\"sub\":\"" SUB "\",");
			if (i != 1)
				strcat(q, "\"role\":\"user\",");
			if (i != 2)
				strcat(q, "\"facility_id\":\"" FAC "\",");
			if (i != 3)
				strcat(q, "\"type\":\"access\",");
			if (i != 4)
				snprintf(q + strlen(q), sizeof(q) - strlen(q),
					 "\"iat\":%lld,", now);
			if (i != 5)
				snprintf(q + strlen(q), sizeof(q) - strlen(q),
					 "\"exp\":%lld,", now + 600);
			q[strlen(q) - 1] = '}';
			is_int(verify_payload(q, "access"), AUTH_JWT_INVALID,
			       "claim %s missing", names[i]);
		}
		snprintf(q, sizeof(q),
			 "{\"sub\":\"" SUB "\",\"role\":\"super_admin\","
			 "\"type\":\"access\",\"iat\":%lld,\"exp\":%lld}",
			 now, now + 600);
		is_int(verify_payload(q, "access"), AUTH_JWT_OK,
		       "super_admin without facility_id is fine");
		is_int(verify_payload("{}", "access"), AUTH_JWT_INVALID,
		       "payload {}");
		is_int(verify_payload("[]", "access"), AUTH_JWT_INVALID,
		       "payload []");
		is_int(verify_payload("null", "access"), AUTH_JWT_INVALID,
		       "payload null");
		is_int(verify_payload("not json", "access"), AUTH_JWT_INVALID,
		       "payload not JSON");
	}

	/* Ill-formed claims. */
	is_int(verify_payload(payload(SUB, "admin", FAC, "access", ""),
			      "access"),
	       AUTH_JWT_INVALID, "role admin");
	is_int(verify_payload(payload(SUB, "", FAC, "access", ""), "access"),
	       AUTH_JWT_INVALID, "role empty");
	is_int(verify_payload(payload(SUB, "Super_Admin", "", "access", ""),
			      "access"),
	       AUTH_JWT_INVALID, "role Super_Admin");
	is_int(verify_payload(payload("42", "user", FAC, "access", ""),
			      "access"),
	       AUTH_JWT_INVALID, "sub 42");
	is_int(verify_payload(payload("0B6F1C2E-4D5A-4E8F-9A1B-2C3D4E5F6A7B",
				      "user", FAC, "access", ""),
			      "access"),
	       AUTH_JWT_INVALID, "sub upper-case UUID");
	is_int(verify_payload(payload("", "user", FAC, "access", ""), "access"),
	       AUTH_JWT_INVALID, "sub empty");
	is_int(verify_payload(payload(SUB, "user", "", "access", ""), "access"),
	       AUTH_JWT_INVALID, "user with facility_id \"\"");
	is_int(verify_payload(payload(SUB, "user", "x", "access", ""),
			      "access"),
	       AUTH_JWT_INVALID, "facility_id not a UUID");
	is_int(verify_payload(payload(SUB, "super_admin", FAC, "access", ""),
			      "access"),
	       AUTH_JWT_INVALID, "super_admin with a facility_id");
	is_int(verify_payload(payload(SUB, "user", FAC, "session", ""),
			      "session"),
	       AUTH_JWT_INVALID, "type session");
	is_int(verify_payload(payload(SUB, "user", FAC, "refresh", ""),
			      "refresh"),
	       AUTH_JWT_INVALID, "refresh without jti");
	is_int(verify_payload(payload(SUB, "user", FAC, "refresh",
				      ",\"jti\":\"" FAC "\""),
			      "refresh"),
	       AUTH_JWT_OK, "refresh with jti");
	is_int(verify_payload(
		       payload(SUB, "user", FAC, "refresh", ",\"jti\":\"abc\""),
		       "refresh"),
	       AUTH_JWT_INVALID, "jti not a UUID");
	is_int(verify_payload(payload(SUB, "user", FAC, "access",
				      ",\"extra\":[1,{\"a\":null}]"),
			      "access"),
	       AUTH_JWT_OK, "unknown extra claims ignored");
	{
		long long now = (long long)time(NULL);
		char q[512];
		/* Text around the numbers, or a literal in their place. */
		static const struct {
			const char *ipre, *ipost, *epre, *epost, *ilit, *elit;
		} bad[] = {
			{"", "", "\"", "\"", NULL, NULL},
			{"\"", "\"", "", "", NULL, NULL},
			{"", ".5", "", "", NULL, NULL},
			{"", "", "", ".0", NULL, NULL},
			{"", "", "", "00000000000000000000", NULL, NULL},
			{"-", "", "", "", NULL, NULL},
			{"", "", "", "", NULL, "true"},
			{"", "", "", "", "null", NULL},
			{"", "", "", "", "[1]", NULL},
			{"", "", "", "", NULL, "{}"},
		};
		char inum[32], enum_[32];

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			snprintf(inum, sizeof(inum), "%lld", now);
			snprintf(enum_, sizeof(enum_), "%lld", now + 600);
			snprintf(extra, sizeof(extra),
				 "\"iat\":%s%s%s,\"exp\":%s%s%s", bad[i].ipre,
				 bad[i].ilit ? bad[i].ilit : inum, bad[i].ipost,
				 bad[i].epre, bad[i].elit ? bad[i].elit : enum_,
				 bad[i].epost);
			snprintf(q, sizeof(q),
				 "{\"sub\":\"" SUB "\",\"role\":\"user\","
				 "\"facility_id\":\"" FAC "\","
				 "\"type\":\"access\",%s}",
				 extra);
			is_int(verify_payload(q, "access"), AUTH_JWT_INVALID,
			       "iat/exp ill-typed: %s", extra);
		}
		/* sub and facility_id as raw JSON. */
		static const struct {
			const char *sub, *fac, *what;
		} raw[] = {
			{"42", "\"" FAC "\"", "sub a number"},
			{"\"" SUB "\"", "null", "facility_id null"},
			{"\"" SUB "\"", "[\"" FAC "\"]",
			 "facility_id an array"},
			{"\"" SUB "\\u0000x\"", "\"" FAC "\"",
			 "sub with an embedded NUL"},
			{"\"" SUB "\"", "\"" FAC "\\u0000\"",
			 "facility_id with an embedded NUL"},
		};

		for (i = 0; i < sizeof(raw) / sizeof(raw[0]); i++) {
			snprintf(q, sizeof(q),
				 "{\"sub\":%s,\"role\":\"user\","
				 "\"facility_id\":%s,\"type\":\"access\","
				 "\"iat\":%lld,\"exp\":%lld}",
				 raw[i].sub, raw[i].fac, now, now + 600);
			is_int(verify_payload(q, "access"), AUTH_JWT_INVALID,
			       "%s", raw[i].what);
		}
	}
}

static void
test_jwt_garbage(void)
{
	static const char *garbage[] = {
		"",
		".",
		"..",
		"...",
		"a",
		"a.b",
		"a.b.c",
		"a.b.c.d",
		"eyJhbGciOiJIUzI1NiJ9",
		"eyJhbGciOiJIUzI1NiJ9..",
		"eyJhbGciOiJIUzI1NiJ9.e30.",
		"eyJhbGciOiJIUzI1NiJ9.e30.AAAA",
		"eyJhbGciOiJIUzI1NiJ9.e30.!!!!",
		"Bearer eyJhbGciOiJIUzI1NiJ9.e30.AAAA",
		"====.====.====",
		"\xff\xfe.\x80.\x01",
	};
	struct auth_claims got;
	char *big;
	bool all = true;
	size_t i;

	for (i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++)
		if (auth_jwt_verify(SECRET, garbage[i], "access", &got) !=
		    AUTH_JWT_INVALID) {
			all = false;
			diag("accepted: \"%s\"", garbage[i]);
		}
	ok(all, "%zu garbage strings invalid",
	   sizeof(garbage) / sizeof(garbage[0]));
	is_int(auth_jwt_verify(SECRET, NULL, "access", &got), AUTH_JWT_INVALID,
	       "NULL token");
	is_int(auth_jwt_verify(NULL, "a.b.c", "access", &got), AUTH_JWT_INVALID,
	       "NULL secret");

	big = malloc(10241);
	memset(big, '.', 10240);
	big[10240] = '\0';
	is_int(auth_jwt_verify(SECRET, big, "access", &got), AUTH_JWT_INVALID,
	       "10 KB of dots");
	memset(big, 'A', 10240);
	big[100] = big[200] = '.';
	is_int(auth_jwt_verify(SECRET, big, "access", &got), AUTH_JWT_INVALID,
	       "10 KB token-shaped");
	memset(big, 'A', AUTH_JWT_MAX);
	big[10] = big[20] = '.';
	big[AUTH_JWT_MAX] = '\0';
	is_int(auth_jwt_verify(SECRET, big, "access", &got), AUTH_JWT_INVALID,
	       "token-shaped, AUTH_JWT_MAX long");
	free(big);

	/* Random bytes and random base64url with two dots. */
	rnd_seed(7);
	for (i = 0; i < 2000 && all; i++) {
		char s[200];
		size_t n = (size_t)(rnd() % sizeof(s)), j;

		for (j = 0; j < n; j++)
			s[j] = (i & 1) ? (char)(rnd() % 255 + 1)
				       : b64url[rnd() % 64];
		s[n] = '\0';
		if (n > 10 && !(i & 1)) {
			s[rnd() % (n / 2)] = '.';
			s[n / 2 + rnd() % (n / 2)] = '.';
		}
		all = auth_jwt_verify(SECRET, s, "access", &got) ==
		      AUTH_JWT_INVALID;
	}
	ok(all, "2000 random strings invalid");
}

int
main(void)
{
	test_roles();
	test_equal();
	test_sha256();
	test_uuid();
	test_api_keys();
	test_passwords();
	test_jwt_issue_verify();
	test_jwt_hostile();
	test_jwt_garbage();
	return tap_done();
}
