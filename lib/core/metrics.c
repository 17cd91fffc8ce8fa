/* SPDX-License-Identifier: MIT */
/*
 * metrics.c - per-process slots of atomic counters in one shared file,
 * summed at a scrape (metrics.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/metrics.h"

#define SLOTS 1024		    /* processes of one service at once */
#define NAME_LEN 32		    /* a slot's program name, NUL included */
#define STATUSES 500		    /* 100 to 599 */
#define MAX_BUCKETS 14		    /* finite bucket bounds of a histogram */
#define MAGIC 0x786d68756d657431ULL /* "xmhumet1": layout 1 */

struct hist {
	_Atomic uint64_t bucket[MAX_BUCKETS + 1]; /* the last one: +Inf */
	_Atomic uint64_t sum;			  /* in units of 1/scale */
};

struct slot {
	_Atomic int32_t pid; /* owner; 0: never taken */
	char program[NAME_LEN];
	_Atomic uint64_t status[STATUSES + 1]; /* the last one: other */
	struct hist request;
	_Atomic uint64_t counter[METRIC_COUNTERS];
	_Atomic int64_t gauge[METRIC_GAUGES];
	struct hist hist[METRIC_HISTS];
};

struct file {
	_Atomic uint64_t magic; /* 0 in a new file: the zeroes are valid */
	uint64_t size;		/* sizeof(struct file) of the writer */
	struct slot slot[SLOTS];
};

/* A histogram's bounds and help; scale turns a value into sum units. */
struct hist_def {
	const char *name, *help;
	double scale;
	size_t n;
	double le[MAX_BUCKETS];
};

static const struct hist_def request_def = {
	"xmhub_http_request_duration_seconds",
	"Time from the request read to the answer sent, by endpoint group.",
	1e6,
	13,
	{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
	 10}};

static const struct hist_def hist_defs[METRIC_HISTS] = {
	[HIST_INGEST_COMMIT_BATCHES] =
		{"xmhub_ingest_commit_batches",
		 "Batches per ingest commit (group commit).",
		 1,
		 8,
		 {1, 2, 4, 8, 16, 32, 64, 128}},
	[HIST_INGEST_COMMIT_SAMPLES] = {"xmhub_ingest_commit_samples",
					"Samples per ingest commit.",
					1,
					8,
					{1, 10, 100, 1000, 10000, 100000,
					 1000000, 10000000}},
	[HIST_INGEST_COMMIT_BYTES] = {"xmhub_ingest_commit_bytes",
				      "XMBP bytes per ingest commit.",
				      1,
				      9,
				      {64, 256, 1024, 4096, 16384, 65536,
				       262144, 1048576, 4194304}},
	[HIST_FACE_INFERENCE] = {"xmhub_face_inference_duration_seconds",
				 "Time of one face model run.",
				 1e6,
				 11,
				 {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
				  2.5, 5, 10}},
};

/* Counters: name, labels ("" or {k="v"}), help; one name's rows follow
 * each other. */
static const struct {
	const char *name, *labels, *help;
} counter_defs[METRIC_COUNTERS] = {
	[METRIC_INGEST_BATCHES] =
		{"xmhub_ingest_batches_total", "",
		 "XMBP batches committed (HTTP and WebSocket)."},
	[METRIC_INGEST_SAMPLES] = {"xmhub_ingest_samples_total", "",
				   "Samples of the batches committed."},
	[METRIC_INGEST_BYTES] = {"xmhub_ingest_bytes_total", "",
				 "XMBP bytes of the batches committed."},
	[METRIC_RATE_LIMIT_LOGIN] = {"xmhub_rate_limited_total",
				     "{limit=\"login\"}",
				     "Requests refused by a rate limit."},
	[METRIC_RATE_LIMIT_DETECT] = {"xmhub_rate_limited_total",
				      "{limit=\"detect\"}", NULL},
	[METRIC_RATE_LIMIT_MASK] = {"xmhub_rate_limited_total",
				    "{limit=\"mask\"}", NULL},
	[METRIC_RATE_LIMIT_ADMIN] = {"xmhub_rate_limited_total",
				     "{limit=\"admin_login\"}", NULL},
	[METRIC_DB_ERRORS] = {"xmhub_db_errors_total", "",
			      "PostgreSQL calls that failed."},
	[METRIC_FACE_INFERENCES] = {"xmhub_face_inferences_total", "",
				    "Face model runs."},
	[METRIC_ALARM_CHECKS] = {"xmhub_alarm_rule_checks_total", "",
				 "Samples checked against a threshold rule "
				 "at ingest, once per rule."},
	[METRIC_ALARMS_RAISED] = {"xmhub_alarms_raised_total", "",
				  "Alarms raised by threshold rules at "
				  "ingest."},
};

static const struct {
	const char *name, *help;
} gauge_defs[METRIC_GAUGES] = {
	[METRIC_INGEST_QUEUE] = {"xmhub_ingest_queue_depth",
				 "Batches waiting for the ingest writer."},
};

static struct file *file;
static struct slot *mine;

/* True when pid is no process (its slot may be taken over). */
static bool
dead(int32_t pid)
{
	return pid != 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Takes a slot: a dead process's of the same program, else a new one. */
static struct slot *
claim(const char *program)
{
	int32_t me = (int32_t)getpid();

	for (size_t i = 0; i < SLOTS; i++) {
		struct slot *s = &file->slot[i];
		int32_t pid = atomic_load(&s->pid);

		if (strncmp(s->program, program, NAME_LEN) == 0 && dead(pid) &&
		    atomic_compare_exchange_strong(&s->pid, &pid, me))
			return s;
	}
	for (size_t i = 0; i < SLOTS; i++) {
		struct slot *s = &file->slot[i];
		int32_t pid = 0;

		if (atomic_compare_exchange_strong(&s->pid, &pid, me)) {
			strncpy(s->program, program, NAME_LEN - 1);
			return s;
		}
	}
	return NULL;
}

bool
metrics_init(const char *path, const char *program, char *detail,
	     size_t detail_len)
{
	struct stat st;
	uint64_t magic = 0;
	void *p = MAP_FAILED;
	int fd;
	bool ok = false;

	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0 ||
	    fstat(fd, &st) != 0) {
		snprintf(detail, detail_len, "%s: %s", path, strerror(errno));
		goto out;
	}
	/* Every process of a new file sets the same size: no race. */
	if (st.st_size == 0 && ftruncate(fd, sizeof(struct file)) != 0) {
		snprintf(detail, detail_len, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (st.st_size != 0 && st.st_size != (off_t)sizeof(struct file)) {
		snprintf(detail, detail_len,
			 "%s: made by another version of xmhub (remove it)",
			 path);
		goto out;
	}
	p = mmap(NULL, sizeof(struct file), PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (p == MAP_FAILED) {
		snprintf(detail, detail_len, "%s: %s", path, strerror(errno));
		goto out;
	}
	file = p;
	if (!atomic_compare_exchange_strong(&file->magic, &magic, MAGIC) &&
	    magic != MAGIC) {
		snprintf(detail, detail_len,
			 "%s: made by another version of xmhub (remove it)",
			 path);
		goto out;
	}
	file->size = sizeof(struct file);
	if ((mine = claim(program)) == NULL) {
		snprintf(detail, detail_len, "%s: all %d slots are taken", path,
			 SLOTS);
		goto out;
	}
	ok = true;
out:
	if (!ok && p != MAP_FAILED) {
		munmap(p, sizeof(struct file));
		file = NULL;
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

bool
metrics_on(void)
{
	return mine != NULL;
}

void
metrics_close(void)
{
	if (file != NULL)
		munmap(file, sizeof(struct file));
	file = NULL;
	mine = NULL;
}

void
metrics_add(enum metrics_counter c, uint64_t n)
{
	if (mine != NULL && (unsigned)c < METRIC_COUNTERS)
		atomic_fetch_add_explicit(&mine->counter[c], n,
					  memory_order_relaxed);
}

void
metrics_set(enum metrics_gauge g, int64_t v)
{
	if (mine != NULL && (unsigned)g < METRIC_GAUGES)
		atomic_store_explicit(&mine->gauge[g], v, memory_order_relaxed);
}

void
metrics_gauge_add(enum metrics_gauge g, int64_t d)
{
	if (mine != NULL && (unsigned)g < METRIC_GAUGES)
		atomic_fetch_add_explicit(&mine->gauge[g], d,
					  memory_order_relaxed);
}

static void
observe(struct hist *h, const struct hist_def *def, double v)
{
	size_t i = 0;

	if (!(v >= 0))
		v = 0; /* NaN and negatives: the lowest bucket */
	while (i < def->n && v > def->le[i])
		i++;
	atomic_fetch_add_explicit(&h->bucket[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum, (uint64_t)(v * def->scale + 0.5),
				  memory_order_relaxed);
}

void
metrics_observe(enum metrics_hist h, double v)
{
	if (mine != NULL && (unsigned)h < METRIC_HISTS)
		observe(&mine->hist[h], &hist_defs[h], v);
}

void
metrics_request(int status, double seconds)
{
	if (mine == NULL)
		return;
	atomic_fetch_add_explicit(
		&mine->status[status >= 100 && status <= 599 ? status - 100
							     : STATUSES],
		1, memory_order_relaxed);
	observe(&mine->request, &request_def, seconds);
}

/* Adds slot s's histogram h into the totals b (buckets) and *sum. */
static void
hist_sum(const struct hist *h, uint64_t *b, uint64_t *sum)
{
	for (size_t i = 0; i <= MAX_BUCKETS; i++)
		b[i] += atomic_load_explicit(&h->bucket[i],
					     memory_order_relaxed);
	*sum += atomic_load_explicit(&h->sum, memory_order_relaxed);
}

/* Writes one histogram's rows; group, when not NULL, is its label. */
static void
hist_put(struct buf *out, const struct hist_def *def, const char *group,
	 const uint64_t *b, uint64_t sum)
{
	char lab[64] = "";
	uint64_t cum = 0;

	if (group != NULL)
		snprintf(lab, sizeof(lab), "group=\"%s\",", group);
	for (size_t i = 0; i < def->n; i++) {
		cum += b[i];
		buf_printf(out, "%s_bucket{%sle=\"%g\"} %llu\n", def->name, lab,
			   def->le[i], (unsigned long long)cum);
	}
	cum += b[def->n];
	buf_printf(out, "%s_bucket{%sle=\"+Inf\"} %llu\n", def->name, lab,
		   (unsigned long long)cum);
	if (group != NULL)
		snprintf(lab, sizeof(lab), "{group=\"%s\"}", group);
	buf_printf(out, "%s_sum%s %.6f\n%s_count%s %llu\n", def->name, lab,
		   (double)sum / def->scale, def->name, lab,
		   (unsigned long long)cum);
}

/* The programs named by the file's slots, each once; returns how many. */
static size_t
programs(const char **names)
{
	size_t n = 0;

	for (size_t i = 0; i < SLOTS; i++) {
		const struct slot *s = &file->slot[i];
		size_t j = 0;

		if (atomic_load(&s->pid) == 0 || s->program[0] == '\0' ||
		    memchr(s->program, '\0', NAME_LEN) == NULL)
			continue;
		while (j < n && strcmp(names[j], s->program) != 0)
			j++;
		if (j == n)
			names[n++] = s->program;
	}
	return n;
}

/* The indexes of the slots of program name into idx; returns how many. */
static size_t
slots_of(const char *name, size_t *idx)
{
	size_t n = 0;

	for (size_t i = 0; i < SLOTS; i++)
		if (strcmp(file->slot[i].program, name) == 0)
			idx[n++] = i;
	return n;
}

static void
render_requests(struct buf *out, const char **names, size_t n)
{
	size_t idx[SLOTS];

	buf_printf(out, "# HELP xmhub_http_requests_total Requests answered, "
			"by endpoint group and status.\n"
			"# TYPE xmhub_http_requests_total counter\n");
	for (size_t k = 0; k < n; k++) {
		size_t m = slots_of(names[k], idx);

		for (size_t st = 0; st <= STATUSES; st++) {
			uint64_t v = 0;

			for (size_t i = 0; i < m; i++)
				v += atomic_load_explicit(
					&file->slot[idx[i]].status[st],
					memory_order_relaxed);
			if (v > 0)
				buf_printf(out,
					   "xmhub_http_requests_total{group="
					   "\"%s\",status=\"%zu\"} %llu\n",
					   names[k],
					   st == STATUSES ? 0 : st + 100,
					   (unsigned long long)v);
		}
	}
	buf_printf(out, "# HELP %s %s\n# TYPE %s histogram\n", request_def.name,
		   request_def.help, request_def.name);
	for (size_t k = 0; k < n; k++) {
		uint64_t b[MAX_BUCKETS + 1] = {0}, sum = 0;
		size_t m = slots_of(names[k], idx);

		for (size_t i = 0; i < m; i++)
			hist_sum(&file->slot[idx[i]].request, b, &sum);
		hist_put(out, &request_def, names[k], b, sum);
	}
}

bool
metrics_render(struct buf *out)
{
	const char *names[SLOTS];
	size_t n;

	if (file == NULL)
		return false;
	n = programs(names);
	render_requests(out, names, n);
	for (size_t c = 0; c < METRIC_COUNTERS; c++) {
		uint64_t v = 0;

		for (size_t i = 0; i < SLOTS; i++)
			v += atomic_load_explicit(&file->slot[i].counter[c],
						  memory_order_relaxed);
		if (counter_defs[c].help != NULL)
			buf_printf(out, "# HELP %s %s\n# TYPE %s counter\n",
				   counter_defs[c].name, counter_defs[c].help,
				   counter_defs[c].name);
		buf_printf(out, "%s%s %llu\n", counter_defs[c].name,
			   counter_defs[c].labels, (unsigned long long)v);
	}
	for (size_t g = 0; g < METRIC_GAUGES; g++) {
		int64_t v = 0;

		/* A dead process's queue is empty now. */
		for (size_t i = 0; i < SLOTS; i++)
			if (!dead(atomic_load(&file->slot[i].pid)))
				v += atomic_load_explicit(
					&file->slot[i].gauge[g],
					memory_order_relaxed);
		buf_printf(out, "# HELP %s %s\n# TYPE %s gauge\n%s %lld\n",
			   gauge_defs[g].name, gauge_defs[g].help,
			   gauge_defs[g].name, gauge_defs[g].name,
			   (long long)v);
	}
	for (size_t h = 0; h < METRIC_HISTS; h++) {
		uint64_t b[MAX_BUCKETS + 1] = {0}, sum = 0;

		for (size_t i = 0; i < SLOTS; i++)
			hist_sum(&file->slot[i].hist[h], b, &sum);
		buf_printf(out, "# HELP %s %s\n# TYPE %s histogram\n",
			   hist_defs[h].name, hist_defs[h].help,
			   hist_defs[h].name);
		hist_put(out, &hist_defs[h], NULL, b, sum);
	}
	return true;
}
