/* SPDX-License-Identifier: MIT */
/*
 * wsingest.h - the WebSocket ingest session of ws/xmhub-ingest-ws, the
 * child websocketd 0.4.1 runs in --binary mode for each connection.
 *
 * websocketd writes each message's payload to the child's stdin without
 * boundaries and turns each read() of the child's stdout into one binary
 * message (doc/websocket.md "Pacing").  So batches are re-cut from the byte
 * stream with xmbp_frame(), and the answers are paced: one write per message,
 * made only when the pipe to websocketd is empty, so that two acknowledgements
 * never end up in one message.  The pacing also keeps the child from ever
 * blocking on stdout while websocketd writes its stdin (the 0.4.1 deadlock):
 * stdin is always read, stdout is non-blocking, every buffer is bounded.
 *
 * Two layers: the session state (input buffer, batch cutting, the queue
 * of answers), pure and unit-tested; and wsingest_serve(), the ppoll loop
 * moving bytes between the file descriptors and that state.
 */
#ifndef XMHUB_WSINGEST_H
#define XMHUB_WSINGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domain/ingest.h"

/* The largest batch taken: the maximum message, 256 KB (doc/websocket.md
 * "Limits"). */
#define WSINGEST_MAX_BATCH 262144
/* The input buffer: batches waiting for a round, four of the largest. */
#define WSINGEST_IN_MAX (4 * WSINGEST_MAX_BATCH)
/* Acknowledgements waiting for the client to take them; one more ends
 * the session (a client that sends and never reads). */
#define WSINGEST_MAX_ACKS 65536
/* The error message at most, in bytes: below PIPE_BUF, so it is written
 * atomically and read whole by websocketd. */
#define WSINGEST_MSG_MAX 1024

struct wsingest;

/* A new session state; NULL when out of memory.  Freed with
 * wsingest_free() (NULL is fine). */
struct wsingest *wsingest_new(void);
void wsingest_free(struct wsingest *w);

/*
 * Where the next read of input goes: *p and the bytes of room there.
 * Never 0: after a failure the room is reused, so input keeps being
 * read (and dropped) while the last answers leave.  Moves the bytes of
 * an incomplete batch to the front, so what wsingest_cut() handed out
 * before is no longer valid.
 */
size_t wsingest_room(struct wsingest *w, uint8_t **p);

/* n bytes (at most the room) were read into the room. */
void wsingest_fill(struct wsingest *w, size_t n);

enum wsingest_cut {
	WSINGEST_NONE = 0, /* no complete batch yet (or the session failed) */
	WSINGEST_BATCH,	   /* a batch: *batch, *len */
	WSINGEST_BAD	   /* a decode error or a batch too large: detail */
};

/*
 * Takes the next complete batch off the front of the input.  The bytes
 * stay valid until the next wsingest_room().  WSINGEST_BAD names the
 * XMBP error kind, or says that the batch is larger than
 * WSINGEST_MAX_BATCH (seen when that many bytes are in and still form
 * no complete batch); the caller then calls wsingest_fail().
 */
enum wsingest_cut wsingest_cut(struct wsingest *w, const uint8_t **batch,
			       size_t *len, char *detail, size_t dlen);

/* Bytes of an incomplete batch held (for a log line when input ends). */
size_t wsingest_partial(const struct wsingest *w);

/* Queues the acknowledgement of a committed batch.  False when
 * WSINGEST_MAX_ACKS are already waiting (nothing queued). */
bool wsingest_ack(struct wsingest *w, uint32_t accepted_samples);

/*
 * Ends the session: queues {"detail": detail} (JSON, UTF-8, cut to fit
 * WSINGEST_MSG_MAX and never 4 bytes or less) after the queued acks and
 * drops all input from now on.  Only the first call counts.
 */
void wsingest_fail(struct wsingest *w, const char *detail);

/* True after wsingest_fail(). */
bool wsingest_failed(const struct wsingest *w);

/* The next message to write (*p, its length); 0 when none is queued.
 * Acks come first, in order, then the error message. */
size_t wsingest_next(struct wsingest *w, const uint8_t **p);

/* The message of the last wsingest_next() was written whole. */
void wsingest_sent(struct wsingest *w);

/*
 * Commits the n batches of jobs (batch and len set; the callee fills in
 * the rest of each job) in one round, in order, as ingest_commit() with
 * stop: each INGEST_OK once durable, with the session's running total;
 * the first that is not ends the session with its detail.
 */
typedef void (*wsingest_commit_fn)(void *arg, struct ingest_job *const *jobs,
				   size_t n);

struct wsingest_io {
	int in, out;	 /* websocketd's pipes: stdin, stdout */
	int idle_ms;	 /* end after this long without input */
	int max_batches; /* batches of a round at most (1 or more) */
	wsingest_commit_fn commit;
	void *arg;
};

/*
 * Runs the session until the client leaves.  Input is always read (up
 * to WSINGEST_IN_MAX buffered); a round commits every complete batch
 * buffered (at most max_batches) once the acks of the last round are all
 * written, or at once when the buffer is full; acks go out in order;
 * nothing is read while a round commits (back-pressure).  It runs (end
 * of input; SIGINT or SIGTERM, which are blocked here except while waiting, so
 * never taken mid-commit), websocketd goes away, the session fails (a decode
 * error, a batch too large, a non-200 commit: the error message is sent first)
 * or idle_ms pass without input (a message saying so is sent).  Sets out
 * non-blocking and, when it is a pipe, its size to one page (the
 * pacing; otherwise FIONREAD paces, logged); SIGPIPE is ignored
 * meanwhile.  Signal settings are restored on return.  Pending answers
 * get at most 5 s to leave at the end.  Returns 0 when the client ended
 * the session or went idle, 1 when it failed, 2 on an I/O or memory
 * error (logged to stderr).
 */
int wsingest_serve(const struct wsingest_io *io);

#endif
