-- 018_ingest_recent_bytes: the digests of a session's last stored
-- batches (migration 010) as one bytea, 16 bytes each, oldest first,
-- instead of a bytea[].  Every round that stores a batch rewrites them:
-- as an array they cost the writer a subquery and a sort per session
-- (doc/ingest.md "Throughput").  The session rows are rewritten with each
-- round, so their pages keep room for the new version beside the old
-- (fillfactor): the update stays on its page (HOT) and the page is
-- pruned, instead of the table growing by a page a few rounds.
ALTER TABLE ingest_sessions
	ADD COLUMN recent_digests bytea NOT NULL DEFAULT '\x';
UPDATE ingest_sessions SET recent_digests = coalesce((
	SELECT string_agg(r, '\x'::bytea ORDER BY o)
	FROM unnest(recent_batches) WITH ORDINALITY AS u(r, o)), '\x')
WHERE cardinality(recent_batches) > 0;
ALTER TABLE ingest_sessions DROP COLUMN recent_batches;
ALTER TABLE ingest_sessions SET (fillfactor = 50);
