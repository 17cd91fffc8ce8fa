/* SPDX-License-Identifier: MIT */
/*
 * faceapi_worker.h - the process that decodes, detects, masks and
 * encodes for one face FastCGI process, apart from its credentials.
 *
 * The FastCGI process holds the database URL, S3 keys, the admin
 * password and the URL secret; images are untrusted input to large C
 * and C++ decoders.  So each face process starts one worker: its own
 * program again (/proc/self/exe with FACEAPI_WORKER_ARG), exec'd, never
 * merely forked, so it has none of the parent's memory; with an
 * environment of non-secret variables only (ASan/OpenCV/OpenMP tuning);
 * stdin and stdout /dev/null, stderr shared (the web server's log), its
 * socket on fd FACEAPI_WORKER_FD and no other descriptor.  It loads the
 * model, warms it up, then restricts itself (faceapi_worker_sandbox) and
 * serves requests over a stream socketpair until the socket closes.
 *
 * A worker that dies, stops answering within FACE_API_WORKER_TIMEOUT or
 * breaks the protocol is killed and reaped; its request gets
 * FACEAPI_WORKER_LOST and the next request starts a new worker.  Every
 * length and count the worker sends back is checked: a subverted worker
 * can give wrong boxes, never overrun the parent.  doc/face.md
 * ("Isolation") has the decisions and their cost.
 */
#ifndef XMHUB_FACEAPI_WORKER_H
#define XMHUB_FACEAPI_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/buf.h"
#include "face/face.h"
#include "face/service/faceapi_conf.h"

#define FACEAPI_WORKER_ARG "--face-worker" /* argv[1] of a worker */
#define FACEAPI_WORKER_FD 3		   /* the worker's socket */
#define FACEAPI_WORKER_NOFILE 8		   /* RLIMIT_NOFILE of a worker */

struct faceapi_worker;

/* The model a worker loaded, as it said when it started. */
struct faceapi_worker_model {
	bool loaded; /* false: detect and mask answer 503 */
	char name[32];
	uint64_t file_size;
	bool landmarks;
	int det_size;
};

enum faceapi_worker_result {
	FACEAPI_WORKER_OK,
	FACEAPI_WORKER_FAILED, /* the step failed on this input: detail */
	FACEAPI_WORKER_LOST    /* the worker died, timed out or broke the
				* protocol: detail; it is gone */
};

/*
 * Starts the worker of c's model and waits until it has loaded it (or
 * failed to).  note (notelen bytes) gets what face_model_open() noted,
 * detail why no model is loaded.  NULL only when out of memory; a
 * worker that cannot start or load its model gives a handle whose
 * model is not loaded, and none is started again.  Free with
 * faceapi_worker_close().
 */
struct faceapi_worker *faceapi_worker_open(const struct faceapi_conf *c,
					   char *note, size_t notelen,
					   char *detail, size_t dlen);

/* Kills and reaps the worker and frees w; NULL is fine. */
void faceapi_worker_close(struct faceapi_worker *w);

/* The model of the last worker started (owned by w). */
const struct faceapi_worker_model *
faceapi_worker_model(const struct faceapi_worker *w);

/*
 * True when a worker with a model is running, starting a new one if the
 * last one is gone (only when a model was loaded at open).  False with
 * detail when there is none; a restart's failure is also logged.
 */
bool faceapi_worker_ready(struct faceapi_worker *w, char *detail, size_t dlen);

/*
 * Has the worker decode data[0..len) (face_image_decode with c's
 * max_pixels) and keep the image for the next steps.
 */
enum faceapi_worker_result faceapi_worker_decode(struct faceapi_worker *w,
						 const void *data, size_t len,
						 char *detail, size_t dlen);

/*
 * face_detect() on the kept image (at most cap boxes into out[]); keep
 * false lets the worker drop the image afterwards.  *n is 0 unless OK.
 */
enum faceapi_worker_result
faceapi_worker_detect(struct faceapi_worker *w, float conf, float nms,
		      size_t max_faces, bool keep, struct face_box *out,
		      size_t cap, size_t *n, struct face_timings *t,
		      char *detail, size_t dlen);

/* face_mask() of the n boxes on the kept image. */
enum faceapi_worker_result
faceapi_worker_mask(struct faceapi_worker *w, const struct face_box *boxes,
		    size_t n, enum face_method method, int strength,
		    double padding, char *detail, size_t dlen);

/*
 * face_image_encode() of the kept image, appended to out; the worker
 * drops the image afterwards.
 */
enum faceapi_worker_result faceapi_worker_encode(struct faceapi_worker *w,
						 enum face_fmt fmt, int quality,
						 struct buf *out, char *detail,
						 size_t dlen);

/*
 * The worker's side: restricts this process for good.  Limits: address
 * space to its current size plus as_extra bytes (not under
 * AddressSanitizer, whose shadow memory is already far larger), files
 * to FACEAPI_WORKER_NOFILE descriptors, no file written, no core;
 * no_new_privs; a seccomp filter that lets memory, threads, time and
 * reads and writes of open descriptors through and makes every other
 * system call (open, socket, connect, exec, fork, kill of another
 * process...) fail with EPERM.  False with detail when any step fails.
 */
bool faceapi_worker_sandbox(uint64_t as_extra, char *detail, size_t dlen);

/*
 * The worker program (main() calls it when argv[1] is
 * FACEAPI_WORKER_ARG): serves the socket on FACEAPI_WORKER_FD until it
 * closes.  Returns the exit status.
 */
int faceapi_worker_main(void);

#endif
