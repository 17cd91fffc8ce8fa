/* SPDX-License-Identifier: MIT */
/*
 * xmhub-face-video - the runner of the face service's video
 * anonymization jobs (doc/face-video.md).
 *
 *   xmhub-face-video --drain [--worker-id ID]   run jobs until none is left
 *   xmhub-face-video --loop [--worker-id ID]    drain, sleep, again; SIGTERM
 *                                               stops it cleanly
 *
 * Each job: the input is fetched from the store into a private
 * temporary directory, probed, decoded, masked and encoded
 * (lib/face/service/faceapi_vrun: two ffmpegs through FIFOs, the model
 * in this process) while the job's progress renews its lease; the output
 * goes to the store before the job is completed.  A progress report that
 * finds the job no longer ours (cancelled, taken over) stops the run.
 * Settings are the face service's (FACE_API_*, doc/face.md) and
 * FACE_API_VIDEO_* (doc/face-video.md).  The rest of the main:
 * lib/domain/jobmain.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/conf.h"
#include "core/db.h"
#include "core/runner.h"
#include "domain/jobmain.h"
#include "face/service/faceapi_conf.h"
#include "face/service/faceapi_vqueue.h"
#include "face/service/faceapi_vrun.h"
#include "store/storage.h"
#include "core/log.h"

#define LOOP_SLEEP_S 2 /* --loop: pause between drains */
#define PROBE_MS 60000
#define TMP_MAX_LEN 1024 /* bytes of $TMPDIR */
#define DIR_MAX (TMP_MAX_LEN + 64)
#define FILE_MAX (DIR_MAX + 32)

/* The runner's own state; its connection, store and worker id are
 * m's (lib/domain/jobmain). */
struct vrunner {
	struct jobmain *m;
	struct faceapi_conf conf;
	struct faceapi_vconf vc;
	struct face_model *model;
	const char *tmp;
	bool no_model; /* the last attempt to load it failed (and said so) */
};

/* The progress callback's state. */
struct prog {
	struct vrunner *r;
	const struct faceapi_vclaim *job;
	bool lost, db_failed;
};

static bool
on_progress(void *arg, long long done, double fps)
{
	struct prog *p = arg;

	if (runner_stopping())
		return false;
	if (faceapi_vjob_progress(p->r->m->db, p->job, done, fps, -1,
				  &p->lost) != DB_OK) {
		p->db_failed = true;
		return false;
	}
	return !p->lost;
}

/* The unmasked input is removed as soon as the job is over: it shows
 * the faces the job exists to hide. */
static void
drop_input(struct vrunner *r, const struct faceapi_vclaim *job)
{
	char detail[256];

	if (store_delete(r->m->st, job->input_key, detail, sizeof(detail)) !=
	    STORE_OK)
		log_error("%s: %s", job->input_key, detail);
}

static enum jobmain_step
fail(struct vrunner *r, const struct faceapi_vclaim *job, const char *msg,
     bool final)
{
	bool lost;

	log_error("job %s attempt %d failed: %s", job->id, job->attempts, msg);
	if (faceapi_vjob_fail(r->m->db, &r->vc, job, msg, final, &lost) !=
	    DB_OK)
		return JOBMAIN_DB;
	if (final && !lost)
		drop_input(r, job);
	return JOBMAIN_DONE;
}

/* Everything after the claim, in the directory dir. */
static enum jobmain_step
run_in(struct vrunner *r, const struct faceapi_vclaim *job, const char *dir,
       const char *in, char *out, size_t olen)
{
	struct faceapi_vmask m = {(float)job->confidence, (float)job->nms,
				  (size_t)job->max_faces, job->method,
				  job->strength,	  job->padding,
				  r->vc.detect_every,	  r->vc.max_seconds};
	struct prog pr = {r, job, false, false};
	char detail[512], key[128], msg[FACEAPI_VERROR_MAX];
	struct faceapi_vstats stats;
	struct faceapi_vinfo vi;
	const char *container;
	enum faceapi_vend end;
	uint64_t size;
	bool lost;

	switch (store_get_file(r->m->st, job->input_key, in, detail,
			       sizeof(detail))) {
	case STORE_OK:
		break;
	case STORE_NOT_FOUND:
		return fail(r, job, "the input video is missing from the store",
			    true);
	default:
		log_error("%s: %s", job->input_key, detail);
		return fail(r, job,
			    "the input could not be read from the store",
			    false);
	}
	if (!faceapi_video_probe(in, &vi, PROBE_MS, detail, sizeof(detail)))
		return runner_stopping() ? JOBMAIN_STOP
					 : fail(r, job, detail, true);
	if (faceapi_vjob_progress(r->m->db, job, 0, 0, vi.frames, &lost) !=
	    DB_OK)
		return JOBMAIN_DB;
	if (lost)
		return JOBMAIN_DONE;
	container = faceapi_video_container(&vi);
	snprintf(out, olen, "%s/output.%s", dir, container);
	end = faceapi_video_mask(r->model, in, &vi, out, dir, &m, on_progress,
				 &pr, &stats, detail, sizeof(detail));
	switch (end) {
	case FACEAPI_V_OK:
		break;
	case FACEAPI_V_FAILED:
		return fail(r, job, detail, true);
	case FACEAPI_V_ERROR:
		return fail(r, job, detail, false);
	default:
		if (pr.db_failed)
			return JOBMAIN_DB;
		return pr.lost ? JOBMAIN_DONE : JOBMAIN_STOP;
	}
	/* ffmpeg decodes what there is of a damaged file without failing. */
	if (stats.frames * 10 < vi.frames * 9) {
		snprintf(msg, sizeof(msg),
			 "the video is truncated or damaged: its header says "
			 "%lld frames, %lld could be decoded",
			 vi.frames, stats.frames);
		return fail(r, job, msg, true);
	}
	snprintf(key, sizeof(key), "face/videos/%s/output", job->id);
	if (!faceapi_vput_file(r->m->st, out, key,
			       faceapi_video_mime(container), &size, detail,
			       sizeof(detail))) {
		log_error("%s: %s", key, detail);
		return fail(r, job, "the output could not be stored", false);
	}
	if (faceapi_vjob_complete(r->m->db, job, face_model_name(r->model), key,
				  faceapi_video_mime(container),
				  (long long)size, stats.frames, stats.fps,
				  stats.detected, &lost) != DB_OK)
		return JOBMAIN_DB;
	if (lost)
		store_delete(r->m->st, key, detail, sizeof(detail));
	else
		drop_input(r, job);
	return JOBMAIN_DONE;
}

/* Removes the run's directory and what a run leaves in it. */
static void
remove_dir(const char *dir)
{
	static const char *const names[] = {"input",	   "output.mp4",
					    "output.mkv",  "decoded.fifo",
					    "masked.fifo", NULL};
	char path[FILE_MAX];

	for (size_t i = 0; names[i] != NULL; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	if (rmdir(dir) != 0)
		log_error("%s can not be removed: %s", dir, strerror(errno));
}

static enum jobmain_step
run(struct vrunner *r, const struct faceapi_vclaim *job)
{
	char dir[DIR_MAX], in[FILE_MAX], out[FILE_MAX];
	enum jobmain_step end;
	bool lost;

	snprintf(dir, sizeof(dir), "%s/xmhub-face-video-run-XXXXXX", r->tmp);
	if (mkdtemp(dir) == NULL) {
		log_error("%s: %s", dir, strerror(errno));
		return fail(r, job, "no temporary space for the video", false);
	}
	snprintf(in, sizeof(in), "%s/input", dir);
	end = run_in(r, job, dir, in, out, sizeof(out));
	remove_dir(dir);
	if (end == JOBMAIN_STOP &&
	    faceapi_vjob_release(r->m->db, job, &lost) != DB_OK)
		return JOBMAIN_DB;
	return end;
}

/* Loads the model unless it is; false (said once) while there is none. */
static bool
model_ready(struct vrunner *r)
{
	char note[256] = "", detail[256];

	if (r->model == NULL &&
	    (r->model = face_model_open(r->conf.model_dir, r->conf.model,
					r->conf.det_size, r->conf.threads, note,
					sizeof(note), detail,
					sizeof(detail))) == NULL) {
		/* Said once: a loop waits for the model without filling its
		 * log. */
		if (!r->no_model)
			log_warn("no model in %s: %s; jobs wait until there is "
				 "one",
				 r->conf.model_dir, detail);
		r->no_model = true;
		return false;
	}
	if (r->no_model || note[0] != '\0')
		log_info("model %s%s%s", face_model_name(r->model),
			 note[0] != '\0' ? ": " : "", note);
	r->no_model = false;
	return true;
}

static bool
setup(struct jobmain *m)
{
	struct vrunner *r = m->arg;
	char detail[512];

	r->m = m;
	if (!faceapi_conf_load(&r->conf, detail, sizeof(detail)) ||
	    !faceapi_vconf_load(&r->vc, detail, sizeof(detail))) {
		log_error("%s", detail);
		return false;
	}
	m->db_url = r->conf.database_url;
	m->db_setting = "FACE_API_DATABASE_URL (or XMHUB_DATABASE_URL)";
	r->tmp = conf_str("TMPDIR", "/tmp");
	if (strlen(r->tmp) > TMP_MAX_LEN) {
		log_error("TMPDIR is too long");
		return false;
	}
	return true;
}

/* Claims a job and runs it, once there is a model. */
static enum jobmain_step
step(struct jobmain *m)
{
	struct vrunner *r = m->arg;
	struct faceapi_vclaim job;
	bool got;

	if (!model_ready(r))
		return JOBMAIN_WAIT;
	if (faceapi_vjob_claim(m->db, &r->vc, m->worker, &job, &got) != DB_OK)
		return JOBMAIN_DB;
	if (!got)
		return JOBMAIN_IDLE;
	return run(r, &job);
}

int
main(int argc, char **argv)
{
	static const struct jobmain_def def = {
		.name = "xmhub-face-video",
		.interval = LOOP_SLEEP_S,
		.worker_max = FACEAPI_VWORKER_MAX,
		.store = true,
		.setup = setup,
		.step = step,
	};
	struct vrunner r;
	int rc;

	memset(&r, 0, sizeof(r));
	rc = jobmain_run(&def, &r, argc, argv);
	face_model_close(r.model);
	return rc;
}
