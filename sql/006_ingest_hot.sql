-- 006_ingest_hot: the reaper's index without the column every batch
-- writes.
--
-- ingest_sessions_active indexed last_data_at, which each committed
-- batch updates: no update of a session could then be a HOT update, and
-- each batch added an entry to every index of ingest_sessions.  The
-- reaper looks for active sessions by COALESCE(last_data_at, started_at)
-- and could not use that index anyway; what it needs is the small set of
-- active sessions, which a partial index on started_at gives without
-- touching last_data_at (doc/ingest.md, "Where the time goes").
DROP INDEX ingest_sessions_active;
CREATE INDEX ingest_sessions_active ON ingest_sessions (started_at)
	WHERE status = 'active';
