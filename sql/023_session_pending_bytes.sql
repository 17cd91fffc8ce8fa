-- 023_session_pending_bytes: an ingest round counts the samples' bytes it
-- stores in its session's row, which it updates anyway, instead of
-- inserting a facility_storage_delta row (doc/storage.md "Quotas and
-- retention").
--
-- sql/020's delta row, joined to ingest_streams and ingest_sessions to
-- find the facility, cost 1.07-1.18x a round's PostgreSQL CPU
-- (bench/quota-cost), and an upload's fold met the thousands of delta
-- rows ingest left since the last one.  Now:
-- - ingest_sessions.pending_bytes: the bytes of the chunks the session's
--   rounds stored that facility_storage does not hold yet.  Rounds add to
--   it in the UPDATE of the session they already make
--   (lib/domain/ingest.c, write_sql); it is in no index, so that update
--   stays a HOT one.
-- - Only active sessions take rounds (checked under the session's row
--   lock), and a session never becomes active again: when its status
--   leaves 'active' (closed, reaped to error) the trigger below moves its
--   pending bytes into a delta row, in the same statement.  Deleting a
--   session with pending bytes (retention, a device deleted) does the
--   same, unless its facility goes in the same statement (its counts go
--   with it).  So what a facility stores in samples is its row's
--   sample_bytes, plus its deltas (one per session ended, compaction's,
--   the deletes'), plus the pending bytes of its active sessions: a sum
--   over its active sessions (ingest_sessions_facility_active), never
--   over its history.
-- - facility_usage and facility_storage_fold() add those pending bytes;
--   the fold leaves them in the sessions (their rounds own them).  The
--   fold locks the facility's row before it reads anything, in a
--   statement of its own, so that what it reads was committed before it
--   had the lock (a round of a facility with a quota commits its bytes
--   under that lock).
--
-- The migration runs with writers: a program of before this migration
-- still inserts sql/020's delta rows (pending_bytes stays 0 for its
-- rounds); both are counted.  ADD COLUMN (its CHECK) and CREATE INDEX
-- each hold off the sessions' writers while they read the table once (a
-- row per session: no rewrite).
ALTER TABLE ingest_sessions
	ADD COLUMN pending_bytes bigint NOT NULL DEFAULT 0
		CHECK (pending_bytes >= 0);
CREATE INDEX ingest_sessions_facility_active ON ingest_sessions (facility_id)
	WHERE status = 'active';

-- Only statements that set status fire it (rounds do not).
CREATE FUNCTION ingest_sessions_pending_fold() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO facility_storage_delta (facility_id, sample_bytes)
	VALUES (NEW.facility_id, NEW.pending_bytes);
	NEW.pending_bytes := 0;
	RETURN NEW;
END
$$;
CREATE TRIGGER ingest_sessions_pending_fold BEFORE UPDATE OF status
	ON ingest_sessions FOR EACH ROW
	WHEN (OLD.status = 'active' AND NEW.status <> 'active'
		AND NEW.pending_bytes <> 0)
	EXECUTE FUNCTION ingest_sessions_pending_fold();

-- Sessions are deleted ended (jobs/retention.c: no pending bytes) or
-- with their facility; this keeps the count exact for any other delete.
-- A session deleted by the cascade of its facility's delete finds no
-- facility (that delete came first and is visible here): its bytes are
-- not counted, as sql/019's chunk trigger does not count its chunks.
CREATE FUNCTION ingest_sessions_pending_gone() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO facility_storage_delta (facility_id, sample_bytes)
	SELECT OLD.facility_id, OLD.pending_bytes
	FROM facilities WHERE id = OLD.facility_id;
	RETURN NULL;
END
$$;
CREATE TRIGGER ingest_sessions_pending_gone AFTER DELETE ON ingest_sessions
	FOR EACH ROW WHEN (OLD.pending_bytes <> 0)
	EXECUTE FUNCTION ingest_sessions_pending_gone();

-- The pending bytes of facility f's active sessions.
CREATE FUNCTION facility_storage_pending(f uuid) RETURNS bigint
LANGUAGE sql STABLE AS $$
	SELECT coalesce(sum(pending_bytes), 0)::bigint FROM ingest_sessions
	WHERE facility_id = f AND status = 'active';
$$;

-- As sql/019's, the pending bytes of its active sessions added to
-- sample_bytes of the row it returns (not moved: see above); the row is
-- locked first, in a statement of its own.
CREATE OR REPLACE FUNCTION facility_storage_fold(f uuid)
RETURNS SETOF facility_storage
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM 1 FROM facility_storage WHERE facility_id = f FOR UPDATE;
	RETURN QUERY
	WITH d AS (
		DELETE FROM facility_storage_delta WHERE facility_id = f
		RETURNING sample_bytes
	), u AS (
		UPDATE facility_storage
		SET sample_bytes = sample_bytes
			+ coalesce((SELECT sum(sample_bytes) FROM d), 0)
		WHERE facility_id = f
		RETURNING *
	)
	SELECT u.facility_id, u.quota_bytes, u.keep_samples_days,
		u.keep_uploads_days, u.upload_bytes,
		u.sample_bytes + facility_storage_pending(f), u.updated_at
	FROM u;
END
$$;

CREATE OR REPLACE VIEW facility_usage AS
SELECT s.facility_id, s.quota_bytes, s.keep_samples_days,
	s.keep_uploads_days, s.upload_bytes,
	s.sample_bytes + coalesce((SELECT sum(d.sample_bytes)
		FROM facility_storage_delta d
		WHERE d.facility_id = s.facility_id), 0)
		+ facility_storage_pending(s.facility_id) AS sample_bytes,
	s.updated_at
FROM facility_storage s;
