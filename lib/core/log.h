/* SPDX-License-Identifier: MIT */
/*
 * log.h - the one log helper of every program: one logfmt line per
 * event on stderr (which lighttpd, websocketd, systemd and the stack keep),
 * written with a single write() so that lines of processes sharing the
 * file do not interleave (request lines may be held and written several
 * in one: log_hold_requests()).
 *
 *   time=2026-11-25T15:36:09.123Z level=error program=auth pid=812
 *     request_id=5f0c... msg="db: ERROR: ..."
 *   time=... level=info program=auth pid=812 msg=request method=GET
 *     path=/api/auth/me status=200 duration_ms=1.234 request_id=5f0c...
 *
 * (one line each).  A value with a blank, '"', '=', '\' or a control
 * character is quoted with those escaped (\", \\, \n, \t, \xHH), so a
 * client's path or message can not forge a line.  doc/deploy.md documents
 * the form.  Lines longer than LOG_LINE_MAX are cut and end with "...".
 */
#ifndef XMHUB_LOG_H
#define XMHUB_LOG_H

#include <stdbool.h>

#define LOG_LINE_MAX 4096
#define LOG_REQUEST_ID_MAX 64 /* longest request id kept, without NUL */

/* Names the program on every later line (a static string: not copied).
 * Until it is called the program is "xmhub". */
void log_init(const char *program);

/* A line of level info, warn or error whose msg is printf-formatted. */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Sets the request id put on the lines of the calling thread (NULL or ""
 * clears it): the lines logged while a request runs name it.  The id is
 * copied (at most LOG_REQUEST_ID_MAX bytes).
 */
void log_request_id(const char *id);

/*
 * The request line: method, path (without the query), status, duration in
 * milliseconds and the thread's request id.  Level info, error for a
 * status of 500 or more.  After log_hold_requests(), a line of status
 * below 500 may be held in memory, to be written with others.
 */
void log_request(const char *method, const char *path, int status,
		 double duration_ms);

/*
 * From now on, holds the request lines of status below 500 (up to 8 KiB)
 * and writes them together: when they fill the buffer, before any other
 * line (so lines keep their order), at log_flush(), at exit() and at least
 * every second (a thread started here; without it, nothing is held).  For
 * a program that calls log_flush() before an answer whenever it has no
 * other request to serve, so that lines wait only under load; what is held
 * is lost if the process is killed (a 5xx line never is).  Call it before
 * the program starts threads of its own.
 */
void log_hold_requests(void);

/* Writes the held request lines now. */
void log_flush(void);

/* True when request lines are held, not yet written. */
bool log_holding(void);

/*
 * True when id may be taken as a request id: 1 to LOG_REQUEST_ID_MAX
 * characters of letters, digits and "-_.:" (nothing to escape in a log
 * line or a header).
 */
bool log_request_id_valid(const char *id);

#endif
