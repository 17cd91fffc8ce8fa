-- 013_face_video.sql - the face service's video anonymization jobs
-- (doc/face-video.md): POST /api/v1/mask-video queues one, the runner
-- xmhub-face-video (jobs/face-video.c) claims it with FOR UPDATE SKIP
-- LOCKED, beats a heartbeat, reports progress and stores the result.
--
-- Decisions (doc/face-video.md):
-- - The input is at face/videos/{id}/input in the object store, the
--   masked video at face/videos/{id}/output; both go with the row.
-- - A run that dies with its runner (heartbeat older than the lease) is
--   taken back without counting an attempt; lost_runs counts such runs
--   and fails the job at 3, so that an input that kills runners can not
--   take them all down forever.
-- - The masking parameters are the job's own, fixed when it is queued.
CREATE TABLE face_video_jobs (
	id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
	status text NOT NULL DEFAULT 'queued'
		CHECK (status IN ('queued', 'running', 'completed', 'failed',
				  'cancelled')),
	filename text,
	input_key text NOT NULL,
	input_bytes bigint NOT NULL CHECK (input_bytes > 0),
	width integer NOT NULL CHECK (width > 0),
	height integer NOT NULL CHECK (height > 0),
	duration_ms bigint NOT NULL CHECK (duration_ms >= 0),
	frames_total bigint NOT NULL CHECK (frames_total >= 0),
	frames_done bigint NOT NULL DEFAULT 0 CHECK (frames_done >= 0),
	fps double precision,
	method text NOT NULL CHECK (method IN ('gaussian', 'pixelate', 'solid',
		'elliptical')),
	strength integer NOT NULL,
	padding double precision NOT NULL,
	confidence_threshold double precision NOT NULL,
	nms_threshold double precision NOT NULL,
	max_faces integer NOT NULL,
	model text,
	faces_masked bigint,
	output_key text,
	output_content_type text,
	output_bytes bigint,
	error_message text,
	attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
	max_attempts integer NOT NULL DEFAULT 3 CHECK (max_attempts >= 1),
	lost_runs integer NOT NULL DEFAULT 0 CHECK (lost_runs >= 0),
	worker_id text,
	run_after timestamptz NOT NULL DEFAULT now(),
	started_at timestamptz,
	heartbeat_at timestamptz,
	finished_at timestamptz,
	api_key_id uuid REFERENCES face_api_keys ON DELETE SET NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX face_video_jobs_claim ON face_video_jobs (run_after)
	WHERE status = 'queued';
CREATE INDEX face_video_jobs_running ON face_video_jobs (heartbeat_at)
	WHERE status = 'running';
