/* SPDX-License-Identifier: MIT */
/*
 * send.c - `xmhub send` (doc/sender.md): CSV samples from a file or
 * standard input, batched per stream, queued in a spool directory
 * (lib/core/spool) before they are sent over HTTP or a WebSocket
 * (lib/core/hclient), removed from it once acknowledged.
 *
 * One thread: input lines are read with a short poll so that queued
 * batches are sent, acknowledgements read and retries made while the
 * input is idle.  Exit status: 0 everything acknowledged, 1 a bad input
 * line or an I/O error (everything before the line is sent first), 2
 * usage, 3 the server refused a batch or the session (4xx).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "device.h"
#include "codec/be.h"
#include "codec/buf.h"
#include "codec/samplecsv.h"
#include "codec/xmbp.h"
#include "core/clock.h"
#include "core/hclient.h"
#include "core/spool.h"
#include "usage.h"

#define BATCH_CAP 200000 /* under the WebSocket's 256 KB message */
#define LINE_MAX_BYTES (1u << 20)
#define TICK_MS 50 /* how often an idle input lets sending run */
#define BACKOFF_MAX_MS 2000

enum { EXIT_INPUT = 1, EXIT_USAGE = 2, EXIT_REFUSED = 3 };

/* One stream's block of the batch being built. */
struct block {
	uint8_t *mem; /* BATCH_CAP bytes, allocated when first used */
	struct xmbp_enc enc;
	uint32_t count;
};

struct sender {
	/* settings */
	const char *session;
	bool ws;
	uint64_t in_flight;
	uint32_t batch_samples;
	int linger_ms;
	/* the streams and the batch being built */
	struct samplecsv_stream defs[XMBP_MAX_STREAMS];
	size_t ndefs;
	struct block blocks[XMBP_MAX_STREAMS];
	size_t built_bytes;
	uint32_t built_samples;
	uint64_t built_at_ms; /* when its first sample came */
	/* sending */
	struct spool spool;
	struct hclient c;
	char data_path[160], ws_path[160];
	uint64_t inflight; /* WebSocket: queued batches sent, not acked */
	uint64_t retry_at_ms;
	int backoff_ms;
	struct buf batch, resp;
	/* figures */
	uint64_t acked, samples_acked, accepted;
	int64_t missed; /* -1 while no HTTP answer said */
	uint64_t start_ms, shown_ms;
	bool tty;
};

/* Encoded size of a sample of value v (timestamp included). */
static size_t
sample_size(const struct sample_value *v)
{
	size_t fixed = xmbp_sample_fixed_size(v->type);

	if (fixed > 0)
		return 8 + fixed;
	return 8 + (v->type == SAMPLE_JSON ? 4 : 2) +
	       xmbp_sample_payload_size(v);
}

/* The progress line, on a terminal only, at most twice a second. */
static void
progress(struct sender *s, bool last)
{
	uint64_t now = (uint64_t)clock_mono_ms();
	double secs;

	if (!s->tty || (!last && now - s->shown_ms < 500))
		return;
	s->shown_ms = now;
	secs = (double)(now - s->start_ms) / 1000.0;
	fprintf(stderr,
		"\rxmhub send: %" PRIu64 " batches acked (%.1f/s), %" PRIu64
		" samples, spool %" PRIu64 "%s   %s",
		s->acked, secs > 0 ? (double)s->acked / secs : 0.0,
		s->samples_acked, spool_depth(&s->spool),
		s->retry_at_ms > now ? ", server unreachable" : "",
		last ? "\n" : "");
}

/* Counts the samples of a batch (for the figures). */
static uint64_t
batch_samples(const struct buf *b)
{
	struct xmbp_batch batch;
	struct xmbp_stream st;
	uint64_t n = 0;

	if (xmbp_decode(b->p, b->len, &batch, NULL) != XMBP_OK)
		return 0;
	for (uint16_t i = 0; i < batch.stream_count; i++) {
		xmbp_stream_at(&batch, i, &st);
		n += st.sample_count;
	}
	return n;
}

/* A failed connection: retry after a growing pause. */
static void
transient(struct sender *s)
{
	hclient_disconnect(&s->c);
	s->inflight = 0;
	s->backoff_ms = s->backoff_ms == 0 ? 100 : s->backoff_ms * 2;
	if (s->backoff_ms > BACKOFF_MAX_MS)
		s->backoff_ms = BACKOFF_MAX_MS;
	s->retry_at_ms = (uint64_t)clock_mono_ms() + (uint64_t)s->backoff_ms;
}

/* Tells why the server refused; the exit status. */
static int
refused(struct sender *s, int status)
{
	uint16_t seq = s->batch.len >= 8 ? be16_get(s->batch.p + 6) : 0;
	struct json_object *j, *d;
	const char *detail = NULL;

	buf_putc(&s->resp, '\0');
	j = s->resp.failed ? NULL : json_tokener_parse((char *)s->resp.p);
	if (j != NULL && json_object_object_get_ex(j, "detail", &d))
		detail = json_object_get_string(d);
	fprintf(stderr, "xmhub send: the server refused batch_seq %u%s%d: %s\n",
		seq, status > 0 ? " with status " : "", status > 0 ? status : 0,
		detail != NULL ? detail : "(no detail)");
	json_object_put(j);
	return EXIT_REFUSED;
}

static void
acked(struct sender *s)
{
	s->acked++;
	s->samples_acked += batch_samples(&s->batch);
	s->backoff_ms = 0;
}

/* Reads the HTTP answer's counters. */
static void
http_counters(struct sender *s)
{
	struct json_object *j, *v;

	buf_putc(&s->resp, '\0');
	if (s->resp.failed ||
	    (j = json_tokener_parse((char *)s->resp.p)) == NULL)
		return;
	if (json_object_object_get_ex(j, "accepted_samples", &v))
		s->accepted = (uint64_t)json_object_get_int64(v);
	if (json_object_object_get_ex(j, "missed_batches", &v))
		s->missed = json_object_get_int64(v);
	json_object_put(j);
}

/* Waits until the retry time when wait is set; false when it is not
 * time yet and the caller must not wait. */
static bool
retry_time(struct sender *s, bool wait)
{
	uint64_t now = (uint64_t)clock_mono_ms();

	if (now >= s->retry_at_ms)
		return true;
	if (!wait)
		return false;
	poll(NULL, 0, (int)(s->retry_at_ms - now));
	return true;
}

/* One step over HTTP: the oldest batch.  0 go on, -1 stop for now. */
static int
http_step(struct sender *s, bool wait, int *rc)
{
	int st;

	if (!retry_time(s, wait))
		return -1;
	s->batch.len = 0;
	s->resp.len = 0;
	if (!spool_get(&s->spool, 0, &s->batch)) {
		fprintf(stderr, "xmhub send: spool: cannot read a batch\n");
		*rc = EXIT_INPUT;
		return -1;
	}
	st = hclient_request(&s->c, "POST", s->data_path,
			     "application/octet-stream", s->batch.p,
			     s->batch.len, &s->resp);
	if (st == 200) {
		if (!spool_ack(&s->spool)) {
			*rc = EXIT_INPUT;
			return -1;
		}
		acked(s);
		http_counters(s);
	} else if (st < 0 || st >= 500 || st == 408 || st == 429) {
		transient(s);
	} else {
		*rc = refused(s, st);
		return -1;
	}
	return 0;
}

/* One step over the WebSocket: connect, fill the window, read an ack. */
static int
ws_step(struct sender *s, bool wait, int *rc)
{
	int st, r;

	if (!s->c.ws) {
		if (!retry_time(s, wait))
			return -1;
		s->resp.len = 0;
		st = hclient_ws_open(&s->c, s->ws_path, &s->resp);
		s->inflight = 0;
		if (st < 0 || st >= 500 || st == 408 || st == 429) {
			transient(s);
			return 0;
		}
		if (st != 101) {
			s->batch.len = 0;
			*rc = refused(s, st);
			return -1;
		}
	}
	while (s->inflight < s->in_flight &&
	       s->inflight < spool_depth(&s->spool)) {
		s->batch.len = 0;
		if (!spool_get(&s->spool, s->inflight, &s->batch)) {
			*rc = EXIT_INPUT;
			return -1;
		}
		if (!hclient_ws_send(&s->c, s->batch.p, s->batch.len)) {
			transient(s);
			return 0;
		}
		s->inflight++;
	}
	s->resp.len = 0;
	r = hclient_ws_recv(&s->c, &s->resp, wait ? s->c.timeout_ms : 0);
	if (r == 0 && !wait)
		return -1;
	if (r <= 0) {
		transient(s);
		return 0;
	}
	s->batch.len = 0;
	if (!spool_get(&s->spool, 0, &s->batch)) {
		*rc = EXIT_INPUT;
		return -1;
	}
	if (s->resp.len != 4) {
		*rc = refused(s, 0);
		return -1;
	}
	if (!spool_ack(&s->spool)) {
		*rc = EXIT_INPUT;
		return -1;
	}
	s->inflight--;
	s->accepted = be32_get(s->resp.p);
	acked(s);
	return 0;
}

/*
 * Sends queued batches: all of them when wait is set (retrying through
 * outages), otherwise what can go without waiting.  0, or an exit
 * status.
 */
static int
drain(struct sender *s, bool wait)
{
	int rc = 0;

	while (spool_depth(&s->spool) > 0 && rc == 0) {
		int step =
			s->ws ? ws_step(s, wait, &rc) : http_step(s, wait, &rc);

		progress(s, false);
		if (step < 0)
			break;
	}
	return rc;
}

/* Queues the batch built so far (consuming input to line_end). */
static int
flush(struct sender *s, uint64_t line_end)
{
	struct xmbp_enc enc;
	size_t len = 0;
	uint16_t nblocks = 0;

	if (s->built_samples == 0)
		return 0;
	s->batch.len = 0;
	s->batch.failed = false;
	if (!buf_reserve(&s->batch, s->built_bytes))
		return EXIT_INPUT;
	xmbp_enc_init(&enc, s->batch.p, s->built_bytes);
	xmbp_enc_begin(&enc, s->spool.next_seq, NULL);
	xmbp_enc_finish(&enc, &len);
	for (size_t k = 0; k < s->ndefs; k++) {
		struct block *b = &s->blocks[k];
		size_t blen = 0;

		if (b->count == 0)
			continue;
		if (xmbp_enc_finish(&b->enc, &blen) != XMBP_ENC_OK) {
			fprintf(stderr, "xmhub send: batch: %s\n",
				xmbp_enc_detail(&b->enc));
			return EXIT_INPUT;
		}
		memcpy(s->batch.p + len, b->mem + XMBP_HEADER_MIN,
		       blen - XMBP_HEADER_MIN);
		len += blen - XMBP_HEADER_MIN;
		nblocks++;
		b->count = 0;
	}
	be16_put(s->batch.p + 8, nblocks);
	s->batch.len = len;
	s->built_bytes = XMBP_HEADER_MIN;
	s->built_samples = 0;
	if (!spool_push(&s->spool, s->batch.p, len, line_end)) {
		fprintf(stderr, "xmhub send: spool: %s\n", strerror(errno));
		return EXIT_INPUT;
	}
	return 0;
}

/* Adds a parsed sample to the batch, queuing the batch first when the
 * sample would not fit.  line is the sample's line number. */
static int
add(struct sender *s, const struct samplecsv_sample *x, uint64_t line)
{
	struct block *b = &s->blocks[x->stream];
	size_t size = sample_size(&x->value) + (b->count == 0 ? 5 : 0);
	int rc;

	if (XMBP_HEADER_MIN + size > BATCH_CAP) {
		fprintf(stderr,
			"xmhub send: line %" PRIu64
			": the value is too large for a batch\n",
			line);
		return EXIT_INPUT;
	}
	if (s->built_bytes + size > BATCH_CAP ||
	    s->built_samples >= s->batch_samples ||
	    b->count == XMBP_MAX_SAMPLES) {
		if ((rc = flush(s, line - 1)) != 0)
			return rc;
		size = sample_size(&x->value) + 5;
	}
	if (b->mem == NULL && (b->mem = malloc(BATCH_CAP)) == NULL)
		return EXIT_INPUT;
	if (b->count == 0) {
		xmbp_enc_init(&b->enc, b->mem, BATCH_CAP);
		xmbp_enc_begin(&b->enc, 0, NULL);
		xmbp_enc_stream(&b->enc, s->defs[x->stream].index,
				s->defs[x->stream].type);
	}
	if (s->built_samples == 0)
		s->built_at_ms = (uint64_t)clock_mono_ms();
	xmbp_enc_value(&b->enc, x->ts, &x->value);
	b->count++;
	s->built_bytes += size;
	s->built_samples++;
	return 0;
}

/* Line reader over a descriptor. */
struct input {
	int fd;
	struct buf b;
	size_t pos;
	bool eof;
};

/*
 * The next line in *line and *len: 1; 0 at the end; -2 when none came within
 * timeout_ms (-1: wait); -1 on a read error or a line over the limit.
 */
static int
read_line(struct input *in, int timeout_ms, const char **line, size_t *len)
{
	for (;;) {
		uint8_t *nl = in->b.len > in->pos
				      ? memchr(in->b.p + in->pos, '\n',
					       in->b.len - in->pos)
				      : NULL;
		struct pollfd pfd = {in->fd, POLLIN, 0};
		ssize_t k;

		if (nl != NULL || (in->eof && in->pos < in->b.len)) {
			size_t end =
				nl != NULL ? (size_t)(nl - in->b.p) : in->b.len;

			*line = (const char *)in->b.p + in->pos;
			*len = end - in->pos;
			in->pos = nl != NULL ? end + 1 : end;
			return 1;
		}
		if (in->eof)
			return 0;
		if (in->b.len - in->pos > LINE_MAX_BYTES)
			return -1;
		if (in->pos > 0) {
			memmove(in->b.p, in->b.p + in->pos,
				in->b.len - in->pos);
			in->b.len -= in->pos;
			in->pos = 0;
		}
		if (timeout_ms >= 0 && poll(&pfd, 1, timeout_ms) == 0)
			return -2;
		if (!buf_reserve(&in->b, 65536))
			return -1;
		k = read(in->fd, in->b.p + in->b.len, 65536);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			in->eof = true;
		in->b.len += (size_t)k;
	}
}

/* Streams from a JSON file: a session object or its streams array. */
static bool
streams_from_json(struct sender *s, const char *path, char **names)
{
	struct json_object *root = json_object_from_file(path), *arr = root;
	bool ok = false;

	if (root != NULL && json_object_is_type(root, json_type_object))
		json_object_object_get_ex(root, "streams", &arr);
	if (arr == NULL || !json_object_is_type(arr, json_type_array) ||
	    json_object_array_length(arr) == 0 ||
	    json_object_array_length(arr) > XMBP_MAX_STREAMS)
		goto out;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		struct json_object *o = json_object_array_get_idx(arr, i), *v;
		int64_t idx;

		if (!json_object_object_get_ex(o, "stream_index", &v) ||
		    (idx = json_object_get_int64(v)) < 0 || idx > UINT16_MAX)
			goto out;
		s->defs[i].index = (uint16_t)idx;
		if (!json_object_object_get_ex(o, "value_type", &v) ||
		    !xmbp_sample_type_from_name(json_object_get_string(v),
						&s->defs[i].type))
			goto out;
		s->defs[i].name = NULL;
		if (json_object_object_get_ex(o, "name", &v) &&
		    json_object_is_type(v, json_type_string))
			s->defs[i].name = names[i] =
				strdup(json_object_get_string(v));
		s->ndefs = i + 1;
	}
	ok = true;
out:
	json_object_put(root);
	return ok;
}

/* The default spool: $XDG_STATE_HOME/xmhub/spool/SESSION. */
static bool
default_spool(char *out, size_t n, const char *session)
{
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	int k;

	if (state != NULL && state[0] == '/')
		k = snprintf(out, n, "%s/xmhub/spool/%s", state, session);
	else if (home != NULL && home[0] == '/')
		k = snprintf(out, n, "%s/.local/state/xmhub/spool/%s", home,
			     session);
	else
		return false;
	return k > 0 && (size_t)k < n;
}

static const struct option send_longopts[] = {
	{"url", required_argument, NULL, 'u'},
	{"key", required_argument, NULL, 'k'},
	{"session", required_argument, NULL, 's'},
	{"streams", required_argument, NULL, 'S'},
	{"ws", no_argument, NULL, 'w'},
	{"in-flight", required_argument, NULL, 'n'},
	{"spool", required_argument, NULL, 'p'},
	{"batch-samples", required_argument, NULL, 'b'},
	{"linger-ms", required_argument, NULL, 'l'},
	{"timeout", required_argument, NULL, 't'},
	{NULL, 0, NULL, 0}};

/* What the command line names besides the sender's settings. */
struct send_opts {
	const char *url, *key, *spool, *streams, *path;
	long long timeout, in_flight;
};

/* One option of the command line into s or o; false on a usage error
 * (said). */
static bool
send_option(struct sender *s, struct send_opts *o, int opt, char **argv)
{
	long long v;

	switch (opt) {
	case 'u':
		o->url = optarg;
		return true;
	case 'k':
		o->key = optarg;
		return true;
	case 's':
		s->session = optarg;
		return true;
	case 'S':
		o->streams = optarg;
		return true;
	case 'w':
		s->ws = true;
		return true;
	case 'p':
		o->spool = optarg;
		return true;
	case 'n':
		return usage_whole("in-flight", optarg, 1, 64, &o->in_flight);
	case 'b':
		if (!usage_whole("batch-samples", optarg, 1, XMBP_MAX_SAMPLES,
				 &v))
			return false;
		s->batch_samples = (uint32_t)v;
		return true;
	case 'l':
		if (!usage_whole("linger-ms", optarg, 0, 60000, &v))
			return false;
		s->linger_ms = (int)v;
		return true;
	case 't':
		return usage_whole("timeout", optarg, 1, 3600, &o->timeout);
	default:
		usage_getopt(opt, argv, send_longopts);
		return false;
	}
}

/* The command line into s and o, checked; false on a usage error
 * (said). */
static bool
send_options(struct sender *s, struct send_opts *o, int argc, char *argv[])
{
	int opt;

	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc + 1, argv - 1, ":", send_longopts,
				  NULL)) != -1)
		if (!send_option(s, o, opt, argv - 1))
			return false;
	if (optind < argc + 1)
		o->path = argv[optind++ - 1];
	if (optind < argc + 1) {
		usage_error("stray argument \"%s\" (one FILE at most)",
			    argv[optind - 1]);
		return false;
	}
	if (o->url == NULL || s->session == NULL || o->streams == NULL) {
		usage_required(o->url == NULL	    ? "url"
			       : s->session == NULL ? "session"
						    : "streams");
		return false;
	}
	if (o->key == NULL) {
		usage_error("--key API_KEY or XMHUB_API_KEY is required");
		return false;
	}
	if (strlen(s->session) > 64 ||
	    strspn(s->session, "0123456789abcdefABCDEF-") !=
		    strlen(s->session)) {
		usage_error("--session: expected a session id (hex digits and "
			    "dashes, 64 at most), got \"%s\"",
			    s->session);
		return false;
	}
	s->in_flight = (uint64_t)o->in_flight;
	return true;
}

/*
 * What the sending needs: the streams (parsed in *spec, a copy of
 * --streams, or named in names from a session's JSON), the client, the
 * spool and the input.  0, or the exit status of a failure (said).
 */
static int
send_open(struct sender *s, const struct send_opts *o, char **spec,
	  char **names, struct input *in)
{
	const char *spool = o->spool;
	char err[512], spool_buf[4096];

	if (o->streams[0] == '@') {
		if (!streams_from_json(s, o->streams + 1, names)) {
			fprintf(stderr,
				"xmhub send: %s: not a session's JSON "
				"with streams\n",
				o->streams + 1);
			return EXIT_INPUT;
		}
	} else if ((*spec = strdup(o->streams)) == NULL) {
		return EXIT_INPUT;
	} else if (!samplecsv_streams(*spec, s->defs, XMBP_MAX_STREAMS,
				      &s->ndefs, err, sizeof(err))) {
		return usage_error("--streams: %s (expected "
				   "INDEX[:NAME]:TYPE,... or @SESSION.json)",
				   err);
	}
	if (!hclient_init(&s->c, o->url, o->key, (int)o->timeout * 1000, err,
			  sizeof(err)))
		return usage_error("--url: %s", err);
	snprintf(s->data_path, sizeof(s->data_path),
		 "/api/v1/ingest/sessions/%s/data", s->session);
	snprintf(s->ws_path, sizeof(s->ws_path),
		 "/api/v1/ingest/ws?session_id=%s", s->session);
	if (spool == NULL) {
		if (!default_spool(spool_buf, sizeof(spool_buf), s->session)) {
			fprintf(stderr, "xmhub send: no HOME: give --spool\n");
			return EXIT_INPUT;
		}
		spool = spool_buf;
	}
	if (!spool_open(&s->spool, spool, s->session, err, sizeof(err))) {
		fprintf(stderr, "xmhub send: spool: %s\n", err);
		return EXIT_INPUT;
	}
	in->fd = o->path == NULL || strcmp(o->path, "-") == 0
			 ? STDIN_FILENO
			 : open(o->path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		fprintf(stderr, "xmhub send: %s: %s\n", o->path,
			strerror(errno));
		return EXIT_INPUT;
	}
	return 0;
}

/*
 * Reads the input's lines into batches, sending what is queued while the
 * input is idle.  0 at the input's end, *done its lines, or at a bad line
 * (said), *bad set and *done the lines before it; else the exit status
 * of a failed send.
 */
static int
send_lines(struct sender *s, struct input *in, struct buf *scratch,
	   uint64_t *done, bool *bad)
{
	/* Lines already in batches of the spool (a restart) are skipped. */
	uint64_t line_no = 0, skip = s->spool.lines;
	char err[512];
	int rc;

	s->built_bytes = XMBP_HEADER_MIN;
	s->tty = isatty(STDERR_FILENO);
	s->start_ms = (uint64_t)clock_mono_ms();
	*bad = false;
	for (;;) {
		const char *line;
		size_t len;
		struct samplecsv_sample x;
		int tmo = -1, r;

		if (s->built_samples > 0 || spool_depth(&s->spool) > 0)
			tmo = TICK_MS;
		r = read_line(in, tmo, &line, &len);
		if (r == -2) {
			if (s->built_samples > 0 &&
			    (uint64_t)clock_mono_ms() - s->built_at_ms >=
				    (uint64_t)s->linger_ms &&
			    (rc = flush(s, line_no)) != 0)
				return rc;
			if ((rc = drain(s, false)) != 0)
				return rc;
			continue;
		}
		if (r < 0) {
			fprintf(stderr, "xmhub send: line %" PRIu64 ": %s\n",
				line_no + 1,
				errno != 0 ? strerror(errno) : "line too long");
			*bad = true;
			*done = line_no;
			return 0;
		}
		if (r == 0) {
			*done = line_no;
			return 0;
		}
		if (++line_no <= skip)
			continue;
		r = samplecsv_parse(line, len, line_no == 1, s->defs, s->ndefs,
				    scratch, &x, err, sizeof(err));
		if (r == SAMPLECSV_SKIP)
			continue;
		if (r == SAMPLECSV_ERROR)
			fprintf(stderr, "xmhub send: line %" PRIu64 ": %s\n",
				line_no, err);
		if (r == SAMPLECSV_ERROR || add(s, &x, line_no) != 0) {
			*bad = true;
			*done = line_no - 1;
			return 0;
		}
		if ((s->built_samples >= s->batch_samples &&
		     (rc = flush(s, line_no)) != 0) ||
		    (rc = drain(s, false)) != 0)
			return rc;
	}
}

/*
 * Sends the first done lines' samples still unsent (what came before the
 * end or a bad line is sent in any case) and waits for every ack; then
 * the last status line and, when all went well, the figures on standard
 * output.  The exit status.
 */
static int
send_finish(struct sender *s, uint64_t done, bool bad)
{
	int rc;

	if ((rc = flush(s, done)) == 0 && (rc = drain(s, true)) == 0 && bad)
		rc = EXIT_INPUT;
	if (rc == 0 && !spool_done(&s->spool)) {
		fprintf(stderr, "xmhub send: spool: %s\n", strerror(errno));
		rc = EXIT_INPUT;
	}
	progress(s, true);
	if (rc != 0)
		return rc;
	printf("{\"batches\":%" PRIu64 ",\"samples\":%" PRIu64
	       ",\"accepted_samples\":%" PRIu64 ",\"missed_batches\":",
	       s->acked, s->samples_acked, s->accepted);
	if (s->missed < 0)
		printf("null}\n");
	else
		printf("%" PRId64 "}\n", s->missed);
	return 0;
}

/* The options; the streams, client, spool and input; the lines; the
 * last sends and the figures. */
int
send_main(int argc, char *argv[])
{
	struct sender *s = calloc(1, sizeof(*s));
	struct send_opts o = {
		.key = getenv("XMHUB_API_KEY"), .timeout = 10, .in_flight = 8};
	char *spec = NULL, *names[XMBP_MAX_STREAMS] = {0};
	struct input in = {.fd = -1};
	struct buf scratch;
	uint64_t done = 0;
	bool bad;
	int rc = EXIT_USAGE;

	buf_init(&scratch, 4 * LINE_MAX_BYTES);
	buf_init(&in.b, 0);
	if (s == NULL)
		return EXIT_INPUT;
	buf_init(&s->batch, 0);
	buf_init(&s->resp, 1u << 20);
	s->batch_samples = 1000;
	s->linger_ms = 200;
	s->missed = -1;
	s->c.fd = -1;
	s->spool.dirfd = -1;
	if (!send_options(s, &o, argc, argv) ||
	    (rc = send_open(s, &o, &spec, names, &in)) != 0 ||
	    (rc = send_lines(s, &in, &scratch, &done, &bad)) != 0)
		goto out;
	rc = send_finish(s, done, bad);
out:
	if (in.fd > 0)
		close(in.fd);
	spool_close(&s->spool);
	hclient_free(&s->c);
	for (size_t k = 0; k < XMBP_MAX_STREAMS; k++) {
		free(s->blocks[k].mem);
		free(names[k]);
	}
	buf_free(&s->batch);
	buf_free(&s->resp);
	buf_free(&scratch);
	buf_free(&in.b);
	free(spec);
	free(s);
	return rc;
}
