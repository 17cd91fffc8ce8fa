-- 001_schema.sql - the platform's resources (doc/api.md and the pages it
-- names) and what the services need beside them.
--
-- Decisions, all tables:
-- - Keys are UUIDs from gen_random_uuid() (built in since PostgreSQL 13);
--   times are timestamptz.
-- - Status and role columns are text with a CHECK listing exactly the
--   names the API answers with, so that the API's strings are the stored
--   ones.
-- - Everything that belongs to a facility has facility_id NOT NULL with
--   ON DELETE CASCADE: DELETE /api/v1/facilities/{id} "removes the facility
--   and all its data" with one statement.  Rows that belong to a facility
--   through a parent (refresh tokens, streams, chunks) cascade from that
--   parent.  Stored objects (files, chunks) are not rows: whoever deletes a
--   facility or an upload removes its objects too.
-- - Links between two facility-scoped rows carry facility_id in a
--   composite foreign key on (id, facility_id), so that a row can never
--   point into another facility, whatever the application does.
-- - updated_at follows every UPDATE through one trigger function.
-- - No DB defaults for settings that come from configuration (transcode
--   targets, token lifetimes): the application writes them.

CREATE FUNCTION set_updated_at() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	NEW.updated_at = now();
	RETURN NEW;
END
$$;

CREATE TABLE facilities (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	name text NOT NULL CHECK (name <> ''),
	-- URL-friendly: lower-case letters, digits, inner hyphens.
	slug text NOT NULL UNIQUE
		CHECK (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(slug) <= 100),
	description text,
	is_active boolean NOT NULL DEFAULT true,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TRIGGER facilities_updated_at BEFORE UPDATE ON facilities
	FOR EACH ROW EXECUTE FUNCTION set_updated_at();

CREATE TABLE users (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	facility_id uuid REFERENCES facilities ON DELETE CASCADE,
	email text NOT NULL CHECK (email ~ '^[^@[:space:]]+@[^@[:space:]]+$'),
	password_hash text NOT NULL, -- Argon2id, libargon2's encoded form
	display_name text NOT NULL,
	role text NOT NULL
		CHECK (role IN ('super_admin', 'facility_admin', 'user')),
	is_active boolean NOT NULL DEFAULT true,
	last_login_at timestamptz,
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	-- A super_admin belongs to no facility; everyone else to exactly one.
	CONSTRAINT users_facility_iff_not_super
		CHECK ((role = 'super_admin') = (facility_id IS NULL))
);
-- E-mail addresses are unique whatever their case; the stored spelling
-- is the one given.
CREATE UNIQUE INDEX users_email_key ON users (lower(email));
CREATE INDEX users_facility ON users (facility_id);
CREATE TRIGGER users_updated_at BEFORE UPDATE ON users
	FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- Refresh tokens are single use and rotated on every refresh.  Only a
-- SHA-256 of the token is stored.  Every token of one login shares its
-- family_id: presenting a used token revokes the whole family (reuse
-- detection, doc/auth.md "Tokens (JWT)").
CREATE TABLE refresh_tokens (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	user_id uuid NOT NULL REFERENCES users ON DELETE CASCADE,
	family_id uuid NOT NULL,
	token_hash text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
	created_at timestamptz NOT NULL DEFAULT now(),
	expires_at timestamptz NOT NULL,
	used_at timestamptz,
	revoked_at timestamptz
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id);

-- Platform API keys: "xmk_" + base62; key_prefix is its first 12
-- characters, key_hash its SHA-256 (the key itself is never stored).
-- Revocation sets is_active false and keeps the row, so uploads keep
-- naming the key they came with.  created_by is null for keys made with
-- the CLI, or when that user is gone.
CREATE TABLE api_keys (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	facility_id uuid NOT NULL REFERENCES facilities ON DELETE CASCADE,
	name text NOT NULL CHECK (name <> ''),
	key_prefix text NOT NULL CHECK (length(key_prefix) = 12),
	key_hash text NOT NULL UNIQUE CHECK (key_hash ~ '^[0-9a-f]{64}$'),
	-- All scopes when none are given at creation.
	scopes text[] NOT NULL DEFAULT '{upload,ingest}'
		CHECK (scopes <@ '{upload,ingest}'::text[]),
	is_active boolean NOT NULL DEFAULT true,
	expires_at timestamptz, -- null: never
	last_used_at timestamptz,
	created_by uuid REFERENCES users ON DELETE SET NULL,
	created_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (id, facility_id)
);
CREATE INDEX api_keys_facility ON api_keys (facility_id);

CREATE TABLE devices (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	facility_id uuid NOT NULL REFERENCES facilities ON DELETE CASCADE,
	device_uid bigint NOT NULL CHECK (device_uid BETWEEN 0 AND 4294967295),
	name text NOT NULL,
	hardware_version text,
	firmware_version text,
	is_active boolean NOT NULL DEFAULT true,
	last_seen_at timestamptz,
	created_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (facility_id, device_uid),
	UNIQUE (id, facility_id)
);

-- Tag names are unique within a facility, case included.
CREATE TABLE tags (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	facility_id uuid NOT NULL REFERENCES facilities ON DELETE CASCADE,
	name text NOT NULL CHECK (name <> ''),
	color text CHECK (color ~ '^#[0-9A-Fa-f]{6}$'),
	created_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (facility_id, name),
	UNIQUE (id, facility_id)
);

-- The original file is kept unchanged in the object store under a key
-- derived from the upload's id; the media fields stay null until
-- transcoding has finished.
CREATE TABLE uploads (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	facility_id uuid NOT NULL REFERENCES facilities ON DELETE CASCADE,
	api_key_id uuid NOT NULL,
	uploaded_by uuid REFERENCES users ON DELETE SET NULL,
	original_filename text NOT NULL,
	original_format text NOT NULL, -- lower-case extension: wav, flac, mp3
	original_size_bytes bigint NOT NULL CHECK (original_size_bytes >= 0),
	duration_ms bigint CHECK (duration_ms >= 0),
	sample_rate_hz integer CHECK (sample_rate_hz > 0),
	channels integer CHECK (channels > 0),
	bit_depth integer CHECK (bit_depth > 0),
	codec text,
	metadata jsonb NOT NULL DEFAULT '{}'
		CHECK (jsonb_typeof(metadata) = 'object'),
	status text NOT NULL DEFAULT 'pending'
		CHECK (status IN ('pending', 'processing', 'completed', 'failed')),
	created_at timestamptz NOT NULL DEFAULT now(),
	updated_at timestamptz NOT NULL DEFAULT now(),
	UNIQUE (id, facility_id),
	FOREIGN KEY (api_key_id, facility_id) REFERENCES api_keys (id, facility_id)
);
CREATE INDEX uploads_facility_created ON uploads (facility_id, created_at);
CREATE INDEX uploads_api_key ON uploads (api_key_id);
CREATE TRIGGER uploads_updated_at BEFORE UPDATE ON uploads
	FOR EACH ROW EXECUTE FUNCTION set_updated_at();

-- Tag links; deleting either side removes the link only.
CREATE TABLE upload_tags (
	upload_id uuid NOT NULL,
	tag_id uuid NOT NULL,
	facility_id uuid NOT NULL,
	PRIMARY KEY (upload_id, tag_id),
	FOREIGN KEY (upload_id, facility_id) REFERENCES uploads (id, facility_id)
		ON DELETE CASCADE,
	FOREIGN KEY (tag_id, facility_id) REFERENCES tags (id, facility_id)
		ON DELETE CASCADE
);
CREATE INDEX upload_tags_tag ON upload_tags (tag_id);

-- Transcode jobs (doc/transcoding.md): runners claim queued jobs
-- whose run_after has passed with FOR UPDATE SKIP LOCKED; a retry sets
-- run_after later (backoff); a running job whose heartbeat_at is older
-- than the lease is taken back.  The output lands in the object store
-- under a key derived from the job's id.
CREATE TABLE transcode_jobs (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	upload_id uuid NOT NULL,
	facility_id uuid NOT NULL,
	target_format text NOT NULL,
	target_codec text NOT NULL,
	target_container text NOT NULL,
	target_bitrate text NOT NULL,
	target_sample_rate integer CHECK (target_sample_rate > 0),
	output_size_bytes bigint CHECK (output_size_bytes >= 0),
	output_duration_ms bigint CHECK (output_duration_ms >= 0),
	status text NOT NULL DEFAULT 'queued'
		CHECK (status IN ('queued', 'running', 'completed', 'failed',
				  'cancelled')),
	error_message text,
	attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
	max_attempts integer NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
	queued_at timestamptz NOT NULL DEFAULT now(),
	run_after timestamptz NOT NULL DEFAULT now(),
	started_at timestamptz,
	heartbeat_at timestamptz,
	completed_at timestamptz,
	worker_id text,
	FOREIGN KEY (upload_id, facility_id) REFERENCES uploads (id, facility_id)
		ON DELETE CASCADE
);
CREATE INDEX transcode_jobs_upload ON transcode_jobs (upload_id);
CREATE INDEX transcode_jobs_facility_queued
	ON transcode_jobs (facility_id, queued_at);
CREATE INDEX transcode_jobs_claim ON transcode_jobs (run_after)
	WHERE status = 'queued';

-- Ingest sessions (doc/ingest.md): last_batch_seq is null until the
-- first batch sets the baseline of gap counting; last_data_at drives the
-- reaper that moves idle active sessions to error.
CREATE TABLE ingest_sessions (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	facility_id uuid NOT NULL REFERENCES facilities ON DELETE CASCADE,
	device_id uuid NOT NULL,
	name text,
	metadata jsonb NOT NULL DEFAULT '{}'
		CHECK (jsonb_typeof(metadata) = 'object'),
	status text NOT NULL DEFAULT 'active'
		CHECK (status IN ('active', 'closing', 'closed', 'error')),
	started_at timestamptz NOT NULL DEFAULT now(),
	last_data_at timestamptz,
	closed_at timestamptz,
	total_samples bigint NOT NULL DEFAULT 0 CHECK (total_samples >= 0),
	total_bytes bigint NOT NULL DEFAULT 0 CHECK (total_bytes >= 0),
	missed_batches bigint NOT NULL DEFAULT 0 CHECK (missed_batches >= 0),
	last_batch_seq integer CHECK (last_batch_seq BETWEEN 0 AND 65535),
	FOREIGN KEY (device_id, facility_id) REFERENCES devices (id, facility_id)
		ON DELETE CASCADE
);
CREATE INDEX ingest_sessions_facility_started
	ON ingest_sessions (facility_id, started_at);
CREATE INDEX ingest_sessions_device ON ingest_sessions (device_id);
CREATE INDEX ingest_sessions_active ON ingest_sessions (last_data_at)
	WHERE status = 'active';

-- The typed streams a session declared (doc/ingest.md "Creating a
-- session").
CREATE TABLE ingest_streams (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	session_id uuid NOT NULL REFERENCES ingest_sessions ON DELETE CASCADE,
	stream_index integer NOT NULL CHECK (stream_index BETWEEN 0 AND 65535),
	name text NOT NULL,
	value_type text NOT NULL
		CHECK (value_type IN ('f32', 'f64', 'i32', 'i64', 'bool',
				      'string', 'bytes', 'f64_array',
				      'f32_array', 'i32_array', 'json', 'i16',
				      'i8')),
	unit text,
	sample_rate_hz real CHECK (sample_rate_hz > 0),
	description text,
	UNIQUE (session_id, stream_index)
);

-- Stored samples: one row per XMCH chunk of one stream.  The chunk itself
-- lives in the object store (filesystem or S3) under object_key, not in a
-- bytea: chunks reach 64 MiB, the store serves them without loading the
-- database, and the database stays small enough to back up often.  A row
-- is written only after its object is durable.  Timestamps are XMBP's
-- u64 microseconds (doc/xmbp.md), beyond bigint: numeric(20,0), exact and
-- ordered.
CREATE TABLE stored_chunks (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	stream_id uuid NOT NULL REFERENCES ingest_streams ON DELETE CASCADE,
	start_ts_us numeric(20, 0) NOT NULL
		CHECK (start_ts_us BETWEEN 0 AND 18446744073709551615),
	end_ts_us numeric(20, 0) NOT NULL
		CHECK (end_ts_us BETWEEN 0 AND 18446744073709551615),
	sample_count bigint NOT NULL
		CHECK (sample_count BETWEEN 0 AND 4294967295),
	byte_size bigint NOT NULL CHECK (byte_size >= 0), -- as stored
	object_key text NOT NULL UNIQUE,
	created_at timestamptz NOT NULL DEFAULT now(),
	CHECK (start_ts_us <= end_ts_us)
);
CREATE INDEX stored_chunks_stream_start ON stored_chunks (stream_id, start_ts_us);
