/* SPDX-License-Identifier: MIT */
/*
 * faceapi_vrun.c - probe, decode, detect, mask and encode a video
 * (faceapi_vrun.h).
 */
#define _GNU_SOURCE /* F_SETPIPE_SZ */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "core/clock.h"
#include "core/child.h"
#include "face/service/faceapi_vrun.h"
#include "face/video.h"

/*
 * The demuxers an input may be read with: video containers only.  A
 * playlist (HLS), a concat list or an image sequence would make ffmpeg
 * open other files or URLs than the upload.
 */
#define FORMATS "mov,matroska,avi,flv,mpegts,mpeg,ogg,asf"
#define PROBE_OUT_MAX 65536
#define CHILD_ERR_MAX 8192
#define PIPE_BYTES (1 << 20) /* a FIFO's buffer: about a frame ahead */
#define POLL_MS 200
#define KILL_GRACE_MS 2000
#define FINISH_MS 600000 /* the encoder's time after the last frame */

/* A string member of o into out ("" when absent). */
static void
jstr(json_object *o, const char *name, char *out, size_t len)
{
	json_object *v;

	out[0] = '\0';
	if (json_object_object_get_ex(o, name, &v) &&
	    json_object_is_type(v, json_type_string))
		snprintf(out, len, "%s", json_object_get_string(v));
}

/* A member of o that ffprobe gives as a number or a numeric string. */
static double
jnum(json_object *o, const char *name)
{
	char s[64], *end;
	double d;

	jstr(o, name, s, sizeof(s));
	if (s[0] == '\0') {
		json_object *v;

		return json_object_object_get_ex(o, name, &v)
			       ? json_object_get_double(v)
			       : 0;
	}
	d = strtod(s, &end);
	return *end == '\0' && isfinite(d) ? d : 0;
}

/* "N/D" of a frame rate into a number (0 when not a positive rate). */
static double
rate_of(const char *s)
{
	long long n, d;
	char tail;

	if (sscanf(s, "%lld/%lld%c", &n, &d, &tail) != 2 || n <= 0 || d <= 0 ||
	    n > 1000000 || d > 1000000)
		return 0;
	return (double)n / (double)d;
}

/*
 * True when the stream's display matrix turns it by 90 or 270 degrees
 * (phones): ffmpeg's decoder turns the frames upright, so they come out
 * height x width, and the output needs no rotation of its own.
 */
static bool
quarter_turned(json_object *s)
{
	json_object *list;

	if (!json_object_object_get_ex(s, "side_data_list", &list) ||
	    !json_object_is_type(list, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(list); i++) {
		long rot = labs((long)jnum(json_object_array_get_idx(list, i),
					   "rotation"));

		if (rot % 180 == 90)
			return true;
	}
	return false;
}

/* Fills vi from ffprobe's JSON; false with detail when unusable. */
static bool
probe_parse(const char *text, struct faceapi_vinfo *vi, char *detail,
	    size_t dlen)
{
	json_object *root = json_tokener_parse(text), *streams, *fmt;
	bool video = false;
	double dur = 0;
	char type[16];

	if (root == NULL ||
	    !json_object_object_get_ex(root, "streams", &streams) ||
	    !json_object_is_type(streams, json_type_array)) {
		snprintf(detail, dlen, "ffprobe found no streams");
		goto out;
	}
	for (size_t i = 0; i < json_object_array_length(streams); i++) {
		json_object *s = json_object_array_get_idx(streams, i);

		jstr(s, "codec_type", type, sizeof(type));
		if (strcmp(type, "audio") == 0) {
			if (vi->audio_streams++ == 0)
				jstr(s, "codec_name", vi->acodec,
				     sizeof(vi->acodec));
		} else if (strcmp(type, "video") == 0 && !video) {
			video = true;
			jstr(s, "codec_name", vi->vcodec, sizeof(vi->vcodec));
			vi->width = (int)jnum(s, "width");
			vi->height = (int)jnum(s, "height");
			jstr(s, "avg_frame_rate", vi->rate, sizeof(vi->rate));
			vi->fps = rate_of(vi->rate);
			vi->frames = (long long)jnum(s, "nb_frames");
			dur = jnum(s, "duration");
			if (quarter_turned(s)) {
				int w = vi->width;

				vi->width = vi->height;
				vi->height = w;
			}
		}
	}
	if (json_object_object_get_ex(root, "format", &fmt) &&
	    jnum(fmt, "duration") > 0)
		dur = jnum(fmt, "duration");
	vi->duration_ms = dur > 0 && dur < 1e9 ? (int64_t)(dur * 1000) : 0;
	if (!video)
		snprintf(detail, dlen, "the file has no video stream");
	else if (vi->width <= 0 || vi->height <= 0 || vi->fps <= 0)
		snprintf(detail, dlen,
			 "the video stream has no size or frame rate");
	else {
		if (vi->frames <= 0)
			vi->frames = (long long)llround(
				(double)vi->duration_ms * vi->fps / 1000.0);
		json_object_put(root);
		return true;
	}
out:
	json_object_put(root);
	return false;
}

bool
faceapi_video_probe(const char *path, struct faceapi_vinfo *vi, int timeout_ms,
		    char *detail, size_t dlen)
{
	char *argv[] = {"ffprobe",
			"-v",
			"error",
			"-format_whitelist",
			FORMATS,
			"-show_entries",
			"stream=codec_type,codec_name,width,height,"
			"avg_frame_rate,nb_frames,duration:stream_side_data="
			"rotation:format=duration",
			"-of",
			"json",
			(char *)path,
			NULL};
	const struct child_path paths[] = {{path, CHILD_READ}, {NULL, 0}};
	char why[512], reason[CHILD_REASON_MAX];
	const char *base = strrchr(path, '/'), *say;
	struct child ch;
	bool ok = false;
	size_t n;

	memset(vi, 0, sizeof(*vi));
	base = base != NULL ? base + 1 : path;
	n = strlen(base);
	if (!child_run(&ch, argv, paths, PROBE_OUT_MAX, CHILD_ERR_MAX,
		       timeout_ms, why, sizeof(why))) {
		child_reason(why, reason, sizeof(reason));
		/* ffprobe names the file first: a temporary name, not the
		 * client's business. */
		say = strncmp(reason, base, n) == 0 && reason[n] == ':'
			      ? reason + n + 1 + (reason[n + 1] == ' ')
			      : reason;
		snprintf(detail, dlen, "not a readable video: %s",
			 say[0] != '\0' ? say : "ffprobe failed");
		goto out;
	}
	ok = probe_parse((const char *)ch.out.p, vi, detail, dlen);
out:
	child_free(&ch);
	return ok;
}

const char *
faceapi_video_container(const struct faceapi_vinfo *vi)
{
	static const char *const mp4_audio[] = {"aac",	"mp3", "opus", "flac",
						"alac", "ac3", "eac3", NULL};

	if (vi->audio_streams == 0)
		return "mp4";
	for (size_t i = 0; mp4_audio[i] != NULL; i++)
		if (strcmp(vi->acodec, mp4_audio[i]) == 0)
			return "mp4";
	return "mkv";
}

const char *
faceapi_video_mime(const char *container)
{
	return strcmp(container, "mp4") == 0 ? "video/mp4" : "video/x-matroska";
}

/* The boxes of one detection frame. */
struct det {
	long long idx; /* -1: none */
	size_t n;
	struct face_box *b;
};

/* One run's state, freed in one place. */
struct vrun {
	struct face_model *m;
	const struct faceapi_vinfo *vi;
	const struct faceapi_vmask *p;
	struct child dec, enc;
	int rfd, wfd; /* decoder's FIFO (read), encoder's FIFO (write) */
	size_t fsize; /* bytes of a frame */
	int ring;     /* frames kept: detect_every + 1 */
	uint8_t **frames;
	struct det d[3]; /* the last three detections, oldest first */
	struct face_box *work;
	size_t cap; /* boxes per detection */
	long long emitted;
	struct faceapi_vstats *st;
	faceapi_vprogress cb;
	void *arg;
	double start, last_cb;
	enum faceapi_vend end;
	char *detail;
	size_t dlen;
};

/* Sets the run's end and detail, prefix then s (the first reason
 * wins). */
static bool
failed(struct vrun *r, enum faceapi_vend end, const char *prefix, const char *s)
{
	if (r->end == FACEAPI_V_OK) {
		r->end = end;
		snprintf(r->detail, r->dlen, "%s%s", prefix, s);
	}
	return false;
}

/* The decoder's or encoder's failure: its words (child_reason) or its
 * exit status. */
static bool
child_failed(struct vrun *r, struct child *c, const char *who)
{
	char reason[CHILD_REASON_MAX], msg[CHILD_REASON_MAX + 64];

	child_reason(c->err.p != NULL ? (const char *)c->err.p : "", reason,
		     sizeof(reason));
	if (reason[0] == '\0')
		child_status(c->status, reason, sizeof(reason));
	snprintf(msg, sizeof(msg), "%s: %s", who, reason);
	return failed(r, c == &r->dec ? FACEAPI_V_FAILED : FACEAPI_V_ERROR, "",
		      msg);
}

/* Keeps both children's stderr drained; false when one ended badly
 * (a decoder that ended well has just written its last frame). */
static bool
children_ok(struct vrun *r)
{
	if (r->dec.pid > 0 && child_wait(&r->dec, 0) &&
	    !(WIFEXITED(r->dec.status) && WEXITSTATUS(r->dec.status) == 0))
		return child_failed(r, &r->dec,
				    "the video could not be decoded");
	if (r->enc.pid > 0 && child_wait(&r->enc, 0))
		return child_failed(r, &r->enc, "ffmpeg (encoder) ended early");
	return true;
}

/* Progress to the callback, about every second. */
static bool
progress(struct vrun *r, bool force)
{
	double t = clock_mono_s();

	if (r->cb == NULL || (!force && t - r->last_cb < 1.0))
		return true;
	r->last_cb = t;
	if (!r->cb(r->arg, r->emitted,
		   t > r->start ? (double)r->emitted / (t - r->start) : 0))
		return failed(r, FACEAPI_V_STOPPED, "", "stopped");
	return true;
}

/* Reads one frame into p: 1 read, 0 at the end of the stream, -1 on
 * failure (set). */
static int
read_frame(struct vrun *r, uint8_t *p)
{
	size_t got = 0;

	while (got < r->fsize) {
		struct pollfd pf = {r->rfd, POLLIN, 0};
		ssize_t n;

		if (!children_ok(r) || !progress(r, false))
			return -1;
		if (poll(&pf, 1, POLL_MS) < 0 && errno != EINTR)
			return failed(r, FACEAPI_V_ERROR,
				      "poll: ", strerror(errno)),
			       -1;
		n = read(r->rfd, p + got, r->fsize - got);
		if (n > 0)
			got += (size_t)n;
		else if (n == 0 && (pf.revents & POLLHUP) != 0)
			break;
		else if (n == 0 && r->dec.pid <= 0)
			break; /* the decoder ended without ever writing */
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			return failed(r, FACEAPI_V_ERROR,
				      "read: ", strerror(errno)),
			       -1;
	}
	if (got == r->fsize)
		return 1;
	if (got > 0)
		return failed(r, FACEAPI_V_FAILED, "",
			      "the decoder's last frame was cut short"),
		       -1;
	return 0;
}

/* Writes one frame to the encoder. */
static bool
write_frame(struct vrun *r, const uint8_t *p)
{
	size_t put = 0;

	while (put < r->fsize) {
		struct pollfd pf = {r->wfd, POLLOUT, 0};
		ssize_t n;

		if (!children_ok(r) || !progress(r, false))
			return false;
		if (poll(&pf, 1, POLL_MS) < 0 && errno != EINTR)
			return failed(r, FACEAPI_V_ERROR,
				      "poll: ", strerror(errno));
		n = write(r->wfd, p + put, r->fsize - put);
		if (n > 0)
			put += (size_t)n;
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			return failed(r, FACEAPI_V_ERROR,
				      "the encoder stopped reading: ",
				      strerror(errno));
	}
	return true;
}

/* Detects the faces of frame idx (pixels p) into the newest of r->d[]. */
static bool
detect(struct vrun *r, long long idx, uint8_t *p)
{
	struct face_image *img;
	struct det old = r->d[0];
	char why[256];
	bool ok;

	r->d[0] = r->d[1];
	r->d[1] = r->d[2];
	r->d[2] = old;
	r->d[2].idx = idx;
	r->d[2].n = 0;
	if ((img = face_frame_wrap(p, r->vi->width, r->vi->height,
				   (size_t)r->vi->width * 3)) == NULL)
		return failed(r, FACEAPI_V_ERROR, "", "out of memory");
	ok = face_detect(r->m, img, r->p->confidence, r->p->nms,
			 r->p->max_faces, r->d[2].b, r->cap, &r->d[2].n, NULL,
			 why, sizeof(why));
	face_image_free(img);
	if (!ok)
		return failed(r, FACEAPI_V_ERROR, "face detection: ", why);
	r->st->detected += (long long)r->d[2].n;
	return true;
}

static double
iou(const struct face_box *a, const struct face_box *b)
{
	double w = fmin(a->x2, b->x2) - fmax(a->x1, b->x1);
	double h = fmin(a->y2, b->y2) - fmax(a->y1, b->y1);
	double i = w > 0 && h > 0 ? w * h : 0;
	double u = (a->x2 - a->x1) * (a->y2 - a->y1) +
		   (b->x2 - b->x1) * (b->y2 - b->y1) - i;

	return u > 0 ? i / u : 0;
}

/* Appends the boxes of a to out (n in use). */
static void
add_all(struct vrun *r, const struct det *a, size_t *n)
{
	for (size_t i = 0; i < a->n && *n < 3 * r->cap; i++)
		r->work[(*n)++] = a->b[i];
}

/*
 * The boxes of frame f between detections a and b (a->idx < f <
 * b->idx): each box of a matched with the box of b it overlaps most
 * (IoU > 0, each used once) moves linearly from one to the other; the
 * unmatched boxes of both are held as they are.
 */
static size_t
between(struct vrun *r, const struct det *a, const struct det *b, long long f)
{
	double t = (double)(f - a->idx) / (double)(b->idx - a->idx);
	bool used[FACEAPI_VFACES_MAX] = {false};
	size_t n = 0;

	for (size_t i = 0; i < a->n; i++) {
		const struct face_box *x = &a->b[i], *y;
		double best = 0;
		size_t j = b->n;

		for (size_t k = 0; k < b->n; k++)
			if (!used[k] && iou(x, &b->b[k]) > best) {
				best = iou(x, &b->b[k]);
				j = k;
			}
		if (j == b->n) {
			r->work[n++] = *x;
			continue;
		}
		used[j] = true;
		y = &b->b[j];
		r->work[n] = *x;
		r->work[n].x1 = (float)(x->x1 + t * (y->x1 - x->x1));
		r->work[n].y1 = (float)(x->y1 + t * (y->y1 - x->y1));
		r->work[n].x2 = (float)(x->x2 + t * (y->x2 - x->x2));
		r->work[n].y2 = (float)(x->y2 + t * (y->y2 - x->y2));
		n++;
	}
	for (size_t k = 0; k < b->n; k++)
		if (!used[k])
			r->work[n++] = b->b[k];
	return n;
}

/*
 * Merges the boxes of b[0..n) that overlap much (IoU > 0.3: mostly one
 * face in neighbouring detections) into their bounding box, so that a
 * face is masked once, not once per detection that saw it; the new
 * count.
 */
static size_t
merge(struct face_box *b, size_t n)
{
	bool changed = true;

	while (changed) {
		changed = false;
		for (size_t i = 0; i < n; i++)
			for (size_t j = i + 1; j < n; j++) {
				if (iou(&b[i], &b[j]) <= 0.3)
					continue;
				b[i].x1 = fminf(b[i].x1, b[j].x1);
				b[i].y1 = fminf(b[i].y1, b[j].y1);
				b[i].x2 = fmaxf(b[i].x2, b[j].x2);
				b[i].y2 = fmaxf(b[i].y2, b[j].y2);
				b[j--] = b[--n];
				changed = true;
			}
	}
	return n;
}

/* Masks frame f with the n boxes of r->work and sends it on. */
static bool
emit(struct vrun *r, long long f, size_t n)
{
	uint8_t *p = r->frames[f % r->ring];
	struct face_image *img;
	char why[256];
	bool ok = true;

	n = merge(r->work, n);
	if (n > 0) {
		if ((img = face_frame_wrap(p, r->vi->width, r->vi->height,
					   (size_t)r->vi->width * 3)) == NULL)
			return failed(r, FACEAPI_V_ERROR, "", "out of memory");
		ok = face_frame_mask(img, r->work, n, r->p->method,
				     r->p->strength, r->p->padding, why,
				     sizeof(why));
		face_image_free(img);
		if (!ok)
			return failed(r, FACEAPI_V_ERROR, "masking: ", why);
	}
	if (!write_frame(r, p))
		return false;
	r->emitted++;
	return true;
}

/*
 * After a new detection d[2]: the frames whose boxes are now known, the
 * detection frame d[1] (with d[0], d[1], d[2]) and those between d[1]
 * and d[2].
 */
static bool
flush(struct vrun *r)
{
	const struct det *a = &r->d[1], *b = &r->d[2];
	size_t n = 0;

	if (a->idx < 0)
		return true;
	if (r->d[0].idx >= 0)
		add_all(r, &r->d[0], &n);
	add_all(r, a, &n);
	add_all(r, b, &n);
	if (!emit(r, a->idx, n))
		return false;
	for (long long f = a->idx + 1; f < b->idx; f++)
		if (!emit(r, f, between(r, a, b, f)))
			return false;
	return true;
}

/* The last frame, d[2], with d[1] and d[2]. */
static bool
flush_last(struct vrun *r)
{
	size_t n = 0;

	if (r->d[1].idx >= 0)
		add_all(r, &r->d[1], &n);
	add_all(r, &r->d[2], &n);
	return emit(r, r->d[2].idx, n);
}

/* Reads, detects and emits every frame; the last one is always a
 * detection frame. */
static bool
run_frames(struct vrun *r)
{
	int k = r->p->detect_every;
	/* The header's length was checked before the job was taken; the
	 * frames are what the file holds. */
	long long i = 0, max = (long long)(r->vi->fps * r->p->max_seconds) + 1;
	int got;
	char why[128];

	while ((got = read_frame(r, r->frames[i % r->ring])) == 1) {
		if (i >= max) {
			snprintf(why, sizeof(why),
				 "the video holds more than %lld s "
				 "(FACE_API_VIDEO_MAX_SECONDS), more than its "
				 "header says",
				 r->p->max_seconds);
			return failed(r, FACEAPI_V_FAILED, "", why);
		}
		if (i % k == 0 &&
		    (!detect(r, i, r->frames[i % r->ring]) || !flush(r)))
			return false;
		i++;
	}
	if (got < 0)
		return false;
	if (i == 0)
		return failed(r, FACEAPI_V_FAILED, "",
			      "no frame could be decoded");
	if ((i - 1) % k != 0 &&
	    (!detect(r, i - 1, r->frames[(i - 1) % r->ring]) || !flush(r)))
		return false;
	return flush_last(r);
}

/* Makes the FIFO path dir/name. */
static bool
fifo(struct vrun *r, const char *dir, const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", dir, name);
	unlink(path);
	if (mkfifo(path, 0600) != 0)
		return failed(r, FACEAPI_V_ERROR, "mkfifo: ", strerror(errno));
	return true;
}

/* Opens the encoder's FIFO for writing once the encoder opened it. */
static bool
open_writer(struct vrun *r, const char *path)
{
	while ((r->wfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
		struct timespec ts = {0, 10 * 1000 * 1000};

		if (errno != ENXIO)
			return failed(r, FACEAPI_V_ERROR,
				      "open: ", strerror(errno));
		if (!children_ok(r) || !progress(r, false))
			return false;
		if (r->enc.pid <= 0)
			return failed(r, FACEAPI_V_ERROR, "",
				      "the encoder ended before reading");
		nanosleep(&ts, NULL);
	}
	fcntl(r->wfd, F_SETPIPE_SZ, PIPE_BYTES);
	return true;
}

/* Starts the decoder (into dpath) and the encoder (from epath). */
static bool
start(struct vrun *r, const char *in, const char *out, const char *dpath,
      const char *epath)
{
	char size[32], why[256], secs[32];
	bool mp4 = strcmp(faceapi_video_container(r->vi), "mp4") == 0;
	char *dargv[] = {"ffmpeg",
			 "-nostdin",
			 "-hide_banner",
			 "-loglevel",
			 "error",
			 "-y",
			 "-format_whitelist",
			 FORMATS,
			 "-t",
			 secs,
			 "-i",
			 (char *)in,
			 "-map",
			 "0:v:0",
			 "-fps_mode",
			 "passthrough",
			 "-f",
			 "rawvideo",
			 "-pix_fmt",
			 "bgr24",
			 (char *)dpath,
			 NULL};
	char *eargv[48];
	/* The FIFOs exist: faceapi_video_mask() made them. */
	const struct child_path dpaths[] = {{in, CHILD_READ},
					    {dpath, CHILD_WRITE},
					    {NULL, 0}},
				epaths[] = {{in, CHILD_READ},
					    {epath, CHILD_READ},
					    {out, CHILD_CREATE},
					    {NULL, 0}};
	int n = 0;

	snprintf(size, sizeof(size), "%dx%d", r->vi->width, r->vi->height);
	/* More than allowed, enough to see that there is more: a second,
	 * or two frames' time when longer (under 2 fps: at 1 fps a second
	 * past the limit ends at the very frame run_frames() allows). */
	snprintf(secs, sizeof(secs), "%.3f",
		 (double)r->p->max_seconds + fmax(1.0, 2.0 / r->vi->fps));
	eargv[n++] = "ffmpeg";
	eargv[n++] = "-nostdin";
	eargv[n++] = "-hide_banner";
	eargv[n++] = "-loglevel";
	eargv[n++] = "error";
	eargv[n++] = "-y";
	eargv[n++] = "-f";
	eargv[n++] = "rawvideo";
	eargv[n++] = "-pix_fmt";
	eargv[n++] = "bgr24";
	eargv[n++] = "-s";
	eargv[n++] = size;
	eargv[n++] = "-r";
	eargv[n++] = (char *)r->vi->rate;
	eargv[n++] = "-i";
	eargv[n++] = (char *)epath;
	eargv[n++] = "-format_whitelist";
	eargv[n++] = FORMATS;
	eargv[n++] = "-i";
	eargv[n++] = (char *)in;
	eargv[n++] = "-map";
	eargv[n++] = "0:v:0";
	eargv[n++] = "-map";
	eargv[n++] = "1:a?";
	eargv[n++] = "-c:v";
	eargv[n++] = "libx264";
	eargv[n++] = "-preset";
	eargv[n++] = "veryfast";
	eargv[n++] = "-crf";
	eargv[n++] = "18";
	eargv[n++] = "-pix_fmt";
	eargv[n++] = "yuv420p";
	eargv[n++] = "-c:a";
	eargv[n++] = "copy";
	eargv[n++] = "-f";
	eargv[n++] = mp4 ? "mp4" : "matroska";
	if (mp4) {
		eargv[n++] = "-movflags";
		eargv[n++] = "+faststart";
	}
	eargv[n++] = (char *)out;
	eargv[n] = NULL;
	if (!child_start(&r->enc, eargv, epaths, 0, CHILD_ERR_MAX, why,
			 sizeof(why)) ||
	    !child_start(&r->dec, dargv, dpaths, 0, CHILD_ERR_MAX, why,
			 sizeof(why)))
		return failed(r, FACEAPI_V_ERROR, "ffmpeg: ", why);
	/* The read end opens at once; the decoder's open then succeeds. */
	if ((r->rfd = open(dpath, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return failed(r, FACEAPI_V_ERROR, "open: ", strerror(errno));
	fcntl(r->rfd, F_SETPIPE_SZ, PIPE_BYTES);
	return open_writer(r, epath);
}

/* Waits for the encoder to write the output after the last frame. */
static bool
finish(struct vrun *r)
{
	double until = clock_mono_s() + FINISH_MS / 1000.0;

	close(r->wfd);
	r->wfd = -1;
	while (!child_wait(&r->enc, POLL_MS)) {
		if (!progress(r, false))
			return false;
		if (clock_mono_s() > until)
			return failed(r, FACEAPI_V_ERROR, "",
				      "the encoder did not finish in time");
	}
	if (!(WIFEXITED(r->enc.status) && WEXITSTATUS(r->enc.status) == 0))
		return child_failed(r, &r->enc, "ffmpeg (encoder)");
	while (r->dec.pid > 0 && !child_wait(&r->dec, POLL_MS))
		if (!progress(r, false))
			return false;
	if (!(WIFEXITED(r->dec.status) && WEXITSTATUS(r->dec.status) == 0))
		return child_failed(r, &r->dec,
				    "the video could not be decoded");
	return progress(r, true);
}

static bool
alloc(struct vrun *r)
{
	r->cap = r->p->max_faces > 0 && r->p->max_faces < FACEAPI_VFACES_MAX
			 ? r->p->max_faces
			 : FACEAPI_VFACES_MAX;
	r->ring = r->p->detect_every + 1;
	if ((r->frames = calloc((size_t)r->ring, sizeof(*r->frames))) == NULL ||
	    (r->work = calloc(3 * r->cap, sizeof(*r->work))) == NULL)
		return false;
	for (int i = 0; i < r->ring; i++)
		if ((r->frames[i] = malloc(r->fsize)) == NULL)
			return false;
	for (int i = 0; i < 3; i++) {
		r->d[i].idx = -1;
		if ((r->d[i].b = calloc(r->cap, sizeof(*r->d[i].b))) == NULL)
			return false;
	}
	return true;
}

enum faceapi_vend
faceapi_video_mask(struct face_model *m, const char *in,
		   const struct faceapi_vinfo *vi, const char *out,
		   const char *dir, const struct faceapi_vmask *p,
		   faceapi_vprogress cb, void *arg, struct faceapi_vstats *st,
		   char *detail, size_t dlen)
{
	char dpath[PATH_MAX], epath[PATH_MAX];
	struct vrun r;

	memset(&r, 0, sizeof(r));
	memset(st, 0, sizeof(*st));
	dpath[0] = epath[0] = '\0';
	r.m = m;
	r.vi = vi;
	r.p = p;
	r.rfd = r.wfd = -1;
	r.st = st;
	r.cb = cb;
	r.arg = arg;
	r.detail = detail;
	r.dlen = dlen;
	r.start = r.last_cb = clock_mono_s();
	r.dec.out_fd = r.dec.err_fd = r.enc.out_fd = r.enc.err_fd = -1;
	r.dec.pidfd = r.enc.pidfd = -1;
	detail[0] = '\0';
	if (p->detect_every < 1 || p->max_seconds < 1 || vi->width <= 0 ||
	    vi->height <= 0) {
		failed(&r, FACEAPI_V_ERROR, "", "bad arguments");
		goto out;
	}
	r.fsize = (size_t)vi->width * (size_t)vi->height * 3;
	if (!alloc(&r)) {
		failed(&r, FACEAPI_V_ERROR, "", "out of memory");
		goto out;
	}
	if (fifo(&r, dir, "decoded.fifo", dpath, sizeof(dpath)) &&
	    fifo(&r, dir, "masked.fifo", epath, sizeof(epath)) &&
	    start(&r, in, out, dpath, epath) && run_frames(&r))
		finish(&r);
out:
	if (r.rfd >= 0)
		close(r.rfd);
	if (r.wfd >= 0)
		close(r.wfd);
	child_free(&r.dec);
	child_free(&r.enc);
	if (dpath[0] != '\0')
		unlink(dpath);
	if (epath[0] != '\0')
		unlink(epath);
	if (r.frames != NULL)
		for (int i = 0; i < r.ring; i++)
			free(r.frames[i]);
	free(r.frames);
	free(r.work);
	for (int i = 0; i < 3; i++)
		free(r.d[i].b);
	st->frames = r.emitted;
	st->fps = clock_mono_s() > r.start
			  ? (double)r.emitted / (clock_mono_s() - r.start)
			  : 0;
	return r.end;
}
