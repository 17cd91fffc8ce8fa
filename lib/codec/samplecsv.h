/* SPDX-License-Identifier: MIT */
/*
 * samplecsv.h - one line of the sender's CSV input (doc/sender.md "CSV
 * input"): `stream,ts_us,value`, the stream named by its index or its
 * name, the value in the stream's declared type.  Pure parsing: no I/O;
 * the caller reads lines and counts them.
 */
#ifndef XMHUB_SAMPLECSV_H
#define XMHUB_SAMPLECSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/buf.h"
#include "codec/sample.h"

/* One declared stream of the session. */
struct samplecsv_stream {
	uint16_t index;
	const char *name; /* NULL when only the index is known */
	enum sample_type type;
};

enum samplecsv_kind {
	SAMPLECSV_SAMPLE = 0, /* *out holds a sample */
	SAMPLECSV_SKIP,	      /* an empty line or the header line */
	SAMPLECSV_ERROR	      /* err says why */
};

/* A parsed line.  value.u.raw points into the scratch buffer. */
struct samplecsv_sample {
	size_t stream; /* position in the caller's stream table */
	uint64_t ts;
	struct sample_value value;
};

/*
 * Parses the len bytes at line (no newline; a final CR is ignored)
 * against the n streams of defs.  first says it is the first line of the
 * input, where `stream,ts_us,value` is taken as a header.  Variable
 * values are decoded into *scratch (emptied first; the caller owns it).
 * On SAMPLECSV_ERROR a NUL-terminated reason is in err (errlen bytes).
 */
enum samplecsv_kind samplecsv_parse(const char *line, size_t len, bool first,
				    const struct samplecsv_stream *defs,
				    size_t n, struct buf *scratch,
				    struct samplecsv_sample *out, char *err,
				    size_t errlen);

/*
 * Parses a stream list `INDEX[:NAME]:TYPE,...` into defs (room for max)
 * and *n.  Names point into spec, which must outlive defs (the function
 * writes NULs into it).  False with a reason in err on a bad entry.
 */
bool samplecsv_streams(char *spec, struct samplecsv_stream *defs, size_t max,
		       size_t *n, char *err, size_t errlen);

#endif
