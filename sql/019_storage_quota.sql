-- 019_storage_quota: what each facility stores, its storage quota and its
-- retention policy (doc/storage.md "Quotas and retention").
--
-- One row per facility, made with the facility and gone with it.  The
-- byte counts are moved by the triggers below in the transaction that
-- writes or deletes the rows naming the bytes, so they are exact at every
-- commit (the samples' through facility_storage_delta, below):
-- - upload_bytes: the originals (uploads.original_size_bytes, the bytes
--   the object store took) and the transcode outputs
--   (transcode_jobs.output_size_bytes, set when the output is stored);
-- - sample_bytes: the stored chunks of the facility's ingest sessions
--   (stored_chunks.byte_size, inline or in the object store).
-- The face service is not a facility's (its keys and jobs name none,
-- doc/face.md): its objects are not counted here.
--
-- quota_bytes: the most upload_bytes + sample_bytes may reach, NULL for
-- no limit.  keep_*_days: how long samples (whole ingest sessions, by
-- their start) and uploads (by their creation) are kept, NULL for ever;
-- the retention runner (jobs/retention.c) deletes what is older.
CREATE TABLE facility_storage (
	facility_id uuid PRIMARY KEY REFERENCES facilities ON DELETE CASCADE,
	quota_bytes bigint CHECK (quota_bytes >= 0),
	keep_samples_days integer CHECK (keep_samples_days BETWEEN 1 AND 36500),
	keep_uploads_days integer CHECK (keep_uploads_days BETWEEN 1 AND 36500),
	upload_bytes bigint NOT NULL DEFAULT 0,
	sample_bytes bigint NOT NULL DEFAULT 0,
	updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION facility_storage_create() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO facility_storage (facility_id) VALUES (NEW.id);
	RETURN NULL;
END
$$;
CREATE TRIGGER facilities_storage AFTER INSERT ON facilities
	FOR EACH ROW EXECUTE FUNCTION facility_storage_create();

-- Uploads and transcode jobs carry their facility: one row, one update.
CREATE FUNCTION facility_storage_uploads() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
	d bigint;
	f uuid;
BEGIN
	IF TG_TABLE_NAME = 'uploads' THEN
		d := CASE TG_OP WHEN 'INSERT' THEN NEW.original_size_bytes
			ELSE -OLD.original_size_bytes END;
	ELSE
		d := CASE TG_OP WHEN 'DELETE' THEN 0
			ELSE coalesce(NEW.output_size_bytes, 0) END
		   - CASE TG_OP WHEN 'INSERT' THEN 0
			ELSE coalesce(OLD.output_size_bytes, 0) END;
	END IF;
	f := CASE TG_OP WHEN 'DELETE' THEN OLD.facility_id
		ELSE NEW.facility_id END;
	IF d <> 0 THEN
		UPDATE facility_storage SET upload_bytes = upload_bytes + d
		WHERE facility_id = f;
	END IF;
	RETURN NULL;
END
$$;
CREATE TRIGGER uploads_storage AFTER INSERT OR DELETE ON uploads
	FOR EACH ROW EXECUTE FUNCTION facility_storage_uploads();
CREATE TRIGGER transcode_jobs_storage
	AFTER INSERT OR DELETE OR UPDATE OF output_size_bytes ON transcode_jobs
	FOR EACH ROW EXECUTE FUNCTION facility_storage_uploads();

-- Stored chunks are written by every ingest round: their bytes go to
-- facility_storage_delta, one row per statement and facility, so that
-- concurrent rounds of one facility never wait for its facility_storage
-- row (a counter updated by each would make their commits one after
-- another: bench/bounds measured 0.73x the ingest rate).  What a facility
-- stores in samples is its row's sample_bytes plus its deltas
-- (facility_usage); facility_storage_fold() moves a facility's deltas
-- into its row: ingest rounds of a facility with a quota fold under its
-- locked row before they charge a batch (exact), the retention runner
-- folds every facility on each pass.  Chunks name their facility through
-- their stream and session; a chunk whose session is gone in the same
-- statement (a facility deleted: its rows go too) is not counted, and
-- whoever deletes sessions deletes their chunks first (jobs/retention.c).
CREATE TABLE facility_storage_delta (
	facility_id uuid NOT NULL REFERENCES facilities ON DELETE CASCADE,
	sample_bytes bigint NOT NULL
);
CREATE INDEX facility_storage_delta_facility
	ON facility_storage_delta (facility_id);

CREATE FUNCTION facility_storage_chunks() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		INSERT INTO facility_storage_delta (facility_id, sample_bytes)
		SELECT s.facility_id, sum(c.byte_size)
		FROM new_chunks c
		JOIN ingest_streams t ON t.id = c.stream_id
		JOIN ingest_sessions s ON s.id = t.session_id
		GROUP BY s.facility_id;
	ELSE
		INSERT INTO facility_storage_delta (facility_id, sample_bytes)
		SELECT s.facility_id, -sum(c.byte_size)
		FROM old_chunks c
		JOIN ingest_streams t ON t.id = c.stream_id
		JOIN ingest_sessions s ON s.id = t.session_id
		GROUP BY s.facility_id;
	END IF;
	RETURN NULL;
END
$$;

-- Moves the deltas of facility f into its row and returns the row as it
-- then is (the row stays locked until the caller's transaction ends).
-- Deltas inserted by transactions that commit later stay for the next
-- fold.
CREATE FUNCTION facility_storage_fold(f uuid) RETURNS SETOF facility_storage
LANGUAGE sql AS $$
	WITH d AS (
		DELETE FROM facility_storage_delta WHERE facility_id = f
		RETURNING sample_bytes
	)
	UPDATE facility_storage
	SET sample_bytes = sample_bytes
		+ coalesce((SELECT sum(sample_bytes) FROM d), 0)
	WHERE facility_id = f
	RETURNING *;
$$;

-- What each facility stores now: its row with its deltas added.
CREATE VIEW facility_usage AS
SELECT s.facility_id, s.quota_bytes, s.keep_samples_days,
	s.keep_uploads_days, s.upload_bytes,
	s.sample_bytes + coalesce((SELECT sum(d.sample_bytes)
		FROM facility_storage_delta d
		WHERE d.facility_id = s.facility_id), 0) AS sample_bytes,
	s.updated_at
FROM facility_storage s;

CREATE TRIGGER stored_chunks_storage_insert AFTER INSERT ON stored_chunks
	REFERENCING NEW TABLE AS new_chunks
	FOR EACH STATEMENT EXECUTE FUNCTION facility_storage_chunks();
CREATE TRIGGER stored_chunks_storage_delete AFTER DELETE ON stored_chunks
	REFERENCING OLD TABLE AS old_chunks
	FOR EACH STATEMENT EXECUTE FUNCTION facility_storage_chunks();

-- What is stored already.  The migration runs under its advisory lock
-- but writers may be running: the table is locked against them while
-- it is counted, so that no byte is counted twice or missed.
LOCK TABLE uploads, transcode_jobs, stored_chunks IN SHARE MODE;
INSERT INTO facility_storage (facility_id, upload_bytes, sample_bytes)
SELECT f.id,
	coalesce((SELECT sum(u.original_size_bytes) FROM uploads u
		WHERE u.facility_id = f.id), 0)
	+ coalesce((SELECT sum(j.output_size_bytes) FROM transcode_jobs j
		WHERE j.facility_id = f.id), 0),
	coalesce((SELECT sum(c.byte_size) FROM stored_chunks c
		JOIN ingest_streams t ON t.id = c.stream_id
		JOIN ingest_sessions s ON s.id = t.session_id
		WHERE s.facility_id = f.id), 0)
FROM facilities f;
