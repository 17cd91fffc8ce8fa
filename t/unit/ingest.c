/* SPDX-License-Identifier: MIT */
/*
 * t/unit/ingest.c - gap accounting of ingest sessions (lib/domain/ingest.h,
 * doc/ingest.md "Gaps").
 */
#include "config.h"

#include <stdint.h>

#include "domain/ingest.h"
#include "tap.h"

/* Feeds the n sequence numbers of seqs to a fresh session; the state. */
static struct ingest_gap
run(const uint16_t *seqs, size_t n)
{
	struct ingest_gap g = {false, 0, 0};

	for (size_t i = 0; i < n; i++)
		ingest_gap_account(&g, seqs[i]);
	return g;
}

#define RUN(...)                                                               \
	run((const uint16_t[]){__VA_ARGS__},                                   \
	    sizeof((const uint16_t[]){__VA_ARGS__}) / sizeof(uint16_t))

static void
check(struct ingest_gap g, unsigned last, unsigned long long missed,
      const char *name)
{
	ok(g.has_last, "%s: a baseline", name);
	is_int(g.last, last, "%s: last_batch_seq", name);
	is_int(g.missed, missed, "%s: missed_batches", name);
}

int
main(void)
{
	struct ingest_gap g = {false, 0, 0};

	ok(!g.has_last, "fresh: no baseline");
	ingest_gap_account(&g, 500);
	check(g, 500, 0, "first batch 500 is the baseline, whatever it is");

	check(RUN(0, 1, 2, 3, 4), 4, 0, "sequential");
	check(RUN(7, 8, 9), 9, 0, "sequential from 7");
	check(RUN(0, 2), 2, 1, "one missing");
	check(RUN(0, 1, 5, 6, 10), 10, 6, "two gaps (3 + 3)");
	check(RUN(65534, 65535, 0, 1), 1, 0, "wrap 65535 -> 0 is sequential");
	check(RUN(65535, 1), 1, 1, "wrap with 0 missing");
	check(RUN(65530, 3), 3, 8, "gap across the wrap");
	check(RUN(0, 1, 1), 1, 0, "repeat: no change");
	check(RUN(0, 1, 2, 2, 2, 3), 3, 0, "repeats, then the next");
	check(RUN(0, 1, 3, 2), 3, 1, "late batch 2: no change");
	check(RUN(0, 1, 3, 2, 4), 4, 1, "late, then sequential again");
	check(RUN(0, 5, 1, 2, 6), 6, 4, "late ones after a gap");
	/* d = seq - (last + 1) mod 65536: 32767 is a gap, 32768 late. */
	check(RUN(0, 32768), 32768, 32767, "d = 32767: counted as a gap");
	check(RUN(0, 32769), 0, 0, "d = 32768: late, nothing changes");
	check(RUN(100, 100 + 32768), 100 + 32768, 32767, "d = 32767 from 100");
	check(RUN(100, 101 + 32768), 100, 0, "d = 32768 from 100");
	check(RUN(40000, (uint16_t)(40001 + 32767)), (uint16_t)(40001 + 32767),
	      32767, "d = 32767 across the wrap");
	check(RUN(40000, (uint16_t)(40001 + 32768)), 40000, 0,
	      "d = 32768 across the wrap");
	check(RUN(0, 65535), 0, 0, "d = 65534 (0 then 65535): late");
	check(RUN(5, 4), 5, 0, "the batch before the baseline: late");

	g = (struct ingest_gap){true, 0, UINT64_C(4294967295)};
	ingest_gap_account(&g, 3);
	is_int(g.missed, UINT64_C(4294967297), "missed counts past u32");
	return tap_done();
}
