-- 003_ingest: stored samples of ingest sessions (doc/ingest.md).
--
-- Every committed XMBP batch adds, per stream block, one "inline" XMCH
-- chunk whose bytes are in `data`, in the transaction that moves the
-- session's counters: an acknowledgement means the samples are durable
-- without a second store to keep in step.  Compaction later replaces a
-- closed session's inline chunks by large ones in the object store
-- (object_key set, data NULL) in one transaction.  A row holds exactly
-- one of the two.
ALTER TABLE stored_chunks ADD COLUMN data bytea;
ALTER TABLE stored_chunks ALTER COLUMN object_key DROP NOT NULL;
ALTER TABLE stored_chunks ADD CONSTRAINT stored_chunks_one_place
	CHECK ((data IS NULL) <> (object_key IS NULL));

-- Insertion order: breaks ties between chunks that start at the same
-- timestamp, so that readers return samples in a stable order.
ALTER TABLE stored_chunks ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;

-- A cellular batch's chunk (4 streams x 250 f32: 3 KB each) stays in the
-- row, uncompressed, rather than going through TOAST and pglz on every
-- insert; larger ones are compressed with lz4, which costs little CPU.
ALTER TABLE stored_chunks SET (toast_tuple_target = 8160);
ALTER TABLE stored_chunks ALTER COLUMN data SET COMPRESSION lz4;

-- Inline chunks have no key: keep NULLs out of the unique index, which
-- every ingest insert would otherwise grow.
ALTER TABLE stored_chunks DROP CONSTRAINT stored_chunks_object_key_key;
CREATE UNIQUE INDEX stored_chunks_object_key ON stored_chunks (object_key)
	WHERE object_key IS NOT NULL;

-- A stream's chunks in time order (readers: ORDER BY start_ts_us, seq).
DROP INDEX stored_chunks_stream_start;
CREATE INDEX stored_chunks_stream_start_seq
	ON stored_chunks (stream_id, start_ts_us, seq);
