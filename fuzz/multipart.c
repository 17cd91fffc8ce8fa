/* SPDX-License-Identifier: MIT */
/*
 * fuzz/multipart.c - libFuzzer target for the multipart/form-data
 * parser (lib/codec/multipart.h).
 *
 * The input is a Content-Type value, a newline, then the body.  The
 * value goes through multipart_boundary(), whose answer must be a
 * boundary RFC 2046 allows; the body is parsed with that boundary (or a
 * fixed one when it was refused) three times: in one piece, one byte at
 * a time and in pieces of sizes drawn from the input.  The three must
 * call back the same parts and content and end the same way, callbacks
 * must come in order, and no more content can come out than went in.
 * Violations abort(), so libFuzzer keeps the input as a crash artifact.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codec/multipart.h"

#include "check.h"
#include "mprec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A boundary RFC 2046 allows: 1..70 bchars, the last not a space. */
static void
check_boundary(const char *b)
{
	size_t n = strlen(b);

	CHECK(n >= 1 && n <= MULTIPART_BOUNDARY_MAX && b[n - 1] != ' ');
	for (size_t i = 0; i < n; i++)
		CHECK(strchr("0123456789abcdefghijklmnopqrstuvwxyz"
			     "ABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? ",
			     b[i]) != NULL);
}

/* Content bytes in a record: everything but the part markers. */
static size_t
content_bytes(const struct buf *log)
{
	size_t n = 0;

	for (size_t i = 0; i < log->len; i++) {
		if (log->p[i] != '\\') {
			n++;
			continue;
		}
		i++;
		if (log->p[i] == '\\') {
			n++;
		} else if (log->p[i] == 'B') {
			/* name, filename, type: three NUL-ended strings */
			for (int k = 0; k < 3; k++)
				i += strlen((const char *)log->p + i + 1) + 1;
		}
	}
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size < 300 ? size : 300);
	char ct[301], boundary[MULTIPART_BOUNDARY_MAX + 1], detail[160];
	struct mprun whole, bytes, pieces;
	const char *body;
	size_t n, *cuts, ncut = 0, at = 0;
	uint32_t x = 2166136261u;

	if (nl == NULL)
		return 0;
	memcpy(ct, data, (size_t)(nl - data));
	ct[nl - data] = '\0';
	detail[0] = '\0';
	if (multipart_boundary(ct, boundary, detail, sizeof(detail)))
		check_boundary(boundary);
	else {
		CHECK(detail[0] != '\0');
		strcpy(boundary, "b");
	}
	body = (const char *)nl + 1;
	n = size - (size_t)(nl - data) - 1;

	if ((cuts = malloc((n + 1) * sizeof(*cuts))) == NULL)
		abort();
	mprun(&whole, boundary, body, n, NULL, 0, -1);
	for (size_t i = 0; i < n; i++)
		cuts[i] = i + 1;
	mprun(&bytes, boundary, body, n, cuts, n, -1);
	/* Piece sizes 0..15 from an FNV-1a walk over the body. */
	while (at < n) {
		x = (x ^ (uint8_t)body[at]) * 16777619u;
		at += x % 16;
		if (at > n)
			at = n;
		cuts[ncut++] = at;
	}
	mprun(&pieces, boundary, body, n, cuts, ncut, -1);

	CHECK(mprun_same(&whole, &bytes));
	CHECK(mprun_same(&whole, &pieces));
	CHECK(!whole.rec.bad_order && !bytes.rec.bad_order &&
	      !pieces.rec.bad_order);
	CHECK(whole.st != MULTIPART_STOPPED);
	CHECK((whole.st == MULTIPART_ERROR) == (whole.err != NULL));
	CHECK(whole.st != MULTIPART_OK || !whole.rec.in_part);
	CHECK(content_bytes(&whole.rec.log) <= n);

	free(cuts);
	buf_free(&whole.rec.log);
	buf_free(&bytes.rec.log);
	buf_free(&pieces.rec.log);
	return 0;
}
