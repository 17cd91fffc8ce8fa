-- 007_transcode_lost: runs lost with their runner are not attempts.
--
-- A runner that dies (SIGKILL, a crash, the machine) leaves its job
-- running until the lease expires and another runner takes it back.
-- That run said nothing about the input, so it no longer uses up one of
-- the job's attempts (which count the input's failures); it is counted
-- here instead, and a job whose runner is lost JOBS_LOST_MAX times fails
-- (lib/domain/jobs.h, doc/transcoding.md).  The column is also part of
-- a run's identity in the runner's guarded updates.
ALTER TABLE transcode_jobs
	ADD COLUMN lost_runs integer NOT NULL DEFAULT 0 CHECK (lost_runs >= 0);
