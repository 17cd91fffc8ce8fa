/* SPDX-License-Identifier: MIT */
/*
 * t/unit/multipart.c - the multipart/form-data push parser
 * (lib/codec/multipart.h): sample bodies fed whole, byte by byte and split at
 * every position (and at every pair of positions) give the same callbacks;
 * malformed bodies fail the same way wherever they are split; the boundary is
 * read from Content-Type values.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codec/buf.h"
#include "codec/multipart.h"
#include "mprec.h"
#include "tap.h"

/* The expected record of a part's start, content and end. */
static void
exp_begin(struct buf *b, const char *name, const char *filename,
	  const char *type)
{
	buf_append(b, "\\B", 2);
	mprec_str(b, name);
	mprec_str(b, filename);
	mprec_str(b, type);
}

static void
exp_data(struct buf *b, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\\')
			buf_putc(b, '\\');
		buf_putc(b, p[i]);
	}
}

static void
exp_end(struct buf *b)
{
	buf_append(b, "\\E", 2);
}

static bool
same_log(const struct buf *got, const struct buf *want)
{
	return got->len == want->len &&
	       (got->len == 0 || memcmp(got->p, want->p, got->len) == 0);
}

/*
 * Parses body whole, then byte by byte, then split once at every
 * position and (when small enough) twice at every pair: all runs must
 * be the same; the whole run is left in *whole (caller frees).
 */
static bool
all_splits(const char *what, const char *boundary, const char *body, size_t n,
	   struct mprun *whole)
{
	struct mprun r;
	size_t *cuts = calloc(n + 1, sizeof(*cuts)), c2[2];
	bool same = true;

	if (cuts == NULL)
		abort();
	mprun(whole, boundary, body, n, NULL, 0, -1);
	for (size_t i = 0; i < n; i++)
		cuts[i] = i + 1;
	mprun(&r, boundary, body, n, cuts, n, -1);
	same &= mprun_same(whole, &r);
	buf_free(&r.rec.log);
	for (size_t k = 0; k <= n && same; k++) {
		mprun(&r, boundary, body, n, &k, 1, -1);
		same &= mprun_same(whole, &r);
		if (!same)
			diag("%s: differs when split at %zu", what, k);
		buf_free(&r.rec.log);
	}
	for (size_t i = 0; n <= 400 && i <= n && same; i++)
		for (size_t j = i; j <= n && same; j++) {
			c2[0] = i;
			c2[1] = j;
			mprun(&r, boundary, body, n, c2, 2, -1);
			same &= mprun_same(whole, &r);
			if (!same)
				diag("%s: differs when split at %zu, %zu", what,
				     i, j);
			buf_free(&r.rec.log);
		}
	free(cuts);
	ok(same,
	   "%s: the same callbacks whole, byte by byte and split "
	   "anywhere",
	   what);
	ok(!whole->rec.bad_order, "%s: callbacks in order", what);
	return same;
}

/* A body that must parse into want, however it is split. */
static void
good(const char *what, const char *boundary, const char *body, size_t n,
     const struct buf *want)
{
	struct mprun r;

	all_splits(what, boundary, body, n, &r);
	is_int(r.st, MULTIPART_OK, "%s: parses", what);
	if (!ok(same_log(&r.rec.log, want), "%s: the parts and content", what))
		diag("got %zu bytes of record, want %zu", r.rec.log.len,
		     want->len);
	buf_free(&r.rec.log);
}

/* A body that must fail with an error containing why. */
static void
bad(const char *what, const char *boundary, const char *body, size_t n,
    const char *why)
{
	struct mprun r;

	all_splits(what, boundary, body, n, &r);
	is_int(r.st, MULTIPART_ERROR, "%s: an error", what);
	if (!ok(r.err != NULL && strstr(r.err, why) != NULL, "%s: says '%s'",
		what, why))
		diag("error: %s", r.err != NULL ? r.err : "(none)");
	buf_free(&r.rec.log);
}

#define BODY(s) (s), sizeof(s) - 1

/* One part as the record shows it: data NULL for none. */
struct part {
	const char *name, *filename, *type, *data;
};

/* Nested rows of good_bodies[], written like calls so that clang-format
 * packs them. */
#define PART(name, filename, type, data)                                       \
	{                                                                      \
		name, filename, type, data                                     \
	}
#define PARTS(...)                                                             \
	{                                                                      \
		__VA_ARGS__                                                    \
	}
#define NO_PARTS PARTS(PART(NULL, NULL, NULL, NULL))

/* Bodies that parse, and the parts in them (up to a NULL name). */
static const struct {
	const char *what, *boundary, *body;
	size_t n;
	struct part parts[4];
} good_bodies[] = {
	/* Preamble, a text field, a file whose content looks like the
	 * delimiter in many ways, an epilogue. */
	{"preamble, field, file, epilogue", "b0b",
	 BODY("preamble --b0b\r\n--b0 x\r\n"
	      "--b0b\r\n"
	      "Content-Disposition: form-data; name=\"metadata\"\r\n"
	      "\r\n"
	      "{\"a\": 1}\r\n"
	      "--b0b\r\n"
	      "content-disposition: FORM-DATA ;NAME=file; "
	      "filename=\"take \\\"one\\\" \\\\ .wav\"\r\n"
	      "Content-Type: audio/wav\r\n"
	      "X-Other: ignored; \"\r\n"
	      "\r\n"
	      "RIFF\r\n--b0\r--\r\n-\r\n--\\\r\n--b\r\r\n"
	      "\r\n--b0b--\r\nepilogue\r\n--b0b\r\nstill epilogue"),
	 PARTS(PART("metadata", NULL, NULL, "{\"a\": 1}"),
	       PART("file", "take \"one\" \\ .wav", "audio/wav",
		    "RIFF\r\n--b0\r--\r\n-\r\n--\\\r\n--b\r\r\n"))},
	/* No preamble, blanks after delimiters, empty parts, a folded
	 * header, a quoted boundary with every bchar.  Unfolding keeps the
	 * blanks: CRLF becomes two spaces. */
	{"empty parts, padding, folding", "'()+_,-./:=? z",
	 BODY("--'()+_,-./:=? z \t\r\n"
	      "Content-Disposition: form-data; name=\"\"\r\n"
	      "Content-Type:text/plain;\r\n charset=utf-8 \r\n"
	      "\r\n"
	      "\r\n--'()+_,-./:=? z\r\n"
	      "Content-Disposition: form-data;\r\n\tname=tags; "
	      "filename=\"\"; filename*=UTF-8''x\r\n"
	      "\r\n"
	      "\r\n"
	      "\r\n--'()+_,-./:=? z\r\n"
	      "Content-Disposition: form-data; name=x\r\n"
	      "\r\n"
	      "-"
	      "\r\n--'()+_,-./:=? z--"),
	 PARTS(PART("", NULL, "text/plain;   charset=utf-8", NULL),
	       PART("tags", "", NULL, "\r\n"), PART("x", NULL, NULL, "-"))},
	/* The CRLF ending the header block doubles as the delimiter's. */
	{"header block straight into the delimiter", "q",
	 BODY("--q\r\nContent-Disposition: form-data; name=a\r\n"
	      "\r\n--q--"),
	 PARTS(PART("a", NULL, NULL, NULL))},
	/* No part at all. */
	{"only the close delimiter", "q", BODY("--q--\r\n"), NO_PARTS},
	{"a preamble and the close delimiter", "q", BODY("x\r\n--q--"),
	 NO_PARTS},
};

static void
test_good(void)
{
	struct buf w;

	buf_init(&w, 0);
	for (size_t i = 0; i < sizeof(good_bodies) / sizeof(good_bodies[0]);
	     i++) {
		const struct part *pt = good_bodies[i].parts;

		w.len = 0;
		for (; pt->name != NULL; pt++) {
			exp_begin(&w, pt->name, pt->filename, pt->type);
			if (pt->data != NULL)
				exp_data(&w, pt->data, strlen(pt->data));
			exp_end(&w);
		}
		good(good_bodies[i].what, good_bodies[i].boundary,
		     good_bodies[i].body, good_bodies[i].n, &w);
	}

	/* Binary content: NULs, CRs, every byte value. */
	{
		char body[600], data[256];
		size_t n = 0;

		for (int i = 0; i < 256; i++)
			data[i] = (char)(255 - i);
		n += (size_t)snprintf(body, sizeof(body),
				      "--zz\r\nContent-Disposition: "
				      "form-data; name=f; filename=b\r\n\r\n");
		memcpy(body + n, data, 256);
		n += 256;
		memcpy(body + n, "\r\n--zz--", 8);
		n += 8;
		w.len = 0;
		exp_begin(&w, "f", "b", NULL);
		exp_data(&w, data, 256);
		exp_end(&w);
		good("every byte value", "zz", body, n, &w);
	}
	buf_free(&w);
}

/* Malformed bodies (boundary b), and what the error says. */
static const struct {
	const char *what, *body;
	size_t n;
	const char *why;
} bad_bodies[] = {
	{"no close delimiter", BODY("--b\r\n"), "ended before"},
	{"empty body", BODY(""), "ended before"},
	{"only a preamble", BODY("hello\r\n-"), "ended before"},
	{"cut in a part",
	 BODY("--b\r\nContent-Disposition: form-data; name=a\r\n\r\nab"),
	 "ended before"},
	{"cut in the close delimiter",
	 BODY("--b\r\nContent-Disposition: form-data; name=a\r\n\r\n"
	      "\r\n--b-"),
	 "ended before"},
	{"a longer boundary in content",
	 BODY("--b\r\nContent-Disposition: form-data; name=a\r\n\r\n"
	      "x\r\n--bb\r\n--b--"),
	 "neither CRLF"},
	{"LF alone after a delimiter", BODY("--b\n\r\n--b--"), "neither CRLF"},
	{"CR without LF after a delimiter", BODY("--b\rx"), "CR without LF"},
	{"a single dash after a delimiter", BODY("--b-x"), "neither CRLF"},
	{"LF without CR in headers",
	 BODY("--b\r\nContent-Disposition: form-data; name=a\n\r\n"),
	 "LF without CR"},
	{"CR without LF in headers",
	 BODY("--b\r\nContent-Disposition: form-data; name=a\rx"),
	 "CR without LF"},
	{"NUL in headers", BODY("--b\r\nContent-\0"), "NUL"},
	{"no headers", BODY("--b\r\n\r\nx\r\n--b--"),
	 "without Content-Disposition"},
	{"no Content-Disposition",
	 BODY("--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--"),
	 "without Content-Disposition"},
	{"attachment",
	 BODY("--b\r\nContent-Disposition: attachment; name=a\r\n\r\n"
	      "\r\n--b--"),
	 "not form-data"},
	{"no name",
	 BODY("--b\r\nContent-Disposition: form-data; filename=a\r\n"
	      "\r\n\r\n--b--"),
	 "has no name"},
	{"two names",
	 BODY("--b\r\nContent-Disposition: form-data; name=a; name=b\r\n"
	      "\r\n\r\n--b--"),
	 "two name"},
	{"two filenames",
	 BODY("--b\r\nContent-Disposition: form-data; name=a; "
	      "filename=x; FILENAME=y\r\n\r\n\r\n--b--"),
	 "two filename"},
	{"two Content-Disposition fields",
	 BODY("--b\r\nContent-Disposition: form-data; name=a\r\n"
	      "Content-Disposition: form-data; name=a\r\n\r\n\r\n--b--"),
	 "two Content-Disposition"},
	{"two Content-Type fields",
	 BODY("--b\r\nContent-Disposition: form-data; name=a\r\n"
	      "Content-Type: a/b\r\ncontent-type: a/b\r\n\r\n\r\n--b--"),
	 "two Content-Type"},
	{"unterminated quoted string",
	 BODY("--b\r\nContent-Disposition: form-data; name=\"a\r\n"
	      "\r\n\r\n--b--"),
	 "unterminated"},
	{"control character in a quoted string",
	 BODY("--b\r\nContent-Disposition: form-data; name=\"a\x01\"\r\n"
	      "\r\n\r\n--b--"),
	 "control character"},
	{"parameter without a value",
	 BODY("--b\r\nContent-Disposition: form-data; name\r\n"
	      "\r\n\r\n--b--"),
	 "without a value"},
	{"parameter without ';'",
	 BODY("--b\r\nContent-Disposition: form-data name=a\r\n"
	      "\r\n\r\n--b--"),
	 "malformed header parameter"},
	{"value not a token",
	 BODY("--b\r\nContent-Disposition: form-data; name=a b\r\n"
	      "\r\n\r\n--b--"),
	 "malformed header parameter"},
	{"header line without a colon",
	 BODY("--b\r\nContent-Disposition: form-data; name=a\r\n"
	      "Nonsense\r\n\r\n\r\n--b--"),
	 "malformed part header line"},
	{"folded first header line",
	 BODY("--b\r\n Content-Disposition: form-data; name=a\r\n"
	      "\r\n\r\n--b--"),
	 "malformed part header line"},
	{"malformed part Content-Type",
	 BODY("--b\r\nContent-Disposition: form-data; name=a\r\n"
	      "Content-Type: audio\r\n\r\n\r\n--b--"),
	 "Content-Type is malformed"},
	{"8-bit part Content-Type",
	 BODY("--b\r\nContent-Disposition: form-data; name=a\r\n"
	      "Content-Type: audio/w\xc3\xa4v\r\n\r\n\r\n--b--"),
	 "Content-Type is malformed"},
};

static void
test_bad(void)
{
	static const char cd[] = "Content-Disposition: form-data; name=a\r\n";
	char big[MULTIPART_HEADER_MAX + 200], name[400];
	int n;

	for (size_t i = 0; i < sizeof(bad_bodies) / sizeof(bad_bodies[0]); i++)
		bad(bad_bodies[i].what, "b", bad_bodies[i].body,
		    bad_bodies[i].n, bad_bodies[i].why);

	/* Bounds: the header block, the name, the filename. */
	n = snprintf(big, sizeof(big), "--b\r\n%sX-Pad: ", cd);
	memset(big + n, 'p', sizeof(big) - (size_t)n);
	bad("a header block over the limit", "b", big, sizeof(big),
	    "longer than 8192");
	/* The block starts after "--b\r\n" and ends with CRLF CRLF. */
	for (int extra = 0; extra < 2; extra++) {
		struct mprun r;

		n = snprintf(big, sizeof(big), "--b\r\n%sX-Pad: ", cd);
		memset(big + n, 'p', sizeof(big) - (size_t)n);
		n = 5 + MULTIPART_HEADER_MAX - 4 + extra;
		n += snprintf(big + n, sizeof(big) - (size_t)n,
			      "\r\n\r\nx\r\n--b--");
		mprun(&r, "b", big, (size_t)n, NULL, 0, -1);
		is_int(r.st, extra ? MULTIPART_ERROR : MULTIPART_OK,
		       "a header block of %d bytes",
		       MULTIPART_HEADER_MAX + extra);
		buf_free(&r.rec.log);
	}
	memset(name, 'n', sizeof(name));
	n = snprintf(big, sizeof(big),
		     "--b\r\nContent-Disposition: form-data; name=%.*s\r\n"
		     "\r\n\r\n--b--",
		     MULTIPART_NAME_MAX + 1, name);
	bad("a name of 256 bytes", "b", big, (size_t)n, "longer than 255");
	n = snprintf(big, sizeof(big),
		     "--b\r\nContent-Disposition: form-data; name=a; "
		     "filename=\"%.*s%.*s%.*s\"\r\n\r\n\r\n--b--",
		     400, name, 400, name, 225, name);
	bad("a filename of 1025 bytes", "b", big, (size_t)n,
	    "longer than 1024");
	n = snprintf(big, sizeof(big),
		     "--b\r\nContent-Disposition: form-data; name=\"%.*s\"; "
		     "filename=\"%.*s%.*s%.*s\"\r\n\r\n\r\n--b--",
		     MULTIPART_NAME_MAX, name, 400, name, 400, name, 224, name);
	{
		struct mprun r;

		mprun(&r, "b", big, (size_t)n, NULL, 0, -1);
		is_int(r.st, MULTIPART_OK,
		       "a name of 255 and a filename of 1024 bytes");
		buf_free(&r.rec.log);
	}
}

/* A callback's non-zero return stops the parser for good. */
static void
test_stop(void)
{
	static const char body[] =
		"--b\r\nContent-Disposition: form-data; name=a\r\n\r\nxyz"
		"\r\n--b\r\nContent-Disposition: form-data; name=c\r\n\r\n"
		"\r\n--b--";
	static const char *what[] = {"at the first begin", "at data",
				     "at the first end", "at the second begin"};

	for (long at = 0; at < 4; at++) {
		struct mprec rec;
		struct multipart mp;
		enum multipart_status st;

		mprec_init(&rec, at);
		multipart_init(&mp, "b", &mprec_cb, &rec);
		st = multipart_feed(&mp, body, sizeof(body) - 1);
		is_int(st, MULTIPART_STOPPED, "stop %s: STOPPED", what[at]);
		is_int(rec.events, at + 1, "stop %s: no callback after",
		       what[at]);
		is_int(multipart_feed(&mp, "x", 1), MULTIPART_STOPPED,
		       "stop %s: feed after it", what[at]);
		is_int(multipart_finish(&mp), MULTIPART_STOPPED,
		       "stop %s: finish after it", what[at]);
		ok(multipart_error(&mp) == NULL && !multipart_done(&mp),
		   "stop %s: no error, not done", what[at]);
		buf_free(&rec.log);
	}
}

/* After an error, nothing more is called back or accepted. */
static void
test_sticky(void)
{
	struct mprec rec;
	struct multipart mp;

	mprec_init(&rec, -1);
	multipart_init(&mp, "b", &mprec_cb, &rec);
	is_int(multipart_feed(&mp, BODY("--bX")), MULTIPART_ERROR,
	       "error at once");
	is_int(multipart_feed(&mp, BODY("\r\n--b\r\nContent-Disposition: "
					"form-data; name=a\r\n\r\n")),
	       MULTIPART_ERROR, "error stays");
	is_int(multipart_feed(&mp, "", 0), MULTIPART_ERROR,
	       "error stays on an empty feed");
	is_int(rec.events, 0, "nothing called back");
	ok(multipart_error(&mp) != NULL, "the error has a reason");
	buf_free(&rec.log);

	mprec_init(&rec, -1);
	multipart_init(&mp, "b", &mprec_cb, &rec);
	is_int(multipart_feed(&mp, BODY("--b--")), MULTIPART_OK, "close");
	ok(multipart_done(&mp), "done after the close delimiter");
	is_int(multipart_feed(&mp, BODY("\x01\x02--b\r\n")), MULTIPART_OK,
	       "epilogue taken");
	is_int(multipart_finish(&mp), MULTIPART_OK, "finish");
	ok(multipart_error(&mp) == NULL, "no error");
	is_int(rec.events, 0, "the epilogue is not called back");
	buf_free(&rec.log);
}

static void
test_boundary(void)
{
	static const struct {
		const char *ct, *want; /* want NULL: refused */
	} cases[] = {
		{"multipart/form-data; boundary=abc", "abc"},
		{"Multipart/Form-Data;boundary=\"a b\"", "a b"},
		{"multipart/form-data ; BOUNDARY = \"a\\bc\" ", "abc"},
		{"multipart/form-data; charset=utf-8; boundary=z", "z"},
		{"multipart/form-data; boundary="
		 "----WebKitFormBoundary7MA4YWxkTrZu0gW",
		 "----WebKitFormBoundary7MA4YWxkTrZu0gW"},
		{"multipart/form-data; boundary=\"'()+_,-./:=? x\"",
		 "'()+_,-./:=? x"},
		{"multipart/form-data; boundary=1234567890123456789012345678901"
		 "234567890123456789012345678901234567890",
		 "1234567890123456789012345678901234567890123456789012345678"
		 "901234567890"},
		{"multipart/form-data; boundary=1234567890123456789012345678901"
		 "2345678901234567890123456789012345678901",
		 NULL},
		{"multipart/form-data; boundary=\"ab \"", NULL},
		{"multipart/form-data; boundary=\"\"", NULL},
		{"multipart/form-data; boundary=\"a@b\"", NULL},
		{"multipart/form-data; boundary=\"a\\\"b\"", NULL},
		{"multipart/form-data; boundary=a; boundary=a", NULL},
		{"multipart/form-data", NULL},
		{"multipart/form-data;", NULL},
		{"multipart/form-data boundary=a", NULL},
		{"multipart/form-data; boundary", NULL},
		{"multipart/form-data; boundary=\"a", NULL},
		{"multipart/mixed; boundary=a", NULL},
		{"multipart/form-dataX; boundary=a", NULL},
		{"application/json", NULL},
		{"", NULL},
	};
	char out[MULTIPART_BOUNDARY_MAX + 1], detail[160];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool r;

		detail[0] = '\0';
		r = multipart_boundary(cases[i].ct, out, detail,
				       sizeof(detail));
		if (cases[i].want != NULL)
			ok(r && strcmp(out, cases[i].want) == 0,
			   "boundary of '%s'", cases[i].ct);
		else
			ok(!r && detail[0] != '\0', "refused: '%s' (%s)",
			   cases[i].ct, detail);
	}
	ok(!multipart_boundary(NULL, out, detail, sizeof(detail)),
	   "refused: no Content-Type");
}

/* A big body in random pieces: the content comes out whole. */
static void
test_big(void)
{
	enum { N = 1 << 20 };
	char *body = malloc(N + 200), *data = malloc(N);
	uint64_t x = 88172645463325252ULL;
	size_t n, at = 0;
	struct mprec rec;
	struct multipart mp;
	enum multipart_status st = MULTIPART_OK;

	if (body == NULL || data == NULL)
		abort();
	/* Content rich in CR LF and dashes, and in prefixes of the
	 * delimiter that the q at its end breaks. */
	for (size_t i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		data[i] = "\r\n-xb"[x % 5];
	}
	n = (size_t)sprintf(body, "--xbxbq\r\nContent-Disposition: form-data; "
				  "name=f; filename=f\r\n\r\n");
	memcpy(body + n, data, N);
	n += N;
	n += (size_t)sprintf(body + n, "\r\n--xbxbq--\r\n");
	mprec_init(&rec, -1);
	multipart_init(&mp, "xbxbq", &mprec_cb, &rec);
	while (at < n && st == MULTIPART_OK) {
		size_t k;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k = x % 9000;
		if (k > n - at)
			k = n - at;
		st = multipart_feed(&mp, body + at, k);
		at += k;
	}
	is_int(multipart_finish(&mp), MULTIPART_OK,
	       "1 MiB in random pieces: parses");
	{
		struct buf want;

		buf_init(&want, 0);
		exp_begin(&want, "f", "f", NULL);
		exp_data(&want, data, N);
		exp_end(&want);
		ok(same_log(&rec.log, &want), "1 MiB in random pieces: the "
					      "content");
		buf_free(&want);
	}
	buf_free(&rec.log);
	free(body);
	free(data);
}

int
main(void)
{
	test_good();
	test_bad();
	test_stop();
	test_sticky();
	test_boundary();
	test_big();
	return tap_done();
}
