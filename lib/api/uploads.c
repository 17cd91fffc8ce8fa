/* SPDX-License-Identifier: MIT */
/*
 * uploads.c - audio uploads.
 */
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/auth.h"
#include "core/conf.h"
#include "web/dbjson.h"
#include "domain/jobs.h"
#include "domain/quota.h"
#include "domain/upload.h"
#include "codec/jsonin.h"
#include "codec/multipart.h"
#include "web/page.h"
#include "web/route.h"
#include "web/scope.h"
#include "store/storage.h"
#include "api/uploads.h"
#include "codec/utf8.h"
#include "web/valid.h"
#include "core/log.h"

#define KEY_MAX 128 /* "{facility}/uploads/{upload}/original" */

/* The process's body limit (uploads_init). */
static long long max_bytes = UPLOADS_MAX_DEFAULT;

static bool gate(struct app_ctx *ctx);

bool
uploads_init(const char *name)
{
	char detail[256];

	if (!conf_get_int("XMHUB_MAX_UPLOAD_BYTES", &max_bytes)) {
		log_error("XMHUB_MAX_UPLOAD_BYTES must be a positive number of "
			  "bytes");
		return false;
	}
	if (!jobs_init(detail, sizeof(detail))) {
		log_error("%s", detail);
		return false;
	}
	app_gate(uploads_post, gate);
	return app_store_needed(name);
}

void
uploads_format(const char *filename, char out[UPLOADS_FORMAT_MAX + 1])
{
	const char *base = filename, *dot;
	size_t n;

	out[0] = '\0';
	for (const char *s = filename; *s != '\0'; s++)
		if (*s == '/' || *s == '\\')
			base = s + 1;
	/* ".wav" alone is a name without an extension. */
	if ((dot = strrchr(base, '.')) == NULL || dot == base ||
	    (n = strlen(dot + 1)) == 0 || n > UPLOADS_FORMAT_MAX)
		return;
	for (size_t i = 0; i < n; i++) {
		char c = dot[1 + i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		else if (!(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9')) {
			out[0] = '\0';
			return;
		}
		out[i] = c;
	}
	out[n] = '\0';
}

/* --- reading uploads ---------------------------------------------------- */

/* Adds "tags" (Tag objects) to each upload object of the array items. */
static enum db_status
add_tags(struct db *db, json_object *items)
{
	size_t n = json_object_array_length(items);
	/* n + 1: an empty page is no failure to allocate. */
	const char **ids = calloc(n + 1, sizeof(*ids));
	PGresult *res = NULL;
	enum db_status st = DB_ERROR;

	if (ids == NULL)
		return DB_ERROR;
	for (size_t i = 0; i < n; i++) {
		json_object *it = json_object_array_get_idx(items, i), *id;

		json_object_object_get_ex(it, "id", &id);
		ids[i] = json_object_get_string(id);
		json_object_object_add(it, "tags", json_object_new_array());
	}
	if ((st = upload_tags_of(db, ids, n, &res)) == DB_OK)
		for (int r = 0; r < PQntuples(res); r++) {
			json_object *tag = dbjson_row(res, r), *upload, *tags;
			size_t i = 0;

			json_object_object_get_ex(tag, "upload_id", &upload);
			while (i < n && strcmp(ids[i], json_object_get_string(
							       upload)) != 0)
				i++;
			json_object_object_del(tag, "upload_id");
			if (i == n ||
			    !json_object_object_get_ex(
				    json_object_array_get_idx(items, i), "tags",
				    &tags))
				json_object_put(tag);
			else
				json_object_array_add(tags, tag);
		}
	PQclear(res);
	free(ids);
	return st;
}

/*
 * Upload id as the full Upload with its tags into *out (the caller puts
 * it); DB_OK with *out NULL when there is no such upload.
 */
static enum db_status
load_upload(struct db *db, const char *id, json_object **out)
{
	json_object *items = NULL;
	PGresult *res = NULL;
	enum db_status st;

	*out = NULL;
	if ((st = upload_get(db, id, &res)) != DB_OK || PQntuples(res) == 0)
		goto out;
	if ((items = dbjson_rows(res)) == NULL) {
		st = DB_ERROR;
		goto out;
	}
	if ((st = add_tags(db, items)) == DB_OK)
		*out = json_object_get(json_object_array_get_idx(items, 0));
out:
	json_object_put(items);
	PQclear(res);
	return st;
}

/*
 * Answers 200 with upload id as the full Upload when the caller may see
 * it; otherwise 404, 403 or the database's error.
 */
static void
answer_upload(struct app_ctx *ctx, const char *id)
{
	json_object *o, *fac = NULL;
	enum db_status st = load_upload(ctx->db, id, &o);

	if (o != NULL)
		json_object_object_get_ex(o, "facility_id", &fac);
	if (scope_known(ctx, st, o != NULL, json_object_get_string(fac),
			"upload")) {
		http_json(ctx->resp, 200, o);
		return;
	}
	json_object_put(o);
}

void
uploads_get(struct app_ctx *ctx)
{
	answer_upload(ctx, ctx->params[0]);
}

static const char *const statuses[] = {"pending", "processing", "completed",
				       "failed", NULL};

void
uploads_list(struct app_ctx *ctx)
{
	struct upload_filter filter;
	PGresult *rows = NULL;
	json_object *items, *env;
	struct page pg;
	long long total;
	enum db_status st;

	if (!page_query(ctx, statuses, &pg) ||
	    !scope_list(ctx, &filter.facility_id))
		return;
	filter.status = pg.status;
	filter.limit = pg.limit;
	filter.offset = pg.offset;
	if ((st = upload_list(ctx->db, &filter, &rows, &total)) != DB_OK)
		app_db_error(ctx, st);
	else if ((items = dbjson_rows(rows)) != NULL &&
		 (st = add_tags(ctx->db, items)) != DB_OK) {
		json_object_put(items);
		app_db_error(ctx, st);
	} else if ((env = page_envelope(&pg, items, total)) == NULL)
		http_error(ctx->resp, 500, "out of memory");
	else
		http_json(ctx->resp, 200, env);
	PQclear(rows);
}

/* --- tags of an upload -------------------------------------------------- */

/* The HTTP status and detail of a failed query (http_db_status()). */
static int
db_refusal(enum db_status st, char *detail, size_t dlen)
{
	const char *why;
	int status = http_db_status(st, &why);

	snprintf(detail, dlen, "%s", why);
	return status;
}

/* The detail of a tag that is not, or no longer, of the facility. */
static const char foreign_tags[] =
	"tags: every id must be a tag of this facility";

/*
 * Checks the JSON value arr: an array of at most UPLOADS_TAGS_MAX tag
 * ids of facility_id, written lower-cased and without repeats into *t.
 * Returns 0, or the HTTP status of the refusal with detail set.
 */
static int
tags_check(struct db *db, const char *facility_id, json_object *arr,
	   struct upload_tags *t, char *detail, size_t dlen)
{
	char foreign[UUID_LEN + 1];
	size_t count;
	enum db_status st;

	t->n = 0;
	if (!json_object_is_type(arr, json_type_array)) {
		snprintf(detail, dlen, "tags must be a JSON array of tag ids");
		return 400;
	}
	if ((count = json_object_array_length(arr)) > UPLOADS_TAGS_MAX) {
		snprintf(detail, dlen, "at most %d tags", UPLOADS_TAGS_MAX);
		return 400;
	}
	for (size_t i = 0; i < count; i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		char *id = t->ids[t->n];
		size_t k;

		if (!json_object_is_type(e, json_type_string) ||
		    !uuid_valid(json_object_get_string(e),
				(size_t)json_object_get_string_len(e))) {
			snprintf(detail, dlen, "tags[%zu] is not a UUID", i);
			return 400;
		}
		for (k = 0; k <= UUID_LEN; k++) {
			char c = json_object_get_string(e)[k];

			id[k] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a')
						     : c;
		}
		for (k = 0; k < t->n && strcmp(t->ids[k], id) != 0; k++)
			;
		if (k == t->n)
			t->n++;
	}
	if ((st = upload_tags_check(db, facility_id, t, foreign)) != DB_OK)
		return db_refusal(st, detail, dlen);
	if (foreign[0] != '\0') {
		snprintf(detail, dlen, "tags: %s is not a tag of this facility",
			 foreign);
		return 400;
	}
	return 0;
}

/* --- POST ------------------------------------------------------------- */

enum field { F_NONE, F_FILE, F_METADATA, F_TAGS };

/* One upload being received. */
struct post {
	struct app_ctx *ctx;
	char id[AUTH_UUID_LEN + 1];
	char key[KEY_MAX];
	struct store_put *put; /* the file part being written */
	bool file_seen, stored, metadata_seen, tags_seen;
	unsigned long long size;
	int64_t room; /* what the facility's quota left (the refusal's) */
	char filename[MULTIPART_FILENAME_MAX + 1];
	char format[UPLOADS_FORMAT_MAX + 1];
	enum field field; /* what the current part is */
	struct buf text;  /* the metadata or tags field being read */
	json_object *metadata;
	struct upload_tags tags;
	json_object *answer; /* the Upload as inserted */
	int status;	     /* of the refusal, 0 while none */
	char detail[512];
};

/* Refuses the upload (the first refusal counts); 1, which stops the
 * parser when returned from a callback. */
static int __attribute__((format(printf, 3, 4)))
refuse(struct post *p, int status, const char *fmt, ...)
{
	va_list ap;

	if (p->status != 0)
		return 1;
	p->status = status;
	va_start(ap, fmt);
	vsnprintf(p->detail, sizeof(p->detail), fmt, ap);
	va_end(ap);
	return 1;
}

/* Refuses with the object store's failure (its detail only logged). */
static int
store_failed(struct post *p, const char *what, const char *detail)
{
	log_error("uploads: %s %s: %s", what, p->key, detail);
	return refuse(p, 503, "the file could not be stored");
}

/* Refuses an upload its facility's quota has no room for (doc/storage.md
 * "Quotas and retention": 413, as a body over the size limit). */
static int
over_quota(struct post *p)
{
	return refuse(p, 413,
		      "the facility's storage quota is used up: %lld bytes "
		      "are left, the file is larger",
		      (long long)p->room);
}

/* UTF-8 text without control characters (a filename to show). */
static bool
plain_text(const char *s)
{
	for (const char *c = s; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return false;
	return xmbp_utf8_valid((const uint8_t *)s, strlen(s));
}

static int
part_begin(void *arg, const struct multipart_part *part)
{
	struct post *p = arg;
	char detail[256];
	bool meta;

	p->field = F_NONE;
	if (strcmp(part->name, "file") == 0) {
		if (p->file_seen)
			return refuse(p, 400, "more than one file field");
		p->file_seen = true;
		if (part->filename == NULL || part->filename[0] == '\0')
			return refuse(p, 400,
				      "the file field must be a file with a "
				      "filename");
		if (!plain_text(part->filename))
			return refuse(p, 400,
				      "the filename must be UTF-8 text "
				      "without control characters");
		snprintf(p->filename, sizeof(p->filename), "%s",
			 part->filename);
		uploads_format(p->filename, p->format);
		p->put = store_put_begin(p->ctx->store, p->key,
					 part->content_type, detail,
					 sizeof(detail));
		if (p->put == NULL)
			return store_failed(p, "writing", detail);
		p->field = F_FILE;
		return 0;
	}
	meta = strcmp(part->name, "metadata") == 0;
	if (!meta && strcmp(part->name, "tags") != 0)
		return 0; /* not a field of uploads: ignored */
	if (meta ? p->metadata_seen : p->tags_seen)
		return refuse(p, 400, "more than one %s field", part->name);
	*(meta ? &p->metadata_seen : &p->tags_seen) = true;
	buf_free(&p->text);
	buf_init(&p->text, UPLOADS_FIELD_MAX);
	p->field = meta ? F_METADATA : F_TAGS;
	return 0;
}

static int
part_data(void *arg, const void *data, size_t n)
{
	struct post *p = arg;

	switch (p->field) {
	case F_FILE:
		p->size += n;
		if (store_put_write(p->put, data, n) != STORE_OK)
			return store_failed(p, "writing", "write failed");
		return 0;
	case F_METADATA:
	case F_TAGS:
		buf_append(&p->text, data, n);
		if (p->text.failed)
			return refuse(p, 413,
				      "the %s field is larger than %d "
				      "bytes",
				      p->field == F_TAGS ? "tags" : "metadata",
				      UPLOADS_FIELD_MAX);
		return 0;
	default:
		return 0;
	}
}

/* The metadata field read: a JSON object, kept in p->metadata. */
static int
metadata_end(struct post *p)
{
	char detail[160];

	p->metadata = jsonin_parse((const char *)p->text.p, p->text.len, detail,
				   sizeof(detail));
	if (p->metadata == NULL ||
	    !json_object_is_type(p->metadata, json_type_object))
		return refuse(p, 400, "metadata must be a JSON object%s%s",
			      p->metadata == NULL && detail[0] != '\0' ? ": "
								       : "",
			      p->metadata == NULL ? detail : "");
	return 0;
}

/* The tags field read: a JSON array of the facility's tag ids. */
static int
tags_end(struct post *p)
{
	char detail[160];
	json_object *arr;
	int status;

	if ((arr = jsonin_parse((const char *)p->text.p, p->text.len, detail,
				sizeof(detail))) == NULL)
		return refuse(p, 400, "tags must be a JSON array of tag ids");
	status = tags_check(p->ctx->db, p->ctx->who.facility_id, arr, &p->tags,
			    detail, sizeof(detail));
	json_object_put(arr);
	return status != 0 ? refuse(p, status, "%s", detail) : 0;
}

static int
part_end(void *arg)
{
	struct post *p = arg;
	enum field f = p->field;
	char detail[256];
	enum store_status st;

	p->field = F_NONE;
	switch (f) {
	case F_FILE:
		st = store_put_commit(p->put, detail, sizeof(detail));
		p->put = NULL;
		if (st != STORE_OK)
			return store_failed(p, "committing", detail);
		p->stored = true;
		return 0;
	case F_METADATA:
		return metadata_end(p);
	case F_TAGS:
		return tags_end(p);
	default:
		return 0;
	}
}

/* Reads the body through the parser until its end or a refusal. */
static void
receive(struct post *p, const char *boundary)
{
	static const struct multipart_cb cb = {part_begin, part_data, part_end};
	char detail[160];

	/* A callback that stopped the parser refused already. */
	switch (http_multipart_read(p->ctx->req, boundary, &cb, p,
				    (unsigned long long)max_bytes, detail,
				    sizeof(detail))) {
	case HTTP_BODY_OK:
	case HTTP_BODY_STOPPED:
		break;
	case HTTP_BODY_TOO_LARGE:
		refuse(p, 413, "the upload is larger than %lld bytes",
		       max_bytes);
		break;
	case HTTP_BODY_MALFORMED:
		refuse(p, 400, "invalid multipart body: %s", detail);
		break;
	case HTTP_BODY_UNREADABLE:
		refuse(p, 400, "the request body could not be read");
		break;
	case HTTP_BODY_NO_MEMORY:
		refuse(p, 500, "out of memory");
		break;
	}
	if (p->status == 0 && !p->file_seen)
		refuse(p, 400, "missing file field");
}

/* The answer when the database refuses the metadata; lib/core/db logged
 * why (lib/codec/jsonin already refuses \u0000, which jsonb cannot hold). */
static const char bad_metadata[] = "metadata holds a value that cannot be "
				   "stored";

/* Refuses with a database failure of the insert. */
static void
db_failed(struct post *p, enum db_status st)
{
	char detail[64];
	int status;

	if (st == DB_INVALID)
		refuse(p, 400, "%s", bad_metadata);
	else {
		status = db_refusal(st, detail, sizeof(detail));
		refuse(p, status, "%s", detail);
	}
}

/* The upload row, its tag links and its transcode job, in one
 * transaction (the original is stored already). */
static void
insert(struct post *p)
{
	struct db *db = p->ctx->db;
	const char *fac = p->ctx->who.facility_id;
	struct upload_new n = {
		.id = p->id,
		.facility_id = fac,
		.api_key_id = p->ctx->who.key_id,
		.filename = p->filename,
		.format = p->format,
		.size = p->size,
		.metadata =
			p->metadata != NULL
				? json_object_to_json_string_ext(
					  p->metadata, JSON_C_TO_STRING_PLAIN)
				: "{}"};
	char job_id[37], detail[64];
	enum db_status st;
	bool taken, linked;

	if ((st = db_begin(db)) != DB_OK) {
		db_failed(p, st);
		goto fail;
	}
	/* The one quota check, with the bytes stored (the gate's read only
	 * spares the spooling of a body known too large): under a quota its
	 * row is locked until COMMIT, so that other uploads and ingest
	 * rounds of the facility take no room meanwhile. */
	if ((st = upload_insert_within(db, &n, &taken, &p->room)) != DB_OK) {
		db_failed(p, st);
		goto fail;
	}
	if (!taken) {
		over_quota(p);
		goto fail;
	}
	if ((st = upload_tags_link(db, p->id, fac, &p->tags, &linked)) !=
	    DB_OK) {
		refuse(p, db_refusal(st, detail, sizeof(detail)), "%s", detail);
		goto fail;
	}
	if (!linked) {
		refuse(p, 400, "%s", foreign_tags);
		goto fail;
	}
	/* Read before COMMIT: a runner may claim the job at once after. */
	if ((st = jobs_create(db, fac, p->id, job_id)) != DB_OK ||
	    (st = load_upload(db, p->id, &p->answer)) != DB_OK ||
	    (st = p->answer == NULL ? DB_ERROR : db_commit(db)) != DB_OK) {
		db_failed(p, st);
		goto fail;
	}
	return;
fail:
	db_rollback(db);
}

/*
 * What the facility's quota leaves into p->room (read, not locked: the
 * insert checks); refused when the body's Content-Length is already
 * more, before a byte of it is read.
 */
static void
room_for(struct post *p)
{
	struct app_ctx *ctx = p->ctx;
	char detail[64];
	struct quota q;
	enum db_status st;
	bool found;

	if ((st = quota_read(ctx->db, ctx->who.facility_id, &q, &found)) !=
	    DB_OK) {
		refuse(p, db_refusal(st, detail, sizeof(detail)), "%s", detail);
		return;
	}
	p->room = quota_left(&q);
	if (ctx->req->content_length > p->room)
		refuse(p, 413,
		       "the facility's storage quota is used up: %lld bytes "
		       "are left, the upload is %lld bytes",
		       (long long)p->room, ctx->req->content_length);
}

/* Known too large by its Content-Length: 413 answered. */
static bool
too_large(struct app_ctx *ctx)
{
	if (ctx->req->content_length <= max_bytes)
		return false;
	http_error(ctx->resp, 413, "the upload is larger than %lld bytes",
		   max_bytes);
	return true;
}

/*
 * The POST's gate (app_gate): asked as the authorizer, an upload known
 * by its Content-Length to be too large or over the facility's quota is
 * refused before the web server receives a byte of it.  A chunked one
 * is checked by uploads_post() at its insert, once it is stored.
 */
static bool
gate(struct app_ctx *ctx)
{
	struct post p = {.ctx = ctx};

	if (ctx->req->content_length < 0)
		return true;
	if (too_large(ctx))
		return false;
	room_for(&p);
	if (p.status != 0)
		http_error(ctx->resp, p.status, "%s", p.detail);
	return p.status == 0;
}

void
uploads_post(struct app_ctx *ctx)
{
	char boundary[MULTIPART_BOUNDARY_MAX + 1], detail[256];
	struct post *p;

	if (!multipart_boundary(ctx->req->content_type, boundary, detail,
				sizeof(detail))) {
		http_error(ctx->resp, 400, "%s", detail);
		return;
	}
	/* Known too large: refused before a byte of it is read (the gate
	 * refused it already behind lighttpd's authorizer). */
	if (too_large(ctx))
		return;
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		http_error(ctx->resp, 500, "out of memory");
		return;
	}
	p->ctx = ctx;
	buf_init(&p->text, UPLOADS_FIELD_MAX);
	if (!auth_uuid(p->id))
		refuse(p, 500, "no random bytes for an id");
	snprintf(p->key, sizeof(p->key), "%s/uploads/%s/original",
		 ctx->who.facility_id, p->id);
	if (p->status == 0)
		receive(p, boundary);
	if (p->status == 0)
		insert(p);
	if (p->status == 0) {
		http_json(ctx->resp, 200, p->answer);
		p->answer = NULL;
	} else {
		/* Nothing of a refused upload is kept. */
		store_put_abort(p->put);
		if (p->stored && store_delete(ctx->store, p->key, detail,
					      sizeof(detail)) != STORE_OK)
			log_error("uploads: deleting %s: %s", p->key, detail);
		http_error(ctx->resp, p->status, "%s", p->detail);
	}
	json_object_put(p->answer);
	json_object_put(p->metadata);
	buf_free(&p->text);
	free(p);
}

/* --- changes ------------------------------------------------------------ */

/*
 * Checks that upload {id} exists and the caller may change it: it into
 * *u, or false with 404, 403 or the database's error answered.
 */
static bool
own_upload(struct app_ctx *ctx, struct upload_ref *u)
{
	bool found;
	enum db_status st = upload_ref(ctx->db, ctx->params[0], u, &found);

	return scope_known(ctx, st, found, u->facility_id, "upload");
}

enum { P_METADATA, P_TAGS, NPATCH };

static const struct valid_field patch_fields[NPATCH] = {
	[P_METADATA] = {.name = "metadata", .type = VALID_OBJECT},
	[P_TAGS] = {.name = "tags",
		    .type = VALID_UUIDS,
		    .min = 0,
		    .max = UPLOADS_TAGS_MAX},
};

void
uploads_patch(struct app_ctx *ctx)
{
	struct valid_value v[NPATCH];
	struct upload_ref u;
	struct upload_tags tags;
	char detail[256];
	const char *metadata;
	json_object *body;
	enum db_status st;
	int status;
	bool linked;

	if ((body = valid_json_body(ctx->req, patch_fields, NPATCH, v,
				    ctx->resp)) == NULL)
		return;
	if (!own_upload(ctx, &u))
		goto out;
	if (!v[P_METADATA].present && !v[P_TAGS].present) {
		answer_upload(ctx, u.id); /* nothing to change */
		goto out;
	}
	if (v[P_TAGS].present &&
	    (status = tags_check(ctx->db, u.facility_id, v[P_TAGS].json, &tags,
				 detail, sizeof(detail))) != 0) {
		http_error(ctx->resp, status, "%s", detail);
		goto out;
	}
	metadata = v[P_METADATA].present
			   ? json_object_to_json_string_ext(
				     v[P_METADATA].json, JSON_C_TO_STRING_PLAIN)
			   : NULL;
	st = upload_change(ctx->db, u.id, u.facility_id, metadata,
			   v[P_TAGS].present ? &tags : NULL, &linked);
	if (st == DB_INVALID)
		http_error(ctx->resp, 400, "%s", bad_metadata);
	else if (st != DB_OK)
		app_db_error(ctx, st);
	else if (!linked)
		http_error(ctx->resp, 400, "%s", foreign_tags);
	else
		answer_upload(ctx, u.id);
out:
	json_object_put(body);
}

void
uploads_delete(struct app_ctx *ctx)
{
	char prefix[KEY_MAX], detail[256];
	struct upload_ref u;
	enum db_status st;
	bool found;

	if (!own_upload(ctx, &u))
		return;
	if ((st = upload_delete(ctx->db, u.id, &found)) != DB_OK) {
		app_db_error(ctx, st);
		return;
	}
	if (!found) {
		http_error(ctx->resp, 404, "upload not found");
		return;
	}
	/*
	 * The row first: a runner still transcoding it finds its job gone
	 * and writes nothing more.  Objects that can not be removed now
	 * are orphans of a deleted upload: logged for the operator.
	 */
	snprintf(prefix, sizeof(prefix), "%s/uploads/%s/", u.facility_id, u.id);
	if (store_delete_prefix(ctx->store, prefix, detail, sizeof(detail)) !=
	    STORE_OK)
		log_error("uploads: deleting %s: %s", prefix, detail);
	http_no_content(ctx->resp);
}

void
uploads_retranscode(struct app_ctx *ctx)
{
	char job_id[37];
	struct upload_ref u;
	json_object *o;
	enum db_status st;

	if (!own_upload(ctx, &u))
		return;
	if ((st = jobs_create(ctx->db, u.facility_id, u.id, job_id)) ==
	    DB_FOREIGN_KEY) {
		http_error(ctx->resp, 404, "upload not found");
		return;
	}
	if (st != DB_OK) {
		app_db_error(ctx, st);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "job_id", json_object_new_string(job_id));
	http_json(ctx->resp, 200, o);
}
