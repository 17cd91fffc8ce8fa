/* SPDX-License-Identifier: MIT */
/*
 * http.c - one FastCGI request and its answer.
 */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "web/http.h"
#include "codec/multipart.h"
#include "codec/jsonin.h"
#include "codec/hex.h"
#include "core/log.h"

#define PIECE 65536 /* bytes of a body read at a time */

static const struct {
	int status;
	const char *reason;
} reasons[] = {
	{200, "OK"},
	{201, "Created"},
	{204, "No Content"},
	{206, "Partial Content"},
	{302, "Found"},
	{400, "Bad Request"},
	{401, "Unauthorized"},
	{403, "Forbidden"},
	{404, "Not Found"},
	{405, "Method Not Allowed"},
	{409, "Conflict"},
	{413, "Content Too Large"},
	{415, "Unsupported Media Type"},
	{416, "Range Not Satisfiable"},
	{429, "Too Many Requests"},
	{500, "Internal Server Error"},
	{501, "Not Implemented"},
	{503, "Service Unavailable"},
};

const char *
http_reason(int status)
{
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		if (reasons[i].status == status)
			return reasons[i].reason;
	return "Unknown";
}

/*
 * Decodes the n bytes at s (form encoding: %XX and '+') into a new
 * string; NULL on a bad escape, an encoded NUL or no memory.
 */
static char *
form_decode(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '+')
			*o++ = ' ';
		else if (s[i] != '%')
			*o++ = s[i];
		else if (n - i < 3 || hex_value(s[i + 1]) < 0 ||
			 hex_value(s[i + 2]) < 0 ||
			 (s[i + 1] == '0' && s[i + 2] == '0')) {
			free(out);
			return NULL;
		} else {
			*o++ = (char)(hex_value(s[i + 1]) << 4 |
				      hex_value(s[i + 2]));
			i += 2;
		}
	}
	*o = '\0';
	return out;
}

/* Splits QUERY_STRING into req->query; false on a malformed query. */
static bool
parse_query(struct http_req *req, const char *qs, struct http_resp *resp)
{
	while (*qs != '\0') {
		size_t len = strcspn(qs, "&");
		const char *eq = memchr(qs, '=', len);
		size_t nlen = eq != NULL ? (size_t)(eq - qs) : len;
		struct http_query *q;

		if (len == 0) {
			qs++;
			continue;
		}
		if (req->nquery == HTTP_MAX_QUERY) {
			http_error(resp, 400, "more than %d query parameters",
				   HTTP_MAX_QUERY);
			return false;
		}
		q = &req->query[req->nquery];
		q->name = form_decode(qs, nlen);
		q->value = eq != NULL ? form_decode(eq + 1, len - nlen - 1)
				      : form_decode("", 0);
		if (q->name == NULL || q->value == NULL) {
			free(q->name);
			free(q->value);
			http_error(resp, 400, "malformed query string");
			return false;
		}
		req->nquery++;
		qs += len;
		if (*qs == '&')
			qs++;
	}
	return true;
}

/*
 * Content-Length as the client sent it: 1 to 19 decimal digits (no sign,
 * blanks or "0x"), at most LLONG_MAX.  False for anything else.
 */
static bool
parse_length(const char *s, long long *out)
{
	long long v = 0;
	size_t n = strspn(s, "0123456789");

	if (n == 0 || s[n] != '\0' || n > 19)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (v > (LLONG_MAX - (s[i] - '0')) / 10)
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

bool
http_cgi_file(const char *script_name)
{
	size_t n = strlen(script_name);

	return n > 4 && strcmp(script_name + n - 4, ".cgi") == 0 &&
	       script_name[n - 5] != '/';
}

bool
http_req_init(struct http_req *req, FCGX_Request *fcgi, struct http_resp *resp)
{
	FCGX_ParamArray env = fcgi->envp;
	const char *script, *info, *qs, *cl, *role, *uri;
	size_t n;

	memset(req, 0, sizeof(*req));
	req->fcgi = fcgi;
	req->content_length = -1;
	buf_init(&req->body, 0);
	req->method = FCGX_GetParam("REQUEST_METHOD", env);
	script = FCGX_GetParam("SCRIPT_NAME", env);
	info = FCGX_GetParam("PATH_INFO", env);
	qs = FCGX_GetParam("QUERY_STRING", env);
	req->authorization = FCGX_GetParam("HTTP_AUTHORIZATION", env);
	req->api_key = FCGX_GetParam("HTTP_X_API_KEY", env);
	req->content_type = FCGX_GetParam("CONTENT_TYPE", env);
	req->remote_addr = FCGX_GetParam("REMOTE_ADDR", env);
	if (req->method == NULL) {
		http_error(resp, 400, "no request method");
		return false;
	}
	req->authorizer = (role = FCGX_GetParam("FCGI_ROLE", env)) != NULL &&
			  strcmp(role, "AUTHORIZER") == 0;
	/* An authorizer reads no body: lighttpd gives it no CONTENT_LENGTH
	 * but the header, HTTP_CONTENT_LENGTH, by which a gate refuses a
	 * body before it is read (app_gate()).  Apache's mod_fcgid gives
	 * its access checker CONTENT_LENGTH only, and would turn the
	 * gate's refusal (a 413) into a 401: there the program checks. */
	cl = FCGX_GetParam(req->authorizer ? "HTTP_CONTENT_LENGTH"
					   : "CONTENT_LENGTH",
			   env);
	if (cl != NULL && *cl != '\0' &&
	    !parse_length(cl, &req->content_length)) {
		req->content_length = -1;
		http_error(resp, 400, "bad Content-Length");
		return false;
	}
	/* lighttpd sends an authorizer the raw target only: a path with
	 * escapes then matches no route and is refused, as it should. */
	if (script == NULL && info == NULL && req->authorizer &&
	    (uri = FCGX_GetParam("REQUEST_URI", env)) != NULL) {
		n = strcspn(uri, "?") + 1;
		info = "";
	} else if (script != NULL && info != NULL && http_cgi_file(script)) {
		/* A program file the request was rewritten to (.htaccess,
		 * doc/shared-hosting.md): the API's path is the rest. */
		uri = info;
		info = "";
		n = strlen(uri) + 1;
	} else {
		script = script != NULL ? script : "";
		info = info != NULL ? info : "";
		uri = script;
		n = strlen(script) + strlen(info) + 1;
	}
	if ((req->path = malloc(n)) == NULL) {
		http_error(resp, 500, "out of memory");
		return false;
	}
	snprintf(req->path, n, "%s%s", uri, info);
	return parse_query(req, qs != NULL ? qs : "", resp);
}

void
http_req_free(struct http_req *req)
{
	for (size_t i = 0; i < req->nquery; i++) {
		free(req->query[i].name);
		free(req->query[i].value);
	}
	free(req->path);
	buf_free(&req->body);
	memset(req, 0, sizeof(*req));
}

void
http_resp_init(struct http_resp *resp)
{
	resp->status = 0;
	resp->content_type = NULL;
	resp->streamed = false;
	buf_init(&resp->headers, 0);
	buf_init(&resp->body, 0);
}

void
http_resp_free(struct http_resp *resp)
{
	buf_free(&resp->headers);
	buf_free(&resp->body);
	resp->status = 0;
}

const char *
http_query(const struct http_req *req, const char *name)
{
	for (size_t i = 0; i < req->nquery; i++)
		if (strcmp(req->query[i].name, name) == 0)
			return req->query[i].value;
	return NULL;
}

bool
http_read_body(struct http_req *req, size_t limit, struct http_resp *resp)
{
	int n;

	if (req->content_length > (long long)limit) {
		http_error(resp, 413, "request body larger than %zu bytes",
			   limit);
		return false;
	}
	req->body.len = 0;
	for (;;) {
		/* One byte past the limit tells "too large" from "exactly". */
		size_t want = limit + 1 - req->body.len;

		if (want > 65536)
			want = 65536;
		if (!buf_reserve(&req->body, want)) {
			http_error(resp, 500, "out of memory");
			return false;
		}
		n = FCGX_GetStr((char *)req->body.p + req->body.len, (int)want,
				req->fcgi->in);
		if (n <= 0)
			break;
		req->body.len += (size_t)n;
		if (req->body.len > limit) {
			http_error(resp, 413,
				   "request body larger than %zu bytes", limit);
			return false;
		}
	}
	if (FCGX_GetError(req->fcgi->in) != 0) {
		http_error(resp, 400, "the request body could not be read");
		return false;
	}
	return true;
}

json_object *
http_json_body(struct http_req *req, size_t limit, struct http_resp *resp)
{
	json_object *o;
	char detail[160];

	if (!http_read_body(req, limit, resp))
		return NULL;
	o = jsonin_parse((const char *)req->body.p, req->body.len, detail,
			 sizeof(detail));
	if (o == NULL) {
		http_error(resp, 400, "%s",
			   detail[0] != '\0'
				   ? detail
				   : "the body must be a JSON object");
		return NULL;
	}
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		http_error(resp, 400, "the body must be a JSON object");
		return NULL;
	}
	return o;
}

/* fmt and ap formatted into a new string (free it); NULL when out of
 * memory or the format fails. */
static char *
vformat(const char *fmt, va_list ap)
{
	va_list again;
	char *s;
	int n;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	if (n < 0 || (s = malloc((size_t)n + 1)) == NULL)
		s = NULL;
	else
		vsnprintf(s, (size_t)n + 1, fmt, again);
	va_end(again);
	return s;
}

/* True for an RFC 9110 token (a header name). */
static bool
is_token(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') ||
		      strchr("!#$%&'*+-.^_`|~", *s) != NULL))
			return false;
	return true;
}

/* True for a field value RFC 9110 allows: no control character but HTAB
 * (CR and LF would split the answer), no DEL. */
static bool
is_field_value(const char *s)
{
	for (; *s != '\0'; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			return false;
	return true;
}

bool
http_header(struct http_resp *resp, const char *name, const char *fmt, ...)
{
	const char *why = NULL;
	char *value;
	va_list ap;

	va_start(ap, fmt);
	value = vformat(fmt, ap);
	va_end(ap);
	if (value == NULL)
		why = "out of memory";
	else if (!is_token(name))
		why = "the name is not a token";
	else if (!is_field_value(value))
		why = "the value holds a control character";
	else {
		buf_printf(&resp->headers, "%s: %s\r\n", name, value);
		if (resp->headers.failed)
			why = "out of memory";
	}
	/* A header the answer needs and cannot carry is a bug here: the
	 * answer becomes a 500 (http_send) rather than go out without it
	 * or with a cut value. */
	if (why != NULL) {
		log_error("http: header %.64s refused: %s", name, why);
		resp->headers.failed = true;
	}
	free(value);
	return why == NULL;
}

void
http_no_store(struct http_resp *resp)
{
	http_header(resp, "Cache-Control", "no-store");
}

void
http_json(struct http_resp *resp, int status, json_object *obj)
{
	const char *s = json_object_to_json_string_ext(
		obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

	buf_puts(http_json_text(resp, status), s);
	json_object_put(obj);
}

struct buf *
http_json_text(struct http_resp *resp, int status)
{
	resp->status = status;
	resp->content_type = NULL;
	resp->body.len = 0;
	return &resp->body;
}

int
http_db_status(enum db_status st, const char **detail)
{
	if (st == DB_UNAVAILABLE) {
		*detail = "the database is unavailable";
		return 503;
	}
	*detail = "internal error";
	return 500;
}

void
http_db_error(struct http_resp *resp, enum db_status st)
{
	const char *detail;
	int status = http_db_status(st, &detail);

	http_error(resp, status, "%s", detail);
}

void
http_error(struct http_resp *resp, int status, const char *fmt, ...)
{
	json_object *o = NULL;
	char *detail;
	va_list ap;

	va_start(ap, fmt);
	detail = vformat(fmt, ap);
	va_end(ap);
	if (detail == NULL || (o = json_object_new_object()) == NULL ||
	    json_object_object_add(o, "detail",
				   json_object_new_string(detail)) != 0) {
		json_object_put(o);
		resp->status = 500;
		resp->body.len = 0;
		goto out;
	}
	http_json(resp, status, o);
out:
	/* A 5xx always leaves its reason in the log (the client's detail
	 * is generic; the cause was logged before, e.g. by lib/core/db). */
	if (status >= 500 || o == NULL)
		log_error("answered %d: %s", resp->status,
			  detail != NULL ? detail : "out of memory");
	free(detail);
}

void
http_no_content(struct http_resp *resp)
{
	resp->status = 204;
	resp->body.len = 0;
}

/* True when resp has a header called name (any case). */
static bool
has_header(const struct http_resp *resp, const char *name)
{
	const char *p = (const char *)resp->headers.p,
		   *end = p + resp->headers.len;
	size_t n = strlen(name);

	while (p != NULL && p < end) {
		if ((size_t)(end - p) > n && p[n] == ':' &&
		    strncasecmp(p, name, n) == 0)
			return true;
		if ((p = memchr(p, '\n', (size_t)(end - p))) != NULL)
			p++;
	}
	return false;
}

/* Every 503 says when to try again: the caller's Retry-After, or else
 * HTTP_RETRY_AFTER seconds. */
static void
add_retry_after(struct http_resp *resp)
{
	if (resp->status == 503 && !has_header(resp, "Retry-After"))
		http_header(resp, "Retry-After", "%d", HTTP_RETRY_AFTER);
}

void
http_send(struct http_resp *resp, FCGX_Request *fcgi)
{
	int status;

	if (resp->streamed)
		return;
	if (resp->status == 0 || resp->body.failed || resp->headers.failed) {
		log_error("no answer could be sent: %s",
			  resp->status == 0 ? "none was set"
					    : "out of memory building it");
		resp->headers.len = 0;
		resp->headers.failed = resp->body.failed = false;
		resp->content_type = NULL;
		http_error(resp, 500, "internal error");
	}
	add_retry_after(resp);
	status = resp->status;
	FCGX_FPrintF(fcgi->out, "Status: %d %s\r\n", status,
		     http_reason(status));
	if (resp->headers.len > 0)
		FCGX_PutStr((const char *)resp->headers.p,
			    (int)resp->headers.len, fcgi->out);
	if (status != 204 && resp->body.len > 0)
		FCGX_FPrintF(fcgi->out,
			     /* libfcgi's own printf knows no %zu. */
			     "Content-Type: %s\r\nContent-Length: %lu\r\n\r\n",
			     resp->content_type != NULL ? resp->content_type
							: "application/json",
			     (unsigned long)resp->body.len);
	else
		FCGX_FPrintF(fcgi->out, "\r\n");
	if (status != 204 && resp->body.len > 0)
		FCGX_PutStr((const char *)resp->body.p, (int)resp->body.len,
			    fcgi->out);
}

bool
http_stream_begin(struct http_resp *resp, FCGX_Request *fcgi, int status,
		  const char *content_type, unsigned long length)
{
	if (resp->headers.failed)
		return false;
	resp->status = status;
	add_retry_after(resp);
	if (resp->headers.failed)
		return false;
	resp->streamed = true;
	FCGX_FPrintF(fcgi->out, "Status: %d %s\r\n", status,
		     http_reason(status));
	if (resp->headers.len > 0)
		FCGX_PutStr((const char *)resp->headers.p,
			    (int)resp->headers.len, fcgi->out);
	FCGX_FPrintF(fcgi->out,
		     "Content-Type: %s\r\nContent-Length: %lu\r\n\r\n",
		     content_type, length);
	return true;
}

bool
http_stream_write(FCGX_Request *fcgi, const void *p, size_t n)
{
	/* FCGX_PutStr takes an int: hand big pieces over in parts. */
	while (n > 0) {
		int part = n > 1048576 ? 1048576 : (int)n;

		if (FCGX_PutStr(p, part, fcgi->out) != part)
			return false;
		p = (const char *)p + part;
		n -= (size_t)part;
	}
	return true;
}

long
http_body_piece(struct http_req *req, void *p, size_t n)
{
	int got = FCGX_GetStr(p, n > INT_MAX ? INT_MAX : (int)n, req->fcgi->in);

	if (got < 0 || FCGX_GetError(req->fcgi->in) != 0)
		return -1;
	return got;
}

enum http_body_result
http_multipart_read(struct http_req *req, const char *boundary,
		    const struct multipart_cb *cb, void *arg,
		    unsigned long long limit, char *detail, size_t dlen)
{
	/* The parser's state holds an 8 KiB header buffer: neither it nor
	 * the piece on the stack of a request thread. */
	struct multipart *mp = malloc(sizeof(*mp));
	char *piece = malloc(PIECE);
	enum http_body_result res = HTTP_BODY_NO_MEMORY;
	enum multipart_status st;
	unsigned long long total = 0;
	long n;

	if (dlen > 0)
		detail[0] = '\0';
	if (mp == NULL || piece == NULL)
		goto out;
	multipart_init(mp, boundary, cb, arg);
	do {
		if ((n = http_body_piece(req, piece, PIECE)) < 0) {
			res = HTTP_BODY_UNREADABLE;
			goto out;
		}
		if ((total += (unsigned long long)n) > limit) {
			res = HTTP_BODY_TOO_LARGE;
			goto out;
		}
		st = n > 0 ? multipart_feed(mp, piece, (size_t)n)
			   : multipart_finish(mp);
	} while (n > 0 && st == MULTIPART_OK);
	if (st == MULTIPART_OK)
		res = HTTP_BODY_OK;
	else if (st == MULTIPART_STOPPED)
		res = HTTP_BODY_STOPPED;
	else {
		res = HTTP_BODY_MALFORMED;
		if (dlen > 0)
			snprintf(detail, dlen, "%s", multipart_error(mp));
	}
out:
	free(piece);
	free(mp);
	return res;
}

void
http_body_drain(struct http_req *req, unsigned long long limit)
{
	char tmp[4096];
	long n;

	while (limit > 0 && (n = http_body_piece(req, tmp, sizeof(tmp))) > 0)
		limit = (unsigned long long)n < limit
				? limit - (unsigned long long)n
				: 0;
}
