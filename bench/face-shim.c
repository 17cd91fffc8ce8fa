/* SPDX-License-Identifier: MIT */
/*
 * bench/face-shim.c - raw face detection time of each model, no HTTP.
 *
 * For every model present in the model directory: the image is decoded
 * once (decoding is not timed), two detections warm OpenCV up, then
 * face_detect() is timed RUNS times and the median printed, with the
 * median of its inference part.  The median, because a busy machine only
 * ever adds time and one slow run should not move the figure.
 * bench/face.pl runs this and sets it against the full POST
 * /api/v1/detect latency through lighttpd.
 *
 * Usage: face-shim [-d MODEL_DIR] [-i IMAGE] [-n RUNS] [-s DET_SIZE]
 *                  [-t THREADS]
 * MODEL_DIR defaults to $FACE_TEST_MODEL_DIR, then $FACE_API_MODEL_DIR;
 * IMAGE to matplotlib's grace_hopper.jpg.  One line per model:
 *   model=NAME det_ms=X inference_ms=Y shim_ratio=X/Y faces=N runs=R
 *   det_size=S threads=T
 * shim_ratio sets the whole face_detect() (letterbox, tensor, decoding,
 * NMS) against the network's forward pass alone, its baseline.
 */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec/buf.h"
#include "face/face.h"

#define MAX_RUNS 1000

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Times one model; false when it is not present (another loaded). */
static bool
bench_model(const char *dir, const char *name, struct face_image *img, int runs,
	    int det, int threads)
{
	static double total[MAX_RUNS], infer[MAX_RUNS];
	struct face_box boxes[256];
	struct face_timings t;
	char note[512], detail[512];
	struct face_model *m;
	size_t n = 0;
	double det_ms, inf_ms;

	m = face_model_open(dir, name, det, threads, note, sizeof(note), detail,
			    sizeof(detail));
	if (!m || strcmp(face_model_name(m), name) != 0) {
		fprintf(stderr, "face-shim: %s: not present (%s)\n", name,
			m ? note : detail);
		face_model_close(m);
		return false;
	}
	for (int i = -2; i < runs; i++) {
		double t0 = now_ms();

		if (!face_detect(m, img, face_model_suggested_conf(m), 0.4f, 0,
				 boxes, 256, &n, &t, detail, sizeof(detail))) {
			fprintf(stderr, "face-shim: %s: %s\n", name, detail);
			face_model_close(m);
			return false;
		}
		if (i >= 0) {
			total[i] = now_ms() - t0;
			infer[i] = t.inference_ms;
		}
	}
	det_ms = median(total, runs);
	inf_ms = median(infer, runs);
	printf("model=%s det_ms=%.2f inference_ms=%.2f shim_ratio=%.3f "
	       "faces=%zu runs=%d det_size=%d threads=%d\n",
	       name, det_ms, inf_ms, det_ms / inf_ms, n, runs,
	       face_model_det_size(m), threads);
	fflush(stdout);
	face_model_close(m);
	return true;
}

int
main(int argc, char **argv)
{
	const char *dir = getenv("FACE_TEST_MODEL_DIR");
	const char *image = "/usr/share/matplotlib/mpl-data/sample_data/"
			    "grace_hopper.jpg";
	int runs = 20, det = 640, threads = 0, c, found = 0, fd;
	struct face_image *img;
	struct buf b;
	char detail[256];

	if (!dir)
		dir = getenv("FACE_API_MODEL_DIR");
	while ((c = getopt(argc, argv, "d:i:n:s:t:")) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'i':
			image = optarg;
			break;
		case 'n':
			runs = atoi(optarg);
			break;
		case 's':
			det = atoi(optarg);
			break;
		case 't':
			threads = atoi(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (!dir || runs < 1 || runs > MAX_RUNS || optind != argc)
		goto usage;

	buf_init(&b, 0);
	fd = open(image, O_RDONLY);
	if (fd < 0 || !buf_read_fd(&b, fd)) {
		perror(image);
		return 1;
	}
	close(fd);
	img = face_image_decode(b.p, b.len, 0, detail, sizeof(detail));
	buf_free(&b);
	if (!img) {
		fprintf(stderr, "face-shim: %s: %s\n", image, detail);
		return 1;
	}
	printf("# image=%s %dx%d opencv=%s\n", image, face_image_width(img),
	       face_image_height(img), face_opencv_version());
	for (const char *const *name = face_model_names; *name; name++)
		found += bench_model(dir, *name, img, runs, det, threads);
	face_image_free(img);
	return found ? 0 : 1;
usage:
	fprintf(stderr, "usage: face-shim [-d MODEL_DIR] [-i IMAGE] "
			"[-n RUNS 1..1000] [-s DET_SIZE] [-t THREADS]\n");
	return 2;
}
