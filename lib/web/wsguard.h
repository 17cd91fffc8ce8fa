/* SPDX-License-Identifier: MIT */
/*
 * wsguard.h - the WebSocket front of ws/xmhub-ws-guard: a relay between
 * the web server and websocketd 0.4.1 that enforces the size of what
 * clients send (doc/websocket.md).
 *
 * websocketd reads each whole message into memory before its program
 * sees a byte, with no limit.  The guard relays each connection's HTTP
 * upgrade request and response unchanged (heads up to WSGUARD_HEAD_MAX
 * bytes), then bytes both ways, and follows the client's frame headers
 * (codec/wsframe): a frame that would make a data message larger than
 * the limit, or that breaks RFC 6455, gets the client a Close frame
 * (1009, 1002) and ends both connections before any of its payload is
 * read.  When websocketd ends a connection without a Close (its program
 * exited, after its error message), the client gets a Close 1008.
 *
 * One process, one epoll loop, two fixed buffers of WSGUARD_BUF bytes
 * per connection: memory is bounded by the number of connections, which
 * is capped (above the cap a 503, then the end).  Nothing is allocated
 * in proportion to anything a client sends.
 */
#ifndef XMHUB_WSGUARD_H
#define XMHUB_WSGUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

/* Bytes buffered per direction and connection. */
#define WSGUARD_BUF 16384
/* The longest request or response head. */
#define WSGUARD_HEAD_MAX 8192
/* The default message limit: the ingest program's largest batch (256
 * KiB, domain/wsingest.h) and 4 KiB more, so that a batch just over it
 * still gets the program's own error message. */
#define WSGUARD_MAX_MESSAGE (262144 + 4096)

struct wsguard_conf {
	int listen_fd;		    /* from wsguard_listen() */
	struct sockaddr_in backend; /* websocketd */
	uint64_t max_message;	    /* payload bytes of a client's message */
	int max_conns;		    /* connections relayed at once */
};

/*
 * Parses "A.B.C.D:PORT" into *a.  False when s is anything else.
 */
bool wsguard_addr(const char *s, struct sockaddr_in *a);

/*
 * A non-blocking TCP socket listening on a; -1 with a reason in detail
 * when it cannot be had.  The caller closes it after wsguard_serve().
 */
int wsguard_listen(const struct sockaddr_in *a, char *detail, size_t dlen);

/*
 * Relays connections accepted on c->listen_fd to c->backend until
 * SIGINT or SIGTERM (blocked here and taken through a signalfd; the
 * signal mask is restored on return).  Refusals and failures are logged
 * to stderr, one line each.  Returns 0 after a stop signal (every
 * connection closed, all memory freed), 1 when the loop cannot be set up
 * (logged).
 */
int wsguard_serve(const struct wsguard_conf *c);

#endif
