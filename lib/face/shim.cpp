/* SPDX-License-Identifier: MIT */
/*
 * shim.cpp - the OpenCV side of lib/face/face.h (the only C++ in xmhub).
 *
 * Three detector families: SCRFD exports (cv::dnn, outputs classified by
 * shape), YuNet 2022mar (cv::FaceDetectorYN) and MediaPipe BlazeFace
 * back-256 (cv::dnn, SSD anchors).  Decoding follows the NOTICE.txt
 * beside the model files (../shared/models), summarised in
 * doc/face-models.md.
 * No exception leaves this file: each C entry point catches them all.
 */
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <sys/stat.h>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/core/utils/logger.hpp>
#include <opencv2/dnn.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/objdetect.hpp>

/* buf.h is a C header without C++ guards */
extern "C" {
#include "codec/buf.h"
}
#include "face/face.h"

/* The names of specs[] below, in the same order. */
const char *const face_model_names[] = {
	"scrfd_10g", "scrfd_2.5g", "scrfd_500m",      "yunet_2023mar",
	"yunet",     "blazeface",  "blazeface_front", nullptr};

namespace
{

enum kind { SCRFD, YUNET, YUNET23, BLAZEFACE };

struct model_spec {
	const char *name;
	enum kind kind;
	const char *files[4]; /* tried in order, NULL-terminated */
	/* the raw score that calibrates to 0.5 (doc/face-models.md,
	 * "Confidence"); 0.5, raw = calibrated, when not fitted */
	float knot;
	int size; /* BlazeFace: the fixed input side its anchors need */
};

/*
 * Best first: the fallback order of doc/face-models.md.  The knots were
 * fitted on the calibration photos of t/data/face-photos.tsv.
 */
const model_spec specs[] = {
	{"scrfd_10g",
	 SCRFD,
	 {"scrfd_10g_bnkps.onnx", "det_10g.onnx", "det_10g_static640.onnx",
	  nullptr},
	 0.5f /* not fitted: no weights */,
	 0},
	{"scrfd_2.5g",
	 SCRFD,
	 {"scrfd_2.5g_bnkps.onnx", "det_2.5g.onnx", "det_2.5g_static640.onnx",
	  nullptr},
	 0.4102f,
	 0},
	{"scrfd_500m",
	 SCRFD,
	 {"scrfd_500m_bnkps.onnx", "det_500m.onnx", "det_500m_static640.onnx",
	  nullptr},
	 0.5263f,
	 0},
	{"yunet_2023mar",
	 YUNET23,
	 {"face_detection_yunet_2023mar.onnx", nullptr},
	 0.8060f,
	 0},
	{"yunet",
	 YUNET,
	 {"face_detection_yunet_2022mar.onnx", nullptr},
	 0.9949f,
	 0},
	{"blazeface",
	 BLAZEFACE,
	 {"face_detection_back_256x256_barracuda.onnx", nullptr},
	 0.7123f,
	 256},
	{"blazeface_front",
	 BLAZEFACE,
	 {"face_detection_front_128x128_barracuda.onnx", nullptr},
	 0.6581f,
	 128},
};
const size_t nspecs = sizeof(specs) / sizeof(specs[0]);
static_assert(sizeof(face_model_names) / sizeof(face_model_names[0]) ==
		      nspecs + 1,
	      "face_model_names and specs differ");

/* SCRFD exports we know are fixed at this input side. */
const int scrfd_native = 640;
/* YuNet 2023mar only runs at this side in OpenCV 4.6 (NOTICE.txt). */
const int yunet23_size = 640;
/* Candidates kept for NMS, best first (as YuNet's top_k). */
const size_t max_candidates = 5000;

using clock_type = std::chrono::steady_clock;

double
ms_since(clock_type::time_point t0)
{
	return std::chrono::duration<double, std::milli>(clock_type::now() - t0)
		.count();
}

void
say(char *detail, size_t dlen, const std::string &msg)
{
	if (detail && dlen)
		snprintf(detail, dlen, "%s", msg.c_str());
}

/* OpenCV's messages run over several lines; keep the telling one. */
bool
is_dynamic(const cv::Exception &e)
{
	std::string m = e.what();

	return m.find("isDynamicShape") != std::string::npos ||
	       m.find("dynamic") != std::string::npos;
}

std::string
cv_reason(const cv::Exception &e)
{
	std::string m = e.what();

	if (is_dynamic(e))
		return "the export has dynamic input shapes, which OpenCV " +
		       std::string(CV_VERSION) +
		       " cannot load; use an export with a fixed 1x3x640x640 "
		       "input (doc/face-models.md)";
	m = e.err.empty() ? m : e.err;
	std::replace(m.begin(), m.end(), '\n', ' ');
	return m;
}

/*
 * Describes the exception being handled into detail after the prefix
 * what; only call it from a catch (...) block.
 */
void
explain(const char *what, char *detail, size_t dlen) noexcept
{
	try {
		try {
			throw;
		} catch (const cv::Exception &e) {
			say(detail, dlen, what + cv_reason(e));
		} catch (const std::exception &e) {
			say(detail, dlen, what + std::string(e.what()));
		}
	} catch (...) {
		if (detail && dlen)
			snprintf(detail, dlen, "%sunexpected error", what);
	}
}

struct candidate {
	cv::Rect2f box;
	float score; /* calibrated */
	float raw;   /* the model's own */
	bool has_lm;
	cv::Point2f lm[5];
};

float
iou(const cv::Rect2f &a, const cv::Rect2f &b)
{
	float inter = (a & b).area();
	float uni = a.area() + b.area() - inter;

	return uni > 0 ? inter / uni : 0;
}

/*
 * Greedy NMS over c sorted by score; weighted (BlazeFace's blending)
 * averages each kept box with those it suppresses, by score.
 */
std::vector<candidate>
nms(std::vector<candidate> &c, float thr, bool weighted)
{
	std::vector<candidate> kept;

	std::stable_sort(c.begin(), c.end(),
			 [](const candidate &a, const candidate &b) {
				 return a.score > b.score;
			 });
	if (c.size() > max_candidates)
		c.resize(max_candidates);
	std::vector<bool> gone(c.size(), false);
	for (size_t i = 0; i < c.size(); i++) {
		if (gone[i])
			continue;
		candidate k = c[i];
		float wsum = c[i].score, x1 = 0, y1 = 0, x2 = 0, y2 = 0;

		if (weighted) {
			x1 = c[i].box.x * wsum;
			y1 = c[i].box.y * wsum;
			x2 = (c[i].box.x + c[i].box.width) * wsum;
			y2 = (c[i].box.y + c[i].box.height) * wsum;
		}
		for (size_t j = i + 1; j < c.size(); j++) {
			if (gone[j] || iou(c[i].box, c[j].box) <= thr)
				continue;
			gone[j] = true;
			if (!weighted)
				continue;
			float w = c[j].score;
			x1 += c[j].box.x * w;
			y1 += c[j].box.y * w;
			x2 += (c[j].box.x + c[j].box.width) * w;
			y2 += (c[j].box.y + c[j].box.height) * w;
			wsum += w;
		}
		if (weighted)
			k.box = cv::Rect2f(cv::Point2f(x1 / wsum, y1 / wsum),
					   cv::Point2f(x2 / wsum, y2 / wsum));
		kept.push_back(k);
	}
	return kept;
}

/*
 * The common scale of doc/face-models.md ("Confidence"): raw scores up
 * to the model's knot map linearly onto [0, 0.5], the rest onto
 * [0.5, 1]; monotone, so a threshold on either scale keeps the same
 * faces.
 */
float
calibrate(float raw, float knot)
{
	raw = std::max(0.f, std::min(1.f, raw));
	return raw <= knot ? 0.5f * raw / knot
			   : 0.5f + 0.5f * (raw - knot) / (1.f - knot);
}

/* The inverse of calibrate(): the raw score that calibrates to conf. */
float
uncalibrate(float conf, float knot)
{
	conf = std::max(0.f, std::min(1.f, conf));
	return conf <= 0.5f ? 2.f * conf * knot
			    : knot + 2.f * (conf - 0.5f) * (1.f - knot);
}

/*
 * BlazeFace's mouth is one point; its corners are put on the line
 * through it parallel to the eyes, this fraction of the eye distance
 * apart (the median ratio of SCRFD's and YuNet's points on the
 * calibration photos, doc/face-models.md).
 */
const float mouth_per_eyes = 0.82f;

/* img scaled by *scale to fit det x det, at the top left of black. */
cv::Mat
letterbox(const cv::Mat &img, int det, double *scale)
{
	double s = std::min((double)det / img.cols, (double)det / img.rows);
	int w = std::max(1, std::min(det, (int)std::lround(img.cols * s)));
	int h = std::max(1, std::min(det, (int)std::lround(img.rows * s)));
	cv::Mat out(det, det, CV_8UC3, cv::Scalar::all(0));
	cv::Mat roi = out(cv::Rect(0, 0, w, h));

	cv::resize(img, roi, cv::Size(w, h), 0, 0, cv::INTER_LINEAR);
	*scale = s;
	return out;
}

} // namespace

struct face_model {
	std::string name, path;
	uint64_t fsize = 0;
	enum kind kind = SCRFD;
	int det = 640;
	bool landmarks = false;
	cv::dnn::Net net;
	std::vector<std::string> outs;
	/* SCRFD: per stride 8/16/32, output index of score, bbox, kps */
	int idx[3][3];
	/* YuNet 2023mar: per stride 8/16/32, output index of cls, obj,
	 * bbox, kps */
	int yidx[3][4];
	/* BlazeFace: output index of scores and regressors per grid 16/8 */
	int bidx[2][2];
	std::vector<cv::Point2f> anchors;
	cv::Ptr<cv::FaceDetectorYN> yn;
	float knot = 0.5f; /* the raw score calibrated to 0.5 */
};

struct face_image {
	cv::Mat m;
};

namespace
{

/* Rows and columns of an [N,k] or [1,N,k] output; false otherwise. */
bool
out_shape(const cv::Mat &o, int *rows, int *cols)
{
	if (o.dims == 2) {
		*rows = o.size[0];
		*cols = o.size[1];
	} else if (o.dims == 3 && o.size[0] == 1) {
		*rows = o.size[1];
		*cols = o.size[2];
	} else {
		return false;
	}
	return o.type() == CV_32F && o.isContinuous();
}

/* The network's outputs for a black det x det input. */
void
forward_blank(face_model *m, int det, std::vector<cv::Mat> &outs)
{
	cv::Mat blob;

	if (m->kind == BLAZEFACE) {
		int sz[] = {1, det, det, 3};
		blob = cv::Mat(4, sz, CV_32F, cv::Scalar(0));
	} else {
		int sz[] = {1, 3, det, det};
		blob = cv::Mat(4, sz, CV_32F, cv::Scalar(0));
	}
	m->net.setInput(blob);
	m->net.forward(outs, m->outs);
}

/* Fills m->idx from the shapes of SCRFD's 6 or 9 outputs at m->det. */
std::string
scrfd_classify(face_model *m, const std::vector<cv::Mat> &outs)
{
	int nkps = 0, nother = 0;

	for (auto &r : m->idx)
		r[0] = r[1] = r[2] = -1;
	for (size_t i = 0; i < outs.size(); i++) {
		int rows, cols, k = -1, st;

		if (!out_shape(outs[i], &rows, &cols))
			return "unexpected output shape";
		for (st = 0; st < 3; st++) {
			int g = m->det / (8 << st);
			if (rows == g * g * 2)
				break;
		}
		k = cols == 1 ? 0 : cols == 4 ? 1 : cols == 10 ? 2 : -1;
		if (st == 3 || k < 0 || m->idx[st][k] >= 0)
			return "outputs are not score/bbox/kps for strides "
			       "8/16/32 with 2 anchors";
		m->idx[st][k] = (int)i;
		(k == 2 ? nkps : nother)++;
	}
	if (nother != 6 || (nkps != 0 && nkps != 3))
		return "expected 9 outputs (or 6 without keypoints), got " +
		       std::to_string(outs.size());
	m->landmarks = nkps == 3;
	return "";
}

/*
 * Fills m->yidx from YuNet 2023mar's 12 outputs, named cls_S, obj_S,
 * bbox_S and kps_S for the strides S 8/16/32 (cls and obj have the same
 * shape, so the names tell them apart), each [1, (det/S)^2, 1|1|4|10].
 */
std::string
yunet23_classify(face_model *m, const std::vector<cv::Mat> &outs)
{
	static const char *const parts[4] = {"cls_", "obj_", "bbox_", "kps_"};
	static const int cols[4] = {1, 1, 4, 10};

	for (auto &r : m->yidx)
		r[0] = r[1] = r[2] = r[3] = -1;
	for (size_t i = 0; i < outs.size(); i++) {
		const std::string &name = m->outs[i];
		int rows, ncols, k, st;

		for (k = 0; k < 4; k++)
			if (name.rfind(parts[k], 0) == 0)
				break;
		for (st = 0; k < 4 && st < 3; st++)
			if (name.substr(strlen(parts[k])) ==
			    std::to_string(8 << st))
				break;
		if (k == 4 || st == 3 || !out_shape(outs[i], &rows, &ncols) ||
		    ncols != cols[k] ||
		    rows != (m->det / (8 << st)) * (m->det / (8 << st)) ||
		    m->yidx[st][k] >= 0)
			return "outputs are not YuNet 2023mar's "
			       "cls/obj/bbox/kps "
			       "for strides 8/16/32";
		m->yidx[st][k] = (int)i;
	}
	if (outs.size() != 12)
		return "expected 12 outputs, got " +
		       std::to_string(outs.size());
	m->landmarks = true;
	return "";
}

/*
 * Fills m->bidx and the 896 anchors of BlazeFace at side m->det: back-256
 * and front-128 share the layout (a 16x16 grid of 2 anchors, an 8x8 grid
 * of 6), at strides 16/32 and 8/16.
 */
std::string
blaze_classify(face_model *m, const std::vector<cv::Mat> &outs)
{
	static const int grids[2] = {16, 8}, per[2] = {2, 6};

	for (auto &r : m->bidx)
		r[0] = r[1] = -1;
	for (size_t i = 0; i < outs.size(); i++) {
		int rows, cols, g, k;

		if (!out_shape(outs[i], &rows, &cols))
			return "unexpected output shape";
		g = rows == 512 ? 0 : rows == 384 ? 1 : -1;
		k = cols == 1 ? 0 : cols == 16 ? 1 : -1;
		if (g < 0 || k < 0 || m->bidx[g][k] >= 0)
			return "outputs are not BlazeFace's "
			       "[512|384, 1|16]";
		m->bidx[g][k] = (int)i;
	}
	for (auto &r : m->bidx)
		if (r[0] < 0 || r[1] < 0)
			return "expected 4 outputs";
	m->anchors.clear();
	for (int g = 0; g < 2; g++)
		for (int row = 0; row < grids[g]; row++)
			for (int col = 0; col < grids[g]; col++)
				for (int a = 0; a < per[g]; a++)
					m->anchors.emplace_back(
						(col + 0.5f) / grids[g] *
							m->det,
						(row + 0.5f) / grids[g] *
							m->det);
	m->landmarks = true;
	return "";
}

/*
 * Fixing the input size of a dynamic ONNX export.  OpenCV 4.6 cannot
 * import symbolic input dimensions ("?"), as in InsightFace's own
 * det_10g.onnx and det_500m.onnx, so the protobuf is rewritten in memory:
 * the image input (4 dimensions, 3 channels) becomes 1x3xdetxdet and the
 * dimensions of the graph outputs are emptied (they were made for one
 * size).  Only the path ModelProto.graph (7) > GraphProto.input (11) /
 * output (12) > ValueInfoProto.type (2) > TypeProto.tensor_type (1) >
 * shape (2) is re-encoded; every other byte is copied as it is.
 */

bool
pb_varint(const uint8_t *&p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; p < end && shift < 64; shift += 7) {
		uint8_t c = *p++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (c < 0x80)
			return true;
	}
	return false;
}

void
pb_put_varint(std::string &out, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		out += (char)((v & 0x7f) | 0x80);
	out += (char)v;
}

void
pb_put_bytes(std::string &out, uint32_t field, const std::string &val)
{
	pb_put_varint(out, (uint64_t)field << 3 | 2);
	pb_put_varint(out, val.size());
	out += val;
}

/* One field of a protobuf message; val/len for length-delimited ones. */
struct pb_field {
	uint32_t num;
	int wire;
	uint64_t v;
	const uint8_t *val;
	size_t len;
	const uint8_t *start, *end; /* the whole field, tag included */
};

/* Calls fn on each field of p[0..n); false when malformed or fn fails. */
bool
pb_each(const uint8_t *p, size_t n,
	const std::function<bool(const pb_field &)> &fn)
{
	const uint8_t *end = p + n;

	while (p < end) {
		pb_field f = {};
		uint64_t tag;

		f.start = p;
		if (!pb_varint(p, end, &tag))
			return false;
		f.num = (uint32_t)(tag >> 3);
		f.wire = (int)(tag & 7);
		if (f.wire == 0) {
			if (!pb_varint(p, end, &f.v))
				return false;
		} else if (f.wire == 1 || f.wire == 5) {
			f.len = f.wire == 1 ? 8 : 4;
			if ((size_t)(end - p) < f.len)
				return false;
			p += f.len;
		} else if (f.wire == 2) {
			if (!pb_varint(p, end, &f.v) ||
			    (uint64_t)(end - p) < f.v)
				return false;
			f.val = p;
			f.len = (size_t)f.v;
			p += f.len;
		} else {
			return false; /* groups: not in ONNX */
		}
		f.end = p;
		if (!fn(f))
			return false;
	}
	return true;
}

/*
 * For a length-delimited field: appends its replacement to out and
 * returns 1, or returns 0 to have it copied, -1 to give up.
 */
using pb_fn = std::function<int(const pb_field &f, std::string &out)>;

/* Copies message p[0..n) into out through fn; false when malformed. */
bool
pb_rewrite(const uint8_t *p, size_t n, const pb_fn &fn, std::string &out)
{
	return pb_each(p, n, [&](const pb_field &f) {
		int r = f.wire == 2 ? fn(f, out) : 0;

		if (r == 0)
			out.append((const char *)f.start,
				   (size_t)(f.end - f.start));
		return r >= 0;
	});
}

/* Writes field f back with its message passed through fn. */
int
pb_nested(const pb_field &f, const pb_fn &fn, std::string &out)
{
	std::string sub;

	if (!pb_rewrite(f.val, f.len, fn, sub))
		return -1;
	pb_put_bytes(out, f.num, sub);
	return 1;
}

/* TensorShapeProto: true for 4 dimensions with 3 channels second. */
bool
pb_image_shape(const pb_field &shape)
{
	std::vector<int64_t> dims;

	/* dim (1): Dimension { dim_value (1) varint | dim_param (2) } */
	return pb_each(shape.val, shape.len,
		       [&](const pb_field &f) {
			       if (f.num != 1 || f.wire != 2)
				       return true;
			       dims.push_back(-1);
			       return pb_each(
				       f.val, f.len, [&](const pb_field &g) {
					       if (g.num == 1 && g.wire == 0)
						       dims.back() =
							       (int64_t)g.v;
					       return true;
				       });
		       }) &&
	       dims.size() == 4 && dims[1] == 3;
}

/* The model bytes with the image input fixed at det; "" on failure. */
std::string
onnx_fix_input(const std::string &model, int det)
{
	int inputs = 0;
	std::string out;
	/* TypeProto.Tensor: shape (2) */
	pb_fn tensor_in = [&](const pb_field &f, std::string &o) {
		std::string shape, dim;

		if (f.num != 2 || !pb_image_shape(f))
			return 0;
		for (int64_t d :
		     {(int64_t)1, (int64_t)3, (int64_t)det, (int64_t)det}) {
			dim.clear();
			pb_put_varint(dim, 1 << 3 | 0);
			pb_put_varint(dim, (uint64_t)d);
			pb_put_bytes(shape, 1, dim);
		}
		pb_put_bytes(o, 2, shape);
		inputs++;
		return 1;
	};
	/* outputs keep their dimensions, emptied of values (as onnx's
	 * tools clear them): OpenCV wants a shape, not these numbers */
	pb_fn dim_out = [](const pb_field &f, std::string &o) {
		if (f.num != 1)
			return 0;
		pb_put_bytes(o, 1, "");
		return 1;
	};
	pb_fn tensor_out = [&](const pb_field &f, std::string &o) {
		return f.num == 2 ? pb_nested(f, dim_out, o) : 0;
	};
	/* ValueInfoProto: type (2) > TypeProto: tensor_type (1) */
	pb_fn type_in = [&](const pb_field &f, std::string &o) {
		return f.num == 1 ? pb_nested(f, tensor_in, o) : 0;
	};
	pb_fn type_out = [&](const pb_field &f, std::string &o) {
		return f.num == 1 ? pb_nested(f, tensor_out, o) : 0;
	};
	pb_fn vi_in = [&](const pb_field &f, std::string &o) {
		return f.num == 2 ? pb_nested(f, type_in, o) : 0;
	};
	pb_fn vi_out = [&](const pb_field &f, std::string &o) {
		return f.num == 2 ? pb_nested(f, type_out, o) : 0;
	};
	pb_fn graph = [&](const pb_field &f, std::string &o) {
		return f.num == 11   ? pb_nested(f, vi_in, o)
		       : f.num == 12 ? pb_nested(f, vi_out, o)
				     : 0;
	};
	pb_fn top = [&](const pb_field &f, std::string &o) {
		return f.num == 7 ? pb_nested(f, graph, o) : 0;
	};

	if (!pb_rewrite((const uint8_t *)model.data(), model.size(), top,
			out) ||
	    inputs != 1)
		return "";
	return out;
}

/* Loads one file as a model of spec; "" or why not. */
std::string
load_file(face_model *m, const model_spec &spec, const std::string &path,
	  int det, std::string &note)
{
	enum kind k = spec.kind;

	m->kind = k;
	m->path = path;
	m->det = k == BLAZEFACE ? spec.size : k == YUNET23 ? yunet23_size : det;
	m->knot = spec.knot;
	if (k == YUNET) {
		m->yn = cv::FaceDetectorYN::create(path, "", cv::Size(det, det),
						   0.5f, 0.4f, 5000);
		if (!m->yn)
			return "cv::FaceDetectorYN::create failed";
		cv::Mat blank(det, det, CV_8UC3, cv::Scalar::all(0)), faces;
		m->yn->detect(blank, faces);
		m->landmarks = true;
		return "";
	}
	try {
		m->net = cv::dnn::readNetFromONNX(path);
	} catch (const cv::Exception &e) {
		if (k != SCRFD || !is_dynamic(e))
			throw;
		std::ifstream in(path, std::ios::binary);
		std::string fixed = onnx_fix_input(
			std::string(std::istreambuf_iterator<char>(in), {}),
			det);

		if (fixed.empty())
			throw;
		m->net = cv::dnn::readNetFromONNX(fixed.data(), fixed.size());
		note += "; " + path.substr(path.rfind('/') + 1) +
			" has dynamic input shapes, fixed at 1x3x" +
			std::to_string(det) + "x" + std::to_string(det);
	}
	if (m->net.empty())
		return "OpenCV read an empty network";
	m->outs = m->net.getUnconnectedOutLayersNames();

	std::vector<cv::Mat> outs;
	if (k == BLAZEFACE) {
		forward_blank(m, m->det, outs);
		if (det != m->det)
			note += "; " + std::string(spec.name) +
				" has a fixed " + std::to_string(m->det) + "x" +
				std::to_string(m->det) + " input";
		return blaze_classify(m, outs);
	}
	if (k == YUNET23) {
		forward_blank(m, m->det, outs);
		if (det != m->det)
			note += "; yunet_2023mar has a fixed 640x640 input";
		return yunet23_classify(m, outs);
	}
	try {
		forward_blank(m, det, outs);
	} catch (const cv::Exception &) {
		if (det == scrfd_native)
			throw;
		/* static exports only run at the size they were made for */
		note += "; this export has a fixed input, using " +
			std::to_string(scrfd_native) + " instead of " +
			std::to_string(det);
		m->det = scrfd_native;
		forward_blank(m, m->det, outs);
	}
	return scrfd_classify(m, outs);
}

bool
file_exists(const std::string &path, uint64_t *size)
{
	struct stat st;

	if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	*size = (uint64_t)st.st_size;
	return true;
}

/*
 * Tries spec's files in dir: 1 loaded, 0 none present, -1 present but
 * none loads (why in err).  Files that fail are listed in note.
 */
int
load_spec(face_model *m, const model_spec &spec, const std::string &dir,
	  int det, std::string &note, std::string &err)
{
	bool seen = false;

	for (const char *const *f = spec.files; *f; f++) {
		std::string path = dir + "/" + *f, why, extra;
		uint64_t size;

		if (!file_exists(path, &size))
			continue;
		seen = true;
		/* the reason goes into note; OpenCV's own log would repeat it
		 * on stderr as an ERROR even when a later file loads */
		auto level = cv::utils::logging::setLogLevel(
			cv::utils::logging::LOG_LEVEL_SILENT);
		try {
			why = load_file(m, spec, path, det, extra);
		} catch (...) {
			char reason[512];

			explain("", reason, sizeof(reason));
			why = reason;
		}
		cv::utils::logging::setLogLevel(level);
		if (why.empty()) {
			m->name = spec.name;
			m->fsize = size;
			note += extra;
			return 1;
		}
		err = std::string(*f) + ": " + why;
		note += "; skipped " + err;
	}
	return seen ? -1 : 0;
}

void
run_scrfd(face_model *m, double scale, float conf, std::vector<cv::Mat> &outs,
	  std::vector<candidate> &cands)
{
	for (int st = 0; st < 3; st++) {
		int s = 8 << st, g = m->det / s;
		const float *sc = outs[m->idx[st][0]].ptr<float>();
		const float *bb = outs[m->idx[st][1]].ptr<float>();
		const float *kp = m->landmarks
					  ? outs[m->idx[st][2]].ptr<float>()
					  : nullptr;

		for (int i = 0; i < g * g * 2; i++) {
			float p = calibrate(sc[i], m->knot);

			if (!(p >= conf))
				continue;
			float cx = (float)(i / 2 % g * s);
			float cy = (float)(i / 2 / g * s);
			const float *b = bb + 4 * i;
			candidate c;

			c.score = p;
			c.raw = sc[i];
			c.box = cv::Rect2f(
				cv::Point2f((cx - b[0] * s) / scale,
					    (cy - b[1] * s) / scale),
				cv::Point2f((cx + b[2] * s) / scale,
					    (cy + b[3] * s) / scale));
			c.has_lm = kp != nullptr;
			for (int j = 0; kp && j < 5; j++)
				c.lm[j] = cv::Point2f(
					(cx + kp[10 * i + 2 * j] * s) / scale,
					(cy + kp[10 * i + 2 * j + 1] * s) /
						scale);
			cands.push_back(c);
		}
	}
}

void
run_blaze(face_model *m, double scale, float conf, std::vector<cv::Mat> &outs,
	  std::vector<candidate> &cands)
{
	size_t a = 0;

	for (int g = 0; g < 2; g++) {
		int rows, cols;
		const float *sc = outs[m->bidx[g][0]].ptr<float>();
		const float *rg = outs[m->bidx[g][1]].ptr<float>();

		out_shape(outs[m->bidx[g][0]], &rows, &cols);
		for (int i = 0; i < rows; i++, a++) {
			float x = std::max(-80.f, std::min(80.f, sc[i]));
			float raw = 1.f / (1.f + std::exp(-x));
			float p = calibrate(raw, m->knot);
			const float *r = rg + 16 * i;
			cv::Point2f an = m->anchors[a], kp[4];
			candidate c;

			if (!(p >= conf))
				continue;
			float cx = an.x + r[0];
			float cy = an.y + r[1];
			c.score = p;
			c.raw = raw;
			c.box = cv::Rect2f(
				cv::Point2f((cx - r[2] / 2) / scale,
					    (cy - r[3] / 2) / scale),
				cv::Point2f((cx + r[2] / 2) / scale,
					    (cy + r[3] / 2) / scale));
			/* its points: two eyes, nose, mouth centre (ears
			 * unused); eyes ordered as seen in the image */
			for (int j = 0; j < 4; j++)
				kp[j] = cv::Point2f(
					(an.x + r[4 + 2 * j]) / scale,
					(an.y + r[5 + 2 * j]) / scale);
			if (kp[0].x > kp[1].x)
				std::swap(kp[0], kp[1]);
			cv::Point2f half =
				(kp[1] - kp[0]) * (mouth_per_eyes / 2);
			c.lm[0] = kp[0];
			c.lm[1] = kp[1];
			c.lm[2] = kp[2];
			c.lm[3] = kp[3] - half;
			c.lm[4] = kp[3] + half;
			c.has_lm = true;
			cands.push_back(c);
		}
	}
}

/*
 * YuNet 2023mar: score sqrt(cls * obj), both clamped to [0, 1]; centre
 * ((col + b0) * s, (row + b1) * s), size exp(b2) * s by exp(b3) * s;
 * keypoints ((col + k) * s, (row + k') * s), the subject's right eye
 * (the image's left) first, as YuNet 2022mar.
 */
void
run_yunet23(face_model *m, double scale, float conf, std::vector<cv::Mat> &outs,
	    std::vector<candidate> &cands)
{
	for (int st = 0; st < 3; st++) {
		int s = 8 << st, g = m->det / s;
		const float *cl = outs[m->yidx[st][0]].ptr<float>();
		const float *ob = outs[m->yidx[st][1]].ptr<float>();
		const float *bb = outs[m->yidx[st][2]].ptr<float>();
		const float *kp = outs[m->yidx[st][3]].ptr<float>();

		for (int i = 0; i < g * g; i++) {
			float raw =
				std::sqrt(std::max(0.f, std::min(1.f, cl[i])) *
					  std::max(0.f, std::min(1.f, ob[i])));
			float p = calibrate(raw, m->knot);
			float col = (float)(i % g), row = (float)(i / g);
			const float *b = bb + 4 * i, *k = kp + 10 * i;
			candidate c;

			if (!(p >= conf))
				continue;
			float cx = (col + b[0]) * s, cy = (row + b[1]) * s;
			float w = std::exp(std::min(b[2], 20.f)) * s;
			float h = std::exp(std::min(b[3], 20.f)) * s;
			c.score = p;
			c.raw = raw;
			c.box = cv::Rect2f(cv::Point2f((cx - w / 2) / scale,
						       (cy - h / 2) / scale),
					   cv::Point2f((cx + w / 2) / scale,
						       (cy + h / 2) / scale));
			c.has_lm = true;
			for (int j = 0; j < 5; j++)
				c.lm[j] = cv::Point2f(
					(col + k[2 * j]) * s / scale,
					(row + k[2 * j + 1]) * s / scale);
			cands.push_back(c);
		}
	}
}

/* Detections of FaceDetectorYN: x, y, w, h, 5 x (x, y), score. */
void
run_yunet(const face_model *m, const cv::Mat &faces, double scale, float conf,
	  std::vector<candidate> &cands)
{
	for (int i = 0; i < faces.rows; i++) {
		const float *f = faces.ptr<float>(i);
		candidate c;

		c.raw = f[14];
		c.score = calibrate(c.raw, m->knot);
		if (!(c.score >= conf))
			continue;
		c.box = cv::Rect2f(f[0] / scale, f[1] / scale, f[2] / scale,
				   f[3] / scale);
		c.has_lm = true;
		/* YuNet's right eye is the subject's: the image's left */
		for (int j = 0; j < 5; j++)
			c.lm[j] = cv::Point2f(f[4 + 2 * j] / scale,
					      f[5 + 2 * j] / scale);
		cands.push_back(c);
	}
}

float
clampf(float v, float hi)
{
	return std::max(0.f, std::min(hi, v));
}

} // namespace

extern "C" {

struct face_model *
face_model_open(const char *dir, const char *wanted, int det_size, int threads,
		char *note, size_t notelen, char *detail, size_t dlen)
{
	face_model *m = nullptr;
	std::string notes, err;
	size_t w;

	if (note && notelen)
		note[0] = '\0';
	try {
		if (!wanted || !*wanted)
			wanted = "scrfd_10g";
		for (w = 0; w < nspecs; w++)
			if (strcmp(specs[w].name, wanted) == 0)
				break;
		if (w == nspecs) {
			say(detail, dlen,
			    std::string("unknown model ") + wanted +
				    " (known: scrfd_10g, scrfd_2.5g, "
				    "scrfd_500m, yunet_2023mar, yunet, "
				    "blazeface, blazeface_front)");
			return nullptr;
		}
		if (det_size == 0)
			det_size = 640;
		if (det_size < 32 || det_size > 4096 || det_size % 32) {
			say(detail, dlen,
			    "detection size must be a multiple of 32 in "
			    "32..4096");
			return nullptr;
		}
		cv::setNumThreads(threads > 0 ? threads : -1);
		m = new face_model;
		int r = load_spec(m, specs[w], dir, det_size, notes, err);
		if (r < 0) {
			say(detail, dlen,
			    std::string("model ") + wanted + " cannot be " +
				    "loaded: " + err);
			delete m;
			return nullptr;
		}
		for (size_t i = 0; r == 0 && i < nspecs; i++) {
			if (i == w)
				continue;
			r = load_spec(m, specs[i], dir, det_size, notes, err) ==
			    1;
		}
		if (r != 1) {
			say(detail, dlen,
			    std::string("no loadable face model in ") + dir +
				    notes);
			delete m;
			return nullptr;
		}
		if (m->name != wanted)
			notes = std::string("model ") + wanted +
				" not found in " + dir + ", using " + m->name +
				notes;
		else if (!notes.empty())
			notes = m->name + notes;
		if (note && notelen)
			snprintf(note, notelen, "%s", notes.c_str());
		return m;
	} catch (...) {
		explain("", detail, dlen);
	}
	delete m;
	return nullptr;
}

void
face_model_close(struct face_model *m)
{
	delete m;
}

const char *
face_model_name(const struct face_model *m)
{
	return m->name.c_str();
}

const char *
face_model_path(const struct face_model *m)
{
	return m->path.c_str();
}

uint64_t
face_model_file_size(const struct face_model *m)
{
	return m->fsize;
}

bool
face_model_landmarks(const struct face_model *m)
{
	return m->landmarks;
}

int
face_model_det_size(const struct face_model *m)
{
	return m->det;
}

float
face_model_suggested_conf(const struct face_model *)
{
	return 0.5f;
}

const char *
face_model_best(const char *dir)
{
	uint64_t size;

	for (const model_spec &spec : specs)
		for (const char *const *f = spec.files; *f; f++)
			if (file_exists(std::string(dir) + "/" + *f, &size))
				return spec.name;
	return nullptr;
}

const char *
face_opencv_version(void)
{
	return CV_VERSION;
}

struct face_image *
face_image_decode(const void *data, size_t len, uint64_t max_pixels,
		  char *detail, size_t dlen)
{
	struct face_probe pr;

	if (!face_image_probe(data, len, &pr, detail, dlen))
		return nullptr;
	if (max_pixels && (uint64_t)pr.width * pr.height > max_pixels) {
		say(detail, dlen,
		    "image has " + std::to_string(pr.width) + "x" +
			    std::to_string(pr.height) + " pixels, over " +
			    std::to_string(max_pixels));
		return nullptr;
	}
	if (pr.fmt == FACE_FMT_JPEG && !face_jpeg_complete(data, len)) {
		say(detail, dlen, "truncated JPEG (no end-of-image marker)");
		return nullptr;
	}
	if (len > INT_MAX) {
		say(detail, dlen, "image too large");
		return nullptr;
	}
	try {
		cv::Mat buf(1, (int)len, CV_8U, const_cast<void *>(data));
		cv::Mat m = cv::imdecode(buf, cv::IMREAD_COLOR);

		if (m.empty() || m.type() != CV_8UC3) {
			say(detail, dlen,
			    std::string("cannot decode the ") +
				    face_fmt_name(pr.fmt) + " image");
			return nullptr;
		}
		return new face_image{m};
	} catch (...) {
		explain("cannot decode the image: ", detail, dlen);
	}
	return nullptr;
}

void
face_image_free(struct face_image *img)
{
	delete img;
}

int
face_image_width(const struct face_image *img)
{
	return img->m.cols;
}

int
face_image_height(const struct face_image *img)
{
	return img->m.rows;
}

struct face_image *
face_image_clone(const struct face_image *img)
{
	try {
		return new face_image{img->m.clone()};
	} catch (...) {
		return nullptr;
	}
}

const uint8_t *
face_image_pixels(const struct face_image *img, size_t *stride)
{
	*stride = img->m.step;
	return img->m.data;
}

bool
face_detect(struct face_model *m, const struct face_image *img, float conf,
	    float nms_thr, size_t max_faces, struct face_box *out, size_t cap,
	    size_t *n, struct face_timings *t, char *detail, size_t dlen)
{
	struct face_timings tm = {};
	std::vector<candidate> cands, kept;

	*n = 0;
	try {
		auto t0 = clock_type::now();
		double scale;
		cv::Mat in = letterbox(img->m, m->det, &scale), blob;
		std::vector<cv::Mat> outs;
		cv::Mat faces;

		auto t1 = clock_type::now();
		if (m->kind == SCRFD)
			blob = cv::dnn::blobFromImage(in, 1.0 / 128, cv::Size(),
						      cv::Scalar::all(127.5),
						      true);
		else if (m->kind == BLAZEFACE) {
			cv::Mat rgb;
			int sz[] = {1, m->det, m->det, 3};

			cv::cvtColor(in, rgb, cv::COLOR_BGR2RGB);
			rgb.convertTo(rgb, CV_32F, 1.0 / 127.5, -1.0);
			blob = cv::Mat(4, sz, CV_32F, rgb.data).clone();
		} else if (m->kind == YUNET23) {
			/* BGR 0..255 as it is */
			blob = cv::dnn::blobFromImage(in);
		}
		tm.blob_ms = ms_since(t1);
		tm.preprocess_ms = ms_since(t0);

		t0 = clock_type::now();
		if (m->kind == YUNET) {
			/* a hair lower: run_yunet() checks the
			 * calibrated score, rounding aside */
			m->yn->setScoreThreshold(uncalibrate(conf, m->knot) *
						 0.999f);
			/* an IoU above 1 suppresses nothing: the NMS is
			 * nms() below, as for the other models, so that
			 * candidates_before_nms counts YuNet's candidates
			 * (at most its top_k, max_candidates) */
			m->yn->setNMSThreshold(1.f);
			m->yn->detect(in, faces);
		} else {
			m->net.setInput(blob);
			m->net.forward(outs, m->outs);
		}
		tm.inference_ms = ms_since(t0);

		t0 = clock_type::now();
		if (m->kind == SCRFD)
			run_scrfd(m, scale, conf, outs, cands);
		else if (m->kind == BLAZEFACE)
			run_blaze(m, scale, conf, outs, cands);
		else if (m->kind == YUNET23)
			run_yunet23(m, scale, conf, outs, cands);
		else
			run_yunet(m, faces, scale, conf, cands);
		tm.candidates_before_nms = (int)cands.size();
		t1 = clock_type::now();
		kept = nms(cands, nms_thr, m->kind == BLAZEFACE);
		tm.nms_ms = ms_since(t1);
		tm.candidates_after_nms = (int)kept.size();

		float w = (float)img->m.cols, h = (float)img->m.rows;
		for (const candidate &c : kept) {
			struct face_box b = {};

			if (*n == cap || (max_faces && *n == max_faces))
				break;
			b.x1 = clampf(c.box.x, w);
			b.y1 = clampf(c.box.y, h);
			b.x2 = clampf(c.box.x + c.box.width, w);
			b.y2 = clampf(c.box.y + c.box.height, h);
			if (!(b.x2 > b.x1 && b.y2 > b.y1))
				continue;
			b.score = c.score;
			b.raw_score = c.raw;
			b.has_landmarks = c.has_lm;
			for (int j = 0; c.has_lm && j < 5; j++) {
				b.lm[j].x = clampf(c.lm[j].x, w);
				b.lm[j].y = clampf(c.lm[j].y, h);
			}
			out[(*n)++] = b;
		}
		tm.postprocess_ms = ms_since(t0);
		tm.det_scale = scale;
		tm.det_width = tm.det_height = m->det;
		if (t)
			*t = tm;
		return true;
	} catch (...) {
		explain("detection failed: ", detail, dlen);
	}
	*n = 0;
	return false;
}

bool
face_mask_region(const struct face_image *img, const struct face_box *b,
		 double padding, int *x1, int *y1, int *x2, int *y2)
{
	double pw = (b->x2 - b->x1) * padding, ph = (b->y2 - b->y1) * padding;
	double l = std::floor(b->x1 - pw), t = std::floor(b->y1 - ph);
	double r = std::ceil(b->x2 + pw), d = std::ceil(b->y2 + ph);

	*x1 = (int)std::max(0.0, std::min(l, (double)img->m.cols));
	*y1 = (int)std::max(0.0, std::min(t, (double)img->m.rows));
	*x2 = (int)std::max(0.0, std::min(r, (double)img->m.cols));
	*y2 = (int)std::max(0.0, std::min(d, (double)img->m.rows));
	return *x2 > *x1 && *y2 > *y1;
}

bool
face_mask(struct face_image *img, const struct face_box *boxes, size_t n,
	  enum face_method method, int strength, double padding, char *detail,
	  size_t dlen)
{
	if (strength < 1 || strength > 999 || !(padding >= 0 && padding <= 2)) {
		say(detail, dlen, "strength must be 1..999, padding 0..2");
		return false;
	}
	try {
		int k = strength | 1; /* Gaussian kernels are odd */

		for (size_t i = 0; i < n; i++) {
			int x1, y1, x2, y2;

			if (!face_mask_region(img, &boxes[i], padding, &x1, &y1,
					      &x2, &y2))
				continue;
			cv::Rect r(x1, y1, x2 - x1, y2 - y1);
			/* a copy: filters must not read outside r */
			cv::Mat roi = img->m(r).clone(), done;

			switch (method) {
			case FACE_GAUSSIAN:
			case FACE_ELLIPTICAL:
				cv::GaussianBlur(roi, done, cv::Size(k, k), 0);
				break;
			case FACE_PIXELATE: {
				cv::Mat small;
				cv::Size s(std::max(1, r.width / strength),
					   std::max(1, r.height / strength));

				cv::resize(roi, small, s, 0, 0, cv::INTER_AREA);
				cv::resize(small, done, r.size(), 0, 0,
					   cv::INTER_NEAREST);
				break;
			}
			case FACE_SOLID:
				done = cv::Mat(r.size(), CV_8UC3,
					       cv::Scalar::all(0));
				break;
			default:
				say(detail, dlen, "unknown masking method");
				return false;
			}
			if (method == FACE_ELLIPTICAL) {
				cv::Mat mask(r.size(), CV_8U, cv::Scalar(0));

				cv::ellipse(mask,
					    cv::RotatedRect(
						    cv::Point2f(r.width / 2.f,
								r.height / 2.f),
						    cv::Size2f((float)r.width,
							       (float)r.height),
						    0),
					    cv::Scalar(255), cv::FILLED);
				done.copyTo(img->m(r), mask);
			} else {
				done.copyTo(img->m(r));
			}
		}
		return true;
	} catch (...) {
		explain("masking failed: ", detail, dlen);
	}
	return false;
}

bool
face_image_encode(const struct face_image *img, enum face_fmt fmt, int quality,
		  struct buf *out, char *detail, size_t dlen)
{
	std::vector<int> params;
	const char *ext;

	if (quality < 1 || quality > 100) {
		say(detail, dlen, "quality must be 1..100");
		return false;
	}
	switch (fmt) {
	case FACE_FMT_JPEG:
		ext = ".jpg";
		params = {cv::IMWRITE_JPEG_QUALITY, quality};
		break;
	case FACE_FMT_PNG:
		ext = ".png";
		break;
	case FACE_FMT_WEBP:
		ext = ".webp";
		params = {cv::IMWRITE_WEBP_QUALITY, quality};
		break;
	default:
		say(detail, dlen, "output format must be jpeg, png or webp");
		return false;
	}
	try {
		std::vector<uchar> enc;

		if (!cv::imencode(ext, img->m, enc, params)) {
			say(detail, dlen,
			    std::string("cannot encode ") + face_fmt_name(fmt));
			return false;
		}
		buf_append(out, enc.data(), enc.size());
		if (out->failed) {
			say(detail, dlen, "encoded image too large");
			return false;
		}
		return true;
	} catch (...) {
		explain("encoding failed: ", detail, dlen);
	}
	return false;
}

} /* extern "C" */
