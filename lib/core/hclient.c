/* SPDX-License-Identifier: MIT */
/*
 * hclient.c - HTTP/1.1 and WebSocket client over a plain TCP socket.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "codec/base64.h"
#include "codec/wsframe.h"
#include "core/hclient.h"

#define HEAD_MAX (64u << 10)
#define BODY_MAX (64u << 20)
#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

bool
hclient_init(struct hclient *c, const char *base_url, const char *key,
	     int timeout_ms, char *err, size_t errlen)
{
	const char *p = base_url, *host, *hend, *path;
	size_t hlen;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->key = key;
	c->timeout_ms = timeout_ms;
	buf_init(&c->in, 0);
	buf_init(&c->out, 0);
	if (getrandom(&c->rnd, sizeof(c->rnd), 0) != sizeof(c->rnd))
		c->rnd = (uint64_t)getpid() * 0x9E3779B97F4A7C15u;
	c->rnd |= 1;
	if (strncmp(p, "http://", 7) != 0) {
		snprintf(err, errlen, "%s: only http:// URLs are supported",
			 base_url);
		return false;
	}
	host = p + 7;
	path = host + strcspn(host, "/");
	hend = memchr(host, ':', (size_t)(path - host));
	hlen = (size_t)((hend != NULL ? hend : path) - host);
	if (hlen == 0 || hlen >= sizeof(c->host) ||
	    (hend != NULL && ((size_t)(path - hend - 1) >= sizeof(c->port) ||
			      path - hend - 1 == 0)) ||
	    strlen(path) >= sizeof(c->prefix)) {
		snprintf(err, errlen, "%s: not http://HOST[:PORT][/PATH]",
			 base_url);
		return false;
	}
	memcpy(c->host, host, hlen);
	if (hend != NULL)
		memcpy(c->port, hend + 1, (size_t)(path - hend - 1));
	else
		strcpy(c->port, "80");
	snprintf(c->prefix, sizeof(c->prefix), "%s", path);
	while (c->prefix[0] != '\0' && c->prefix[strlen(c->prefix) - 1] == '/')
		c->prefix[strlen(c->prefix) - 1] = '\0';
	return true;
}

void
hclient_disconnect(struct hclient *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->ws = false;
	c->in.len = 0;
}

void
hclient_free(struct hclient *c)
{
	hclient_disconnect(c);
	buf_free(&c->in);
	buf_free(&c->out);
}

/* Connects to one address within the timeout. */
static int
connect_one(const struct addrinfo *ai, int timeout_ms)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
	int one = 1, soerr = 0;
	socklen_t sl = sizeof(soerr);
	struct pollfd pfd;
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};

	if (fd < 0)
		return -1;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (errno != EINPROGRESS || poll(&pfd, 1, timeout_ms) != 1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 ||
		    soerr != 0) {
			close(fd);
			return -1;
		}
	}
	fcntl(fd, F_SETFL, 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

static bool
connect_to(struct hclient *c)
{
	struct addrinfo hints = {0}, *res = NULL;

	hclient_disconnect(c);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(c->host, c->port, &hints, &res) != 0)
		return false;
	for (struct addrinfo *ai = res; ai != NULL && c->fd < 0;
	     ai = ai->ai_next)
		c->fd = connect_one(ai, c->timeout_ms);
	freeaddrinfo(res);
	return c->fd >= 0;
}

/* Sends the n bytes at p whole; no SIGPIPE. */
static bool
send_all(struct hclient *c, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

/* Reads what arrives within timeout_ms into c->in: bytes read, 0 at the
 * end of the connection, -1 on an error, -2 when nothing came in time. */
static ssize_t
fill(struct hclient *c, int timeout_ms)
{
	struct pollfd pfd = {c->fd, POLLIN, 0};
	ssize_t k;
	int r;

	while ((r = poll(&pfd, 1, timeout_ms)) < 0 && errno == EINTR)
		continue;
	if (r == 0)
		return -2;
	if (r != 1 || !buf_reserve(&c->in, 65536))
		return -1;
	while ((k = recv(c->fd, c->in.p + c->in.len, 65536, 0)) < 0 &&
	       errno == EINTR)
		continue;
	if (k > 0)
		c->in.len += (size_t)k;
	return k;
}

/* Drops the first n bytes of c->in. */
static void
consume(struct hclient *c, size_t n)
{
	memmove(c->in.p, c->in.p + n, c->in.len - n);
	c->in.len -= n;
}

/* Makes c->in hold at least n bytes; false at the end or on an error. */
static bool
need(struct hclient *c, size_t n)
{
	while (c->in.len < n)
		if (fill(c, c->timeout_ms) <= 0)
			return false;
	return true;
}

/* The value of header name in the head [p, p + n), or NULL; *len set. */
static const char *
header(const char *p, size_t n, const char *name, size_t *len)
{
	const char *end = p + n, *line = memchr(p, '\n', n);
	size_t nl = strlen(name);

	while (line != NULL && ++line < end) {
		const char *eol = memchr(line, '\n', (size_t)(end - line));

		if (eol == NULL)
			break;
		if ((size_t)(eol - line) > nl && line[nl] == ':' &&
		    strncasecmp(line, name, nl) == 0) {
			const char *v = line + nl + 1;

			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			*len = (size_t)(eol - v);
			while (*len > 0 &&
			       (v[*len - 1] == '\r' || v[*len - 1] == ' '))
				(*len)--;
			return v;
		}
		line = eol;
	}
	return NULL;
}

/* The first line end in c->in, or NULL. */
static char *
line_end(const struct hclient *c)
{
	return c->in.len > 0 ? memchr(c->in.p, '\n', c->in.len) : NULL;
}

/* Reads a chunked body into resp. */
static bool
read_chunked(struct hclient *c, struct buf *resp)
{
	for (;;) {
		char *eol, *end;
		unsigned long size;

		while ((eol = line_end(c)) == NULL)
			if (c->in.len > 1024 || fill(c, c->timeout_ms) <= 0)
				return false;
		size = strtoul((char *)c->in.p, &end, 16);
		if (end == (char *)c->in.p || size > BODY_MAX ||
		    resp->len + size > BODY_MAX)
			return false;
		consume(c, (size_t)(eol - (char *)c->in.p) + 1);
		if (size == 0) {
			/* Trailers, up to the empty line. */
			for (;;) {
				while ((eol = line_end(c)) == NULL)
					if (c->in.len > HEAD_MAX ||
					    fill(c, c->timeout_ms) <= 0)
						return false;
				bool empty = eol == (char *)c->in.p ||
					     (eol == (char *)c->in.p + 1 &&
					      c->in.p[0] == '\r');
				consume(c, (size_t)(eol - (char *)c->in.p) + 1);
				if (empty)
					return true;
			}
		}
		if (!need(c, size + 2))
			return false;
		buf_append(resp, c->in.p, size);
		consume(c, size + 2);
	}
}

/* The end of the head (after its empty line) in c->in, or NULL. */
static uint8_t *
head_end(const struct hclient *c)
{
	for (size_t i = 3; i < c->in.len; i++)
		if (c->in.p[i] == '\n' && c->in.p[i - 1] == '\r' &&
		    c->in.p[i - 2] == '\n' && c->in.p[i - 3] == '\r')
			return c->in.p + i + 1;
	return NULL;
}

/*
 * Reads one answer: its status (-1 when the connection failed), the body
 * into resp (none for 101).  *got_any says whether any byte came.
 */
static int
read_answer(struct hclient *c, bool head_only, struct buf *resp, bool *got_any,
	    char *accept, size_t acceptlen)
{
	uint8_t *end;
	size_t hl, vlen;
	const char *v;
	int status;
	bool close_after = false;

	*got_any = c->in.len > 0;
	while ((end = head_end(c)) == NULL) {
		if (c->in.len > HEAD_MAX || fill(c, c->timeout_ms) <= 0)
			return -1;
		*got_any = true;
	}
	hl = (size_t)(end - c->in.p);
	if (hl < 12 || memcmp(c->in.p, "HTTP/1.", 7) != 0 ||
	    sscanf((char *)c->in.p + 9, "%3d", &status) != 1)
		return -1;
	if ((v = header((char *)c->in.p, hl, "Connection", &vlen)) != NULL &&
	    vlen == 5 && strncasecmp(v, "close", 5) == 0)
		close_after = true;
	if (accept != NULL) {
		v = header((char *)c->in.p, hl, "Sec-WebSocket-Accept", &vlen);
		snprintf(accept, acceptlen, "%.*s", v != NULL ? (int)vlen : 0,
			 v != NULL ? v : "");
	}
	if (head_only && status == 101) {
		consume(c, hl);
		return status;
	}
	if ((v = header((char *)c->in.p, hl, "Transfer-Encoding", &vlen)) !=
		    NULL &&
	    vlen == 7 && strncasecmp(v, "chunked", 7) == 0) {
		consume(c, hl);
		if (!read_chunked(c, resp))
			return -1;
	} else if ((v = header((char *)c->in.p, hl, "Content-Length", &vlen)) !=
		   NULL) {
		unsigned long long n = strtoull(v, NULL, 10);

		consume(c, hl);
		if (n > BODY_MAX || !need(c, (size_t)n))
			return -1;
		buf_append(resp, c->in.p, (size_t)n);
		consume(c, (size_t)n);
	} else {
		/* Neither: the body runs to the end of the connection. */
		ssize_t k;

		consume(c, hl);
		while ((k = fill(c, c->timeout_ms)) > 0)
			if (c->in.len > BODY_MAX)
				return -1;
		if (k < 0)
			return -1;
		buf_append(resp, c->in.p, c->in.len);
		c->in.len = 0;
		close_after = true;
	}
	if (resp->failed)
		return -1;
	if (close_after)
		hclient_disconnect(c);
	return status;
}

/* Writes the request head (and body) in c->out. */
static void
put_request(struct hclient *c, const char *method, const char *path,
	    const char *ctype, const void *body, size_t len, const char *extra)
{
	c->out.len = 0;
	c->out.failed = false;
	buf_printf(&c->out,
		   "%s %s%s HTTP/1.1\r\nHost: %s:%s\r\nUser-Agent: xmhub\r\n",
		   method, c->prefix, path, c->host, c->port);
	if (c->key != NULL)
		buf_printf(&c->out, "X-Api-Key: %s\r\n", c->key);
	if (extra != NULL)
		buf_puts(&c->out, extra);
	if (body != NULL || strcmp(method, "POST") == 0)
		buf_printf(&c->out,
			   "Content-Type: %s\r\nContent-Length: %zu\r\n",
			   ctype != NULL ? ctype : "application/octet-stream",
			   len);
	buf_puts(&c->out, "\r\n");
	if (body != NULL)
		buf_append(&c->out, body, len);
}

/* Sends c->out and reads the answer; one retry on a fresh connection
 * when a kept one turns out closed before answering. */
static int
exchange(struct hclient *c, bool head_only, struct buf *resp, char *accept,
	 size_t acceptlen)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		bool reused = c->fd >= 0, got_any = false;
		size_t start = resp->len;
		int st;

		if (c->out.failed || (!reused && !connect_to(c)))
			return -1;
		if (send_all(c, c->out.p, c->out.len) &&
		    (st = read_answer(c, head_only, resp, &got_any, accept,
				      acceptlen)) >= 0)
			return st;
		hclient_disconnect(c);
		resp->len = start;
		if (!reused || got_any)
			return -1;
	}
	return -1;
}

int
hclient_request(struct hclient *c, const char *method, const char *path,
		const char *ctype, const void *body, size_t len,
		struct buf *resp)
{
	if (c->ws)
		hclient_disconnect(c);
	put_request(c, method, path, ctype, body, len, NULL);
	return exchange(c, false, resp, NULL, 0);
}

int
hclient_ws_open(struct hclient *c, const char *path, struct buf *resp)
{
	uint8_t nonce[16], digest[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;
	struct buf key, want, cat;
	char extra[256], accept[64];
	int st = -1;

	buf_init(&key, 64);
	buf_init(&want, 64);
	buf_init(&cat, 128);
	hclient_disconnect(c);
	for (size_t i = 0; i < sizeof(nonce); i++) {
		c->rnd ^= c->rnd << 13, c->rnd ^= c->rnd >> 7,
			c->rnd ^= c->rnd << 17;
		nonce[i] = (uint8_t)c->rnd;
	}
	base64_encode(&key, nonce, sizeof(nonce));
	buf_append(&cat, key.p, key.len);
	buf_puts(&cat, WS_GUID);
	if (key.failed || cat.failed ||
	    !EVP_Digest(cat.p, cat.len, digest, &dlen, EVP_sha1(), NULL))
		goto out;
	base64_encode(&want, digest, dlen);
	snprintf(extra, sizeof(extra),
		 "Upgrade: websocket\r\nConnection: Upgrade\r\n"
		 "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: %.*s\r\n",
		 (int)key.len, (char *)key.p);
	put_request(c, "GET", path, NULL, NULL, 0, extra);
	st = exchange(c, true, resp, accept, sizeof(accept));
	if (st == 101) {
		if (want.failed || strlen(accept) != want.len ||
		    memcmp(accept, want.p, want.len) != 0) {
			hclient_disconnect(c);
			st = -1;
		} else {
			c->ws = true;
		}
	}
out:
	buf_free(&key);
	buf_free(&want);
	buf_free(&cat);
	return st;
}

/* Sends one masked frame. */
static bool
send_frame(struct hclient *c, uint8_t opcode, const void *p, size_t n)
{
	struct wsframe_head h = {
		.fin = true, .opcode = opcode, .masked = true, .len = n};
	const uint8_t *src = p;
	size_t hl;

	c->rnd ^= c->rnd << 13, c->rnd ^= c->rnd >> 7, c->rnd ^= c->rnd << 17;
	memcpy(h.mask, &c->rnd, 4);
	c->out.len = 0;
	c->out.failed = false;
	if (!buf_reserve(&c->out, WSFRAME_HEAD_MAX + n))
		return false;
	hl = wsframe_put(c->out.p, &h);
	for (size_t i = 0; i < n; i++)
		c->out.p[hl + i] = src[i] ^ h.mask[i & 3];
	c->out.len = hl + n;
	return send_all(c, c->out.p, c->out.len);
}

bool
hclient_ws_send(struct hclient *c, const void *p, size_t n)
{
	if (!c->ws || c->fd < 0)
		return false;
	if (send_frame(c, WSFRAME_BINARY, p, n))
		return true;
	hclient_disconnect(c);
	return false;
}

int
hclient_ws_recv(struct hclient *c, struct buf *msg, int timeout_ms)
{
	bool in_msg = false;

	if (!c->ws || c->fd < 0)
		return -1;
	for (;;) {
		struct wsframe_head h;
		enum wsframe_status fs = wsframe_head(c->in.p, c->in.len, &h);
		ssize_t k;

		if (fs == WSFRAME_BAD ||
		    (fs == WSFRAME_HEAD && h.len > BODY_MAX))
			break;
		if (fs == WSFRAME_MORE ||
		    c->in.len < h.head_len + (size_t)h.len) {
			k = fill(c, in_msg ? c->timeout_ms : timeout_ms);
			if (k == -2 && !in_msg)
				return 0; /* partial bytes stay in c->in */
			if (k <= 0)
				break;
			continue;
		}
		uint8_t *pl = c->in.p + h.head_len;

		if (h.masked)
			for (size_t i = 0; i < h.len; i++)
				pl[i] ^= h.mask[i & 3];
		if (h.opcode == WSFRAME_PING) {
			bool ok =
				send_frame(c, WSFRAME_PONG, pl, (size_t)h.len);

			consume(c, h.head_len + (size_t)h.len);
			if (!ok)
				break;
			continue;
		}
		if (h.opcode == WSFRAME_CLOSE)
			break;
		if (h.opcode != WSFRAME_PONG) {
			buf_append(msg, pl, (size_t)h.len);
			in_msg = !h.fin;
		}
		consume(c, h.head_len + (size_t)h.len);
		if (msg->failed)
			break;
		if (h.opcode != WSFRAME_PONG && h.fin)
			return 1;
	}
	hclient_disconnect(c);
	return -1;
}
