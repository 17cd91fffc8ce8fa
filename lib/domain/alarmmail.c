/* SPDX-License-Identifier: MIT */
/*
 * alarmmail.c - an alarm event as an e-mail a person reads (alarmmail.h).
 */
#define _GNU_SOURCE /* timegm */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "codec/base64.h"
#include "codec/jsonin.h"
#include "domain/alarmmail.h"

/* Columns of the body's prose (under 78, RFC 5322 2.1.1) and octets of
 * any line of an 8bit body (at most 998). */
#define WIDTH 76
#define MAX_LINE 998
/* Columns of the labels of the body's paragraphs ("What:   "). */
#define LABEL 8
/* Bytes of text in one RFC 2047 encoded-word: 52 base64 digits, so that
 * "Subject: " and the word fit 73 columns (the RFC's most is 76). */
#define WORD_BYTES 39
/* The longest word of an ASCII subject sent as it is: folding at its
 * spaces then keeps every line under 998 octets. */
#define PLAIN_WORD 900

/* A member of o that is a string, or NULL (o NULL included). */
static const char *
str(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* A member of o that is a number into *d; false when there is none. */
static bool
num(json_object *o, const char *key, double *d)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !(json_object_is_type(v, json_type_double) ||
	      json_object_is_type(v, json_type_int)))
		return false;
	*d = json_object_get_double(v);
	return true;
}

/* Appends s with each control character as a space: names go into
 * headers, and a CR or LF there would end the header and start another
 * (header injection). */
static void
clean(struct buf *b, const char *s)
{
	for (; *s != '\0'; s++)
		buf_putc(b, (unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s);
}

/*
 * The rule's condition in words, from its kind (the event's) and its
 * limits (the context's rule, NULL: the kind alone); full adds how long
 * a threshold must hold.
 */
static void
condition(struct buf *b, const char *kind, json_object *rule, bool full)
{
	const char *op = str(rule, "op"), *stream = str(rule, "stream_name");
	double lo = 0, hi = 0, n = 0;
	bool has_lo = num(rule, "lo", &lo), has_hi = num(rule, "hi", &hi);

	if (strcmp(kind, "threshold") == 0 && op != NULL && stream != NULL) {
		clean(b, stream);
		if (strcmp(op, "above") == 0 && has_hi)
			buf_printf(b, " above %.15g", hi);
		else if (strcmp(op, "below") == 0 && has_lo)
			buf_printf(b, " below %.15g", lo);
		else if (has_lo && has_hi)
			buf_printf(b, " outside %.15g to %.15g", lo, hi);
		if (full && num(rule, "for_samples", &n) && n > 1)
			buf_printf(b, ", %.15g samples in a row", n);
		if (full && num(rule, "for_seconds", &n) && n > 0)
			buf_printf(b, ", for %.15g s or more", n);
	} else if (strcmp(kind, "silence") == 0 &&
		   num(rule, "silence_minutes", &n))
		buf_printf(b, "no data for %.15g minutes or more", n);
	else if (strcmp(kind, "storage") == 0 &&
		 num(rule, "storage_percent", &n))
		buf_printf(b, "storage at %.15g%% of the quota or more", n);
	else if (strcmp(kind, "session_error") == 0)
		buf_puts(b, "ingest sessions ended in error");
	else if (strcmp(kind, "job_failed") == 0)
		buf_puts(b, "transcode jobs failed for good");
	else
		clean(b, kind);
}

/* Columns of the n bytes of UTF-8 at p: its characters. */
static size_t
columns(const uint8_t *p, size_t n)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += (p[i] & 0xc0) != 0x80;
	return c;
}

/*
 * Appends a paragraph: label, padded to indent columns, and the text t
 * (cleaned, no line ends) wrapped at its spaces under WIDTH columns, the
 * lines after the first indented to the text.  A word longer than a line
 * stays whole, on a line of its own.
 */
static void
paragraph(struct buf *b, const char *label, int indent, const struct buf *t)
{
	size_t col = (size_t)indent, i = 0;
	bool first = true;

	buf_printf(b, "%-*s", indent, label);
	while (i < t->len) {
		size_t n = 0, w;

		while (i + n < t->len && t->p[i + n] != ' ')
			n++;
		w = columns(t->p + i, n);
		if (n > 0 && !first && col + 1 + w > WIDTH) {
			buf_printf(b, "\n%*s", indent, "");
			col = (size_t)indent;
			first = true;
		}
		if (n > 0 && !first) {
			buf_putc(b, ' ');
			col++;
		}
		buf_append(b, t->p + i, n);
		col += w;
		first &= n == 0;
		i += n + 1;
	}
	buf_putc(b, '\n');
}

/* Empties b for the next paragraph. */
static void
restart(struct buf *b)
{
	b->len = 0;
}

/* An ISO 8601 time with an offset, as PostgreSQL's JSON writes a
 * timestamptz, in UTC to the second (2026-11-30T01:50:00Z); as it came
 * when it does not read as one. */
static void
utc(struct buf *b, const char *t)
{
	struct tm tm = {0};
	int oh = 0, om = 0, n = 0, sign = 1;
	const char *p;
	char out[32];
	time_t s;

	if (sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6) {
		clean(b, t);
		return;
	}
	p = t + n;
	if (*p == '.')
		p += 1 + strspn(p + 1, "0123456789");
	if (*p == '+' || *p == '-') {
		sign = *p == '-' ? -1 : 1;
		sscanf(p + 1, "%2d:%2d", &oh, &om);
	}
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	s = timegm(&tm) - sign * (oh * 3600 + om * 60);
	if (gmtime_r(&s, &tm) == NULL ||
	    strftime(out, sizeof(out), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0) {
		clean(b, t);
		return;
	}
	buf_puts(b, out);
}

/* The Date header of t (RFC 5322 3.3, in English whatever the locale). */
static void
date(struct buf *b, time_t t)
{
	static const char days[][4] = {"Sun", "Mon", "Tue", "Wed",
				       "Thu", "Fri", "Sat"};
	static const char months[][4] = {"Jan", "Feb", "Mar", "Apr",
					 "May", "Jun", "Jul", "Aug",
					 "Sep", "Oct", "Nov", "Dec"};
	struct tm tm;

	gmtime_r(&t, &tm);
	buf_printf(b, "Date: %s, %02d %s %04d %02d:%02d:%02d +0000\n",
		   days[tm.tm_wday], tm.tm_mday, months[tm.tm_mon],
		   tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* Bytes of the longest run without a space of s. */
static size_t
longest_word(const struct buf *s)
{
	size_t most = 0, run = 0;

	for (size_t i = 0; i < s->len; i++) {
		run = s->p[i] == ' ' ? 0 : run + 1;
		most = run > most ? run : most;
	}
	return most;
}

/*
 * The Subject header of the text s (cleaned).  ASCII: as it is, folded
 * before a space where a line would pass 78 columns (RFC 5322 2.2.3).
 * Otherwise, or with a word too long to fold: RFC 2047 encoded-words
 * (base64 of UTF-8, whole characters in each), one to a folded line.
 */
static void
subject(struct buf *b, const struct buf *s)
{
	static const char head[] = "Subject: ";
	size_t col = strlen(head);
	bool plain = longest_word(s) <= PLAIN_WORD;

	for (size_t i = 0; i < s->len; i++)
		plain &= s->p[i] < 0x80;
	buf_puts(b, head);
	for (size_t i = 0; plain && i < s->len; i++) {
		size_t n = 1;

		/* Never a line of spaces alone: a fold at a word's start. */
		while (s->p[i] == ' ' && i > 0 && s->p[i - 1] != ' ' &&
		       i + n < s->len && s->p[i + n] != ' ')
			n++;
		if (n > 1 && col + n > 78) {
			buf_putc(b, '\n');
			col = 0;
		}
		buf_putc(b, (char)s->p[i]);
		col++;
	}
	for (size_t i = 0; !plain && i < s->len;) {
		size_t n = s->len - i < WORD_BYTES ? s->len - i : WORD_BYTES;

		while (n > 1 && i + n < s->len && (s->p[i + n] & 0xc0) == 0x80)
			n--;
		if (i > 0)
			buf_puts(b, "\n ");
		buf_puts(b, "=?utf-8?B?");
		base64_encode(b, s->p + i, n);
		buf_puts(b, "?=");
		i += n;
	}
	buf_putc(b, '\n');
}

/* Whether a line of the len bytes at p passes MAX_LINE octets. */
static bool
long_line(const uint8_t *p, size_t len)
{
	size_t run = 0;

	for (size_t i = 0; i < len; i++)
		if (p[i] == '\n')
			run = 0;
		else if (++run > MAX_LINE)
			return true;
	return false;
}

/*
 * Appends the len bytes at p as quoted-printable (RFC 2045 6.7): '=',
 * bytes outside printable ASCII and a blank ending a line as =XX, lines
 * of at most 76 columns with soft breaks ("=" at the end).
 */
static void
quoted_printable(struct buf *b, const uint8_t *p, size_t len)
{
	size_t col = 0;

	for (size_t i = 0; i < len; i++) {
		uint8_t c = p[i];
		bool blank = c == ' ' || c == '\t',
		     lit = (c >= 33 && c <= 126 && c != '=') ||
			   (blank && i + 1 < len && p[i + 1] != '\n');

		if (c == '\n') {
			buf_putc(b, '\n');
			col = 0;
			continue;
		}
		if (col + (lit ? 1 : 3) > 75) {
			buf_puts(b, "=\n");
			col = 0;
		}
		if (lit)
			buf_putc(b, (char)c);
		else
			buf_printf(b, "=%02X", c);
		col += lit ? 1 : 3;
	}
}

/* The body of the alarm al of event ev (kind, names: the caller's),
 * into t; s is scratch for its paragraphs. */
static void
body(struct buf *t, struct buf *s, const struct alarmmail *m, json_object *al,
     json_object *ctx, const char *kind, const char *verb)
{
	const char *name = str(al, "rule_name"), *sev = str(al, "severity"),
		   *fac = str(ctx, "facility"), *dev = str(ctx, "device"),
		   *dev_id = str(al, "device_id"), *state = str(al, "state"),
		   *id = str(al, "id"), *seen = str(al, "first_seen_at"),
		   *msg = str(al, "message");
	json_object *rule = NULL;
	double v;

	json_object_object_get_ex(ctx, "rule", &rule);
	restart(s);
	buf_printf(s, "The %s alarm \"", sev != NULL ? sev : "");
	clean(s, name != NULL ? name : "");
	buf_printf(s, "\" was %s", verb);
	if (fac != NULL) {
		buf_puts(s, " in facility ");
		clean(s, fac);
	}
	buf_putc(s, '.');
	paragraph(t, "", 0, s);
	buf_putc(t, '\n');

	restart(s);
	condition(s, kind, rule, true);
	buf_puts(s, " (a ");
	clean(s, kind);
	buf_puts(s, " rule)");
	paragraph(t, "What:", LABEL, s);

	restart(s);
	buf_puts(s, "facility ");
	clean(s, fac != NULL ? fac : "(unknown)");
	if (dev_id != NULL) {
		buf_puts(s, ", device ");
		if (dev != NULL) {
			clean(s, dev);
			buf_puts(s, " (");
		}
		clean(s, dev_id);
		buf_puts(s, dev != NULL ? ")" : "");
	} else
		buf_puts(s, " as a whole (no device)");
	if (strcmp(kind, "threshold") == 0 &&
	    str(rule, "stream_name") != NULL) {
		buf_puts(s, ", stream ");
		clean(s, str(rule, "stream_name"));
	}
	paragraph(t, "Where:", LABEL, s);

	restart(s);
	if (num(al, "value", &v))
		buf_printf(s, "%.7g, ", v);
	buf_puts(s, "first seen at ");
	utc(s, seen != NULL ? seen : "(unknown)");
	paragraph(t, "Value:", LABEL, s);

	restart(s);
	clean(s, state != NULL ? state : "(unknown)");
	buf_puts(s, ", id ");
	clean(s, id != NULL ? id : "(unknown)");
	paragraph(t, "Alarm:", LABEL, s);

	if (msg != NULL) {
		restart(s);
		clean(s, msg);
		paragraph(t, "Note:", LABEL, s);
	}

	restart(s);
	buf_puts(s, "Acknowledge or clear it on the console's Alarms page, "
		    "or with \"xmhub alarm ack ID\" and \"xmhub alarm clear "
		    "ID\".");
	buf_putc(t, '\n');
	paragraph(t, "", 0, s);
	buf_puts(t, "\nThe event, as the webhooks get it:\n");
	buf_puts(t, m->event);
	buf_putc(t, '\n');
}

bool
alarmmail_format(const struct alarmmail *m, struct buf *out)
{
	char detail[128];
	json_object *ev = NULL, *ctx = NULL, *al = NULL, *rule = NULL;
	struct buf subj, text, scratch;
	const char *type, *kind, *name, *sev, *fac, *ev_id;
	bool ok = false, qp;

	buf_init(&subj, 0);
	buf_init(&text, 0);
	buf_init(&scratch, 0);
	ev = jsonin_parse(m->event, strlen(m->event), detail, sizeof(detail));
	if (!json_object_object_get_ex(ev, "alarm", &al) ||
	    !json_object_is_type(al, json_type_object))
		goto out;
	/* Without the context, the text lacks names, not its facts. */
	if (m->context != NULL)
		ctx = jsonin_parse(m->context, strlen(m->context), detail,
				   sizeof(detail));
	json_object_object_get_ex(ctx, "rule", &rule);
	type = str(ev, "type");
	kind = str(al, "kind");
	name = str(al, "rule_name");
	sev = str(al, "severity");
	fac = str(ctx, "facility");
	ev_id = str(ev, "id");
	if (type == NULL || kind == NULL)
		goto out;
	if (strncmp(type, "alarm.", 6) == 0)
		type += 6;

	buf_puts(&subj, "[xmhub] ");
	clean(&subj, sev != NULL ? sev : "");
	buf_puts(&subj, " alarm ");
	clean(&subj, type);
	buf_puts(&subj, ": ");
	clean(&subj, name != NULL ? name : "");
	buf_puts(&subj, " - ");
	condition(&subj, kind, rule, false);
	if (fac != NULL) {
		buf_puts(&subj, " (");
		clean(&subj, fac);
		buf_putc(&subj, ')');
	}
	body(&text, &scratch, m, al, ctx, kind, type);
	qp = long_line(text.p, text.len);

	buf_puts(out, "To: ");
	clean(out, m->to);
	buf_putc(out, '\n');
	subject(out, &subj);
	date(out, m->now);
	buf_puts(out, "Message-ID: <alarm.");
	clean(out, m->id);
	buf_putc(out, '@');
	clean(out, m->domain);
	buf_puts(out, ">\nMIME-Version: 1.0\n"
		      "Content-Type: text/plain; charset=utf-8\n"
		      "Content-Transfer-Encoding: ");
	buf_puts(out, qp ? "quoted-printable\n" : "8bit\n");
	buf_puts(out, "X-Xmhub-Event: ");
	clean(out, ev_id != NULL ? ev_id : "");
	buf_puts(out, "\n\n");
	if (qp)
		quoted_printable(out, text.p, text.len);
	else
		buf_append(out, text.p, text.len);
	ok = !out->failed && !subj.failed && !text.failed && !scratch.failed;
out:
	json_object_put(ctx);
	json_object_put(ev);
	buf_free(&scratch);
	buf_free(&text);
	buf_free(&subj);
	return ok;
}
