/* SPDX-License-Identifier: MIT */
/*
 * mediaurl.c - short-lived signed URLs for browser-fetched GET routes.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "codec/uuid.h"
#include "web/mediaurl.h"

#define MAC_LEN 32
#define MAC_HEX (2 * MAC_LEN + 1)
/* Says what the derived key is for, so that it is no other use's key. */
#define KEY_LABEL "xmhub signed media URL v1"

/* out = HMAC-SHA256 with a key derived from secret over the signed
 * fields, as hex.  False when a field is too long or OpenSSL fails. */
static bool
mac_hex(const char *secret, const char *method, const char *path,
	long long expires, const char *user, const char *fac, int role,
	char out[MAC_HEX])
{
	unsigned char key[MAC_LEN], mac[EVP_MAX_MD_SIZE];
	unsigned int klen = 0, mlen = 0;
	char msg[MEDIAURL_PATH_MAX + 160];
	int n;
	bool ok = false;

	if (strlen(path) > MEDIAURL_PATH_MAX)
		goto out;
	/* Newlines separate the fields; none of them can hold one (a
	 * path is checked by the signer, the others are numbers and
	 * UUIDs). */
	n = snprintf(msg, sizeof(msg), "%s\n%s\n%lld\n%s\n%s\n%d", method, path,
		     expires, user, fac, role);
	if (n < 0 || (size_t)n >= sizeof(msg))
		goto out;
	if (HMAC(EVP_sha256(), secret, (int)strlen(secret),
		 (const unsigned char *)KEY_LABEL, strlen(KEY_LABEL), key,
		 &klen) == NULL ||
	    HMAC(EVP_sha256(), key, (int)klen, (unsigned char *)msg, (size_t)n,
		 mac, &mlen) == NULL ||
	    mlen != MAC_LEN)
		goto out;
	for (unsigned int i = 0; i < MAC_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", mac[i]);
	ok = true;
out:
	OPENSSL_cleanse(key, sizeof(key));
	return ok;
}

bool
mediaurl_sign(const char *secret, const char *path, const struct authn_who *who,
	      time_t expires, char *out, size_t outlen)
{
	char sig[MAC_HEX];
	int n;

	if (strchr(path, '\n') != NULL ||
	    !mac_hex(secret, "GET", path, (long long)expires, who->user_id,
		     who->facility_id, (int)who->role, sig))
		return false;
	n = snprintf(out, outlen,
		     "mu_exp=%lld&mu_user=%s&mu_fac=%s&mu_role=%d&mu_sig=%s",
		     (long long)expires, who->user_id, who->facility_id,
		     (int)who->role, sig);
	return n > 0 && (size_t)n < outlen;
}

bool
mediaurl_present(const struct http_req *req)
{
	return http_query(req, "mu_sig") != NULL;
}

/* A whole decimal number in [0, max]; false otherwise. */
static bool
number(const char *s, long long max, long long *v)
{
	char *end;

	if (s == NULL || *s < '0' || *s > '9' || strlen(s) > 19)
		return false;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return errno == 0 && *end == '\0' && *v <= max;
}

bool
mediaurl_check(const struct http_req *req, const char *secret, int min_role,
	       time_t now, struct authn_who *who, struct http_resp *resp)
{
	const char *user = http_query(req, "mu_user");
	const char *fac = http_query(req, "mu_fac");
	const char *sig = http_query(req, "mu_sig");
	char want[MAC_HEX];
	long long exp, role;

	if (secret == NULL || user == NULL || fac == NULL || sig == NULL ||
	    !number(http_query(req, "mu_exp"), (long long)1 << 40, &exp) ||
	    !number(http_query(req, "mu_role"), ROLE_SUPER_ADMIN, &role) ||
	    !uuid_valid(user, strlen(user)) ||
	    (*fac != '\0' && !uuid_valid(fac, strlen(fac))) ||
	    strlen(sig) != MAC_HEX - 1 ||
	    !mac_hex(secret, req->method, req->path, exp, user, fac, (int)role,
		     want) ||
	    CRYPTO_memcmp(want, sig, MAC_HEX - 1) != 0) {
		http_error(resp, 401, "invalid signed URL");
		return false;
	}
	if (exp <= (long long)now || exp > (long long)now + MEDIAURL_TTL) {
		http_error(resp, 401, "the signed URL has expired");
		return false;
	}
	if (role < min_role) {
		http_error(resp, 403, "forbidden");
		return false;
	}
	memset(who, 0, sizeof(*who));
	who->kind = ROUTE_JWT;
	who->role = (enum auth_role)role;
	snprintf(who->user_id, sizeof(who->user_id), "%s", user);
	snprintf(who->facility_id, sizeof(who->facility_id), "%s", fac);
	return true;
}
