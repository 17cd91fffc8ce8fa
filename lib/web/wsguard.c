/* SPDX-License-Identifier: MIT */
/*
 * wsguard.c - the WebSocket front (see wsguard.h).
 *
 * Each connection has two halves: up (client to websocketd) and down
 * (websocketd to client), each a fixed buffer holding b[off..len), of
 * which b[off..walk) may be sent.  Before the upgrade, walk covers a
 * whole head; after it, walk is where the walk of the frames
 * (codec/wsframe) got to, so a header is only sent once it has been
 * checked, and a frame refused is never sent nor its payload read.  The
 * down half follows the server's frames too, so that a Close of the
 * guard's own can go after the last whole frame.
 *
 * The end of a connection: the last bytes for the client (a response,
 * frames, a Close) are flushed, then its write side is shut (FIN) and
 * the connection lingers, reading nothing, until the client closes too
 * or LINGER_MS pass: closing with unread input would send a reset that
 * can destroy what was just sent.
 */
#define _GNU_SOURCE /* accept4, memmem, EPOLLRDHUP */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "codec/wsframe.h"
#include "web/http.h"
#include "web/wsguard.h"
#include "core/clock.h"
#include "core/log.h"

/* Connections past the cap that get a 503 rather than a wait. */
#define REFUSE_SLOTS 16
/* The upgrade must be done in this time. */
#define HANDSHAKE_MS 30000
/* The last bytes for the client: this long to leave, then this long for
 * the client to close. */
#define FLUSH_MS 5000
#define LINGER_MS 2000
/* Deadlines are looked at this often. */
#define SWEEP_MS 250
#define EVENTS 64

enum phase {
	PH_REQUEST,  /* reading the request head */
	PH_RESPONSE, /* the request head is in: waiting for the response's */
	PH_OPEN,     /* 101: frames both ways, the client's checked */
	PH_PLAIN,    /* not 101: the response, then the end */
	PH_FLUSH,    /* the last bytes for the client */
	PH_LINGER    /* FIN sent: waiting for the client's */
};

struct half {
	uint8_t *b;    /* WSGUARD_BUF, and room for a Close behind */
	uint64_t base; /* the stream offset of b[0] */
	size_t off, walk, len;
	struct wsframe_walk w;
};

struct conn;

/* One socket of a connection, as epoll reports it. */
struct end {
	struct conn *c;
	int fd;
	bool registered;
	uint32_t events; /* registered */
};

struct conn {
	struct end client, backend;
	enum phase phase;
	bool connected;	 /* the backend's connect has finished */
	bool client_eof; /* the client shut its side */
	bool up_done;	 /* nothing more goes up once the walked is sent */
	bool up_shut;	 /* ... and the backend's write side is shut */
	bool torn;	 /* the server's frames are lost: no Close of ours */
	bool dead;
	int64_t deadline; /* ms; 0: none */
	uint64_t edge;	  /* down: the stream offset after the last frame */
	char peer[48];	  /* X-Forwarded-For, for the log */
	struct half up, down;
	struct conn *prev, *next;
	/* Last: malloc'd, not cleared, so pages are touched by use only. */
	uint8_t upb[WSGUARD_BUF + WSFRAME_CLOSE_MAX];
	uint8_t downb[WSGUARD_BUF + WSFRAME_CLOSE_MAX];
};

struct guard {
	const struct wsguard_conf *conf;
	int ep, sig;
	struct conn *conns, *dead; /* live ones; freed after each batch */
	int nconns;
	bool accepting;
	bool deadlines; /* some connection has one */
	int64_t last_sweep;
};

/* epoll tags of the listening socket and the signalfd. */
static int tag_listen, tag_signal;

bool
wsguard_addr(const char *s, struct sockaddr_in *a)
{
	const char *colon = strrchr(s, ':');
	char host[INET_ADDRSTRLEN];
	char *end;
	long port;

	if (colon == NULL || (size_t)(colon - s) >= sizeof(host))
		return false;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || errno != 0 || port < 1 ||
	    port > 65535)
		return false;
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &a->sin_addr) == 1;
}

int
wsguard_listen(const struct sockaddr_in *a, char *detail, size_t dlen)
{
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(detail, dlen, "socket: %s", strerror(errno));
		goto fail;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (const struct sockaddr *)a, sizeof(*a)) < 0 ||
	    listen(fd, 128) < 0) {
		snprintf(detail, dlen, "listen: %s", strerror(errno));
		goto fail;
	}
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* One log line, naming the client when the web server did. */
static void __attribute__((format(printf, 2, 3)))
say(const struct conn *c, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warn("%s%s%s", c->peer[0] ? c->peer : "", c->peer[0] ? ": " : "",
		 msg);
}

/* The registered events of an end become want. */
static void
arm_end(struct guard *g, struct end *e, uint32_t want)
{
	struct epoll_event ev = {.events = want, .data.ptr = e};

	if (e->fd < 0 || (e->registered && want == e->events))
		return;
	if (epoll_ctl(g->ep, e->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD,
		      e->fd, &ev) < 0)
		say(e->c, "epoll_ctl: %s", strerror(errno));
	e->events = want;
	e->registered = true;
}

/* Room for bytes to come, once compact() has run. */
static size_t
room(const struct half *h)
{
	return WSGUARD_BUF - (h->len - h->off);
}

/* Moves the held bytes to the front when that frees a useful room. */
static void
compact(struct half *h)
{
	if (h->off == 0 || (h->off < h->len && h->len <= WSGUARD_BUF / 2))
		return;
	memmove(h->b, h->b + h->off, h->len - h->off);
	h->base += h->off;
	h->walk -= h->off;
	h->len -= h->off;
	h->off = 0;
}

/* What each end waits for, from the connection's state. */
static void
arm(struct guard *g, struct conn *c)
{
	uint32_t cw = 0, bw = 0;

	if (c->phase == PH_LINGER) {
		cw = EPOLLRDHUP;
	} else {
		if (c->phase <= PH_OPEN && !c->client_eof && room(&c->up) > 0)
			cw |= EPOLLIN;
		if (c->phase >= PH_OPEN && c->down.off < c->down.walk)
			cw |= EPOLLOUT;
	}
	if (!c->connected || c->up.off < c->up.walk)
		bw |= EPOLLOUT;
	if (c->connected && c->phase <= PH_PLAIN && room(&c->down) > 0)
		bw |= EPOLLIN;
	arm_end(g, &c->client, cw);
	arm_end(g, &c->backend, bw);
}

static void
set_deadline(struct guard *g, struct conn *c, int ms)
{
	c->deadline = ms > 0 ? clock_mono_ms() + ms : 0;
	if (ms > 0)
		g->deadlines = true;
}

static void
close_backend(struct conn *c)
{
	if (c->backend.fd >= 0)
		close(c->backend.fd);
	c->backend.fd = -1;
	c->backend.registered = false;
}

/* Ends the connection now; its memory goes after this batch of events
 * (later events of the batch may still name it). */
static void
finish(struct guard *g, struct conn *c)
{
	if (c->dead)
		return;
	close_backend(c);
	close(c->client.fd);
	c->dead = true;
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		g->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	c->next = g->dead;
	g->dead = c;
	g->nconns--;
}

/* The last bytes of down go to the client, then the end. */
static void
flush_then_end(struct guard *g, struct conn *c)
{
	close_backend(c);
	c->up.off = c->up.walk = c->up.len = 0;
	c->phase = PH_FLUSH;
	set_deadline(g, c, FLUSH_MS);
}

/* Before any response: an HTTP answer with {"detail": ...}, then the
 * end. */
static void
answer(struct guard *g, struct conn *c, int status, const char *reason,
       const char *detail)
{
	struct half *d = &c->down;
	int n;

	/* A 503 says when to try again, as the programs' do (http.h); so
	 * does a 502: websocketd gone or restarting is as passing. */
	char retry[32] = "";

	if (status == 503 || status == 502)
		snprintf(retry, sizeof(retry), "Retry-After: %d\r\n",
			 HTTP_RETRY_AFTER);
	n = snprintf((char *)d->b, WSGUARD_BUF,
		     "HTTP/1.1 %d %s\r\n"
		     "Content-Type: application/json\r\n"
		     "Content-Length: %zu\r\n"
		     "%s"
		     "Connection: close\r\n\r\n"
		     "{\"detail\":\"%s\"}",
		     status, reason, strlen(detail) + 13, retry, detail);
	d->off = 0;
	d->walk = d->len = (size_t)n;
	flush_then_end(g, c);
}

/*
 * After the upgrade: drops what of down is not a whole frame yet (when
 * none of it was sent) and, when code is not 0, puts a Close after the
 * last whole frame.  False when the client's side of the stream cannot
 * take one (a frame half sent, or the server's frames lost).
 */
static bool
close_frame(struct conn *c, uint16_t code, const char *reason)
{
	struct half *d = &c->down;

	if (c->torn || c->edge < d->base + d->off)
		return false;
	d->len = d->walk = (size_t)(c->edge - d->base);
	if (code != 0) {
		d->len += wsframe_close(d->b + d->len, code, reason);
		d->walk = d->len;
	}
	return true;
}

/* The client's frame broke the limit or the RFC: Close, then the end,
 * its payload unread. */
static void
refuse(struct guard *g, struct conn *c)
{
	const struct wsframe_walk *w = &c->up.w;
	char reason[WSFRAME_CONTROL_MAX];
	uint16_t code;

	if (w->verdict == WSFRAME_TOO_BIG) {
		code = WSFRAME_CLOSE_TOO_BIG;
		snprintf(reason, sizeof(reason),
			 "a message is limited to %llu bytes",
			 (unsigned long long)g->conf->max_message);
		say(c,
		    "a frame of %llu bytes makes a message of %llu: over the "
		    "limit of %llu, Close %u",
		    (unsigned long long)w->head.len,
		    (unsigned long long)(w->head.len +
					 (w->in_msg ? w->msg : 0)),
		    (unsigned long long)g->conf->max_message, code);
	} else {
		code = WSFRAME_CLOSE_PROTOCOL;
		snprintf(reason, sizeof(reason), "%s", w->why);
		say(c, "%s: Close %u", w->why, code);
	}
	if (!close_frame(c, code, reason))
		say(c, "the server's frames are not at an end: no Close");
	flush_then_end(g, c);
}

/* Walks the client's frames that came in; a refused one ends the
 * connection. */
static void
walk_up(struct guard *g, struct conn *c)
{
	struct half *u = &c->up;
	size_t k;

	while ((k = wsframe_step(&u->w, u->b + u->walk, u->len - u->walk)) > 0)
		u->walk += k;
	if (u->w.verdict != WSFRAME_PASS)
		refuse(g, c);
}

/* Walks the server's frames, marking where each ends. */
static void
walk_down(struct conn *c)
{
	struct half *d = &c->down;
	size_t k;

	if (c->torn) {
		d->walk = d->len;
		return;
	}
	while ((k = wsframe_step(&d->w, d->b + d->walk, d->len - d->walk)) >
	       0) {
		d->walk += k;
		if (d->w.left == 0)
			c->edge = d->base + d->walk;
	}
	if (d->w.verdict != WSFRAME_PASS) {
		/* Not frames any more: relayed as they are. */
		c->torn = true;
		d->walk = d->len;
	}
}

/* The end of a request or response head held in h (after its empty
 * line), 0 while it is not all in; from is where the last look ended. */
static size_t
head_end(const struct half *h, size_t from)
{
	const uint8_t *e;

	from = from > 3 ? from - 3 : 0;
	e = memmem(h->b + from, h->len - from, "\r\n\r\n", 4);
	return e == NULL ? 0 : (size_t)(e - h->b) + 4;
}

/* Keeps the request's X-Forwarded-For for the log lines. */
static void
note_peer(struct conn *c, size_t end)
{
	static const char name[] = "\r\nX-Forwarded-For:";
	const char *p = (const char *)c->up.b, *stop = p + end;
	size_t n = 0;

	for (; p + sizeof(name) - 1 < stop; p++)
		if (strncasecmp(p, name, sizeof(name) - 1) == 0)
			break;
	if (p + sizeof(name) - 1 >= stop)
		return;
	for (p += sizeof(name) - 1; p < stop && *p == ' '; p++)
		;
	while (p < stop && n < sizeof(c->peer) - 1 &&
	       strchr("0123456789abcdefABCDEF.:, ", *p) != NULL && *p != '\0')
		c->peer[n++] = *p++;
	c->peer[n] = '\0';
}

/* The response head is in: 101 opens the frames, anything else is
 * relayed and ends the connection. */
static void
response_in(struct guard *g, struct conn *c, size_t end)
{
	const uint8_t *s = c->down.b;

	if (end >= 16 && memcmp(s, "HTTP/1.", 7) == 0 && s[8] == ' ' &&
	    memcmp(s + 9, "101", 3) == 0 && (s[12] == ' ' || s[12] == '\r')) {
		c->phase = PH_OPEN;
		c->down.walk = end;
		c->edge = c->down.base + end;
		set_deadline(g, c, 0);
		walk_down(c);
		walk_up(g, c);
		return;
	}
	/* Not upgraded: websocketd would keep the connection for more
	 * requests, which must not pass unchecked.  Its answer goes back;
	 * the end of the request tells it to close after it. */
	c->phase = PH_PLAIN;
	c->down.walk = c->down.len;
	c->up.len = c->up.walk;
	c->up_done = true;
}

/* Bytes from the client. */
static void
read_client(struct guard *g, struct conn *c)
{
	struct half *u = &c->up;
	size_t before, end;
	ssize_t n;

	compact(u);
	if (room(u) == 0)
		return;
	before = u->len;
	n = recv(c->client.fd, u->b + u->len, room(u), 0);
	if (n < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			finish(g, c);
		return;
	}
	if (n == 0) {
		/* Before the upgrade there is nothing to finish. */
		if (c->phase == PH_REQUEST) {
			finish(g, c);
			return;
		}
		c->client_eof = true;
		c->up_done = true;
		return;
	}
	u->len += (size_t)n;
	if (c->phase == PH_OPEN) {
		walk_up(g, c);
	} else if (c->phase == PH_REQUEST) {
		end = head_end(u, before);
		if (end > 0 && end <= WSGUARD_HEAD_MAX) {
			u->walk = end;
			note_peer(c, end);
			c->phase = PH_RESPONSE;
		} else if (end > 0 || u->len >= WSGUARD_HEAD_MAX) {
			answer(g, c, 431, "Request Header Fields Too Large",
			       "the request headers are too large");
		}
	}
}

/* Bytes from websocketd. */
static void
read_backend(struct guard *g, struct conn *c)
{
	struct half *d = &c->down;
	size_t before, end;
	ssize_t n;

	compact(d);
	if (room(d) == 0)
		return;
	before = d->len;
	n = recv(c->backend.fd, d->b + d->len, room(d), 0);
	if (n < 0 &&
	    (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		/* websocketd ended the connection (its program exited). */
		if (c->phase == PH_REQUEST || c->phase == PH_RESPONSE) {
			answer(g, c, 502, "Bad Gateway",
			       "the WebSocket server closed the connection");
		} else if (c->phase == PH_OPEN) {
			if (!close_frame(c,
					 c->up.w.closed || c->down.w.closed ||
							 c->client_eof
						 ? 0
						 : WSFRAME_CLOSE_POLICY,
					 "the server ended the session"))
				say(c, "websocketd ended inside a frame");
			flush_then_end(g, c);
		} else {
			flush_then_end(g, c);
		}
		return;
	}
	d->len += (size_t)n;
	if (c->phase == PH_OPEN) {
		walk_down(c);
	} else if (c->phase == PH_PLAIN) {
		d->walk = d->len;
	} else if ((end = head_end(d, before)) > 0 && end <= WSGUARD_HEAD_MAX) {
		response_in(g, c, end);
	} else if (end > 0 || d->len >= WSGUARD_HEAD_MAX) {
		answer(g, c, 502, "Bad Gateway",
		       "the WebSocket server's answer is too large");
	}
}

/* Sends what may go from h to fd; false when the peer is gone. */
static bool
send_half(int fd, struct half *h)
{
	ssize_t n;

	if (h->off >= h->walk)
		return true;
	n = send(fd, h->b + h->off, h->walk - h->off, MSG_NOSIGNAL);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ||
		       errno == EINTR;
	h->off += (size_t)n;
	return true;
}

static void
write_backend(struct guard *g, struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (!c->connected) {
		if (getsockopt(c->backend.fd, SOL_SOCKET, SO_ERROR, &err,
			       &len) < 0)
			err = errno;
		if (err == EINPROGRESS)
			return;
		if (err != 0) {
			say(c, "websocketd: %s", strerror(err));
			answer(g, c, 502, "Bad Gateway",
			       "the WebSocket server is not reachable");
			return;
		}
		c->connected = true;
	}
	if (!send_half(c->backend.fd, &c->up)) {
		/* It is gone: its end shows when its socket reads 0. */
		c->up.off = c->up.walk;
		c->up_done = true;
	}
	if (c->up_done && !c->up_shut && c->up.off == c->up.walk) {
		shutdown(c->backend.fd, SHUT_WR);
		c->up_shut = true;
	}
}

static void
write_client(struct guard *g, struct conn *c)
{
	if (!send_half(c->client.fd, &c->down)) {
		finish(g, c);
		return;
	}
	if (c->phase == PH_FLUSH && c->down.off == c->down.walk) {
		if (c->client_eof) {
			finish(g, c);
			return;
		}
		shutdown(c->client.fd, SHUT_WR);
		c->phase = PH_LINGER;
		set_deadline(g, c, LINGER_MS);
	}
}

/* The web server's connections over the cap get this (and no slot of
 * the backend). */
static void
refuse_busy(struct guard *g, struct conn *c)
{
	say(c, "%d connections: 503", g->conf->max_conns);
	answer(g, c, 503, "Service Unavailable",
	       "too many WebSocket connections; try again later");
}

static void
open_backend(struct guard *g, struct conn *c)
{
	const struct sockaddr_in *a = &g->conf->backend;
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		say(c, "socket: %s", strerror(errno));
		answer(g, c, 503, "Service Unavailable",
		       "the WebSocket front is out of resources");
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->backend.fd = fd;
	if (connect(fd, (const struct sockaddr *)a, sizeof(*a)) == 0) {
		c->connected = true;
	} else if (errno != EINPROGRESS) {
		say(c, "websocketd: %s", strerror(errno));
		answer(g, c, 502, "Bad Gateway",
		       "the WebSocket server is not reachable");
	}
}

static void
accept_all(struct guard *g)
{
	struct conn *c;
	int fd, one = 1;

	while (g->nconns < g->conf->max_conns + REFUSE_SLOTS) {
		fd = accept4(g->conf->listen_fd, NULL, NULL,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				log_error("accept: %s", strerror(errno));
			return;
		}
		if ((c = malloc(sizeof(*c))) == NULL) {
			log_error("out of memory");
			close(fd);
			return;
		}
		memset(c, 0, offsetof(struct conn, upb));
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->client = (struct end){.c = c, .fd = fd};
		c->backend = (struct end){.c = c, .fd = -1};
		c->up.b = c->upb;
		c->down.b = c->downb;
		c->up.w.client = true;
		c->up.w.max = g->conf->max_message;
		c->phase = PH_REQUEST;
		c->next = g->conns;
		if (g->conns != NULL)
			g->conns->prev = c;
		g->conns = c;
		g->nconns++;
		set_deadline(g, c, HANDSHAKE_MS);
		if (g->nconns > g->conf->max_conns)
			refuse_busy(g, c);
		else
			open_backend(g, c);
		arm(g, c);
	}
}

/* One event of a connection's socket. */
static void
handle(struct guard *g, struct end *e, uint32_t ev)
{
	struct conn *c = e->c;
	bool client = e == &c->client;

	if (c->dead)
		return;
	/* In the linger: the client closed too.  Before: it reset. */
	if (client && (c->phase == PH_LINGER || (ev & (EPOLLHUP | EPOLLERR)))) {
		finish(g, c);
		return;
	}
	if (client) {
		if ((ev & EPOLLIN) && c->phase <= PH_OPEN && !c->client_eof)
			read_client(g, c);
	} else if (e->fd >= 0) {
		/* The connect has finished, one way or the other. */
		if (!c->connected && (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			write_backend(g, c);
		if (!c->dead && c->backend.fd >= 0 && c->connected &&
		    (ev & (EPOLLIN | EPOLLHUP | EPOLLERR)))
			read_backend(g, c);
	}
	if (c->dead)
		return;
	/* What came in goes on at once when it can (nothing blocks; an
	 * empty half costs no system call). */
	if (c->backend.fd >= 0 && c->connected)
		write_backend(g, c);
	if (!c->dead)
		write_client(g, c);
	if (!c->dead)
		arm(g, c);
}

/* Connections past their deadline. */
static void
sweep(struct guard *g)
{
	int64_t now = clock_mono_ms();
	struct conn *c, *next;

	g->last_sweep = now;
	g->deadlines = false;
	for (c = g->conns; c != NULL; c = next) {
		next = c->next;
		if (c->deadline == 0)
			continue;
		if (c->deadline > now) {
			g->deadlines = true;
			continue;
		}
		if (c->phase == PH_RESPONSE) {
			answer(g, c, 504, "Gateway Timeout",
			       "the WebSocket server did not answer in time");
			arm(g, c);
			g->deadlines = true;
		} else {
			finish(g, c);
		}
	}
}

static void
bury(struct guard *g)
{
	struct conn *c;

	while ((c = g->dead) != NULL) {
		g->dead = c->next;
		free(c);
	}
}

int
wsguard_serve(const struct wsguard_conf *conf)
{
	struct guard g = {.conf = conf, .ep = -1, .sig = -1};
	struct epoll_event evs[EVENTS];
	struct epoll_event ev = {.events = EPOLLIN};
	struct signalfd_siginfo si;
	sigset_t stop, orig;
	bool running = true;
	int rc = 1, n;

	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, &orig);
	if ((g.ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (g.sig = signalfd(-1, &stop, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
		goto out;
	ev.data.ptr = &tag_signal;
	if (epoll_ctl(g.ep, EPOLL_CTL_ADD, g.sig, &ev) < 0)
		goto out;
	ev.data.ptr = &tag_listen;
	if (epoll_ctl(g.ep, EPOLL_CTL_ADD, conf->listen_fd, &ev) < 0)
		goto out;
	g.accepting = true;
	while (running) {
		n = epoll_wait(g.ep, evs, EVENTS, g.deadlines ? SWEEP_MS : -1);
		if (n < 0 && errno != EINTR)
			goto out;
		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr == &tag_signal) {
				if (read(g.sig, &si, sizeof(si)) > 0)
					running = false;
			} else if (evs[i].data.ptr == &tag_listen) {
				accept_all(&g);
			} else {
				handle(&g, evs[i].data.ptr, evs[i].events);
			}
		}
		bury(&g);
		if (g.deadlines && clock_mono_ms() - g.last_sweep >= SWEEP_MS) {
			sweep(&g);
			bury(&g);
		}
		/* At the cap, new connections wait in the backlog. */
		if (g.accepting !=
		    (g.nconns < conf->max_conns + REFUSE_SLOTS)) {
			g.accepting = !g.accepting;
			ev.data.ptr = &tag_listen;
			ev.events = g.accepting ? EPOLLIN : 0;
			epoll_ctl(g.ep, EPOLL_CTL_MOD, conf->listen_fd, &ev);
		}
	}
	rc = 0;
out:
	if (rc != 0)
		log_error("the event loop: %s", strerror(errno));
	while (g.conns != NULL)
		finish(&g, g.conns);
	bury(&g);
	if (g.sig >= 0)
		close(g.sig);
	if (g.ep >= 0)
		close(g.ep);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	return rc;
}
