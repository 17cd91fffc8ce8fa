/* SPDX-License-Identifier: MIT */
/*
 * xmhub-transcode - the transcode job runner.
 *
 *   xmhub-transcode --drain [--worker-id ID]   run jobs until none is left
 *   xmhub-transcode --loop [--worker-id ID]    drain, sleep, again; SIGTERM
 *                                              stops it cleanly
 *
 * Each job: the original is fetched from the store to a temporary file,
 * probed (lib/core/probe), transcoded by ffmpeg (lib/core/child:
 * posix_spawn, an argument vector, a minimal environment, killed if the
 * runner dies) while the job's heartbeat is renewed every few seconds,
 * and the output put in the store before the job is completed.  A
 * heartbeat that finds the job no longer ours (cancelled, deleted, taken
 * over) kills ffmpeg.  Then the spectrogram and waveform peaks of the
 * recording are made (lib/core/spectro) and stored.  The temporary directories
 * of runners that died are removed when a runner starts.  See
 * doc/transcoding.md.  The rest of the main: lib/domain/jobmain.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/child.h"
#include "core/clock.h"
#include "core/conf.h"
#include "core/db.h"
#include "domain/jobmain.h"
#include "domain/jobs.h"
#include "core/probe.h"
#include "core/runner.h"
#include "core/spectro.h"
#include "store/storage.h"
#include "core/log.h"

#define LOOP_SLEEP_S 3	    /* --loop: pause between drains */
#define FFMPEG_ERR_MAX 8192 /* bytes of ffmpeg's stderr kept */
#define FFMPEG_BASE_S 120   /* ffmpeg's deadline: this + the input's length */
#define KILL_GRACE_MS 2000  /* SIGTERM to SIGKILL */
#define TMP_MAX_LEN 1024    /* bytes of $TMPDIR */
/* A run's temporary directory in $TMPDIR: this and mkdtemp's 6. */
#define TMP_PREFIX "xmhub-transcode-run-"
/* The stored spectrogram of a whole recording (lib/core/spectro). */
#define VISUAL_WIDTH 1024
#define VISUAL_HEIGHT 257
#define TMP_RANDOM 6

/* The runner's own state; its connection, store and worker id are
 * m's (lib/domain/jobmain). */
struct runner {
	struct jobmain *m;
	const char *tmp;
	int heartbeat_ms;
};

/* A child's raw words (ffmpeg's stderr, ffprobe's reason) into the
 * runner's log only, line by line (lib/core/log escapes what is not
 * printable): error_message gets child_reason() of them. */
static void
log_raw(const struct jobs_claim *job, const char *who, const char *text)
{
	while (*text != '\0') {
		size_t n = strcspn(text, "\r\n");

		if (n > 0)
			log_warn("job %s %s: %.*s", job->id, who, (int)n, text);
		text += n;
		text += strspn(text, "\r\n");
	}
}

/* The runner is stopping: the job goes back to the queue uncounted. */
static enum jobmain_step
give_back(struct runner *r, const struct jobs_claim *job)
{
	enum jobs_outcome o;

	return jobs_release(r->m->db, job, &o) == DB_OK ? JOBMAIN_STOP
							: JOBMAIN_DB;
}

/* Fails the run with a message; JOBMAIN_DB when that could not be recorded. */
static enum jobmain_step
fail(struct runner *r, const struct jobs_claim *job, const char *msg)
{
	enum jobs_outcome o;

	log_error("job %s attempt %d failed: %s", job->id, job->attempts, msg);
	return jobs_fail(r->m->db, job, msg, &o) == DB_OK ? JOBMAIN_DONE
							  : JOBMAIN_DB;
}

/* The input is refused (jobs_input_ok()): no run can change that, so
 * the job fails now, its attempts left unused. */
static enum jobmain_step
refuse(struct runner *r, const struct jobs_claim *job, const char *msg)
{
	enum jobs_outcome o;

	log_error("job %s attempt %d refused: %s", job->id, job->attempts, msg);
	return jobs_refuse(r->m->db, job, msg, &o) == DB_OK ? JOBMAIN_DONE
							    : JOBMAIN_DB;
}

/* The run could not go on for a reason that is not the input's (the
 * store, temporary space): the job waits, its attempt not counted. */
static enum jobmain_step
defer(struct runner *r, const struct jobs_claim *job, const char *msg)
{
	enum jobs_outcome o;

	log_error("job %s attempt %d deferred: %s", job->id, job->attempts,
		  msg);
	return jobs_defer(r->m->db, job, msg, &o) == DB_OK ? JOBMAIN_DONE
							   : JOBMAIN_DB;
}

/* Puts the file at path into the store as key. */
static bool
put_file(struct store *st, const char *path, const char *key, const char *type,
	 uint64_t *size, char *detail, size_t dlen)
{
	char chunk[65536];
	struct store_put *w;
	ssize_t n;
	int fd;

	*size = 0;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(detail, dlen, "the output can not be read: %s",
			 strerror(errno));
		return false;
	}
	if ((w = store_put_begin(st, key, type, detail, dlen)) == NULL) {
		close(fd);
		return false;
	}
	while ((n = read(fd, chunk, sizeof(chunk))) > 0 ||
	       (n < 0 && errno == EINTR)) {
		if (n > 0 && store_put_write(w, chunk, (size_t)n) != STORE_OK)
			break;
		*size += n > 0 ? (uint64_t)n : 0;
	}
	close(fd);
	if (n != 0) {
		snprintf(detail, dlen, "the output could not be stored");
		store_put_abort(w);
		return false;
	}
	return store_put_commit(w, detail, dlen) == STORE_OK;
}

/*
 * Runs ffmpeg on in (in_ms long) into out for job, renewing the
 * heartbeat, for at most FFMPEG_BASE_S + the input's length (at most
 * XMHUB_TRANSCODE_MAX_SECONDS).  *end is
 * JOBMAIN_DONE with *lost set when the job stopped being ours, JOBMAIN_STOP
 * when the runner is stopping, JOBMAIN_DB on database failure; ffmpeg's
 * unsuccessful end (or its deadline) is JOBMAIN_DONE with false returned and
 * msg filled: a reason fit for clients, the raw stderr going to the log.
 */
static bool
transcode(struct runner *r, const struct jobs_claim *job, const char *in,
	  const char *out, int64_t in_ms, bool *lost, enum jobmain_step *end,
	  char *msg, size_t mlen)
{
	const struct jobs_target *t = &job->target;
	bool mp4 = strcmp(t->container, "mp4") == 0;
	char rate[24], detail[256], reason[CHILD_REASON_MAX], secs[24],
		bytes[24];
	char *argv[40];
	/* MP4's +faststart reads the output back. */
	const struct child_path paths[] = {
		{in, CHILD_READ},
		{out, CHILD_CREATE},
		{NULL, 0},
	};
	int n = 0;
	/* The header's length may lie: what ffmpeg decodes and writes, and
	 * so its deadline, stop at the setting whatever it claims. */
	long long max_s = jobs_max_seconds(), until,
		  limit = FFMPEG_BASE_S +
			  (in_ms / 1000 < max_s ? in_ms / 1000 : max_s);
	struct child ch;
	bool ok = false, late = false;

	*lost = false;
	*end = JOBMAIN_DONE;
	snprintf(msg, mlen, "ffmpeg was stopped");
	argv[n++] = "ffmpeg";
	argv[n++] = "-nostdin";
	argv[n++] = "-hide_banner";
	argv[n++] = "-loglevel";
	argv[n++] = "error";
	argv[n++] = "-y";
	argv[n++] = "-format_whitelist";
	argv[n++] = PROBE_FORMATS;
	argv[n++] = "-i";
	argv[n++] = (char *)in;
	argv[n++] = "-map";
	argv[n++] = "0:a:0";
	argv[n++] = "-vn";
	argv[n++] = "-c:a";
	argv[n++] = mp4 ? "aac" : "libopus";
	argv[n++] = "-b:a";
	argv[n++] = (char *)t->bitrate;
	if (t->sample_rate > 0) {
		snprintf(rate, sizeof(rate), "%ld", t->sample_rate);
		argv[n++] = "-ar";
		argv[n++] = rate;
	}
	snprintf(secs, sizeof(secs), "%lld", max_s);
	snprintf(bytes, sizeof(bytes), "%llu", jobs_max_output_bytes(t));
	argv[n++] = "-t";
	argv[n++] = secs;
	argv[n++] = "-fs";
	argv[n++] = bytes;
	argv[n++] = "-f";
	argv[n++] = mp4 ? "mp4" : "webm";
	if (mp4) {
		argv[n++] = "-movflags";
		argv[n++] = "+faststart";
	}
	argv[n++] = (char *)out;
	argv[n] = NULL;
	if (!child_start(&ch, argv, paths, 0, FFMPEG_ERR_MAX, detail,
			 sizeof(detail))) {
		snprintf(msg, mlen, "%s", detail);
		return false;
	}
	until = clock_mono_ms() + limit * 1000;
	while (!child_wait(&ch, r->heartbeat_ms)) {
		enum jobs_outcome o;

		if (runner_stopping()) {
			*end = JOBMAIN_STOP;
			break;
		}
		if (clock_mono_ms() >= until) {
			late = true;
			break;
		}
		if (jobs_heartbeat(r->m->db, job, &o) != DB_OK) {
			*end = JOBMAIN_DB;
			break;
		}
		if (o == JOBS_LOST) {
			*lost = true;
			break;
		}
	}
	if (ch.pid > 0) {
		child_kill(&ch, KILL_GRACE_MS);
		if (late) {
			log_raw(job, "ffmpeg", (const char *)ch.err.p);
			snprintf(msg, mlen,
				 "ffmpeg did not finish within %lld s", limit);
		}
		goto out;
	}
	if (WIFEXITED(ch.status) && WEXITSTATUS(ch.status) == 0) {
		ok = true;
		goto out;
	}
	/* ch.err is NUL-terminated (lib/core/child). */
	log_raw(job, "ffmpeg", (const char *)ch.err.p);
	child_reason((const char *)ch.err.p, reason, sizeof(reason));
	if (reason[0] == '\0')
		child_status(ch.status, reason, sizeof(reason));
	snprintf(msg, mlen, "ffmpeg: %s", reason);
out:
	child_free(&ch);
	return ok;
}

/*
 * The spectrogram and waveform peaks of the whole recording in (ms long,
 * copied to dir), stored beside the transcode as
 * {facility}/uploads/{upload}/spectrogram.png and .../peaks unless an
 * earlier transcode of the upload made them (they depend on the original
 * only).  Extras: a failure is logged and leaves them absent (a
 * retranscode tries again), never fails the transcode.  The heartbeat is
 * renewed first and libsox gets at most half the lease, so the job can
 * not be taken over meanwhile.
 */
static void
visuals(struct runner *r, const struct jobs_claim *job, const char *in,
	const char *dir, int64_t ms)
{
	struct spectro_req rq = {0, ms, VISUAL_WIDTH, VISUAL_HEIGHT,
				 SPECTRO_LINEAR};
	char png_key[600], peaks_key[600], peaks[PATH_MAX], detail[512];
	enum jobs_outcome o;
	uint64_t size;
	struct buf png;

	snprintf(png_key, sizeof(png_key), "%s/uploads/%s/spectrogram.png",
		 job->facility_id, job->upload_id);
	snprintf(peaks_key, sizeof(peaks_key), "%s/uploads/%s/peaks",
		 job->facility_id, job->upload_id);
	snprintf(peaks, sizeof(peaks), "%s/peaks", dir);
	buf_init(&png, 0);
	if (store_size(r->m->st, png_key, &size, detail, sizeof(detail)) ==
		    STORE_OK &&
	    store_size(r->m->st, peaks_key, &size, detail, sizeof(detail)) ==
		    STORE_OK)
		goto out;
	if (jobs_heartbeat(r->m->db, job, &o) != DB_OK || o == JOBS_LOST)
		goto out;
	if (!spectro_render(in, &rq, peaks, (int)(jobs_lease() * 1000 / 2),
			    &png, detail, sizeof(detail))) {
		log_raw(job, "spectrogram", detail);
		goto out;
	}
	if (!put_file(r->m->st, peaks, peaks_key, "application/octet-stream",
		      &size, detail, sizeof(detail)) ||
	    store_put_buf(r->m->st, png_key, png.p, png.len, "image/png",
			  detail, sizeof(detail)) != STORE_OK)
		log_raw(job, "spectrogram", detail);
out:
	buf_free(&png);
}

/* The tolerance of the decoded length against the header's. */
static bool
truncated(int64_t header_ms, int64_t decoded_ms)
{
	int64_t slack = header_ms / 50 > 250 ? header_ms / 50 : 250;

	return decoded_ms + slack < header_ms;
}

/* Everything after the claim, with the temporary directory dir. */
static enum jobmain_step
run_in(struct runner *r, const struct jobs_claim *job, const char *dir)
{
	bool mp4 = strcmp(job->target.container, "mp4") == 0;
	char in[PATH_MAX], out[PATH_MAX], key[600], okey[600];
	char detail[512], msg[JOBS_ERROR_MAX + 64], reason[CHILD_REASON_MAX];
	struct probe_info pin, pout;
	enum jobs_outcome o;
	enum jobmain_step end;
	uint64_t size;
	bool lost;

	snprintf(in, sizeof(in), "%s/input", dir);
	snprintf(out, sizeof(out), "%s/output.%s", dir, mp4 ? "m4a" : "webm");
	snprintf(key, sizeof(key), "%s/uploads/%s/original", job->facility_id,
		 job->upload_id);
	snprintf(okey, sizeof(okey), "%s/uploads/%s/%s.%s", job->facility_id,
		 job->upload_id, job->id, mp4 ? "m4a" : "webm");
	switch (store_get_file(r->m->st, key, in, detail, sizeof(detail))) {
	case STORE_OK:
		break;
	case STORE_NOT_FOUND:
		return fail(r, job,
			    "the original file is missing from the store");
	default:
		log_error("%s: %s", key, detail);
		return defer(r, job,
			     "the original could not be read from the store");
	}
	if (!probe_file(in, &pin, PROBE_TIMEOUT_MS, detail, sizeof(detail))) {
		if (runner_stopping())
			return give_back(r, job);
		log_raw(job, "probe", detail);
		child_reason(detail, reason, sizeof(reason));
		snprintf(msg, sizeof(msg), "not a readable audio file: %s",
			 reason);
		return fail(r, job, msg);
	}
	if (!jobs_input_ok(&pin, msg, sizeof(msg)))
		return refuse(r, job, msg);
	if (!transcode(r, job, in, out, pin.duration_ms, &lost, &end, msg,
		       sizeof(msg))) {
		if (end == JOBMAIN_STOP)
			return give_back(r, job);
		if (end != JOBMAIN_DONE || lost)
			return end;
		return fail(r, job, msg);
	}
	if (!probe_ffprobe(out, &pout, PROBE_TIMEOUT_MS, detail,
			   sizeof(detail))) {
		if (runner_stopping())
			return give_back(r, job);
		log_raw(job, "probe", detail);
		child_reason(detail, reason, sizeof(reason));
		snprintf(msg, sizeof(msg), "the output can not be read: %s",
			 reason);
		return fail(r, job, msg);
	}
	/* ffmpeg decodes what there is of a cut file without complaint. */
	if (truncated(pin.duration_ms, pout.duration_ms)) {
		snprintf(msg, sizeof(msg),
			 "the file is truncated or damaged: its header says "
			 "%lld ms, %lld ms of audio could be decoded",
			 (long long)pin.duration_ms,
			 (long long)pout.duration_ms);
		return fail(r, job, msg);
	}
	if (!put_file(r->m->st, out, okey, mp4 ? "audio/mp4" : "audio/webm",
		      &size, detail, sizeof(detail))) {
		log_error("%s: %s", okey, detail);
		return defer(r, job, "the output could not be stored");
	}
	/* A stop cuts this short, but the transcode is done: completed. */
	visuals(r, job, in, dir, pin.duration_ms);
	if (jobs_complete(r->m->db, job, &pin, size, (uint64_t)pout.duration_ms,
			  &o) != DB_OK)
		return JOBMAIN_DB;
	/* Not ours any more (cancelled, deleted): the output is nobody's. */
	if (o == JOBS_LOST)
		store_delete(r->m->st, okey, detail, sizeof(detail));
	return JOBMAIN_DONE;
}

/* Unlinks what the directory open as fd holds (files: a run makes no
 * subdirectory); false when something stays. */
static bool
clear_dir(int fd)
{
	struct dirent *e;
	bool ok = true;
	DIR *d;
	int dfd;

	/* fdopendir() takes its descriptor: a second one, of the same. */
	if ((dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return false;
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return false;
	}
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 &&
		    strcmp(e->d_name, "..") != 0 &&
		    unlinkat(fd, e->d_name, 0) != 0)
			ok = false;
	closedir(d);
	return ok;
}

/*
 * Makes the run's temporary directory (TMP_PREFIX in tmp) into dir and
 * locks it (flock) for as long as the returned descriptor is open, so
 * that sweep() knows it is in use; -1 on failure, errno set.  A sweep
 * may remove it between mkdtemp and the lock: then it is made again.
 */
static int
make_dir(const char *tmp, char *dir, size_t len)
{
	for (int i = 0; i < 3; i++) {
		struct stat a, b;
		int fd;

		snprintf(dir, len, "%s/" TMP_PREFIX "XXXXXX", tmp);
		if (mkdtemp(dir) == NULL)
			return -1;
		if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			continue;
		if (flock(fd, LOCK_EX) == 0 && fstat(fd, &a) == 0 &&
		    stat(dir, &b) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			return fd;
		close(fd);
	}
	errno = EAGAIN;
	return -1;
}

/* Removes the run's directory dir, open and locked as fd: its files,
 * itself, then the lock. */
static void
remove_dir(int fd, const char *dir)
{
	if (!clear_dir(fd) || rmdir(dir) != 0)
		log_error("%s can not be removed: %s", dir, strerror(errno));
	close(fd);
}

/*
 * Removes what runners that died (SIGKILL, a crash) left in tmp: the
 * TMP_PREFIX directories of this user that no live runner holds locked
 * (a runner's lock goes with its process).  Their ffmpeg died with them
 * (lib/core/child).
 */
static void
sweep(const char *tmp)
{
	size_t pl = strlen(TMP_PREFIX);
	struct dirent *e;
	DIR *d;

	if ((d = opendir(tmp)) == NULL) {
		log_error("%s: %s", tmp, strerror(errno));
		return;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		int fd;

		if (strncmp(e->d_name, TMP_PREFIX, pl) != 0 ||
		    strlen(e->d_name) != pl + TMP_RANDOM ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) !=
			    0 ||
		    !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			continue;
		fd = openat(dirfd(d), e->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			if (clear_dir(fd) &&
			    unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) == 0)
				log_warn("removed %s/%s, left by a runner that "
					 "died",
					 tmp, e->d_name);
			else
				log_error("%s/%s can not be removed: %s", tmp,
					  e->d_name, strerror(errno));
		}
		close(fd);
	}
	closedir(d);
}

static enum jobmain_step
run(struct runner *r, const struct jobs_claim *job)
{
	char dir[TMP_MAX_LEN + 32];
	enum jobmain_step end;
	int lock;

	if ((lock = make_dir(r->tmp, dir, sizeof(dir))) < 0) {
		log_error("%s: %s", dir, strerror(errno));
		return defer(r, job, "no temporary space for the transcode");
	}
	end = run_in(r, job, dir);
	remove_dir(lock, dir);
	return end;
}

static bool
setup(struct jobmain *m)
{
	struct runner *r = m->arg;
	char detail[256];

	r->m = m;
	if (!jobs_init(detail, sizeof(detail))) {
		log_error("%s", detail);
		return false;
	}
	r->tmp = conf_str("TMPDIR", "/tmp");
	if (strlen(r->tmp) > TMP_MAX_LEN) {
		log_error("TMPDIR is too long");
		return false;
	}
	sweep(r->tmp);
	/* Beat well inside the lease, at most every 2 s. */
	r->heartbeat_ms = jobs_lease() * 1000 / 3 < 2000
				  ? (int)(jobs_lease() * 1000 / 3)
				  : 2000;
	return true;
}

/* Claims a job and runs it. */
static enum jobmain_step
step(struct jobmain *m)
{
	struct jobs_claim job;
	bool got;

	if (jobs_claim(m->db, m->worker, &job, &got) != DB_OK)
		return JOBMAIN_DB;
	if (!got)
		return JOBMAIN_IDLE;
	return run(m->arg, &job);
}

int
main(int argc, char **argv)
{
	static const struct jobmain_def def = {
		.name = "xmhub-transcode",
		.interval = LOOP_SLEEP_S,
		.worker_max = JOBS_WORKER_MAX,
		.store = true,
		.setup = setup,
		.step = step,
	};
	struct runner r = {0};

	/* The probe's child (lib/core/probe.h): before any setting is read,
	 * so that what parses the upload holds no secret. */
	if (argc == 3 && strcmp(argv[1], PROBE_SOX_ARG) == 0)
		return probe_sox_main(argv[2]);
	if (argc > 1 && strcmp(argv[1], SPECTRO_ARG) == 0)
		return spectro_main(argc, argv);
	return jobmain_run(&def, &r, argc, argv);
}
