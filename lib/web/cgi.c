/* SPDX-License-Identifier: MIT */
/*
 * cgi.c - a FastCGI program run as a plain CGI: one request per process.
 *
 * libfcgi's streams call a fill and an empty function of the stream
 * when their buffer is used up (fcgiapp.h, struct FCGX_Stream): these
 * read and write a file descriptor instead of FastCGI records.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "web/cgi.h"

extern char **environ;

#define CGI_BUF 65536

/* A stream over a file descriptor; s first, so that the stream is the
 * whole allocation. */
struct cgi_stream {
	FCGX_Stream s;
	int fd;
	unsigned char buf[CGI_BUF];
};

/* The next piece of the body; end of file or an error closes the
 * stream (FCGX_GetStr then returns what it has). */
static void
fill(FCGX_Stream *stream)
{
	struct cgi_stream *c = (struct cgi_stream *)stream;
	ssize_t n;

	do
		n = read(c->fd, c->buf, sizeof(c->buf));
	while (n < 0 && errno == EINTR);
	c->s.rdNext = c->s.stopUnget = c->buf;
	c->s.stop = c->buf + (n > 0 ? n : 0);
	if (n <= 0) {
		c->s.isClosed = 1;
		c->s.FCGI_errno = n < 0 ? errno : 0;
	}
}

/* Writes the buffered bytes; a failed write closes the stream, so that
 * FCGX_PutStr reports it. */
static void
empty(FCGX_Stream *stream, int doClose)
{
	struct cgi_stream *c = (struct cgi_stream *)stream;
	const unsigned char *p = c->buf;
	ssize_t n;

	(void)doClose;
	while (p < c->s.wrNext) {
		n = write(c->fd, p, (size_t)(c->s.wrNext - p));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			c->s.isClosed = 1;
			c->s.FCGI_errno = n < 0 ? errno : EIO;
			break;
		}
		p += n;
	}
	c->s.wrNext = c->buf;
	c->s.stop = c->buf + sizeof(c->buf);
}

/* A reader (its buffer empty) or a writer on fd; NULL without memory. */
static FCGX_Stream *
stream_new(int fd, bool reader)
{
	struct cgi_stream *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->fd = fd;
	c->s.isReader = reader;
	c->s.rdNext = c->s.wrNext = c->s.stopUnget = c->buf;
	c->s.stop = reader ? c->buf : c->buf + sizeof(c->buf);
	c->s.fillBuffProc = fill;
	c->s.emptyBuffProc = empty;
	c->s.data = c;
	return &c->s;
}

bool
cgi_is_cgi(void)
{
	return FCGX_IsCGI() != 0;
}

bool
cgi_request(FCGX_Request *r)
{
	memset(r, 0, sizeof(*r));
	r->envp = environ;
	if ((r->in = stream_new(STDIN_FILENO, true)) == NULL ||
	    (r->out = stream_new(STDOUT_FILENO, false)) == NULL ||
	    (r->err = stream_new(STDERR_FILENO, false)) == NULL) {
		free(r->in);
		free(r->out);
		memset(r, 0, sizeof(*r));
		errno = ENOMEM;
		return false;
	}
	return true;
}

/* Writes what the writer *s buffers and frees it; false when a write
 * failed. */
static bool
stream_end(FCGX_Stream **s)
{
	bool ok;

	empty(*s, 1);
	ok = !(*s)->isClosed;
	free(*s);
	*s = NULL;
	return ok;
}

bool
cgi_finish(FCGX_Request *r)
{
	bool ok;

	if (r->in == NULL)
		return true;
	ok = stream_end(&r->out);
	ok &= stream_end(&r->err);
	free(r->in);
	r->in = NULL;
	return ok;
}
