-- 004_face.sql - the face service's own tables (doc/face.md), used when
-- FACE_API_STORAGE_ENABLED is true: stored images, the detect and mask
-- jobs run on them, and the service's API keys.  Every name starts with
-- face_; nothing here refers to the platform's tables.
--
-- Decisions (doc/face.md):
-- - Objects live in the object store under face/: the original of an
--   image at face/images/{id}/original, the output of a mask job at
--   face/jobs/{id}/output; the rows keep the keys.
-- - A job belongs to its image: deleting an image deletes its jobs
--   (ON DELETE CASCADE); the service deletes their objects.
-- - API keys are stored in plaintext, as the face API defines them
--   (doc/face.md "API keys": always visible through the admin API); the
--   admin API is behind HTTP Basic.

CREATE TABLE face_api_keys (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	key text NOT NULL UNIQUE CHECK (key <> ''),
	name text NOT NULL CHECK (name <> '' AND length(name) <= 200),
	is_active boolean NOT NULL DEFAULT true,
	request_count bigint NOT NULL DEFAULT 0 CHECK (request_count >= 0),
	last_used_at timestamptz,
	created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE face_images (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	filename text,
	content_type text NOT NULL,
	size_bytes bigint NOT NULL CHECK (size_bytes >= 0),
	width integer NOT NULL CHECK (width > 0),
	height integer NOT NULL CHECK (height > 0),
	object_key text NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX face_images_created ON face_images (created_at, id);

CREATE TABLE face_jobs (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	image_id uuid NOT NULL REFERENCES face_images ON DELETE CASCADE,
	job_type text NOT NULL CHECK (job_type IN ('detect', 'mask')),
	-- The masking parameters; NULL for detect jobs.
	method text CHECK (method IN ('gaussian', 'pixelate', 'solid',
		'elliptical')),
	strength integer,
	padding double precision,
	output_format text CHECK (output_format IN ('jpeg', 'png', 'webp')),
	quality integer,
	CHECK ((job_type = 'mask') = (method IS NOT NULL)),
	confidence_threshold double precision NOT NULL,
	nms_threshold double precision NOT NULL,
	max_faces integer NOT NULL,
	model text NOT NULL,
	face_count integer NOT NULL CHECK (face_count >= 0),
	-- The Detection objects of the response, as answered.
	detections jsonb NOT NULL,
	inference_ms double precision NOT NULL,
	total_ms double precision NOT NULL,
	-- Mask jobs: the processed image in the object store.
	output_key text,
	output_content_type text,
	output_bytes bigint,
	api_key_id uuid REFERENCES face_api_keys ON DELETE SET NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX face_jobs_image ON face_jobs (image_id);
CREATE INDEX face_jobs_created ON face_jobs (created_at, id);
