/* SPDX-License-Identifier: MIT */
/*
 * wsframe.h - WebSocket frame headers (RFC 6455, section 5.2), for a
 * relay that checks frames without holding them.
 *
 * wsframe_head() reads one header off the front of a byte string and
 * wsframe_put() writes one.  A walk (struct wsframe_walk) follows a
 * stream of frames through its headers: wsframe_step() moves over one
 * header or a piece of payload at a time and, for frames from a client,
 * checks the rules of the RFC a relay can see in headers and the size of
 * each data message (the sum of its frames' payloads) against a limit,
 * before any payload of a frame that breaks them.  Nothing here
 * allocates or keeps payload bytes.
 */
#ifndef XMHUB_WSFRAME_H
#define XMHUB_WSFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest header: 2 bytes, a 64-bit length, a masking key. */
#define WSFRAME_HEAD_MAX 14
/* The longest control frame payload. */
#define WSFRAME_CONTROL_MAX 125
/* A whole Close frame from a server: header, status code, reason. */
#define WSFRAME_CLOSE_MAX (2 + WSFRAME_CONTROL_MAX)

/* Opcodes. */
#define WSFRAME_CONT 0x0
#define WSFRAME_TEXT 0x1
#define WSFRAME_BINARY 0x2
#define WSFRAME_CLOSE 0x8
#define WSFRAME_PING 0x9
#define WSFRAME_PONG 0xa

/* Close status codes (RFC 6455, section 7.4.1). */
#define WSFRAME_CLOSE_PROTOCOL 1002
#define WSFRAME_CLOSE_POLICY 1008
#define WSFRAME_CLOSE_TOO_BIG 1009

/* One frame header. */
struct wsframe_head {
	bool fin;
	uint8_t rsv; /* RSV1, RSV2, RSV3 as bits 2, 1, 0 */
	uint8_t opcode;
	bool masked;
	uint8_t mask[4]; /* zero when not masked */
	uint64_t len;	 /* payload bytes */
	size_t head_len; /* bytes of the header, 2 to WSFRAME_HEAD_MAX */
};

enum wsframe_status {
	WSFRAME_MORE = 0, /* the bytes are the start of a header */
	WSFRAME_HEAD,	  /* a whole header: *h */
	WSFRAME_BAD	  /* a 64-bit length with its top bit set */
};

/*
 * Reads the header at the front of the n bytes at p into *h.  Lengths
 * in a longer form than needed are taken (as most servers do).  Never
 * reads past p + n.
 */
enum wsframe_status wsframe_head(const uint8_t *p, size_t n,
				 struct wsframe_head *h);

/*
 * Writes h (fin, rsv, opcode, masked, mask, len; the length in its
 * shortest form) to out, which has room for WSFRAME_HEAD_MAX bytes;
 * returns the bytes written and sets h->head_len to it.  A len over
 * 2^63 - 1 is written as 2^63 - 1.
 */
size_t wsframe_put(uint8_t *out, struct wsframe_head *h);

/*
 * Writes a server's Close frame (not masked) with status code and the
 * reason, cut to the 123 bytes a control frame leaves (write ASCII, so
 * that the cut never splits a character) to out, which has room for
 * WSFRAME_CLOSE_MAX bytes; returns its length.
 */
size_t wsframe_close(uint8_t *out, uint16_t code, const char *reason);

enum wsframe_verdict {
	WSFRAME_PASS = 0,
	WSFRAME_TOO_BIG, /* a data message over the limit: Close 1009 */
	WSFRAME_PROTOCOL /* against RFC 6455: Close 1002 */
};

/*
 * A walk through one direction of a connection.  Zero it, then set
 * client and max.  The other fields are the walk's; head, verdict and
 * why are for the caller to read.
 */
struct wsframe_walk {
	bool client;  /* frames from a client: checked (below) */
	uint64_t max; /* the largest data message, in payload bytes */

	uint64_t left; /* payload bytes of the current frame to come */
	uint64_t msg;  /* payload bytes of the data message so far */
	bool in_msg;   /* a data message whose last frame is to come */
	bool closed;   /* a Close frame was seen */
	struct wsframe_head head;     /* the last header read */
	enum wsframe_verdict verdict; /* sticky */
	const char *why; /* what the frame broke, for a log or Close */
};

/*
 * One step of the walk over the n bytes at p, the next bytes of the
 * stream: a whole header (its bytes), or up to n bytes of the current
 * frame's payload.  Returns the bytes walked; 0 when p holds only the
 * start of a header (call again with more bytes after it), when n is 0,
 * or on a verdict.  After a step that returns more than 0, w->left == 0
 * means a frame has just ended.
 *
 * For a client's frames, a header is refused before any of its payload
 * is walked: WSFRAME_TOO_BIG when the data message it belongs to would
 * exceed max bytes of payload; WSFRAME_PROTOCOL when it is not masked,
 * has RSV bits (no extension is ever negotiated here), an unknown
 * opcode, a control frame that is fragmented or longer than 125 bytes, a
 * continuation with no message under way or a new message inside one,
 * or an unreadable length.  A server's frames are only followed, except
 * for an unreadable length.  The verdict stays: every later step
 * returns 0.  w->why says what was wrong (a static string).
 */
size_t wsframe_step(struct wsframe_walk *w, const uint8_t *p, size_t n);

#endif
