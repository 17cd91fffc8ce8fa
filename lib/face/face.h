/* SPDX-License-Identifier: MIT */
/*
 * face.h - face detection and masking (doc/face.md), a C API over OpenCV.
 *
 * C++ lives only in lib/face/shim.cpp; lib/face/probe.c is plain C.
 * Link with $(FACE_LIBS) from mk/face.am (lib/face/libface.a, OpenCV,
 * libstdc++).  Every function that can fail writes a one-line reason into
 * detail (dlen bytes, always NUL-terminated when dlen > 0; detail may be
 * NULL) and never throws.  A model is not thread-safe: one per thread or
 * process.  See doc/face-models.md for models, fallback and decoding.
 */
#ifndef XMHUB_FACE_H
#define XMHUB_FACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/buf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Image formats: all five are read, JPEG, PNG and WebP are written. */
enum face_fmt {
	FACE_FMT_UNKNOWN = 0,
	FACE_FMT_JPEG,
	FACE_FMT_PNG,
	FACE_FMT_WEBP,
	FACE_FMT_BMP,
	FACE_FMT_TIFF
};

/* Masking methods of the mask endpoint's `method` (doc/face.md). */
enum face_method {
	FACE_GAUSSIAN,	/* Gaussian blur, kernel = strength forced odd */
	FACE_PIXELATE,	/* blocks of strength x strength pixels */
	FACE_SOLID,	/* black rectangle */
	FACE_ELLIPTICAL /* Gaussian blur inside the ellipse of the box */
};

struct face_point {
	float x, y;
};

/*
 * One detected face in image pixels, clipped to the image.  lm[] holds
 * left eye, right eye, nose, left mouth corner, right mouth corner (left
 * and right as seen in the image) when has_landmarks, zeros otherwise
 * (BlazeFace's mouth corners are estimated: doc/face-models.md).  score
 * is on the common scale of every model (calibrated, 0..1), raw_score
 * the model's own.
 */
struct face_box {
	float x1, y1, x2, y2;
	float score;
	bool has_landmarks;
	struct face_point lm[5];
	float raw_score;
};

/* Where the time of one face_detect() went, and what the detector saw. */
struct face_timings {
	double preprocess_ms;	   /* resize + letterbox (includes blob_ms) */
	double blob_ms;		   /* image to network input tensor */
	double inference_ms;	   /* the network's forward pass */
	double postprocess_ms;	   /* decoding outputs (includes nms_ms) */
	double nms_ms;		   /* non-maximum suppression */
	int candidates_before_nms; /* above the confidence, into NMS */
	int candidates_after_nms;  /* before max_faces and cap */
	double det_scale;	   /* network pixels per image pixel */
	int det_width, det_height; /* network input size */
};

/* Header facts of an image (face_image_probe). */
struct face_probe {
	enum face_fmt fmt;
	uint32_t width, height;
	int channels; /* as stored: 1 gray, 2 gray+alpha, 3 colour, 4 +alpha */
};

struct face_model;
struct face_image;

/* Model names in fallback order, best first (NULL-terminated). */
extern const char *const face_model_names[];

/*
 * Loads the model called wanted (NULL or "": "scrfd_10g") from dir, its
 * input set to det_size x det_size (0: 640; models with a fixed input
 * keep theirs: face_model_det_size() tells), OpenCV using threads threads
 * (0: OpenCV's default).  When wanted is absent it loads the best model
 * present in the order of face_model_names[].  note (notelen bytes) says
 * what to log: the fallback, files skipped or fixed, a det_size the model
 * cannot take; empty when nothing of the kind happened.  An export with
 * dynamic input shapes is fixed in memory at det_size.  NULL and detail
 * when no model is present, det_size is not a multiple of 32 in 32..4096,
 * or the wanted model's file cannot be loaded (not ONNX, unexpected
 * outputs...).  Free with face_model_close().
 */
struct face_model *face_model_open(const char *dir, const char *wanted,
				   int det_size, int threads, char *note,
				   size_t notelen, char *detail, size_t dlen);

/* Frees the model; NULL is fine. */
void face_model_close(struct face_model *m);

/* The loaded model's name (one of face_model_names[]), owned by m. */
const char *face_model_name(const struct face_model *m);

/* The model file's path, owned by m. */
const char *face_model_path(const struct face_model *m);

/* Size of the model file in bytes. */
uint64_t face_model_file_size(const struct face_model *m);

/* True when the model gives the 5 landmarks of struct face_box. */
bool face_model_landmarks(const struct face_model *m);

/* The network input side in pixels (square input). */
int face_model_det_size(const struct face_model *m);

/*
 * The confidence threshold to use: 0.5 for every model, since scores are
 * calibrated to one scale (doc/face-models.md, "Confidence").
 */
float face_model_suggested_conf(const struct face_model *m);

/*
 * The name of the best model (face_model_names[] order) with a file in
 * dir, static; NULL when there is none.  Only looks at file names.
 */
const char *face_model_best(const char *dir);

/* OpenCV's version string, e.g. "4.6.0" (static). */
const char *face_opencv_version(void);

/*
 * Reads only the header of data[0..len) (bounded, any bytes accepted):
 * format, dimensions and stored channels.  False and detail when the
 * format is not one of the five or the header is truncated or invalid.
 * Pure C, no allocation.
 */
bool face_image_probe(const void *data, size_t len, struct face_probe *out,
		      char *detail, size_t dlen);

/*
 * True when a JPEG's data goes on past its first start of scan to an
 * end-of-image marker, i.e. is not cut short (libjpeg would decode a
 * truncated file, filling the rest with grey).  Pure C.
 */
bool face_jpeg_complete(const void *data, size_t len);

/*
 * Decodes data[0..len) into an 8-bit BGR image (grayscale, alpha and
 * 16-bit input converted; JPEG EXIF orientation applied).  It probes the
 * header first and refuses more than max_pixels pixels (0: no limit)
 * without decoding, and a JPEG that is not face_jpeg_complete().  NULL
 * and detail on failure.  Free with face_image_free().
 */
struct face_image *face_image_decode(const void *data, size_t len,
				     uint64_t max_pixels, char *detail,
				     size_t dlen);

/* Frees the image; NULL is fine. */
void face_image_free(struct face_image *img);

int face_image_width(const struct face_image *img);
int face_image_height(const struct face_image *img);

/* A deep copy; NULL when out of memory. */
struct face_image *face_image_clone(const struct face_image *img);

/*
 * The pixels, rows of width * 3 bytes (B, G, R) stride bytes apart,
 * owned by img.
 */
const uint8_t *face_image_pixels(const struct face_image *img, size_t *stride);

/*
 * Finds faces with calibrated score >= conf, NMS IoU nms, sorted by score
 * (highest first), at most max_faces (0: all) and at most cap into
 * out[]; *n is the number stored.  t (may be NULL) receives timings.
 * False and detail on failure (*n is then 0).
 */
bool face_detect(struct face_model *m, const struct face_image *img, float conf,
		 float nms, size_t max_faces, struct face_box *out, size_t cap,
		 size_t *n, struct face_timings *t, char *detail, size_t dlen);

/*
 * The integer rectangle [*x1, *x2) x [*y1, *y2) face_mask() changes for
 * box b: the box grown by padding times its width on the left and on the
 * right and by padding times its height at the top and at the bottom,
 * rounded outwards and clipped to the image.  False when it is empty.
 */
bool face_mask_region(const struct face_image *img, const struct face_box *b,
		      double padding, int *x1, int *y1, int *x2, int *y2);

/*
 * Masks the n boxes in place with method and strength (1..999: kernel or
 * block size), each over its face_mask_region(); pixels outside those
 * regions are left untouched.  False and detail on bad arguments or when
 * out of memory.
 */
bool face_mask(struct face_image *img, const struct face_box *boxes, size_t n,
	       enum face_method method, int strength, double padding,
	       char *detail, size_t dlen);

/*
 * Appends img encoded as fmt (JPEG, PNG or WebP) at quality (1..100;
 * ignored for PNG, which is lossless) to out.  False and detail on
 * failure (bad quality or format, encoder error, out's limit).
 */
bool face_image_encode(const struct face_image *img, enum face_fmt fmt,
		       int quality, struct buf *out, char *detail, size_t dlen);

/* "jpeg", "png", "webp", "bmp", "tiff" ("unknown"); static. */
const char *face_fmt_name(enum face_fmt fmt);

/* The MIME type of fmt, e.g. "image/jpeg" (static). */
const char *face_fmt_mime(enum face_fmt fmt);

#ifdef __cplusplus
}
#endif

#endif
