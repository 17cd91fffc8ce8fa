/* SPDX-License-Identifier: MIT */
/*
 * faceapi_worker.c - the credential-free image worker (see
 * faceapi_worker.h): the parent's side, the protocol, the sandbox and
 * the worker's loop.
 */
#define _GNU_SOURCE /* posix_spawn_file_actions_addclosefrom_np */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/fdio.h"
#include "core/sandbox.h"
#include "face/service/faceapi_worker.h"
#include "core/log.h"

extern char **environ;

#define DETAIL_MAX 256	    /* bytes of a step's failure reason */
#define START_TIMEOUT_S 120 /* loading and warming a model up */
#define BOXES_MAX 100000    /* boxes a worker allocates for one detect */
#define GRACE_MS 200	    /* a worker that closed its socket may exit */

/* Address space a worker may take beyond what it has after loading its
 * model: decoding, the copies masking and encoding make, and the
 * per-thread arenas and stacks of OpenCV's threads (reserved, mostly
 * untouched). */
#define AS_BASE (2ULL << 30)
#define AS_PER_PIXEL 32

/* What the parent asks. */
enum op { OP_CONFIG = 1, OP_DECODE, OP_DETECT, OP_MASK, OP_ENCODE };

/* What the worker answers. */
enum { ST_OK = 1, ST_FAILED };

/* Every message: a header and len bytes. */
struct hdr {
	uint32_t code; /* enum op, or ST_* in an answer */
	uint32_t pad;
	uint64_t len;
};

struct wconfig {
	char model_dir[FACEAPI_PATH_MAX];
	char model[64];
	int32_t det_size, threads;
	uint64_t max_pixels;
};

struct whello {
	struct faceapi_worker_model m;
	char note[256];
};

struct wdetect {
	float conf, nms;
	uint64_t max_faces, cap;
	uint32_t keep;
};

struct wdetected {
	struct face_timings t;
	uint64_t n;
};

struct wmask {
	int32_t method, strength;
	double padding;
	uint64_t n;
};

struct wencode {
	int32_t fmt, quality;
};

struct faceapi_worker {
	pid_t pid; /* 0: none running */
	int fd;
	bool wanted; /* a model loaded at open: restart when lost */
	int timeout_ms;
	size_t out_max; /* bytes of an encoded image accepted */
	struct wconfig cfg;
	struct faceapi_worker_model model;
	char **env; /* the worker's environment, NULL-terminated */
};

/* The variables a worker inherits: tuning only, never a setting of the
 * service (some of which are credentials). */
static bool
env_passed(const char *s)
{
	static const char *const prefixes[] = {
		"ASAN_OPTIONS=", "LSAN_OPTIONS=", "UBSAN_OPTIONS=", "OPENCV_",
		"OMP_"};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++)
		if (strncmp(s, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

static void
env_free(char **env)
{
	for (size_t i = 0; env != NULL && env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

static char **
env_make(void)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n] != NULL)
		n++;
	if ((env = calloc(n + 1, sizeof(*env))) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (env_passed(environ[i]) &&
		    (env[k++] = strdup(environ[i])) == NULL) {
			env_free(env);
			return NULL;
		}
	return env;
}

/* Copies a reason the worker gave, printable ASCII only (it ends up in
 * a JSON answer and a log line). */
static void
copy_detail(char *detail, size_t dlen, const uint8_t *p, size_t n)
{
	size_t i;

	if (detail == NULL || dlen == 0)
		return;
	for (i = 0; i < n && i + 1 < dlen && p[i] != '\0'; i++)
		detail[i] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
	detail[i] = '\0';
}

/* Kills (unless it has ended within grace_ms) and reaps the worker,
 * saying how it ended in detail. */
static void
reap(struct faceapi_worker *w, int grace_ms, const char *why, char *detail,
     size_t dlen)
{
	int st = 0;
	pid_t r = 0;

	if (w->pid == 0)
		return;
	for (int i = 0; i < grace_ms && r == 0; i++) {
		r = waitpid(w->pid, &st, WNOHANG);
		if (r == 0)
			usleep(1000);
	}
	if (r == 0) {
		kill(w->pid, SIGKILL);
		r = waitpid(w->pid, &st, 0);
	}
	if (r == w->pid && WIFSIGNALED(st) && grace_ms > 0)
		snprintf(detail, dlen, "%s (killed by signal %d)", why,
			 WTERMSIG(st));
	else if (r == w->pid && WIFEXITED(st) && grace_ms > 0)
		snprintf(detail, dlen, "%s (exit status %d)", why,
			 WEXITSTATUS(st));
	else
		snprintf(detail, dlen, "%s", why);
	log_error("face: image worker %ld: %s", (long)w->pid, detail);
	close(w->fd);
	w->fd = -1;
	w->pid = 0;
}

static const char why_timeout[] = "the image worker took too long";

/* Sends (out) or receives n bytes by the deadline; false with a reason
 * in *why (why_timeout when the deadline passed). */
static bool
io(struct faceapi_worker *w, bool out, void *p, size_t n, int64_t deadline,
   const char **why)
{
	uint8_t *b = p;
	struct pollfd pfd;
	ssize_t k;
	int64_t left;

	while (n > 0) {
		k = out ? send(w->fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT)
			: recv(w->fd, b, n, MSG_DONTWAIT);
		if (k > 0) {
			b += k;
			n -= (size_t)k;
			continue;
		}
		if (k == 0) {
			*why = "the image worker ended";
			return false;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			*why = "the image worker ended";
			return false;
		}
		if ((left = deadline - clock_mono_ms()) <= 0) {
			*why = why_timeout;
			return false;
		}
		pfd.fd = w->fd;
		pfd.events = out ? POLLOUT : POLLIN;
		if (poll(&pfd, 1, left > INT32_MAX ? INT32_MAX : (int)left) <
			    0 &&
		    errno != EINTR) {
			*why = "polling the image worker failed";
			return false;
		}
	}
	return true;
}

/*
 * One exchange: op with a then b as its body; the answer's body into
 * reply (at most reply_max bytes when OK).  A step that failed gives
 * FAILED and its reason; anything else wrong gives LOST, the worker
 * killed.
 */
static enum faceapi_worker_result
call(struct faceapi_worker *w, enum op op, const void *a, size_t alen,
     const void *b, size_t blen, int timeout_ms, struct buf *reply,
     size_t reply_max, char *detail, size_t dlen)
{
	struct hdr h = {.code = op, .len = alen + blen};
	int64_t deadline = clock_mono_ms() + timeout_ms;
	const char *why = "the image worker broke the protocol";
	size_t at = reply->len;

	if (w->pid == 0) {
		snprintf(detail, dlen, "no image worker is running");
		return FACEAPI_WORKER_LOST;
	}
	if (!io(w, true, &h, sizeof(h), deadline, &why) ||
	    (alen > 0 && !io(w, true, (void *)a, alen, deadline, &why)) ||
	    (blen > 0 && !io(w, true, (void *)b, blen, deadline, &why)) ||
	    !io(w, false, &h, sizeof(h), deadline, &why))
		goto lost;
	why = "the image worker broke the protocol";
	if ((h.code != ST_OK && h.code != ST_FAILED) ||
	    h.len > (h.code == ST_OK ? reply_max : DETAIL_MAX) ||
	    !buf_reserve(reply, (size_t)h.len))
		goto lost;
	if (!io(w, false, reply->p + reply->len, (size_t)h.len, deadline, &why))
		goto lost;
	reply->len += (size_t)h.len;
	if (h.code == ST_OK)
		return FACEAPI_WORKER_OK;
	copy_detail(detail, dlen, reply->p + at, (size_t)h.len);
	reply->len = at;
	return FACEAPI_WORKER_FAILED;
lost:
	/* A timeout is ours to end; a closed socket is the worker's end,
	 * whose cause is worth waiting a moment for. */
	reap(w, why == why_timeout ? 0 : GRACE_MS, why, detail, dlen);
	return FACEAPI_WORKER_LOST;
}

/* A bool the worker sent, as its byte: true when 0 or 1 (anything else
 * is not a bool and must not be read as one). */
static bool
bool_ok(const void *p)
{
	return *(const uint8_t *)p <= 1;
}

/* Starts a worker and takes its hello into w->model. */
static bool
spawn(struct faceapi_worker *w, char *note, size_t notelen, char *detail,
      size_t dlen)
{
	static char *const argv[] = {"xmhub-face-worker", FACEAPI_WORKER_ARG,
				     NULL};
	posix_spawn_file_actions_t fa;
	struct whello hello;
	struct buf reply;
	int sv[2] = {-1, -1}, rc;
	bool ok = false;

	memset(&w->model, 0, sizeof(w->model));
	buf_init(&reply, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		snprintf(detail, dlen, "socketpair: %s", strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], FACEAPI_WORKER_FD);
	/* fd 0 is the FastCGI listening socket: not the worker's. */
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addclosefrom_np(&fa, FACEAPI_WORKER_FD + 1);
	/* Exec'd, not forked: none of this process's memory (credentials,
	 * the database connection) reaches the worker. */
	rc = posix_spawn(&w->pid, "/proc/self/exe", &fa, NULL, argv, w->env);
	posix_spawn_file_actions_destroy(&fa);
	close(sv[1]);
	if (rc != 0) {
		w->pid = 0;
		close(sv[0]);
		snprintf(detail, dlen, "cannot start the image worker: %s",
			 strerror(rc));
		goto out;
	}
	w->fd = sv[0];
	if (fcntl(w->fd, F_SETFL, O_NONBLOCK) != 0) {
		reap(w, 0, "fcntl on the image worker's socket failed", detail,
		     dlen);
		goto out;
	}
	switch (call(w, OP_CONFIG, &w->cfg, sizeof(w->cfg), NULL, 0,
		     START_TIMEOUT_S * 1000, &reply, sizeof(hello), detail,
		     dlen)) {
	case FACEAPI_WORKER_OK:
		break;
	case FACEAPI_WORKER_FAILED: {
		/* No model, or no sandbox: it ends by itself. */
		char why[DETAIL_MAX];

		snprintf(why, sizeof(why), "%s", detail);
		reap(w, GRACE_MS * 5, why, detail, dlen);
		goto out;
	}
	case FACEAPI_WORKER_LOST:
		goto out;
	}
	if (reply.len != sizeof(hello)) {
		reap(w, 0, "the image worker broke the protocol", detail, dlen);
		goto out;
	}
	memcpy(&hello, reply.p, sizeof(hello));
	if (!bool_ok(reply.p + offsetof(struct whello, m.loaded)) ||
	    !bool_ok(reply.p + offsetof(struct whello, m.landmarks))) {
		reap(w, 0, "the image worker broke the protocol", detail, dlen);
		goto out;
	}
	hello.m.name[sizeof(hello.m.name) - 1] = '\0';
	copy_detail(note, notelen, (const uint8_t *)hello.note,
		    sizeof(hello.note));
	w->model = hello.m;
	w->model.loaded = true;
	ok = true;
out:
	buf_free(&reply);
	return ok;
}

struct faceapi_worker *
faceapi_worker_open(const struct faceapi_conf *c, char *note, size_t notelen,
		    char *detail, size_t dlen)
{
	struct faceapi_worker *w = calloc(1, sizeof(*w));

	if (w == NULL || (w->env = env_make()) == NULL) {
		free(w);
		return NULL;
	}
	if (note != NULL && notelen > 0)
		note[0] = '\0';
	w->fd = -1;
	w->timeout_ms = c->worker_timeout * 1000;
	w->out_max = (size_t)c->max_pixels * 4 + (1U << 20);
	snprintf(w->cfg.model_dir, sizeof(w->cfg.model_dir), "%s",
		 c->model_dir);
	snprintf(w->cfg.model, sizeof(w->cfg.model), "%s", c->model);
	w->cfg.det_size = c->det_size;
	w->cfg.threads = c->threads;
	w->cfg.max_pixels = (uint64_t)c->max_pixels;
	w->wanted = spawn(w, note, notelen, detail, dlen);
	return w;
}

void
faceapi_worker_close(struct faceapi_worker *w)
{
	if (w == NULL)
		return;
	if (w->pid != 0) {
		kill(w->pid, SIGKILL);
		waitpid(w->pid, NULL, 0);
		close(w->fd);
	}
	env_free(w->env);
	free(w);
}

const struct faceapi_worker_model *
faceapi_worker_model(const struct faceapi_worker *w)
{
	return &w->model;
}

/*
 * True when the worker's main thread has ended (zombie or dead): the
 * worker is going, though its other threads (the model's) may hold its
 * socket open a while longer, so that the socket does not show it yet.
 * False when /proc cannot tell.
 */
static bool
main_thread_ended(pid_t pid)
{
	char path[64], line[512];
	const char *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return false;
	line[n] = '\0';
	/* The state follows the command name, which may hold ')'. */
	if ((p = strrchr(line, ')')) == NULL || p[1] != ' ')
		return false;
	return p[2] == 'Z' || p[2] == 'X';
}

bool
faceapi_worker_ready(struct faceapi_worker *w, char *detail, size_t dlen)
{
	struct pollfd pfd;
	char note[256];

	if (!w->wanted) {
		snprintf(detail, dlen, "no face detection model is loaded");
		return false;
	}
	/* Ended since the last request (killed, out of memory): its socket
	 * is closed (or, against the protocol, holds unread bytes), or its
	 * main thread has ended while the others still hold the socket. */
	pfd.fd = w->fd;
	pfd.events = POLLIN;
	if (w->pid != 0 && (poll(&pfd, 1, 0) != 0 || main_thread_ended(w->pid)))
		reap(w, GRACE_MS, "ended between requests", detail, dlen);
	if (w->pid != 0)
		return true;
	if (!spawn(w, note, sizeof(note), detail, dlen)) {
		log_error("face: cannot restart the image worker: %s", detail);
		return false;
	}
	return true;
}

enum faceapi_worker_result
faceapi_worker_decode(struct faceapi_worker *w, const void *data, size_t len,
		      char *detail, size_t dlen)
{
	struct buf reply;
	enum faceapi_worker_result r;

	buf_init(&reply, 0);
	r = call(w, OP_DECODE, data, len, NULL, 0, w->timeout_ms, &reply, 0,
		 detail, dlen);
	buf_free(&reply);
	return r;
}

/* True when every number of the worker's timings and boxes is finite
 * and every bool a bool. */
static bool
detected_ok(const uint8_t *p, size_t n)
{
	const struct face_timings *t;
	struct wdetected d;
	struct face_box b;

	memcpy(&d, p, sizeof(d));
	t = &d.t;
	if (!isfinite(t->preprocess_ms) || !isfinite(t->blob_ms) ||
	    !isfinite(t->inference_ms) || !isfinite(t->postprocess_ms) ||
	    !isfinite(t->nms_ms) || !isfinite(t->det_scale))
		return false;
	p += sizeof(d);
	for (size_t i = 0; i < n; i++, p += sizeof(b)) {
		if (!bool_ok(p + offsetof(struct face_box, has_landmarks)))
			return false;
		memcpy(&b, p, sizeof(b));
		if (!isfinite(b.x1) || !isfinite(b.y1) || !isfinite(b.x2) ||
		    !isfinite(b.y2) || !isfinite(b.score))
			return false;
		for (int k = 0; k < 5; k++)
			if (!isfinite(b.lm[k].x) || !isfinite(b.lm[k].y))
				return false;
	}
	return true;
}

enum faceapi_worker_result
faceapi_worker_detect(struct faceapi_worker *w, float conf, float nms,
		      size_t max_faces, bool keep, struct face_box *out,
		      size_t cap, size_t *n, struct face_timings *t,
		      char *detail, size_t dlen)
{
	struct wdetect a;
	struct wdetected d;
	struct buf reply;
	enum faceapi_worker_result r;

	/* Padding included: no byte of this process's stack goes out. */
	memset(&a, 0, sizeof(a));
	a.conf = conf;
	a.nms = nms;
	a.max_faces = max_faces;
	a.cap = cap;
	a.keep = keep;
	*n = 0;
	buf_init(&reply, 0);
	r = call(w, OP_DETECT, &a, sizeof(a), NULL, 0, w->timeout_ms, &reply,
		 sizeof(d) + cap * sizeof(*out), detail, dlen);
	if (r != FACEAPI_WORKER_OK)
		goto out;
	if (reply.len < sizeof(d))
		goto bad;
	memcpy(&d, reply.p, sizeof(d));
	if (d.n > cap || reply.len != sizeof(d) + d.n * sizeof(*out) ||
	    !detected_ok(reply.p, (size_t)d.n))
		goto bad;
	memcpy(out, reply.p + sizeof(d), (size_t)d.n * sizeof(*out));
	*n = (size_t)d.n;
	if (t != NULL)
		*t = d.t;
	goto out;
bad:
	reap(w, 0, "the image worker broke the protocol", detail, dlen);
	r = FACEAPI_WORKER_LOST;
out:
	buf_free(&reply);
	return r;
}

enum faceapi_worker_result
faceapi_worker_mask(struct faceapi_worker *w, const struct face_box *boxes,
		    size_t n, enum face_method method, int strength,
		    double padding, char *detail, size_t dlen)
{
	struct wmask a = {(int32_t)method, strength, padding, n};
	struct buf reply;
	enum faceapi_worker_result r;

	buf_init(&reply, 0);
	r = call(w, OP_MASK, &a, sizeof(a), boxes, n * sizeof(*boxes),
		 w->timeout_ms, &reply, 0, detail, dlen);
	buf_free(&reply);
	return r;
}

enum faceapi_worker_result
faceapi_worker_encode(struct faceapi_worker *w, enum face_fmt fmt, int quality,
		      struct buf *out, char *detail, size_t dlen)
{
	struct wencode a = {(int32_t)fmt, quality};

	return call(w, OP_ENCODE, &a, sizeof(a), NULL, 0, w->timeout_ms, out,
		    w->out_max, detail, dlen);
}

/* --- The sandbox --- */

#ifdef SANDBOX_ARCH
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define ARG_HI(i) (ARG_LO(i) + 4)
#define LD(off) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define DENY RET(SECCOMP_RET_ERRNO | EPERM)
/* Two instructions: nr is allowed. */
#define ALLOW(nr)                                                              \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), RET(SECCOMP_RET_ALLOW)

/* Fills f (room for cap instructions); the count, 0 when cap is short. */
static size_t
filter(struct sock_filter *f, size_t cap)
{
	const struct sock_filter prog[] = {
		LD(offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SANDBOX_ARCH, 1, 0),
		RET(SECCOMP_RET_KILL_PROCESS),
		LD(offsetof(struct seccomp_data, nr)),
#ifdef __x86_64__
		/* The x32 ABI's numbers: none. */
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
		DENY,
#endif
		/* Descriptors already open: the socket, stderr. */
		ALLOW(__NR_read),
		ALLOW(__NR_write),
		ALLOW(__NR_readv),
		ALLOW(__NR_writev),
		ALLOW(__NR_recvfrom),
		ALLOW(__NR_recvmsg),
		ALLOW(__NR_sendto),
		ALLOW(__NR_sendmsg),
		ALLOW(__NR_close),
		ALLOW(__NR_fstat),
		/* Memory. */
		ALLOW(__NR_brk),
		ALLOW(__NR_mmap),
		ALLOW(__NR_munmap),
		ALLOW(__NR_mremap),
		ALLOW(__NR_mprotect),
		ALLOW(__NR_madvise),
		/* Threads (OpenCV's pool), signals of this process, time. */
		ALLOW(__NR_futex),
		ALLOW(__NR_set_robust_list),
		ALLOW(__NR_rseq),
		ALLOW(__NR_sched_yield),
		ALLOW(__NR_sched_getaffinity),
		ALLOW(__NR_getpid),
		ALLOW(__NR_gettid),
		ALLOW(__NR_rt_sigaction),
		ALLOW(__NR_rt_sigprocmask),
		ALLOW(__NR_rt_sigreturn),
		ALLOW(__NR_sigaltstack),
		ALLOW(__NR_restart_syscall),
		ALLOW(__NR_clock_gettime),
		ALLOW(__NR_clock_getres),
		ALLOW(__NR_clock_nanosleep),
		ALLOW(__NR_nanosleep),
		ALLOW(__NR_gettimeofday),
		ALLOW(__NR_getrandom),
		ALLOW(__NR_sysinfo),
		ALLOW(__NR_exit),
		ALLOW(__NR_exit_group),
		/* clone: threads only, never a new process. */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4),
		LD(ARG_LO(0)),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
		RET(SECCOMP_RET_ALLOW),
		DENY,
		/* clone3's flags are behind a pointer: glibc then uses clone.
		 */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
		RET(SECCOMP_RET_ERRNO | ENOSYS),
		/* tgkill: this process's threads only (abort, raise). */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_tgkill, 0, 4),
		LD(ARG_LO(0)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)getpid(), 0, 1),
		RET(SECCOMP_RET_ALLOW),
		DENY,
		/* prlimit64: reading limits only (getrlimit). */
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prlimit64, 0, 6),
		LD(ARG_LO(2)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3),
		LD(ARG_HI(2)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
		RET(SECCOMP_RET_ALLOW),
		DENY,
		/* Everything else. */
		DENY,
	};
	size_t n = sizeof(prog) / sizeof(*prog);

	if (n > cap)
		return 0;
	memcpy(f, prog, sizeof(prog));
	return n;
}
#endif

/* The address space in use now (VmSize), 0 when unknown. */
static uint64_t
vm_size(void)
{
	char line[128];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmSize: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

static bool
limit(int resource, uint64_t v)
{
	struct rlimit rl = {(rlim_t)v, (rlim_t)v};

	return setrlimit(resource, &rl) == 0;
}

bool
faceapi_worker_sandbox(uint64_t as_extra, char *detail, size_t dlen)
{
#ifdef SANDBOX_ARCH
	struct sock_filter f[160];
	struct sock_fprog prog = {0, f};
#endif
	const char *step;

#ifndef SANDBOX_UNDER_ASAN
	step = "RLIMIT_AS";
	if (!limit(RLIMIT_AS, vm_size() + as_extra))
		goto fail;
#else
	(void)as_extra;
	(void)vm_size;
#endif
	step = "RLIMIT_NOFILE";
	if (!limit(RLIMIT_NOFILE, FACEAPI_WORKER_NOFILE))
		goto fail;
	/* stderr may be a log file: a library's warning there (libpng's
	 * "known incorrect sRGB profile") must fail with EFBIG, not kill
	 * the worker with SIGXFSZ */
	step = "SIGXFSZ";
	if (signal(SIGXFSZ, SIG_IGN) == SIG_ERR)
		goto fail;
	step = "RLIMIT_FSIZE";
	if (!limit(RLIMIT_FSIZE, 0))
		goto fail;
	step = "RLIMIT_CORE";
	if (!limit(RLIMIT_CORE, 0))
		goto fail;
	step = "PR_SET_NO_NEW_PRIVS";
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		goto fail;
#ifdef SANDBOX_ARCH
	step = "seccomp";
	prog.len = (unsigned short)filter(f, sizeof(f) / sizeof(*f));
	if (prog.len == 0) {
		errno = E2BIG;
		goto fail;
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
		goto fail;
	return true;
#else
	snprintf(detail, dlen, "no seccomp filter for this architecture");
	return false;
#endif
fail:
	snprintf(detail, dlen, "sandbox: %s: %s", step, strerror(errno));
	return false;
}

/* --- The worker --- */

static bool
answer(int code, const void *p, size_t n)
{
	struct hdr h = {.code = (uint32_t)code, .len = n};

	return fdio_write_full(FACEAPI_WORKER_FD, &h, sizeof(h)) &&
	       (n == 0 || fdio_write_full(FACEAPI_WORKER_FD, p, n));
}

static bool
failed(const char *detail)
{
	return answer(ST_FAILED, detail, strnlen(detail, DETAIL_MAX - 1));
}

/* A 64x64 grey 24-bit BMP, in buf (54 + 64 * 64 * 3 bytes). */
#define WARM_SIDE 64
#define WARM_BYTES (54 + WARM_SIDE * WARM_SIDE * 3)
static void
warm_bmp(uint8_t *buf)
{
	static const uint8_t head[54] = {
		'B', 'M', WARM_BYTES & 0xff, (WARM_BYTES >> 8) & 0xff,
		(WARM_BYTES >> 16) & 0xff, 0, 0, 0, 0, 0, 54, 0, 0, 0,
		/* BITMAPINFOHEADER: 64 x 64, 1 plane, 24 bits. */
		40, 0, 0, 0, WARM_SIDE, 0, 0, 0, WARM_SIDE, 0, 0, 0, 1, 0, 24,
		0};

	memcpy(buf, head, sizeof(head));
	memset(buf + sizeof(head), 0x80, WARM_BYTES - sizeof(head));
}

/*
 * Runs every step once before the sandbox: OpenCV sets its thread pool,
 * the network its buffers and each codec its tables up on first use,
 * and some of that opens files.
 */
static bool
warm_up(struct face_model *m, char *detail, size_t dlen)
{
	static const enum face_fmt fmts[] = {FACE_FMT_JPEG, FACE_FMT_PNG,
					     FACE_FMT_WEBP};
	struct face_box box = {16, 16, 48, 48, 1, false, {{0, 0}}, 1};
	uint8_t *bmp = malloc(WARM_BYTES);
	struct face_image *img = NULL;
	struct face_box out[4];
	struct buf enc;
	size_t n;
	bool ok = false;

	buf_init(&enc, 0);
	if (bmp == NULL) {
		snprintf(detail, dlen, "out of memory");
		goto out;
	}
	warm_bmp(bmp);
	if ((img = face_image_decode(bmp, WARM_BYTES, 0, detail, dlen)) ==
		    NULL ||
	    !face_detect(m, img, 0.5f, 0.4f, 0, out, 4, &n, NULL, detail,
			 dlen) ||
	    !face_mask(img, &box, 1, FACE_GAUSSIAN, 9, 0.1, detail, dlen))
		goto out;
	for (size_t i = 0; i < sizeof(fmts) / sizeof(*fmts); i++) {
		enc.len = 0;
		if (!face_image_encode(img, fmts[i], 90, &enc, detail, dlen))
			goto out;
	}
	ok = true;
out:
	face_image_free(img);
	buf_free(&enc);
	free(bmp);
	return ok;
}

/* Loads and warms the model, restricts the process, says hello.  NULL
 * when the worker has nothing to serve (said to the parent). */
static struct face_model *
start(const struct wconfig *c)
{
	struct whello hello;
	struct face_model *m;
	char detail[DETAIL_MAX];

	memset(&hello, 0, sizeof(hello));
	m = face_model_open(c->model_dir, c->model, c->det_size, c->threads,
			    hello.note, sizeof(hello.note), detail,
			    sizeof(detail));
	if (m == NULL)
		goto fail;
	if (!warm_up(m, detail, sizeof(detail)) ||
	    !faceapi_worker_sandbox(AS_BASE + AS_PER_PIXEL * c->max_pixels,
				    detail, sizeof(detail)))
		goto fail;
	hello.m.loaded = true;
	snprintf(hello.m.name, sizeof(hello.m.name), "%s", face_model_name(m));
	hello.m.file_size = face_model_file_size(m);
	hello.m.landmarks = face_model_landmarks(m);
	hello.m.det_size = face_model_det_size(m);
	if (!answer(ST_OK, &hello, sizeof(hello)))
		goto close;
	return m;
fail:
	failed(detail);
close:
	face_model_close(m);
	return NULL;
}

/*
 * The steps: each true with its answer's body appended to out, or false
 * with the reason in detail (DETAIL_MAX bytes).  b is the request's body.
 */
static bool
step_decode(const struct wconfig *c, const struct buf *b,
	    struct face_image **img, char *detail)
{
	face_image_free(*img);
	*img = face_image_decode(b->p, b->len, c->max_pixels, detail,
				 DETAIL_MAX);
	return *img != NULL;
}

static bool
step_detect(struct face_model *m, const struct buf *b, struct face_image **img,
	    struct buf *out, char *detail)
{
	struct face_box *boxes = NULL;
	struct wdetected r;
	struct wdetect d;
	size_t n = 0;
	bool ok = false;

	if (*img == NULL || b->len != sizeof(d)) {
		snprintf(detail, DETAIL_MAX, "no image to detect faces in");
		goto out;
	}
	memcpy(&d, b->p, sizeof(d));
	if (d.cap == 0 || d.cap > BOXES_MAX ||
	    (boxes = calloc((size_t)d.cap, sizeof(*boxes))) == NULL) {
		snprintf(detail, DETAIL_MAX, "bad number of boxes");
		goto out;
	}
	memset(&r, 0, sizeof(r));
	if (!face_detect(m, *img, d.conf, d.nms, (size_t)d.max_faces, boxes,
			 (size_t)d.cap, &n, &r.t, detail, DETAIL_MAX))
		goto out;
	r.n = n;
	buf_append(out, &r, sizeof(r));
	buf_append(out, boxes, n * sizeof(*boxes));
	ok = !out->failed;
	if (!ok)
		snprintf(detail, DETAIL_MAX, "out of memory");
out:
	if (*img != NULL && (!ok || !d.keep)) {
		face_image_free(*img);
		*img = NULL;
	}
	free(boxes);
	return ok;
}

static bool
step_mask(const struct buf *b, struct face_image *img, char *detail)
{
	struct face_box *boxes = NULL;
	struct wmask k;
	bool ok = false;

	if (img == NULL || b->len < sizeof(k)) {
		snprintf(detail, DETAIL_MAX, "no image to mask");
		goto out;
	}
	memcpy(&k, b->p, sizeof(k));
	if (k.n > BOXES_MAX ||
	    b->len != sizeof(k) + k.n * sizeof(struct face_box) ||
	    (boxes = calloc((size_t)k.n + 1, sizeof(*boxes))) == NULL) {
		snprintf(detail, DETAIL_MAX, "bad boxes");
		goto out;
	}
	memcpy(boxes, b->p + sizeof(k), (size_t)k.n * sizeof(*boxes));
	ok = face_mask(img, boxes, (size_t)k.n, (enum face_method)k.method,
		       k.strength, k.padding, detail, DETAIL_MAX);
out:
	free(boxes);
	return ok;
}

static bool
step_encode(const struct buf *b, struct face_image **img, struct buf *out,
	    char *detail)
{
	struct wencode e;
	bool ok = false;

	if (*img == NULL || b->len != sizeof(e)) {
		snprintf(detail, DETAIL_MAX, "no image to encode");
		goto out;
	}
	memcpy(&e, b->p, sizeof(e));
	ok = face_image_encode(*img, (enum face_fmt)e.fmt, e.quality, out,
			       detail, DETAIL_MAX);
out:
	face_image_free(*img);
	*img = NULL;
	return ok;
}

/* Serves one request of the parent (h and its body b); false when the
 * socket is gone. */
static bool
serve(struct face_model *m, const struct wconfig *c, const struct hdr *h,
      const struct buf *b, struct face_image **img)
{
	char detail[DETAIL_MAX] = "unknown request";
	struct buf out;
	bool done = false, sent;

	buf_init(&out, 0);
	switch (h->code) {
	case OP_DECODE:
		done = step_decode(c, b, img, detail);
		break;
	case OP_DETECT:
		done = step_detect(m, b, img, &out, detail);
		break;
	case OP_MASK:
		done = step_mask(b, *img, detail);
		break;
	case OP_ENCODE:
		done = step_encode(b, img, &out, detail);
		break;
	}
	sent = done ? answer(ST_OK, out.p, out.len) : failed(detail);
	buf_free(&out);
	return sent;
}

int
faceapi_worker_main(void)
{
	struct face_image *img = NULL;
	struct face_model *m = NULL;
	struct wconfig c;
	struct hdr h;
	struct buf b;

	/* Ends with its parent, whatever way that ends. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	buf_init(&b, 0);
	if (!fdio_read_full(FACEAPI_WORKER_FD, &h, sizeof(h)) ||
	    h.code != OP_CONFIG || h.len != sizeof(c) ||
	    !fdio_read_full(FACEAPI_WORKER_FD, &c, sizeof(c)))
		goto out;
	c.model_dir[sizeof(c.model_dir) - 1] = '\0';
	c.model[sizeof(c.model) - 1] = '\0';
	if ((m = start(&c)) == NULL)
		goto out;
	while (fdio_read_full(FACEAPI_WORKER_FD, &h, sizeof(h))) {
		b.len = 0;
		/* Without room for the body the stream cannot go on: the
		 * parent sees the worker end and starts another. */
		if (h.len > SIZE_MAX / 2 || !buf_reserve(&b, (size_t)h.len) ||
		    !fdio_read_full(FACEAPI_WORKER_FD, b.p, (size_t)h.len))
			break;
		b.len = (size_t)h.len;
		if (!serve(m, &c, &h, &b, &img))
			break;
		/* An image's bytes are not kept for the next one. */
		if (b.cap > (1U << 20))
			buf_free(&b);
	}
out:
	face_image_free(img);
	face_model_close(m);
	buf_free(&b);
	/* _exit: LeakSanitizer's exit check needs ptrace and /proc, which
	 * the sandbox forbids; everything is freed above. */
	_exit(0);
}
