/* SPDX-License-Identifier: MIT */
/*
 * multipart.c - a push parser for multipart/form-data.
 *
 * The content of parts is scanned for the delimiter CRLF "--" boundary.
 * A CR occurs only as the delimiter's first byte (boundaries are made of
 * RFC 2046's bchars), so after a mismatch the only place a delimiter can
 * begin again is the mismatching byte itself: no backtracking, and the
 * bytes matched so far are a prefix of the delimiter, which is why they
 * need no buffer of their own when a read ends inside them.  The start
 * of the body and the end of a header block count as a CRLF already
 * seen ("virtual"), so "--" boundary is found there too without that
 * CRLF ever being content.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "codec/multipart.h"

enum {
	S_DATA,	    /* preamble or a part's content */
	S_AFTER,    /* a delimiter matched: "--", blanks or CRLF next */
	S_DASH,	    /* one '-' of the close delimiter seen */
	S_PAD,	    /* blanks after a delimiter */
	S_LF,	    /* the CR ending a delimiter line seen */
	S_HEADERS,  /* a part's header block */
	S_EPILOGUE, /* after the close delimiter */
	S_FAILED,
	S_STOPPED
};

/* RFC 7230 tchar. */
static bool
is_tchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') ||
	       (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* RFC 2046 bchars. */
static bool
is_bchar(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') ||
	       (c != '\0' && strchr("'()+_,-./:=? ", c) != NULL);
}

static const char *
skip_ows(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* The length of the token at s. */
static size_t
token_len(const char *s)
{
	size_t n = 0;

	while (is_tchar((unsigned char)s[n]))
		n++;
	return n;
}

/* A parameter value: its bytes (unescaped, NUL-terminated, cut to the
 * buffer) and its whole length. */
struct pvalue {
	char s[MULTIPART_FILENAME_MAX + 1];
	size_t len;
};

static void
pvalue_put(struct pvalue *v, char c)
{
	if (v->len < sizeof(v->s) - 1)
		v->s[v->len] = c;
	v->len++;
}

/*
 * Reads the next "; attr=value" parameter at *sp (value a token or a
 * quoted string with backslash escapes).  1 with attr (cut to alen - 1
 * bytes, NUL-terminated) and val filled, 0 at the end of the value, -1
 * with *err set on bad syntax.
 */
static int
next_param(const char **sp, char *attr, size_t alen, struct pvalue *val,
	   const char **err)
{
	const char *s = skip_ows(*sp);
	size_t n;

	if (*s == '\0')
		return 0;
	if (*s != ';') {
		*err = "malformed header parameter";
		return -1;
	}
	/* Empty parameters (";;", a trailing ';') are let pass. */
	while (*s == ';')
		s = skip_ows(s + 1);
	if (*s == '\0')
		return 0;
	if ((n = token_len(s)) == 0) {
		*err = "malformed header parameter";
		return -1;
	}
	snprintf(attr, alen, "%.*s", (int)n, s);
	s = skip_ows(s + n);
	if (*s != '=') {
		*err = "header parameter without a value";
		return -1;
	}
	s = skip_ows(s + 1);
	val->len = 0;
	if (*s == '"') {
		for (s++; *s != '"'; s++) {
			unsigned char c;

			if (*s == '\\' && s[1] != '\0')
				s++;
			c = (unsigned char)*s;
			if (c == '\0') {
				*err = "unterminated quoted string";
				return -1;
			}
			if ((c < 0x20 && c != '\t') || c == 0x7f) {
				*err = "control character in a quoted string";
				return -1;
			}
			pvalue_put(val, (char)c);
		}
		s++;
	} else {
		if ((n = token_len(s)) == 0) {
			*err = "header parameter without a value";
			return -1;
		}
		for (size_t i = 0; i < n; i++)
			pvalue_put(val, s[i]);
		s += n;
	}
	val->s[val->len < sizeof(val->s) ? val->len : sizeof(val->s) - 1] =
		'\0';
	s = skip_ows(s);
	if (*s != ';' && *s != '\0') {
		*err = "malformed header parameter";
		return -1;
	}
	*sp = s;
	return 1;
}

/* Checks that s starts with the media type "type/subtype"; the rest
 * after it in *rest. */
static bool
media_type(const char *s, const char **rest)
{
	size_t n = token_len(s);

	if (n == 0 || s[n] != '/' || token_len(s + n + 1) == 0)
		return false;
	*rest = s + n + 1 + token_len(s + n + 1);
	return true;
}

bool
multipart_boundary(const char *content_type,
		   char out[MULTIPART_BOUNDARY_MAX + 1], char *detail,
		   size_t dlen)
{
	static const char mt[] = "multipart/form-data";
	const char *s, *err = NULL;
	struct pvalue v;
	char attr[16];
	bool found = false;
	int r;

	if (content_type == NULL) {
		snprintf(detail, dlen, "the body must be multipart/form-data");
		return false;
	}
	s = skip_ows(content_type);
	if (strncasecmp(s, mt, sizeof(mt) - 1) != 0 ||
	    (s[sizeof(mt) - 1] != ';' && s[sizeof(mt) - 1] != ' ' &&
	     s[sizeof(mt) - 1] != '\t' && s[sizeof(mt) - 1] != '\0')) {
		snprintf(detail, dlen, "the body must be multipart/form-data");
		return false;
	}
	s += sizeof(mt) - 1;
	while ((r = next_param(&s, attr, sizeof(attr), &v, &err)) == 1) {
		if (strcasecmp(attr, "boundary") != 0)
			continue;
		if (found) {
			snprintf(detail, dlen, "two boundary parameters");
			return false;
		}
		found = true;
		if (v.len == 0 || v.len > MULTIPART_BOUNDARY_MAX ||
		    v.s[v.len - 1] == ' ') {
			snprintf(detail, dlen,
				 "the boundary must have 1 to %d characters, "
				 "the last not a space",
				 MULTIPART_BOUNDARY_MAX);
			return false;
		}
		for (size_t i = 0; i < v.len; i++)
			if (!is_bchar((unsigned char)v.s[i])) {
				snprintf(detail, dlen,
					 "the boundary has a character RFC "
					 "2046 does not allow");
				return false;
			}
		memcpy(out, v.s, v.len + 1);
	}
	if (r < 0) {
		snprintf(detail, dlen, "Content-Type: %s", err);
		return false;
	}
	if (!found) {
		snprintf(detail, dlen, "Content-Type has no boundary");
		return false;
	}
	return true;
}

void
multipart_init(struct multipart *mp, const char *boundary,
	       const struct multipart_cb *cb, void *arg)
{
	size_t n = strnlen(boundary, MULTIPART_BOUNDARY_MAX);

	memset(mp, 0, sizeof(*mp) - sizeof(mp->hdr));
	mp->cb = cb;
	mp->arg = arg;
	memcpy(mp->delim, "\r\n--", 4);
	memcpy(mp->delim + 4, boundary, n);
	mp->dlen = 4 + n;
	mp->state = S_DATA;
	/* The body's start counts as a CRLF seen. */
	mp->match = 2;
	mp->virt = true;
}

static enum multipart_status
fail(struct multipart *mp, const char *why)
{
	mp->state = S_FAILED;
	mp->err = why;
	return MULTIPART_ERROR;
}

static enum multipart_status
stop(struct multipart *mp)
{
	mp->state = S_STOPPED;
	return MULTIPART_STOPPED;
}

/* Passes content on (the preamble is dropped). */
static bool
emit(struct multipart *mp, const char *p, size_t n)
{
	if (n == 0 || !mp->in_part)
		return true;
	return mp->cb->part_data(mp->arg, p, n) == 0;
}

/*
 * Scans p[0..n) of content for the delimiter; *used is how much of it
 * was taken (all of it unless the delimiter was found, then up to its
 * end, in state S_AFTER).
 */
static enum multipart_status
scan(struct multipart *mp, const char *p, size_t n, size_t *used)
{
	/* carry: delimiter bytes matched before p (0 once one failed);
	 * mstart: where in p the current match began, when carry is 0.
	 * Content of p is passed on from p itself, all at once, up to where
	 * the delimiter (or a match at the end of p) begins. */
	size_t i = 0, mstart = 0, carry = mp->match, skip;

	while (i < n) {
		if (mp->match == 0) {
			const char *cr = memchr(p + i, '\r', n - i);

			if (cr == NULL) {
				i = n;
				break;
			}
			mstart = (size_t)(cr - p);
			i = mstart + 1;
			mp->match = 1;
			continue;
		}
		if (p[i] == mp->delim[mp->match]) {
			i++;
			if (++mp->match < mp->dlen)
				continue;
			if (carry == 0 && !emit(mp, p, mstart))
				return stop(mp);
			mp->match = 0;
			mp->virt = false;
			mp->state = S_AFTER;
			*used = i;
			return MULTIPART_OK;
		}
		/* Not a delimiter: what matched is content (the part of it
		 * in p goes with the rest of p), p[i] may begin the next
		 * match. */
		skip = mp->virt ? 2 : 0;
		if (carry > skip && !emit(mp, mp->delim + skip, carry - skip))
			return stop(mp);
		carry = 0;
		mp->match = 0;
		mp->virt = false;
	}
	if ((mp->match == 0 || carry == 0) &&
	    !emit(mp, p, mp->match == 0 ? n : mstart))
		return stop(mp);
	*used = n;
	return MULTIPART_OK;
}

/*
 * Keeps a parameter's value pv in dst (max bytes and a NUL) as *field;
 * NULL, or the error: twice when *field is set already, long when the
 * value is longer than max.
 */
static const char *
keep(const char **field, char *dst, size_t max, const struct pvalue *pv,
     const char *twice, const char *long_)
{
	if (*field != NULL)
		return twice;
	if (pv->len > max)
		return long_;
	memcpy(dst, pv->s, pv->len + 1);
	*field = dst;
	return NULL;
}

/* Content-Disposition: form-data; name=...; filename=... */
static enum multipart_status
disposition(struct multipart *mp, const char *v)
{
	const char *s = v, *err = NULL, *st = NULL;
	struct pvalue pv;
	char attr[16];
	size_t n = token_len(s);
	int r;

	if (n != 9 || strncasecmp(s, "form-data", 9) != 0)
		return fail(mp,
			    "a part's Content-Disposition is not form-data");
	s += n;
	while ((r = next_param(&s, attr, sizeof(attr), &pv, &err)) == 1) {
		if (strcasecmp(attr, "name") == 0)
			st = keep(&mp->part.name, mp->name, MULTIPART_NAME_MAX,
				  &pv, "two name parameters",
				  "a part's name is longer than 255 bytes");
		else if (strcasecmp(attr, "filename") == 0)
			st = keep(&mp->part.filename, mp->filename,
				  MULTIPART_FILENAME_MAX, &pv,
				  "two filename parameters",
				  "a filename is longer than 1024 bytes");
		if (st != NULL)
			return fail(mp, st);
		/* Others (filename*, which RFC 7578 says not to send) are
		 * ignored. */
	}
	if (r < 0)
		return fail(mp, err);
	if (mp->part.name == NULL)
		return fail(mp, "a part's Content-Disposition has no name");
	return MULTIPART_OK;
}

/* A part's Content-Type: type/subtype, parameters, printable ASCII. */
static enum multipart_status
part_type(struct multipart *mp, const char *v)
{
	const char *rest;
	size_t len = strlen(v);

	if (!media_type(v, &rest) ||
	    (*skip_ows(rest) != ';' && *skip_ows(rest) != '\0'))
		return fail(mp, "a part's Content-Type is malformed");
	if (len > MULTIPART_CTYPE_MAX)
		return fail(mp,
			    "a part's Content-Type is longer than 255 bytes");
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e)
			return fail(mp, "a part's Content-Type is not "
					"printable ASCII");
	memcpy(mp->ctype, v, len + 1);
	mp->part.content_type = mp->ctype;
	return MULTIPART_OK;
}

/* Parses the complete header block in hdr (lines ending in CRLF, the
 * last one empty) into part. */
static enum multipart_status
headers(struct multipart *mp)
{
	char *line = mp->hdr, *end, *next, *v;
	enum multipart_status st;
	size_t n;

	memset(&mp->part, 0, sizeof(mp->part));
	mp->hdr[mp->hlen] = '\0';
	if (mp->hdr[0] == ' ' || mp->hdr[0] == '\t')
		return fail(mp, "malformed part header line");
	/* Folded lines (CRLF and a blank) are one line. */
	for (size_t i = 0; i + 2 < mp->hlen; i++)
		if (mp->hdr[i] == '\r' &&
		    (mp->hdr[i + 2] == ' ' || mp->hdr[i + 2] == '\t'))
			mp->hdr[i] = mp->hdr[i + 1] = ' ';
	while (*line != '\r') {
		end = strstr(line, "\r\n");
		next = end + 2;
		*end = '\0';
		n = token_len(line);
		if (n == 0 || line[n] != ':')
			return fail(mp, "malformed part header line");
		v = line + n + 1;
		v += strspn(v, " \t");
		while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		/* A field's value is set once its field has been seen. */
		st = MULTIPART_OK;
		if (n == 19 && strncasecmp(line, "Content-Disposition", n) == 0)
			st = mp->part.name != NULL
				     ? fail(mp,
					    "two Content-Disposition fields "
					    "in a part")
				     : disposition(mp, v);
		else if (n == 12 && strncasecmp(line, "Content-Type", n) == 0)
			st = mp->part.content_type != NULL
				     ? fail(mp, "two Content-Type fields in a "
						"part")
				     : part_type(mp, v);
		if (st != MULTIPART_OK)
			return st;
		line = next;
	}
	if (mp->part.name == NULL)
		return fail(mp, "a part without Content-Disposition");
	return MULTIPART_OK;
}

/* One byte of a part's header block. */
static enum multipart_status
header_byte(struct multipart *mp, char c)
{
	char prev = mp->hlen > 0 ? mp->hdr[mp->hlen - 1] : '\0';

	if (c == '\0')
		return fail(mp, "NUL in a part's headers");
	if (prev == '\r' && c != '\n')
		return fail(mp, "CR without LF in a part's headers");
	if (c == '\n' && prev != '\r')
		return fail(mp, "LF without CR in a part's headers");
	if (mp->hlen == MULTIPART_HEADER_MAX)
		return fail(mp, "a part's headers are longer than 8192 bytes");
	mp->hdr[mp->hlen++] = c;
	if (c != '\n' ||
	    (mp->hlen != 2 && (mp->hlen < 4 || memcmp(mp->hdr + mp->hlen - 4,
						      "\r\n\r\n", 4) != 0)))
		return MULTIPART_OK;
	if (headers(mp) != MULTIPART_OK)
		return MULTIPART_ERROR;
	if (mp->cb->part_begin(mp->arg, &mp->part) != 0)
		return stop(mp);
	mp->in_part = true;
	mp->state = S_DATA;
	/* The block's last CRLF may be the next delimiter's. */
	mp->match = 2;
	mp->virt = true;
	return MULTIPART_OK;
}

/* Ends the current part, if any. */
static bool
end_part(struct multipart *mp)
{
	bool in = mp->in_part;

	mp->in_part = false;
	return !in || mp->cb->part_end(mp->arg) == 0;
}

/* One byte of the line after a delimiter: "--", or blanks and CRLF. */
static enum multipart_status
delim_byte(struct multipart *mp, char c)
{
	if (mp->state == S_AFTER && c == '-') {
		mp->state = S_DASH;
		return MULTIPART_OK;
	}
	if (mp->state == S_DASH) {
		if (c != '-')
			return fail(mp, "a boundary followed by neither CRLF "
					"nor \"--\"");
		mp->state = S_EPILOGUE;
		return end_part(mp) ? MULTIPART_OK : stop(mp);
	}
	if (mp->state == S_LF) {
		if (c != '\n')
			return fail(mp, "CR without LF after a boundary");
		mp->state = S_HEADERS;
		mp->hlen = 0;
		return end_part(mp) ? MULTIPART_OK : stop(mp);
	}
	/* S_AFTER or S_PAD */
	if (c == ' ' || c == '\t')
		mp->state = S_PAD;
	else if (c == '\r')
		mp->state = S_LF;
	else
		return fail(mp, "a boundary followed by neither CRLF nor "
				"\"--\"");
	return MULTIPART_OK;
}

static enum multipart_status
status_of(const struct multipart *mp)
{
	if (mp->state == S_FAILED)
		return MULTIPART_ERROR;
	return mp->state == S_STOPPED ? MULTIPART_STOPPED : MULTIPART_OK;
}

enum multipart_status
multipart_feed(struct multipart *mp, const void *data, size_t n)
{
	const char *p = data;
	size_t i = 0, used;

	while (i < n && status_of(mp) == MULTIPART_OK) {
		switch (mp->state) {
		case S_EPILOGUE:
			return MULTIPART_OK;
		case S_DATA:
			used = 0;
			scan(mp, p + i, n - i, &used);
			i += used;
			break;
		case S_HEADERS:
			header_byte(mp, p[i++]);
			break;
		default:
			delim_byte(mp, p[i++]);
			break;
		}
	}
	return status_of(mp);
}

enum multipart_status
multipart_finish(struct multipart *mp)
{
	if (status_of(mp) == MULTIPART_OK && mp->state != S_EPILOGUE)
		fail(mp, "the body ended before the closing boundary");
	return status_of(mp);
}

bool
multipart_done(const struct multipart *mp)
{
	return mp->state == S_EPILOGUE;
}

const char *
multipart_error(const struct multipart *mp)
{
	return mp->state == S_FAILED ? mp->err : NULL;
}
