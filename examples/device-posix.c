/* SPDX-License-Identifier: MIT */
/*
 * device-posix.c - a device that sends sensor data to xmhub with libxmbp.
 *
 * What a firmware does, written for POSIX: collect samples of two sensors
 * at 100 Hz, put 50 of each into an XMBP batch in a fixed buffer, POST
 * the batch to the session's data endpoint over plain HTTP/1.1 on a TCP
 * socket, read the acknowledgement, and resend the same bytes (the same
 * batch_seq) until the server answers 200, which means committed.
 * batch_seq goes up by one per batch and wraps after 65535; the server
 * counts the batches a gap in it says were lost (missed_batches).
 *
 * Build: cc -o device-posix device-posix.c $(pkg-config --cflags --libs xmbp)
 * Run:   device-posix [-n batches] [-i ms] [-t t0_us] [-u device_uid]
 *            HOST PORT API_KEY SESSION_ID
 * The session, with streams 0 (f32) and 1 (i32), is opened beforehand
 * with POST /api/v1/ingest/sessions (doc/ingest.md, doc/device.md).
 * Exit 0 when every batch was acknowledged, 1 when the server refused
 * one (4xx: retrying cannot help), 2 when it stayed unreachable.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <codec/xmbpenc.h>

#define RATE_US 10000 /* 100 Hz */
#define BATCH_SAMPLES 50
#define MAX_TRIES 12

/* The batch buffer: envelope with device_id, two blocks of 4-byte values. */
static uint8_t batch[XMBP_ENVELOPE_SIZE(1) + XMBP_BLOCK_SIZE(BATCH_SAMPLES, 4) +
		     XMBP_BLOCK_SIZE(BATCH_SAMPLES, 4)];

static float temp[BATCH_SAMPLES];     /* stream 0: a temperature, degC */
static int32_t count[BATCH_SAMPLES];  /* stream 1: a pulse counter */
static uint64_t stamp[BATCH_SAMPLES]; /* microseconds since the epoch */

/* The sensors, simulated: a saw of 0.25 degC steps and a counter. */
static void
collect(uint64_t n, uint64_t t0)
{
	for (int i = 0; i < BATCH_SAMPLES; i++, n++) {
		stamp[i] = t0 + n * RATE_US;
		temp[i] = 20.0f + (float)(n % 40) * 0.25f;
		count[i] = (int32_t)n;
	}
}

/* Encodes the samples into batch[]; its length, or 0 on failure. */
static size_t
encode(uint16_t seq, const uint32_t *device_uid)
{
	struct xmbp_enc enc;
	size_t len;

	xmbp_enc_init(&enc, batch, sizeof(batch));
	xmbp_enc_begin(&enc, seq, device_uid);
	xmbp_enc_stream(&enc, 0, SAMPLE_F32);
	for (int i = 0; i < BATCH_SAMPLES; i++)
		xmbp_enc_f32(&enc, stamp[i], temp[i]);
	xmbp_enc_stream(&enc, 1, SAMPLE_I32);
	for (int i = 0; i < BATCH_SAMPLES; i++)
		xmbp_enc_i32(&enc, stamp[i], count[i]);
	/* One check for the whole batch: a failed call sticks. */
	if (xmbp_enc_finish(&enc, &len) != XMBP_ENC_OK) {
		fprintf(stderr, "xmbp: %s\n", xmbp_enc_detail(&enc));
		return 0;
	}
	return len;
}

/* A TCP connection to host:port with 10 s timeouts; -1 on failure. */
static int
dial(const char *host, const char *port)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai, *a;
	struct timeval tv = {.tv_sec = 10};
	int fd = -1;

	if (getaddrinfo(host, port, &hints, &ai) != 0)
		return -1;
	for (a = ai; a != NULL && fd < 0; a = a->ai_next) {
		if ((fd = socket(a->ai_family, a->ai_socktype, 0)) < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(ai);
	return fd;
}

/* Sends all n bytes; -1 on failure (MSG_NOSIGNAL: no SIGPIPE). */
static int
send_all(int fd, const void *p, size_t n)
{
	for (ssize_t w; n > 0; p = (const char *)p + w, n -= (size_t)w)
		if ((w = send(fd, p, n, MSG_NOSIGNAL)) <= 0)
			return -1;
	return 0;
}

/*
 * POSTs the n bytes of body to path.  Returns the HTTP status, with the
 * answer's body (cut to fit) in resp, or -1 when there was no answer.
 */
static int
post(const char *host, const char *port, const char *path, const char *key,
     const uint8_t *body, size_t n, char *resp, size_t cap)
{
	char head[512];
	size_t got = 0;
	ssize_t r;
	int fd, status = -1, hn;
	char *sep;

	hn = snprintf(head, sizeof(head),
		      "POST %s HTTP/1.1\r\nHost: %s:%s\r\nX-Api-Key: %s\r\n"
		      "Content-Type: application/octet-stream\r\n"
		      "Content-Length: %zu\r\nConnection: close\r\n\r\n",
		      path, host, port, key, n);
	if (hn < 0 || (size_t)hn >= sizeof(head) || (fd = dial(host, port)) < 0)
		return -1;
	if (send_all(fd, head, (size_t)hn) != 0 || send_all(fd, body, n) != 0)
		goto out;
	/* Connection: close, so the answer ends where the stream does. */
	while (got < cap - 1 &&
	       (r = recv(fd, resp + got, cap - 1 - got, 0)) > 0)
		got += (size_t)r;
	resp[got] = '\0';
	if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1 ||
	    (sep = strstr(resp, "\r\n\r\n")) == NULL)
		status = -1;
	else
		memmove(resp, sep + 4, strlen(sep + 4) + 1);
out:
	close(fd);
	return status;
}

/* A number of the JSON answer, found by its key; 0 when it is not there. */
static unsigned long
field(const char *json, const char *key)
{
	const char *p = strstr(json, key);

	return p != NULL && (p = strchr(p, ':')) != NULL
		       ? strtoul(p + 1, NULL, 10)
		       : 0;
}

static void
pause_ms(long ms)
{
	struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int
main(int argc, char **argv)
{
	char path[160], resp[2048];
	long batches = 10, interval = 500;
	uint64_t t0 = (uint64_t)time(NULL) * 1000000u;
	uint32_t uid, *device_uid = NULL;
	uint16_t seq = 0; /* keep it across reboots, or open a new session */
	int c;

	while ((c = getopt(argc, argv, "n:i:t:u:")) != -1) {
		if (c == 'n')
			batches = atol(optarg);
		else if (c == 'i')
			interval = atol(optarg);
		else if (c == 't')
			t0 = strtoull(optarg, NULL, 10);
		else if (c == 'u') {
			uid = (uint32_t)strtoul(optarg, NULL, 10);
			device_uid = &uid;
		} else
			goto usage;
	}
	if (argc - optind != 4 || batches < 1 || interval < 0)
		goto usage;
	snprintf(path, sizeof(path), "/api/v1/ingest/sessions/%s/data",
		 argv[optind + 3]);

	for (long b = 0; b < batches; b++, seq++) {
		size_t len;
		long wait = 250;

		collect((uint64_t)b * BATCH_SAMPLES, t0);
		if ((len = encode(seq, device_uid)) == 0)
			return 1;
		for (int attempt = 1;; attempt++) {
			int status = post(argv[optind], argv[optind + 1], path,
					  argv[optind + 2], batch, len, resp,
					  sizeof(resp));
			if (status == 200)
				break;
			if (status >= 400 && status < 500 && status != 408 &&
			    status != 429) {
				fprintf(stderr, "batch %u refused: %d %s\n",
					seq, status, resp);
				return 1;
			}
			if (attempt == MAX_TRIES) {
				fprintf(stderr, "batch %u: given up\n", seq);
				return 2;
			}
			fprintf(stderr, "batch %u: %s %d, retry in %ld ms\n",
				seq, status < 0 ? "no answer" : "status",
				status, wait);
			pause_ms(wait);
			wait = wait < 4000 ? wait * 2 : 4000;
		}
		printf("batch %u acked: accepted_samples %lu missed_batches "
		       "%lu\n",
		       seq, field(resp, "\"accepted_samples\""),
		       field(resp, "\"missed_batches\""));
		fflush(stdout);
		if (b + 1 < batches)
			pause_ms(interval);
	}
	return 0;
usage:
	fprintf(stderr, "usage: device-posix [-n batches] [-i ms] [-t t0_us] "
			"[-u device_uid] HOST PORT API_KEY SESSION_ID\n");
	return 2;
}
