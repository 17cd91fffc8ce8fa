/* SPDX-License-Identifier: MIT */
/*
 * t/unit/wsingest.c - the WebSocket ingest session (lib/domain/wsingest.h):
 * cutting batches out of a byte stream, the 256 KB limit, the queue of answers,
 * the error message; then wsingest_serve() in a child process between
 * two pipes, as websocketd runs it: pipelined batches get one
 * acknowledgement per read of the output pipe (the pacing, by pipe size
 * and by FIONREAD), errors end the session after the acks.
 */
#define _GNU_SOURCE /* F_GETPIPE_SZ */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "codec/be.h"
#include "tap.h"
#include "testutil.h"
#include "codec/utf8.h"
#include "domain/wsingest.h"
#include "codec/xmbp.h"

/* A batch of bytes samples: three of 65535 bytes and one of last bytes;
 * its length. */
static size_t
bytes_batch(uint8_t *buf, size_t cap, size_t last)
{
	static uint8_t big[65535];
	struct xmbp_enc e;
	size_t len = 0;

	xmbp_enc_init(&e, buf, cap);
	xmbp_enc_begin(&e, 1, NULL);
	xmbp_enc_stream(&e, 0, SAMPLE_BYTES);
	for (int i = 0; i < 3; i++)
		xmbp_enc_bytes(&e, (uint64_t)i, big, sizeof(big));
	xmbp_enc_bytes(&e, 3, big, last);
	if (xmbp_enc_finish(&e, &len) != XMBP_ENC_OK)
		abort();
	return len;
}

/* Feeds n bytes in pieces of at most step. */
static void
feed(struct wsingest *w, const uint8_t *p, size_t n, size_t step)
{
	while (n > 0) {
		uint8_t *room;
		size_t k = wsingest_room(w, &room);

		k = k < step ? k : step;
		k = k < n ? k : n;
		memcpy(room, p, k);
		wsingest_fill(w, k);
		p += k;
		n -= k;
		if (n > 0) { /* what a caller does between reads */
			const uint8_t *b;
			size_t bl;
			char d[128];

			if (wsingest_cut(w, &b, &bl, d, sizeof(d)) !=
			    WSINGEST_NONE)
				return;
		}
	}
}

/* The "detail" of a JSON message, or NULL when it is not one (static
 * storage). */
static const char *
detail_of(const uint8_t *p, size_t n)
{
	static char out[WSINGEST_MSG_MAX + 1];
	char *text = strndup((const char *)p, n);
	json_object *o = text != NULL ? json_tokener_parse(text) : NULL, *d;
	const char *r = NULL;

	if (o != NULL && json_object_object_get_ex(o, "detail", &d)) {
		snprintf(out, sizeof(out), "%s", json_object_get_string(d));
		r = out;
	}
	json_object_put(o);
	free(text);
	return r;
}

/* True when the message is JSON whose detail holds needle. */
static bool
detail_has(const uint8_t *p, size_t n, const char *needle)
{
	const char *d = n > 4 ? detail_of(p, n) : NULL;

	if (d == NULL || strstr(d, needle) == NULL) {
		diag("message: %.*s", (int)n, (const char *)p);
		return false;
	}
	return true;
}

static void
test_cut(void)
{
	static uint8_t stream[3 * 4096], big[WSINGEST_MAX_BATCH + 65536];
	struct wsingest *w = wsingest_new();
	size_t lens[3], total = 0, len;
	const uint8_t *b;
	char d[256];
	bool same = true;

	for (unsigned i = 0; i < 3; i++) {
		lens[i] = test_f32_batch(stream + total, sizeof(stream) - total,
					 (uint16_t)i, 10 + i, 0);
		total += lens[i];
	}
	feed(w, stream, total, total);
	for (unsigned i = 0; i < 3; i++) {
		is_int(wsingest_cut(w, &b, &len, d, sizeof(d)), WSINGEST_BATCH,
		       "pipelined: batch %u cut", i);
		is_int(len, lens[i], "pipelined: batch %u length", i);
	}
	is_int(wsingest_cut(w, &b, &len, d, sizeof(d)), WSINGEST_NONE,
	       "pipelined: nothing more");
	is_int(wsingest_partial(w), 0, "pipelined: nothing held");

	/* One byte at a time: the batch appears with its last byte. */
	for (size_t i = 0; i < lens[0]; i++) {
		uint8_t *room;
		enum wsingest_cut c;

		wsingest_room(w, &room);
		*room = stream[i];
		wsingest_fill(w, 1);
		c = wsingest_cut(w, &b, &len, d, sizeof(d));
		if (c != (i + 1 == lens[0] ? WSINGEST_BATCH : WSINGEST_NONE))
			same = false;
	}
	ok(same, "byte by byte: need more until the last byte");
	ok(len == lens[0] && memcmp(b, stream, len) == 0,
	   "byte by byte: the batch as sent");

	/* A batch across two reads, then the next one complete. */
	feed(w, stream, lens[0] + 3, lens[0] + 3);
	is_int(wsingest_cut(w, &b, &len, d, sizeof(d)), WSINGEST_BATCH,
	       "split: the first batch");
	is_int(wsingest_cut(w, &b, &len, d, sizeof(d)), WSINGEST_NONE,
	       "split: 3 bytes of the next are not a batch");
	is_int(wsingest_partial(w), 3, "split: 3 bytes held");
	feed(w, stream + lens[0] + 3, lens[1] - 3, lens[1]);
	is_int(wsingest_cut(w, &b, &len, d, sizeof(d)), WSINGEST_BATCH,
	       "split: the second batch once complete");
	ok(len == lens[1] && memcmp(b, stream + lens[0], len) == 0,
	   "split: its bytes");

	/* Exactly the largest batch, then one byte more. */
	len = bytes_batch(big, sizeof(big), 0);
	len = bytes_batch(big, sizeof(big), WSINGEST_MAX_BATCH - len);
	is_int(len, WSINGEST_MAX_BATCH, "a batch of exactly 262144 bytes");
	feed(w, big, len, 65536);
	is_int(wsingest_cut(w, &b, &len, d, sizeof(d)), WSINGEST_BATCH,
	       "262144 bytes: taken");
	len = bytes_batch(big, sizeof(big), 65535);
	ok(len > WSINGEST_MAX_BATCH, "a batch over 256 KB (%zu)", len);
	feed(w, big, len, 65536);
	is_int(wsingest_cut(w, &b, &len, d, sizeof(d)), WSINGEST_BAD,
	       "over 256 KB: refused once 262144 bytes are in");
	ok(strstr(d, "larger than 262144") != NULL, "over 256 KB: detail %s",
	   d);
	wsingest_free(w);

	/* A decode error names its kind. */
	w = wsingest_new();
	feed(w, (const uint8_t *)"XMBQ\x01\x00\x00\x00\x00\x00", 10, 10);
	is_int(wsingest_cut(w, &b, &len, d, sizeof(d)), WSINGEST_BAD,
	       "bad magic: refused");
	ok(strstr(d, "InvalidMagic") != NULL, "bad magic: detail %s", d);
	wsingest_free(w);
}

static void
test_answers(void)
{
	struct wsingest *w = wsingest_new();
	const uint8_t *p, *b;
	size_t n, len;
	char long_detail[5000], d[64];
	uint8_t *room;
	bool ordered = true, full = true;

	is_int(wsingest_next(w, &p), 0, "nothing to send at first");
	for (uint32_t i = 1; i <= 3; i++)
		ok(wsingest_ack(w, i * 100), "ack %u queued", i);
	wsingest_fail(w, "InvalidMagic at byte 0");
	wsingest_fail(w, "a second failure is ignored");
	ok(wsingest_failed(w), "failed");
	for (uint32_t i = 1; i <= 3; i++) {
		n = wsingest_next(w, &p);
		if (n != 4 || be32_get(p) != i * 100)
			ordered = false;
		wsingest_sent(w);
	}
	ok(ordered, "the acks first, in order, 4 bytes big-endian each");
	n = wsingest_next(w, &p);
	ok(n > 4, "then the error message, longer than 4 bytes");
	is_str(n > 4 ? detail_of(p, n) : NULL, "InvalidMagic at byte 0",
	       "the message is {\"detail\": ...} (the first failure)");
	is_int(wsingest_next(w, &p), n, "not sent: offered again");
	wsingest_sent(w);
	is_int(wsingest_next(w, &p), 0, "then nothing");
	ok(wsingest_room(w, &room) == WSINGEST_IN_MAX,
	   "after a failure input is still read (and dropped)");
	wsingest_fill(w, 10);
	is_int(wsingest_cut(w, &b, &len, d, sizeof(d)), WSINGEST_NONE,
	       "and not cut");
	wsingest_free(w);

	w = wsingest_new();
	for (size_t i = 0; i < WSINGEST_MAX_ACKS; i++)
		full &= wsingest_ack(w, (uint32_t)i);
	ok(full, "%d acks queued", WSINGEST_MAX_ACKS);
	ok(!wsingest_ack(w, 1), "one more is refused");
	wsingest_free(w);

	/* A long detail with multibyte characters and quotes is cut to fit,
	 * on a character boundary, and stays valid JSON. */
	w = wsingest_new();
	for (size_t i = 0; i + 4 < sizeof(long_detail); i += 4)
		memcpy(long_detail + i,
		       i % 8 ? "\xe2\x82\xac\""
			     : "\"\x01"
			       "ab",
		       4);
	long_detail[sizeof(long_detail) - 4] = '\0';
	wsingest_fail(w, long_detail);
	n = wsingest_next(w, &p);
	ok(n > 4 && n <= WSINGEST_MSG_MAX, "a long detail fits (%zu bytes)", n);
	ok(detail_of(p, n) != NULL && xmbp_utf8_valid(p, n),
	   "and is valid JSON and UTF-8");
	wsingest_free(w);

	w = wsingest_new();
	wsingest_fail(w, "");
	n = wsingest_next(w, &p);
	ok(n > 4, "an empty detail is still more than 4 bytes");
	wsingest_free(w);
}

/* ---- wsingest_serve() in a child ---- */

struct fake {
	uint32_t total;
	int fail_at; /* the batch number answered 409, or -1 */
	int count;
	int notify; /* a byte written here per commit */
};

/* Rounds of at most this many batches in the tests. */
#define FAKE_MAX 8

static void
fake_commit(void *arg, struct ingest_job *const *jobs, size_t n)
{
	struct fake *f = arg;
	struct xmbp_batch xb;
	struct xmbp_stream s;
	bool refused = false;

	if (n == 0 || n > FAKE_MAX)
		abort();
	for (size_t i = 0; i < n; i++) {
		struct ingest_job *j = jobs[i];

		if (refused || f->count++ == f->fail_at) {
			snprintf(j->detail, sizeof(j->detail),
				 "the session is closed");
			j->status = INGEST_NOT_ACTIVE;
			refused = true;
			continue;
		}
		if (xmbp_decode(j->batch, j->len, &xb, NULL) != XMBP_OK)
			abort();
		xmbp_stream_at(&xb, 0, &s);
		f->total += s.sample_count;
		j->status = INGEST_OK;
		j->ack.accepted_samples = f->total;
		if (write(f->notify, "c", 1) != 1)
			abort();
	}
}

struct child {
	pid_t pid;
	int in, out; /* our ends: write batches, read answers */
	int notify;  /* a byte per commit */
};

/* Starts the session in a child; prefill bytes wait in its output pipe
 * first (more than a page: the pipe can not be shrunk). */
static struct child
start(int idle_ms, int fail_at, size_t prefill)
{
	struct child c;
	int in[2], out[2], notify[2];

	if (pipe(in) != 0 || pipe(out) != 0 || pipe(notify) != 0)
		abort();
	for (size_t i = 0; i < prefill; i++)
		if (write(out[1], "x", 1) != 1)
			abort();
	fflush(stdout);
	if ((c.pid = fork()) == 0) {
		struct fake f = {.fail_at = fail_at, .notify = notify[1]};
		struct wsingest_io io = {.in = in[0],
					 .out = out[1],
					 .idle_ms = idle_ms,
					 .max_batches = FAKE_MAX,
					 .commit = fake_commit,
					 .arg = &f};

		close(in[1]);
		close(out[0]);
		close(notify[0]);
		_exit(wsingest_serve(&io));
	}
	close(in[0]);
	close(out[1]);
	close(notify[1]);
	c.in = in[1];
	c.out = out[0];
	c.notify = notify[0];
	return c;
}

/* Reads one chunk of the output (up to 64 KiB): what one read() of
 * websocketd would turn into one message.  0 at the end. */
static size_t
read_once(const struct child *c, uint8_t *buf)
{
	ssize_t n;

	while ((n = read(c->out, buf, 65536)) < 0 && errno == EINTR)
		;
	return n > 0 ? (size_t)n : 0;
}

static int
finish(struct child *c)
{
	int st;

	close(c->in);
	close(c->out);
	close(c->notify);
	waitpid(c->pid, &st, 0);
	if (WIFSIGNALED(st))
		diag("killed by signal %d", WTERMSIG(st));
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* 200 batches in one write: 200 reads of exactly one ack each. */
static void
test_pipelined(const char *how, size_t prefill)
{
	static uint8_t batches[200 * 64], buf[65536];
	struct child c = start(10000, -1, prefill);
	size_t total = 0, got = 0;
	int reads = 0, exact = 0;
	uint32_t want = 0;
	bool values = true;

	for (unsigned i = 0; i < 200; i++)
		total +=
			test_f32_batch(batches + total, sizeof(batches) - total,
				       (uint16_t)i, 1 + i % 5, 0);
	ok(write(c.in, batches, total) == (ssize_t)total,
	   "%s: 200 batches written at once", how);
	/* All committed (so the child has set its pipe up) before the
	 * first read. */
	for (int i = 0; i < 200; i++)
		if (read(c.notify, buf, 1) != 1)
			break;
	while (got < prefill) {
		size_t n = read_once(&c, buf);

		if (n == 0 || got + n > prefill)
			break;
		got += n;
	}
	is_int(got, prefill, "%s: what was in the pipe first", how);
	for (unsigned i = 0; i < 200; i++) {
		size_t n = read_once(&c, buf);

		reads++;
		want += 1 + i % 5;
		exact += n == 4;
		if (n < 4 || be32_get(buf) != want)
			values = false;
	}
	is_int(exact, 200, "%s: 200 reads of exactly 4 bytes", how);
	ok(values, "%s: each the running accepted_samples", how);
	close(c.in);
	c.in = -1;
	is_int(read_once(&c, buf), 0, "%s: end of input ends the session", how);
	is_int(finish(&c), 0, "%s: exit 0", how);
}

static void
test_errors(void)
{
	static uint8_t b[65536], buf[65536], big[WSINGEST_MAX_BATCH + 65536];
	struct child c;
	size_t n, len;

	/* A good batch, then a bad one: the ack, the error, the end. */
	c = start(10000, -1, 0);
	len = test_f32_batch(b, sizeof(b), 0, 7, 0);
	memcpy(b + len, "XMBQ\x01\x00\x00\x00\x00\x00", 10);
	ok(write(c.in, b, len + 10) == (ssize_t)len + 10, "decode error: sent");
	n = read_once(&c, buf);
	ok(n == 4 && be32_get(buf) == 7, "decode error: the ack first");
	n = read_once(&c, buf);
	ok(detail_has(buf, n, "InvalidMagic"),
	   "decode error: then one message naming InvalidMagic");
	is_int(read_once(&c, buf), 0, "decode error: then the end");
	is_int(finish(&c), 1, "decode error: exit 1");

	/* The commit refuses: its detail, the end. */
	c = start(10000, 1, 0);
	len = test_f32_batch(b, sizeof(b), 0, 2, 0);
	len += test_f32_batch(b + len, sizeof(b) - len, 1, 2, 0);
	ok(write(c.in, b, len) == (ssize_t)len, "refused commit: sent");
	n = read_once(&c, buf);
	ok(n == 4 && be32_get(buf) == 2, "refused commit: the first ack");
	n = read_once(&c, buf);
	ok(detail_has(buf, n, "the session is closed"),
	   "refused commit: its detail");
	is_int(read_once(&c, buf), 0, "refused commit: then the end");
	is_int(finish(&c), 1, "refused commit: exit 1");

	/* Over 256 KB: the error while the rest is still being written. */
	c = start(10000, -1, 0);
	len = bytes_batch(big, sizeof(big), 65535);
	signal(SIGPIPE, SIG_IGN);
	for (size_t off = 0; off < len;) {
		ssize_t k = write(c.in, big + off, len - off);

		if (k <= 0)
			break;
		off += (size_t)k;
	}
	n = read_once(&c, buf);
	ok(detail_has(buf, n, "larger than 262144"),
	   "over 256 KB: the error message");
	is_int(finish(&c), 1, "over 256 KB: exit 1");

	/* Silence: the idle message, then the end. */
	c = start(200, -1, 0);
	n = read_once(&c, buf);
	ok(detail_has(buf, n, "no message for 0.2 s"),
	   "idle: a message saying so");
	is_int(read_once(&c, buf), 0, "idle: then the end");
	is_int(finish(&c), 0, "idle: exit 0");

	/* SIGTERM (websocketd ending a child whose client left). */
	c = start(10000, -1, 0);
	len = test_f32_batch(b, sizeof(b), 0, 1, 0);
	ok(write(c.in, b, len) == (ssize_t)len && read_once(&c, buf) == 4,
	   "SIGTERM: a session running");
	kill(c.pid, SIGTERM);
	is_int(finish(&c), 0, "SIGTERM: exit 0");
}

/* Whole batches and the start of one more, then the end of input in the
 * same read pass (a file: it is always readable): the whole ones are
 * committed and acknowledged, and the log says that only the unfinished
 * one's bytes were dropped. */
static void
test_ended_inside(void)
{
	static uint8_t b[4096], buf[65536];
	char log[4096];
	FILE *in = tmpfile();
	size_t len = 0, n = 0;
	int out[2], err[2], notify[2], st, acks = 0;
	ssize_t k;
	pid_t pid;

	for (unsigned i = 0; i < 2; i++)
		len += test_f32_batch(b + len, sizeof(b) - len, (uint16_t)i, 3,
				      0);
	if (in == NULL ||
	    test_f32_batch(b + len, sizeof(b) - len, 2, 3, 0) <= 10 ||
	    fwrite(b, 1, len + 10, in) != len + 10 || fflush(in) != 0 ||
	    fseek(in, 0, SEEK_SET) != 0 || pipe(out) != 0 || pipe(err) != 0 ||
	    pipe(notify) != 0)
		abort();
	fflush(stdout);
	if ((pid = fork()) == 0) {
		struct fake f = {.fail_at = -1, .notify = notify[1]};
		struct wsingest_io io = {.in = fileno(in),
					 .out = out[1],
					 .idle_ms = 10000,
					 .max_batches = FAKE_MAX,
					 .commit = fake_commit,
					 .arg = &f};

		dup2(err[1], 2);
		close(out[0]);
		close(err[0]);
		_exit(wsingest_serve(&io));
	}
	close(out[1]);
	close(err[1]);
	close(notify[1]);
	while ((k = read(out[0], buf, sizeof(buf))) > 0)
		acks += (int)(k / 4);
	waitpid(pid, &st, 0);
	is_int(acks, 2, "ended inside: the two whole batches acknowledged");
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "ended inside: exit 0");
	while ((k = read(err[0], log + n, sizeof(log) - 1 - n)) > 0)
		n += (size_t)k;
	log[n] = '\0';
	if (!ok(strstr(log, "(10 bytes dropped)") != NULL,
		"ended inside: the log counts the unfinished batch's bytes "
		"only"))
		diag("log: %s", log);
	close(out[0]);
	close(err[0]);
	close(notify[0]);
	fclose(in);
}

int
main(void)
{
	test_cut();
	test_answers();
	test_pipelined("paced by pipe size", 0);
	/* More than a page waiting: F_SETPIPE_SZ fails, FIONREAD paces. */
	test_pipelined("paced by FIONREAD", 5000);
	test_errors();
	test_ended_inside();
	return tap_done();
}
