/* SPDX-License-Identifier: MIT */
/*
 * upload.h - audio uploads (doc/uploads.md): their SQL.
 *
 * An upload belongs to one facility; its original (and what the
 * transcode runner makes of it) are objects of the store, which the
 * caller handles.  Rows of the functions that answer *rows are as the
 * API shows an upload (for lib/web/dbjson) and are the caller's to
 * PQclear() (NULL on failure); the rest fill a struct.  Who may see or
 * change which facility's uploads is the caller's rule (lib/web/scope),
 * checked on facility_id.  Statuses are db_query()'s.
 */
#ifndef XMHUB_UPLOAD_H
#define XMHUB_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/uuid.h"
#include "core/db.h"

#define UPLOAD_TAGS_MAX 100 /* tags of one upload */

/* An upload as the routes that check it need it. */
struct upload_ref {
	char id[UUID_LEN + 1]; /* canonical (lower-case) */
	char facility_id[UUID_LEN + 1];
	char status[16];     /* pending, processing, completed, failed */
	int64_t duration_ms; /* -1 while unknown */
};

/* The tag ids given for an upload: lower-case, without repeats. */
struct upload_tags {
	size_t n;
	char ids[UPLOAD_TAGS_MAX][UUID_LEN + 1];
};

/* A new upload (the row only: its tags and job are linked apart). */
struct upload_new {
	const char *id;
	const char *facility_id;
	const char *api_key_id;
	const char *filename;
	const char *format;   /* "" when the filename has none */
	uint64_t size;	      /* bytes of the original */
	const char *metadata; /* a JSON object's text */
};

/* The latest completed transcode of an upload, as a stream reads it. */
struct upload_stream {
	char id[UUID_LEN + 1]; /* the upload's, as the database writes it */
	char facility_id[UUID_LEN + 1];
	char job_id[UUID_LEN + 1]; /* "" when no transcode has completed */
	char container[8];	   /* "webm" or "mp4" (the job's) */
};

/* Which uploads a list shows (NULL members: any), and which page. */
struct upload_filter {
	const char *facility_id;
	const char *status;
	const char *limit;  /* decimal text: LIMIT */
	const char *offset; /* decimal text: OFFSET */
};

/*
 * Upload id (any case) into *u; *found false when there is none.
 */
enum db_status upload_ref(struct db *db, const char *id, struct upload_ref *u,
			  bool *found);

/*
 * Upload id as the API shows a whole Upload without its tags: id,
 * facility_id, api_key_id, uploaded_by, original_filename,
 * original_format, original_size_bytes, duration_ms, sample_rate_hz,
 * channels, bit_depth, codec, metadata, status, created_at, updated_at.
 * One row, or none when there is no such upload.
 */
enum db_status upload_get(struct db *db, const char *id, PGresult **rows);

/*
 * The page of uploads f names, newest first, as the API shows a list
 * item: id, facility_id, original_filename, original_format,
 * original_size_bytes, status, created_at, updated_at; *total the number
 * f matches on every page.
 */
enum db_status upload_list(struct db *db, const struct upload_filter *f,
			   PGresult **rows, long long *total);

/*
 * The tags of the n uploads ids, by name: a row per link, the upload's
 * upload_id and the tag as GET /api/v1/tags shows it (id, facility_id,
 * name, color, created_at).
 */
enum db_status upload_tags_of(struct db *db, const char *const *ids, size_t n,
			      PGresult **rows);

/*
 * Checks that every tag of t is a tag of facility_id: *foreign receives
 * the first that is not, or "" when all are.
 */
enum db_status upload_tags_check(struct db *db, const char *facility_id,
				 const struct upload_tags *t,
				 char foreign[UUID_LEN + 1]);

/*
 * Inserts upload n's row (status pending), inside the caller's
 * transaction.  DB_INVALID when the database refuses its metadata,
 * DB_FOREIGN_KEY when its facility or API key does not exist.
 */
enum db_status upload_insert(struct db *db, const struct upload_new *n);

/*
 * As upload_insert(), when the storage quota of n's facility has room for
 * n->size (doc/storage.md "Quotas and retention"): *taken true.  For a
 * facility without a quota that is the one INSERT, which reads its
 * quota_bytes itself (*room INT64_MAX).  One with a quota has its row
 * locked and its deltas folded until the caller's transaction ends
 * (quota_lock()), so that no other writer of the facility takes the room
 * meanwhile; *room is what the quota left, and the upload is inserted only
 * when it is not larger (*taken false, nothing written, when it is).
 */
enum db_status upload_insert_within(struct db *db, const struct upload_new *n,
				    bool *taken, int64_t *room);

/*
 * Links upload id of facility_id to the tags of t, inside the caller's
 * transaction; *linked false (nothing to be committed) when one of them
 * is not, or no longer, a tag of facility_id.
 */
enum db_status upload_tags_link(struct db *db, const char *id,
				const char *facility_id,
				const struct upload_tags *t, bool *linked);

/*
 * Changes upload id of facility_id in one transaction: its metadata (a
 * JSON object's text; NULL keeps it) and, when t is not NULL, its tags,
 * replaced by those of t.  Moves updated_at.  DB_INVALID when the
 * database refuses the metadata; *linked as upload_tags_link() (then
 * nothing is changed).
 */
enum db_status upload_change(struct db *db, const char *id,
			     const char *facility_id, const char *metadata,
			     const struct upload_tags *t, bool *linked);

/*
 * Deletes upload id with its jobs and tag links (its objects are the
 * caller's); *found false when it was gone already.
 */
enum db_status upload_delete(struct db *db, const char *id, bool *found);

/*
 * Upload id's latest completed transcode into *s; *found false when
 * there is no such upload.
 */
enum db_status upload_stream(struct db *db, const char *id,
			     struct upload_stream *s, bool *found);

#endif
