/* SPDX-License-Identifier: MIT */
/*
 * faceapi_limits.h - the face service's limits shared by all its
 * FastCGI processes: the concurrency cap, the inference slots, the
 * per-IP rate limits and the admin login lockout (doc/face.md "Settings",
 * "Shared state", "Admin authentication").
 *
 * The state lives in files of FACE_API_STATE_DIR, so that every process
 * (lighttpd spawns several, of two programs) sees the same counts:
 * - slots are bytes of a lock file held with fcntl() record locks, which
 *   the kernel releases when the holding process dies, so a crashed
 *   process never leaks a slot;
 * - rate limits and failed logins are entries of a fixed-size table in a
 *   shared memory-mapped file, changed under an fcntl() lock of the whole
 *   file; the table never grows (entries that expired are reused; when
 *   its probe window is full, the entry expiring first is).
 * Each process opens the files once (faceapi_limits_open); not for threads.
 *
 * With FACE_API_LIMITS=postgres (faceapi_limits_shared) the rate limits
 * and lockouts live in PostgreSQL instead (sql/016_scale.sql), shared by
 * every host of the service; the slots stay per host: they cap this
 * machine's CPU and memory (doc/scaling.md).
 */
#ifndef XMHUB_FACEAPI_LIMITS_H
#define XMHUB_FACEAPI_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "face/service/faceapi_conf.h"

#define FACEAPI_LOCKOUT_FAILURES 10 /* consecutive failed admin logins */
#define FACEAPI_LOCKOUT_SECONDS 900 /* then the IP is refused so long */
#define FACEAPI_TABLE_ENTRIES 8192  /* rate-limit and lockout entries */

struct faceapi_limits;

/*
 * Opens (creating when missing, mode 0600) the state files in dir
 * (created 0700 when missing) for max_requests request slots and
 * max_inference inference slots.  Caller owns the result.  NULL and
 * detail when a file cannot be made or mapped.
 */
struct faceapi_limits *faceapi_limits_open(const char *dir, int max_requests,
					   int max_inference, char *detail,
					   size_t dlen);

/*
 * Moves the rate limits and lockouts of l to the PostgreSQL database at
 * database_url (own connection, made at the first use).  False and
 * detail on memory failure.  A database that fails later allows the
 * request and records no lockout, as an I/O error of the file engine.
 */
bool faceapi_limits_shared(struct faceapi_limits *l, const char *database_url,
			   char *detail, size_t dlen);

/* Closes the files and the database connection (slots held are
 * released); NULL is fine. */
void faceapi_limits_close(struct faceapi_limits *l);

/* Takes one of the request slots without waiting; false when all are
 * taken (the caller answers 503) or on an I/O error. */
bool faceapi_request_begin(struct faceapi_limits *l);

/* Gives the request slot back (nothing when none is held). */
void faceapi_request_end(struct faceapi_limits *l);

/* Waits until one of the inference slots is free and takes it; false
 * only on an I/O error. */
bool faceapi_inference_begin(struct faceapi_limits *l);

/* Gives the inference slot back (nothing when none is held). */
void faceapi_inference_end(struct faceapi_limits *l);

/* now_us below: clock_real_us() (lib/core/clock), the tables' time base. */

/*
 * Counts one request of ip to the endpoint kind ("detect", "mask")
 * against rate r (GCRA: r->limit requests at once, then one every
 * period/limit).  True when allowed; false when over the limit, with
 * the seconds until the next allowed request in *retry_after (>= 1).
 * An I/O error allows the request (limits are a protection, not a
 * reason to fail).
 */
bool faceapi_rate_allow(struct faceapi_limits *l, const char *kind,
			const char *ip, const struct faceapi_rate *r,
			int64_t now_us, int *retry_after);

/* True when ip is locked out of the admin endpoints now, with the
 * seconds left in *retry_after. */
bool faceapi_lockout_blocked(struct faceapi_limits *l, const char *ip,
			     int64_t now_us, int *retry_after);

/*
 * Records a failed admin login of ip: the FACEAPI_LOCKOUT_FAILURES-th in
 * a row (failures more than FACEAPI_LOCKOUT_SECONDS apart do not add up)
 * locks it out for FACEAPI_LOCKOUT_SECONDS.  True when it is locked out
 * now, with the seconds left in *retry_after.
 */
bool faceapi_lockout_fail(struct faceapi_limits *l, const char *ip,
			  int64_t now_us, int *retry_after);

/* A successful admin login of ip: its failures are forgotten. */
void faceapi_lockout_ok(struct faceapi_limits *l, const char *ip);

#endif
