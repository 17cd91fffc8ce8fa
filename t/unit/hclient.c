/* SPDX-License-Identifier: MIT */
/*
 * hclient.c - the device-side HTTP/WebSocket client (lib/core/hclient.c)
 * against a scripted server in a child process on 127.0.0.1: a
 * Content-Length answer and a chunked one on one kept connection, a
 * request on a connection the server closed meanwhile (sent again on a
 * new one), an answer that ends with the connection, the WebSocket
 * upgrade (Sec-WebSocket-Accept checked), a masked binary message, a
 * Ping answered by a Pong, a fragmented message joined, a Close; a wrong
 * accept refused; URLs refused; a port nothing listens on.
 */
#include "config.h"

#include <netinet/in.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codec/base64.h"
#include "core/fdio.h"
#include "core/hclient.h"
#include "tap.h"

/* Server side: reads a request head into h (n bytes); its length. */
static size_t
read_head(int fd, char *h, size_t n)
{
	size_t len = 0;

	while (len + 1 < n && read(fd, h + len, 1) == 1) {
		len++;
		h[len] = '\0';
		if (len >= 4 && memcmp(h + len - 4, "\r\n\r\n", 4) == 0)
			break;
	}
	return len;
}

/* Server side: the body of Content-Length bytes the head announces. */
static void
skip_body(int fd, const char *h)
{
	const char *cl = strstr(h, "Content-Length: ");
	char body[256];
	size_t n = cl != NULL ? (size_t)atoi(cl + 16) : 0;

	if (n > 0 && n <= sizeof(body))
		fdio_read_full(fd, body, n);
}

static void
say(int fd, const char *s)
{
	fdio_write_full(fd, s, strlen(s));
}

/* Server side: the accept value of a client's key. */
static void
accept_of(const char *h, char *out, size_t n)
{
	const char *k = strstr(h, "Sec-WebSocket-Key: ");
	char cat[128];
	uint8_t d[EVP_MAX_MD_SIZE];
	unsigned int dl = 0;
	struct buf b;

	buf_init(&b, 0);
	snprintf(cat, sizeof(cat), "%.24s258EAFA5-E914-47DA-95CA-C5AB0DC85B11",
		 k != NULL ? k + 19 : "");
	EVP_Digest(cat, strlen(cat), d, &dl, EVP_sha1(), NULL);
	base64_encode(&b, d, dl);
	snprintf(out, n, "%.*s", (int)b.len, (char *)b.p);
	buf_free(&b);
}

/* Server side: one client frame (masked); its opcode, payload in p. */
static int
read_frame(int fd, uint8_t *p, size_t *len)
{
	uint8_t h[2], mask[4];
	size_t n;

	if (!fdio_read_full(fd, h, 2) || !(h[1] & 0x80))
		return -1;
	n = h[1] & 0x7f;
	if (n == 126) {
		uint8_t e[2];

		fdio_read_full(fd, e, 2);
		n = (size_t)e[0] << 8 | e[1];
	}
	if (n > 4096 || !fdio_read_full(fd, mask, 4) ||
	    !fdio_read_full(fd, p, n))
		return -1;
	for (size_t i = 0; i < n; i++)
		p[i] ^= mask[i & 3];
	*len = n;
	return h[0] & 0x0f;
}

static void
serve(int ls)
{
	char h[4096], acc[64], ans[256];
	uint8_t p[4096];
	size_t n;
	int fd;

	/* 1: two answers on one connection, then it is closed. */
	fd = accept(ls, NULL, NULL);
	read_head(fd, h, sizeof(h));
	skip_body(fd, h);
	say(fd, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
	read_head(fd, h, sizeof(h));
	skip_body(fd, h);
	say(fd, "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
		"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nTrailer: 1\r\n\r\n");
	close(fd);
	/* 2: an answer that ends with the connection. */
	fd = accept(ls, NULL, NULL);
	read_head(fd, h, sizeof(h));
	say(fd, "HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\nnope");
	close(fd);
	/* 3: the upgrade, a message, a ping, a fragmented message, close. */
	fd = accept(ls, NULL, NULL);
	read_head(fd, h, sizeof(h));
	accept_of(h, acc, sizeof(acc));
	snprintf(ans, sizeof(ans),
		 "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		 "Connection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
		 acc);
	say(fd, ans);
	if (read_frame(fd, p, &n) == 2) {
		/* Ping, then an ack of the length in two fragments. */
		uint8_t out[] = {0x89,
				 2,
				 'p',
				 'q',
				 0x02,
				 2,
				 0,
				 0,
				 0x80,
				 2,
				 (uint8_t)(n >> 8),
				 (uint8_t)n};

		fdio_write_full(fd, out, sizeof(out));
	}
	if (read_frame(fd, p, &n) == 0xa && n == 2 && memcmp(p, "pq", 2) == 0)
		fdio_write_full(fd, "\x82\x02ok", 4);
	else
		fdio_write_full(fd, "\x82\x02no", 4);
	fdio_write_full(fd, "\x88\x00", 2);
	close(fd);
	/* 4: an upgrade with a wrong accept value. */
	fd = accept(ls, NULL, NULL);
	read_head(fd, h, sizeof(h));
	say(fd, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		"Connection: Upgrade\r\nSec-WebSocket-Accept: AAAA\r\n\r\n");
	sleep(1);
	close(fd);
}

int
main(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	int ls = socket(AF_INET, SOCK_STREAM, 0), st, free_port;
	struct hclient c;
	struct buf resp;
	char url[128], err[256];
	uint8_t msg[300];
	pid_t pid;

	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(ls, 4) != 0 ||
	    getsockname(ls, (struct sockaddr *)&a, &al) != 0)
		return 1;
	if ((pid = fork()) == 0) {
		serve(ls);
		_exit(0);
	}
	close(ls);
	buf_init(&resp, 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/base/",
		 ntohs(a.sin_port));
	ok(hclient_init(&c, url, "xmk_test", 5000, err, sizeof(err)),
	   "set up for %s", url);
	is_str(c.prefix, "/base", "the base path without its slash");
	st = hclient_request(&c, "POST", "/x", "text/plain", "abc", 3, &resp);
	ok(st == 200 && resp.len == 5 && memcmp(resp.p, "hello", 5) == 0,
	   "a Content-Length answer");
	resp.len = 0;
	st = hclient_request(&c, "GET", "/y", NULL, NULL, 0, &resp);
	ok(st == 201 && resp.len == 5 && memcmp(resp.p, "abcde", 5) == 0,
	   "a chunked answer (extension and trailer) on the same connection");
	resp.len = 0;
	st = hclient_request(&c, "GET", "/z", NULL, NULL, 0, &resp);
	ok(st == 404 && resp.len == 4 && memcmp(resp.p, "nope", 4) == 0,
	   "the kept connection was closed: sent again on a new one; a body "
	   "to the end of the connection");
	ok(c.fd < 0, "Connection: close is honoured");
	resp.len = 0;
	is_int(hclient_ws_open(&c, "/ws?session_id=1", &resp), 101,
	       "upgraded, the accept value checked");
	memset(msg, 7, sizeof(msg));
	ok(hclient_ws_send(&c, msg, sizeof(msg)), "a 300-byte message sent");
	resp.len = 0;
	ok(hclient_ws_recv(&c, &resp, 5000) == 1 && resp.len == 4 &&
		   resp.p[2] == 300 >> 8 && resp.p[3] == (300 & 0xff),
	   "the fragmented answer joined; the server got 300 unmasked bytes");
	resp.len = 0;
	ok(hclient_ws_recv(&c, &resp, 5000) == 1 && resp.len == 2 &&
		   memcmp(resp.p, "ok", 2) == 0,
	   "the Ping was answered with a Pong of the same payload");
	resp.len = 0;
	is_int(hclient_ws_recv(&c, &resp, 5000), -1, "a Close ends it");
	ok(!hclient_ws_send(&c, "x", 1), "no sending after the end");
	resp.len = 0;
	is_int(hclient_ws_open(&c, "/ws", &resp), -1,
	       "a wrong Sec-WebSocket-Accept is refused");
	hclient_free(&c);
	waitpid(pid, NULL, 0);

	ok(!hclient_init(&c, "https://example.org", NULL, 1000, err,
			 sizeof(err)) &&
		   strstr(err, "only http://") != NULL,
	   "https:// is refused, saying why");
	hclient_free(&c);
	ok(!hclient_init(&c, "http://:80/", NULL, 1000, err, sizeof(err)),
	   "no host: refused");
	hclient_free(&c);
	ok(!hclient_init(&c, "http://h:/", NULL, 1000, err, sizeof(err)),
	   "an empty port: refused");
	hclient_free(&c);
	/* A port nothing listens on (the server's, now closed). */
	free_port = ntohs(a.sin_port);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", free_port);
	ok(hclient_init(&c, url, NULL, 1000, err, sizeof(err)) &&
		   hclient_request(&c, "GET", "/", NULL, NULL, 0, &resp) == -1,
	   "nothing listening: -1");
	hclient_free(&c);
	buf_free(&resp);
	return tap_done();
}
