/* SPDX-License-Identifier: MIT */
/*
 * authn.c - who is calling: bearer tokens and API keys (see authn.h).
 *
 * The state a request is checked against (is the user or key still
 * active, its role, facility and token version; a user's e-mail and
 * display name too, for /api/auth/me) is cached per process in two fixed
 * tables, so that a valid request costs no query.  The cache is
 * dropped whole whenever PostgreSQL notifies a change on CHANNEL (the
 * triggers of sql/008_authn_state.sql), when another process of this
 * host counted a change (host_epoch), or when the connection was made
 * anew; all three are looked at, without blocking, before each check.
 * With XMHUB_MULTI_HOST=1 a fourth, the database's change counter
 * (db_epoch), costs one query per check and makes a change committed
 * through another host effective on the next request here.  Through a
 * pooler (db_pooled(): no LISTEN) the counter replaces the notifications.
 */
#include "config.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "codec/base64.h"
#include "codec/buf.h"
#include "core/auth.h"
#include "core/conf.h"
#include "core/settings.h"
#include "web/authn.h"

#define CHANNEL "xmhub_authn"
#define SLOTS 512     /* per table; a colliding entry replaces the old */
#define USED_EVERY 60 /* seconds between writes of a key's last_used_at */

struct user_slot {
	bool used;
	char id[UUID_LEN + 1];
	bool active; /* the user exists, is active, its facility too */
	enum auth_role role;
	char facility_id[UUID_LEN + 1]; /* "" for a super_admin */
	long long ver;
	char *email;	    /* malloc'd; NULL when not active */
	char *display_name; /* malloc'd; NULL when not active */
};

struct key_slot {
	bool used;
	char hash[AUTH_SHA256_HEX];
	char id[UUID_LEN + 1];
	char facility_id[UUID_LEN + 1];
	char name[256];
	char scopes[64];   /* PostgreSQL's text of the array: {upload,ingest} */
	long long expires; /* Unix time; 0 for never */
	time_t used_at;	   /* when this process last wrote last_used_at */
};

static struct user_slot users[SLOTS];
static struct key_slot keys[SLOTS];

static size_t
slot_of(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h % SLOTS;
}

/* Empties u, freeing what it holds. */
static void
user_clear(struct user_slot *u)
{
	free(u->email);
	free(u->display_name);
	memset(u, 0, sizeof(*u));
}

void
authn_forget(void)
{
	for (size_t i = 0; i < SLOTS; i++)
		user_clear(&users[i]);
	memset(keys, 0, sizeof(keys));
}

/*
 * The host's change counter, shared by the processes of one user: a
 * process whose own request changed an account (it receives its own
 * notification before its statement returns) adds one before it answers,
 * and the others drop their caches on their next check.  A notification
 * takes a moment to reach another process; the counter does not, so a
 * change made through this host is seen by the very next request.
 */
static atomic_ulong *host_epoch;
static unsigned long host_seen;

static atomic_ulong *
host_counter(void)
{
	static bool tried;
	char name[64];
	void *p;
	int fd;

	if (tried)
		return host_epoch;
	tried = true;
	snprintf(name, sizeof(name), "/xmhub-authn-%u", (unsigned)geteuid());
	if ((fd = shm_open(name, O_RDWR | O_CREAT, 0600)) < 0 ||
	    ftruncate(fd, sizeof(atomic_ulong)) != 0 ||
	    (p = mmap(NULL, sizeof(atomic_ulong), PROT_READ | PROT_WRITE,
		      MAP_SHARED, fd, 0)) == MAP_FAILED) {
		/* Notifications alone still work, a moment later. */
		perror("authn: shared change counter");
		p = NULL;
	}
	if (fd >= 0)
		close(fd);
	host_epoch = p;
	return host_epoch;
}

/*
 * With XMHUB_MULTI_HOST=1: true when the counter of sql/016 (bumped in
 * the transaction of every change a check reads) moved since this
 * process last read it, or could not be read.  A notification from
 * another host may arrive after the client's next request; the counter
 * is committed with the change, so reading it is never late.
 */
static bool
db_epoch_moved(struct db *db)
{
	static int multi = -1;
	static char seen[24];
	PGresult *res = NULL;
	bool on, moved = true;

	if (multi < 0) {
		/* A malformed value counts as on: the safe side. */
		multi = !settings_bool(conf_get("XMHUB_MULTI_HOST"), &on) || on;
	}
	if (!multi && !db_pooled(db))
		return false;
	if (db_query_ro(db, &res, "SELECT n FROM authn_epoch", 0, NULL) !=
		    DB_OK ||
	    PQntuples(res) != 1)
		goto out;
	moved = strcmp(seen, PQgetvalue(res, 0, 0)) != 0;
	snprintf(seen, sizeof(seen), "%s", PQgetvalue(res, 0, 0));
out:
	PQclear(res);
	return moved;
}

/* Drops the cache when a change was notified or counted, or may have
 * been missed. */
static void
sync_cache(struct db *db)
{
	atomic_ulong *c = host_counter();
	bool missed = false,
	     stale = !db_pooled(db) && (!db_listen(db, CHANNEL) ||
					db_notified(db, &missed) > 0 || missed);

	stale = db_epoch_moved(db) || stale;

	if (c != NULL && atomic_load(c) != host_seen) {
		host_seen = atomic_load(c);
		stale = true;
	}
	if (stale)
		authn_forget();
}

bool
authn_basic(const char *authorization, const char *user, const char *password,
	    bool hashed)
{
	const char *h = authorization;
	struct buf dec;
	char *colon;
	bool ok = false;

	if (h == NULL || strncasecmp(h, "Basic ", 6) != 0 ||
	    strlen(h) > AUTHN_BASIC_MAX || password == NULL)
		return false;
	buf_init(&dec, AUTHN_BASIC_MAX);
	if (base64_decode(&dec, h + 6, strlen(h + 6))) {
		buf_putc(&dec, '\0');
		colon = dec.failed ? NULL : strchr((char *)dec.p, ':');
		if (colon != NULL) {
			*colon = '\0';
			/* Both compared, each in constant time (a hash
			 * takes its Argon2id time whatever the user). */
			ok = auth_equal((char *)dec.p, user);
			ok = (hashed ? auth_password_verify(password, colon + 1)
				     : auth_equal(colon + 1, password)) &&
			     ok;
		}
	}
	buf_free(&dec);
	return ok;
}

void
authn_settle(struct db *db)
{
	atomic_ulong *c = host_counter();
	bool missed;
	int n = db_notified(db, &missed);

	if (n > 0 || missed)
		authn_forget();
	if (n > 0 && c != NULL)
		host_seen = atomic_fetch_add(c, 1) + 1;
}

/* The profile too (e-mail, display name): /api/auth/me answers from the
 * cache, and sql/022 notifies changes of those columns. */
static const char user_sql[] =
	"SELECT u.role, coalesce(u.facility_id::text, ''), "
	"u.is_active AND coalesce(f.is_active, true), u.token_version, "
	"u.email, u.display_name "
	"FROM users u LEFT JOIN facilities f ON f.id = u.facility_id "
	"WHERE u.id = $1::uuid";

/* The state of user id, from the cache or the database; NULL with the
 * answer set when the database fails. */
static const struct user_slot *
user_state(struct db *db, const char *id, struct http_resp *resp)
{
	struct user_slot *u = &users[slot_of(id)];
	PGresult *res = NULL;
	enum db_status st;

	if (u->used && strcmp(u->id, id) == 0)
		return u;
	if ((st = db_query_ro(db, &res, user_sql, 1, &id)) != DB_OK) {
		http_db_error(resp, st);
		PQclear(res);
		return NULL;
	}
	user_clear(u);
	snprintf(u->id, sizeof(u->id), "%s", id);
	/* A deleted user is cached too: its tokens are refused quickly. */
	if (PQntuples(res) == 1 &&
	    auth_role_from_name(PQgetvalue(res, 0, 0), &u->role)) {
		snprintf(u->facility_id, sizeof(u->facility_id), "%s",
			 PQgetvalue(res, 0, 1));
		u->active = PQgetvalue(res, 0, 2)[0] == 't';
		u->ver = strtoll(PQgetvalue(res, 0, 3), NULL, 10);
		if (u->active) {
			u->email = strdup(PQgetvalue(res, 0, 4));
			u->display_name = strdup(PQgetvalue(res, 0, 5));
		}
	}
	PQclear(res);
	/* Out of memory: nothing cached, the answer says why. */
	if (u->active && (u->email == NULL || u->display_name == NULL)) {
		user_clear(u);
		http_error(resp, 500, "out of memory");
		return NULL;
	}
	u->used = true;
	return u;
}

bool
authn_profile(const char *user_id, const char **email,
	      const char **display_name)
{
	const struct user_slot *u = &users[slot_of(user_id)];

	if (!u->used || !u->active || strcmp(u->id, user_id) != 0)
		return false;
	*email = u->email;
	*display_name = u->display_name;
	return true;
}

bool
authn_jwt(const struct http_req *req, struct db *db, const char *secret,
	  int min_role, struct authn_who *who, struct http_resp *resp)
{
	const char *h = req->authorization;
	const struct user_slot *u;
	struct auth_claims c;

	if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0 || h[7] == '\0') {
		http_error(resp, 401, "a bearer token is required");
		return false;
	}
	switch (auth_jwt_verify(secret, h + 7, "access", &c)) {
	case AUTH_JWT_OK:
		break;
	case AUTH_JWT_EXPIRED:
		http_error(resp, 401, "the access token has expired");
		return false;
	default:
		http_error(resp, 401, "invalid access token");
		return false;
	}
	sync_cache(db);
	if ((u = user_state(db, c.sub, resp)) == NULL)
		return false;
	/* A token outlives no change of what it says: log in again. */
	if (!u->active || u->role != c.role ||
	    strcmp(u->facility_id, c.facility_id) != 0 || u->ver != c.ver) {
		http_error(resp, 401,
			   "the access token is no longer valid: the account "
			   "changed; log in again");
		return false;
	}
	if ((int)c.role < min_role) {
		http_error(resp, 403, "insufficient role");
		return false;
	}
	who->kind = ROUTE_JWT;
	who->role = c.role;
	snprintf(who->user_id, sizeof(who->user_id), "%s", c.sub);
	snprintf(who->facility_id, sizeof(who->facility_id), "%s",
		 c.facility_id);
	return true;
}

static const char key_sql[] =
	"SELECT k.id, k.facility_id, k.name, k.scopes, "
	"coalesce(extract(epoch FROM k.expires_at)::bigint, 0) "
	"FROM api_keys k JOIN facilities f ON f.id = k.facility_id "
	"WHERE k.key_hash = $1 AND k.is_active AND f.is_active";

/* last_used_at is kept to the minute, so a device's steady traffic does
 * not cost a write (and a WAL flush) per request. */
static const char used_sql[] =
	"UPDATE api_keys SET last_used_at = now() WHERE id = $1::uuid "
	"AND (last_used_at IS NULL "
	"OR last_used_at < now() - interval '60 seconds')";

/* True when the array text scopes ("{upload,ingest}") holds name. */
static bool
has_scope(const char *scopes, const char *name)
{
	size_t n = strlen(name);
	const char *p = scopes;

	while (*p != '\0') {
		p += strspn(p, "{,");
		if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '}'))
			return true;
		p += strcspn(p, ",}");
		if (*p == '}')
			break;
	}
	return false;
}

/*
 * The status of the key whose SHA-256 is hash for scope (NULL: any): 200
 * with *who filled, 401 (unknown, revoked, expired, inactive facility),
 * 403 (usable, without scope), 503 or 500; detail set when not 200.
 */
static int
key_check(struct db *db, const char *hash, const char *scope,
	  struct authn_who *who, char *detail, size_t dlen)
{
	struct key_slot *k = &keys[slot_of(hash)];
	PGresult *res = NULL;
	enum db_status st;
	time_t now = time(NULL);

	sync_cache(db);
	if (!k->used || strcmp(k->hash, hash) != 0) {
		if ((st = db_query_ro(db, &res, key_sql, 1, &hash)) != DB_OK) {
			const char *why;
			int status = http_db_status(st, &why);

			PQclear(res);
			snprintf(detail, dlen, "%s", why);
			return status;
		}
		/* Unknown keys are not cached: they would push known ones
		 * out, and cost a query now as they did before. */
		if (PQntuples(res) != 1) {
			PQclear(res);
			snprintf(detail, dlen, "invalid API key");
			return 401;
		}
		memset(k, 0, sizeof(*k));
		snprintf(k->hash, sizeof(k->hash), "%s", hash);
		snprintf(k->id, sizeof(k->id), "%s", PQgetvalue(res, 0, 0));
		snprintf(k->facility_id, sizeof(k->facility_id), "%s",
			 PQgetvalue(res, 0, 1));
		snprintf(k->name, sizeof(k->name), "%s", PQgetvalue(res, 0, 2));
		snprintf(k->scopes, sizeof(k->scopes), "%s",
			 PQgetvalue(res, 0, 3));
		k->expires = strtoll(PQgetvalue(res, 0, 4), NULL, 10);
		k->used = true;
		PQclear(res);
		res = NULL;
	}
	if (k->expires != 0 && (long long)now >= k->expires) {
		snprintf(detail, dlen, "invalid API key");
		return 401;
	}
	if (scope != NULL && !has_scope(k->scopes, scope)) {
		snprintf(detail, dlen, "the API key lacks the %s scope", scope);
		return 403;
	}
	if (now - k->used_at >= USED_EVERY) {
		const char *id = k->id;

		/* Best effort: a failed write of the time is no refusal. */
		if (db_query(db, &res, used_sql, 1, &id) == DB_OK)
			k->used_at = now;
		PQclear(res);
	}
	memset(who, 0, sizeof(*who));
	who->kind = ROUTE_API_KEY;
	who->role = ROLE_USER;
	snprintf(who->key_id, sizeof(who->key_id), "%s", k->id);
	snprintf(who->facility_id, sizeof(who->facility_id), "%s",
		 k->facility_id);
	snprintf(who->key_name, sizeof(who->key_name), "%s", k->name);
	return 200;
}

int
authn_api_key_status(struct db *db, const char *key, const char *scope,
		     struct authn_who *who, char *detail, size_t dlen)
{
	char prefix[AUTH_KEY_PREFIX], hash[AUTH_SHA256_HEX];

	if (key == NULL || *key == '\0') {
		snprintf(detail, dlen, "an X-Api-Key header is required");
		return 401;
	}
	if (!auth_api_key_parse(key, prefix, hash)) {
		snprintf(detail, dlen, "invalid API key");
		return 401;
	}
	return key_check(db, hash, scope, who, detail, dlen);
}

bool
authn_api_key(const struct http_req *req, struct db *db, const char *scope,
	      struct authn_who *who, struct http_resp *resp)
{
	char detail[128];
	int status = authn_api_key_status(db, req->api_key, scope, who, detail,
					  sizeof(detail));

	if (status != 200)
		http_error(resp, status, "%s", detail);
	return status == 200;
}
