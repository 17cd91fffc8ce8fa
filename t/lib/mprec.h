/* SPDX-License-Identifier: MIT */
/*
 * mprec.h - records what lib/multipart calls back, as one byte string,
 * for t/unit/multipart.c and fuzz/multipart.c: a body parsed in any pieces
 * must give the same record.
 *
 * A part's start is "\B" name "\0" filename "\0" type "\0" ("\1" for an
 * absent filename or type), its end "\E"; content bytes are themselves,
 * '\' doubled, so pieces of content join into one run whatever the
 * split.  Header-only: each program includes it once.
 */
#ifndef XMHUB_MPREC_H
#define XMHUB_MPREC_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "codec/buf.h"
#include "codec/multipart.h"

struct mprec {
	struct buf log;
	long events;	/* callbacks so far */
	long stop_at;	/* return non-zero at this callback (-1: never) */
	bool bad_order; /* data or end outside a part, begin inside one */
	bool in_part;
};

static void __attribute__((unused)) mprec_init(struct mprec *r, long stop_at)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->log, 0);
	r->stop_at = stop_at;
}

static int
mprec_tick(struct mprec *r)
{
	return r->events++ == r->stop_at;
}

static void
mprec_str(struct buf *b, const char *s)
{
	if (s == NULL)
		buf_putc(b, '\1');
	else
		buf_puts(b, s);
	buf_putc(b, '\0');
}

static int
mprec_begin(void *arg, const struct multipart_part *part)
{
	struct mprec *r = arg;

	r->bad_order |= r->in_part || part->name == NULL;
	r->in_part = true;
	buf_append(&r->log, "\\B", 2);
	mprec_str(&r->log, part->name);
	mprec_str(&r->log, part->filename);
	mprec_str(&r->log, part->content_type);
	return mprec_tick(r);
}

static int
mprec_data(void *arg, const void *p, size_t n)
{
	struct mprec *r = arg;
	const char *s = p;

	r->bad_order |= !r->in_part || n == 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\')
			buf_putc(&r->log, '\\');
		buf_putc(&r->log, s[i]);
	}
	return mprec_tick(r);
}

static int
mprec_end(void *arg)
{
	struct mprec *r = arg;

	r->bad_order |= !r->in_part;
	r->in_part = false;
	buf_append(&r->log, "\\E", 2);
	return mprec_tick(r);
}

static const struct multipart_cb mprec_cb = {mprec_begin, mprec_data,
					     mprec_end};

/* The outcome of one parse: the record, the status, the error. */
struct mprun {
	struct mprec rec;
	enum multipart_status st;
	const char *err;
};

/*
 * Parses the n bytes at body with boundary, fed in pieces: cuts[0..ncut)
 * are increasing offsets where a piece ends (0 cuts: one piece), then
 * finishes.  The caller frees out->rec.log.
 */
static void __attribute__((unused))
mprun(struct mprun *out, const char *boundary, const char *body, size_t n,
      const size_t *cuts, size_t ncut, long stop_at)
{
	struct multipart mp;
	size_t at = 0;

	mprec_init(&out->rec, stop_at);
	multipart_init(&mp, boundary, &mprec_cb, &out->rec);
	out->st = MULTIPART_OK;
	for (size_t i = 0; i <= ncut; i++) {
		size_t end = i < ncut ? cuts[i] : n;

		out->st = multipart_feed(&mp, body + at, end - at);
		at = end;
	}
	out->st = multipart_finish(&mp);
	out->err = multipart_error(&mp);
}

/* True when two runs called back and ended the same way. */
static bool __attribute__((unused))
mprun_same(const struct mprun *a, const struct mprun *b)
{
	return a->st == b->st && a->rec.log.len == b->rec.log.len &&
	       (a->rec.log.len == 0 ||
		memcmp(a->rec.log.p, b->rec.log.p, a->rec.log.len) == 0) &&
	       !a->rec.log.failed && !b->rec.log.failed &&
	       ((a->err == NULL && b->err == NULL) ||
		(a->err != NULL && b->err != NULL &&
		 strcmp(a->err, b->err) == 0));
}

#endif
