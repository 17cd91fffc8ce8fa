/* SPDX-License-Identifier: MIT */
/*
 * hclient.h - a small HTTP/1.1 and WebSocket client over one plain TCP
 * connection, for the device side (xmhub send, xmhub sim): keep-alive
 * requests with Content-Length or chunked answers, and the WebSocket
 * upgrade with masked binary frames.  http:// only (doc/sender.md).
 * Every call blocks at most the client's timeout.
 */
#ifndef XMHUB_HCLIENT_H
#define XMHUB_HCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/buf.h"

/* A connection; treat the fields as private. */
struct hclient {
	char host[256], port[8];
	char prefix[256]; /* path of the base URL, no trailing slash */
	const char *key;  /* X-Api-Key, not owned */
	int timeout_ms;
	int fd;		/* -1 when not connected */
	bool ws;	/* upgraded */
	struct buf in;	/* bytes read and not yet used */
	struct buf out; /* a request or frame being written */
	uint64_t rnd;	/* masking keys */
};

/*
 * Sets c up for base_url (http://HOST[:PORT][/PATH]) and the API key key
 * (kept as a pointer).  Connects lazily.  False with a reason in err.
 */
bool hclient_init(struct hclient *c, const char *base_url, const char *key,
		  int timeout_ms, char *err, size_t errlen);

/* Closes the connection and frees the buffers; c may be set up again. */
void hclient_free(struct hclient *c);

/* Drops the connection (the next call connects again). */
void hclient_disconnect(struct hclient *c);

/*
 * One request to prefix + path with the X-Api-Key header; body (len
 * bytes, may be NULL) sent with type ctype.  The answer's body is
 * appended to *resp.  Returns the HTTP status, or -1 when the connection
 * failed (nothing can be said of whether the server acted).
 */
int hclient_request(struct hclient *c, const char *method, const char *path,
		    const char *ctype, const void *body, size_t len,
		    struct buf *resp);

/*
 * Upgrades to a WebSocket at prefix + path.  Returns 101 when upgraded,
 * the HTTP status of a refusal (its body appended to *resp), or -1 when
 * the connection failed.
 */
int hclient_ws_open(struct hclient *c, const char *path, struct buf *resp);

/* Sends one masked binary message; false when the connection failed. */
bool hclient_ws_send(struct hclient *c, const void *p, size_t n);

/*
 * Waits up to timeout_ms (0: only what has arrived) for one data
 * message, appended to *msg; answers Pings on the way.  Returns 1 for a
 * message, 0 when none came in time, -1 when the connection ended or
 * failed (a Close frame included).
 */
int hclient_ws_recv(struct hclient *c, struct buf *msg, int timeout_ms);

#endif
