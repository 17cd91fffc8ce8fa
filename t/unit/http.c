/* SPDX-License-Identifier: MIT */
/*
 * t/unit/http.c - lib/web/http on hand-made FastCGI requests
 * (t/lib/fcgimem.h): the query string, Content-Length, the body read
 * with a limit (whole, in pieces, cut by a read error), header values
 * both ways, and the answer as http_send() writes it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "web/http.h"

#include "fcgimem.h"
#include "tap.h"

/* One request: m holds the FastCGI side, req and resp lib/web/http's. */
struct t {
	struct fcgimem m;
	struct http_req req;
	struct http_resp resp;
	char *env[8];
	char *qs;    /* the QUERY_STRING parameter, malloc'd */
	bool inited; /* http_req_init() answered true */
};

/*
 * Starts a GET with the query qs (NULL: no QUERY_STRING) and the extra
 * "NAME=VALUE" parameters of extra (NULL-terminated, NULL for none),
 * with no body.
 */
static bool
start(struct t *t, const char *qs, const char *const *extra)
{
	size_t n = 0;

	memset(t, 0, sizeof(*t));
	t->env[n++] = "REQUEST_METHOD=GET";
	t->env[n++] = "SCRIPT_NAME=/api/v1";
	t->env[n++] = "PATH_INFO=/things";
	if (qs != NULL) {
		if ((t->qs = malloc(strlen(qs) + 14)) == NULL)
			abort();
		snprintf(t->qs, strlen(qs) + 14, "QUERY_STRING=%s", qs);
		t->env[n++] = t->qs;
	}
	for (; extra != NULL && *extra != NULL; extra++)
		t->env[n++] = (char *)*extra;
	t->env[n] = NULL;
	fcgimem_init(&t->m, t->env, "", 0, NULL, 0, false);
	http_resp_init(&t->resp);
	t->inited = http_req_init(&t->req, &t->m.req, &t->resp);
	return t->inited;
}

static void
finish(struct t *t)
{
	free(t->qs);
	http_req_free(&t->req);
	http_resp_free(&t->resp);
	fcgimem_free(&t->m);
}

/* The answer's body as text (NUL-terminated in a copy kept in static). */
static const char *
body_text(const struct http_resp *resp)
{
	static char s[4096];
	size_t n =
		resp->body.len < sizeof(s) - 1 ? resp->body.len : sizeof(s) - 1;

	memcpy(s, resp->body.p != NULL ? (const char *)resp->body.p : "", n);
	s[n] = '\0';
	return s;
}

/* The request was refused with status and a detail holding want. */
static void
refused(struct t *t, int status, const char *want, const char *name)
{
	const char *b = body_text(&t->resp);

	if (!ok(!t->inited && t->resp.status == status &&
			strstr(b, want) != NULL,
		"%s: %d, \"%s\"", name, status, want))
		diag("inited %d, status %d, body %s", t->inited, t->resp.status,
		     b);
}

static void
test_query(void)
{
	static const char *const bad[] = {
		"%",	   "a=%",   "a=%4",    "a=%zz", "a=%4g", "a%2=1",
		"a=1&b=%", "a=%0",  "a=%g0",   "%%41",	"a=%-1", "a=% 1",
		"a=%00",   "%00=1", "a=x%00y", "a=%000"};
	struct t t;
	char qs[512];
	size_t n;

	ok(start(&t, NULL, NULL) && t.req.nquery == 0 &&
		   strcmp(t.req.path, "/api/v1/things") == 0 &&
		   strcmp(t.req.method, "GET") == 0,
	   "no QUERY_STRING: no parameters; path is SCRIPT_NAME+PATH_INFO");
	ok(http_query(&t.req, "a") == NULL, "http_query of an absent name");
	finish(&t);

	ok(start(&t, "a=1&b=x%20y+z&c=%e2%82%AC&d=%41%3d%26%2B", NULL) &&
		   t.req.nquery == 4,
	   "four parameters");
	is_str(http_query(&t.req, "a"), "1", "a=1");
	is_str(http_query(&t.req, "b"), "x y z", "%%20 and + decode to spaces");
	is_str(http_query(&t.req, "c"), "\xe2\x82\xac",
	       "%%e2%%82%%AC (either case) decodes to the euro sign");
	is_str(http_query(&t.req, "d"), "A=&+", "encoded = & + are data");
	finish(&t);

	ok(start(&t, "k=1&k=2&k=3", NULL) && t.req.nquery == 3,
	   "a repeated name is kept each time");
	is_str(http_query(&t.req, "k"), "1", "http_query gives the first one");
	is_str(t.req.query[2].value, "3", "the third is there in order");
	finish(&t);

	ok(start(&t, "a=&b&=c&&d=e=f&", NULL) && t.req.nquery == 4,
	   "empty values, an empty name, empty pieces skipped");
	is_str(http_query(&t.req, "a"), "", "a= is empty");
	is_str(http_query(&t.req, "b"), "", "b without = is empty");
	is_str(http_query(&t.req, ""), "c", "=c has an empty name");
	is_str(http_query(&t.req, "d"), "e=f", "the first = splits");
	finish(&t);

	ok(start(&t, "%62%2B=%20", NULL), "an encoded name");
	is_str(http_query(&t.req, "b+"), " ", "it decodes as the value does");
	finish(&t);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		start(&t, bad[i], NULL);
		refused(&t, 400, "malformed query string", bad[i]);
		finish(&t);
	}

	/* HTTP_MAX_QUERY parameters, then one more. */
	n = 0;
	for (int i = 0; i < HTTP_MAX_QUERY; i++)
		n += (size_t)snprintf(qs + n, sizeof(qs) - n, "%sp%d=%d",
				      i > 0 ? "&" : "", i, i);
	ok(start(&t, qs, NULL) && t.req.nquery == HTTP_MAX_QUERY,
	   "%d parameters are taken", HTTP_MAX_QUERY);
	is_str(http_query(&t.req, "p31"), "31", "the last of them");
	finish(&t);
	snprintf(qs + n, sizeof(qs) - n, "&one=more");
	start(&t, qs, NULL);
	refused(&t, 400, "more than 32 query parameters", "one more");
	finish(&t);
	/* Empty pieces do not count. */
	n = 0;
	for (int i = 0; i < HTTP_MAX_QUERY; i++)
		n += (size_t)snprintf(qs + n, sizeof(qs) - n, "&&p%d", i);
	ok(start(&t, qs, NULL) && t.req.nquery == HTTP_MAX_QUERY,
	   "%d parameters among empty pieces", HTTP_MAX_QUERY);
	finish(&t);
}

/* A request of the parameters env (NULL-terminated) alone. */
static bool
start_env(struct t *t, char *const *env)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; env[i] != NULL; i++)
		t->env[i] = env[i];
	fcgimem_init(&t->m, t->env, "", 0, NULL, 0, false);
	http_resp_init(&t->resp);
	t->inited = http_req_init(&t->req, &t->m.req, &t->resp);
	return t->inited;
}

/* Asked as a FastCGI authorizer, which lighttpd gives no SCRIPT_NAME. */
static void
test_authorizer(void)
{
	char *lighttpd[] = {"REQUEST_METHOD=POST", "FCGI_ROLE=AUTHORIZER",
			    "REQUEST_URI=/api/v1/uploads?a=b",
			    "HTTP_CONTENT_LENGTH=1048576", NULL};
	char *responder[] = {"REQUEST_METHOD=POST", "FCGI_ROLE=RESPONDER",
			     "REQUEST_URI=/api/v1/uploads", NULL};
	char *apache[] = {"REQUEST_METHOD=POST",
			  "FCGI_ROLE=AUTHORIZER",
			  "SCRIPT_NAME=/api/v1/uploads",
			  "PATH_INFO=/x",
			  "REQUEST_URI=/elsewhere",
			  "CONTENT_LENGTH=7",
			  NULL};
	struct t t;

	ok(start_env(&t, lighttpd) && t.req.authorizer &&
		   strcmp(t.req.path, "/api/v1/uploads") == 0,
	   "an authorizer: the path of REQUEST_URI, without the query");
	ok(t.inited && t.req.content_length == 1048576,
	   "an authorizer: the length of the Content-Length header "
	   "(lighttpd's HTTP_CONTENT_LENGTH)");
	finish(&t);
	ok(start_env(&t, responder) && !t.req.authorizer &&
		   strcmp(t.req.path, "") == 0,
	   "a responder: never REQUEST_URI");
	finish(&t);
	ok(start_env(&t, apache) && t.req.authorizer &&
		   strcmp(t.req.path, "/api/v1/uploads/x") == 0,
	   "an authorizer given SCRIPT_NAME (Apache): SCRIPT_NAME and "
	   "PATH_INFO");
	ok(t.inited && t.req.content_length == -1,
	   "an authorizer given CONTENT_LENGTH only (Apache): no length, "
	   "no gate (mod_fcgid would make its 413 a 401)");
	finish(&t);
}

/* A request rewritten to a program file, NAME.cgi (an .htaccess,
 * doc/shared-hosting.md): the path is PATH_INFO. */
static void
test_cgi_file(void)
{
	char *rewritten[] = {"REQUEST_METHOD=GET",
			     "SCRIPT_NAME=/~u/xmhub/auth.cgi",
			     "PATH_INFO=/api/auth/me", NULL};
	char *prefix[] = {"REQUEST_METHOD=GET", "SCRIPT_NAME=/api/auth",
			  "PATH_INFO=/me.cgi", NULL};
	char *bare[] = {"REQUEST_METHOD=GET", "SCRIPT_NAME=/x/.cgi",
			"PATH_INFO=/api/auth/me", NULL};
	struct t t;

	ok(start_env(&t, rewritten) && strcmp(t.req.path, "/api/auth/me") == 0,
	   "SCRIPT_NAME a program file: the path is PATH_INFO");
	finish(&t);
	ok(start_env(&t, prefix) && strcmp(t.req.path, "/api/auth/me.cgi") == 0,
	   "a path ending in .cgi: SCRIPT_NAME and PATH_INFO");
	finish(&t);
	ok(start_env(&t, bare) &&
		   strcmp(t.req.path, "/x/.cgi/api/auth/me") == 0,
	   "a file named .cgi alone is no program file");
	finish(&t);
	ok(http_cgi_file("/a/health.cgi") && !http_cgi_file("/a/health") &&
		   !http_cgi_file(".cgi") && !http_cgi_file("/api/v1.cgix"),
	   "http_cgi_file: NAME.cgi only");
}

static void
test_request(void)
{
	char *no_method[] = {"REQUEST_METHOD", NULL};
	const char *extra[3];
	struct t t;
	char *auth;

	/* FCGX_GetParam matches "NAME=": "REQUEST_METHOD" alone is none. */
	start_env(&t, no_method);
	refused(&t, 400, "no request method", "no REQUEST_METHOD");
	finish(&t);

	/* A long header value comes through whole; its checks are the
	 * reader's (lib/web/authn). */
	if ((auth = malloc(20001)) == NULL)
		abort();
	memcpy(auth, "HTTP_AUTHORIZATION=", 19);
	memset(auth + 19, 'b', 19981);
	auth[20000] = '\0';
	extra[0] = auth;
	extra[1] = "HTTP_X_API_KEY=k\x01y";
	extra[2] = NULL;
	ok(start(&t, NULL, extra) && t.req.authorization != NULL &&
		   strlen(t.req.authorization) == 19981 &&
		   strcmp(t.req.api_key, "k\x01y") == 0 &&
		   t.req.content_type == NULL,
	   "a 19981-byte Authorization whole, X-Api-Key as sent, no "
	   "Content-Type");
	finish(&t);
	free(auth);
}

/* Content-Length values: accepted (with the value) or 400. */
static void
test_content_length(void)
{
	static const struct {
		const char *cl;
		long long want; /* -2: refused */
	} cases[] = {
		{"CONTENT_LENGTH=", -1},
		{"CONTENT_LENGTH=0", 0},
		{"CONTENT_LENGTH=00", 0},
		{"CONTENT_LENGTH=12", 12},
		{"CONTENT_LENGTH=9223372036854775807", 9223372036854775807LL},
		{"CONTENT_LENGTH=9223372036854775808", -2},
		{"CONTENT_LENGTH=99999999999999999999", -2},
		{"CONTENT_LENGTH=18446744073709551617", -2},
		{"CONTENT_LENGTH=-1", -2},
		{"CONTENT_LENGTH=-0", -2},
		{"CONTENT_LENGTH=+12", -2},
		{"CONTENT_LENGTH= 12", -2},
		{"CONTENT_LENGTH=12 ", -2},
		{"CONTENT_LENGTH=12abc", -2},
		{"CONTENT_LENGTH=abc", -2},
		{"CONTENT_LENGTH=0x10", -2},
		{"CONTENT_LENGTH=1e3", -2},
		{"CONTENT_LENGTH=1.0", -2},
		{"CONTENT_LENGTH=1,2", -2},
	};
	const char *extra[2] = {NULL, NULL};
	struct t t;

	ok(start(&t, NULL, NULL) && t.req.content_length == -1,
	   "no Content-Length: -1");
	finish(&t);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		extra[0] = cases[i].cl;
		start(&t, NULL, extra);
		if (cases[i].want == -2)
			refused(&t, 400, "bad Content-Length", cases[i].cl);
		else
			is_int(t.inited ? t.req.content_length : -3,
			       cases[i].want, "%s", cases[i].cl);
		finish(&t);
	}
}

/*
 * Starts a POST whose body is the len bytes at body, read in the ncut
 * pieces of cuts, failing at its end when fail, with Content-Length cl
 * (NULL: none).
 */
static bool
start_body(struct t *t, const char *cl, const void *body, size_t len,
	   const size_t *cuts, size_t ncut, bool fail)
{
	size_t n = 0;

	memset(t, 0, sizeof(*t));
	t->env[n++] = "REQUEST_METHOD=POST";
	t->env[n++] = "CONTENT_TYPE=application/json";
	if (cl != NULL)
		t->env[n++] = (char *)cl;
	t->env[n] = NULL;
	fcgimem_init(&t->m, t->env, body, len, cuts, ncut, fail);
	http_resp_init(&t->resp);
	t->inited = http_req_init(&t->req, &t->m.req, &t->resp);
	return t->inited;
}

/* req->body holds exactly the len bytes at want. */
static bool
body_is(const struct t *t, const void *want, size_t len)
{
	return t->req.body.len == len &&
	       (len == 0 || memcmp(t->req.body.p, want, len) == 0);
}

static void
test_body(void)
{
	static const size_t odd[] = {3, 0, 7, 1, 100000};
	static char big[200000];
	size_t ones[64];
	char piece[7];
	struct t t;
	long got;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	for (size_t i = 0; i < 64; i++)
		ones[i] = 1;

	ok(start_body(&t, NULL, "", 0, NULL, 0, false) &&
		   http_read_body(&t.req, 10, &t.resp) && body_is(&t, "", 0),
	   "an empty body without Content-Length");
	finish(&t);
	ok(start_body(&t, "CONTENT_LENGTH=0", "", 0, NULL, 0, false) &&
		   http_read_body(&t.req, 0, &t.resp) && body_is(&t, "", 0),
	   "Content-Length 0, limit 0");
	finish(&t);
	ok(start_body(&t, "CONTENT_LENGTH=10", big, 10, NULL, 0, false) &&
		   http_read_body(&t.req, 10, &t.resp) && body_is(&t, big, 10),
	   "10 bytes at a limit of 10");
	finish(&t);
	ok(start_body(&t, NULL, big, 22, ones, 64, false) &&
		   http_read_body(&t.req, 22, &t.resp) && body_is(&t, big, 22),
	   "22 bytes one at a time");
	finish(&t);
	ok(start_body(&t, NULL, big, sizeof(big), odd, 5, false) &&
		   http_read_body(&t.req, sizeof(big), &t.resp) &&
		   body_is(&t, big, sizeof(big)),
	   "200000 bytes in pieces of 3, 0, 7, 1, 100000 and the rest");
	finish(&t);

	/* Over the caller's cap: 413, without reading when announced. */
	ok(start_body(&t, "CONTENT_LENGTH=11", big, 11, NULL, 0, false) &&
		   !http_read_body(&t.req, 10, &t.resp) &&
		   t.resp.status == 413 &&
		   strstr(body_text(&t.resp), "larger than 10 bytes") &&
		   t.m.at == 0,
	   "Content-Length 11 at a limit of 10: 413, nothing read");
	finish(&t);
	ok(start_body(&t, "CONTENT_LENGTH=9223372036854775807", big, 5, NULL, 0,
		      false) &&
		   !http_read_body(&t.req, HTTP_JSON_LIMIT, &t.resp) &&
		   t.resp.status == 413,
	   "Content-Length 2^63-1: 413");
	finish(&t);
	ok(start_body(&t, NULL, big, 11, ones, 64, false) &&
		   !http_read_body(&t.req, 10, &t.resp) &&
		   t.resp.status == 413 && t.m.at == 11,
	   "11 bytes without Content-Length at a limit of 10: 413 after "
	   "reading one past the limit");
	finish(&t);
	ok(start_body(&t, "CONTENT_LENGTH=3", big, sizeof(big), NULL, 0,
		      false) &&
		   !http_read_body(&t.req, 65536, &t.resp) &&
		   t.resp.status == 413 && t.req.body.len == 65537,
	   "a body longer than its Content-Length is still cut at the "
	   "limit: 413");
	finish(&t);
	ok(start_body(&t, "CONTENT_LENGTH=20", big, 10, odd, 5, true) &&
		   !http_read_body(&t.req, 100, &t.resp) &&
		   t.resp.status == 400 &&
		   strstr(body_text(&t.resp), "could not be read"),
	   "a read error mid-body: 400");
	finish(&t);

	/* http_body_piece: the pieces, then 0 at the end, -1 on an error. */
	start_body(&t, NULL, big, 10, ones, 64, false);
	got = http_body_piece(&t.req, piece, sizeof(piece));
	ok(got == 7 && memcmp(piece, big, 7) == 0,
	   "http_body_piece waits for 7 bytes from 1-byte pieces");
	got = http_body_piece(&t.req, piece, sizeof(piece));
	ok(got == 3 && memcmp(piece, big + 7, 3) == 0,
	   "then the last 3 at the end");
	ok(http_body_piece(&t.req, piece, sizeof(piece)) == 0, "then 0");
	finish(&t);
	start_body(&t, NULL, big, 4, NULL, 0, true);
	ok(http_body_piece(&t.req, piece, sizeof(piece)) == -1,
	   "http_body_piece: -1 when the body ends in an error");
	finish(&t);
}

/* What the multipart callbacks of test_multipart saw. */
struct parts {
	int begun, ended;
	size_t bytes;
	int stop_at; /* part_begin of this part number stops (0: never) */
};

static int
mp_begin(void *arg, const struct multipart_part *part)
{
	struct parts *p = arg;

	(void)part;
	return ++p->begun == p->stop_at;
}

static int
mp_data(void *arg, const void *d, size_t n)
{
	(void)d;
	((struct parts *)arg)->bytes += n;
	return 0;
}

static int
mp_end(void *arg)
{
	((struct parts *)arg)->ended++;
	return 0;
}

static void
test_multipart(void)
{
	static const struct multipart_cb cb = {mp_begin, mp_data, mp_end};
	static const size_t thousands[] = {1000, 1000, 1000, 1000,
					   1000, 1000, 1000, 1000};
	static char big[100000];
	static const char form[] =
		"--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n"
		"12345\r\n--b\r\nContent-Disposition: form-data; "
		"name=\"f\"; filename=\"x\"\r\n\r\nabc\r\n--b--\r\n";
	size_t len = sizeof(form) - 1, ones[256];
	struct parts p;
	char detail[64];
	struct t t;

	for (size_t i = 0; i < 256; i++)
		ones[i] = 1;
	memset(&p, 0, sizeof(p));
	start_body(&t, NULL, form, len, ones, 256, false);
	ok(http_multipart_read(&t.req, "b", &cb, &p, len, detail,
			       sizeof(detail)) == HTTP_BODY_OK &&
		   p.begun == 2 && p.ended == 2 && p.bytes == 8 &&
		   detail[0] == '\0',
	   "a form of two parts in 1-byte pieces, at a limit of its length");
	finish(&t);
	memset(&p, 0, sizeof(p));
	start_body(&t, NULL, form, len, NULL, 0, false);
	ok(http_multipart_read(&t.req, "b", &cb, &p, len - 1, detail,
			       sizeof(detail)) == HTTP_BODY_TOO_LARGE,
	   "one byte over the limit: HTTP_BODY_TOO_LARGE");
	finish(&t);
	memset(&p, 0, sizeof(p));
	p.stop_at = 2;
	start_body(&t, NULL, form, len, NULL, 0, false);
	ok(http_multipart_read(&t.req, "b", &cb, &p, len, detail,
			       sizeof(detail)) == HTTP_BODY_STOPPED &&
		   p.begun == 2 && p.ended == 1,
	   "a callback that stops: HTTP_BODY_STOPPED");
	finish(&t);
	memset(&p, 0, sizeof(p));
	start_body(&t, NULL, form, len - 4, NULL, 0, false);
	ok(http_multipart_read(&t.req, "b", &cb, &p, len, detail,
			       sizeof(detail)) == HTTP_BODY_MALFORMED &&
		   detail[0] != '\0',
	   "a body without its close delimiter: HTTP_BODY_MALFORMED, why "
	   "in detail");
	finish(&t);
	memset(&p, 0, sizeof(p));
	start_body(&t, NULL, form, 20, NULL, 0, true);
	ok(http_multipart_read(&t.req, "b", &cb, &p, len, detail,
			       sizeof(detail)) == HTTP_BODY_UNREADABLE,
	   "a read error mid-body: HTTP_BODY_UNREADABLE");
	finish(&t);

	/* http_body_drain reads up to its limit (in its pieces), then
	 * stops. */
	start_body(&t, NULL, big, sizeof(big), thousands, 8, false);
	http_body_drain(&t.req, 10);
	ok(t.m.at >= 10 && t.m.at < sizeof(big),
	   "drained 10 bytes of 100000 and not all");
	http_body_drain(&t.req, sizeof(big));
	ok(t.m.at == sizeof(big), "then the rest");
	finish(&t);
}

static void
test_json_body(void)
{
	static const struct {
		const char *body, *detail;
		int status;
	} bad[] = {
		{"[1]", "the body must be a JSON object", 400},
		{"null", "the body must be a JSON object", 400},
		{"", "JSON text ends too early", 400},
		{"{\"a\":1", "JSON text ends too early", 400},
		{"{\"k\":1,\"k\\u0000x\":3}", "\\u0000 (NUL) in an object key",
		 400},
		{"{\"k\":\"v\\u0000\"}", "\\u0000 (NUL) in a string", 400},
		{"{\"a\":\"\xff\"}", "not valid UTF-8", 400},
		{"{\"a\":\"0123456789012345678901234567\"}",
		 "larger than 32 bytes", 413},
	};
	json_object *o, *v;
	struct t t;

	start_body(&t, NULL, "{\"a\":\"b\"}", 9, NULL, 0, false);
	o = http_json_body(&t.req, 32, &t.resp);
	ok(o != NULL && json_object_object_get_ex(o, "a", &v) &&
		   strcmp(json_object_get_string(v), "b") == 0,
	   "http_json_body: {\"a\":\"b\"}");
	json_object_put(o);
	finish(&t);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		start_body(&t, NULL, bad[i].body, strlen(bad[i].body), NULL, 0,
			   false);
		o = http_json_body(&t.req, 32, &t.resp);
		if (!ok(o == NULL && t.resp.status == bad[i].status &&
				strstr(body_text(&t.resp), bad[i].detail),
			"http_json_body refuses %s: %d %s", bad[i].body,
			bad[i].status, bad[i].detail))
			diag("status %d, body %s", t.resp.status,
			     body_text(&t.resp));
		json_object_put(o);
		finish(&t);
	}
}

/* http_send()'s output for t's answer. */
static const char *
sent(struct t *t)
{
	http_send(&t->resp, &t->m.req);
	return fcgimem_answer(&t->m);
}

static void
test_answer(void)
{
	static const struct {
		const char *name, *value, *what;
	} bad[] = {
		{"X-A", "a\r\nSet-Cookie: x=1", "CR LF (header injection)"},
		{"X-A", "a\nb", "a bare LF"},
		{"X-A", "a\rb", "a bare CR"},
		{"X-A", "a\x01z", "a control character"},
		{"X-A", "a\x7f", "DEL"},
		{"X-A: b", "c", "a colon in the name"},
		{"X A", "c", "a space in the name"},
		{"", "c", "an empty name"},
		{"X-\xc3\xa9", "c", "a non-ASCII name"},
	};
	char *value, *want;
	const char *out;
	struct t t;

	start(&t, NULL, NULL);
	http_json(&t.resp, 200, json_object_new_object());
	is_str(sent(&t),
	       "Status: 200 OK\r\nContent-Type: application/json\r\n"
	       "Content-Length: 2\r\n\r\n{}",
	       "a JSON answer as sent");
	finish(&t);

	start(&t, NULL, NULL);
	is_str(sent(&t),
	       "Status: 500 Internal Server Error\r\n"
	       "Content-Type: application/json\r\nContent-Length: 27\r\n\r\n"
	       "{\"detail\":\"internal error\"}",
	       "nothing answered: 500");
	finish(&t);

	start(&t, NULL, NULL);
	http_no_store(&t.resp);
	ok(http_header(&t.resp, "X-Tab", "a\tb"), "a value with a tab");
	http_no_content(&t.resp);
	is_str(sent(&t),
	       "Status: 204 No Content\r\nCache-Control: no-store\r\n"
	       "X-Tab: a\tb\r\n\r\n",
	       "http_no_store, a tab, 204 without a body");
	finish(&t);

	/* Every 503 says when to try again, once. */
	start(&t, NULL, NULL);
	http_db_error(&t.resp, DB_UNAVAILABLE);
	is_str(sent(&t),
	       "Status: 503 Service Unavailable\r\nRetry-After: 2\r\n"
	       "Content-Type: application/json\r\nContent-Length: 40\r\n\r\n"
	       "{\"detail\":\"the database is unavailable\"}",
	       "a 503 gets Retry-After");
	finish(&t);
	start(&t, NULL, NULL);
	http_header(&t.resp, "X-A", "retry-after: 9");
	http_header(&t.resp, "retry-after", "7");
	http_error(&t.resp, 503, "busy");
	out = sent(&t);
	ok(strstr(out, "retry-after: 7\r\n") != NULL &&
		   strstr(out, "Retry-After") == NULL,
	   "a 503 keeps the caller's Retry-After (any case)");
	finish(&t);
	start(&t, NULL, NULL);
	ok(http_stream_begin(&t.resp, &t.m.req, 503, "text/plain", 0),
	   "a streamed 503");
	ok(strstr(sent(&t), "Retry-After: 2\r\n") != NULL,
	   "gets Retry-After too");
	finish(&t);
	start(&t, NULL, NULL);
	http_error(&t.resp, 500, "x");
	ok(strstr(sent(&t), "Retry-After") == NULL, "a 500 does not");
	finish(&t);

	/* A long value is sent whole (it used to be cut at 511 bytes). */
	if ((value = malloc(5001)) == NULL || (want = malloc(5100)) == NULL)
		abort();
	memset(value, 'v', 5000);
	value[5000] = '\0';
	start(&t, NULL, NULL);
	ok(http_header(&t.resp, "Location", "https://x/%s", value),
	   "a 5010-byte Location");
	http_error(&t.resp, 302, "see https://x/%s", value);
	snprintf(want, 5100, "Location: https://x/%s\r\n", value);
	out = sent(&t);
	ok(strstr(out, "Status: 302 Found\r\n") == out &&
		   strstr(out, want) != NULL,
	   "it is sent whole");
	snprintf(want, 5100, "{\"detail\":\"see https://x/%s\"}", value);
	ok(strstr(out, want) != NULL, "so is a 5014-byte detail");
	finish(&t);
	free(value);
	free(want);

	/* Values and names that cannot be sent: false, then a 500. */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		start(&t, NULL, NULL);
		http_header(&t.resp, "X-Before", "1");
		ok(!http_header(&t.resp, bad[i].name, "%s", bad[i].value),
		   "http_header refuses %s", bad[i].what);
		http_json(&t.resp, 200, json_object_new_object());
		out = sent(&t);
		if (!ok(strstr(out, "Status: 500 ") == out &&
				strstr(out, "X-Before") == NULL &&
				strstr(out, "Set-Cookie") == NULL &&
				strstr(out, "internal error") != NULL,
			"the answer is a 500 without the headers"))
			diag("sent %s", out);
		finish(&t);
	}

	/* A streamed answer after a failed header sends nothing. */
	start(&t, NULL, NULL);
	http_header(&t.resp, "X-A", "a\r\n");
	ok(!http_stream_begin(&t.resp, &t.m.req, 200, "audio/webm", 5),
	   "http_stream_begin: false after a failed header");
	out = sent(&t);
	ok(strstr(out, "Status: 500 ") == out, "http_send then answers 500");
	finish(&t);
	start(&t, NULL, NULL);
	http_header(&t.resp, "Content-Range", "bytes 0-4/10");
	ok(http_stream_begin(&t.resp, &t.m.req, 206, "audio/webm", 5) &&
		   http_stream_write(&t.m.req, "hello", 5),
	   "a streamed answer");
	is_str(sent(&t),
	       "Status: 206 Partial Content\r\nContent-Range: bytes 0-4/10\r\n"
	       "Content-Type: audio/webm\r\nContent-Length: 5\r\n\r\nhello",
	       "it is sent once, http_send adding nothing");
	finish(&t);
}

int
main(void)
{
	test_query();
	test_request();
	test_authorizer();
	test_cgi_file();
	test_content_length();
	test_body();
	test_multipart();
	test_json_body();
	test_answer();
	return tap_done();
}
