/* SPDX-License-Identifier: MIT */
/*
 * spool.h - the sender's store-and-forward spool (doc/sender.md "The
 * spool"): a directory of batch files, each written and fsync'd before it
 * is sent and removed once acknowledged, and a state file saying how far
 * the input was consumed and which batch_seq comes next.  What survives
 * a crash or SIGKILL: every batch whose spool_push() returned.
 */
#ifndef XMHUB_SPOOL_H
#define XMHUB_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/buf.h"

struct spool {
	int dirfd;
	char session[64];
	uint64_t first, next; /* file numbers: [first, next) are queued */
	uint64_t lines;	      /* input lines consumed into queued batches */
	uint16_t next_seq;    /* batch_seq of the next batch */
};

/*
 * Opens (creating it and its parents, mode 0700) the spool directory
 * path for session, removing half-written files.  A spool of another
 * session is refused.  False with a reason in err (errlen bytes).
 */
bool spool_open(struct spool *sp, const char *path, const char *session,
		char *err, size_t errlen);

/* Closes the directory; the files stay. */
void spool_close(struct spool *sp);

/* Batches queued (written and not yet acknowledged). */
uint64_t spool_depth(const struct spool *sp);

/*
 * Queues the len bytes of batch, which consumed the input up to line
 * line_end: written to a new file and fsync'd, then the state; the next
 * batch_seq becomes the batch's own plus one.  False (errno set) on an
 * I/O error.
 */
bool spool_push(struct spool *sp, const uint8_t *batch, size_t len,
		uint64_t line_end);

/* Appends queued batch i (0 is the oldest) to out; false on an error. */
bool spool_get(const struct spool *sp, uint64_t i, struct buf *out);

/* Removes the oldest batch, acknowledged.  False (errno set) on an error. */
bool spool_ack(struct spool *sp);

/*
 * Records that the whole input was sent and acknowledged (the spool must
 * be empty): the next run starts again at line 1, batch_seq goes on.
 * False (errno set) on an error.
 */
bool spool_done(struct spool *sp);

#endif
