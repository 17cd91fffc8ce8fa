-- 005_compact: bookkeeping of chunk compaction (doc/compaction.md).
--
-- Compaction writes its objects before the transaction that swaps the
-- rows, so a compactor that dies in between leaves objects no row names.
-- Each object is announced here first, in a transaction of its own that
-- commits before the object is written; the swap deletes its
-- announcements.  A row left behind names an object that may or may not
-- exist and is referenced by no chunk: the sweep (lib/compact) deletes
-- the object and the row, once no compactor holds the stream.
CREATE TABLE compact_pending (
	object_key text PRIMARY KEY,
	stream_id uuid NOT NULL REFERENCES ingest_streams ON DELETE CASCADE,
	created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX compact_pending_stream ON compact_pending (stream_id);
