/* SPDX-License-Identifier: MIT */
/*
 * ingestq.h - the group commit of a multi-threaded ingest process: request
 * threads hand their batch to the process's queue and wait; one writer
 * thread takes every batch waiting when a round starts (up to a maximum)
 * and commits them together with ingest_commit(), on a database
 * connection of its own, then wakes each request with its answer.  The
 * queue is bounded: a batch that finds it full is refused at once
 * (INGEST_BUSY: the caller's 503 with Retry-After).  doc/ingest.md
 * "Group commit".
 */
#ifndef XMHUB_INGESTQ_H
#define XMHUB_INGESTQ_H

#include <stdbool.h>
#include <stddef.h>

#include "domain/ingest.h"

struct ingestq_conf {
	int max_batches; /* batches a round takes at most */
	int max_wait_ms; /* a round waits this long for more (0: none) */
	int bound;	 /* batches waiting at most; more is INGEST_BUSY */
};

/* The settings of an ingest program (doc/ingest.md "Settings"): request
 * threads per process and the queue's conf, from XMHUB_INGEST_THREADS,
 * _COMMIT_MAX, _COMMIT_WAIT_MS and _QUEUE.  False with detail when one
 * is out of its range. */
bool ingestq_settings(struct ingestq_conf *conf, int *threads, char *detail,
		      size_t dlen);

struct ingestq;

/* Starts the writer thread with a database handle for conninfo (it
 * connects on its first round).  NULL when memory or the thread cannot
 * be had (logged). */
struct ingestq *ingestq_start(const char *conninfo,
			      const struct ingestq_conf *conf);

/*
 * Commits job (as ingest_commit() answers it) in the next round and
 * returns once it is answered; INGEST_BUSY at once, detail set, when
 * the queue holds conf.bound batches.  Thread-safe.
 */
enum ingest_status ingestq_submit(struct ingestq *q, struct ingest_job *job);

/* Answers what is queued, stops the writer and frees q (NULL is fine).
 * No ingestq_submit() may run or follow. */
void ingestq_stop(struct ingestq *q);

#endif
