/* SPDX-License-Identifier: MIT */
/*
 * video.h - face detection and masking on the raw frames of a video
 * (doc/face-video.md): a frame that a decoder wrote into memory (8-bit
 * BGR, rows of width * 3 bytes) is used by face_detect() and face_mask()
 * of face.h in place, without a decode or a copy.
 *
 * C++ only in lib/face/video.cpp.  Link with $(FACE_LIBS).
 */
#ifndef XMHUB_FACE_VIDEO_H
#define XMHUB_FACE_VIDEO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "face/face.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * An image over the caller's pixels: width x height BGR pixels, rows
 * stride bytes apart (>= width * 3), at bgr.  Nothing is copied: masking
 * the image changes bgr, which must outlive the image.  NULL when a side
 * is not positive, stride too small, or out of memory.  Free with
 * face_image_free() (which leaves bgr alone).
 */
struct face_image *face_frame_wrap(uint8_t *bgr, int width, int height,
				   size_t stride);

/*
 * face_mask() for video frames: the same regions and methods, with the
 * Gaussian blur of FACE_GAUSSIAN and FACE_ELLIPTICAL computed on the
 * region scaled down by about sigma / 4 (then scaled back up), which
 * looks the same at the kernel sizes faces are masked with and costs a
 * few hundredths of a full-size 199-pixel blur.  Pixels outside the
 * regions are left untouched.  False and detail as face_mask().
 */
bool face_frame_mask(struct face_image *img, const struct face_box *boxes,
		     size_t n, enum face_method method, int strength,
		     double padding, char *detail, size_t dlen);

#ifdef __cplusplus
}
#endif

#endif
