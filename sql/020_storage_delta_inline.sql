-- 020_storage_delta_inline: the samples' bytes a statement stores are
-- counted by that statement, not by a trigger (doc/storage.md "Quotas
-- and retention").
--
-- 019's statement trigger on INSERT INTO stored_chunks copied every new
-- row whole, the chunk's bytes included, into its transition table:
-- bench/quota-cost measured it at 1.17-1.21x the PostgreSQL CPU of an
-- ingest round's statement without counting, against 1.07-1.10x for the
-- same delta row inserted by the statement itself.  The two statements
-- that insert chunks now insert their facility_storage_delta rows
-- themselves: an ingest round's (lib/domain/ingest.c, write_sql) and
-- compaction's (lib/domain/compact.c, insert_sql).  Deletes stay counted
-- by 019's trigger: they are the retention runner's and compaction's, a
-- few per session, not one per batch.  A new statement that inserts
-- into stored_chunks must insert its delta the same way; t/e2e/quota.t
-- compares the counts with the rows after ingest and after compaction.
DROP TRIGGER stored_chunks_storage_insert ON stored_chunks;

CREATE OR REPLACE FUNCTION facility_storage_chunks() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO facility_storage_delta (facility_id, sample_bytes)
	SELECT s.facility_id, -sum(c.byte_size)
	FROM old_chunks c
	JOIN ingest_streams t ON t.id = c.stream_id
	JOIN ingest_sessions s ON s.id = t.session_id
	GROUP BY s.facility_id;
	RETURN NULL;
END
$$;
