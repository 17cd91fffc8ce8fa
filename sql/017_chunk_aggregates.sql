-- 017_chunk_aggregates: the aggregates of each stored chunk of a
-- numeric stream (doc/queries.md "Buckets"), written with the chunk (at
-- ingest for inline chunks, by compaction for compacted ones), so that a
-- bucketed read-back adds up the chunks a bucket covers whole instead of
-- decoding them.  All five or none: rows written before this migration,
-- and chunks of other types, have none and are decoded as before.
--
-- agg_count: values (NaN excluded); agg_nan_count: NaNs;
-- agg_min, agg_max: the first minimum and maximum in time order as a
--   bigint: integers and bool (0, 1) as themselves, f64 as its IEEE 754
--   bits, f32 as its bits in the low 32 (every bit kept, -0 included);
--   0 when agg_count is 0;
-- agg_sum: the sum, exact for integers and bool, the extended-precision
--   sum of the values for floats (NaN, Infinity and -Infinity allowed);
-- agg_grid: the same per cell of 2^20 us aligned to timestamp 0, 48 bytes
--   a cell (lib/codec/sampleagg.h), for reads whose buckets are aligned
--   to that grid; only where it has at most a sixteenth as many cells as
--   the chunk has samples, else NULL.
ALTER TABLE stored_chunks
	ADD COLUMN agg_count bigint,
	ADD COLUMN agg_nan_count bigint,
	ADD COLUMN agg_min bigint,
	ADD COLUMN agg_max bigint,
	ADD COLUMN agg_sum numeric,
	ADD COLUMN agg_grid bytea CHECK (octet_length(agg_grid) % 48 = 0),
	-- NOT VALID: the rows already there have none, and checking them
	-- would read the whole table under a lock.
	ADD CONSTRAINT stored_chunks_agg_whole
		CHECK (num_nulls(agg_count, agg_nan_count, agg_min, agg_max,
				 agg_sum) IN (0, 5)
		       AND (agg_grid IS NULL OR agg_count IS NOT NULL)
		       AND (agg_count IS NULL OR (agg_count >= 0
			    AND agg_nan_count >= 0
			    AND agg_count + agg_nan_count = sample_count)))
		NOT VALID;
