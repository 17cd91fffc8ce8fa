/* SPDX-License-Identifier: MIT */
/*
 * storage_s3.c - the S3 back end of lib/store/storage (libcurl, path-style
 * requests ENDPOINT/BUCKET/KEY signed with AWS Signature Version 4).
 *
 * Requests are signed by libcurl (CURLOPT_AWS_SIGV4), which takes the
 * payload hash from the x-amz-content-sha256 header we send: the real
 * SHA-256 for a PUT, the empty body's for the others.  curl signs the
 * query verbatim, so queries are written sorted and RFC 3986-encoded.
 * Presigned URLs are computed by lib/store/sigv4.
 *
 * A put is spooled to an unlinked temporary file under XMHUB_TMP_DIR
 * (memory stays bounded whatever the size; the file vanishes with the
 * process), hashed as it is written, and sent as one PUT with its length
 * at commit: S3 makes the object visible only once the PUT completes, so
 * an aborted or failed put leaves nothing under the key.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "codec/hex.h"
#include "store/sigv4.h"
#include "core/fdio.h"
#include "store/storage_be.h"

/* Bodies kept: an error's (for its <Code>) and a ListObjectsV2 page. */
#define ERROR_BODY_MAX 4096
#define LIST_BODY_MAX (8 * 1024 * 1024)
#define SECRET_MAX 200

struct s3_store {
	struct store base;
	CURL *curl;
	long page_keys;
	char *origin; /* scheme://authority */
	char *host;   /* the authority, as curl sends it in Host */
	char *path0;  /* endpoint path + "/" + bucket, e.g. "/b" */
	char *access_key, *secret_key, *region, *tmp_dir;
	char sigv4[128]; /* "aws:amz:REGION:s3" */
};

struct s3_put {
	struct store_put base;
	int fd; /* the spool, already unlinked */
	uint64_t size;
	EVP_MD_CTX *sha;
	char *key, *content_type;
};

/* One request and what its answer goes to. */
struct s3_req {
	struct s3_store *s;
	const char *method; /* GET, HEAD, PUT, DELETE */
	const char *path;   /* encoded: path0 + "/" + key */
	const char *query;  /* canonical query or "" */
	const char *payload_hash;
	const char *content_type; /* PUT */
	int fd;			  /* PUT: the body */
	uint64_t size;		  /* PUT: its length */
	/* GET: the range asked for and where its bytes go. */
	uint64_t off, len;
	bool ranged;
	int (*sink)(void *arg, const void *p, size_t n);
	void *arg;
	struct buf *body; /* a non-sink body (error or listing), bounded */
	/* Filled in. */
	long status;
	bool checked, to_sink, stopped;
	uint64_t skip;
};

static const struct store_ops s3_ops;

/* A copy of s or NULL. */
static char *
dup_str(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d != NULL) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

/* True for an S3 bucket name: 3-63 of [a-z0-9.-]. */
static bool
bucket_valid(const char *b)
{
	size_t n = strlen(b);

	if (n < 3 || n > 63)
		return false;
	for (; *b != '\0'; b++)
		if (!((*b >= 'a' && *b <= 'z') || (*b >= '0' && *b <= '9') ||
		      *b == '.' || *b == '-'))
			return false;
	return true;
}

static void
s3_close(struct store *st)
{
	struct s3_store *s = (struct s3_store *)st;

	if (s->curl != NULL)
		curl_easy_cleanup(s->curl);
	free(s->origin);
	free(s->host);
	free(s->path0);
	free(s->access_key);
	if (s->secret_key != NULL) {
		OPENSSL_cleanse(s->secret_key, strlen(s->secret_key));
		free(s->secret_key);
	}
	free(s->region);
	free(s->tmp_dir);
	free(s);
}

struct store *
store_s3_open(const struct store_s3_conf *c, char *detail, size_t dlen)
{
	struct s3_store *s;
	const char *auth, *slash;
	size_t plen;
	struct buf p;

	if (strncmp(c->endpoint, "http://", 7) == 0)
		auth = c->endpoint + 7;
	else if (strncmp(c->endpoint, "https://", 8) == 0)
		auth = c->endpoint + 8;
	else
		auth = NULL;
	if (auth == NULL || *auth == '\0' || *auth == '/' ||
	    strpbrk(c->endpoint, "?#@ \t\r\n") != NULL) {
		store_detail(detail, dlen,
			     "XMHUB_S3_ENDPOINT must be http(s)://host[:port]"
			     "[/path]");
		return NULL;
	}
	if (!bucket_valid(c->bucket)) {
		store_detail(detail, dlen,
			     "XMHUB_S3_BUCKET must be 3 to 63 of [a-z0-9.-]");
		return NULL;
	}
	if (strlen(c->secret_key) > SECRET_MAX || strlen(c->region) > 64 ||
	    strpbrk(c->region, ":/ ") != NULL) {
		store_detail(detail, dlen,
			     "XMHUB_S3_SECRET_KEY or XMHUB_S3_REGION is "
			     "malformed");
		return NULL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL)
		goto nomem;
	s->base.ops = &s3_ops;
	s->page_keys = c->page_keys;
	slash = strchr(auth, '/');
	if (slash == NULL)
		slash = auth + strlen(auth);
	/* The endpoint's path without trailing slashes, then the bucket. */
	for (plen = strlen(slash); plen > 0 && slash[plen - 1] == '/'; plen--)
		;
	buf_init(&p, 0);
	buf_printf(&p, "%.*s/%s", (int)plen, slash, c->bucket);
	buf_putc(&p, '\0');
	s->path0 = p.failed ? NULL : (char *)p.p;
	if (p.failed)
		buf_free(&p);
	s->origin = dup_str(c->endpoint, (size_t)(slash - c->endpoint));
	s->host = dup_str(auth, (size_t)(slash - auth));
	s->access_key = dup_str(c->access_key, strlen(c->access_key));
	s->secret_key = dup_str(c->secret_key, strlen(c->secret_key));
	s->region = dup_str(c->region, strlen(c->region));
	s->tmp_dir = dup_str(c->tmp_dir, strlen(c->tmp_dir));
	snprintf(s->sigv4, sizeof(s->sigv4), "aws:amz:%s:s3", c->region);
	if (s->path0 == NULL || s->origin == NULL || s->host == NULL ||
	    s->access_key == NULL || s->secret_key == NULL ||
	    s->region == NULL || s->tmp_dir == NULL)
		goto nomem;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (s->curl = curl_easy_init()) == NULL) {
		store_detail(detail, dlen, "cannot start libcurl");
		s3_close(&s->base);
		return NULL;
	}
	return &s->base;
nomem:
	store_detail(detail, dlen, "out of memory");
	if (s != NULL)
		s3_close(&s->base);
	return NULL;
}

/* Response bodies: to the sink (a GET's 2xx) or the bounded body. */
static size_t
on_body(char *p, size_t size, size_t nmemb, void *arg)
{
	struct s3_req *r = arg;
	size_t n = size * nmemb, k = 0;

	if (!r->checked) {
		r->checked = true;
		curl_easy_getinfo(r->s->curl, CURLINFO_RESPONSE_CODE,
				  &r->status);
		r->to_sink = r->sink != NULL &&
			     (r->status == 200 || r->status == 206);
		/* A server ignoring Range sends everything: skip to off. */
		r->skip = r->status == 200 && r->ranged ? r->off : 0;
	}
	if (!r->to_sink) {
		if (r->body != NULL)
			buf_append(r->body, p, n); /* bounded: sticky fail */
		return n;
	}
	if (r->skip > 0) {
		k = r->skip < n ? (size_t)r->skip : n;
		r->skip -= k;
	}
	if (n - k > r->len)
		n = k + (size_t)r->len;
	if (n > k) {
		if (r->sink(r->arg, p + k, n - k) != 0) {
			r->stopped = true;
			return 0; /* aborts the transfer */
		}
		r->len -= n - k;
	}
	return size * nmemb;
}

/* PUT bodies come from the spool. */
static size_t
on_read(char *p, size_t size, size_t nmemb, void *arg)
{
	struct s3_req *r = arg;
	ssize_t n;

	do
		n = read(r->fd, p, size * nmemb);
	while (n < 0 && errno == EINTR);
	return n < 0 ? CURL_READFUNC_ABORT : (size_t)n;
}

/* Rewinds the spool when curl must send the body again. */
static int
on_seek(void *arg, curl_off_t off, int origin)
{
	struct s3_req *r = arg;

	if (origin != SEEK_SET || lseek(r->fd, (off_t)off, SEEK_SET) < 0)
		return CURL_SEEKFUNC_CANTSEEK;
	return CURL_SEEKFUNC_OK;
}

/* The text of the <name> element in xml (length into *len), or NULL. */
static const char *
xml_elem(const char *xml, size_t xlen, const char *name, size_t *len,
	 const char **next)
{
	char open[64], close[64];
	const char *end = xml + xlen, *a, *b;
	size_t on, cn;

	on = (size_t)snprintf(open, sizeof(open), "<%s>", name);
	cn = (size_t)snprintf(close, sizeof(close), "</%s>", name);
	for (a = xml; a + on <= end; a++) {
		if (memcmp(a, open, on) != 0)
			continue;
		a += on;
		for (b = a; b + cn <= end; b++) {
			if (memcmp(b, close, cn) == 0) {
				*len = (size_t)(b - a);
				if (next != NULL)
					*next = b + cn;
				return a;
			}
		}
		return NULL;
	}
	return NULL;
}

/*
 * Runs r: STORE_OK on 2xx, STORE_NOT_FOUND on 404, STORE_ERROR + detail
 * otherwise (the S3 error code named).  r->status holds the HTTP status.
 */
static enum store_status
s3_do(struct s3_req *r, char *detail, size_t dlen)
{
	struct s3_store *s = r->s;
	CURL *c = s->curl;
	struct curl_slist *h = NULL, *t;
	struct buf url, err_body;
	char line[256], range[64], errbuf[CURL_ERROR_SIZE] = "";
	enum store_status st = STORE_ERROR;
	CURLcode cc;

	buf_init(&url, 0);
	buf_init(&err_body, ERROR_BODY_MAX);
	if (r->body == NULL)
		r->body = &err_body;
	buf_printf(&url, "%s%s%s%s", s->origin, r->path,
		   r->query[0] != '\0' ? "?" : "", r->query);
	buf_putc(&url, '\0');
	snprintf(line, sizeof(line), "x-amz-content-sha256: %s",
		 r->payload_hash);
	if (url.failed || (h = curl_slist_append(NULL, line)) == NULL) {
		store_detail(detail, dlen, "out of memory");
		goto out;
	}
	if (r->content_type != NULL) {
		snprintf(line, sizeof(line), "Content-Type: %s",
			 r->content_type);
		if ((t = curl_slist_append(h, line)) == NULL) {
			store_detail(detail, dlen, "out of memory");
			goto out;
		}
		h = t;
	}
	curl_easy_reset(c); /* keeps the connection cache */
	curl_easy_setopt(c, CURLOPT_URL, (const char *)url.p);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
	/* A stalled transfer fails rather than hang a request. */
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
	curl_easy_setopt(c, CURLOPT_AWS_SIGV4, s->sigv4);
	curl_easy_setopt(c, CURLOPT_USERNAME, s->access_key);
	curl_easy_setopt(c, CURLOPT_PASSWORD, s->secret_key);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	if (strcmp(r->method, "HEAD") == 0) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (strcmp(r->method, "PUT") == 0) {
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c, CURLOPT_READDATA, r);
		curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, on_seek);
		curl_easy_setopt(c, CURLOPT_SEEKDATA, r);
		curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE,
				 (curl_off_t)r->size);
	} else if (strcmp(r->method, "GET") != 0) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
	}
	if (r->ranged) {
		if (r->off + r->len == UINT64_MAX)
			snprintf(range, sizeof(range), "%llu-",
				 (unsigned long long)r->off);
		else
			snprintf(range, sizeof(range), "%llu-%llu",
				 (unsigned long long)r->off,
				 (unsigned long long)(r->off + r->len - 1));
		curl_easy_setopt(c, CURLOPT_RANGE, range);
	}
	cc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->stopped) {
		store_detail(detail, dlen, "reading stopped");
	} else if (cc != CURLE_OK) {
		store_detail(detail, dlen, "S3 request failed: %s",
			     errbuf[0] != '\0' ? errbuf
					       : curl_easy_strerror(cc));
	} else if (r->status == 404) {
		st = STORE_NOT_FOUND;
	} else if (r->status >= 200 && r->status <= 299) {
		st = STORE_OK;
	} else {
		size_t n = 0;
		const char *code = NULL;

		if (!r->body->failed)
			code = xml_elem((const char *)r->body->p, r->body->len,
					"Code", &n, NULL);
		store_detail(detail, dlen, "S3 answered %ld to %s%s%.*s",
			     r->status, r->method, code != NULL ? ": " : "",
			     code != NULL ? (int)(n < 64 ? n : 64) : 0,
			     code != NULL ? code : "");
	}
out:
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(h);
	buf_free(&url);
	buf_free(&err_body);
	if (r->body == &err_body)
		r->body = NULL;
	return st;
}

/* path0 + "/" + key, encoded, into p (caller frees with buf_free). */
static bool
object_path(const struct s3_store *s, const char *key, struct buf *p)
{
	buf_init(p, 0);
	buf_printf(p, "%s/", s->path0);
	sigv4_uri_encode(p, key, true);
	buf_putc(p, '\0');
	return !p->failed;
}

static struct store_put *
s3_put_begin(struct store *st, const char *key, const char *content_type,
	     char *detail, size_t dlen)
{
	struct s3_store *s = (struct s3_store *)st;
	struct s3_put *w;
	char tmp[PATH_MAX];

	/* A header value: no control characters, bounded. */
	for (const char *c = content_type; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f ||
		    c - content_type > 200) {
			store_detail(detail, dlen, "invalid content type");
			return NULL;
		}
	if ((w = calloc(1, sizeof(*w))) == NULL) {
		store_detail(detail, dlen, "out of memory");
		return NULL;
	}
	w->base.st = st;
	w->fd = -1;
	w->key = dup_str(key, strlen(key));
	w->content_type = dup_str(content_type, strlen(content_type));
	if (w->key == NULL || w->content_type == NULL ||
	    (w->sha = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(w->sha, EVP_sha256(), NULL) != 1) {
		store_detail(detail, dlen, "out of memory");
		goto fail;
	}
	if (snprintf(tmp, sizeof(tmp), "%s/xmhub-s3put-XXXXXX", s->tmp_dir) >=
	    (int)sizeof(tmp)) {
		store_detail(detail, dlen, "XMHUB_TMP_DIR: path too long");
		goto fail;
	}
	if ((w->fd = mkstemp(tmp)) < 0) {
		store_detail(detail, dlen,
			     "cannot create a spool file in %s: %s", s->tmp_dir,
			     strerror(errno));
		goto fail;
	}
	/* Unlinked at once: nothing to clean up whatever happens next. */
	unlink(tmp);
	fcntl(w->fd, F_SETFD, FD_CLOEXEC);
	return &w->base;
fail:
	w->base.st->ops->put_abort(&w->base);
	return NULL;
}

static enum store_status
s3_put_write(struct store_put *base, const void *p, size_t n)
{
	struct s3_put *w = (struct s3_put *)base;

	if (EVP_DigestUpdate(w->sha, p, n) != 1 ||
	    !fdio_write_full(w->fd, p, n))
		return STORE_ERROR;
	w->size += n;
	return STORE_OK;
}

static void
s3_put_abort(struct store_put *base)
{
	struct s3_put *w = (struct s3_put *)base;

	if (w->fd >= 0)
		close(w->fd);
	EVP_MD_CTX_free(w->sha);
	free(w->key);
	free(w->content_type);
	free(w);
}

/* Runs r on the object key (r->path is set here, for the call only). */
static enum store_status
object_do(struct s3_req *r, const char *key, char *detail, size_t dlen)
{
	struct buf path;
	enum store_status s = STORE_ERROR;

	if (object_path(r->s, key, &path)) {
		r->path = (const char *)path.p;
		s = s3_do(r, detail, dlen);
		r->path = NULL;
	} else {
		store_detail(detail, dlen, "out of memory");
	}
	buf_free(&path);
	return s;
}

static enum store_status
s3_put_commit(struct store_put *base, char *detail, size_t dlen)
{
	struct s3_put *w = (struct s3_put *)base;
	uint8_t md[EVP_MAX_MD_SIZE];
	char hex[2 * 32 + 1];
	unsigned mdlen = 0;
	enum store_status st = STORE_ERROR;
	struct s3_req r = {
		.s = (struct s3_store *)base->st,
		.method = "PUT",
		.query = "",
		.payload_hash = hex,
		.content_type = w->content_type,
		.fd = w->fd,
		.size = w->size,
	};

	if (EVP_DigestFinal_ex(w->sha, md, &mdlen) != 1 || mdlen != 32) {
		store_detail(detail, dlen, "cannot hash the object");
		goto out;
	}
	for (unsigned i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	if (lseek(w->fd, 0, SEEK_SET) != 0) {
		store_detail(detail, dlen, "cannot read the spool file: %s",
			     strerror(errno));
		goto out;
	}
	if ((st = object_do(&r, w->key, detail, dlen)) == STORE_NOT_FOUND) {
		store_detail(detail, dlen,
			     "S3 answered 404 to PUT (no bucket?)");
		st = STORE_ERROR;
	}
out:
	s3_put_abort(base);
	return st;
}

static enum store_status
s3_get(struct store *st, const char *key, uint64_t off, uint64_t len,
       int (*sink)(void *arg, const void *p, size_t n), void *arg, char *detail,
       size_t dlen)
{
	enum store_status s;
	struct s3_req r = {
		.s = (struct s3_store *)st,
		.method = "GET",
		.query = "",
		.payload_hash = SIGV4_EMPTY_SHA256,
		.off = off,
		.len = len,
		.ranged = off != 0 || off + len != UINT64_MAX,
		.sink = sink,
		.arg = arg,
	};

	s = object_do(&r, key, detail, dlen);
	/* 416: the range starts at or past the end, i.e. no bytes. */
	if (s == STORE_ERROR && r.status == 416 && !r.stopped)
		s = STORE_OK;
	return s;
}

static enum store_status
s3_size(struct store *st, const char *key, uint64_t *size, char *detail,
	size_t dlen)
{
	curl_off_t cl = -1;
	enum store_status s;
	struct s3_req r = {
		.s = (struct s3_store *)st,
		.method = "HEAD",
		.query = "",
		.payload_hash = SIGV4_EMPTY_SHA256,
	};

	if ((s = object_do(&r, key, detail, dlen)) != STORE_OK)
		return s;
	/* The handle keeps the answer's information until its next use. */
	curl_easy_getinfo(r.s->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
	if (cl < 0) {
		store_detail(detail, dlen, "S3 gave no Content-Length");
		return STORE_ERROR;
	}
	*size = (uint64_t)cl;
	return STORE_OK;
}

static enum store_status
s3_del(struct store *st, const char *key, char *detail, size_t dlen)
{
	enum store_status s;
	struct s3_req r = {
		.s = (struct s3_store *)st,
		.method = "DELETE",
		.query = "",
		.payload_hash = SIGV4_EMPTY_SHA256,
	};

	s = object_do(&r, key, detail, dlen);
	return s == STORE_NOT_FOUND ? STORE_OK : s;
}

/* Appends code point c as UTF-8; false (nothing appended) for a NUL, a
 * surrogate or a value past U+10FFFF. */
static bool
put_utf8(struct buf *out, unsigned long c)
{
	if (c == 0 || (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
		return false;
	if (c < 0x80) {
		buf_putc(out, (char)c);
	} else if (c < 0x800) {
		buf_putc(out, (char)(0xC0 | (c >> 6)));
		buf_putc(out, (char)(0x80 | (c & 0x3F)));
	} else if (c < 0x10000) {
		buf_putc(out, (char)(0xE0 | (c >> 12)));
		buf_putc(out, (char)(0x80 | ((c >> 6) & 0x3F)));
		buf_putc(out, (char)(0x80 | (c & 0x3F)));
	} else {
		buf_putc(out, (char)(0xF0 | (c >> 18)));
		buf_putc(out, (char)(0x80 | ((c >> 12) & 0x3F)));
		buf_putc(out, (char)(0x80 | ((c >> 6) & 0x3F)));
		buf_putc(out, (char)(0x80 | (c & 0x3F)));
	}
	return true;
}

/*
 * Decodes the character reference at p (n bytes, starting with '&') into
 * out: the five named entities and numeric ones (&#39; &#x27;, which
 * some servers write for quotes and control characters).  Returns the
 * bytes consumed, 0 when p holds no reference it can decode.
 */
static size_t
xml_ref(struct buf *out, const char *p, size_t n)
{
	static const struct {
		const char *ent;
		char c;
	} ents[] = {{"&amp;", '&'},
		    {"&lt;", '<'},
		    {"&gt;", '>'},
		    {"&quot;", '"'},
		    {"&apos;", '\''}};
	unsigned long c = 0;
	size_t i = 2;
	bool hex;

	for (size_t j = 0; j < sizeof(ents) / sizeof(ents[0]); j++) {
		size_t el = strlen(ents[j].ent);

		if (n >= el && memcmp(p, ents[j].ent, el) == 0) {
			buf_putc(out, ents[j].c);
			return el;
		}
	}
	if (n < 4 || p[1] != '#')
		return 0;
	hex = p[2] == 'x';
	i += hex;
	/* At most 8 digits, so c cannot overflow. */
	for (size_t start = i; i < n && i - start < 8; i++) {
		int d;

		if (p[i] >= '0' && p[i] <= '9')
			d = p[i] - '0';
		else if (hex && p[i] >= 'a' && p[i] <= 'f')
			d = p[i] - 'a' + 10;
		else if (hex && p[i] >= 'A' && p[i] <= 'F')
			d = p[i] - 'A' + 10;
		else
			break;
		c = c * (hex ? 16 : 10) + (unsigned long)d;
	}
	if (i == 2u + hex || i >= n || p[i] != ';' || !put_utf8(out, c))
		return 0;
	return i + 1;
}

/* Appends the XML text at p (n bytes) with its character references
 * decoded (a reference it cannot decode is kept as it is). */
static void
xml_text(struct buf *out, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t used = p[i] == '&' ? xml_ref(out, p + i, n - i) : 0;

		if (used > 0)
			i += used - 1;
		else
			buf_putc(out, p[i]);
	}
}

/*
 * Decodes the URL-encoded key in (encoding-type=url: %XX escapes, '+'
 * for a space, as AWS writes them) in place; false for a bad escape or
 * an escaped NUL, which no key holds.
 */
static bool
url_decode(struct buf *in)
{
	size_t i, o = 0;

	for (i = 0; i < in->len; i++) {
		uint8_t c = in->p[i];

		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			int hi, lo;

			if (in->len - i < 3)
				return false;
			hi = hex_value((char)in->p[i + 1]);
			lo = hex_value((char)in->p[i + 2]);
			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return false;
			c = (uint8_t)(hi << 4 | lo);
			i += 2;
		}
		in->p[o++] = c;
	}
	in->len = o;
	return true;
}

/*
 * Deletes every key listed in one ListObjectsV2 page (body); the next
 * continuation token into token ("" when the listing is complete).
 */
static enum store_status
delete_page(struct store *st, const struct buf *body, struct buf *token,
	    char *detail, size_t dlen)
{
	const char *x = (const char *)body->p, *end = x + body->len, *v;
	size_t n;
	enum store_status s = STORE_OK;
	bool url;

	/* Asked for encoding-type=url; a server that ignores it says
	 * nothing and sends the keys as XML text. */
	url = (v = xml_elem(x, body->len, "EncodingType", &n, NULL)) != NULL &&
	      n == 3 && memcmp(v, "url", 3) == 0;
	buf_free(token);
	if ((v = xml_elem(x, body->len, "IsTruncated", &n, NULL)) != NULL &&
	    n == 4 && memcmp(v, "true", 4) == 0) {
		if ((v = xml_elem(x, body->len, "NextContinuationToken", &n,
				  NULL)) == NULL) {
			store_detail(detail, dlen,
				     "S3 listing truncated without a token");
			return STORE_ERROR;
		}
		xml_text(token, v, n);
	}
	buf_putc(token, '\0');
	while (s == STORE_OK) {
		const char *contents, *next;
		size_t cn;
		struct buf key;
		bool bad;

		if ((contents = xml_elem(x, (size_t)(end - x), "Contents", &cn,
					 &next)) == NULL)
			break;
		x = next;
		if ((v = xml_elem(contents, cn, "Key", &n, NULL)) == NULL)
			continue;
		buf_init(&key, 0);
		xml_text(&key, v, n);
		/* A NUL would cut the key short: refused. */
		bad = !key.failed &&
		      (key.len == 0 || (url && !url_decode(&key)) ||
		       memchr(key.p, '\0', key.len) != NULL);
		buf_putc(&key, '\0');
		if (bad) {
			store_detail(detail, dlen,
				     "S3 listing: a malformed key");
			s = STORE_ERROR;
		} else if (key.failed || token->failed) {
			store_detail(detail, dlen, "out of memory");
			s = STORE_ERROR;
		} else {
			s = s3_del(st, (const char *)key.p, detail, dlen);
		}
		buf_free(&key);
	}
	return s;
}

static enum store_status
s3_del_prefix(struct store *st, const char *prefix, char *detail, size_t dlen)
{
	struct s3_store *s = (struct s3_store *)st;
	struct buf query, body, token, path;
	enum store_status status = STORE_ERROR;

	buf_init(&token, 0);
	buf_putc(&token, '\0');
	buf_init(&path, 0);
	buf_printf(&path, "%s", s->path0);
	buf_putc(&path, '\0');
	do {
		struct s3_req r = {
			.s = s,
			.method = "GET",
			.path = (const char *)path.p,
			.payload_hash = SIGV4_EMPTY_SHA256,
			.body = &body,
		};

		/* Sorted by name, every value encoded (curl signs it as is).
		 * encoding-type=url: keys come back %-encoded, so no XML
		 * character reference can be misread. */
		buf_init(&query, 0);
		buf_init(&body, LIST_BODY_MAX);
		if (token.p[0] != '\0') {
			buf_puts(&query, "continuation-token=");
			sigv4_uri_encode(&query, (const char *)token.p, false);
			buf_putc(&query, '&');
		}
		buf_printf(&query,
			   "encoding-type=url&list-type=2&max-keys=%ld&prefix=",
			   s->page_keys);
		sigv4_uri_encode(&query, prefix, false);
		buf_putc(&query, '\0');
		if (query.failed || path.failed) {
			store_detail(detail, dlen, "out of memory");
			status = STORE_ERROR;
		} else {
			r.query = (const char *)query.p;
			status = s3_do(&r, detail, dlen);
		}
		if (status == STORE_NOT_FOUND) {
			store_detail(detail, dlen, "S3: no such bucket");
			status = STORE_ERROR;
		} else if (status == STORE_OK && body.failed) {
			store_detail(detail, dlen, "S3 listing too large");
			status = STORE_ERROR;
		} else if (status == STORE_OK) {
			status = delete_page(st, &body, &token, detail, dlen);
		}
		buf_free(&query);
		buf_free(&body);
	} while (status == STORE_OK && !token.failed && token.p[0] != '\0');
	if (status == STORE_OK && token.failed) {
		store_detail(detail, dlen, "out of memory");
		status = STORE_ERROR;
	}
	buf_free(&token);
	buf_free(&path);
	return status;
}

static bool
s3_local_path(const struct store *st, const char *key, char *path, size_t len)
{
	(void)st, (void)key, (void)path, (void)len;
	return false;
}

static bool
s3_presign_get(struct store *st, const char *key, unsigned expires_s, char *url,
	       size_t len)
{
	struct s3_store *s = (struct s3_store *)st;
	struct sigv4_cred c = {s->access_key, s->secret_key, s->region, "s3"};
	struct buf path, out;
	bool ok = false;

	buf_init(&out, 0);
	if (object_path(s, key, &path) &&
	    sigv4_presign_get(&out, &c, time(NULL), expires_s, s->origin,
			      s->host, (const char *)path.p) &&
	    out.len < len) {
		memcpy(url, out.p, out.len);
		url[out.len] = '\0';
		ok = true;
	}
	buf_free(&path);
	buf_free(&out);
	return ok;
}

static const struct store_ops s3_ops = {
	.is_fs = false,
	.close = s3_close,
	.put_begin = s3_put_begin,
	.put_write = s3_put_write,
	.put_commit = s3_put_commit,
	.put_abort = s3_put_abort,
	.get = s3_get,
	.size = s3_size,
	.del = s3_del,
	.del_prefix = s3_del_prefix,
	.local_path = s3_local_path,
	.presign_get = s3_presign_get,
};
