/* SPDX-License-Identifier: MIT */
/*
 * t/unit/alarmmail.c - an alarm event as an e-mail (lib/domain/alarmmail.h):
 * the headers once each, the subject in words, RFC 2047 for a name not
 * ASCII, no header made of a name's CR LF, the body's lines, its wrap
 * under 78 columns, quoted-printable for a line past 998 octets.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codec/base64.h"
#include "codec/buf.h"
#include "domain/alarmmail.h"
#include "tap.h"

#define EVENT_ID "0b4c8a7e-8d1f-4a56-9f6e-0d3c3c2f1a01"
#define ALARM_ID "5e1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b"
#define DEVICE_ID "7d0c9b8a-1e2f-4a3b-8c4d-5e6f7a8b9c0d"

/* An event as PostgreSQL's jsonb writes alarm_raise()'s (sql/021). */
static char *
event(const char *rule_name, const char *kind, const char *device)
{
	struct buf b;

	buf_init(&b, 0);
	buf_printf(&b,
		   "{\"id\": \"" EVENT_ID "\", \"type\": \"alarm.raised\", "
		   "\"alarm\": {\"id\": \"" ALARM_ID "\", \"kind\": \"%s\", "
		   "\"rule_name\": \"%s\", \"state\": \"active\", "
		   "\"severity\": \"critical\", \"value\": 0.73, "
		   "\"message\": \"sine0 above the limit: 0.73\", "
		   "\"device_id\": %s, \"first_seen_at\": "
		   "\"2026-11-30T02:50:07.123456+01:00\"}}",
		   kind, rule_name, device);
	buf_putc(&b, '\0');
	return (char *)b.p;
}

static const char context[] =
	"{\"facility\": \"Facility A\", \"device\": \"pump 3\", \"rule\": "
	"{\"stream_name\": \"sine0\", \"op\": \"above\", \"lo\": null, "
	"\"hi\": 0.5, \"for_samples\": 3, \"for_seconds\": 0, "
	"\"silence_minutes\": null, \"storage_percent\": null}}";

/* The message of ev with ctx, NUL-ended, or NULL when it failed. */
static char *
format(const char *ev, const char *ctx)
{
	struct alarmmail m = {.to = "ops@example.org",
			      .event = ev,
			      .context = ctx,
			      .id = "d-1",
			      .domain = "host.example",
			      .now = 1796003407}; /* 2026-11-30 01:50:07 UTC */
	struct buf b;

	buf_init(&b, 0);
	if (!alarmmail_format(&m, &b)) {
		buf_free(&b);
		return NULL;
	}
	buf_putc(&b, '\0');
	return (char *)b.p;
}

/* How many lines of the header of msg start with name. */
static int
headers(const char *msg, const char *name)
{
	const char *end = strstr(msg, "\n\n");
	size_t n = strlen(name);
	int count = 0;

	for (const char *p = msg; p != NULL && p < end;
	     p = strchr(p, '\n'), p = p != NULL ? p + 1 : NULL)
		count += strncmp(p, name, n) == 0;
	return count;
}

/* Whether msg has the line want. */
static bool
has_line(const char *msg, const char *want)
{
	size_t n = strlen(want);

	for (const char *p = msg; p != NULL;
	     p = strchr(p, '\n'), p = p != NULL ? p + 1 : NULL)
		if (strncmp(p, want, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

/* The longest line of msg from its body on, in characters (not bytes
 * continuing one), leaving out the lines that start with skip. */
static size_t
widest(const char *msg, const char *skip)
{
	size_t most = 0;

	for (const char *p = strstr(msg, "\n\n") + 2; *p != '\0';) {
		size_t n = strcspn(p, "\n"), w = 0;

		for (size_t i = 0; i < n; i++)
			w += ((unsigned char)p[i] & 0xc0) != 0x80;
		if ((skip == NULL || strncmp(p, skip, strlen(skip)) != 0) &&
		    w > most)
			most = w;
		p += n + (p[n] == '\n');
	}
	return most;
}

/* The subject of msg unfolded, its encoded-words decoded (base64 only,
 * the space between two of them dropped). */
static char *
subject(const char *msg)
{
	const char *p = strstr(msg, "\nSubject: ") + 10;
	struct buf u, b;

	buf_init(&u, 0);
	buf_init(&b, 0);
	do
		buf_append(&u, p, strcspn(p, "\n"));
	while ((p = strchr(p, '\n')) != NULL && *++p == ' ');
	buf_putc(&u, '\0');
	p = (const char *)u.p;
	if (strncmp(p, "=?utf-8?B?", 10) != 0)
		buf_puts(&b, p);
	while (strncmp(p, "=?utf-8?B?", 10) == 0) {
		size_t n = strcspn(p + 10, "?");

		base64_decode(&b, p + 10, n);
		p += 10 + n + 2;
		p += *p == ' ';
	}
	buf_putc(&b, '\0');
	buf_free(&u);
	return (char *)b.p;
}

/* Undoes quoted-printable (RFC 2045 6.7) of the body of msg. */
static char *
unqp(const char *msg)
{
	struct buf b;

	buf_init(&b, 0);
	for (const char *p = strstr(msg, "\n\n") + 2; *p != '\0'; p++)
		if (p[0] == '=' && p[1] == '\n')
			p++;
		else if (p[0] == '=') {
			char hex[3] = {p[1], p[2], '\0'};

			buf_putc(&b, (char)strtol(hex, NULL, 16));
			p += 2;
		} else
			buf_putc(&b, *p);
	buf_putc(&b, '\0');
	return (char *)b.p;
}

int
main(void)
{
	static const char *const once[] = {"To: ",
					   "Subject: ",
					   "Date: ",
					   "Message-ID: ",
					   "MIME-Version: ",
					   "Content-Type: ",
					   "Content-Transfer-Encoding: ",
					   "X-Xmhub-Event: "};
	char *ev = event("tank level", "threshold", "\"" DEVICE_ID "\"");
	char *msg = format(ev, context), *s, *big, *name, *qp;
	bool all = true;

	ok(msg != NULL, "a threshold event is formatted");
	for (size_t i = 0; i < sizeof(once) / sizeof(once[0]); i++)
		all &= headers(msg, once[i]) == 1;
	ok(all, "each header once");
	s = subject(msg);
	is_str(s,
	       "[xmhub] critical alarm raised: tank level - sine0 above 0.5 "
	       "(Facility A)",
	       "the subject: severity, rule, raised, condition, facility");
	free(s);
	ok(has_line(msg, "Subject: [xmhub] critical alarm raised: tank level "
			 "- sine0 above 0.5 (Facility") &&
		   has_line(msg, " A)"),
	   "in ASCII, folded at a space within 78 columns");
	ok(has_line(msg, "Date: Mon, 30 Nov 2026 01:50:07 +0000"),
	   "an RFC 5322 date");
	ok(has_line(msg, "Message-ID: <alarm.d-1@host.example>"),
	   "a Message-ID of the delivery at the host");
	ok(has_line(msg, "MIME-Version: 1.0") &&
		   has_line(msg, "Content-Type: text/plain; charset=utf-8") &&
		   has_line(msg, "Content-Transfer-Encoding: 8bit"),
	   "MIME text in UTF-8, 8bit");
	ok(has_line(msg, "X-Xmhub-Event: " EVENT_ID), "X-Xmhub-Event");
	ok(has_line(msg, "The critical alarm \"tank level\" was raised in "
			 "facility Facility A."),
	   "the body starts with what happened");
	ok(has_line(msg, "What:   sine0 above 0.5, 3 samples in a row (a "
			 "threshold rule)"),
	   "what: the condition in words");
	ok(has_line(msg, "Where:  facility Facility A, device pump 3") &&
		   has_line(msg, "        (" DEVICE_ID "), stream sine0"),
	   "where: facility, device, stream (wrapped, indented)");
	ok(has_line(msg, "Value:  0.73, first seen at 2026-11-30T01:50:07Z"),
	   "the value, and when in UTC");
	ok(has_line(msg, "Alarm:  active, id " ALARM_ID), "state and id");
	ok(has_line(msg, "Note:   sine0 above the limit: 0.73"),
	   "the event's message");
	ok(has_line(msg, ev), "the event's JSON, as it is, on a line");
	ok(widest(msg, "{") < 78, "the prose under 78 columns");
	free(msg);

	/* A name with a header in it. */
	name = event("x\\r\\nBcc: x@example.org", "threshold", "null");
	msg = format(name, context);
	ok(msg != NULL && headers(msg, "Bcc:") == 0 &&
		   strstr(msg, "\nBcc:") == NULL,
	   "a rule name's CR LF makes no header");
	s = subject(msg);
	is_str(s,
	       "[xmhub] critical alarm raised: x  Bcc: x@example.org - sine0 "
	       "above 0.5 (Facility A)",
	       "its CR LF are spaces in the subject");
	free(s);
	ok(has_line(msg, "Where:  facility Facility A as a whole (no "
			 "device), stream sine0"),
	   "no device: the facility as a whole");
	free(msg);
	free(name);

	/* Not ASCII: RFC 2047. */
	name = event("F\xc3\xbcllstand \xe2\x80\x94 Tank \xe2\x86\x91 "
		     "\xe6\xb0\xb4\xe4\xbd\x8d",
		     "threshold", "null");
	msg = format(name, context);
	s = subject(msg);
	ok(strstr(msg, "\nSubject: =?utf-8?B?") != NULL,
	   "a rule name not ASCII: the subject in encoded-words");
	is_str(s,
	       "[xmhub] critical alarm raised: F\xc3\xbcllstand \xe2\x80\x94 "
	       "Tank \xe2\x86\x91 \xe6\xb0\xb4\xe4\xbd\x8d - sine0 above 0.5 "
	       "(Facility A)",
	       "which decode to the subject");
	all = true;
	for (const char *p = msg; p < strstr(msg, "\n\n");
	     p += strcspn(p, "\n") + 1)
		all &= strcspn(p, "\n") <= 76 && (unsigned char)*p < 0x80;
	ok(all, "every header line ASCII and 76 columns at most");
	free(s);
	free(msg);
	free(name);

	/* A line past 998 octets: quoted-printable. */
	big = calloc(1, 1201);
	memset(big, 'n', 1200);
	name = event(big, "threshold", "null");
	msg = format(name, context);
	ok(has_line(msg, "Content-Transfer-Encoding: quoted-printable"),
	   "a line past 998 octets: quoted-printable");
	ok(widest(msg, NULL) <= 76, "whose lines are 76 columns at most");
	qp = unqp(msg);
	ok(has_line(qp, name), "and decode to the event's JSON");
	free(qp);
	s = subject(msg);
	ok(strstr(msg, "\nSubject: =?utf-8?B?") != NULL &&
		   strncmp(s, "[xmhub] critical alarm raised: nnn", 34) == 0,
	   "a word too long to fold: the subject in encoded-words");
	free(s);
	free(msg);
	free(name);
	free(big);

	/* A silence event without the context: the kind in its place. */
	name = event("quiet", "silence", "null");
	msg = format(name, NULL);
	ok(msg != NULL && has_line(msg, "Subject: [xmhub] critical alarm "
					"raised: quiet - silence"),
	   "no context: the kind for the condition, no facility");
	free(msg);
	ok(format("[1, 2]", context) == NULL && format("{", NULL) == NULL,
	   "an event not a JSON object with an alarm: false");
	free(name);
	free(ev);
	return tap_done();
}
