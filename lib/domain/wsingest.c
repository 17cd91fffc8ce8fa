/* SPDX-License-Identifier: MIT */
/*
 * wsingest.c - the WebSocket ingest session (see wsingest.h).
 */
#define _GNU_SOURCE /* ppoll, F_SETPIPE_SZ */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "codec/be.h"
#include "domain/wsingest.h"
#include "codec/xmbp.h"
#include "core/clock.h"
#include "core/log.h"

/* How long the last answers may take to leave once the session ends. */
#define DRAIN_MS 5000
/* The wait between two looks at the pipe when pacing by FIONREAD: from
 * 20 us, doubled while the pipe stays full, up to 10 ms. */
#define FIONREAD_WAIT_NS 20000
#define FIONREAD_WAIT_MAX_NS 10000000

enum out_kind { OUT_NONE = 0, OUT_ACK, OUT_MSG };

struct wsingest {
	uint8_t in[WSINGEST_IN_MAX];
	size_t off, len; /* input not yet cut: in[off..len) */
	uint32_t acks[WSINGEST_MAX_ACKS];
	size_t ack_head, nacks; /* a ring */
	uint8_t ack_out[4];
	char msg[WSINGEST_MSG_MAX];
	size_t msg_len;
	bool failed, msg_sent;
	enum out_kind handed; /* what wsingest_next() gave last */
};

struct wsingest *
wsingest_new(void)
{
	return calloc(1, sizeof(struct wsingest));
}

void
wsingest_free(struct wsingest *w)
{
	free(w);
}

size_t
wsingest_room(struct wsingest *w, uint8_t **p)
{
	if (w->failed)
		w->off = w->len = 0;
	if (w->off > 0) {
		memmove(w->in, w->in + w->off, w->len - w->off);
		w->len -= w->off;
		w->off = 0;
	}
	*p = w->in + w->len;
	return sizeof(w->in) - w->len;
}

void
wsingest_fill(struct wsingest *w, size_t n)
{
	w->len += n;
}

enum wsingest_cut
wsingest_cut(struct wsingest *w, const uint8_t **batch, size_t *len,
	     char *detail, size_t dlen)
{
	struct xmbp_error err;
	size_t avail = w->len - w->off, blen;
	enum xmbp_status st;

	if (w->failed || avail == 0)
		return WSINGEST_NONE;
	st = xmbp_frame(w->in + w->off, avail, &blen, &err);
	if (st == XMBP_OK && blen <= WSINGEST_MAX_BATCH) {
		*batch = w->in + w->off;
		*len = blen;
		w->off += blen;
		return WSINGEST_BATCH;
	}
	if (st != XMBP_NEED_MORE && st != XMBP_OK) {
		snprintf(detail, dlen, "%s at byte %zu of the batch: %s",
			 xmbp_status_name(st), err.offset, err.msg);
		return WSINGEST_BAD;
	}
	/* More than the largest batch allowed is in and it does not end
	 * there. */
	if (st == XMBP_OK || avail >= WSINGEST_MAX_BATCH) {
		snprintf(detail, dlen,
			 "the batch is larger than %d bytes (the maximum "
			 "message is 256 KB)",
			 WSINGEST_MAX_BATCH);
		return WSINGEST_BAD;
	}
	return WSINGEST_NONE;
}

size_t
wsingest_partial(const struct wsingest *w)
{
	return w->len - w->off;
}

bool
wsingest_ack(struct wsingest *w, uint32_t accepted_samples)
{
	if (w->nacks == WSINGEST_MAX_ACKS)
		return false;
	w->acks[(w->ack_head + w->nacks) % WSINGEST_MAX_ACKS] =
		accepted_samples;
	w->nacks++;
	return true;
}

/* The length of the longest prefix of s, at most max bytes, that does not
 * end inside a UTF-8 sequence. */
static size_t
utf8_cut(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max)
		return n;
	while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	return max;
}

void
wsingest_fail(struct wsingest *w, const char *detail)
{
	size_t keep = WSINGEST_MSG_MAX;

	if (w->failed)
		return;
	w->failed = true;
	/* Cut the detail until its JSON fits (escapes make it longer). */
	for (;;) {
		json_object *o = json_object_new_object();
		char *d = strndup(detail, utf8_cut(detail, keep));
		const char *s = NULL;

		if (o != NULL && d != NULL &&
		    json_object_object_add(o, "detail",
					   json_object_new_string(d)) == 0)
			s = json_object_to_json_string_ext(
				o, JSON_C_TO_STRING_PLAIN);
		if (s != NULL && strlen(s) <= sizeof(w->msg)) {
			w->msg_len = strlen(s);
			memcpy(w->msg, s, w->msg_len);
		}
		json_object_put(o);
		free(d);
		if (w->msg_len > 0 || keep == 0)
			break;
		keep /= 2;
	}
	if (w->msg_len == 0) { /* out of memory: still more than 4 bytes */
		static const char oom[] = "{\"detail\":\"internal error\"}";

		w->msg_len = sizeof(oom) - 1;
		memcpy(w->msg, oom, w->msg_len);
	}
}

bool
wsingest_failed(const struct wsingest *w)
{
	return w->failed;
}

size_t
wsingest_next(struct wsingest *w, const uint8_t **p)
{
	w->handed = OUT_NONE;
	if (w->nacks > 0) {
		be32_put(w->ack_out, w->acks[w->ack_head]);
		*p = w->ack_out;
		w->handed = OUT_ACK;
		return sizeof(w->ack_out);
	}
	if (w->failed && !w->msg_sent) {
		*p = (const uint8_t *)w->msg;
		w->handed = OUT_MSG;
		return w->msg_len;
	}
	return 0;
}

void
wsingest_sent(struct wsingest *w)
{
	if (w->handed == OUT_ACK) {
		w->ack_head = (w->ack_head + 1) % WSINGEST_MAX_ACKS;
		w->nacks--;
	} else if (w->handed == OUT_MSG) {
		w->msg_sent = true;
	}
	w->handed = OUT_NONE;
}

/* ---- the loop ---- */

static volatile sig_atomic_t stop_signal;

static void
on_stop(int sig)
{
	stop_signal = sig;
}

struct loop {
	const struct wsingest_io *io;
	struct wsingest *w;
	bool fionread; /* pacing by FIONREAD: the pipe could not be shrunk */
	bool busy;     /* written, and websocketd may not have read it yet */
	bool in_open;
	bool full;    /* the input buffer filled: commit now */
	long wait_ns; /* FIONREAD pacing: the next wait for the pipe */
	long long last_in, ended; /* ms: last input, end of session (0) */
	int rc;
	struct ingest_job *jobs;  /* a round's, io->max_batches */
	struct ingest_job **ptrs; /* pointers to them */
};

static void
fail(struct loop *l, const char *detail, int rc)
{
	if (wsingest_failed(l->w))
		return;
	wsingest_fail(l->w, detail);
	l->rc = rc;
	if (l->ended == 0)
		l->ended = clock_mono_ms();
}

/* Updates l->busy: has websocketd read all we wrote?  revents: of a poll
 * on out, when the caller made one. */
static void
out_check(struct loop *l, short revents)
{
	int n;

	if (!l->busy)
		return;
	if (!l->fionread) {
		/* A one-page pipe is writable only when empty. */
		if (revents & POLLOUT)
			l->busy = false;
		return;
	}
	if (ioctl(l->io->out, FIONREAD, &n) != 0 || n == 0) {
		l->busy = false;
		l->wait_ns = FIONREAD_WAIT_NS;
	} else if (l->wait_ns < FIONREAD_WAIT_MAX_NS) {
		l->wait_ns *= 2;
	}
}

/* Writes the next message when websocketd has read the last one, so that
 * each read of it gets one message.  False when the pipe broke. */
static bool
out_write(struct loop *l)
{
	const uint8_t *p;
	size_t n;
	ssize_t k;

	if (l->busy || (n = wsingest_next(l->w, &p)) == 0)
		return true;
	k = write(l->io->out, p, n);
	if (k == (ssize_t)n) {
		wsingest_sent(l->w);
		l->busy = true;
		return true;
	}
	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (k < 0 && errno != EPIPE)
		log_error("write: %s", strerror(errno));
	else if (k >= 0)
		log_error("short write");
	return false;
}

/* Between two commits: lets an answer out when the pipe has room. */
static bool
out_pump(struct loop *l)
{
	struct pollfd pfd = {.fd = l->io->out, .events = POLLOUT};

	if (l->busy && !l->fionread && poll(&pfd, 1, 0) < 0)
		pfd.revents = 0;
	out_check(l, pfd.revents);
	return out_write(l);
}

/* Commits the n batches of jobs in one round and queues their acks, in
 * order, up to the first that failed.  False when the pipe to
 * websocketd broke. */
static bool
commit_round(struct loop *l, size_t n)
{
	l->io->commit(l->io->arg, l->ptrs, n);
	for (size_t i = 0; i < n; i++) {
		if (l->jobs[i].status != INGEST_OK) {
			fail(l, l->jobs[i].detail, 1);
			return true;
		}
		if (!wsingest_ack(l->w, l->jobs[i].ack.accepted_samples)) {
			fail(l,
			     "too many acknowledgements not read by the client",
			     1);
			return true;
		}
		if (!out_pump(l))
			return false;
	}
	return true;
}

/* Cuts and commits the complete batches read so far, in rounds.  False
 * when the pipe to websocketd broke. */
static bool
take_batches(struct loop *l)
{
	char detail[512];
	enum wsingest_cut cut = WSINGEST_BATCH;
	size_t n;

	while (cut == WSINGEST_BATCH && !wsingest_failed(l->w)) {
		for (n = 0; n < (size_t)l->io->max_batches; n++) {
			memset(&l->jobs[n], 0, sizeof(l->jobs[n]));
			cut = wsingest_cut(l->w, &l->jobs[n].batch,
					   &l->jobs[n].len, detail,
					   sizeof(detail));
			if (cut != WSINGEST_BATCH)
				break;
		}
		/* The batches before a bad one are committed first. */
		if (n > 0 && !commit_round(l, n))
			return false;
		if (cut == WSINGEST_BAD)
			fail(l, detail, 1);
	}
	return true;
}

/* Reads what stdin has, all of it while more is waiting and there is
 * room.  False when the pipe to websocketd broke. */
static bool
read_input(struct loop *l)
{
	struct pollfd pfd = {.fd = l->io->in, .events = POLLIN};
	uint8_t *p;
	size_t room;
	ssize_t k;

	for (;;) {
		room = wsingest_room(l->w, &p);
		k = read(l->io->in, p, room);
		if (k <= 0)
			break;
		l->last_in = clock_mono_ms();
		wsingest_fill(l->w, (size_t)k);
		if ((size_t)k == room || poll(&pfd, 1, 0) != 1 ||
		    !(pfd.revents & POLLIN))
			break;
	}
	/* A full buffer is committed at once: websocketd may not wait on
	 * this program's stdin. */
	l->full |= room == 0 || (size_t)k == room;
	if (k > 0 || (k < 0 && (errno == EAGAIN || errno == EINTR)))
		return true;
	if (k < 0)
		log_error("read: %s", strerror(errno));
	l->in_open = false;
	if (l->ended == 0)
		l->ended = clock_mono_ms();
	return true;
}

/* Sets up out: non-blocking and, when a pipe, one page long (pacing). */
static void
out_setup(struct loop *l)
{
	int fl = fcntl(l->io->out, F_GETFL);

	if (fl >= 0)
		fcntl(l->io->out, F_SETFL, fl | O_NONBLOCK);
	if (fcntl(l->io->out, F_SETPIPE_SZ, 4096) < 0) {
		l->fionread = true;
		log_error("cannot shrink the stdout pipe (%s): pacing by "
			  "FIONREAD",
			  strerror(errno));
	}
}

/* One turn of the loop: false when it is over. */
static bool
turn(struct loop *l, const sigset_t *wait_mask)
{
	struct pollfd fds[2];
	struct timespec ts;
	const uint8_t *p;
	long long now = clock_mono_ms(), left;
	bool ending, pending;

	if (stop_signal != 0)
		return false;
	/* A round takes the batches that came while the acks of the last
	 * one went out: rounds grow with the client's window. */
	if (wsingest_next(l->w, &p) == 0 || l->full) {
		l->full = false;
		if (!take_batches(l))
			return false;
	}
	ending = wsingest_failed(l->w) || !l->in_open;
	pending = wsingest_next(l->w, &p) > 0;
	if (ending && !pending && !l->busy)
		return false;
	if (ending && now - l->ended >= DRAIN_MS) {
		log_error("the client did not take the last answers");
		return false;
	}
	if (!ending && now - l->last_in >= l->io->idle_ms) {
		char detail[128];

		snprintf(detail, sizeof(detail), "no message for %g s: closing",
			 l->io->idle_ms / 1000.0);
		fail(l, detail, 0);
		return true;
	}
	left = ending ? l->ended + DRAIN_MS - now
		      : l->last_in + l->io->idle_ms - now;
	ts.tv_sec = (time_t)(left / 1000);
	ts.tv_nsec = (long)(left % 1000) * 1000000;
	if (l->fionread && l->busy &&
	    (ts.tv_sec > 0 || ts.tv_nsec > l->wait_ns)) {
		ts.tv_sec = 0;
		ts.tv_nsec = l->wait_ns;
	}
	fds[0].fd = l->io->in;
	fds[0].events = l->in_open ? POLLIN : 0;
	fds[1].fd = l->io->out;
	fds[1].events = 0;
	/* Asking for POLLOUT of a FIONREAD-paced pipe that has room but is
	 * not empty would spin: that case waits wait_ns instead. */
	if (l->fionread ? !l->busy && pending : l->busy || pending)
		fds[1].events = POLLOUT;
	fds[0].revents = fds[1].revents = 0;
	if (ppoll(fds, 2, &ts, wait_mask) < 0) {
		if (errno == EINTR)
			return true;
		log_error("ppoll: %s", strerror(errno));
		l->rc = 2;
		return false;
	}
	if (fds[1].revents & POLLERR)
		return false; /* websocketd is gone */
	out_check(l, fds[1].revents);
	if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) && !read_input(l))
		return false;
	return out_write(l);
}

int
wsingest_serve(const struct wsingest_io *io)
{
	struct loop l = {.io = io,
			 .in_open = true,
			 .busy = true,
			 .wait_ns = FIONREAD_WAIT_NS};
	struct sigaction sa, old_int, old_term, old_pipe;
	sigset_t block, orig;

	l.jobs = calloc((size_t)io->max_batches, sizeof(*l.jobs));
	l.ptrs = calloc((size_t)io->max_batches, sizeof(*l.ptrs));
	if (io->max_batches < 1 || l.jobs == NULL || l.ptrs == NULL ||
	    (l.w = wsingest_new()) == NULL) {
		log_error("out of memory");
		free(l.jobs);
		free(l.ptrs);
		return 2;
	}
	for (int i = 0; i < io->max_batches; i++)
		l.ptrs[i] = &l.jobs[i];
	/* SIGINT and SIGTERM (websocketd's way of ending a child whose
	 * client left) only arrive inside ppoll, never mid-commit. */
	stop_signal = 0;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &orig);
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, &old_pipe);
	out_setup(&l);
	l.last_in = clock_mono_ms();
	while (turn(&l, &orig))
		;
	/* Said once the loop is over: until then, the whole batches before
	 * the end of input are still being cut and committed. */
	if (!l.in_open && wsingest_partial(l.w) > 0 && !wsingest_failed(l.w))
		log_error("the connection ended inside a batch (%zu bytes "
			  "dropped)",
			  wsingest_partial(l.w));
	/* A stop signal that came with the end stays pending: take it, so
	 * that unblocking it does not kill the process. */
	while (sigtimedwait(&block, NULL, &(struct timespec){0}) > 0)
		;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	sigprocmask(SIG_SETMASK, &orig, NULL);
	wsingest_free(l.w);
	free(l.jobs);
	free(l.ptrs);
	return l.rc;
}
