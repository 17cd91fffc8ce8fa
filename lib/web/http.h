/* SPDX-License-Identifier: MIT */
/*
 * http.h - one FastCGI request and its answer.
 *
 * The request is read from the FastCGI parameters once, up front: method,
 * path (SCRIPT_NAME + PATH_INFO, or PATH_INFO alone after a program
 * file: http_cgi_file()), the query decoded into name/value
 * pairs, the headers the API uses.  The body is read on demand with a
 * size limit.  The answer is built in memory and sent once.  Everything
 * a request allocates is freed by http_req_free() and http_resp_free().
 */
#ifndef XMHUB_HTTP_H
#define XMHUB_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include <fcgiapp.h>
#include <json-c/json.h>

#include "codec/buf.h"
#include "codec/multipart.h"
#include "core/db.h"

#define HTTP_MAX_QUERY 32     /* query parameters kept; more is a 400 */
#define HTTP_JSON_LIMIT 65536 /* default limit of a JSON request body */
#define HTTP_RETRY_AFTER 2    /* seconds: Retry-After of a 503 by default */

struct http_query {
	char *name, *value; /* percent-decoded, NUL-terminated */
};

struct http_req {
	FCGX_Request *fcgi;
	const char *method;
	/* SCRIPT_NAME followed by PATH_INFO; a FastCGI authorizer, which
	 * lighttpd gives neither, gets REQUEST_URI up to its query */
	char *path;
	struct http_query query[HTTP_MAX_QUERY];
	size_t nquery;
	const char *authorization; /* header values, or NULL */
	const char *api_key;
	const char *content_type;
	const char *remote_addr;
	long long content_length; /* -1 when not given */
	/* Called as a FastCGI authorizer (FCGI_ROLE=AUTHORIZER): the web
	 * server asks whether the request may go on, before it reads the
	 * body (doc/security.md "Bodies read after the credentials") */
	bool authorizer;
	struct buf body;
};

struct http_resp {
	int status;		  /* 0 until something is answered */
	const char *content_type; /* of the body; NULL means JSON */
	struct buf headers;
	struct buf body;
	bool streamed; /* http_stream_begin() sent it: http_send() does not */
};

/*
 * True when script_name (SCRIPT_NAME) names a program file, NAME.cgi: the
 * request was mapped to the program's file (an .htaccess's rewrite,
 * doc/shared-hosting.md) and PATH_INFO alone is the API's path.  No route
 * of the API has a segment ending in .cgi, so under lighttpd's prefixes
 * and Apache's ScriptAlias it is never so.
 */
bool http_cgi_file(const char *script_name);

/*
 * Reads the request's parameters.  False when they are unusable (no
 * method, a Content-Length that is not 1 to 19 decimal digits up to
 * LLONG_MAX, a query with a malformed or NUL (%00) escape or more than
 * HTTP_MAX_QUERY parameters): resp then holds a 400 (500 without
 * memory) to send.  The query is split at '&' (empty pieces skipped),
 * each piece at its first '=' (none: the value is ""), and both halves
 * form-decoded (%XX, '+' for a space).
 */
bool http_req_init(struct http_req *req, FCGX_Request *fcgi,
		   struct http_resp *resp);

/* Frees what the request allocated. */
void http_req_free(struct http_req *req);

/* An empty answer. */
void http_resp_init(struct http_resp *resp);

/* Frees what the answer allocated. */
void http_resp_free(struct http_resp *resp);

/* The decoded value of query parameter name (its first one when
 * repeated), or NULL. */
const char *http_query(const struct http_req *req, const char *name);

/*
 * Reads the whole body into req->body, refusing more than limit bytes.
 * False when it is too large (resp holds 413) or cannot be read (400).
 */
bool http_read_body(struct http_req *req, size_t limit, struct http_resp *resp);

/*
 * Reads the body (at most limit bytes) and parses it as one JSON object
 * with the strict reader (lib/codec/jsonin).  Returns the object, which the
 * caller releases with json_object_put(), or NULL with a 400 or 413 in
 * resp.
 */
json_object *http_json_body(struct http_req *req, size_t limit,
			    struct http_resp *resp);

/*
 * Adds the header line "name: value", value printf-formatted, of any
 * length.  False when name is not a token, value holds a control
 * character other than HTAB (CR, LF: header injection), or memory runs
 * out: that is logged and the answer becomes a 500 when sent (http_send,
 * http_stream_begin), so a caller may ignore the result.
 */
bool http_header(struct http_resp *resp, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Adds "Cache-Control: no-store": for every answer that carries a secret
 * (tokens, keys), which no cache may keep. */
void http_no_store(struct http_resp *resp);

/* Answers status with obj as JSON (obj is released here; NULL is "null"). */
void http_json(struct http_resp *resp, int status, json_object *obj);

/* Answers status with JSON text the caller appends to the buffer returned
 * (empty); one that failed (memory) is answered 500 by http_send(). */
struct buf *http_json_text(struct http_resp *resp, int status);

/* Answers status with {"detail": "..."}, the detail printf-formatted
 * (any length). */
void http_error(struct http_resp *resp, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The answer to a failed db_* call (lib/core/db): returns 503 with *detail
 * "the database is unavailable" for DB_UNAVAILABLE, else 500 "internal
 * error" (the reason is in the log already).  *detail is static.
 */
int http_db_status(enum db_status st, const char **detail);

/* Answers a failed db_* call on resp: http_db_status()'s status and
 * detail. */
void http_db_error(struct http_resp *resp, enum db_status st);

/* Answers 204 with no body. */
void http_no_content(struct http_resp *resp);

/* Writes the answer to the client; nothing answered is a 500.  A 503
 * without a Retry-After header gets one of HTTP_RETRY_AFTER seconds
 * (also in http_stream_begin). */
void http_send(struct http_resp *resp, FCGX_Request *fcgi);

/* The reason phrase of a status ("Not Found"). */
const char *http_reason(int status);

/*
 * Starts a streamed answer whose body is length bytes: sends the status,
 * resp's headers, Content-Type and Content-Length now.  The body follows
 * with http_stream_write(); http_send() then sends nothing more.  For
 * bodies too large to build in memory (streams from the object store).
 * False, sending nothing, when a header failed (http_header): the caller
 * sends no body and http_send() answers 500.
 */
bool http_stream_begin(struct http_resp *resp, FCGX_Request *fcgi, int status,
		       const char *content_type, unsigned long length);

/* Sends n bytes of a streamed body; false when the client is gone. */
bool http_stream_write(FCGX_Request *fcgi, const void *p, size_t n);

/*
 * Reads the next piece of the request body into p: waits until n bytes
 * (at most INT_MAX) or the end of the body arrived, so a body can go to
 * its destination piece by piece instead of being held whole (uploads;
 * lighttpd must stream it, server.stream-request-body).  Returns the
 * bytes read, fewer than n only at the end of the body (0 there), or -1
 * when the body cannot be read (the client went away mid-body).  The
 * caller enforces its own size limit; Content-Length is not checked.
 */
long http_body_piece(struct http_req *req, void *p, size_t n);

/* How http_multipart_read() ended. */
enum http_body_result {
	HTTP_BODY_OK = 0,     /* the whole body parsed, its end seen */
	HTTP_BODY_TOO_LARGE,  /* more than the limit's bytes came */
	HTTP_BODY_STOPPED,    /* a callback stopped the parser */
	HTTP_BODY_MALFORMED,  /* not a multipart body: detail says why */
	HTTP_BODY_UNREADABLE, /* the client went away mid-body */
	HTTP_BODY_NO_MEMORY
};

/*
 * Streams the request body, piece by piece (http_body_piece), through a
 * multipart parser (lib/codec/multipart) of boundary calling cb with arg,
 * up to its end or limit bytes, whichever comes first: the one reader of
 * the multipart uploads, which hold no more of the body than their
 * callbacks keep.  detail (dlen > 0) receives the parser's reason for
 * HTTP_BODY_MALFORMED, "" otherwise.
 */
enum http_body_result http_multipart_read(struct http_req *req,
					  const char *boundary,
					  const struct multipart_cb *cb,
					  void *arg, unsigned long long limit,
					  char *detail, size_t dlen);

/*
 * Reads and drops up to limit bytes of what is left of the body, so that
 * a client still sending it gets the answer instead of a reset.
 */
void http_body_drain(struct http_req *req, unsigned long long limit);

#endif
