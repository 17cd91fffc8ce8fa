/* SPDX-License-Identifier: MIT */
/*
 * fuzz/http.c - libFuzzer target for what lib/web/http parses of a
 * client's bytes: the query string, Content-Length, the body read with
 * a limit and parsed as JSON (lib/codec/jsonin), and a header value sent
 * back (http_header, as an echoed Origin is).
 *
 * The input is a QUERY_STRING, a newline, a CONTENT_LENGTH, a newline,
 * then the body; NUL bytes end the two parameters as they would a C
 * string.  The request goes through http_req_init() on a hand-made
 * FastCGI request (t/lib/fcgimem.h) and must agree with a reference
 * reading written here, the simple way: the parameters decoded as RFC
 * 3986 form encoding (no NUL), the length as plain decimal digits.  The
 * body is read twice, in one piece and in pieces of sizes drawn from
 * the input, and both reads must end alike; a JSON object that comes
 * out must come from text without a \u0000 escape, hold only valid UTF-8
 * strings without NUL, and print as JSON that jsonin takes again and
 * prints the same.  The query line is
 * also sent back as a header value, which must be refused exactly when
 * it holds a control character other than HTAB and then turn the answer
 * into a 500.  Violations abort(), so libFuzzer keeps the input as a
 * crash artifact.
 */
#include "config.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "codec/jsonin.h"
#include "codec/utf8.h"
#include "web/http.h"

#include "check.h"
#include "fcgimem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LIMIT 1024 /* the body limit of the reads */

static int
hex(char c)
{
	const char *d = "0123456789abcdef", *p;

	if (c >= 'A' && c <= 'F')
		c = (char)(c - 'A' + 'a');
	p = c != '\0' ? strchr(d, c) : NULL;
	return p != NULL ? (int)(p - d) : -1;
}

/* Decodes s[0..n) into out (room for n + 1); false when refused. */
static bool
ref_decode(const char *s, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '+') {
			out[o++] = ' ';
			continue;
		}
		if (s[i] != '%') {
			out[o++] = s[i];
			continue;
		}
		if (n - i < 3 || hex(s[i + 1]) < 0 || hex(s[i + 2]) < 0)
			return false;
		out[o] = (char)(hex(s[i + 1]) * 16 + hex(s[i + 2]));
		if (out[o++] == '\0')
			return false;
		i += 2;
	}
	out[o] = '\0';
	return true;
}

/*
 * Checks the parameters req holds against the reference reading of qs:
 * the same pieces, decoded the same; returns whether the reference takes
 * qs (a malformed piece or more than HTTP_MAX_QUERY refuse it).
 */
static bool
ref_query(const char *qs, const struct http_req *req, bool inited)
{
	size_t n = strlen(qs), k = 0;
	char *name = malloc(n + 1), *value = malloc(n + 1);
	const char *p = qs;
	bool good = true;

	if (name == NULL || value == NULL)
		abort();
	while (good && *p != '\0') {
		size_t len = strcspn(p, "&");
		const char *eq = memchr(p, '=', len);
		size_t nl = eq != NULL ? (size_t)(eq - p) : len;

		if (len > 0) {
			good = k < HTTP_MAX_QUERY && ref_decode(p, nl, name) &&
			       ref_decode(eq != NULL ? eq + 1 : "",
					  eq != NULL ? len - nl - 1 : 0, value);
			if (good && inited) {
				CHECK(strcmp(req->query[k].name, name) == 0);
				CHECK(strcmp(req->query[k].value, value) == 0);
			}
			k += good;
		}
		p += len + (p[len] == '&');
	}
	if (good && inited)
		CHECK(req->nquery == k);
	free(name);
	free(value);
	return good;
}

/* The reference Content-Length: "" is none; else 1 to 19 digits. */
static bool
ref_length(const char *s, long long *out)
{
	unsigned long long v = 0;
	size_t n = strlen(s);

	*out = -1;
	if (n == 0)
		return true;
	if (n > 19 || strspn(s, "0123456789") != n)
		return false;
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (unsigned)(s[i] - '0'); /* 19 digits fit */
	if (v > (unsigned long long)LLONG_MAX)
		return false;
	*out = (long long)v;
	return true;
}

/* True when text holds an escaped NUL: "u0000" after an odd number of
 * backslashes (outside strings a backslash is no JSON at all). */
static bool
has_nul_escape(const uint8_t *text, size_t n)
{
	for (size_t i = 1; i + 5 <= n; i++) {
		size_t b = 0;

		if (memcmp(text + i, "u0000", 5) != 0)
			continue;
		while (b < i && text[i - 1 - b] == '\\')
			b++;
		if (b % 2 == 1)
			return true;
	}
	return false;
}

/* Every string in o, keys included, is valid UTF-8 without a NUL. */
static void
check_strings(json_object *o)
{
	size_t n;

	switch (json_object_get_type(o)) {
	case json_type_string:
		n = (size_t)json_object_get_string_len(o);
		CHECK(strlen(json_object_get_string(o)) == n);
		CHECK(xmbp_utf8_valid(
			(const uint8_t *)json_object_get_string(o), n));
		break;
	case json_type_array:
		n = json_object_array_length(o);
		for (size_t i = 0; i < n; i++)
			check_strings(json_object_array_get_idx(o, i));
		break;
	case json_type_object: {
		json_object_object_foreach(o, k, v)
		{
			CHECK(xmbp_utf8_valid((const uint8_t *)k, strlen(k)));
			check_strings(v);
		}
		break;
	}
	default:
		break;
	}
}

/* What one read of the body gave. */
struct outcome {
	int status; /* 0 when an object came out */
	char *json; /* its printed form (malloc'd), or NULL */
	size_t len; /* the body bytes read */
};

/* Parses the request (env, body in the ncut pieces of cuts) and reads
 * its body as JSON; checks the request against the reference reading. */
static void
run(char **env, const char *qs, const char *cl, const uint8_t *body, size_t n,
    const size_t *cuts, size_t ncut, struct outcome *out)
{
	struct fcgimem m;
	struct http_req req;
	struct http_resp resp;
	json_object *o, *again;
	long long want;
	bool inited, ref;
	char detail[160];
	const char *s;

	memset(out, 0, sizeof(*out));
	fcgimem_init(&m, env, body, n, cuts, ncut, false);
	http_resp_init(&resp);
	inited = http_req_init(&req, &m.req, &resp);
	ref = ref_length(cl, &want);
	ref = ref_query(qs, &req, inited && ref) && ref;
	CHECK(inited == ref);
	if (!inited) {
		CHECK(resp.status == 400);
		out->status = -1;
		goto out;
	}
	CHECK(req.content_length == want);
	CHECK(req.nquery <= HTTP_MAX_QUERY);
	if (req.nquery > 0)
		CHECK(http_query(&req, req.query[0].name) ==
		      req.query[0].value);
	o = http_json_body(&req, LIMIT, &resp);
	out->len = req.body.len;
	if (o == NULL) {
		CHECK(resp.status == 400 || resp.status == 413);
		CHECK((resp.status == 413) ==
		      (want > LIMIT || req.body.len > LIMIT));
		out->status = resp.status;
		goto out;
	}
	CHECK(req.body.len <= LIMIT && want <= LIMIT);
	CHECK(json_object_is_type(o, json_type_object));
	CHECK(!has_nul_escape(req.body.p, req.body.len));
	check_strings(o);
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	if ((out->json = strdup(s)) == NULL)
		abort();
	again = jsonin_parse(out->json, strlen(out->json), detail,
			     sizeof(detail));
	CHECK(again != NULL);
	CHECK(strcmp(json_object_to_json_string_ext(again,
						    JSON_C_TO_STRING_PLAIN),
		     out->json) == 0);
	json_object_put(again);
	json_object_put(o);
out:
	http_req_free(&req);
	http_resp_free(&resp);
	fcgimem_free(&m);
}

/* Sends value back as a header: refused exactly for control characters
 * (HTAB aside), and then the answer is a 500 without it. */
static void
header(char **env, const char *value)
{
	struct fcgimem m;
	struct http_resp resp;
	bool ctl = false, sent;
	const char *a;
	size_t n = strlen(value);

	for (size_t i = 0; i < n; i++)
		ctl |= ((unsigned char)value[i] < 0x20 && value[i] != '\t') ||
		       value[i] == 0x7f;
	fcgimem_init(&m, env, "", 0, NULL, 0, false);
	http_resp_init(&resp);
	sent = http_header(&resp, "X-Fuzz", "%s", value);
	CHECK(sent == !ctl);
	http_no_content(&resp);
	http_send(&resp, &m.req);
	a = fcgimem_answer(&m);
	if (sent) {
		CHECK(strncmp(a, "Status: 204 No Content\r\nX-Fuzz: ", 32) ==
		      0);
		CHECK(strncmp(a + 32, value, n) == 0);
		CHECK(strcmp(a + 32 + n, "\r\n\r\n") == 0);
	} else {
		CHECK(strncmp(a, "Status: 500 ", 12) == 0);
		CHECK(strstr(a, "X-Fuzz") == NULL);
	}
	http_resp_free(&resp);
	fcgimem_free(&m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl1 = memchr(data, '\n', size), *nl2;
	char *qs, *cl, *env[5];
	struct outcome whole, pieces;
	size_t *cuts, ncut = 0, at = 0, n;
	const uint8_t *body;
	uint32_t x = 2166136261u;

	if (nl1 == NULL ||
	    (nl2 = memchr(nl1 + 1, '\n', size - (size_t)(nl1 - data) - 1)) ==
		    NULL)
		return 0;
	n = (size_t)(nl1 - data);
	if ((qs = malloc(n + 14)) == NULL ||
	    (cl = malloc((size_t)(nl2 - nl1) + 15)) == NULL)
		abort();
	memcpy(qs, "QUERY_STRING=", 13);
	memcpy(qs + 13, data, n);
	qs[13 + n] = '\0';
	memcpy(cl, "CONTENT_LENGTH=", 15);
	memcpy(cl + 15, nl1 + 1, (size_t)(nl2 - nl1) - 1);
	cl[15 + (nl2 - nl1) - 1] = '\0';
	env[0] = "REQUEST_METHOD=POST";
	env[1] = qs;
	env[2] = cl;
	env[3] = NULL;
	body = nl2 + 1;
	n = size - (size_t)(body - data);

	if ((cuts = malloc((n + 1) * sizeof(*cuts))) == NULL)
		abort();
	/* Piece sizes 1..16 from an FNV-1a walk over the body. */
	while (at < n) {
		size_t step;

		x = (x ^ body[at]) * 16777619u;
		step = 1 + x % 16;
		cuts[ncut++] = step;
		at += step;
	}
	run(env, qs + 13, cl + 15, body, n, NULL, 0, &whole);
	run(env, qs + 13, cl + 15, body, n, cuts, ncut, &pieces);
	CHECK(whole.status == pieces.status);
	CHECK(whole.len == pieces.len);
	CHECK((whole.json == NULL) == (pieces.json == NULL));
	CHECK(whole.json == NULL || strcmp(whole.json, pieces.json) == 0);
	header(env, qs + 13);

	free(whole.json);
	free(pieces.json);
	free(cuts);
	free(qs);
	free(cl);
	return 0;
}
