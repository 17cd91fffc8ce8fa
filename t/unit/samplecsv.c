/* SPDX-License-Identifier: MIT */
/*
 * samplecsv.c - CSV lines of the sender (lib/codec/samplecsv.c): every
 * value type, streams by index and by name, the header only on the first
 * line, CR line ends, quoted text, and each kind of bad line refused with
 * its reason; the --streams list.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "codec/be.h"
#include "codec/samplecsv.h"
#include "tap.h"

static const struct samplecsv_stream defs[] = {
	{0, "f", SAMPLE_F32},	      {1, "d", SAMPLE_F64},
	{2, "i64", SAMPLE_I64},	      {3, "i32", SAMPLE_I32},
	{4, "i16", SAMPLE_I16},	      {5, "i8", SAMPLE_I8},
	{6, "b", SAMPLE_BOOL},	      {7, "s", SAMPLE_STRING},
	{8, "raw", SAMPLE_BYTES},     {9, "fa", SAMPLE_F64_ARRAY},
	{10, NULL, SAMPLE_F32_ARRAY}, {11, "ia", SAMPLE_I32_ARRAY},
	{12, "j", SAMPLE_JSON},	      {300, "12", SAMPLE_I32},
};
#define N (sizeof(defs) / sizeof(defs[0]))

static struct buf scratch;
static struct samplecsv_sample x;
static char err[256];

static enum samplecsv_kind
parse(const char *line, bool first)
{
	err[0] = '\0';
	return samplecsv_parse(line, strlen(line), first, defs, N, &scratch, &x,
			       err, sizeof(err));
}

static void
refused(const char *line, const char *why)
{
	ok(parse(line, false) == SAMPLECSV_ERROR && strstr(err, why) != NULL,
	   "refused: %s", line);
	if (strstr(err, why) == NULL)
		diag("reason: %s", err);
}

int
main(void)
{
	struct samplecsv_stream got[8];
	size_t n;
	char spec[] = "0:temp:f32,7:i64,12:a:b:json", bad1[] = "x:f32",
	     bad2[] = "1:f33", bad3[] = "";

	buf_init(&scratch, 1u << 20);
	ok(parse("stream,ts_us,value", true) == SAMPLECSV_SKIP,
	   "the header on the first line is skipped");
	refused("stream,ts_us,value", "stream 'stream'");
	ok(parse("", false) == SAMPLECSV_SKIP &&
		   parse("\r", false) == SAMPLECSV_SKIP,
	   "empty lines are skipped");

	ok(parse("0,1000,1.5\r", false) == SAMPLECSV_SAMPLE && x.stream == 0 &&
		   x.ts == 1000 && x.value.u.f32 == 1.5f,
	   "f32 by index, CR ignored");
	ok(parse("f,18446744073709551615,-Infinity", false) ==
			   SAMPLECSV_SAMPLE &&
		   x.ts == UINT64_MAX && isinf(x.value.u.f32) &&
		   x.value.u.f32 < 0,
	   "f32 by name, the largest timestamp, -Infinity");
	ok(parse("d,1,NaN", false) == SAMPLECSV_SAMPLE && isnan(x.value.u.f64),
	   "f64 NaN");
	ok(parse("d,1,0.1", false) == SAMPLECSV_SAMPLE && x.value.u.f64 == 0.1,
	   "f64 read exactly");
	ok(parse("2,1,-9223372036854775808", false) == SAMPLECSV_SAMPLE &&
		   x.value.u.i64 == INT64_MIN,
	   "i64 minimum");
	ok(parse("i32,1,2147483647", false) == SAMPLECSV_SAMPLE &&
		   x.value.u.i32 == INT32_MAX,
	   "i32 maximum");
	ok(parse("4,1,-32768", false) == SAMPLECSV_SAMPLE &&
		   x.value.u.i16 == -32768,
	   "i16");
	ok(parse("5,1,127", false) == SAMPLECSV_SAMPLE && x.value.u.i8 == 127,
	   "i8");
	ok(parse("6,1,true", false) == SAMPLECSV_SAMPLE && x.value.u.b &&
		   parse("6,1,0", false) == SAMPLECSV_SAMPLE && !x.value.u.b,
	   "bool true and 0");
	ok(parse("7,1,a, b, c", false) == SAMPLECSV_SAMPLE &&
		   x.value.u.raw.len == 7 &&
		   memcmp(x.value.u.raw.p, "a, b, c", 7) == 0,
	   "a string keeps its commas");
	ok(parse("s,1,\"say \"\"hi\"\"\"", false) == SAMPLECSV_SAMPLE &&
		   x.value.u.raw.len == 8 &&
		   memcmp(x.value.u.raw.p, "say \"hi\"", 8) == 0,
	   "a quoted string, quotes doubled");
	ok(parse("raw,1,AAEC/w==", false) == SAMPLECSV_SAMPLE &&
		   x.value.u.raw.len == 4 &&
		   memcmp(x.value.u.raw.p, "\x00\x01\x02\xff", 4) == 0,
	   "bytes from base64");
	ok(parse("9,1,1.5;-2;3e2", false) == SAMPLECSV_SAMPLE &&
		   x.value.u.raw.len == 3 &&
		   bef64_get(x.value.u.raw.p + 8) == -2.0 &&
		   bef64_get(x.value.u.raw.p + 16) == 300.0,
	   "an f64 array, big-endian elements");
	ok(parse("10,1,", false) == SAMPLECSV_SAMPLE && x.value.u.raw.len == 0,
	   "an empty f32 array");
	ok(parse("ia,1,-1;2147483647", false) == SAMPLECSV_SAMPLE &&
		   x.value.u.raw.len == 2 &&
		   be32_get(x.value.u.raw.p) == 0xffffffffu,
	   "an i32 array");
	ok(parse("j,1,{\"a\": [1, 2]}", false) == SAMPLECSV_SAMPLE &&
		   x.value.type == SAMPLE_JSON && x.value.u.raw.len == 13,
	   "json text as it stands");
	ok(parse("12,5,5", false) == SAMPLECSV_SAMPLE && x.stream == 12,
	   "a number is an index before it is a name");
	ok(parse("300,5,5", false) == SAMPLECSV_SAMPLE && x.stream == 13,
	   "index 300");

	refused("0,1", "expected stream,ts_us,value");
	refused("nope,1,1", "stream 'nope' is not one of the session");
	refused("99,1,1", "stream '99'");
	refused("0,-1,1", "ts_us");
	refused("0,18446744073709551616,1", "ts_us");
	refused("0,1x,1", "ts_us");
	refused("0,1,", "f32 stream 0");
	refused("0,1,1e39", "f32 stream 0");
	refused("0,1,1.5x", "f32 stream 0");
	refused("0,1, 1", "f32 stream 0");
	refused("3,1,2147483648", "i32 stream 3");
	refused("5,1,128", "i8 stream 5");
	refused("2,1,9223372036854775808", "i64 stream 2");
	refused("6,1,yes", "not true, false, 1 or 0");
	refused("8,1,AAE", "base64");
	refused("7,1,\"open", "closing quote");
	refused("7,1,\xff", "UTF-8");
	refused("11,1,1;;2", "list of numbers");
	refused("11,1,1;2.5", "list of numbers");

	ok(samplecsv_streams(spec, got, 8, &n, err, sizeof(err)) && n == 3 &&
		   got[0].index == 0 && strcmp(got[0].name, "temp") == 0 &&
		   got[0].type == SAMPLE_F32 && got[1].index == 7 &&
		   got[1].name == NULL && got[1].type == SAMPLE_I64 &&
		   strcmp(got[2].name, "a:b") == 0 &&
		   got[2].type == SAMPLE_JSON,
	   "a stream list: index, optional name (colons kept), type");
	ok(!samplecsv_streams(bad1, got, 8, &n, err, sizeof(err)) &&
		   strstr(err, "stream index") != NULL,
	   "a list: a bad index");
	ok(!samplecsv_streams(bad2, got, 8, &n, err, sizeof(err)) &&
		   strstr(err, "value type") != NULL,
	   "a list: a bad type");
	ok(!samplecsv_streams(bad3, got, 8, &n, err, sizeof(err)),
	   "a list: empty");
	buf_free(&scratch);
	return tap_done();
}
