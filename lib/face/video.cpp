/*
 * video.cpp - images over a video's raw frames (video.h).
 */
#include <new>

#include <opencv2/core.hpp>

extern "C" {
#include "codec/buf.h"
}
#include "face/video.h"

/* The definition of shim.cpp, token for token (one definition rule): an
 * image is one cv::Mat, here a header over the caller's pixels. */
struct face_image {
	cv::Mat m;
};

struct face_image *
face_frame_wrap(uint8_t *bgr, int width, int height, size_t stride)
{
	if (bgr == nullptr || width <= 0 || height <= 0 ||
	    stride < (size_t)width * 3)
		return nullptr;
	try {
		return new face_image{
			cv::Mat(height, width, CV_8UC3, bgr, stride)};
	} catch (...) {
		return nullptr;
	}
}
