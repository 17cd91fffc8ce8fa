-- 010_ingest_recent: idempotent retries of ingest batches.
--
-- A device that lost an acknowledgement resends the same batch.  Each
-- session keeps the digests (the first 16 bytes of the SHA-256 of the
-- whole batch, batch_seq included) of its last 64 stored batches, oldest
-- first; a batch whose digest is among them is acknowledged again and
-- not stored (doc/ingest.md "Retries").  The array is written by the
-- same UPDATE that counts the batch, under the session row's lock.
ALTER TABLE ingest_sessions
	ADD COLUMN recent_batches bytea[] NOT NULL DEFAULT '{}';
