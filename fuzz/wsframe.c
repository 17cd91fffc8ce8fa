/* SPDX-License-Identifier: MIT */
/*
 * fuzz/wsframe.c - libFuzzer target for WebSocket frame headers and
 * walks (lib/codec/wsframe.h).
 *
 * The input is a byte of settings (bit 0: a client's frames; bits 1-7:
 * the message limit, 0 to 127 times 37 bytes, so that small frames hit
 * it), then the stream.  The stream is walked three times, as a relay
 * does: in one piece, one byte at a time and in pieces of sizes drawn
 * from the input.  The three must walk the same bytes, end the same
 * frames, reach the same verdict and state.  Every header read must be
 * written back by wsframe_put() in at most its own length and read back
 * the same; a walk of a client's frames never lets a data message past
 * the limit, and stops exactly at the header it refuses.  Violations
 * abort(), so libFuzzer keeps the input as a crash artifact.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codec/wsframe.h"

#include "check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct run {
	struct wsframe_walk w;
	size_t walked;
	size_t edges;
};

/* A header read back from its own writing is the same. */
static void
check_rewrite(const struct wsframe_head *h)
{
	struct wsframe_head copy = *h, back;
	uint8_t b[WSFRAME_HEAD_MAX];
	size_t n = wsframe_put(b, &copy);

	CHECK(n >= 2 && n <= h->head_len);
	CHECK(wsframe_head(b, n, &back) == WSFRAME_HEAD);
	CHECK(back.fin == h->fin && back.rsv == h->rsv &&
	      back.opcode == h->opcode && back.masked == h->masked &&
	      memcmp(back.mask, h->mask, 4) == 0 && back.len == h->len &&
	      back.head_len == n);
}

/* Walks the n bytes at p, offered in pieces ending at cuts[0..ncut)
 * (the last is n), as a relay keeps the start of a header. */
static void
walk(struct run *r, bool client, uint64_t max, const uint8_t *p, size_t n,
     const size_t *cuts, size_t ncut)
{
	size_t k;
	bool header;

	memset(r, 0, sizeof(*r));
	r->w.client = client;
	r->w.max = max;
	for (size_t c = 0; c < ncut && r->w.verdict == WSFRAME_PASS; c++) {
		/* No payload to come: the next step is a header. */
		while ((header = r->w.left == 0,
			k = wsframe_step(&r->w, p + r->walked,
					 cuts[c] - r->walked)) > 0) {
			CHECK(k <= cuts[c] - r->walked);
			if (header) {
				CHECK(k == r->w.head.head_len &&
				      r->w.left == r->w.head.len);
				check_rewrite(&r->w.head);
			}
			r->walked += k;
			if (r->w.left == 0)
				r->edges++;
			CHECK(!client || r->w.msg <= max);
		}
	}
}

static bool
same(const struct run *a, const struct run *b)
{
	return a->walked == b->walked && a->edges == b->edges &&
	       a->w.verdict == b->w.verdict && a->w.left == b->w.left &&
	       a->w.msg == b->w.msg && a->w.in_msg == b->w.in_msg &&
	       a->w.closed == b->w.closed && a->w.why == b->w.why;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run whole, bytes, pieces;
	struct wsframe_head h;
	uint8_t close[WSFRAME_CLOSE_MAX];
	char reason[200];
	size_t n, *cuts, ncut = 0, at = 0;
	uint32_t x = 2166136261u;
	uint64_t max;
	bool client;

	if (size < 1)
		return 0;
	client = data[0] & 1;
	max = (uint64_t)(data[0] >> 1) * 37;
	data++;
	n = size - 1;

	if ((cuts = malloc((n + 1) * sizeof(*cuts))) == NULL)
		abort();
	cuts[0] = n;
	walk(&whole, client, max, data, n, cuts, 1);
	for (size_t i = 0; i < n; i++)
		cuts[i] = i + 1;
	walk(&bytes, client, max, data, n, cuts, n);
	/* Piece sizes 0..15 from an FNV-1a walk over the stream. */
	while (at < n) {
		x = (x ^ data[at]) * 16777619u;
		at += x % 16;
		if (at > n)
			at = n;
		cuts[ncut++] = at;
	}
	walk(&pieces, client, max, data, n, cuts, ncut);
	free(cuts);

	CHECK(same(&whole, &bytes));
	CHECK(same(&whole, &pieces));
	CHECK(whole.walked <= n);
	if (whole.w.verdict != WSFRAME_PASS) {
		CHECK(whole.w.why != NULL);
		CHECK(whole.w.left == 0);
	}
	/* A refused frame: the walk stopped at its header, none of its
	 * payload walked. */
	if (whole.w.verdict == WSFRAME_TOO_BIG) {
		CHECK(client);
		CHECK(wsframe_head(data + whole.walked, n - whole.walked, &h) ==
		      WSFRAME_HEAD);
		CHECK(h.len == whole.w.head.len && (h.opcode & 0x8) == 0);
		CHECK(h.len > max - (whole.w.in_msg ? whole.w.msg : 0));
	}
	if (whole.w.verdict == WSFRAME_PROTOCOL)
		CHECK(wsframe_head(data + whole.walked, n - whole.walked, &h) !=
		      WSFRAME_MORE);

	/* A Close frame with the stream as its reason. */
	n = n < sizeof(reason) - 1 ? n : sizeof(reason) - 1;
	memcpy(reason, data, n);
	reason[n] = '\0';
	n = wsframe_close(close, 1009, reason);
	CHECK(n >= 4 && n <= WSFRAME_CLOSE_MAX);
	CHECK(wsframe_head(close, n, &h) == WSFRAME_HEAD);
	CHECK(h.fin && h.opcode == WSFRAME_CLOSE && !h.masked &&
	      h.len == n - 2);
	CHECK(h.len == 2 + strlen(reason) ||
	      (h.len == WSFRAME_CONTROL_MAX &&
	       strlen(reason) > WSFRAME_CONTROL_MAX - 2));
	return 0;
}
