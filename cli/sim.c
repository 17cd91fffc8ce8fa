/* SPDX-License-Identifier: MIT */
/*
 * sim.c - `xmhub sim` (doc/sender.md "xmhub sim"): a fleet of simulated
 * devices, one thread and one connection each, every device a session of
 * M generated streams (sine, noise, random walk, counter, PCM audio, in
 * turn) sent over HTTP or a WebSocket at a rate, for a duration or a
 * sample count; a status line on a terminal and a report at the end.
 * Sessions are created (before the clock starts) and closed (after it
 * stops) through the API with the key, like a device does.
 */
#include "config.h"

#include <getopt.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec/be.h"
#include "codec/buf.h"
#include "codec/xmbp.h"
#include "core/clock.h"
#include "core/hclient.h"
#include "device.h"
#include "usage.h"

#define WS_MAX 262144	    /* the WebSocket's largest message */
#define HTTP_MAX (1u << 20) /* the data endpoint's largest body */
#define AUDIO_HZ 8000	    /* PCM: 16-bit little-endian mono */
#define AUDIO_CODEC_PCM 0x01
#define KINDS 5
#define PI 3.14159265358979323846

static const char *const kind_name[KINDS] = {"sine", "noise", "walk", "counter",
					     "audio"};
static const enum sample_type kind_type[KINDS] = {
	SAMPLE_F32, SAMPLE_F32, SAMPLE_F64, SAMPLE_I64, SAMPLE_BYTES};

struct sim {
	const char *url, *key;
	int devices, streams, timeout_ms;
	int in_flight;	    /* WebSocket batches sent before their acks */
	double rate;	    /* per stream, Hz; 0: as fast as acks come */
	double duration;    /* seconds, when samples is 0 */
	uint64_t samples;   /* per stream and device; 0: duration */
	uint32_t per_batch; /* samples per stream per batch */
	uint32_t device_uid;
	size_t frame; /* PCM samples per audio sample */
	bool ws, json;
	uint64_t epoch_us; /* timestamp of the first sample */
	_Atomic uint64_t batches, values, errors, reconnects;
	_Atomic int running; /* devices still sending */
	struct dev *dev;
};

/* A batch in flight: its length, samples per stream, send time. */
struct slot {
	size_t len;
	uint32_t n;
	double t0;
};

struct dev {
	struct sim *sim;
	int i;
	char session[64];
	struct hclient c;
	uint8_t *mem; /* in_flight buffers of cap bytes */
	size_t cap;
	struct slot *slot; /* in_flight of them */
	double *lat;	   /* ack latencies, ms */
	size_t nlat, lcap;
	uint64_t batches, values, errors, reconnects, rng, counter;
	double walk;
	int64_t missed, stored; /* from the close answer; -1 unknown */
};

/* xorshift64*: uniform in [0, 1). */
static double
uniform(uint64_t *s)
{
	*s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
	return (double)((*s * 0x2545F4914F6CDD1DULL) >> 11) /
	       9007199254740992.0;
}

/* Bytes of one sample of stream kind k (timestamp included). */
static size_t
sample_bytes(const struct sim *sim, int k)
{
	switch (k) {
	case 2:
	case 3:
		return 16;
	case 4:
		return 8 + 2 + 1 + 2 * sim->frame;
	default:
		return 12;
	}
}

/* Encodes batch number b (n samples per stream) into mem (d->cap
 * bytes). */
static bool
encode(struct dev *d, uint8_t *mem, uint64_t b, uint32_t n, size_t *len)
{
	struct sim *sim = d->sim;
	struct xmbp_enc enc;
	uint8_t audio[1 + 2 * 4000];
	double period = sim->rate > 0 ? 1e6 / sim->rate : 1000.0;
	uint64_t j0 = b * sim->per_batch;

	xmbp_enc_init(&enc, mem, d->cap);
	xmbp_enc_begin(&enc, (uint16_t)b, NULL);
	for (int m = 0; m < sim->streams; m++) {
		int k = m % KINDS;

		xmbp_enc_stream(&enc, (uint16_t)m, kind_type[k]);
		for (uint32_t j = 0; j < n; j++) {
			uint64_t idx = j0 + j;
			uint64_t ts = sim->epoch_us +
				      (uint64_t)((double)idx * period);
			double t = (double)idx * period / 1e6;

			switch (k) {
			case 0:
				xmbp_enc_f32(
					&enc, ts,
					(float)sin(2 * PI * (0.5 + m) * t));
				break;
			case 1:
				xmbp_enc_f32(&enc, ts,
					     (float)(2 * uniform(&d->rng) - 1));
				break;
			case 2:
				d->walk += uniform(&d->rng) - 0.5;
				xmbp_enc_f64(&enc, ts, d->walk);
				break;
			case 3:
				xmbp_enc_i64(&enc, ts, (int64_t)d->counter++);
				break;
			default:
				audio[0] = AUDIO_CODEC_PCM;
				for (size_t s = 0; s < sim->frame; s++) {
					double at =
						(double)(idx * sim->frame + s) /
						AUDIO_HZ;
					int16_t v =
						(int16_t)(8000 * sin(2 * PI *
								     440 * at));

					audio[1 + 2 * s] = (uint8_t)v;
					audio[2 + 2 * s] =
						(uint8_t)((uint16_t)v >> 8);
				}
				xmbp_enc_bytes(&enc, ts, audio,
					       1 + 2 * sim->frame);
			}
		}
	}
	return xmbp_enc_finish(&enc, len) == XMBP_ENC_OK;
}

/* Opens d's WebSocket unless it is open; NULL, or why not with *lost set
 * when the connection failed (rather than the server refusing). */
static const char *
ws_connect(struct dev *d, struct buf *resp, bool *lost)
{
	char path[160];
	int st;

	*lost = false;
	if (d->c.ws)
		return NULL;
	snprintf(path, sizeof(path), "/api/v1/ingest/ws?session_id=%s",
		 d->session);
	if ((st = hclient_ws_open(&d->c, path, resp)) != 101) {
		*lost = st < 0;
		return st < 0 ? "no connection" : "upgrade refused";
	}
	resp->len = 0;
	return NULL;
}

/* Sends one batch and waits for its acknowledgement; NULL, or why not
 * with *lost set when the connection failed (rather than the server
 * refusing). */
static const char *
send_batch(struct dev *d, size_t len, struct buf *resp, bool *lost)
{
	char path[160];
	const char *why;
	int st, r;

	resp->len = 0;
	*lost = false;
	if (!d->sim->ws) {
		snprintf(path, sizeof(path), "/api/v1/ingest/sessions/%s/data",
			 d->session);
		st = hclient_request(&d->c, "POST", path,
				     "application/octet-stream", d->mem, len,
				     resp);
		*lost = st < 0;
		return st == 200 ? NULL : st < 0 ? "no answer" : "refused";
	}
	if ((why = ws_connect(d, resp, lost)) != NULL)
		return why;
	*lost = true;
	if (!hclient_ws_send(&d->c, d->mem, len))
		return "connection lost while sending";
	r = hclient_ws_recv(&d->c, resp, d->sim->timeout_ms);
	if (r == 1 && resp->len == 4)
		return NULL;
	*lost = r <= 0;
	hclient_disconnect(&d->c);
	return r == 0  ? "no acknowledgement in time"
	       : r < 0 ? "connection lost before the acknowledgement"
		       : "an error message instead of an acknowledgement";
}

/* Counts an error; the first few are told on standard error. */
static void
error(struct dev *d, uint64_t b, const char *why, const struct buf *resp)
{
	d->errors++;
	if (atomic_fetch_add(&d->sim->errors, 1) < 10)
		fprintf(stderr,
			"xmhub sim: device %d, batch %" PRIu64 ": %s%s%.*s\n",
			d->i, b, why, resp->len > 0 ? ": " : "",
			(int)(resp->len > 200 ? 200 : resp->len),
			(const char *)resp->p);
}

/* Batch b's samples per stream. */
static uint32_t
batch_samples(const struct sim *sim, uint64_t b)
{
	uint32_t n = sim->per_batch;

	if (sim->samples > 0 && (b + 1) * n > sim->samples)
		n = (uint32_t)(sim->samples - b * n);
	return n;
}

/* Waits until batch b of a run started at start is due; false when the
 * run is over before it (nb batches, or the duration). */
static bool
wait_due(const struct sim *sim, double start, uint64_t b, uint64_t nb)
{
	double due = sim->rate > 0
			     ? start + (double)(b * sim->per_batch) / sim->rate
			     : 0,
	       t0;

	if (b >= nb ||
	    (sim->samples == 0 &&
	     (due > 0 ? due : clock_mono_s()) - start >= sim->duration))
		return false;
	t0 = clock_mono_s();
	if (due > t0)
		poll(NULL, 0, (int)((due - t0) * 1000));
	return true;
}

/* Counts an acknowledged batch of n samples per stream sent at t0; false
 * when out of memory. */
static bool
count_ack(struct dev *d, uint32_t n, double t0)
{
	struct sim *sim = d->sim;

	if (d->nlat == d->lcap) {
		size_t cap = d->lcap > 0 ? 2 * d->lcap : 1024;
		double *p = realloc(d->lat, cap * sizeof(*p));

		if (p == NULL)
			return false;
		d->lat = p;
		d->lcap = cap;
	}
	d->lat[d->nlat++] = (clock_mono_s() - t0) * 1000;
	d->batches++;
	d->values += (uint64_t)n * (uint64_t)sim->streams;
	atomic_fetch_add(&sim->batches, 1);
	atomic_fetch_add(&sim->values, (uint64_t)n * (uint64_t)sim->streams);
	return true;
}

/* One batch at a time: sent, acknowledged, the next. */
static void
run_one(struct dev *d, struct buf *resp, double start, uint64_t nb)
{
	struct sim *sim = d->sim;

	for (uint64_t b = 0; wait_due(sim, start, b, nb); b++) {
		uint32_t n = batch_samples(sim, b);
		size_t len = 0;
		double t0 = clock_mono_s();
		const char *why;
		bool lost;

		resp->len = 0;
		if (!encode(d, d->mem, b, n, &len)) {
			error(d, b, "the batch does not encode", resp);
			break;
		}
		why = send_batch(d, len, resp, &lost);
		if (why != NULL && lost) {
			/* A lost connection: once more on a new one, as a
			 * device would (a batch stored already is acked
			 * again, not stored twice). */
			d->reconnects++;
			atomic_fetch_add(&sim->reconnects, 1);
			why = send_batch(d, len, resp, &lost);
		}
		if (why != NULL) {
			error(d, b, why, resp);
			continue;
		}
		if (!count_ack(d, n, t0))
			break;
	}
}

/* (Re)sends the batches [from, to) of the window over d's WebSocket,
 * connecting first when needed; NULL, or why not. */
static const char *
send_window(struct dev *d, struct buf *resp, uint64_t from, uint64_t to)
{
	int w = d->sim->in_flight;
	const char *why;
	bool lost;

	if ((why = ws_connect(d, resp, &lost)) != NULL)
		return why;
	for (uint64_t b = from; b < to; b++)
		if (!hclient_ws_send(&d->c, d->mem + (b % w) * d->cap,
				     d->slot[b % w].len))
			return "connection lost while sending";
	return NULL;
}

/* WebSocket, --in-flight N batches sent before their acks (which come in
 * order).  A failure sends the unacknowledged ones once more on a new
 * connection (the server acks a stored one again, not storing it twice);
 * a second failure before the oldest is acked counts them as errors. */
static void
run_window(struct dev *d, struct buf *resp, double start, uint64_t nb)
{
	struct sim *sim = d->sim;
	uint64_t head = 0, tail = 0, retried = UINT64_MAX;
	int w = sim->in_flight;
	bool more = true, broken = false;
	const char *why = NULL;

	for (;;) {
		while (more && !broken && head - tail < (uint64_t)w) {
			struct slot *s = &d->slot[head % w];

			if (!(more = wait_due(sim, start, head, nb)))
				break;
			s->n = batch_samples(sim, head);
			if (!encode(d, d->mem + (head % w) * d->cap, head, s->n,
				    &s->len)) {
				error(d, head, "the batch does not encode",
				      resp);
				more = false;
				break;
			}
			s->t0 = clock_mono_s();
			head++;
			broken = (why = send_window(d, resp, head - 1, head)) !=
				 NULL;
		}
		if (tail == head)
			break;
		if (!broken) {
			int r;

			resp->len = 0;
			r = hclient_ws_recv(&d->c, resp, sim->timeout_ms);
			if (r == 1 && resp->len == 4) {
				if (!count_ack(d, d->slot[tail % w].n,
					       d->slot[tail % w].t0))
					break;
				tail++;
				continue;
			}
			why = r == 0  ? "no acknowledgement in time"
			      : r < 0 ? "connection lost before the "
					"acknowledgement"
				      : "an error message instead of an "
					"acknowledgement";
		}
		hclient_disconnect(&d->c);
		broken = false;
		if (retried != tail) {
			retried = tail;
			d->reconnects++;
			atomic_fetch_add(&sim->reconnects, 1);
			broken = (why = send_window(d, resp, tail, head)) !=
				 NULL;
			if (!broken)
				continue;
			hclient_disconnect(&d->c);
			broken = false;
		}
		for (; tail < head; tail++)
			error(d, tail, why, resp);
	}
}

static void *
run_device(void *arg)
{
	struct dev *d = arg;
	struct sim *sim = d->sim;
	struct buf resp;
	uint64_t nb = sim->samples > 0 ? (sim->samples + sim->per_batch - 1) /
						 sim->per_batch
				       : UINT64_MAX;

	buf_init(&resp, 1u << 20);
	if (sim->ws && sim->in_flight > 1)
		run_window(d, &resp, clock_mono_s(), nb);
	else
		run_one(d, &resp, clock_mono_s(), nb);
	buf_free(&resp);
	atomic_fetch_sub(&sim->running, 1);
	return NULL;
}

/* POSTs json to path and returns the parsed answer when its status is
 * want; NULL after a message otherwise. */
static struct json_object *
api(struct hclient *c, const char *path, const char *json, int want)
{
	struct buf resp;
	struct json_object *j = NULL;
	int st;

	buf_init(&resp, 1u << 20);
	st = hclient_request(c, "POST", path, "application/json", json,
			     json != NULL ? strlen(json) : 0, &resp);
	buf_putc(&resp, '\0');
	if (!resp.failed)
		j = json_tokener_parse((char *)resp.p);
	if (st != want) {
		struct json_object *dt;

		fprintf(stderr, "xmhub sim: %s: %s%d %s\n", path,
			st < 0 ? "no answer" : "status ", st < 0 ? 0 : st,
			j != NULL && json_object_object_get_ex(j, "detail", &dt)
				? json_object_get_string(dt)
				: "");
		json_object_put(j);
		j = NULL;
	}
	buf_free(&resp);
	return j;
}

/* Creates device d's session. */
static bool
create_session(struct dev *d)
{
	struct sim *sim = d->sim;
	struct json_object *req = json_object_new_object(), *arr, *ans, *id;
	bool ok = false;

	json_object_object_add(
		req, "device_uid",
		json_object_new_int64((int64_t)sim->device_uid + d->i));
	json_object_object_add(req, "name",
			       json_object_new_string("xmhub sim"));
	arr = json_object_new_array();
	for (int m = 0; m < sim->streams; m++) {
		struct json_object *s = json_object_new_object();
		char name[32];

		snprintf(name, sizeof(name), "%s%d", kind_name[m % KINDS], m);
		json_object_object_add(s, "stream_index",
				       json_object_new_int(m));
		json_object_object_add(s, "name", json_object_new_string(name));
		json_object_object_add(
			s, "value_type",
			json_object_new_string(
				xmbp_sample_type_name(kind_type[m % KINDS])));
		if (sim->rate > 0)
			json_object_object_add(
				s, "sample_rate_hz",
				json_object_new_double(sim->rate));
		/* Declared, so that it reads back as a WAV and a
		 * spectrogram (doc/xmbp-audio.md). */
		if (kind_type[m % KINDS] == SAMPLE_BYTES) {
			struct json_object *a = json_object_new_object();

			json_object_object_add(
				a, "codec",
				json_object_new_string("pcm_s16le"));
			json_object_object_add(a, "sample_rate_hz",
					       json_object_new_int(AUDIO_HZ));
			json_object_object_add(a, "channels",
					       json_object_new_int(1));
			json_object_object_add(s, "audio", a);
		}
		json_object_array_add(arr, s);
	}
	json_object_object_add(req, "streams", arr);
	ans = api(&d->c, "/api/v1/ingest/sessions",
		  json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN),
		  201);
	if (ans != NULL && json_object_object_get_ex(ans, "id", &id) &&
	    json_object_get_string_len(id) < (int)sizeof(d->session)) {
		snprintf(d->session, sizeof(d->session), "%s",
			 json_object_get_string(id));
		ok = true;
	}
	json_object_put(ans);
	json_object_put(req);
	return ok;
}

/* Closes device d's session and reads its final counters. */
static void
close_session(struct dev *d)
{
	char path[160];
	struct json_object *ans, *v;

	snprintf(path, sizeof(path), "/api/v1/ingest/sessions/%s/close",
		 d->session);
	hclient_disconnect(&d->c);
	ans = api(&d->c, path, NULL, 200);
	if (ans == NULL) {
		d->errors++;
		atomic_fetch_add(&d->sim->errors, 1);
		return;
	}
	if (json_object_object_get_ex(ans, "missed_batches", &v))
		d->missed = json_object_get_int64(v);
	if (json_object_object_get_ex(ans, "total_samples", &v))
		d->stored = json_object_get_int64(v);
	json_object_put(ans);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The report, as text or JSON. */
static void
report(struct sim *sim, double secs)
{
	size_t n = 0, k = 0;
	double *all, p50 = 0, p99 = 0;
	int64_t missed = 0;
	uint64_t batches = atomic_load(&sim->batches),
		 values = atomic_load(&sim->values),
		 errors = atomic_load(&sim->errors);

	for (int i = 0; i < sim->devices; i++)
		n += sim->dev[i].nlat;
	all = malloc((n > 0 ? n : 1) * sizeof(*all));
	for (int i = 0; i < sim->devices && all != NULL; i++) {
		/* lat is NULL while a device has no acknowledgement. */
		if (sim->dev[i].nlat > 0)
			memcpy(all + k, sim->dev[i].lat,
			       sim->dev[i].nlat * sizeof(*all));
		k += sim->dev[i].nlat;
		if (sim->dev[i].missed > 0)
			missed += sim->dev[i].missed;
	}
	if (all != NULL && n > 0) {
		qsort(all, n, sizeof(*all), cmp_double);
		p50 = all[(n - 1) / 2];
		p99 = all[(size_t)((double)(n - 1) * 0.99)];
	}
	free(all);
	if (!sim->json) {
		printf("xmhub sim: %d devices x %d streams over %s, %.2f s\n"
		       "  batches   %" PRIu64 " (%.1f/s)\n"
		       "  values    %" PRIu64 " (%.1f/s)\n"
		       "  ack       p50 %.2f ms, p99 %.2f ms\n"
		       "  errors    %" PRIu64 " (%" PRIu64 " reconnections)\n"
		       "  missed    %" PRId64 " batches\n",
		       sim->devices, sim->streams,
		       sim->ws ? "WebSocket" : "HTTP", secs, batches,
		       secs > 0 ? (double)batches / secs : 0, values,
		       secs > 0 ? (double)values / secs : 0, p50, p99, errors,
		       atomic_load(&sim->reconnects), missed);
		return;
	}
	printf("{\"devices\":%d,\"streams\":%d,\"transport\":\"%s\","
	       "\"rate_hz\":%g,\"seconds\":%.3f,\"batches\":%" PRIu64
	       ",\"values\":%" PRIu64 ",\"batches_per_s\":%.1f,"
	       "\"values_per_s\":%.1f,\"ack_p50_ms\":%.3f,\"ack_p99_ms\":%.3f,"
	       "\"errors\":%" PRIu64 ",\"reconnects\":%" PRIu64
	       ",\"missed_batches\":%" PRId64 ",\"sessions\":[",
	       sim->devices, sim->streams, sim->ws ? "ws" : "http", sim->rate,
	       secs, batches, values, secs > 0 ? (double)batches / secs : 0,
	       secs > 0 ? (double)values / secs : 0, p50, p99, errors,
	       atomic_load(&sim->reconnects), missed);
	for (int i = 0; i < sim->devices; i++) {
		struct dev *d = &sim->dev[i];

		printf("%s{\"id\":\"%s\",\"device_uid\":%" PRIu32
		       ",\"batches\":%" PRIu64 ",\"values\":%" PRIu64
		       ",\"stored_samples\":%" PRId64
		       ",\"missed_batches\":%" PRId64 "}",
		       i > 0 ? "," : "", d->session,
		       sim->device_uid + (uint32_t)i, d->batches, d->values,
		       d->stored, d->missed);
	}
	printf("]}\n");
}

static const struct option sim_longopts[] = {
	{"url", required_argument, NULL, 'u'},
	{"key", required_argument, NULL, 'k'},
	{"devices", required_argument, NULL, 'd'},
	{"streams", required_argument, NULL, 'm'},
	{"rate", required_argument, NULL, 'r'},
	{"duration", required_argument, NULL, 'D'},
	{"samples", required_argument, NULL, 'n'},
	{"batch", required_argument, NULL, 'b'},
	{"device-uid", required_argument, NULL, 'U'},
	{"timeout", required_argument, NULL, 't'},
	{"ws", no_argument, NULL, 'w'},
	{"in-flight", required_argument, NULL, 'f'},
	{"json", no_argument, NULL, 'j'},
	{NULL, 0, NULL, 0}};

/* One option of the command line into sim (*dur: --duration given,
 * *batch: --batch's value); false on a usage error (said). */
static bool
sim_option(struct sim *sim, int opt, char **argv, bool *dur, long long *batch)
{
	long long v;

	switch (opt) {
	case 'u':
		sim->url = optarg;
		return true;
	case 'k':
		sim->key = optarg;
		return true;
	case 'w':
		sim->ws = true;
		return true;
	case 'j':
		sim->json = true;
		return true;
	case 'd':
		if (!usage_whole("devices", optarg, 1, 1000, &v))
			return false;
		sim->devices = (int)v;
		return true;
	case 'm':
		if (!usage_whole("streams", optarg, 1, XMBP_MAX_STREAMS, &v))
			return false;
		sim->streams = (int)v;
		return true;
	case 'r':
		return usage_number("rate", optarg, 0, 1e6, &sim->rate);
	case 'D':
		*dur = true;
		return usage_number("duration", optarg, 0.001, 86400 * 365,
				    &sim->duration);
	case 'n':
		if (!usage_whole("samples", optarg, 1, 1000000000000000, &v))
			return false;
		sim->samples = (uint64_t)v;
		return true;
	case 'b':
		return usage_whole("batch", optarg, 1, XMBP_MAX_SAMPLES, batch);
	case 'U':
		if (!usage_whole("device-uid", optarg, 0, UINT32_MAX, &v))
			return false;
		sim->device_uid = (uint32_t)v;
		return true;
	case 't':
		if (!usage_whole("timeout", optarg, 1, 3600, &v))
			return false;
		sim->timeout_ms = (int)v * 1000;
		return true;
	case 'f':
		/* The server recognises a resent batch among a session's
		 * last 64. */
		if (!usage_whole("in-flight", optarg, 1, 64, &v))
			return false;
		sim->in_flight = (int)v;
		return true;
	default:
		usage_getopt(opt, argv, sim_longopts);
		return false;
	}
}

/*
 * The command line into sim, checked, with what follows from it (the
 * duration by default, samples per batch, the audio frame) and the
 * bytes of a batch in *bytes; false on a usage error (said).
 */
static bool
sim_options(struct sim *sim, int argc, char *argv[], size_t *bytes)
{
	long long batch = 0;
	bool dur = false;
	int opt;

	sim->key = getenv("XMHUB_API_KEY");
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc + 1, argv - 1, ":", sim_longopts,
				  NULL)) != -1)
		if (!sim_option(sim, opt, argv - 1, &dur, &batch))
			return false;
	if (optind < argc + 1) {
		usage_error("stray argument \"%s\"", argv[optind - 1]);
		return false;
	}
	if (sim->url == NULL) {
		usage_required("url");
		return false;
	}
	if (sim->key == NULL) {
		usage_error("--key API_KEY or XMHUB_API_KEY is required");
		return false;
	}
	if (dur && sim->samples > 0) {
		usage_error("--duration and --samples exclude each other");
		return false;
	}
	if ((uint64_t)sim->device_uid + (uint64_t)sim->devices - 1 >
	    UINT32_MAX) {
		usage_error("--device-uid: BASE + --devices - 1 is over "
			    "4294967295");
		return false;
	}
	if (!dur && sim->samples == 0)
		sim->duration = 10;
	/* Ten batches a second by default; 100 samples a batch unpaced. */
	sim->per_batch = batch > 0	 ? (uint32_t)batch
			 : sim->rate > 0 ? (uint32_t)fmax(1, sim->rate / 10)
					 : 100;
	if (sim->per_batch > XMBP_MAX_SAMPLES)
		sim->per_batch = XMBP_MAX_SAMPLES;
	sim->frame = sim->rate > 0
			     ? (size_t)fmin(4000, fmax(1, AUDIO_HZ / sim->rate))
			     : 80;
	*bytes = 10;
	for (int m = 0; m < sim->streams; m++)
		*bytes += 5 + sim->per_batch * sample_bytes(sim, m % KINDS);
	if (*bytes > (sim->ws ? WS_MAX : HTTP_MAX)) {
		usage_error("--batch and --streams: a batch would be %zu "
			    "bytes, over the %s limit",
			    *bytes,
			    sim->ws ? "WebSocket's 262144" : "HTTP 1 MiB");
		return false;
	}
	return true;
}

/*
 * The devices, each with its connection, buffers of bytes and a session
 * created through the API: 0, 1 on a failure (said), 2 on a bad --url.
 */
static int
sim_connect(struct sim *sim, size_t bytes)
{
	char err[512];

	if ((sim->dev = calloc((size_t)sim->devices, sizeof(*sim->dev))) ==
	    NULL)
		return 1;
	for (int i = 0; i < sim->devices; i++) {
		struct dev *d = &sim->dev[i];

		d->sim = sim;
		d->i = i;
		d->missed = d->stored = -1;
		d->rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);
		d->cap = bytes;
		if (!hclient_init(&d->c, sim->url, sim->key, sim->timeout_ms,
				  err, sizeof(err)))
			return usage_error("--url: %s", err);
		if ((d->mem = malloc(bytes * (size_t)sim->in_flight)) == NULL ||
		    (d->slot = calloc((size_t)sim->in_flight,
				      sizeof(*d->slot))) == NULL ||
		    !create_session(d))
			return 1;
	}
	return 0;
}

/*
 * Runs every device in a thread of its own, a status line on a terminal
 * meanwhile; the seconds they took in *secs.  False when a thread could
 * not be started (the others ran).
 */
static bool
sim_run(struct sim *sim, double *secs)
{
	pthread_t *th = calloc((size_t)sim->devices, sizeof(*th));
	bool tty = isatty(STDERR_FILENO);
	double t0 = clock_mono_s();
	int started = 0;

	*secs = 0;
	if (th == NULL)
		return false;
	atomic_store(&sim->running, sim->devices);
	for (; started < sim->devices; started++)
		if (pthread_create(&th[started], NULL, run_device,
				   &sim->dev[started]) != 0)
			break;
	atomic_fetch_sub(&sim->running, sim->devices - started);
	while (atomic_load(&sim->running) > 0) {
		poll(NULL, 0, tty ? 500 : 50);
		if (tty)
			fprintf(stderr,
				"\rxmhub sim: %.0f s, %" PRIu64
				" batches, %" PRIu64 " values, %" PRIu64
				" errors   ",
				clock_mono_s() - t0, atomic_load(&sim->batches),
				atomic_load(&sim->values),
				atomic_load(&sim->errors));
	}
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	*secs = clock_mono_s() - t0;
	if (tty)
		fprintf(stderr, "\n");
	free(th);
	return started == sim->devices;
}

/* The options; the devices and their sessions; the run; the sessions
 * closed and the report. */
int
sim_main(int argc, char *argv[])
{
	struct sim sim = {.devices = 1,
			  .streams = KINDS,
			  .rate = 100,
			  .timeout_ms = 10000,
			  .in_flight = 1,
			  .device_uid = 1000000};
	size_t bytes;
	double secs;
	int rc = 2;
	bool all;

	if (!sim_options(&sim, argc, argv, &bytes))
		goto out;
	sim.epoch_us = (uint64_t)clock_real_us();
	if ((rc = sim_connect(&sim, bytes)) != 0)
		goto out;
	all = sim_run(&sim, &secs);
	for (int i = 0; i < sim.devices; i++)
		close_session(&sim.dev[i]);
	report(&sim, secs);
	rc = all && atomic_load(&sim.errors) == 0 ? 0 : 1;
out:
	if (sim.dev != NULL)
		for (int i = 0; i < sim.devices; i++) {
			hclient_free(&sim.dev[i].c);
			free(sim.dev[i].mem);
			free(sim.dev[i].slot);
			free(sim.dev[i].lat);
		}
	free(sim.dev);
	return rc;
}
