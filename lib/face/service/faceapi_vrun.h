/* SPDX-License-Identifier: MIT */
/*
 * faceapi_vrun.h - what a video anonymization job does with a video file
 * (doc/face-video.md): ffprobe reads its header, then one ffmpeg decodes
 * its first video stream to raw BGR frames into a FIFO, the frames are
 * detected and masked here, and a second ffmpeg reads the masked frames
 * from another FIFO and encodes them (H.264 in MP4, or in Matroska when
 * the audio can not go into MP4) with the input's audio streams copied
 * unchanged.  Both ffmpegs are lib/core/child's (posix_spawn, argument
 * vector, minimal environment, killed with the caller); they run beside
 * the detection, so decoding and encoding overlap with it.
 *
 * Detection runs on every k-th frame (and the last); a frame is masked
 * with the boxes of the detections around it: a detection frame with
 * those of its own and its two neighbouring detections (a face one
 * detection misses is still masked), a frame between two detections
 * with their boxes interpolated (matched by overlap) and the unmatched
 * ones held, so masks neither flicker nor drop for a frame.
 */
#ifndef XMHUB_FACEAPI_VRUN_H
#define XMHUB_FACEAPI_VRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "face/face.h"

#define FACEAPI_VCODEC_MAX 32
#define FACEAPI_VRATE_MAX 32
#define FACEAPI_VFACES_MAX 256 /* boxes kept per detection at most */

/* What ffprobe says of a video. */
struct faceapi_vinfo {
	int width, height;		 /* of the first video stream */
	int64_t duration_ms;		 /* the container's, else 0 */
	long long frames;		 /* the header's, else estimated */
	char rate[FACEAPI_VRATE_MAX];	 /* average frame rate "N/D" */
	double fps;			 /* the same as a number */
	char vcodec[FACEAPI_VCODEC_MAX]; /* e.g. "h264" */
	char acodec[FACEAPI_VCODEC_MAX]; /* first audio stream's, or "" */
	int audio_streams;		 /* how many */
};

/* The masking of a job. */
struct faceapi_vmask {
	float confidence, nms;
	size_t max_faces; /* per frame; 0: all (up to FACEAPI_VFACES_MAX) */
	enum face_method method;
	int strength;
	double padding;
	int detect_every; /* k >= 1 */
	/* FACE_API_VIDEO_MAX_SECONDS: the decoder stops a second past it
	 * whatever the header says, and a video holding more fails. */
	long long max_seconds;
};

/* What a run did. */
struct faceapi_vstats {
	long long frames;   /* frames decoded, masked and encoded */
	long long detected; /* detections over all detection frames */
	double fps;	    /* frames per second of the whole run */
};

/* How a run ended. */
enum faceapi_vend {
	FACEAPI_V_OK,	   /* the output is written */
	FACEAPI_V_FAILED,  /* the input could not be processed: detail is
			    * fit for the client */
	FACEAPI_V_STOPPED, /* the progress callback asked to stop */
	FACEAPI_V_ERROR	   /* a fault of this side (detail for the log) */
};

/*
 * Called every second or so with the frames done and the rate so far;
 * returns false to stop the run (the job was cancelled or lost, the
 * runner is stopping).
 */
typedef bool (*faceapi_vprogress)(void *arg, long long frames_done, double fps);

/*
 * ffprobe of the file at path into *vi, within timeout_ms.  False with a
 * reason fit for the client in detail when it is not a video ffprobe
 * can read or has no video stream.
 */
bool faceapi_video_probe(const char *path, struct faceapi_vinfo *vi,
			 int timeout_ms, char *detail, size_t dlen);

/* The container of the output for vi: "mp4", or "mkv" when vi's audio
 * can not be copied into MP4.  Static. */
const char *faceapi_video_container(const struct faceapi_vinfo *vi);

/* The MIME type of a container of faceapi_video_container(). */
const char *faceapi_video_mime(const char *container);

/*
 * Masks the video at in (probed as *vi) into out (of
 * faceapi_video_container(vi)) with model m and p, using two FIFOs in
 * the directory dir (which must be private to the caller), calling cb
 * (may be NULL) about every second.  *st receives what was done.  Start
 * it from the main thread (lib/core/child).
 */
enum faceapi_vend faceapi_video_mask(struct face_model *m, const char *in,
				     const struct faceapi_vinfo *vi,
				     const char *out, const char *dir,
				     const struct faceapi_vmask *p,
				     faceapi_vprogress cb, void *arg,
				     struct faceapi_vstats *st, char *detail,
				     size_t dlen);

#endif
