/* SPDX-License-Identifier: MIT */
/*
 * fuzz/samplecsv.c - libFuzzer target for the sender's CSV lines
 * (lib/codec/samplecsv.h).
 *
 * The input is a byte of settings (bit 0: the first line of the input),
 * then one line, parsed against a table of the 13 value types (indexes
 * 0 to 12, names "t0" to "t12").  The reason of a refusal is a non-empty
 * string; a parsed sample names a stream of the table, has its type, and
 * encodes into an XMBP batch (unless it is too large for one) that
 * decodes back to the same timestamp and bit-identical value.
 * Violations abort(), so libFuzzer keeps the input as a crash artifact.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "codec/samplecsv.h"
#include "codec/xmbp.h"

#include "check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[13] = {"t0",  "t1",  "t2", "t3", "t4",
				      "t5",  "t6",  "t7", "t8", "t9",
				      "t10", "t11", "t12"};
static uint8_t out[1u << 18];

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct samplecsv_stream defs[13];
	struct samplecsv_sample x;
	struct buf scratch;
	char err[256];
	enum samplecsv_kind k;

	if (size < 1)
		return 0;
	for (int i = 0; i < 13; i++) {
		defs[i].index = (uint16_t)i;
		defs[i].name = names[i];
		defs[i].type = (enum sample_type)i;
	}
	buf_init(&scratch, 1u << 20);
	err[0] = '\0';
	k = samplecsv_parse((const char *)data + 1, size - 1, data[0] & 1, defs,
			    13, &scratch, &x, err, sizeof(err));
	if (k == SAMPLECSV_ERROR)
		CHECK(err[0] != '\0' && memchr(err, '\0', sizeof(err)) != NULL);
	if (k == SAMPLECSV_SAMPLE) {
		struct xmbp_enc enc;
		struct xmbp_batch b;
		struct xmbp_stream st;
		struct xmbp_sample_iter it;
		struct sample_value v;
		uint64_t ts;
		size_t len;

		CHECK(x.stream < 13 && x.value.type == defs[x.stream].type);
		xmbp_enc_init(&enc, out, sizeof(out));
		xmbp_enc_begin(&enc, 1, NULL);
		xmbp_enc_stream(&enc, defs[x.stream].index, x.value.type);
		xmbp_enc_value(&enc, x.ts, &x.value);
		if (xmbp_enc_finish(&enc, &len) == XMBP_ENC_OK) {
			CHECK(xmbp_decode(out, len, &b, NULL) == XMBP_OK);
			xmbp_stream_at(&b, 0, &st);
			xmbp_samples(&st, &it);
			CHECK(xmbp_sample_next(&it, &ts, &v));
			CHECK(ts == x.ts && xmbp_sample_equal(&v, &x.value));
		} else {
			/* Only a value too large for a batch fails. */
			CHECK(xmbp_sample_fixed_size(x.value.type) == 0);
		}
	}
	buf_free(&scratch);
	return 0;
}
