/* SPDX-License-Identifier: MIT */
/*
 * ingestq.c - the group commit queue of an ingest process (see ingestq.h).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/conf.h"
#include "core/clock.h"
#include "core/db.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/settings.h"
#include "domain/ingestq.h"

bool
ingestq_settings(struct ingestq_conf *conf, int *threads, char *detail,
		 size_t dlen)
{
	/* Defaults and ranges: lib/core/settings.def. */
	static const char *const names[] = {
		"XMHUB_INGEST_THREADS",
		"XMHUB_INGEST_COMMIT_MAX",
		"XMHUB_INGEST_COMMIT_WAIT_MS",
		"XMHUB_INGEST_QUEUE",
	};
	long long v[4];

	for (int i = 0; i < 4; i++) {
		if (!conf_get_int(names[i], &v[i])) {
			snprintf(detail, dlen, "%s must be %.0f to %.0f",
				 names[i], settings_find(names[i])->min,
				 settings_find(names[i])->max);
			return false;
		}
	}
	*threads = (int)v[0];
	conf->max_batches = (int)v[1];
	conf->max_wait_ms = (int)v[2];
	conf->bound = (int)v[3];
	return true;
}

/* A waiting batch, on its request thread's stack; its thread alone is
 * woken when it is answered (a broadcast would wake every thread of the
 * process for every round). */
struct item {
	struct ingest_job *job;
	bool done;
	pthread_cond_t answered;
	struct item *next;
};

struct ingestq {
	struct ingestq_conf conf;
	struct db *db;
	pthread_t writer;
	pthread_mutex_t mu;
	pthread_cond_t work; /* the writer: batches are waiting, or stop */
	struct item *head, **tail;
	int queued;
	bool stop;
	struct ingest_job **jobs; /* a round's, conf.max_batches */
	struct item **items;
};

/* Takes the next round's items off the queue (the caller holds mu). */
static int
take_round(struct ingestq *q)
{
	int n = 0;

	while (q->head != NULL && n < q->conf.max_batches) {
		q->items[n] = q->head;
		q->jobs[n] = q->head->job;
		q->head = q->head->next;
		n++;
	}
	if (q->head == NULL)
		q->tail = &q->head;
	q->queued -= n;
	metrics_set(METRIC_INGEST_QUEUE, q->queued);
	return n;
}

/* Puts the deferred items of the round of n back at the head of the
 * queue, in their order: before anything that came after them (the
 * caller holds mu). */
static void
requeue(struct ingestq *q, int n)
{
	struct item **at = &q->head;

	for (int i = 0; i < n; i++) {
		if (q->jobs[i]->status != INGEST_DEFERRED)
			continue;
		q->items[i]->next = *at;
		*at = q->items[i];
		at = &q->items[i]->next;
		if (q->items[i]->next == NULL)
			q->tail = &q->items[i]->next;
		q->queued++;
	}
	metrics_set(METRIC_INGEST_QUEUE, q->queued);
}

/* With max_wait_ms: waits (holding mu) until a round is full, the wait
 * is over or the queue stops. */
static void
gather(struct ingestq *q)
{
	struct timespec until;

	if (q->conf.max_wait_ms <= 0)
		return;
	until = clock_real_after(q->conf.max_wait_ms);
	while (!q->stop && q->queued < q->conf.max_batches &&
	       pthread_cond_timedwait(&q->work, &q->mu, &until) != ETIMEDOUT)
		;
}

static void *
writer(void *arg)
{
	struct ingestq *q = arg;
	int n;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (q->head == NULL && !q->stop)
			pthread_cond_wait(&q->work, &q->mu);
		if (q->head == NULL)
			break;
		gather(q);
		n = take_round(q);
		pthread_mutex_unlock(&q->mu);
		/* Batches that come meanwhile wait for the next round. */
		ingest_commit(q->db, q->jobs, (size_t)n, false);
		pthread_mutex_lock(&q->mu);
		requeue(q, n);
		for (int i = 0; i < n; i++) {
			if (q->jobs[i]->status == INGEST_DEFERRED)
				continue;
			q->items[i]->done = true;
			pthread_cond_signal(&q->items[i]->answered);
		}
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

struct ingestq *
ingestq_start(const char *conninfo, const struct ingestq_conf *conf)
{
	struct ingestq *q;
	sigset_t all, old;
	int err;

	if ((q = calloc(1, sizeof(*q))) == NULL)
		goto nomem;
	q->conf = *conf;
	q->tail = &q->head;
	q->jobs = calloc((size_t)conf->max_batches, sizeof(*q->jobs));
	q->items = calloc((size_t)conf->max_batches, sizeof(*q->items));
	if (q->jobs == NULL || q->items == NULL ||
	    (q->db = db_new(conninfo)) == NULL)
		goto nomem;
	db_writer_plans(q->db);
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->work, NULL);
	/* Signals are for the thread that accepts requests. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = pthread_create(&q->writer, NULL, writer, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err != 0) {
		log_error("ingest: writer thread: %s", strerror(err));
		pthread_mutex_destroy(&q->mu);
		pthread_cond_destroy(&q->work);
		goto fail;
	}
	return q;
nomem:
	log_error("ingest: out of memory");
fail:
	if (q != NULL) {
		db_free(q->db);
		free(q->jobs);
		free(q->items);
	}
	free(q);
	return NULL;
}

enum ingest_status
ingestq_submit(struct ingestq *q, struct ingest_job *job)
{
	struct item it = {.job = job};

	pthread_mutex_lock(&q->mu);
	if (q->queued >= q->conf.bound) {
		pthread_mutex_unlock(&q->mu);
		snprintf(job->detail, sizeof(job->detail),
			 "the ingest queue is full (%d batches); try again",
			 q->conf.bound);
		return job->status = INGEST_BUSY;
	}
	pthread_cond_init(&it.answered, NULL);
	*q->tail = &it;
	q->tail = &it.next;
	q->queued++;
	metrics_set(METRIC_INGEST_QUEUE, q->queued);
	pthread_cond_signal(&q->work);
	while (!it.done)
		pthread_cond_wait(&it.answered, &q->mu);
	pthread_mutex_unlock(&q->mu);
	pthread_cond_destroy(&it.answered);
	return job->status;
}

void
ingestq_stop(struct ingestq *q)
{
	if (q == NULL)
		return;
	pthread_mutex_lock(&q->mu);
	q->stop = true;
	pthread_cond_signal(&q->work);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->writer, NULL);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->work);
	db_free(q->db);
	free(q->jobs);
	free(q->items);
	free(q);
}
