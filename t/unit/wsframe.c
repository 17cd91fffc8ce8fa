/* SPDX-License-Identifier: MIT */
/*
 * t/unit/wsframe.c - WebSocket frame headers and walks
 * (lib/codec/wsframe.h, RFC 6455 section 5.2).
 *
 * Frames are built by hand from the RFC's layout (not with wsframe_put,
 * which is tested on its own), and walked as a relay does: in one piece,
 * one byte at a time and in odd pieces, keeping back the start of a
 * header until more bytes follow it.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codec/wsframe.h"
#include "tap.h"

/* A frame header by the RFC's layout: FIN/RSV/opcode byte, mask bit and
 * the length in the form asked for (0: shortest, else 7, 16, 64 bits),
 * then the key when masked.  Returns its length. */
static size_t
hdr(uint8_t *out, uint8_t b0, bool masked, uint64_t len, int form)
{
	size_t n = 2;

	if (form == 0)
		form = len < 126 ? 7 : len < 65536 ? 16 : 64;
	out[0] = b0;
	out[1] = masked ? 0x80 : 0;
	if (form == 7) {
		out[1] |= (uint8_t)len;
	} else if (form == 16) {
		out[1] |= 126;
		out[2] = (uint8_t)(len >> 8);
		out[3] = (uint8_t)len;
		n = 4;
	} else {
		out[1] |= 127;
		for (int i = 0; i < 8; i++)
			out[2 + i] = (uint8_t)(len >> (56 - 8 * i));
		n = 10;
	}
	if (masked) {
		memcpy(out + n, "\x11\x22\x33\x44", 4);
		n += 4;
	}
	return n;
}

/* Appends a whole frame (masked, payload of len bytes of 'x'). */
static size_t
frame(uint8_t *out, uint8_t b0, bool masked, size_t len)
{
	size_t n = hdr(out, b0, masked, len, 0);

	memset(out + n, 'x', len);
	return n + len;
}

struct result {
	size_t walked;	/* bytes walked before the end or a verdict */
	unsigned edges; /* frames that ended */
	enum wsframe_verdict verdict;
	bool closed;
};

/*
 * Walks the n bytes at p as a relay would, taking them in pieces of
 * `piece` bytes (0: all at once): bytes not walked yet stay at the
 * front of what the next step sees.
 */
static struct result
walk(bool client, uint64_t max, const uint8_t *p, size_t n, size_t piece)
{
	struct wsframe_walk w = {.client = client, .max = max};
	struct result r = {0};
	size_t have = 0, k;

	if (piece == 0)
		piece = n;
	while (have < n && w.verdict == WSFRAME_PASS) {
		have += n - have < piece ? n - have : piece;
		while ((k = wsframe_step(&w, p + r.walked, have - r.walked)) >
		       0) {
			r.walked += k;
			if (w.left == 0)
				r.edges++;
		}
	}
	r.verdict = w.verdict;
	r.closed = w.closed;
	return r;
}

/* The same result whatever the pieces. */
static void
walk_all_ways(const char *name, bool client, uint64_t max, const uint8_t *p,
	      size_t n, size_t walked, unsigned edges,
	      enum wsframe_verdict verdict)
{
	static const size_t pieces[] = {0, 1, 2, 3, 7, 13, 64};

	for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		struct result r = walk(client, max, p, n, pieces[i]);

		if (!ok(r.walked == walked && r.edges == edges &&
				r.verdict == verdict,
			"%s (pieces of %zu)", name, pieces[i]))
			diag("walked %zu, edges %u, verdict %d; want %zu, %u, "
			     "%d",
			     r.walked, r.edges, (int)r.verdict, walked, edges,
			     (int)verdict);
	}
}

static void
test_head(void)
{
	uint8_t b[WSFRAME_HEAD_MAX + 1];
	struct wsframe_head h;
	static const struct {
		uint64_t len;
		int form;
		size_t head_len;
	} cases[] = {
		{0, 7, 2},
		{125, 7, 2},
		{126, 16, 4},
		{65535, 16, 4},
		{65536, 64, 10},
		{157286400, 64, 10},
		{0x7fffffffffffffffULL, 64, 10},
		{5, 16, 4},
		{5, 64, 10},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int m = 0; m <= 1; m++) {
			size_t n = hdr(b, 0x82, m, cases[i].len, cases[i].form);
			bool prefixes = true;

			for (size_t k = 0; k < n; k++)
				if (wsframe_head(b, k, &h) != WSFRAME_MORE)
					prefixes = false;
			ok(prefixes,
			   "len %llu in %d bits, masked %d: every "
			   "prefix wants more",
			   (unsigned long long)cases[i].len, cases[i].form, m);
			ok(wsframe_head(b, n, &h) == WSFRAME_HEAD &&
				   h.len == cases[i].len &&
				   h.head_len == cases[i].head_len + 4u * m &&
				   h.masked == m && h.fin &&
				   h.opcode == WSFRAME_BINARY && h.rsv == 0,
			   "len %llu in %d bits, masked %d: read",
			   (unsigned long long)cases[i].len, cases[i].form, m);
			ok(!m || memcmp(h.mask, "\x11\x22\x33\x44", 4) == 0,
			   "masked %d: the key", m);
		}
	}
	hdr(b, 0x70 | WSFRAME_CONT, true, 3, 0);
	ok(wsframe_head(b, 6, &h) == WSFRAME_HEAD && !h.fin && h.rsv == 7 &&
		   h.opcode == 0,
	   "FIN clear, RSV bits, continuation");
	hdr(b, 0x82, false, 0x8000000000000000ULL, 64);
	ok(wsframe_head(b, 10, &h) == WSFRAME_BAD,
	   "a 64-bit length with its top bit set: bad");
}

static void
test_put(void)
{
	static const uint64_t lens[] = {
		0, 1, 125, 126, 65535, 65536, 157286400, 0x7fffffffffffffffULL};
	uint8_t b[WSFRAME_HEAD_MAX], want[WSFRAME_HEAD_MAX];
	struct wsframe_head h, back;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (int m = 0; m <= 1; m++) {
			size_t wn = hdr(want, 0x02, m, lens[i], 0);

			memset(&h, 0, sizeof(h));
			h.opcode = WSFRAME_BINARY;
			h.masked = m;
			memcpy(h.mask, m ? "\x11\x22\x33\x44" : "\0\0\0\0", 4);
			h.len = lens[i];
			ok(wsframe_put(b, &h) == wn && h.head_len == wn &&
				   memcmp(b, want, wn) == 0,
			   "put: len %llu, masked %d, shortest form",
			   (unsigned long long)lens[i], m);
			ok(wsframe_head(b, wn, &back) == WSFRAME_HEAD &&
				   memcmp(&back, &h, sizeof(h)) == 0,
			   "put: len %llu, masked %d, reads back",
			   (unsigned long long)lens[i], m);
		}
	}
	memset(&h, 0, sizeof(h));
	h.fin = true;
	h.rsv = 5;
	h.opcode = WSFRAME_PING;
	h.len = UINT64_MAX;
	wsframe_put(b, &h);
	ok(b[0] == 0xd9 && wsframe_head(b, 10, &back) == WSFRAME_HEAD &&
		   back.len == 0x7fffffffffffffffULL,
	   "put: FIN, RSV, opcode; a length over 2^63 - 1 is cut to it");
}

static void
test_close(void)
{
	uint8_t b[WSFRAME_CLOSE_MAX + 8];
	char reason[200];
	size_t n;

	n = wsframe_close(b, 1009, "too big");
	ok(n == 11 && memcmp(b, "\x88\x09\x03\xf1too big", 11) == 0,
	   "close: 1009 and the reason, not masked");
	memset(reason, 'r', sizeof(reason) - 1);
	reason[sizeof(reason) - 1] = '\0';
	memset(b, 0xee, sizeof(b));
	n = wsframe_close(b, 1008, reason);
	ok(n == WSFRAME_CLOSE_MAX && b[1] == 125 && b[2] == 0x03 &&
		   b[3] == 0xf0 && b[n - 1] == 'r' && b[n] == 0xee,
	   "close: a long reason cut to 123 bytes");
	n = wsframe_close(b, 1002, "");
	ok(n == 4 && memcmp(b, "\x88\x02\x03\xea", 4) == 0, "close: no reason");
}

static void
test_walk(void)
{
	uint8_t *b = malloc(1 << 20);
	size_t n, one;
	struct wsframe_walk w = {.client = true, .max = 1000};

	if (b == NULL)
		abort();

	/* Frames under, at and over the limit. */
	n = frame(b, 0x82, true, 1000);
	walk_all_ways("a frame of exactly max bytes passes", true, 1000, b, n,
		      n, 1, WSFRAME_PASS);
	n = frame(b, 0x82, true, 1001);
	walk_all_ways("a frame of max + 1 bytes: too big, at its header", true,
		      1000, b, n, 0, 0, WSFRAME_TOO_BIG);
	n = hdr(b, 0x82, true, 157286400, 0);
	memset(b + n, 'x', 100);
	walk_all_ways("a 150 MB frame announced: too big, no payload walked",
		      true, 262144, b, n + 100, 0, 0, WSFRAME_TOO_BIG);

	/* Fragmented: the sum of the frames counts. */
	n = frame(b, 0x02, true, 400);
	n += frame(b + n, 0x00, true, 400);
	n += frame(b + n, 0x80, true, 200);
	walk_all_ways("three frames of one message, max in all: pass", true,
		      1000, b, n, n, 3, WSFRAME_PASS);
	n = frame(b, 0x02, true, 400);
	n += frame(b + n, 0x00, true, 400);
	one = n;
	n += frame(b + n, 0x80, true, 201);
	walk_all_ways("three frames of one message, max + 1 in all: too big at "
		      "the last header",
		      true, 1000, b, n, one, 2, WSFRAME_TOO_BIG);
	n = frame(b, 0x02, true, 600);
	n += frame(b + n, 0x89, true, 125);
	n += frame(b + n, 0x8a, true, 125);
	n += frame(b + n, 0x80, true, 400);
	n += frame(b + n, 0x82, true, 1000);
	walk_all_ways("control frames inside a message do not count; the next "
		      "message starts from 0",
		      true, 1000, b, n, n, 5, WSFRAME_PASS);

	/* Rules of the RFC. */
	static const struct {
		uint8_t b0;
		bool masked;
		size_t len;
		const char *name;
	} bad[] = {
		{0x82, false, 10, "not masked"},
		{0xc2, true, 10, "RSV1"},
		{0x92, true, 10, "RSV3"},
		{0x83, true, 10, "opcode 3"},
		{0x8b, true, 10, "opcode 11"},
		{0x09, true, 10, "a fragmented ping"},
		{0x89, true, 126, "a ping of 126 bytes"},
		{0x88, true, 126, "a close of 126 bytes"},
		{0x80, true, 10, "a continuation outside a message"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = frame(b, 0x82, true, 5);
		one = n;
		n += frame(b + n, bad[i].b0, bad[i].masked, bad[i].len);
		walk_all_ways(bad[i].name, true, 1000, b, n, one, 1,
			      WSFRAME_PROTOCOL);
	}
	n = frame(b, 0x02, true, 5);
	one = n;
	n += frame(b + n, 0x82, true, 5);
	walk_all_ways("a new message inside a fragmented one", true, 1000, b, n,
		      one, 1, WSFRAME_PROTOCOL);
	n = hdr(b, 0x82, true, 0x8000000000000000ULL, 64);
	walk_all_ways("a length with its top bit set", true, 1000, b, n, 0, 0,
		      WSFRAME_PROTOCOL);

	/* The verdict stays; why says it. */
	n = frame(b, 0x82, true, 1001);
	ok(wsframe_step(&w, b, n) == 0 && w.verdict == WSFRAME_TOO_BIG &&
		   w.head.len == 1001 && w.why != NULL,
	   "too big: the header is kept, why is said");
	ok(wsframe_step(&w, b, n) == 0 && w.verdict == WSFRAME_TOO_BIG,
	   "too big: and stays");

	/* Steps: header, then payload in pieces; left counts down. */
	memset(&w, 0, sizeof(w));
	w.client = true;
	w.max = 1000;
	n = frame(b, 0x82, true, 300);
	ok(wsframe_step(&w, b, 5) == 0 && w.left == 0,
	   "a step on 5 of the 8 header bytes: nothing");
	ok(wsframe_step(&w, b, n) == 8 && w.left == 300,
	   "a step on the frame: its header, 300 bytes left");
	ok(wsframe_step(&w, b + 8, 100) == 100 && w.left == 200,
	   "100 payload bytes");
	ok(wsframe_step(&w, b + 108, n) == 200 && w.left == 0,
	   "the rest, no more than the frame");
	n = frame(b, 0x88, true, 2);
	ok(wsframe_step(&w, b, n) == 6 && w.closed, "a Close frame is seen");

	/* A server's frames: not masked, no limit, Close seen. */
	n = frame(b, 0x82, false, 4);
	n += frame(b + n, 0x82, false, 5000);
	n += frame(b + n, 0x88, false, 2);
	walk_all_ways("a server's frames: not masked, no limit", false, 0, b, n,
		      n, 3, WSFRAME_PASS);
	memset(&w, 0, sizeof(w));
	for (size_t at = 0; (one = wsframe_step(&w, b + at, n - at)) > 0;)
		at += one;
	ok(w.closed && w.left == 0, "a server's Close is seen");
	free(b);
}

int
main(void)
{
	test_head();
	test_put();
	test_close();
	test_walk();
	return tap_done();
}
