/* SPDX-License-Identifier: MIT */
/*
 * t/unit/face.c - face detection and masking (lib/face/face.h, doc/face.md).
 *
 * Runs every model present in FACE_TEST_MODEL_DIR (set by mk/face.am to
 * ../shared/models) on real photos from Debian packages: opencv-doc's
 * messi5.jpg (1 face), basketball1.png (grayscale, 1 frontal + 1 profile
 * face), home.jpg (no face) and python-matplotlib-data's grace_hopper.jpg
 * (1 face).  Model files are only ever symlinked, never copied.  BMP and
 * TIFF inputs are written here by hand; JPEG, PNG and WebP by the encoder.
 */
#include "config.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec/buf.h"
#include "face/face.h"
#include "tap.h"
#include "testutil.h"

#define OPENCV_DATA "/usr/share/doc/opencv-doc/examples/data/"
#define MESSI OPENCV_DATA "messi5.jpg"
#define BASKETBALL OPENCV_DATA "basketball1.png"
#define HOME OPENCV_DATA "home.jpg"
#define GRACE "/usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg"

#define MAXBOX 64

struct region {
	float x1, y1, x2, y2;
};

/*
 * Known face regions in image pixels.  Measured once (2026-11-21, OpenCV
 * 4.6.0) as the boxes SCRFD-2.5G gave, which SCRFD-500M, YuNet and
 * BlazeFace matched within a few pixels, and checked by eye on the photos
 * with the rectangles drawn in.
 */
static const struct region r_messi = {224, 90, 258, 133};
static const struct region r_front = {71, 92, 104, 135};    /* basketball */
static const struct region r_profile = {510, 55, 550, 126}; /* basketball */
static const struct region r_grace = {178, 122, 352, 334};

static const char *model_dir;

static bool
read_path(const char *path, struct buf *b)
{
	int fd = open(path, O_RDONLY);
	bool r;

	buf_init(b, 0);
	if (fd < 0)
		return false;
	r = buf_read_fd(b, fd);
	close(fd);
	return r;
}

static struct face_image *
load(const char *path)
{
	struct buf b;
	struct face_image *img = NULL;
	char detail[256];

	if (read_path(path, &b))
		img = face_image_decode(b.p, b.len, 0, detail, sizeof(detail));
	if (!img)
		diag("%s: %s", path, detail);
	buf_free(&b);
	return img;
}

static float
iou(const struct face_box *b, const struct region *r)
{
	float ix = fminf(b->x2, r->x2) - fmaxf(b->x1, r->x1);
	float iy = fminf(b->y2, r->y2) - fmaxf(b->y1, r->y1);
	float inter = ix > 0 && iy > 0 ? ix * iy : 0;
	float a = (b->x2 - b->x1) * (b->y2 - b->y1);
	float c = (r->x2 - r->x1) * (r->y2 - r->y1);

	return inter / (a + c - inter);
}

/* Index of the box overlapping r (IoU >= 0.4), or -1. */
static int
find(const struct face_box *b, size_t n, const struct region *r)
{
	for (size_t i = 0; i < n; i++)
		if (iou(&b[i], r) >= 0.4f)
			return (int)i;
	return -1;
}

static size_t
detect(struct face_model *m, struct face_image *img, float conf,
       size_t max_faces, struct face_box *b, size_t cap)
{
	struct face_timings t;
	char detail[256];
	size_t n;

	if (!face_detect(m, img, conf, 0.4f, max_faces, b, cap, &n, &t, detail,
			 sizeof(detail)))
		diag("face_detect: %s", detail);
	for (size_t i = 0; i < n; i++)
		diag("  %.1f %.1f %.1f %.1f score %.3f", b[i].x1, b[i].y1,
		     b[i].x2, b[i].y2, b[i].score);
	return n;
}

/* Landmarks inside the box grown by 10% (a profile's nose pokes out). */
static bool
landmarks_inside(const struct face_box *b)
{
	float mx = (b->x2 - b->x1) * 0.1f, my = (b->y2 - b->y1) * 0.1f;

	for (int i = 0; i < 5; i++)
		if (b->lm[i].x < b->x1 - mx || b->lm[i].x > b->x2 + mx ||
		    b->lm[i].y < b->y1 - my || b->lm[i].y > b->y2 + my)
			return false;
	return true;
}

static void
test_model(const char *name)
{
	char note[512], detail[512];
	struct face_model *m;
	struct face_image *messi, *bb, *home, *grace;
	struct face_box b[MAXBOX];
	struct face_timings t;
	size_t n, n2;
	float conf;
	bool scrfd = strncmp(name, "scrfd", 5) == 0;
	/* the short-range model misses faces this small (face-models.md) */
	bool small = strcmp(name, "blazeface_front") != 0;
	int i;

	m = face_model_open(model_dir, name, 640, 0, note, sizeof(note), detail,
			    sizeof(detail));
	if (!ok(m != NULL, "%s: loads", name)) {
		diag("%s", detail);
		return;
	}
	is_str(face_model_name(m), name, "%s: named", name);
	ok(face_model_landmarks(m), "%s: landmarks from every model", name);
	ok(face_model_file_size(m) > 100000, "%s: file size known", name);
	conf = face_model_suggested_conf(m);
	messi = load(MESSI);
	bb = load(BASKETBALL);
	home = load(HOME);
	grace = load(GRACE);
	if (!ok(messi && bb && home && grace, "photos decode"))
		goto out;

	n = detect(m, messi, conf, 0, b, MAXBOX);
	is_int(n, small, "%s: %d face on messi5.jpg", name, small);
	ok(!small || find(b, n, &r_messi) == 0, "%s: messi's face found", name);

	n = detect(m, grace, conf, 0, b, MAXBOX);
	is_int(n, 1, "%s: one face on grace_hopper.jpg", name);
	ok(find(b, n, &r_grace) == 0, "%s: grace hopper's face found", name);
	if (face_model_landmarks(m)) {
		ok(b[0].has_landmarks && landmarks_inside(&b[0]),
		   "%s: landmarks inside the box", name);
		ok(b[0].lm[0].x < b[0].lm[1].x && b[0].lm[3].x < b[0].lm[4].x,
		   "%s: left eye and mouth corner left of the right ones",
		   name);
		ok(b[0].lm[2].y > b[0].lm[0].y && b[0].lm[3].y > b[0].lm[2].y,
		   "%s: eyes above nose above mouth", name);
	}

	n = detect(m, bb, conf, 0, b, MAXBOX);
	ok(!small || find(b, n, &r_front) >= 0,
	   "%s: frontal face on basketball1.png", name);
	if (scrfd) {
		/* only SCRFD finds the profile (doc/face-models.md) */
		is_int(n, 2, "%s: two faces on basketball1.png", name);
		ok(find(b, n, &r_profile) >= 0, "%s: profile face found", name);
	}
	for (size_t j = 0; face_model_landmarks(m) && j < n; j++)
		ok(landmarks_inside(&b[j]), "%s: face %zu landmarks inside",
		   name, j);

	n = detect(m, home, conf, 0, b, MAXBOX);
	is_int(n, 0, "%s: no face on home.jpg", name);

	/* a low threshold gives several boxes to cut down */
	n = detect(m, bb, 0.1f, 0, b, MAXBOX);
	ok(n >= 2, "%s: several boxes at confidence 0.1", name);
	for (i = 1; i < (int)n; i++)
		if (b[i].score > b[i - 1].score)
			break;
	ok(i >= (int)n, "%s: sorted by score", name);
	{
		struct face_box top = b[0];

		n2 = detect(m, bb, 0.1f, 1, b, MAXBOX);
		ok(n2 == 1 && memcmp(&b[0], &top, sizeof(top)) == 0,
		   "%s: max_faces 1 keeps the best", name);
		n2 = detect(m, bb, 0.1f, 0, b, 1);
		ok(n2 == 1 && b[0].score == top.score,
		   "%s: cap 1 keeps the best", name);
	}
	for (i = 0; i < (int)n; i++)
		if (b[i].x1 < 0 || b[i].y1 < 0 || b[i].x2 > 640 ||
		    b[i].y2 > 480 || b[i].score < 0.1f)
			break;
	ok(i >= (int)n, "%s: boxes inside the image, scores >= 0.1", name);

	ok(face_detect(m, grace, conf, 0.4f, 0, b, MAXBOX, &n, &t, detail,
		       sizeof(detail)),
	   "%s: detect with timings", name);
	ok(t.inference_ms > 0 && t.preprocess_ms >= t.blob_ms &&
		   t.postprocess_ms >= t.nms_ms,
	   "%s: timings filled", name);
	ok(t.det_width == face_model_det_size(m) && t.det_height == t.det_width,
	   "%s: det size reported", name);
	ok(t.det_scale > 0 &&
		   (int)(600 * t.det_scale + 0.5) == face_model_det_size(m),
	   "%s: det scale fits the long side", name);
	ok(t.candidates_before_nms >= t.candidates_after_nms &&
		   t.candidates_after_nms >= 1,
	   "%s: candidate counts (%d before NMS, %d after)", name,
	   t.candidates_before_nms, t.candidates_after_nms);
	/* At a low threshold several candidates overlap on one face: NMS
	 * cuts them down for every model, YuNet's FaceDetectorYN included
	 * (its candidates are counted before the service's NMS: face.md). */
	if (!face_detect(m, bb, 0.1f, 0.4f, 0, b, MAXBOX, &n, &t, detail,
			 sizeof(detail)))
		diag("face_detect: %s", detail);
	ok(t.candidates_before_nms > t.candidates_after_nms &&
		   t.candidates_after_nms >= 2,
	   "%s: NMS cuts the candidates at 0.1 (%d before, %d after)", name,
	   t.candidates_before_nms, t.candidates_after_nms);
out:
	face_image_free(messi);
	face_image_free(bb);
	face_image_free(home);
	face_image_free(grace);
	face_model_close(m);
}

/* A directory with symlinks to the named model files. */
static char *
link_dir(const char *const *files)
{
	const char *tmp = getenv("TMPDIR");
	char path[4096], *dir;

	snprintf(path, sizeof(path), "%s/face-t-XXXXXX", tmp ? tmp : "/tmp");
	dir = strdup(path);
	if (!dir || !mkdtemp(dir))
		return NULL;
	for (; *files; files++) {
		char src[4096], dst[4096];

		snprintf(src, sizeof(src), "%s/%s", model_dir, *files);
		snprintf(dst, sizeof(dst), "%s/%s", dir, *files);
		if (symlink(src, dst) != 0)
			diag("symlink %s: failed", dst);
	}
	return dir;
}

static void
unlink_dir(char *dir, const char *const *files)
{
	for (; *files; files++) {
		char dst[4096];

		snprintf(dst, sizeof(dst), "%s/%s", dir, *files);
		unlink(dst);
	}
	rmdir(dir);
	free(dir);
}

/* Opens wanted in a directory holding only files; the loaded name. */
static void
check_open(const char *const *files, const char *wanted, const char *want,
	   const char *note_has, int det, int want_det)
{
	char note[512], detail[512], *dir = link_dir(files);
	struct face_model *m;
	const char *label = wanted ? wanted : "the default";

	if (!ok(dir != NULL, "temporary model directory"))
		return;
	m = face_model_open(dir, wanted, det, 1, note, sizeof(note), detail,
			    sizeof(detail));
	if (!want) {
		ok(m == NULL && strstr(detail, note_has),
		   "%s from [%s ...]: refused (%s)", label,
		   files[0] ? files[0] : "nothing", note_has);
		diag("detail: %s", m ? "(loaded)" : detail);
	} else {
		if (ok(m != NULL, "%s from [%s ...]: loads", label, files[0]))
			is_str(face_model_name(m), want, "  as %s", want);
		else
			diag("detail: %s", detail);
		ok(m && strstr(note, note_has), "  note has \"%s\"", note_has);
		diag("note: %s", note);
		ok(m && face_model_det_size(m) == want_det, "  det size %d",
		   want_det);
	}
	face_model_close(m);
	unlink_dir(dir, files);
}

/* A model file that is no model, beside YuNet. */
static void
check_broken(const char *file, const char *wanted, const char *want,
	     const char *has)
{
	static const char *const yn[] = {"face_detection_yunet_2022mar.onnx",
					 NULL};
	char note[512] = "", detail[512] = "", path[4096], *dir = link_dir(yn);
	struct face_model *m;
	FILE *f;

	if (!ok(dir != NULL, "temporary model directory"))
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	if (f) {
		fputs("not a protobuf\n", f);
		fclose(f);
	}
	m = face_model_open(dir, wanted, 640, 0, note, sizeof(note), detail,
			    sizeof(detail));
	if (want)
		ok(m && strcmp(face_model_name(m), want) == 0 &&
			   strstr(note, has),
		   "broken %s, %s wanted: %s loads, note has \"%s\"", file,
		   wanted, want, has);
	else
		ok(!m && strstr(detail, has),
		   "broken %s, %s wanted: start-up error \"%s\"", file, wanted,
		   has);
	diag("%s", m ? note : detail);
	face_model_close(m);
	unlink(path);
	unlink_dir(dir, yn);
}

/* det_500m.onnx (dynamic, fixed in memory) against its static export. */
static void
test_dynamic(void)
{
	static const char *const dyn[] = {"det_500m.onnx", NULL};
	static const char *const fixed[] = {"det_500m_static640.onnx", NULL};
	char *d1 = link_dir(dyn), *d2 = link_dir(fixed), detail[512];
	struct face_model *m1, *m2, *m3;
	struct face_image *bb = load(BASKETBALL), *grace = load(GRACE);
	struct face_box b1[MAXBOX], b2[MAXBOX];
	size_t n1 = 0, n2 = 0;

	if (!ok(d1 && d2 && bb && grace, "dynamic export: setup"))
		goto out;
	m1 = face_model_open(d1, "scrfd_500m", 640, 0, NULL, 0, detail,
			     sizeof(detail));
	m2 = face_model_open(d2, "scrfd_500m", 640, 0, NULL, 0, detail,
			     sizeof(detail));
	m3 = face_model_open(d1, "scrfd_500m", 320, 0, NULL, 0, detail,
			     sizeof(detail));
	if (ok(m1 && m2 && m3, "det_500m.onnx at 640 and 320, and the static "
			       "export, load")) {
		n1 = detect(m1, bb, 0.3f, 0, b1, MAXBOX);
		n2 = detect(m2, bb, 0.3f, 0, b2, MAXBOX);
		ok(n1 == 2 && n1 == n2 &&
			   memcmp(b1, b2, n1 * sizeof(b1[0])) == 0,
		   "dynamic export fixed at 640 gives the static export's "
		   "boxes");
		n1 = detect(m3, grace, 0.5f, 0, b1, MAXBOX);
		ok(n1 == 1 && find(b1, n1, &r_grace) == 0,
		   "dynamic export at 320 finds grace hopper's face");
	}
	face_model_close(m1);
	face_model_close(m2);
	face_model_close(m3);
out:
	face_image_free(bb);
	face_image_free(grace);
	if (d1)
		unlink_dir(d1, dyn);
	if (d2)
		unlink_dir(d2, fixed);
}

static void
test_open(void)
{
	static const char *const yn_bf[] = {
		"face_detection_yunet_2022mar.onnx",
		"face_detection_back_256x256_barracuda.onnx", NULL};
	static const char *const bf[] = {
		"face_detection_back_256x256_barracuda.onnx", NULL};
	static const char *const dyn[] = {"det_500m.onnx", NULL};
	static const char *const dyn_static[] = {
		"det_500m.onnx", "det_500m_static640.onnx",
		"face_detection_yunet_2022mar.onnx", NULL};
	static const char *const s25[] = {"scrfd_2.5g_bnkps.onnx", NULL};
	static const char *const none[] = {NULL};
	char note[512], detail[512];

	/* the shared directory: scrfd_10g is not there */
	check_open(yn_bf, "yunet", "yunet", "", 640, 640);
	check_open(yn_bf, NULL, "yunet", "model scrfd_10g not found", 640, 640);
	check_open(yn_bf, "scrfd_2.5g", "yunet", "using yunet", 640, 640);
	check_open(bf, "yunet", "blazeface", "using blazeface", 640, 256);
	check_open(yn_bf, "blazeface", "blazeface", "fixed 256x256", 320, 256);
	check_open(yn_bf, "yunet", "yunet", "", 320, 320);
	check_open(s25, "scrfd_2.5g", "scrfd_2.5g", "fixed input", 320, 640);
	check_open(
		dyn_static, "scrfd_10g", "scrfd_500m",
		"det_500m.onnx has dynamic input shapes, fixed at 1x3x640x640",
		640, 640);
	check_open(dyn, "scrfd_500m", "scrfd_500m", "fixed at 1x3x320x320", 320,
		   320);
	check_open(none, "yunet", NULL, "no loadable face model", 640, 0);
	check_broken("det_10g.onnx", "scrfd_10g", NULL,
		     "model scrfd_10g cannot be loaded: det_10g.onnx: ");
	check_broken("scrfd_2.5g_bnkps.onnx", "scrfd_10g", "yunet",
		     "skipped scrfd_2.5g_bnkps.onnx: ");
	check_broken("face_detection_back_256x256_barracuda.onnx", "yunet",
		     "yunet", "");
	check_open(yn_bf, "yolo", NULL, "unknown model", 640, 0);
	check_open(yn_bf, "yunet", NULL, "multiple of 32", 100, 0);

	/* the real directory: the best present stands in for scrfd_10g */
	{
		struct face_model *m =
			face_model_open(model_dir, "scrfd_10g", 640, 0, note,
					sizeof(note), detail, sizeof(detail));
		struct face_model *best = NULL;
		const char *const *name;

		for (name = face_model_names + 1; *name && !best; name++) {
			best = face_model_open(model_dir, *name, 640, 0, NULL,
					       0, detail, sizeof(detail));
			if (best && strcmp(face_model_name(best), *name) != 0) {
				face_model_close(best);
				best = NULL;
			}
		}
		ok(m && best &&
			   strcmp(face_model_name(m), face_model_name(best)) ==
				   0 &&
			   strstr(note, "not found"),
		   "scrfd_10g absent: the best present model loads instead");
		diag("note: %s", note);
		face_model_close(m);
		face_model_close(best);
	}
}

/* --- images written by hand --- */

static void
put_le16(struct buf *b, uint32_t v)
{
	buf_putc(b, (char)(v & 0xff));
	buf_putc(b, (char)(v >> 8 & 0xff));
}

static void
put_le32(struct buf *b, uint32_t v)
{
	put_le16(b, v & 0xffff);
	put_le16(b, v >> 16);
}

/* An uncompressed bottom-up BMP of img, 24 or 32 bits per pixel. */
static void
write_bmp(const struct face_image *img, int bpp, struct buf *b)
{
	int w = face_image_width(img), h = face_image_height(img);
	size_t stride, row = ((size_t)w * (bpp / 8) + 3) & ~(size_t)3;
	const uint8_t *px = face_image_pixels(img, &stride);

	buf_puts(b, "BM");
	put_le32(b, (uint32_t)(54 + row * h));
	put_le32(b, 0);
	put_le32(b, 54);
	put_le32(b, 40);
	put_le32(b, (uint32_t)w);
	put_le32(b, (uint32_t)h);
	put_le16(b, 1);
	put_le16(b, (uint32_t)bpp);
	put_le32(b, 0); /* BI_RGB */
	put_le32(b, (uint32_t)(row * h));
	put_le32(b, 2835);
	put_le32(b, 2835);
	put_le32(b, 0);
	put_le32(b, 0);
	for (int y = h - 1; y >= 0; y--) {
		size_t done = 0;

		for (int x = 0; x < w; x++) {
			buf_append(b, px + y * stride + 3 * x, 3);
			if (bpp == 32)
				buf_putc(b, (char)0xff);
			done += bpp / 8;
		}
		for (; done < row; done++)
			buf_putc(b, 0);
	}
}

static void
put16(struct buf *b, bool be, uint32_t v)
{
	if (be) {
		buf_putc(b, (char)(v >> 8 & 0xff));
		buf_putc(b, (char)(v & 0xff));
	} else {
		put_le16(b, v);
	}
}

static void
put32(struct buf *b, bool be, uint32_t v)
{
	put16(b, be, be ? v >> 16 : v & 0xffff);
	put16(b, be, be ? v & 0xffff : v >> 16);
}

static void
tiff_entry(struct buf *b, bool be, uint32_t tag, uint32_t type, uint32_t n,
	   uint32_t v)
{
	put16(b, be, tag);
	put16(b, be, type);
	put32(b, be, n);
	if (type == 3 && n == 1) { /* SHORT: first two bytes of the field */
		put16(b, be, v);
		put16(b, be, 0);
	} else {
		put32(b, be, v);
	}
}

/*
 * An uncompressed single-strip TIFF of img: spp 1 (gray, the green
 * channel), 3 (RGB) or 4 (RGBA, alpha 255); bps 8 or 16 (value * 257).
 */
static void
write_tiff(const struct face_image *img, int spp, int bps, bool be,
	   struct buf *b)
{
	int w = face_image_width(img), h = face_image_height(img);
	uint32_t nent = spp == 4 ? 11 : 10;
	uint32_t bps_off = 8 + 2 + 12 * nent + 4;
	uint32_t data_off = bps_off + 2 * (uint32_t)spp;
	uint32_t bytes = (uint32_t)(w * h * spp * bps / 8);
	size_t stride;
	const uint8_t *px = face_image_pixels(img, &stride);

	buf_puts(b, be ? "MM" : "II");
	put16(b, be, 42);
	put32(b, be, 8);
	put16(b, be, nent);
	tiff_entry(b, be, 256, 4, 1, (uint32_t)w);
	tiff_entry(b, be, 257, 4, 1, (uint32_t)h);
	if (spp == 1)
		tiff_entry(b, be, 258, 3, 1, (uint32_t)bps);
	else
		tiff_entry(b, be, 258, 3, (uint32_t)spp, bps_off);
	tiff_entry(b, be, 259, 3, 1, 1);
	tiff_entry(b, be, 262, 3, 1, spp == 1 ? 1 : 2);
	tiff_entry(b, be, 273, 4, 1, data_off);
	tiff_entry(b, be, 277, 3, 1, (uint32_t)spp);
	tiff_entry(b, be, 278, 4, 1, (uint32_t)h);
	tiff_entry(b, be, 279, 4, 1, bytes);
	tiff_entry(b, be, 284, 3, 1, 1);
	if (spp == 4)
		tiff_entry(b, be, 338, 3, 1, 2); /* unassociated alpha */
	put32(b, be, 0);
	for (int i = 0; i < spp; i++)
		put16(b, be, (uint32_t)bps);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++) {
			const uint8_t *p = px + y * stride + 3 * x;
			uint8_t v[4] = {p[2], p[1], p[0], 0xff};

			if (spp == 1)
				v[0] = p[1];
			for (int c = 0; c < spp; c++)
				if (bps == 16)
					put16(b, be, v[c] * 257u);
				else
					buf_putc(b, (char)v[c]);
		}
}

/* Largest difference of one channel between two same-size images. */
static int
max_diff(const struct face_image *a, const struct face_image *b, bool gray_of_a)
{
	int w = face_image_width(a), h = face_image_height(a), d = 0;
	size_t sa, sb;
	const uint8_t *pa = face_image_pixels(a, &sa);
	const uint8_t *pb = face_image_pixels(b, &sb);

	if (w != face_image_width(b) || h != face_image_height(b))
		return 1000;
	for (int y = 0; y < h; y++)
		for (int x = 0; x < 3 * w; x++) {
			int va = pa[y * sa + (gray_of_a ? x / 3 * 3 + 1 : x)];
			int e = abs(va - pb[y * sb + x]);

			d = e > d ? e : d;
		}
	return d;
}

static double
mean_diff(const struct face_image *a, const struct face_image *b)
{
	int w = face_image_width(a), h = face_image_height(a);
	size_t sa, sb;
	const uint8_t *pa = face_image_pixels(a, &sa);
	const uint8_t *pb = face_image_pixels(b, &sb);
	double sum = 0;

	for (int y = 0; y < h; y++)
		for (int x = 0; x < 3 * w; x++)
			sum += abs(pa[y * sa + x] - pb[y * sb + x]);
	return sum / (3.0 * w * h);
}

/* Decodes b, checking probe and size against src; NULL on failure. */
static struct face_image *
decode_as(const struct buf *b, enum face_fmt fmt, int channels,
	  const struct face_image *src, const char *what)
{
	struct face_probe pr;
	struct face_image *img;
	char detail[256] = "";

	ok(face_image_probe(b->p, b->len, &pr, detail, sizeof(detail)) &&
		   pr.fmt == fmt &&
		   pr.width == (uint32_t)face_image_width(src) &&
		   pr.height == (uint32_t)face_image_height(src) &&
		   pr.channels == channels,
	   "%s: probe says %s %dx%d, %d channels", what, face_fmt_name(fmt),
	   face_image_width(src), face_image_height(src), channels);
	img = face_image_decode(b->p, b->len, 30000000, detail, sizeof(detail));
	if (!ok(img != NULL && face_image_width(img) == face_image_width(src) &&
			face_image_height(img) == face_image_height(src),
		"%s: decodes at the same size", what))
		diag("%s", detail);
	return img;
}

static void
test_formats(void)
{
	struct face_image *src = load(GRACE), *img;
	struct buf b, small;
	char detail[256];
	static const struct {
		enum face_fmt fmt;
		const char *magic;
		size_t mlen;
		size_t moff;
	} outs[] = {
		{FACE_FMT_JPEG, "\xff\xd8\xff", 3, 0},
		{FACE_FMT_PNG, "\x89PNG\r\n\x1a\n", 8, 0},
		{FACE_FMT_WEBP, "WEBP", 4, 8},
	};

	if (!ok(src != NULL, "grace_hopper.jpg decodes"))
		return;
	for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		const char *name = face_fmt_name(outs[i].fmt);

		buf_init(&b, 0);
		ok(face_image_encode(src, outs[i].fmt, 90, &b, detail,
				     sizeof(detail)) &&
			   b.len > outs[i].moff + outs[i].mlen &&
			   memcmp(b.p + outs[i].moff, outs[i].magic,
				  outs[i].mlen) == 0,
		   "encode %s: magic bytes", name);
		img = decode_as(&b, outs[i].fmt, 3, src, name);
		if (img && outs[i].fmt == FACE_FMT_PNG)
			is_int(max_diff(src, img, false), 0,
			       "png: lossless round trip");
		else if (img)
			ok(mean_diff(src, img) < 4, "%s: close to the source",
			   name);
		face_image_free(img);
		if (outs[i].fmt != FACE_FMT_PNG) {
			buf_init(&small, 0);
			ok(face_image_encode(src, outs[i].fmt, 5, &small,
					     detail, sizeof(detail)) &&
				   small.len < b.len,
			   "%s: quality 5 is smaller than 90", name);
			buf_free(&small);
		}
		buf_free(&b);
	}
	buf_init(&b, 0);
	ok(!face_image_encode(src, FACE_FMT_BMP, 90, &b, detail,
			      sizeof(detail)),
	   "encode bmp refused: %s", detail);
	ok(!face_image_encode(src, FACE_FMT_JPEG, 0, &b, detail,
			      sizeof(detail)) &&
		   !face_image_encode(src, FACE_FMT_JPEG, 101, &b, detail,
				      sizeof(detail)),
	   "quality outside 1..100 refused");
	buf_init(&b, 100);
	ok(!face_image_encode(src, FACE_FMT_PNG, 90, &b, detail,
			      sizeof(detail)),
	   "encode past the buffer's limit fails: %s", detail);
	buf_free(&b);

	/* BMP and TIFF in, as written by hand */
	for (int bpp = 24; bpp <= 32; bpp += 8) {
		char what[32];

		snprintf(what, sizeof(what), "bmp %d-bit", bpp);
		buf_init(&b, 0);
		write_bmp(src, bpp, &b);
		img = decode_as(&b, FACE_FMT_BMP, bpp == 32 ? 4 : 3, src, what);
		if (img)
			is_int(max_diff(src, img, false), 0, "%s: exact", what);
		face_image_free(img);
		buf_free(&b);
	}
	{
		static const struct {
			int spp, bps;
			bool be;
			const char *what;
		} tiffs[] = {
			{3, 8, false, "tiff RGB 8-bit little-endian"},
			{4, 8, true, "tiff RGBA 8-bit big-endian"},
			{1, 16, true, "tiff gray 16-bit big-endian"},
			{1, 8, false, "tiff gray 8-bit"},
		};

		for (size_t i = 0; i < sizeof(tiffs) / sizeof(tiffs[0]); i++) {
			buf_init(&b, 0);
			write_tiff(src, tiffs[i].spp, tiffs[i].bps, tiffs[i].be,
				   &b);
			img = decode_as(&b, FACE_FMT_TIFF, tiffs[i].spp, src,
					tiffs[i].what);
			if (img)
				is_int(max_diff(src, img, tiffs[i].spp == 1), 0,
				       "%s: exact (as gray for one sample)",
				       tiffs[i].what);
			face_image_free(img);
			buf_free(&b);
		}
	}
	face_image_free(src);

	/* a real grayscale PNG comes out as BGR with equal channels */
	img = load(BASKETBALL);
	if (ok(img != NULL, "grayscale png decodes")) {
		size_t st;
		const uint8_t *p = face_image_pixels(img, &st);
		bool gray = true;

		for (int y = 0; y < face_image_height(img); y++)
			for (int x = 0; x < face_image_width(img); x++) {
				const uint8_t *q = p + y * st + 3 * x;

				gray = gray && q[0] == q[1] && q[1] == q[2];
			}
		ok(gray, "grayscale png: three equal channels");
	}
	face_image_free(img);
}

/* --- header probing on hostile input --- */

static bool
probe_fails(const void *p, size_t n, const char *want, const char *what)
{
	struct face_probe pr;
	char detail[256] = "";
	bool r = !face_image_probe(p, n, &pr, detail, sizeof(detail)) &&
		 pr.fmt == FACE_FMT_UNKNOWN && pr.width == 0 &&
		 (!want || strstr(detail, want));

	if (!r || !want)
		return r;
	return ok(r, "%s refused: %s", what, detail);
}

static void
test_probe(void)
{
	static const char *const files[] = {MESSI, BASKETBALL, GRACE};
	struct face_image *src = load(MESSI);
	struct buf b;
	struct face_probe pr;
	char detail[256];

	for (size_t i = 0; i < 3; i++) {
		size_t bad = 0, hdr;

		if (!read_path(files[i], &b)) {
			ok(false, "%s readable", files[i]);
			continue;
		}
		ok(face_image_probe(b.p, b.len, &pr, detail, sizeof(detail)),
		   "%s probes", files[i]);
		hdr = pr.fmt == FACE_FMT_JPEG ? 0 : 8 + 8 + 13;
		/* JPEG: the frame header comes after the JFIF/EXIF segments */
		for (size_t n = 0; pr.fmt == FACE_FMT_JPEG && n + 1 < b.len;
		     n++)
			if (b.p[n] == 0xff &&
			    (b.p[n + 1] == 0xc0 || b.p[n + 1] == 0xc2)) {
				hdr = n + 10;
				break;
			}
		/* every prefix too short to hold the header fails cleanly;
		 * exact-size heap copies let ASan see any overread */
		for (size_t n = 0; n < hdr; n++) {
			uint8_t *cut = malloc(n ? n : 1);

			memcpy(cut, b.p, n);
			bad += !probe_fails(cut, n, NULL, NULL);
			free(cut);
		}
		ok(hdr > 0 && bad == 0, "%s: all %zu short prefixes refused",
		   files[i], hdr);
		buf_free(&b);
	}

	/* garbage, and garbage behind each magic */
	{
		static const char *const magic[] = {"\xff\xd8\xff",
						    "\x89PNG\r\n\x1a\n",
						    "RIFF\0\0\0\0WEBP",
						    "BM",
						    "II*",
						    "MM\0*",
						    ""};
		static const size_t mlen[] = {3, 8, 12, 2, 4, 4, 0};
		size_t crashed = 0, accepted = 0;

		rnd_seed(6);
		for (int k = 0; k < 7; k++)
			for (int it = 0; it < 2000; it++) {
				size_t n = mlen[k] + rnd() % 64;
				uint8_t *p = malloc(n ? n : 1);

				for (size_t j = 0; j < n; j++)
					p[j] = (uint8_t)rnd();
				memcpy(p, magic[k], mlen[k]);
				if (face_image_probe(p, n, &pr, detail,
						     sizeof(detail))) {
					accepted++;
					crashed += pr.width == 0 ||
						   pr.height == 0 ||
						   pr.width > 1000000 ||
						   pr.height > 1000000;
				}
				free(p);
			}
		ok(crashed == 0,
		   "random headers: whatever passes has sane "
		   "dimensions (%zu passed)",
		   accepted);
		probe_fails("GIF89a\1\0\1\0\0\0\0", 13, "not a JPEG", "a GIF");
		probe_fails("", 0, "too short", "an empty file");
	}

	/* crafted headers */
	{
		/* PNG claiming 10000 x 10000 in 33 bytes */
		uint8_t png[] = {0x89, 'P',  'N',  'G', '\r', '\n', 0x1a,
				 '\n', 0,    0,	   0,	13,   'I',  'H',
				 'D',  'R',  0,	   0,	0x27, 0x10, 0,
				 0,    0x27, 0x10, 8,	2,    0,    0,
				 0,    0,    0,	   0,	0};
		uint8_t jpeg[] = {0xff, 0xd8, 0xff, 0xe0, 0xff, 0xff, 0};
		uint8_t jpeg0[] = {0xff, 0xd8, 0xff, 0xc0, 0, 11,   8, 0,
				   0,	 0,    10,   3,	   1, 0x11, 0, 0};
		uint8_t bmp[30] = {'B', 'M'};
		uint8_t tiff[] = {'I', 'I', 42, 0, 0xff, 0xff, 0xff, 0x7f};
		uint8_t tiff2[] = {'I', 'I', 42, 0, 8, 0, 0, 0, 0xff, 0xff};
		struct face_image *img;

		ok(face_image_probe(png, sizeof(png), &pr, detail,
				    sizeof(detail)) &&
			   pr.width == 10000 && pr.height == 10000,
		   "a 33-byte PNG claiming 100 MP probes as 10000x10000");
		img = face_image_decode(png, sizeof(png), 30000000, detail,
					sizeof(detail));
		ok(img == NULL && strstr(detail, "over 30000000"),
		   "and decode refuses it before decoding: %s", detail);
		face_image_free(img);
		png[25] = 5;
		probe_fails(png, sizeof(png), "colour type", "PNG colour 5");
		probe_fails(jpeg, sizeof(jpeg), "truncated",
			    "JPEG segment longer than the file");
		probe_fails(jpeg0, sizeof(jpeg0), "without dimensions",
			    "JPEG of height 0");
		bmp[14] = 40;
		bmp[18] = 10;
		bmp[22] = 0xf6; /* height -10: top-down */
		bmp[23] = bmp[24] = bmp[25] = 0xff;
		bmp[26] = 1;
		bmp[28] = 24;
		ok(face_image_probe(bmp, sizeof(bmp), &pr, detail,
				    sizeof(detail)) &&
			   pr.width == 10 && pr.height == 10,
		   "top-down BMP probes with a positive height");
		bmp[22] = 0;
		bmp[23] = bmp[24] = 0;
		bmp[25] = 0x80; /* INT32_MIN */
		probe_fails(bmp, sizeof(bmp), "height", "BMP height INT32_MIN");
		probe_fails(tiff, sizeof(tiff), "truncated",
			    "TIFF IFD past the end");
		probe_fails(tiff2, sizeof(tiff2), "truncated",
			    "TIFF with 65535 entries in 10 bytes");
	}

	/* truncated files decode to 400 material, not a grey image */
	if (src && read_path(MESSI, &b)) {
		struct face_image *img;
		size_t cut[] = {b.len / 2, b.len - 2, 700};

		for (size_t i = 0; i < 3; i++) {
			img = face_image_decode(b.p, cut[i], 0, detail,
						sizeof(detail));
			ok(img == NULL,
			   "messi5.jpg cut to %zu bytes refused: %s", cut[i],
			   img ? "decoded" : detail);
			face_image_free(img);
		}
		ok(face_jpeg_complete(b.p, b.len),
		   "the whole file is complete");
		buf_free(&b);
		for (enum face_fmt f = FACE_FMT_PNG; f <= FACE_FMT_WEBP; f++) {
			buf_init(&b, 0);
			face_image_encode(src, f, 90, &b, NULL, 0);
			img = face_image_decode(b.p, b.len / 2, 0, detail,
						sizeof(detail));
			ok(img == NULL, "half a %s refused: %s",
			   face_fmt_name(f), img ? "decoded" : detail);
			face_image_free(img);
			buf_free(&b);
		}
	}
	face_image_free(src);
}

/* --- masking --- */

/* Pixels differing between a and b inside and outside [x1,x2)x[y1,y2). */
static void
count_diff(const struct face_image *a, const struct face_image *b, int x1,
	   int y1, int x2, int y2, size_t *in, size_t *out)
{
	size_t sa, sb;
	const uint8_t *pa = face_image_pixels(a, &sa);
	const uint8_t *pb = face_image_pixels(b, &sb);

	*in = *out = 0;
	for (int y = 0; y < face_image_height(a); y++)
		for (int x = 0; x < face_image_width(a); x++) {
			bool d = memcmp(pa + y * sa + 3 * x,
					pb + y * sb + 3 * x, 3) != 0;
			bool inside = x >= x1 && x < x2 && y >= y1 && y < y2;

			if (d)
				++*(inside ? in : out);
		}
}

static bool
all_black(const struct face_image *a, int x1, int y1, int x2, int y2)
{
	size_t s;
	const uint8_t *p = face_image_pixels(a, &s);

	for (int y = y1; y < y2; y++)
		for (int x = x1; x < x2; x++)
			if (p[y * s + 3 * x] || p[y * s + 3 * x + 1] ||
			    p[y * s + 3 * x + 2])
				return false;
	return true;
}

static void
test_mask(struct face_model *m)
{
	static const char *const names[] = {"gaussian", "pixelate", "solid",
					    "elliptical"};
	struct face_image *src = load(GRACE), *img, *img2;
	struct face_box b[MAXBOX];
	char detail[256];
	size_t n, in, out;
	int x1, y1, x2, y2, w, h;

	if (!ok(src != NULL && m != NULL, "masking: photo and model"))
		goto out;
	w = face_image_width(src);
	h = face_image_height(src);
	n = detect(m, src, face_model_suggested_conf(m), 0, b, MAXBOX);
	if (!ok(n == 1, "masking: one face to mask"))
		goto out;
	ok(face_mask_region(src, &b[0], 0.15, &x1, &y1, &x2, &y2) &&
		   x1 <= (int)(b[0].x1 - 0.15f * (b[0].x2 - b[0].x1)) &&
		   x2 >= (int)(b[0].x2 + 0.15f * (b[0].x2 - b[0].x1)) &&
		   x2 - x1 <= (int)(1.3f * (b[0].x2 - b[0].x1)) + 2 &&
		   y2 - y1 <= (int)(1.3f * (b[0].y2 - b[0].y1)) + 2,
	   "padding 0.15 grows each side by 15%% of the box");
	for (int meth = FACE_GAUSSIAN; meth <= FACE_ELLIPTICAL; meth++) {
		int strengths[] = {199, 31};

		for (int s = 0; s < 2; s++) {
			img = face_image_clone(src);
			ok(face_mask(img, b, n, (enum face_method)meth,
				     strengths[s], 0.15, detail,
				     sizeof(detail)),
			   "%s %d masks", names[meth], strengths[s]);
			count_diff(src, img, x1, y1, x2, y2, &in, &out);
			is_int(out, 0,
			       "%s %d: every pixel outside the padded box "
			       "unchanged",
			       names[meth], strengths[s]);
			ok(in > (size_t)(x2 - x1) * (y2 - y1) / 3,
			   "%s %d: a third or more of the box changed "
			   "(%zu)",
			   names[meth], strengths[s], in);
			if (meth == FACE_SOLID)
				ok(all_black(img, x1, y1, x2, y2),
				   "solid: the padded box is black");
			if (meth == FACE_ELLIPTICAL) {
				/* corners lie outside the ellipse */
				count_diff(src, img, x1, y1, x1 + 5, y1 + 5,
					   &in, &out);
				is_int(in, 0, "elliptical: corner unchanged");
			}
			face_image_free(img);
		}
	}

	/* kernel sizes are forced odd: 30 blurs as 31 */
	img = face_image_clone(src);
	img2 = face_image_clone(src);
	face_mask(img, b, n, FACE_GAUSSIAN, 30, 0.15, NULL, 0);
	face_mask(img2, b, n, FACE_GAUSSIAN, 31, 0.15, NULL, 0);
	is_int(max_diff(img, img2, false), 0, "gaussian 30 is gaussian 31");
	face_image_free(img);
	face_image_free(img2);

	/* pixelate: blocks of strength pixels in a region of whole blocks */
	{
		struct face_box blk = {
			.x1 = 100, .y1 = 100, .x2 = 180, .y2 = 140, .score = 1};
		size_t st;
		const uint8_t *p;
		size_t uneven = 0;

		img = face_image_clone(src);
		face_mask(img, &blk, 1, FACE_PIXELATE, 8, 0, NULL, 0);
		p = face_image_pixels(img, &st);
		for (int y = 100; y < 140; y++)
			for (int x = 100; x < 180; x++)
				uneven +=
					memcmp(p + y * st + 3 * x,
					       p +
						       (100 +
							(y - 100) / 8 * 8) *
							       st +
						       3 * (100 +
							    (x - 100) / 8 * 8),
					       3) != 0;
		is_int(uneven, 0, "pixelate 8: 8x8 blocks of one colour");
		face_image_free(img);
	}

	/* padding clipped at the borders */
	{
		struct face_box edge[2] = {
			{.x1 = 5, .y1 = 5, .x2 = 45, .y2 = 45, .score = 1},
			{.x1 = (float)w - 30,
			 .y1 = (float)h - 30,
			 .x2 = (float)w - 2,
			 .y2 = (float)h - 2,
			 .score = 1},
		};
		struct face_box away = {
			.x1 = -50, .y1 = -50, .x2 = -10, .y2 = -10};
		int a[4], c[4];

		ok(face_mask_region(src, &edge[0], 0.5, &a[0], &a[1], &a[2],
				    &a[3]) &&
			   a[0] == 0 && a[1] == 0 && a[2] == 65 && a[3] == 65,
		   "padding 0.5 at the top left: clipped to 0,0-65,65");
		ok(face_mask_region(src, &edge[1], 2.0, &c[0], &c[1], &c[2],
				    &c[3]) &&
			   c[0] == w - 86 && c[1] == h - 86 && c[2] == w &&
			   c[3] == h,
		   "padding 2 at the bottom right: clipped to the image");
		ok(!face_mask_region(src, &away, 0.0, &x1, &y1, &x2, &y2),
		   "a box outside the image has no region");
		img = face_image_clone(src);
		ok(face_mask(img, edge, 1, FACE_SOLID, 1, 0.5, NULL, 0),
		   "solid mask at the top left");
		count_diff(src, img, a[0], a[1], a[2], a[3], &in, &out);
		ok(out == 0 && all_black(img, a[0], a[1], a[2], a[3]),
		   "  exactly the clipped region is black");
		face_image_free(img);
		img = face_image_clone(src);
		ok(face_mask(img, edge + 1, 1, FACE_GAUSSIAN, 199, 2.0, NULL,
			     0),
		   "gaussian 199 at the bottom right");
		count_diff(src, img, c[0], c[1], c[2], c[3], &in, &out);
		ok(out == 0 && in > 0, "  only the clipped region changed");
		face_mask(img, &away, 1, FACE_SOLID, 1, 0, NULL, 0);
		count_diff(src, img, c[0], c[1], c[2], c[3], &in, &out);
		is_int(out, 0, "a box outside the image changes nothing");
		ok(!face_mask(img, edge, 1, FACE_GAUSSIAN, 0, 0.1, detail,
			      sizeof(detail)) &&
			   !face_mask(img, edge, 1, FACE_GAUSSIAN, 1000, 0.1,
				      detail, sizeof(detail)) &&
			   !face_mask(img, edge, 1, FACE_GAUSSIAN, 5, 2.5,
				      detail, sizeof(detail)) &&
			   !face_mask(img, edge, 1, FACE_GAUSSIAN, 5, -0.1,
				      detail, sizeof(detail)),
		   "strength outside 1..999, padding outside 0..2 refused");
		face_image_free(img);
	}
out:
	face_image_free(src);
}

int
main(void)
{
	static const char *const photos[] = {MESSI, BASKETBALL, HOME, GRACE};
	static char srcdir_models[4096];
	char note[512], detail[512];
	struct face_model *m;
	int present = 0;

	/* mk/face.am sets it; by hand, ../shared/models beside the tree */
	model_dir = getenv("FACE_TEST_MODEL_DIR");
	if (!model_dir && getenv("XMHUB_SRCDIR")) {
		snprintf(srcdir_models, sizeof(srcdir_models),
			 "%s/../shared/models", getenv("XMHUB_SRCDIR"));
		model_dir = srcdir_models;
	}
	if (!model_dir)
		model_dir = "../shared/models";
	for (size_t i = 0; i < 4; i++)
		ok(access(photos[i], R_OK) == 0, "%s readable", photos[i]);
	ok(access(model_dir, R_OK) == 0, "model directory %s", model_dir);

	for (const char *const *name = face_model_names; *name; name++) {
		m = face_model_open(model_dir, *name, 640, 0, note,
				    sizeof(note), detail, sizeof(detail));
		if (m && strcmp(face_model_name(m), *name) == 0) {
			present++;
			test_model(*name);
		} else {
			diag("%s not in %s: %s", *name, model_dir,
			     m ? note : detail);
		}
		face_model_close(m);
	}
	ok(present >= 4, "%d of 7 models present and tested", present);
	test_open();
	test_dynamic();
	test_formats();
	test_probe();
	m = face_model_open(model_dir, NULL, 640, 0, note, sizeof(note), detail,
			    sizeof(detail));
	test_mask(m);
	face_model_close(m);
	is_str(face_opencv_version(), "4.6.0", "OpenCV version reported");
	return tap_done();
}
