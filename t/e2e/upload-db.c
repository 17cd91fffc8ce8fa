/* SPDX-License-Identifier: MIT */
/*
 * upload-db - lib/domain/upload.c against a real PostgreSQL: uploads
 * inserted (bad metadata, a key of another facility), their tags linked,
 * checked and replaced (another facility's tag changes nothing), read
 * one by one and by page, their latest completed transcode found, and
 * deleted with their links and jobs; the quota check at the insert.
 * Run by t/e2e/upload-db.t with a migrated database of its own in
 * XMHUB_TEST_DATABASE_URL; t/e2e/api-uploads.t proves the HTTP contract
 * and the facility rules.
 */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/upload.h"
#include "tap.h"
#include "testdb.h"

#define NO_ID "00000000-0000-0000-0000-000000000000"

static struct db *db;

/* The first value of sql with param into out ("" when none). */
static void
one(const char *sql, const char *param, char *out, size_t len)
{
	testdb_one(db, sql, param, out, len);
}

/* A test that got is want. */
static void
is(const char *got, const char *want, const char *name)
{
	if (!ok(strcmp(got, want) == 0, "%s", name))
		diag("got '%s', expected '%s'", got, want);
}

/* The tags of upload id, by name, comma-separated, into out. */
static void
tag_names(const char *id, char *out, size_t len)
{
	one("SELECT coalesce(string_agg(t.name, ',' ORDER BY t.name), '') "
	    "FROM upload_tags ut JOIN tags t ON t.id = ut.tag_id "
	    "WHERE ut.upload_id = $1::uuid",
	    id, out, len);
}

/* A tag set of the n ids. */
static struct upload_tags
tagset(size_t n, const char *const *ids)
{
	struct upload_tags t = {.n = n};

	for (size_t i = 0; i < n; i++)
		snprintf(t.ids[i], sizeof(t.ids[i]), "%s", ids[i]);
	return t;
}

/* The fixtures: two facilities with a key each, three tags. */
struct fix {
	char fac[64], other[64], key[64], okey[64];
	char alpha[64], beta[64], gamma[64]; /* gamma is other's */
	char up[64], up2[64], up3[64];	     /* up3 is other's */
};

static void
test_insert(struct fix *f)
{
	struct upload_new n = {.id = f->up,
			       .facility_id = f->fac,
			       .api_key_id = f->key,
			       .filename = "a.WAV",
			       .format = "wav",
			       .size = 4,
			       .metadata = "{\"site\":\"x\"}"};
	const char *both[2] = {f->alpha, f->beta};
	struct upload_tags t = tagset(2, both), foreign, none = {.n = 0};
	char got[256], id[64];
	bool linked = false;

	ok(db_begin(db) == DB_OK && upload_insert(db, &n) == DB_OK &&
		   upload_tags_link(db, f->up, f->fac, &t, &linked) == DB_OK &&
		   linked && db_commit(db) == DB_OK,
	   "insert: the row and its two tags, in the caller's transaction");
	one("SELECT original_filename || ' ' || original_format || ' ' || "
	    "original_size_bytes || ' ' || status || ' ' || metadata::text "
	    "FROM uploads WHERE id = $1::uuid",
	    f->up, got, sizeof(got));
	is(got, "a.WAV wav 4 pending {\"site\": \"x\"}", "insert: the row");
	tag_names(f->up, got, sizeof(got));
	is(got, "alpha,beta", "insert: its tags");
	one("SELECT gen_random_uuid()", NULL, id, sizeof(id));
	n.id = id;
	n.metadata = "[1]";
	ok(upload_insert(db, &n) == DB_INVALID,
	   "insert: metadata that is not an object is invalid");
	n.metadata = "{";
	ok(upload_insert(db, &n) == DB_INVALID,
	   "insert: metadata that is not JSON is invalid");
	n.metadata = "{}";
	n.facility_id = f->other;
	ok(upload_insert(db, &n) == DB_FOREIGN_KEY,
	   "insert: a key of another facility");
	one("SELECT count(*) FROM uploads WHERE id = $1::uuid", id, got,
	    sizeof(got));
	is(got, "0", "insert: nothing of the refused ones");
	foreign = tagset(1, (const char *const[]){f->gamma});
	ok(upload_tags_link(db, f->up, f->fac, &foreign, &linked) == DB_OK &&
		   !linked,
	   "link: another facility's tag is not linked");
	linked = false;
	ok(upload_tags_link(db, f->up, f->fac, &none, &linked) == DB_OK &&
		   linked,
	   "link: no tags");
	tag_names(f->up, got, sizeof(got));
	is(got, "alpha,beta", "link: the tags as they were");
}

static void
test_ref(const struct fix *f)
{
	char upper[64];
	struct upload_ref u;
	bool found = false;

	snprintf(upper, sizeof(upper), "%s", f->up);
	for (char *c = upper; *c != '\0'; c++)
		*c = (char)toupper((unsigned char)*c);
	ok(upload_ref(db, upper, &u, &found) == DB_OK && found &&
		   strcmp(u.id, f->up) == 0 &&
		   strcmp(u.facility_id, f->fac) == 0 &&
		   strcmp(u.status, "pending") == 0 && u.duration_ms == -1,
	   "ref: an id in capitals, canonical, its duration unknown");
	one("UPDATE uploads SET duration_ms = 1500, status = 'completed' "
	    "WHERE id = $1::uuid RETURNING id",
	    f->up, upper, sizeof(upper));
	ok(upload_ref(db, f->up, &u, &found) == DB_OK && found &&
		   strcmp(u.status, "completed") == 0 && u.duration_ms == 1500,
	   "ref: status and duration");
	ok(upload_ref(db, NO_ID, &u, &found) == DB_OK && !found,
	   "ref: none for an unknown id");
}

static void
test_get(const struct fix *f)
{
	const char *ids[3] = {f->up, f->up2, f->up3};
	PGresult *res = NULL;

	ok(upload_get(db, f->up, &res) == DB_OK && PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "id"), f->up) == 0 &&
		   strcmp(testdb_col(res, 0, "facility_id"), f->fac) == 0 &&
		   strcmp(testdb_col(res, 0, "api_key_id"), f->key) == 0 &&
		   strcmp(testdb_col(res, 0, "original_filename"), "a.WAV") ==
			   0 &&
		   strcmp(testdb_col(res, 0, "duration_ms"), "1500") == 0 &&
		   strcmp(testdb_col(res, 0, "codec"), "(null)") == 0 &&
		   strcmp(testdb_col(res, 0, "metadata"),
			  "{\"site\": \"x\"}") == 0 &&
		   PQfnumber(res, "updated_at") >= 0 && PQnfields(res) == 16,
	   "get: the whole Upload");
	PQclear(res);
	ok(upload_get(db, NO_ID, &res) == DB_OK && PQntuples(res) == 0,
	   "get: none for an unknown id");
	PQclear(res);
	ok(upload_tags_of(db, ids, 3, &res) == DB_OK && PQntuples(res) == 2 &&
		   strcmp(testdb_col(res, 0, "upload_id"), f->up) == 0 &&
		   strcmp(testdb_col(res, 0, "name"), "alpha") == 0 &&
		   strcmp(testdb_col(res, 0, "id"), f->alpha) == 0 &&
		   strcmp(testdb_col(res, 0, "facility_id"), f->fac) == 0 &&
		   PQfnumber(res, "color") >= 0 &&
		   PQfnumber(res, "created_at") >= 0 &&
		   strcmp(testdb_col(res, 1, "name"), "beta") == 0,
	   "tags of: the links of the uploads that have some, by name");
	PQclear(res);
	ok(upload_tags_of(db, ids, 0, &res) == DB_OK && PQntuples(res) == 0,
	   "tags of: no uploads, no rows");
	PQclear(res);
}

static void
test_list(const struct fix *f)
{
	struct upload_filter q = {
		.facility_id = f->fac, .limit = "20", .offset = "0"};
	PGresult *res = NULL;
	long long total = -1;

	ok(upload_list(db, &q, &res, &total) == DB_OK && total == 2 &&
		   PQntuples(res) == 2 &&
		   strcmp(testdb_col(res, 0, "id"), f->up2) == 0 &&
		   strcmp(testdb_col(res, 1, "id"), f->up) == 0 &&
		   PQnfields(res) == 8 &&
		   PQfnumber(res, "original_size_bytes") >= 0,
	   "list: a facility's, newest first, as list items");
	PQclear(res);
	q.status = "pending";
	ok(upload_list(db, &q, &res, &total) == DB_OK && total == 1 &&
		   PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "id"), f->up2) == 0,
	   "list: by status");
	PQclear(res);
	q = (struct upload_filter){.limit = "1", .offset = "1"};
	ok(upload_list(db, &q, &res, &total) == DB_OK && total == 3 &&
		   PQntuples(res) == 1 &&
		   strcmp(testdb_col(res, 0, "id"), f->up2) == 0,
	   "list: every facility's, a page of one, the second");
	PQclear(res);
	q.facility_id = NO_ID;
	ok(upload_list(db, &q, &res, &total) == DB_OK && total == 0 &&
		   PQntuples(res) == 0,
	   "list: none of a facility without uploads");
	PQclear(res);
}

static void
test_tags_check(const struct fix *f)
{
	const char *mine[2] = {f->alpha, f->beta};
	const char *mixed[3] = {f->alpha, f->gamma, NO_ID};
	struct upload_tags t = tagset(2, mine);
	char foreign[UUID_LEN + 1] = "x";

	ok(upload_tags_check(db, f->fac, &t, foreign) == DB_OK &&
		   foreign[0] == '\0',
	   "check: the facility's own tags");
	t = tagset(3, mixed);
	ok(upload_tags_check(db, f->fac, &t, foreign) == DB_OK &&
		   (strcmp(foreign, f->gamma) == 0 ||
		    strcmp(foreign, NO_ID) == 0),
	   "check: a tag of another facility or of none is named");
	t = tagset(1, mixed + 1);
	ok(upload_tags_check(db, f->fac, &t, foreign) == DB_OK &&
		   strcmp(foreign, f->gamma) == 0,
	   "check: another facility's tag");
	t.n = 0;
	ok(upload_tags_check(db, f->fac, &t, foreign) == DB_OK &&
		   foreign[0] == '\0',
	   "check: no tags");
}

static void
test_change(const struct fix *f)
{
	const char *beta[1] = {f->beta}, *gamma[1] = {f->gamma};
	struct upload_tags t = tagset(1, beta);
	char got[256], before[64], after[64];
	bool linked = false;

	one("SELECT updated_at::text FROM uploads WHERE id = $1::uuid", f->up,
	    before, sizeof(before));
	ok(upload_change(db, f->up, f->fac, "{\"a\":1}", NULL, &linked) ==
			   DB_OK &&
		   linked,
	   "change: the metadata only");
	one("SELECT metadata::text FROM uploads WHERE id = $1::uuid", f->up,
	    got, sizeof(got));
	is(got, "{\"a\": 1}", "change: the metadata replaced");
	one("SELECT updated_at::text FROM uploads WHERE id = $1::uuid", f->up,
	    after, sizeof(after));
	ok(strcmp(before, after) != 0, "change: updated_at moved");
	tag_names(f->up, got, sizeof(got));
	is(got, "alpha,beta", "change: the tags kept");
	ok(upload_change(db, f->up, f->fac, NULL, &t, &linked) == DB_OK &&
		   linked,
	   "change: the tags only");
	tag_names(f->up, got, sizeof(got));
	is(got, "beta", "change: the tags replaced");
	one("SELECT metadata::text FROM uploads WHERE id = $1::uuid", f->up,
	    got, sizeof(got));
	is(got, "{\"a\": 1}", "change: the metadata kept");
	t = tagset(1, gamma);
	ok(upload_change(db, f->up, f->fac, "{\"b\":2}", &t, &linked) ==
			   DB_OK &&
		   !linked,
	   "change: another facility's tag is not linked");
	ok(upload_change(db, f->up, f->fac, "[2]", NULL, &linked) == DB_INVALID,
	   "change: metadata that is not an object is invalid");
	one("SELECT metadata::text FROM uploads WHERE id = $1::uuid", f->up,
	    got, sizeof(got));
	is(got, "{\"a\": 1}", "change: the refused ones changed no metadata");
	tag_names(f->up, got, sizeof(got));
	is(got, "beta", "change: nor tags");
	t.n = 0;
	ok(upload_change(db, f->up, f->fac, NULL, &t, &linked) == DB_OK &&
		   linked,
	   "change: no tags");
	tag_names(f->up, got, sizeof(got));
	is(got, "", "change: the tags removed");
}

/* A job of upload id in status, completed mins minutes ago, into out. */
static void
job(const char *id, const char *container, const char *status, int mins,
    char *out, size_t len)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO transcode_jobs (upload_id, facility_id, "
		 "target_format, target_codec, target_container, "
		 "target_bitrate, status, completed_at) SELECT id, "
		 "facility_id, '%s', 'x', '%s', '128k', '%s', now() - "
		 "interval '%d minutes' FROM uploads WHERE id = $1::uuid "
		 "RETURNING id",
		 container, container, status, mins);
	one(sql, id, out, len);
}

static void
test_stream(const struct fix *f)
{
	struct upload_stream s;
	char older[64], newest[64], queued[64], upper[64];
	bool found = false;

	ok(upload_stream(db, f->up, &s, &found) == DB_OK && found &&
		   strcmp(s.facility_id, f->fac) == 0 && s.job_id[0] == '\0' &&
		   s.container[0] == '\0',
	   "stream: no completed transcode yet");
	job(f->up, "mp4", "completed", 60, older, sizeof(older));
	job(f->up, "webm", "completed", 1, newest, sizeof(newest));
	job(f->up, "mp4", "queued", 0, queued, sizeof(queued));
	ok(upload_stream(db, f->up, &s, &found) == DB_OK && found &&
		   strcmp(s.job_id, newest) == 0 &&
		   strcmp(s.container, "webm") == 0,
	   "stream: the latest completed transcode");
	snprintf(upper, sizeof(upper), "%s", f->up);
	for (char *c = upper; *c != '\0'; c++)
		*c = (char)toupper((unsigned char)*c);
	ok(upload_stream(db, upper, &s, &found) == DB_OK && found &&
		   strcmp(s.id, f->up) == 0,
	   "stream: an id in capitals answers the upload's id as stored");
	ok(upload_stream(db, NO_ID, &s, &found) == DB_OK && !found,
	   "stream: none for an unknown upload");
}

static void
test_delete(const struct fix *f)
{
	const char *alpha[1] = {f->alpha};
	struct upload_tags t = tagset(1, alpha);
	struct upload_ref u;
	char got[64];
	bool found = false, linked = false;

	upload_change(db, f->up, f->fac, NULL, &t, &linked);
	ok(upload_delete(db, f->up, &found) == DB_OK && found,
	   "delete: the upload");
	ok(upload_ref(db, f->up, &u, &found) == DB_OK && !found,
	   "delete: it is gone");
	one("SELECT (SELECT count(*) FROM transcode_jobs WHERE upload_id = "
	    "$1::uuid) + (SELECT count(*) FROM upload_tags WHERE upload_id = "
	    "$1::uuid)",
	    f->up, got, sizeof(got));
	is(got, "0", "delete: its jobs and tag links with it");
	one("SELECT count(*) FROM tags WHERE id = $1::uuid", f->alpha, got,
	    sizeof(got));
	is(got, "1", "delete: the tag stays");
	ok(upload_delete(db, f->up, &found) == DB_OK && !found,
	   "delete: not found the second time");
}

/* Fixtures into f; false when one is missing. */
static bool
fixtures(struct fix *f)
{
	static const char key_sql[] =
		"INSERT INTO api_keys (facility_id, name, key_prefix, "
		"key_hash) "
		"SELECT $1::uuid, 'k', 'xmh_' || substr(h, 1, 8), h || h "
		"FROM md5($1::uuid::text) AS h RETURNING id";

	one("INSERT INTO facilities (name, slug) VALUES ($1, $1) RETURNING id",
	    "upload-db", f->fac, sizeof(f->fac));
	one("INSERT INTO facilities (name, slug) VALUES ($1, $1) RETURNING id",
	    "upload-db-other", f->other, sizeof(f->other));
	one(key_sql, f->fac, f->key, sizeof(f->key));
	one(key_sql, f->other, f->okey, sizeof(f->okey));
	one("INSERT INTO tags (facility_id, name) VALUES ($1, 'alpha') "
	    "RETURNING id",
	    f->fac, f->alpha, sizeof(f->alpha));
	one("INSERT INTO tags (facility_id, name) VALUES ($1, 'beta') "
	    "RETURNING id",
	    f->fac, f->beta, sizeof(f->beta));
	one("INSERT INTO tags (facility_id, name) VALUES ($1, 'gamma') "
	    "RETURNING id",
	    f->other, f->gamma, sizeof(f->gamma));
	one("SELECT gen_random_uuid()", NULL, f->up, sizeof(f->up));
	return f->fac[0] != '\0' && f->other[0] != '\0' && f->key[0] != '\0' &&
	       f->okey[0] != '\0' && f->alpha[0] != '\0' &&
	       f->beta[0] != '\0' && f->gamma[0] != '\0' && f->up[0] != '\0';
}

/* The uploads besides f->up: up2 of fac, newer; up3 of other. */
static bool
more_uploads(struct fix *f)
{
	static const char upload_sql[] =
		"INSERT INTO uploads (facility_id, api_key_id, "
		"original_filename, original_format, original_size_bytes, "
		"created_at) SELECT facility_id, id, 'b.flac', 'flac', 8, "
		"now() + interval '1 second' FROM api_keys "
		"WHERE id = $1::uuid RETURNING id";

	one(upload_sql, f->key, f->up2, sizeof(f->up2));
	one(upload_sql, f->okey, f->up3, sizeof(f->up3));
	return f->up2[0] != '\0' && f->up3[0] != '\0';
}

/* A new upload n of size bytes, given a fresh id, through
 * upload_insert_within() in a transaction committed when it is taken:
 * whether it was. */
static bool
within(struct upload_new *n, char id[64], uint64_t size, int64_t *room)
{
	bool taken = false;

	one("SELECT gen_random_uuid()", NULL, id, 64);
	n->id = id;
	n->size = size;
	if (db_begin(db) != DB_OK ||
	    upload_insert_within(db, n, &taken, room) != DB_OK) {
		db_rollback(db);
		return false;
	}
	if (taken)
		return db_commit(db) == DB_OK;
	db_rollback(db);
	return false;
}

/* The quota check at the insert: without a quota, within one, past it. */
static void
test_within(const struct fix *f)
{
	struct upload_new n = {.facility_id = f->fac,
			       .api_key_id = f->key,
			       .filename = "q.wav",
			       .format = "wav",
			       .metadata = "{}"};
	char id[64], got[64];
	int64_t room = 0;

	ok(within(&n, id, 100, &room) && room == INT64_MAX,
	   "within: no quota, taken");
	one("UPDATE facility_storage SET quota_bytes = upload_bytes + 150 "
	    "WHERE facility_id = $1::uuid RETURNING quota_bytes",
	    f->fac, got, sizeof(got));
	ok(within(&n, id, 100, &room) && room == 150,
	   "within: a quota with room, taken");
	ok(!within(&n, id, 51, &room) && room == 50,
	   "within: past the quota, not taken, the room said");
	one("SELECT count(*) FROM uploads WHERE id = $1::uuid", id, got,
	    sizeof(got));
	is(got, "0", "within: nothing of the refused one");
	ok(within(&n, id, 50, &room) && room == 50,
	   "within: the last bytes taken");
	one("UPDATE facility_storage SET quota_bytes = NULL "
	    "WHERE facility_id = $1::uuid RETURNING facility_id",
	    f->fac, got, sizeof(got));
}

int
main(void)
{
	const char *url = getenv("XMHUB_TEST_DATABASE_URL");
	struct fix f;

	memset(&f, 0, sizeof(f));
	if (url == NULL || (db = db_new(url)) == NULL) {
		printf("Bail out! no database (XMHUB_TEST_DATABASE_URL)\n");
		return 1;
	}
	if (ok(fixtures(&f), "two facilities, their keys and tags")) {
		test_insert(&f);
		if (ok(more_uploads(&f), "more uploads")) {
			test_ref(&f);
			test_get(&f);
			test_list(&f);
			test_tags_check(&f);
			test_change(&f);
			test_stream(&f);
			test_delete(&f);
			test_within(&f);
		}
	}
	db_free(db);
	return tap_done();
}
