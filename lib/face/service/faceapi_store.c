/* SPDX-License-Identifier: MIT */
/*
 * faceapi_store.c - runs kept in the database and the object store, and
 * their download URLs.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/auth.h"
#include "core/conf.h"
#include "face/service/faceapi_store.h"
#include "core/log.h"

/* Reads the 64 hex digits of path into key; false if absent or not such
 * a file. */
static bool
read_key(const char *path, char key[FACEAPI_URL_KEY_LEN + 1])
{
	char tmp[80];
	ssize_t n;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, tmp, sizeof(tmp));
	close(fd);
	if (n != 64 || strspn(tmp, "0123456789abcdef") < 64)
		return false;
	memcpy(key, tmp, 64);
	key[64] = '\0';
	return true;
}

/*
 * The URL key of FACE_API_STATE_DIR/url-secret into key, made when
 * missing: a new
 * key is written to a temporary file and linked to the name, so that of
 * processes starting together exactly one key wins and all read it.
 */
static bool
state_key(const char *dir, char key[FACEAPI_URL_KEY_LEN + 1], char *detail,
	  size_t dlen)
{
	char path[FACEAPI_PATH_MAX + 32], tmp[FACEAPI_PATH_MAX + 48], hex[65];
	unsigned char raw[32];
	int fd;
	bool ok;

	snprintf(path, sizeof(path), "%s/url-secret", dir);
	if (read_key(path, key))
		return true;
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		snprintf(detail, dlen, "no random bytes for the URL key");
		return false;
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(hex + 2 * i, 3, "%02x", raw[i]);
	snprintf(tmp, sizeof(tmp), "%s/.url-secret.%ld", dir, (long)getpid());
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) <
	    0) {
		snprintf(detail, dlen, "%s: %s", tmp, strerror(errno));
		return false;
	}
	ok = write(fd, hex, 64) == 64;
	ok = close(fd) == 0 && ok;
	if (ok && link(tmp, path) < 0 && errno != EEXIST)
		ok = false;
	unlink(tmp);
	if (!ok || !read_key(path, key)) {
		snprintf(detail, dlen, "%s: cannot be made", path);
		return false;
	}
	return true;
}

/* A second store whose S3 endpoint is FACE_API_S3_PUBLIC_ENDPOINT, for
 * presigned URLs that clients outside reach. */
static bool
open_public(struct faceapi *f, char *detail, size_t dlen)
{
	const char *pub = conf_get("FACE_API_S3_PUBLIC_ENDPOINT");
	char *inner;

	if (pub == NULL || store_is_fs(f->store))
		return true;
	if ((inner = strdup(conf_str("XMHUB_S3_ENDPOINT", ""))) == NULL)
		return false;
	setenv("XMHUB_S3_ENDPOINT", pub, 1);
	f->public = store_open_env(detail, dlen);
	setenv("XMHUB_S3_ENDPOINT", inner, 1);
	free(inner);
	return f->public != NULL;
}

bool
faceapi_store_open(struct faceapi *f, char *detail, size_t dlen)
{
	if (!f->conf.storage)
		return true;
	if ((f->db = db_new(f->conf.database_url)) == NULL) {
		snprintf(detail, dlen, "out of memory");
		return false;
	}
	if ((f->store = store_open_env(detail, dlen)) == NULL ||
	    !open_public(f, detail, dlen))
		return false;
	if (f->conf.url_secret != NULL)
		f->url_key = f->conf.url_secret;
	else if (state_key(f->conf.state_dir, f->url_key_made, detail, dlen))
		f->url_key = f->url_key_made;
	else
		return false;
	return true;
}

void
faceapi_store_close(struct faceapi *f)
{
	store_close(f->public);
	store_close(f->store);
	db_free(f->db);
	f->public = f->store = NULL;
	f->db = NULL;
}

void
faceapi_store_sign(const char *key, const char *kind, const char *id,
		   long long expires, char out[FACEAPI_SIG_HEX])
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	char msg[128];
	int n;

	n = snprintf(msg, sizeof(msg), "%s/%s\n%lld", kind, id, expires);
	out[0] = '\0';
	if (HMAC(EVP_sha256(), key, (int)strlen(key), (unsigned char *)msg,
		 (size_t)n, mac, &len) == NULL)
		return;
	for (unsigned int i = 0; i < len && i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", mac[i]);
}

void
faceapi_store_redirect(struct app_ctx *ctx, const char *kind, const char *id,
		       const char *key)
{
	struct faceapi *svc = faceapi_of(ctx);
	char url[2048], sig[FACEAPI_SIG_HEX];
	long long expires = (long long)time(NULL) + svc->conf.url_ttl;
	struct store *st = svc->public ? svc->public : svc->store;

	if (store_is_fs(svc->store)) {
		faceapi_store_sign(svc->url_key, kind, id, expires, sig);
		snprintf(url, sizeof(url),
			 "/api/v1/files/%s/%s?expires=%lld&signature=%s", kind,
			 id, expires, sig);
	} else if (!store_presign_get(st, key, (unsigned)svc->conf.url_ttl, url,
				      sizeof(url))) {
		http_error(ctx->resp, 500, "no download URL could be made");
		return;
	}
	http_header(ctx->resp, "Location", "%s", url);
	http_no_store(ctx->resp);
	http_error(ctx->resp, 302, "see %s", url);
}

bool
faceapi_store_verify(struct app_ctx *ctx, const char *kind, const char *id)
{
	struct faceapi *svc = faceapi_of(ctx);
	const char *exp = http_query(ctx->req, "expires");
	const char *sig = http_query(ctx->req, "signature");
	char want[FACEAPI_SIG_HEX], *end;
	long long expires;

	if (exp == NULL || sig == NULL || *exp < '0' || *exp > '9') {
		http_error(ctx->resp, 403, "a signed download link is needed");
		return false;
	}
	expires = strtoll(exp, &end, 10);
	faceapi_store_sign(svc->url_key, kind, id, expires, want);
	if (*end != '\0' || want[0] == '\0' || !auth_equal(want, sig)) {
		http_error(ctx->resp, 403, "invalid download signature");
		return false;
	}
	if (expires < (long long)time(NULL)) {
		http_error(ctx->resp, 403, "the download link has expired");
		return false;
	}
	return true;
}

static const char image_sql[] =
	"INSERT INTO face_images (id, filename, content_type, size_bytes, "
	"width, height, object_key) VALUES ($1::uuid, $2, $3, $4::bigint, "
	"$5::integer, $6::integer, $7)";

static const char job_sql[] =
	"INSERT INTO face_jobs (id, image_id, job_type, method, strength, "
	"padding, output_format, quality, confidence_threshold, "
	"nms_threshold, max_faces, model, face_count, detections, "
	"inference_ms, total_ms, output_key, output_content_type, "
	"output_bytes, api_key_id) VALUES ($1::uuid, $2::uuid, $3, $4, "
	"$5::integer, $6::float8, $7, $8::integer, $9::float8, $10::float8, "
	"$11::integer, $12, $13::integer, $14::jsonb, $15::float8, "
	"$16::float8, $17, $18, $19::bigint, $20::uuid)";

/* Inserts the two rows in one transaction. */
static enum db_status
insert_rows(struct app_ctx *ctx, const struct faceapi_upload *up,
	    const struct faceapi_result *r, const char *img_key,
	    const char *out_key, const struct buf *output,
	    enum face_fmt out_fmt, const char *key_id)
{
	const struct faceapi_params *p = r->p;
	char size[24], w[16], h[16], str[16], pad[32], q[16], conf[32], nms[32],
		maxf[24], count[24], inf[32], tot[32], outb[24];
	const char *iparams[7], *jparams[20];
	json_object *dets = faceapi_detections(r);
	PGresult *res = NULL;
	enum db_status st;

	snprintf(size, sizeof(size), "%zu", r->input_bytes);
	snprintf(w, sizeof(w), "%u", r->probe.width);
	snprintf(h, sizeof(h), "%u", r->probe.height);
	iparams[0] = r->image_id;
	iparams[1] = up->filename[0] != '\0' ? up->filename : NULL;
	iparams[2] = face_fmt_mime(r->probe.fmt);
	iparams[3] = size;
	iparams[4] = w;
	iparams[5] = h;
	iparams[6] = img_key;
	snprintf(str, sizeof(str), "%d", p->strength);
	snprintf(pad, sizeof(pad), "%.17g", p->padding);
	snprintf(q, sizeof(q), "%d", p->quality);
	snprintf(conf, sizeof(conf), "%.17g", p->confidence);
	snprintf(nms, sizeof(nms), "%.17g", p->nms);
	snprintf(maxf, sizeof(maxf), "%ld", p->max_faces);
	snprintf(count, sizeof(count), "%zu", r->n);
	snprintf(inf, sizeof(inf), "%.3f", r->inference_ms);
	snprintf(tot, sizeof(tot), "%.3f", r->total_ms);
	jparams[0] = r->job_id;
	jparams[1] = r->image_id;
	jparams[2] = output != NULL ? "mask" : "detect";
	jparams[3] = output != NULL ? faceapi_method_name(p->method) : NULL;
	jparams[4] = output != NULL ? str : NULL;
	jparams[5] = output != NULL ? pad : NULL;
	jparams[6] = output != NULL ? face_fmt_name(out_fmt) : NULL;
	jparams[7] = output != NULL ? q : NULL;
	jparams[8] = conf;
	jparams[9] = nms;
	jparams[10] = maxf;
	jparams[11] = r->model;
	jparams[12] = count;
	jparams[13] =
		json_object_to_json_string_ext(dets, JSON_C_TO_STRING_PLAIN);
	jparams[14] = inf;
	jparams[15] = tot;
	jparams[16] = out_key;
	jparams[17] = output != NULL ? face_fmt_mime(out_fmt) : NULL;
	if (output != NULL)
		snprintf(outb, sizeof(outb), "%zu", output->len);
	jparams[18] = output != NULL ? outb : NULL;
	jparams[19] = key_id[0] != '\0' ? key_id : NULL;
	if ((st = db_begin(ctx->db)) != DB_OK)
		goto out;
	if ((st = db_query(ctx->db, &res, image_sql, 7, iparams)) == DB_OK) {
		PQclear(res);
		res = NULL;
		st = db_query(ctx->db, &res, job_sql, 20, jparams);
	}
	st = st == DB_OK ? db_commit(ctx->db) : (db_rollback(ctx->db), st);
out:
	PQclear(res);
	json_object_put(dets);
	return st;
}

bool
faceapi_store_record(struct app_ctx *ctx, const struct faceapi_upload *up,
		     struct faceapi_result *r, const struct buf *output,
		     enum face_fmt out_fmt, const char *key_id)
{
	struct faceapi *svc = faceapi_of(ctx);
	char img_key[128], out_key[128], detail[256];
	enum db_status st;

	if (!auth_uuid(r->image_id) || !auth_uuid(r->job_id)) {
		http_error(ctx->resp, 500, "no random bytes");
		goto fail;
	}
	snprintf(img_key, sizeof(img_key), "face/images/%s/original",
		 r->image_id);
	snprintf(out_key, sizeof(out_key), "face/jobs/%s/output", r->job_id);
	if (store_put_buf(svc->store, img_key, up->image.p, up->image.len,
			  face_fmt_mime(r->probe.fmt), detail,
			  sizeof(detail)) != STORE_OK ||
	    (output != NULL &&
	     store_put_buf(svc->store, out_key, output->p, output->len,
			   face_fmt_mime(out_fmt), detail,
			   sizeof(detail)) != STORE_OK)) {
		log_error("face: storing run: %s", detail);
		http_error(ctx->resp, 503, "the object store is unavailable");
		goto undo;
	}
	st = insert_rows(ctx, up, r, img_key, output != NULL ? out_key : NULL,
			 output, out_fmt, key_id);
	if (st == DB_OK)
		return true;
	app_db_error(ctx, st);
undo:
	store_delete(svc->store, img_key, detail, sizeof(detail));
	store_delete(svc->store, out_key, detail, sizeof(detail));
fail:
	r->image_id[0] = r->job_id[0] = '\0';
	return false;
}
