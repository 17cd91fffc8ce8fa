/* SPDX-License-Identifier: MIT */
/*
 * bench/face-video.c - video masking throughput against raw detection
 * on the same frames, in one run (doc/face-video.md "Throughput").
 *
 * The video's frames are decoded into memory first (not timed) and
 * face_detect() is timed on each of them: det_fps, the rate of the
 * detector alone.  Then the whole job's work, faceapi_video_mask()
 * (decode, detect, track, mask, encode, audio copied), runs on the same
 * file: pipeline_fps.  ratio = pipeline_fps / det_fps (aim: 0.8 or
 * more with detection on every frame).  bench/face-video.pl makes the
 * video and runs this once per model.
 *
 * Usage: face-video -d MODEL_DIR -m MODEL -v VIDEO [-k DETECT_EVERY]
 *                   [-t THREADS]
 * One line: model=NAME frames=N det_fps=X pipeline_fps=Y ratio=R k=K
 */
#include "config.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/child.h"
#include "face/service/faceapi_vrun.h"
#include "face/video.h"

#define MAX_RAW ((size_t)1 << 30) /* decoded bytes kept at most */

/* Frames per second of face_detect() alone over the decoded frames. */
static double
detect_rate(struct face_model *m, const char *video,
	    const struct faceapi_vinfo *vi, long long *frames)
{
	char *argv[] = {"ffmpeg",      "-nostdin", "-v",    "error", "-i",
			(char *)video, "-map",	   "0:v:0", "-f",    "rawvideo",
			"-pix_fmt",    "bgr24",	   "-",	    NULL};
	const struct child_path paths[] = {{video, CHILD_READ}, {NULL, 0}};
	size_t fsize = (size_t)vi->width * (size_t)vi->height * 3, n;
	struct face_box boxes[FACEAPI_VFACES_MAX];
	char detail[512];
	struct child ch;
	double t0 = clock_mono_s(), rate = 0;

	if (!child_run(&ch, argv, paths, MAX_RAW, 8192, 600000, detail,
		       sizeof(detail))) {
		fprintf(stderr, "face-video: decoding: %s\n", detail);
		goto out;
	}
	*frames = (long long)(ch.out.len / fsize);
	for (long long i = -2; i < *frames; i++) {
		struct face_image *img = face_frame_wrap(
			ch.out.p + (size_t)(i < 0 ? 0 : i) * fsize, vi->width,
			vi->height, (size_t)vi->width * 3);

		if (i == 0)
			t0 = clock_mono_s();
		if (img == NULL || !face_detect(m, img, 0.5f, 0.4f, 0, boxes,
						FACEAPI_VFACES_MAX, &n, NULL,
						detail, sizeof(detail))) {
			fprintf(stderr, "face-video: detect: %s\n", detail);
			face_image_free(img);
			goto out;
		}
		face_image_free(img);
	}
	rate = (double)*frames / (clock_mono_s() - t0);
out:
	child_free(&ch);
	return rate;
}

int
main(int argc, char **argv)
{
	const char *dir = NULL, *model = NULL, *video = NULL;
	struct faceapi_vmask p = {0.5f, 0.4f, 0, FACE_GAUSSIAN,
				  199,	0.15, 1, 600};
	char note[512], detail[512], tmp[] = "/tmp/xmhub-bench-video-XXXXXX";
	char out[PATH_MAX];
	struct faceapi_vstats st;
	struct faceapi_vinfo vi;
	struct face_model *m = NULL;
	long long frames = 0;
	double det_fps, t0, pipe_fps;
	int c, threads = 0, rc = 1;

	while ((c = getopt(argc, argv, "d:m:v:k:t:")) != -1) {
		if (c == 'd')
			dir = optarg;
		else if (c == 'm')
			model = optarg;
		else if (c == 'v')
			video = optarg;
		else if (c == 'k')
			p.detect_every = atoi(optarg);
		else if (c == 't')
			threads = atoi(optarg);
		else
			goto usage;
	}
	if (dir == NULL || model == NULL || video == NULL ||
	    p.detect_every < 1 || optind != argc)
		goto usage;
	signal(SIGPIPE, SIG_IGN);
	if (!faceapi_video_probe(video, &vi, 60000, detail, sizeof(detail))) {
		fprintf(stderr, "face-video: %s: %s\n", video, detail);
		return 1;
	}
	if ((m = face_model_open(dir, model, 640, threads, note, sizeof(note),
				 detail, sizeof(detail))) == NULL) {
		fprintf(stderr, "face-video: %s: %s\n", model, detail);
		return 1;
	}
	if ((det_fps = detect_rate(m, video, &vi, &frames)) <= 0 ||
	    mkdtemp(tmp) == NULL)
		goto out;
	snprintf(out, sizeof(out), "%s/out.%s", tmp,
		 faceapi_video_container(&vi));
	t0 = clock_mono_s();
	if (faceapi_video_mask(m, video, &vi, out, tmp, &p, NULL, NULL, &st,
			       detail, sizeof(detail)) != FACEAPI_V_OK) {
		fprintf(stderr, "face-video: masking: %s\n", detail);
		goto out;
	}
	pipe_fps = (double)st.frames / (clock_mono_s() - t0);
	printf("model=%s frames=%lld det_fps=%.2f pipeline_fps=%.2f "
	       "ratio=%.3f k=%d size=%dx%d\n",
	       face_model_name(m), st.frames, det_fps, pipe_fps,
	       pipe_fps / det_fps, p.detect_every, vi.width, vi.height);
	rc = st.frames == frames ? 0 : 1;
	if (rc != 0)
		fprintf(stderr, "face-video: %lld frames masked of %lld\n",
			st.frames, frames);
out:
	unlink(out);
	rmdir(tmp);
	face_model_close(m);
	return rc;
usage:
	fprintf(stderr, "usage: face-video -d MODEL_DIR -m MODEL -v VIDEO "
			"[-k DETECT_EVERY] [-t THREADS]\n");
	return 2;
}
