/* SPDX-License-Identifier: MIT */
/*
 * log.c - logfmt lines on stderr (log.h).
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"

static const char *program = "xmhub";
static _Thread_local char request_id[LOG_REQUEST_ID_MAX + 1];

/*
 * Request lines of status below 500 waiting to be written together
 * (log_flush()): under load a write(2) per request to a file that every
 * process appends to cost more than the rest of the line.  Any other line
 * writes them first, so the order of the lines holds, and a thread writes
 * them at least every second (flusher()), so none waits longer.
 */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t tick; /* never signalled: flusher() times out on it */
	char p[2 * LOG_LINE_MAX];
	size_t len;
	bool on; /* log_hold_requests() */
} held = {.mu = PTHREAD_MUTEX_INITIALIZER, .tick = PTHREAD_COND_INITIALIZER};

/* Writes what is held (the caller holds held.mu). */
static void
write_held(void)
{
	ssize_t n;

	/* A failed log write has nowhere to be reported. */
	if (held.len > 0) {
		n = write(STDERR_FILENO, held.p, held.len);
		(void)n;
	}
	held.len = 0;
}

/* A line being built: p[0..len), never more than LOG_LINE_MAX - 1. */
struct line {
	char p[LOG_LINE_MAX];
	size_t len;
	bool cut;
};

static void
put(struct line *l, const char *s, size_t n)
{
	size_t room = sizeof(l->p) - 1 - l->len;

	if (n > room) {
		n = room;
		l->cut = true;
	}
	memcpy(l->p + l->len, s, n);
	l->len += n;
}

static void
puts_(struct line *l, const char *s)
{
	put(l, s, strlen(s));
}

/* Whether value v must be quoted in logfmt. */
static bool
needs_quotes(const char *v)
{
	if (*v == '\0')
		return true;
	for (; *v != '\0'; v++)
		if ((unsigned char)*v <= ' ' || *v == '"' || *v == '=' ||
		    *v == '\\' || *v == 0x7f)
			return true;
	return false;
}

/* Appends " key=value", value quoted and escaped when it needs it. */
static void
kv(struct line *l, const char *key, const char *v)
{
	put(l, " ", 1);
	puts_(l, key);
	put(l, "=", 1);
	if (!needs_quotes(v)) {
		puts_(l, v);
		return;
	}
	put(l, "\"", 1);
	for (; *v != '\0'; v++) {
		unsigned char c = (unsigned char)*v;
		char esc[8];

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			put(l, esc, 2);
		} else if (c == '\n')
			put(l, "\\n", 2);
		else if (c == '\t')
			put(l, "\\t", 2);
		else if (c < ' ' || c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", c);
			put(l, esc, 4);
		} else
			put(l, (const char *)&c, 1);
	}
	put(l, "\"", 1);
}

/* The decimal digits of v into p (at least 24 bytes); returns p. */
static char *
utoa(unsigned long long v, char *p)
{
	char tmp[24];
	size_t n = 0, i = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (n > 0)
		p[i++] = tmp[--n];
	p[i] = '\0';
	return p;
}

/* Starts a line: time, level, program, pid, the thread's request id. */
static void
head(struct line *l, const char *level)
{
	/* The formatted second, made again only when it changes. */
	static _Thread_local char sec[64];
	static _Thread_local time_t sec_of = -1;
	int64_t now = clock_real_us();
	time_t s = (time_t)(now / 1000000);
	long us = (long)(now % 1000000);
	char ms[8], pid[24];

	l->len = 0;
	l->cut = false;
	if (s != sec_of) {
		struct tm tm;

		gmtime_r(&s, &tm);
		snprintf(sec, sizeof(sec),
			 "time=%04d-%02d-%02dT%02d:%02d:%02d.",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec);
		sec_of = s;
	}
	puts_(l, sec);
	ms[0] = (char)('0' + us / 100000);
	ms[1] = (char)('0' + us / 10000 % 10);
	ms[2] = (char)('0' + us / 1000 % 10);
	ms[3] = 'Z';
	put(l, ms, 4);
	kv(l, "level", level);
	kv(l, "program", program);
	kv(l, "pid", utoa((unsigned long long)getpid(), pid));
}

/* Ends the line and writes it whole, after the held lines; with hold,
 * it may be held itself. */
static void
emit(struct line *l, bool hold)
{
	ssize_t n;

	if (l->cut && l->len >= 3)
		memcpy(l->p + l->len - 3, "...", 3);
	l->p[l->len++] = '\n';
	/* Set before the program serves anything: without it, no lock. */
	if (!held.on) {
		/* One write: O_APPEND files and pipes keep the line whole. */
		n = write(STDERR_FILENO, l->p, l->len);
		(void)n;
		return;
	}
	pthread_mutex_lock(&held.mu);
	if (held.len + l->len > sizeof(held.p))
		write_held();
	if (hold) {
		memcpy(held.p + held.len, l->p, l->len);
		held.len += l->len;
	} else {
		write_held();
		n = write(STDERR_FILENO, l->p, l->len);
		(void)n;
	}
	pthread_mutex_unlock(&held.mu);
}

/* Writes the held lines every second, for as long as the process runs. */
static void *
flusher(void *arg)
{
	struct timespec t;

	(void)arg;
	pthread_mutex_lock(&held.mu);
	for (;;) {
		t = clock_real_after(1000);
		pthread_cond_timedwait(&held.tick, &held.mu, &t);
		write_held();
	}
	return NULL; /* never reached; the signature wants it */
}

void
log_hold_requests(void)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;

	if (held.on)
		return;
	if (pthread_attr_init(&attr) != 0)
		return;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* The program's signals stay with its own threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	held.on = pthread_create(&t, &attr, flusher, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (held.on)
		atexit(log_flush);
}

void
log_flush(void)
{
	pthread_mutex_lock(&held.mu);
	write_held();
	pthread_mutex_unlock(&held.mu);
}

bool
log_holding(void)
{
	bool r;

	pthread_mutex_lock(&held.mu);
	r = held.len > 0;
	pthread_mutex_unlock(&held.mu);
	return r;
}

static void
vlog(const char *level, const char *fmt, va_list ap)
{
	struct line l;
	char msg[LOG_LINE_MAX];
	size_t n;
	int saved = errno; /* for a %m of the caller */

	head(&l, level);
	if (request_id[0] != '\0')
		kv(&l, "request_id", request_id);
	errno = saved;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* Callers' messages may end in a newline of the old fprintf form. */
	n = strlen(msg);
	if (n > 0 && msg[n - 1] == '\n')
		msg[n - 1] = '\0';
	kv(&l, "msg", msg);
	emit(&l, false);
}

void
log_init(const char *name)
{
	program = name;
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("info", fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warn", fmt, ap);
	va_end(ap);
}

void
log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("error", fmt, ap);
	va_end(ap);
}

void
log_request_id(const char *id)
{
	if (id == NULL)
		id = "";
	snprintf(request_id, sizeof(request_id), "%s", id);
}

bool
log_request_id_valid(const char *id)
{
	size_t n = 0;

	for (; id[n] != '\0'; n++)
		if (n >= LOG_REQUEST_ID_MAX ||
		    strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXY"
			   "Z"
			   "0123456789-_.:",
			   id[n]) == NULL)
			return false;
	return n > 0;
}

void
log_request(const char *method, const char *path, int status,
	    double duration_ms)
{
	struct line l;
	char st[24], ms[48];
	unsigned long long us =
		duration_ms > 0 ? (unsigned long long)(duration_ms * 1000 + 0.5)
				: 0;
	size_t n;

	head(&l, status >= 500 ? "error" : "info");
	kv(&l, "msg", "request");
	kv(&l, "method", method != NULL ? method : "-");
	kv(&l, "path", path != NULL ? path : "-");
	kv(&l, "status", status >= 0 ? utoa((unsigned)status, st) : "-");
	/* Milliseconds with 3 decimals, from whole microseconds. */
	n = strlen(utoa(us / 1000, ms));
	ms[n] = '.';
	ms[n + 1] = (char)('0' + us % 1000 / 100);
	ms[n + 2] = (char)('0' + us % 100 / 10);
	ms[n + 3] = (char)('0' + us % 10);
	ms[n + 4] = '\0';
	kv(&l, "duration_ms", ms);
	kv(&l, "request_id", request_id[0] != '\0' ? request_id : "-");
	emit(&l, status >= 0 && status < 500);
}
