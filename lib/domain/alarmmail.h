/* SPDX-License-Identifier: MIT */
/*
 * alarmmail.h - the e-mail of an alarm event, for a person on call
 * (doc/alarms.md "E-mail"): an RFC 5322 message, MIME text/plain in
 * UTF-8, made from the event's JSON (the webhooks' body) and the names
 * the runner's claim reads with it (lib/domain/alarmrun.c claim_sql).
 * No I/O: the runner gives the message to sendmail.
 *
 * Headers: To, Subject (the severity, the rule's name, what the event
 * did and the rule's condition in words, with the facility's name;
 * RFC 2047 encoded-words when it is not ASCII or longer than a line),
 * Date, Message-ID, MIME-Version, Content-Type, Content-Transfer-Encoding
 * (8bit, or quoted-printable when a line would pass 998 octets) and
 * X-Xmhub-Event (the event's id).  No header carries a byte under 0x20
 * of a name: every control character of a rule, device or facility name
 * becomes a space, so a name cannot end a header and start another.
 *
 * The body: what happened, where, the value and when (UTC, ISO 8601), the
 * alarm's state and id, each a labelled paragraph wrapped under 78
 * columns, then the event's JSON as the webhooks get it, for machines.
 */
#ifndef XMHUB_ALARMMAIL_H
#define XMHUB_ALARMMAIL_H

#include <stdbool.h>
#include <time.h>

#include "codec/buf.h"

struct alarmmail {
	const char *to;	     /* the address (the schema checked it) */
	const char *event;   /* the event's JSON (alarm_events.payload) */
	const char *context; /* JSON {"facility", "device", "rule": {its
			      * stream_name, op, lo, hi, for_samples,
			      * for_seconds, silence_minutes,
			      * storage_percent}}; NULL or a member
			      * missing: left out of the text */
	const char *id;	     /* Message-ID's left part: the delivery's id */
	const char *domain;  /* Message-ID's right part: the host's name */
	time_t now;	     /* the Date */
};

/* Appends the message (LF line ends, as sendmail reads them) to out;
 * false when the event is not a JSON object or memory ran out. */
bool alarmmail_format(const struct alarmmail *m, struct buf *out);

#endif
