/* SPDX-License-Identifier: MIT */
/*
 * fuzz/face-probe.c - libFuzzer target for the image header parser.
 *
 * face_image_probe() reads attacker bytes before anything else does (the
 * face service refuses oversized images on its answer), so every input
 * must end with a verdict: failure with a detail and a zeroed result, or
 * success with a known format and dimensions within range.  The JPEG
 * completeness check runs on the same bytes.  Only lib/face/probe.c is
 * linked: no OpenCV here.
 */
#include "config.h"

#include <string.h>

#include "face/face.h"

#include "check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct face_probe pr;
	char detail[128];
	bool complete;

	memset(detail, 'x', sizeof(detail));
	if (face_image_probe(data, size, &pr, detail, sizeof(detail))) {
		CHECK(pr.fmt >= FACE_FMT_JPEG && pr.fmt <= FACE_FMT_TIFF);
		CHECK(pr.width >= 1 && pr.width <= 1000000);
		CHECK(pr.height >= 1 && pr.height <= 1000000);
		CHECK(pr.channels >= 1 && pr.channels <= 4);
		CHECK(strcmp(face_fmt_name(pr.fmt), "unknown") != 0);
	} else {
		CHECK(memchr(detail, '\0', sizeof(detail)) != NULL);
		CHECK(detail[0] != '\0');
		CHECK(pr.fmt == FACE_FMT_UNKNOWN && pr.width == 0 &&
		      pr.height == 0 && pr.channels == 0);
	}
	complete = face_jpeg_complete(data, size);
	/* a complete JPEG starts like one */
	if (complete)
		CHECK(size >= 4 && data[0] == 0xff && data[1] == 0xd8);
	sink += complete;
	return 0;
}
