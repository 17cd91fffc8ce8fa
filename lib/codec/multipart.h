/* SPDX-License-Identifier: MIT */
/*
 * multipart.h - a push parser for multipart/form-data (RFC 7578 over the
 * multipart syntax of RFC 2046).
 *
 * The body is fed in pieces of any size, as it arrives; the parser calls
 * back when a part begins (its name, filename and Content-Type), with
 * each piece of a part's content (pointing into the fed bytes, never
 * copied) and when the part ends.  Its memory is the fixed struct below:
 * nothing is allocated, whatever the input.  Rules (doc/uploads.md):
 * lines end in CRLF; a delimiter is CRLF "--" boundary, also at the very
 * start of the body; it is followed by optional blanks and CRLF, or by
 * "--" (the close delimiter); preamble and epilogue are ignored; a part's
 * header block (at most MULTIPART_HEADER_MAX bytes) must hold one
 * Content-Disposition: form-data with a name, and may hold a
 * Content-Type; other header fields are ignored; quoted strings take
 * backslash escapes.  "--" boundary followed by anything else inside a
 * part is an error, as RFC 2046 forbids the boundary in the content.
 */
#ifndef XMHUB_MULTIPART_H
#define XMHUB_MULTIPART_H

#include <stdbool.h>
#include <stddef.h>

#define MULTIPART_BOUNDARY_MAX 70 /* RFC 2046 */
#define MULTIPART_HEADER_MAX 8192 /* bytes of one part's header block */
#define MULTIPART_NAME_MAX 255	  /* bytes of a part's name */
#define MULTIPART_FILENAME_MAX 1024
#define MULTIPART_CTYPE_MAX 255 /* bytes of a part's Content-Type */

enum multipart_status {
	MULTIPART_OK = 0, /* all fed bytes taken; feed more */
	MULTIPART_ERROR,  /* malformed input: multipart_error() says why */
	MULTIPART_STOPPED /* a callback returned non-zero */
};

/* A part's header, NUL-terminated strings valid until its part_end. */
struct multipart_part {
	const char *name;	  /* the form field's name (may be "") */
	const char *filename;	  /* NULL without a filename parameter */
	const char *content_type; /* NULL without a Content-Type field */
};

/* The callbacks; each returns 0 to go on, non-zero to stop the parser. */
struct multipart_cb {
	int (*part_begin)(void *arg, const struct multipart_part *part);
	int (*part_data)(void *arg, const void *p, size_t n); /* n > 0 */
	int (*part_end)(void *arg);
};

/* The parser's state; opaque, on the caller's stack or in its struct. */
struct multipart {
	const struct multipart_cb *cb;
	void *arg;
	char delim[4 + MULTIPART_BOUNDARY_MAX]; /* CRLF "--" boundary */
	size_t dlen;
	size_t match; /* bytes of delim matched so far */
	bool virt;    /* its first two are the virtual CRLF */
	int state;
	bool in_part; /* content goes to part_data (false: preamble) */
	const char *err;
	struct multipart_part part;
	char name[MULTIPART_NAME_MAX + 1];
	char filename[MULTIPART_FILENAME_MAX + 1];
	char ctype[MULTIPART_CTYPE_MAX + 1];
	size_t hlen;
	char hdr[MULTIPART_HEADER_MAX + 1]; /* last: not cleared by init */
};

/*
 * The boundary of a request's Content-Type value ("multipart/form-data;
 * boundary=..."; the boundary a token or a quoted string of 1..70
 * characters of RFC 2046's bchars, not ending in a space) into out.
 * False with a reason in detail for another media type or a missing or
 * malformed boundary.  content_type may be NULL (false).
 */
bool multipart_boundary(const char *content_type,
			char out[MULTIPART_BOUNDARY_MAX + 1], char *detail,
			size_t dlen);

/* Starts a parser of a body delimited by boundary (as from
 * multipart_boundary()) calling cb with arg. */
void multipart_init(struct multipart *mp, const char *boundary,
		    const struct multipart_cb *cb, void *arg);

/*
 * Parses the next n bytes of the body.  After MULTIPART_ERROR or
 * MULTIPART_STOPPED every later call returns the same.  Bytes after the
 * close delimiter (the epilogue) are taken and ignored.
 */
enum multipart_status multipart_feed(struct multipart *mp, const void *p,
				     size_t n);

/* The end of the body: MULTIPART_OK when the close delimiter was seen,
 * else MULTIPART_ERROR (or the earlier status). */
enum multipart_status multipart_finish(struct multipart *mp);

/* True once the close delimiter has been seen. */
bool multipart_done(const struct multipart *mp);

/* Why the parser failed (a static string), or NULL. */
const char *multipart_error(const struct multipart *mp);

#endif
