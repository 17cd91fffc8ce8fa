/* SPDX-License-Identifier: MIT */
/*
 * video.cpp - images over a video's raw frames (video.h).
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

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

namespace
{

/* The blur of face_frame_mask() into done: roi scaled down by f, the
 * kernel k scaled with it (kept odd), scaled back up. */
void
fast_blur(const cv::Mat &roi, cv::Mat &done, int k)
{
	double sigma = 0.3 * ((k - 1) * 0.5 - 1) + 0.8; /* OpenCV's for k */
	int f = std::max(1, (int)(sigma / 4));
	cv::Mat small, blurred;

	if (f == 1 || roi.cols < 2 * f || roi.rows < 2 * f) {
		cv::GaussianBlur(roi, done, cv::Size(k, k), 0);
		return;
	}
	cv::resize(
		roi, small,
		cv::Size(std::max(1, roi.cols / f), std::max(1, roi.rows / f)),
		0, 0, cv::INTER_AREA);
	int ks = std::max(3, (k / f) | 1);
	cv::GaussianBlur(small, blurred, cv::Size(ks, ks), sigma / f);
	cv::resize(blurred, done, roi.size(), 0, 0, cv::INTER_LINEAR);
}

} // namespace

bool
face_frame_mask(struct face_image *img, const struct face_box *boxes, size_t n,
		enum face_method method, int strength, double padding,
		char *detail, size_t dlen)
{
	if (method != FACE_GAUSSIAN && method != FACE_ELLIPTICAL)
		return face_mask(img, boxes, n, method, strength, padding,
				 detail, dlen);
	if (strength < 1 || strength > 999 || !(padding >= 0 && padding <= 2)) {
		if (detail != nullptr && dlen > 0)
			snprintf(detail, dlen,
				 "strength must be 1..999, padding 0..2");
		return false;
	}
	try {
		for (size_t i = 0; i < n; i++) {
			int x1, y1, x2, y2;

			if (!face_mask_region(img, &boxes[i], padding, &x1, &y1,
					      &x2, &y2))
				continue;
			cv::Rect r(x1, y1, x2 - x1, y2 - y1);
			cv::Mat roi = img->m(r), done;

			fast_blur(roi, done, strength | 1);
			if (method == FACE_GAUSSIAN) {
				done.copyTo(roi);
				continue;
			}
			cv::Mat mask(r.size(), CV_8U, cv::Scalar(0));
			cv::ellipse(mask,
				    cv::RotatedRect(cv::Point2f(r.width / 2.f,
								r.height / 2.f),
						    cv::Size2f((float)r.width,
							       (float)r.height),
						    0),
				    cv::Scalar(255), cv::FILLED);
			done.copyTo(roi, mask);
		}
		return true;
	} catch (...) {
		if (detail != nullptr && dlen > 0)
			snprintf(detail, dlen, "masking failed");
	}
	return false;
}
