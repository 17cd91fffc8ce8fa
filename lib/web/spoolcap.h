/* SPDX-License-Identifier: MIT */
/*
 * spoolcap.h - the cap on the request bodies the web server receives
 * whole before their program runs (doc/security.md "Bodies read after
 * the credentials").  lighttpd can not stream a chunked body to a
 * FastCGI program: it spools it first.  The authorizer in front of such
 * a route (httpd-conf/programs authorize=) takes one of XMHUB_SPOOL_MAX
 * slots of the host for the body once the credentials passed, and hands
 * its token on to the program (a Variable- header of the authorizer's
 * answer, which lighttpd puts in the program's environment); the
 * program gives the slot back as soon as it is called, the body then
 * received.  A body that never arrives (its client left, lighttpd
 * dropped it) holds its slot until XMHUB_SPOOL_LEASE seconds have
 * passed: the cap bounds the spools started per lease, not a second
 * more.
 *
 * The slots are fixed records of the file XMHUB_SPOOL_SLOTS, which the
 * web server's configuration names (VAR/run/spool-slots), read and
 * written under flock(2): one host's processes share them.  Without the
 * setting nothing is capped (Apache, doc/deploy.md).
 */
#ifndef XMHUB_SPOOLCAP_H
#define XMHUB_SPOOLCAP_H

/* A slot's token: "SLOT-ID", ID 16 hex digits. */
#define SPOOLCAP_TOKEN_MAX 40
/* The Variable- header (and environment variable) carrying it. */
#define SPOOLCAP_VARIABLE "XMHUB_SPOOL_SLOT"
/* Retry-After of a refusal: a spool of a few MB ends within seconds. */
#define SPOOLCAP_RETRY_S 5

enum spoolcap_result {
	SPOOLCAP_TAKEN = 0, /* token holds the slot */
	SPOOLCAP_FULL,	    /* every slot is held */
	SPOOLCAP_OFF,	    /* no XMHUB_SPOOL_SLOTS, or XMHUB_SPOOL_MAX 0 */
	SPOOLCAP_ERROR	    /* the file or the random bytes failed (errno) */
};

/* Takes a free slot (or one whose lease ran out) into token. */
enum spoolcap_result spoolcap_take(char token[SPOOLCAP_TOKEN_MAX]);

/* Gives back the slot of token, unless its lease ran out and another
 * body holds it now; a malformed token is ignored. */
void spoolcap_give(const char *token);

#endif
