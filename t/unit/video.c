/* SPDX-License-Identifier: MIT */
/*
 * t/unit/video.c - images over raw video frames and their masking
 * (lib/face/video.h, doc/face-video.md): no copy, the regions of
 * face_mask_region() and nothing else changed, and the scaled-down
 * Gaussian close to face_mask()'s full-size one on a real photo
 * (python-matplotlib-data's grace_hopper.jpg).
 */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/buf.h"
#include "face/face.h"
#include "face/video.h"
#include "tap.h"

#define GRACE "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"
#define W 64
#define H 48

/* Pixels of a and b (w x h BGR, stride w * 3) differing inside and
 * outside the rectangle [x1, x2) x [y1, y2); the mean absolute
 * difference inside into *in_mad. */
static void
compare(const uint8_t *a, const uint8_t *b, int w, int h, int x1, int y1,
	int x2, int y2, long *in, long *out, double *in_mad)
{
	double sum = 0;
	long n = 0;

	*in = *out = 0;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w * 3; x++) {
			size_t i = (size_t)y * (size_t)w * 3 + (size_t)x;
			bool inside =
				x / 3 >= x1 && x / 3 < x2 && y >= y1 && y < y2;
			int d = abs(a[i] - b[i]);

			if (inside) {
				sum += d;
				n++;
			}
			if (d != 0)
				(*(inside ? in : out))++;
		}
	*in_mad = n > 0 ? sum / (double)n : 0;
}

static void
test_wrap(void)
{
	uint8_t px[W * H * 3];

	ok(face_frame_wrap(NULL, W, H, W * 3) == NULL, "wrap: NULL pixels");
	ok(face_frame_wrap(px, 0, H, W * 3) == NULL, "wrap: zero width");
	ok(face_frame_wrap(px, W, -1, W * 3) == NULL, "wrap: negative height");
	ok(face_frame_wrap(px, W, H, W * 3 - 1) == NULL,
	   "wrap: stride under width * 3");
}

static void
test_methods(void)
{
	static const enum face_method m[] = {FACE_GAUSSIAN, FACE_ELLIPTICAL,
					     FACE_PIXELATE, FACE_SOLID};
	static const char *const name[] = {"gaussian", "elliptical", "pixelate",
					   "solid"};
	struct face_box b = {20, 10, 40, 30, 0.9f, false, {{0, 0}}, 0.9f};
	uint8_t orig[W * H * 3], px[W * H * 3];
	char detail[128];

	srand(7);
	for (size_t i = 0; i < sizeof(orig); i++)
		orig[i] = (uint8_t)(rand() & 0xff);
	for (size_t k = 0; k < 4; k++) {
		struct face_image *img;
		int x1, y1, x2, y2;
		long in, out;
		double mad;

		memcpy(px, orig, sizeof(px));
		img = face_frame_wrap(px, W, H, W * 3);
		ok(img != NULL && face_image_width(img) == W &&
			   face_image_height(img) == H,
		   "%s: wrapped", name[k]);
		if (img == NULL)
			continue;
		ok(face_mask_region(img, &b, 0.15, &x1, &y1, &x2, &y2) &&
			   x1 == 17 && y1 == 7 && x2 == 43 && y2 == 33,
		   "%s: the region is the box padded by 15%%", name[k]);
		ok(face_frame_mask(img, &b, 1, m[k], 9, 0.15, detail,
				   sizeof(detail)),
		   "%s: masked", name[k]);
		compare(orig, px, W, H, x1, y1, x2, y2, &in, &out, &mad);
		ok(out == 0, "%s: nothing outside the region changed", name[k]);
		ok(mad > 20, "%s: the caller's pixels in it changed (%.1f)",
		   name[k], mad);
		if (m[k] == FACE_ELLIPTICAL)
			ok(memcmp(px + ((size_t)y1 * W + (size_t)x1) * 3,
				  orig + ((size_t)y1 * W + (size_t)x1) * 3,
				  3) == 0,
			   "elliptical: the region's corner is kept");
		if (m[k] == FACE_SOLID)
			ok(px[((size_t)20 * W + 30) * 3] == 0, "solid: black");
		ok(!face_frame_mask(img, &b, 1, m[k], 0, 0.15, detail,
				    sizeof(detail)) &&
			   strstr(detail, "strength") != NULL,
		   "%s: strength 0 refused: %s", name[k], detail);
		face_image_free(img);
		ok(memcmp(px, orig, sizeof(px)) != 0,
		   "%s: freeing the image leaves the pixels", name[k]);
	}
}

/* The fast Gaussian against face_mask()'s on a face of a real photo. */
static void
test_photo(void)
{
	struct face_box b = {150, 120, 370, 400, 0.9f, false, {{0, 0}}, 0.9f};
	struct face_image *full = NULL, *wrap = NULL;
	uint8_t *copy = NULL;
	char detail[256];
	struct buf data;
	size_t stride;
	int fd, x1, y1, x2, y2, w, h;
	long in, out;
	double mad, mad_orig;

	buf_init(&data, 0);
	if ((fd = open(GRACE, O_RDONLY)) < 0 || !buf_read_fd(&data, fd)) {
		ok(false, "%s can be read (python-matplotlib-data)", GRACE);
		goto out;
	}
	close(fd);
	full = face_image_decode(data.p, data.len, 0, detail, sizeof(detail));
	if (!ok(full != NULL, "the photo decodes"))
		goto out;
	w = face_image_width(full);
	h = face_image_height(full);
	const uint8_t *p = face_image_pixels(full, &stride);
	if ((copy = malloc((size_t)w * (size_t)h * 3)) == NULL)
		goto out;
	for (int y = 0; y < h; y++)
		memcpy(copy + (size_t)y * (size_t)w * 3, p + (size_t)y * stride,
		       (size_t)w * 3);
	wrap = face_frame_wrap(copy, w, h, (size_t)w * 3);
	uint8_t *orig = malloc((size_t)w * (size_t)h * 3);
	if (wrap == NULL || orig == NULL) {
		free(orig);
		goto out;
	}
	memcpy(orig, copy, (size_t)w * (size_t)h * 3);
	ok(face_mask(full, &b, 1, FACE_GAUSSIAN, 199, 0.15, detail,
		     sizeof(detail)) &&
		   face_frame_mask(wrap, &b, 1, FACE_GAUSSIAN, 199, 0.15,
				   detail, sizeof(detail)),
	   "both blurs run (kernel 199)");
	face_mask_region(full, &b, 0.15, &x1, &y1, &x2, &y2);
	p = face_image_pixels(full, &stride);
	uint8_t *fullpx = malloc((size_t)w * (size_t)h * 3);
	if (fullpx == NULL) {
		free(orig);
		goto out;
	}
	for (int y = 0; y < h; y++)
		memcpy(fullpx + (size_t)y * (size_t)w * 3,
		       p + (size_t)y * stride, (size_t)w * 3);
	compare(orig, copy, w, h, x1, y1, x2, y2, &in, &out, &mad_orig);
	ok(out == 0 && mad_orig > 10,
	   "the fast blur changes the face (%.1f) and nothing else", mad_orig);
	compare(fullpx, copy, w, h, x1, y1, x2, y2, &in, &out, &mad);
	ok(mad < mad_orig / 4 && mad < 6,
	   "and stays close to the full-size blur: %.2f levels on average "
	   "(%.1f from the photo)",
	   mad, mad_orig);
	free(fullpx);
	free(orig);
out:
	face_image_free(wrap);
	face_image_free(full);
	free(copy);
	buf_free(&data);
}

int
main(void)
{
	test_wrap();
	test_methods();
	test_photo();
	return tap_done();
}
