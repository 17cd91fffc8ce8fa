-- 010_ingest_recent: idempotent retries of ingest batches.
--
-- A device that lost an acknowledgement resends the same batch.  Each
-- session keeps the digests (the first 16 bytes of the SHA-256 of the
-- whole batch, batch_seq included) of its last 64 stored batches, one
-- after the other, oldest first (at most 1 KiB); a batch whose digest is
-- among them is acknowledged again and not stored (doc/ingest.md
-- "Retries").  They are written by the statement that counts the batch,
-- under the session row's lock.
ALTER TABLE ingest_sessions
	ADD COLUMN recent_batches bytea NOT NULL DEFAULT '';
