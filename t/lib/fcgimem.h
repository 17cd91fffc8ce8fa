/* SPDX-License-Identifier: MIT */
/*
 * fcgimem.h - a FastCGI request in memory, for t/unit/http.c and
 * fuzz/http.c: parameters are a NULL-terminated array of "NAME=VALUE"
 * (as libfcgi's envp), the body is read from an exact-size heap copy in
 * pieces of chosen sizes (as libfcgi hands over its records), optionally
 * ending in a read error instead of its end, and the answer is collected
 * in a struct buf.  It fills the public fields of FCGX_Stream only, so
 * libfcgi's own FCGX_GetStr, FCGX_PutStr and FCGX_FPrintF do the rest.
 * Header-only: each program includes it once.
 */
#ifndef XMHUB_FCGIMEM_H
#define XMHUB_FCGIMEM_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <fcgiapp.h>

#include "codec/buf.h"

struct fcgimem {
	FCGX_Request req;
	FCGX_Stream in, out;
	unsigned char *body; /* exact-size copy: ASan sees reads past it */
	size_t len, at;
	const size_t *cuts; /* sizes of the pieces; the rest in one */
	size_t ncut, cut;
	bool fail;		  /* the body ends with a read error (EPIPE) */
	unsigned char window[64]; /* the writer's buffer, small on purpose */
	struct buf answer;	  /* what was written */
};

/* The reader's next piece, or its end (or error). */
static void
fcgimem_fill(FCGX_Stream *s)
{
	struct fcgimem *m = s->data;
	size_t n = m->len - m->at;

	if (n == 0) {
		if (m->fail && s->FCGI_errno == 0)
			s->FCGI_errno = EPIPE;
		s->isClosed = 1;
		return;
	}
	if (m->cut < m->ncut && m->cuts[m->cut] < n)
		n = m->cuts[m->cut] > 0 ? m->cuts[m->cut] : 1;
	m->cut++;
	s->rdNext = s->stopUnget = m->body + m->at;
	s->stop = m->body + m->at + n;
	m->at += n;
}

/* Moves what the writer holds into m->answer. */
static void
fcgimem_empty(FCGX_Stream *s, int close)
{
	struct fcgimem *m = s->data;

	buf_append(&m->answer, m->window, (size_t)(s->wrNext - m->window));
	s->wrNext = m->window;
	if (close)
		s->isClosed = 1;
}

/*
 * Sets m up: env (kept, not copied), the len body bytes (copied), read in
 * pieces of the ncut sizes of cuts (kept; NULL for one piece), then the
 * end of the body, or a read error when fail.
 */
static void __attribute__((unused))
fcgimem_init(struct fcgimem *m, char **env, const void *body, size_t len,
	     const size_t *cuts, size_t ncut, bool fail)
{
	memset(m, 0, sizeof(*m));
	if ((m->body = malloc(len > 0 ? len : 1)) == NULL)
		abort();
	if (len > 0)
		memcpy(m->body, body, len);
	m->len = len;
	m->cuts = cuts;
	m->ncut = ncut;
	m->fail = fail;
	m->in.isReader = 1;
	m->in.rdNext = m->in.stop = m->in.stopUnget = m->body;
	m->in.fillBuffProc = fcgimem_fill;
	m->in.data = m;
	m->out.wrNext = m->window;
	m->out.stop = m->window + sizeof(m->window);
	m->out.emptyBuffProc = fcgimem_empty;
	m->out.data = m;
	buf_init(&m->answer, 0);
	m->req.in = &m->in;
	m->req.out = &m->out;
	m->req.envp = env;
}

/* The answer written so far, NUL-terminated (owned by m). */
static __attribute__((unused)) const char *
fcgimem_answer(struct fcgimem *m)
{
	fcgimem_empty(&m->out, 0);
	buf_putc(&m->answer, '\0');
	m->answer.len--;
	return (const char *)m->answer.p;
}

/* Frees what m holds. */
static void __attribute__((unused)) fcgimem_free(struct fcgimem *m)
{
	free(m->body);
	buf_free(&m->answer);
}

#endif
