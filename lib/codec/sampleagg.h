/* SPDX-License-Identifier: MIT */
/*
 * sampleagg.h - aggregates of numeric samples: count, NaN count, min,
 * max, sum (doc/queries.md "Buckets").
 *
 * The one definition of a bucket's figures, used for the buckets of a
 * read-back and for the aggregates stored with each chunk
 * (stored_chunks.agg_*, sql/017), so that a bucket summed from stored
 * aggregates equals one summed from the samples:
 *
 * - numeric types are f64, f32, i64, i32, i16, i8 and bool (0 and 1);
 * - NaN is counted in nan_count only; infinities are values;
 * - min and max are the first minimum and maximum in time order, kept
 *   in the stream's type (bits and all);
 * - integer and bool sums are exact (128 bits); float sums are extended
 *   precision (long double), added per chunk and then chunk by chunk
 *   when stored aggregates are used, so the last bits of a float mean
 *   may differ from a sample-by-sample sum.
 *
 * Nothing here allocates.
 */
#ifndef XMHUB_SAMPLEAGG_H
#define XMHUB_SAMPLEAGG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/sample.h"
#include "codec/xmch.h"

__extension__ typedef __int128 sampleagg_i128;

struct sampleagg {
	enum sample_type type;
	uint64_t count;		      /* values (NaN excluded) */
	uint64_t nan_count;	      /* NaNs */
	struct sample_value min, max; /* valid when count > 0 */
	double flo, fhi;	      /* min and max of f32 and f64 */
	int64_t ilo, ihi;	      /* min and max of the others */
	sampleagg_i128 isum;	      /* integer and bool types */
	long double fsum;	      /* f32 and f64 */
};

/* The text of one aggregate as stored: decimal integers for the counts,
 * min and max as sampleagg_bits(), the sum as a decimal (floats: enough
 * digits to read back the same long double; "NaN", "Infinity",
 * "-Infinity"). */
struct sampleagg_text {
	char count[24], nan_count[24], min[24], max[24], sum[64];
};

/*
 * The grid: a chunk's aggregates per cell of SAMPLEAGG_GRID_US
 * microseconds aligned to timestamp 0 (cell k holds [k*G, (k+1)*G)), so
 * that a bucketed read whose buckets are aligned to the grid adds up
 * cells instead of decoding the chunk.  Stored as one record of
 * SAMPLEAGG_CELL_SIZE bytes per cell that has samples, in cell order:
 * cell (u64), count (u32), nan_count (u32), min and max as
 * sampleagg_bits() (i64), the sum (integers: i128; floats: the long
 * double as two f64, high and low part, exact); all big-endian.  Kept
 * only where it is at most a sixteenth of the samples' count
 * (sampleagg_grid_worth()).
 */
#define SAMPLEAGG_GRID_US (1u << 20)
#define SAMPLEAGG_CELL_SIZE 48

/* A grid being built from samples in time order; fields private. */
struct sampleagg_grid {
	struct buf *out;
	struct sampleagg cur;
	uint64_t cell;
	uint64_t cells, samples;
};

/* True for the types that aggregate (f64 ... i8, bool). */
bool sampleagg_numeric(enum sample_type type);

/* An empty aggregate of type. */
void sampleagg_init(struct sampleagg *a, enum sample_type type);

/* Adds one value of the aggregate's type (the caller checks the type). */
void sampleagg_add(struct sampleagg *a, const struct sample_value *v);

/* Adds b, whose samples all come after a's, to a (same type). */
void sampleagg_merge(struct sampleagg *a, const struct sampleagg *b);

/* The mean as printed: sum / count as an f64; 0 when count is 0. */
double sampleagg_mean(const struct sampleagg *a);

/*
 * Aggregates the len bytes of one stored chunk (plain or compressed)
 * into *a, initialised here with the chunk's type.  XMCH_OK, or the
 * chunk's decode error in err; XMCH_E_INVALID_VALUE_TYPE for a type that
 * does not aggregate.
 */
enum xmch_status sampleagg_chunk(const uint8_t *p, size_t len,
				 struct sampleagg *a, struct xmch_error *err);

/* As sampleagg_chunk(), with the chunk's grid appended to grid when it
 * is worth storing (*has_grid). */
enum xmch_status sampleagg_chunk_grid(const uint8_t *p, size_t len,
				      struct sampleagg *a, struct buf *grid,
				      bool *has_grid, struct xmch_error *err);

/* Starts a grid of type appended to out (which the caller owns). */
void sampleagg_grid_init(struct sampleagg_grid *g, enum sample_type type,
			 struct buf *out);

/* Adds a sample; timestamps must not go down. */
void sampleagg_grid_add(struct sampleagg_grid *g, uint64_t ts,
			const struct sample_value *v);

/* Writes the last cell.  True when the grid is worth storing: at most a
 * sixteenth as many cells as samples; out->failed says if memory ran
 * out. */
bool sampleagg_grid_finish(struct sampleagg_grid *g);

/*
 * The cell at *pos of a stored grid of type (p, len) into *cell and *a,
 * *pos advanced; false at the end or when the record is malformed (a
 * partial record, a count or value the type refuses).
 */
bool sampleagg_grid_next(const uint8_t *p, size_t len, size_t *pos,
			 enum sample_type type, uint64_t *cell,
			 struct sampleagg *a);

/* The stored text of a (see struct sampleagg_text). */
void sampleagg_to_text(const struct sampleagg *a, struct sampleagg_text *t);

/*
 * Reads an aggregate of type back from its stored text; false (with *a
 * unspecified) when a field does not parse or disagrees with the type.
 */
bool sampleagg_from_text(enum sample_type type, const struct sampleagg_text *t,
			 struct sampleagg *a);

#endif
