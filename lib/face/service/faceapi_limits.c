/* SPDX-License-Identifier: MIT */
/*
 * faceapi_limits.c - limits shared by the face service's processes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/db.h"
#include "core/clock.h"
#include "face/service/faceapi_limits.h"

#define TABLE_MAGIC 0x78666c31u /* "xfl1" */
#define KEY_LEN 64
#define PROBE 64 /* entries looked at for one key */

struct entry {
	char key[KEY_LEN];  /* NUL-terminated */
	int64_t expires_us; /* 0: free; <= now: as good as free */
	int64_t a, b;	    /* the user's values */
};

struct table_head {
	uint32_t magic, entries;
	uint8_t pad[56];
};

struct faceapi_limits {
	int req_fd, inf_fd, queue_fd, tab_fd;
	int nreq, ninf;
	int req_held, inf_held; /* slot index, -1 when none */
	struct table_head *head;
	struct entry *tab;
	size_t map_len;
	struct db *db; /* FACE_API_LIMITS=postgres; NULL: the table file */
};

/* Opens dir/name for reading and writing, created 0600. */
static int
open_state(const char *dir, const char *name, char *detail, size_t dlen)
{
	char path[FACEAPI_PATH_MAX + 32];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
		snprintf(detail, dlen, "%s: %s", path, strerror(errno));
	return fd;
}

/* An fcntl() write lock of byte i (or the whole file when i < 0);
 * wait: block until it is had. */
static int
lock_byte(int fd, int i, bool wait, bool lock)
{
	struct flock fl;
	int r;

	memset(&fl, 0, sizeof(fl));
	fl.l_type = lock ? F_WRLCK : F_UNLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = i < 0 ? 0 : i;
	fl.l_len = i < 0 ? 0 : 1;
	while ((r = fcntl(fd, wait ? F_SETLKW : F_SETLK, &fl)) < 0 &&
	       errno == EINTR)
		;
	return r;
}

/* Takes the first free slot of n in fd without waiting; its index or
 * -1. */
static int
take_slot(int fd, int n)
{
	for (int i = 0; i < n; i++)
		if (lock_byte(fd, i, false, true) == 0)
			return i;
	return -1;
}

static bool
map_table(struct faceapi_limits *l, char *detail, size_t dlen)
{
	size_t len = sizeof(struct table_head) +
		     FACEAPI_TABLE_ENTRIES * sizeof(struct entry);
	struct table_head h;
	struct stat st;
	bool ok = false;
	void *p;

	if (lock_byte(l->tab_fd, -1, true, true) < 0 ||
	    fstat(l->tab_fd, &st) < 0) {
		snprintf(detail, dlen, "state table: %s", strerror(errno));
		return false;
	}
	/* A file of another layout (or new) starts empty. */
	if ((size_t)st.st_size != len ||
	    pread(l->tab_fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    h.magic != TABLE_MAGIC || h.entries != FACEAPI_TABLE_ENTRIES) {
		memset(&h, 0, sizeof(h));
		h.magic = TABLE_MAGIC;
		h.entries = FACEAPI_TABLE_ENTRIES;
		if (ftruncate(l->tab_fd, 0) < 0 ||
		    ftruncate(l->tab_fd, (off_t)len) < 0 ||
		    pwrite(l->tab_fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
			snprintf(detail, dlen, "state table: %s",
				 strerror(errno));
			goto out;
		}
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, l->tab_fd, 0);
	if (p == MAP_FAILED) {
		snprintf(detail, dlen, "state table: %s", strerror(errno));
		goto out;
	}
	l->head = p;
	l->tab = (struct entry *)(l->head + 1);
	l->map_len = len;
	ok = true;
out:
	lock_byte(l->tab_fd, -1, false, false);
	return ok;
}

struct faceapi_limits *
faceapi_limits_open(const char *dir, int max_requests, int max_inference,
		    char *detail, size_t dlen)
{
	struct faceapi_limits *l = calloc(1, sizeof(*l));

	if (l == NULL) {
		snprintf(detail, dlen, "out of memory");
		return NULL;
	}
	l->req_fd = l->inf_fd = l->queue_fd = l->tab_fd = -1;
	l->req_held = l->inf_held = -1;
	l->nreq = max_requests;
	l->ninf = max_inference;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		snprintf(detail, dlen, "%s: %s", dir, strerror(errno));
		goto fail;
	}
	if ((l->req_fd = open_state(dir, "requests.lock", detail, dlen)) < 0 ||
	    (l->inf_fd = open_state(dir, "inference.lock", detail, dlen)) < 0 ||
	    (l->queue_fd = open_state(dir, "queue.lock", detail, dlen)) < 0 ||
	    (l->tab_fd = open_state(dir, "tables", detail, dlen)) < 0 ||
	    !map_table(l, detail, dlen))
		goto fail;
	return l;
fail:
	faceapi_limits_close(l);
	return NULL;
}

bool
faceapi_limits_shared(struct faceapi_limits *l, const char *database_url,
		      char *detail, size_t dlen)
{
	if ((l->db = db_new(database_url)) == NULL)
		snprintf(detail, dlen, "out of memory");
	return l->db != NULL;
}

void
faceapi_limits_close(struct faceapi_limits *l)
{
	if (l == NULL)
		return;
	db_free(l->db);
	if (l->head != NULL)
		munmap(l->head, l->map_len);
	/* Closing releases every lock this process holds on the files. */
	if (l->req_fd >= 0)
		close(l->req_fd);
	if (l->inf_fd >= 0)
		close(l->inf_fd);
	if (l->queue_fd >= 0)
		close(l->queue_fd);
	if (l->tab_fd >= 0)
		close(l->tab_fd);
	free(l);
}

bool
faceapi_request_begin(struct faceapi_limits *l)
{
	if (l->req_held < 0)
		l->req_held = take_slot(l->req_fd, l->nreq);
	return l->req_held >= 0;
}

void
faceapi_request_end(struct faceapi_limits *l)
{
	if (l->req_held >= 0)
		lock_byte(l->req_fd, l->req_held, false, false);
	l->req_held = -1;
}

bool
faceapi_inference_begin(struct faceapi_limits *l)
{
	const struct timespec ms = {0, 1000000};

	if (l->inf_held >= 0)
		return true;
	if ((l->inf_held = take_slot(l->inf_fd, l->ninf)) >= 0)
		return true;
	/*
	 * All taken: wait in line (the queue lock admits one waiter at a
	 * time, in the kernel's order), and the first in line looks for a
	 * free slot every millisecond.  Waiting on one given slot instead
	 * would let a slot freed elsewhere sit idle.
	 */
	if (lock_byte(l->queue_fd, 0, true, true) < 0)
		return false;
	while ((l->inf_held = take_slot(l->inf_fd, l->ninf)) < 0)
		nanosleep(&ms, NULL);
	lock_byte(l->queue_fd, 0, false, false);
	return true;
}

void
faceapi_inference_end(struct faceapi_limits *l)
{
	if (l->inf_held >= 0)
		lock_byte(l->inf_fd, l->inf_held, false, false);
	l->inf_held = -1;
}

static uint32_t
fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/*
 * The entry of key in the locked table: its own when it is live, else
 * (when create; NULL otherwise) a fresh one (zeroed values) taking the
 * place of a free, expired or, when none is, the soonest-expiring entry
 * of key's probe window.
 */
static struct entry *
find_entry(struct faceapi_limits *l, const char *key, int64_t now, bool create)
{
	uint32_t h = fnv1a(key);
	struct entry *e, *spare = NULL;

	for (uint32_t i = 0; i < PROBE; i++) {
		e = &l->tab[(h + i) % FACEAPI_TABLE_ENTRIES];
		if (e->expires_us > now && strcmp(e->key, key) == 0)
			return e;
		if (spare == NULL || (spare->expires_us > now &&
				      e->expires_us < spare->expires_us))
			spare = e;
	}
	if (!create)
		return NULL;
	memset(spare, 0, sizeof(*spare));
	snprintf(spare->key, sizeof(spare->key), "%s", key);
	return spare;
}

/* Runs fn on key's entry (as find_entry()) with the table locked, not
 * when there is none; false on an I/O error. */
static bool
with_entry(struct faceapi_limits *l, const char *key, int64_t now, bool create,
	   void (*fn)(struct entry *e, int64_t now, void *arg), void *arg)
{
	struct entry *e;

	if (lock_byte(l->tab_fd, -1, true, true) < 0)
		return false;
	if ((e = find_entry(l, key, now, create)) != NULL)
		fn(e, now, arg);
	lock_byte(l->tab_fd, -1, false, false);
	return true;
}

static int
seconds_up(int64_t us)
{
	int64_t s = (us + 999999) / 1000000;

	return s < 1 ? 1 : s > 86400 * 365 ? 86400 * 365 : (int)s;
}

static const char rate_sql[] =
	"SELECT face_rate_allow($1, $2::bigint, $3::bigint, $4::bigint, "
	"$5::bigint)";
static const char lockout_sql[] =
	"SELECT face_lockout($1, $2::integer, $3::bigint, $4::bigint, "
	"$5::integer)";

/*
 * Runs one of the functions of sql/016_scale.sql on key and four
 * integers; its bigint, or 0 when the database fails (allowed, not
 * locked out: limits are a protection, not a reason to fail).
 */
static int64_t
pg_call(struct db *db, const char *sql, const char *key, int64_t n1, int64_t n2,
	int64_t n3, int64_t n4)
{
	char v[4][24];
	const char *params[5] = {key, v[0], v[1], v[2], v[3]};
	PGresult *res = NULL;
	int64_t out = 0;

	snprintf(v[0], sizeof(v[0]), "%lld", (long long)n1);
	snprintf(v[1], sizeof(v[1]), "%lld", (long long)n2);
	snprintf(v[2], sizeof(v[2]), "%lld", (long long)n3);
	snprintf(v[3], sizeof(v[3]), "%lld", (long long)n4);
	if (db_query(db, &res, sql, 5, params) == DB_OK &&
	    PQntuples(res) == 1 && !PQgetisnull(res, 0, 0))
		out = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return out;
}

struct rate_op {
	const struct faceapi_rate *r;
	bool allowed;
	int64_t wait_us;
};

/* GCRA: a is the theoretical arrival time of the next request. */
static void
rate_fn(struct entry *e, int64_t now, void *arg)
{
	struct rate_op *op = arg;
	int64_t period = op->r->period_s * 1000000;
	int64_t t = period / op->r->limit, tau = period - t;
	int64_t tat = e->a > now ? e->a : now;

	/* A clock set back must not lock anyone out for long. */
	if (tat > now + period)
		tat = now + period;
	if (tat - now > tau) {
		op->allowed = false;
		op->wait_us = tat - tau - now;
		e->a = tat;
	} else {
		op->allowed = true;
		e->a = tat + t;
	}
	e->expires_us = e->a;
}

bool
faceapi_rate_allow(struct faceapi_limits *l, const char *kind, const char *ip,
		   const struct faceapi_rate *r, int64_t now_us,
		   int *retry_after)
{
	struct rate_op op = {r, true, 0};
	char key[KEY_LEN];

	snprintf(key, sizeof(key), "rate %s %s", kind, ip);
	if (l->db != NULL) {
		int64_t period = r->period_s * 1000000, t = period / r->limit;

		op.wait_us = pg_call(l->db, rate_sql, key, now_us, t,
				     period - t, period);
		op.allowed = op.wait_us <= 0;
	} else if (!with_entry(l, key, now_us, true, rate_fn, &op))
		return true;
	if (!op.allowed)
		*retry_after = seconds_up(op.wait_us);
	return op.allowed;
}

struct lock_op {
	int mode; /* 0 look, 1 failure, 2 success */
	int64_t blocked_until;
};

/* a: consecutive failures; b: locked out until. */
static void
lockout_fn(struct entry *e, int64_t now, void *arg)
{
	struct lock_op *op = arg;
	int64_t window = (int64_t)FACEAPI_LOCKOUT_SECONDS * 1000000;

	if (op->mode == 2) {
		e->expires_us = 0;
		return;
	}
	if (op->mode == 1 && e->b <= now) {
		e->b = 0;
		if (++e->a >= FACEAPI_LOCKOUT_FAILURES) {
			e->a = 0;
			e->b = now + window;
		}
		e->expires_us = e->b > 0 ? e->b : now + window;
	}
	op->blocked_until = e->b;
}

static bool
lockout_op(struct faceapi_limits *l, const char *ip, int mode, int64_t now,
	   int *retry_after)
{
	struct lock_op op = {mode, 0};
	char key[KEY_LEN];

	snprintf(key, sizeof(key), "login %s", ip);
	if (l->db != NULL)
		op.blocked_until =
			pg_call(l->db, lockout_sql, key, mode, now,
				(int64_t)FACEAPI_LOCKOUT_SECONDS * 1000000,
				FACEAPI_LOCKOUT_FAILURES);
	else if (!with_entry(l, key, now, mode == 1, lockout_fn, &op))
		return false;
	if (op.blocked_until <= now)
		return false;
	*retry_after = seconds_up(op.blocked_until - now);
	return true;
}

bool
faceapi_lockout_blocked(struct faceapi_limits *l, const char *ip,
			int64_t now_us, int *retry_after)
{
	return lockout_op(l, ip, 0, now_us, retry_after);
}

bool
faceapi_lockout_fail(struct faceapi_limits *l, const char *ip, int64_t now_us,
		     int *retry_after)
{
	return lockout_op(l, ip, 1, now_us, retry_after);
}

void
faceapi_lockout_ok(struct faceapi_limits *l, const char *ip)
{
	int unused;

	lockout_op(l, ip, 2, clock_real_us(), &unused);
}
