/* SPDX-License-Identifier: MIT */
/*
 * t/unit/faceapi.c - unit tests of the face service's settings parsers
 * (lib/face/service/faceapi_conf) and of its limits shared between processes
 * (lib/face/service/faceapi_limits): slots held across processes and released
 * when a process dies, the rate limits and the login lockout; and the image
 * worker's sandbox (lib/face/service/faceapi_worker): what it forbids and
 * what it leaves; the upload reader's results (lib/face/service/
 * faceapi_params), each an outcome, not an HTTP status.  Other processes are
 * forked children that report through their exit status or a pipe.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/clock.h"
#include "face/service/faceapi_conf.h"
#include "face/service/faceapi_limits.h"
#include "face/service/faceapi_params.h"
#include "face/service/faceapi_worker.h"
#include "fcgimem.h"
#include "tap.h"

static char dir[64];

/* Runs fn in a child with its own handle of the state; its exit
 * status. */
static int
in_child(int (*fn)(struct faceapi_limits *l))
{
	char detail[256];
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		struct faceapi_limits *l =
			faceapi_limits_open(dir, 2, 1, detail, sizeof(detail));

		_exit(l == NULL ? 99 : fn(l));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int
try_request(struct faceapi_limits *l)
{
	return faceapi_request_begin(l) ? 0 : 1;
}

/* Takes a request slot and the inference slot, then dies holding them
 * (in the child of a child, so that the test waits for nothing). */
static int
hold_and_die(struct faceapi_limits *l)
{
	return faceapi_request_begin(l) && faceapi_inference_begin(l) ? 0 : 1;
}

static int
rate_once(struct faceapi_limits *l)
{
	struct faceapi_rate r = {3, 60};
	int retry = 0;

	return faceapi_rate_allow(l, "detect", "192.0.2.1", &r, clock_real_us(),
				  &retry)
		       ? 0
		       : 1;
}

static void
test_parsers(void)
{
	struct faceapi_rate r;
	enum face_method m;
	bool b;

	ok(faceapi_rate_parse("60/minute", &r) && r.limit == 60 &&
		   r.period_s == 60,
	   "60/minute");
	ok(faceapi_rate_parse(" 300 per hour ", &r) && r.limit == 300 &&
		   r.period_s == 3600,
	   "300 per hour");
	ok(faceapi_rate_parse("5/seconds", &r) && r.period_s == 1, "5/seconds");
	ok(faceapi_rate_parse("1/day", &r) && r.period_s == 86400, "1/day");
	ok(!faceapi_rate_parse("0/minute", &r), "0/minute refused");
	ok(!faceapi_rate_parse("-1/minute", &r), "-1/minute refused");
	ok(!faceapi_rate_parse("60", &r), "no unit refused");
	ok(!faceapi_rate_parse("60/fortnight", &r), "unknown unit refused");
	ok(!faceapi_rate_parse("60/minutes later", &r), "trailing words");
	ok(!faceapi_rate_parse("60/minutex", &r), "minutex refused");
	ok(faceapi_bool_parse("TRUE", &b) && b, "TRUE");
	ok(faceapi_bool_parse("0", &b) && !b, "0");
	ok(faceapi_bool_parse("off", &b) && !b, "off");
	ok(!faceapi_bool_parse("maybe", &b), "maybe refused");
	ok(faceapi_method_parse("elliptical", &m) && m == FACE_ELLIPTICAL,
	   "elliptical");
	ok(!faceapi_method_parse("blur", &m), "blur refused");
	is_str(faceapi_method_name(FACE_PIXELATE), "pixelate", "name");
}

static void
test_conf(void)
{
	struct faceapi_conf c;
	char detail[256];
	char models[] = "/tmp/faceapi-models-XXXXXX", file[192];
	int fd;

	unsetenv("XMHUB_ENV_FILE");
	setenv("FACE_API_STATE_DIR", dir, 1);
	ok(mkdtemp(models) != NULL, "model directory %s", models);
	setenv("FACE_API_MODEL_DIR", models, 1);
	ok(faceapi_conf_load(&c, detail, sizeof(detail)), "defaults load");
	is_str(c.model, "yunet", "default model: the shipped YuNet, no other");
	snprintf(file, sizeof(file), "%s/scrfd_2.5g_bnkps.onnx", models);
	fd = open(file, O_WRONLY | O_CREAT, 0600);
	close(fd);
	ok(fd >= 0 && faceapi_conf_load(&c, detail, sizeof(detail)) &&
		   strcmp(c.model, "scrfd_2.5g") == 0,
	   "default model: the best one present");
	unlink(file);
	rmdir(models);
	unsetenv("FACE_API_MODEL_DIR");
	is_int(c.max_bytes, 20971520, "default 20 MB");
	is_int(c.max_pixels, 30000000, "default 30 MP");
	is_int(c.max_requests, 10, "default 10 requests");
	is_int(c.max_inference, 2, "default 2 inferences");
	is_int(c.rate_detect.limit, 60, "detect 60/minute (doc/face.md)");
	is_int(c.rate_mask.limit, 30, "mask 30/minute (doc/face.md)");
	ok(!c.keys && !c.storage, "keys and storage off by default");
	is_int(c.strength, 199, "default strength");
	setenv("FACE_API_CORS_ORIGINS", " https://a.example ,https://b", 1);
	setenv("FACE_API_RATE_LIMIT_MASK", "2/second", 1);
	ok(faceapi_conf_load(&c, detail, sizeof(detail)), "origins load");
	is_int(c.norigins, 2, "two origins");
	is_str(c.origins[0], "https://a.example", "blanks trimmed");
	is_int(c.rate_mask.period_s, 1, "mask per second");
	setenv("FACE_API_CONFIDENCE", "1.5", 1);
	ok(!faceapi_conf_load(&c, detail, sizeof(detail)) &&
		   strstr(detail, "FACE_API_CONFIDENCE") != NULL,
	   "a bad setting is named: %s", detail);
	unsetenv("FACE_API_CONFIDENCE");
	setenv("FACE_API_API_KEY_ENABLED", "true", 1);
	ok(!faceapi_conf_load(&c, detail, sizeof(detail)),
	   "keys without storage refused: %s", detail);
	unsetenv("FACE_API_API_KEY_ENABLED");
	setenv("FACE_API_ADMIN_PASSWORD", "plain$argon2id$", 1);
	ok(faceapi_conf_load(&c, detail, sizeof(detail)) && !c.admin_hashed,
	   "a clear admin password is one");
	setenv("FACE_API_ADMIN_PASSWORD",
	       "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaA", 1);
	ok(faceapi_conf_load(&c, detail, sizeof(detail)) && c.admin_hashed,
	   "an $argon2id$ admin password is a hash");
	setenv("FACE_API_ADMIN_PASSWORD",
	       "$argon2i$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaA", 1);
	ok(!faceapi_conf_load(&c, detail, sizeof(detail)) &&
		   strstr(detail, "FACE_API_ADMIN_PASSWORD") != NULL,
	   "another Argon2 variant refused: %s", detail);
	unsetenv("FACE_API_ADMIN_PASSWORD");
	setenv("FACE_API_WORKER_TIMEOUT", "0", 1);
	ok(!faceapi_conf_load(&c, detail, sizeof(detail)) &&
		   strstr(detail, "FACE_API_WORKER_TIMEOUT") != NULL,
	   "a worker timeout of 0 refused");
	unsetenv("FACE_API_WORKER_TIMEOUT");
	ok(faceapi_conf_load(&c, detail, sizeof(detail)) &&
		   c.worker_timeout == 60,
	   "worker timeout 60 s by default");
	setenv("FACE_API_STATE_DIR", "relative", 1);
	ok(!faceapi_conf_load(&c, detail, sizeof(detail)),
	   "a relative state directory refused");
	setenv("FACE_API_STATE_DIR", dir, 1);
}

static void
test_slots(struct faceapi_limits *l)
{
	int status = -1;
	pid_t pid;

	ok(faceapi_request_begin(l), "first request slot");
	ok(faceapi_request_begin(l),
	   "taking it again in one process is a no-op");
	is_int(in_child(try_request), 0, "another process gets the second");
	is_int(in_child(hold_and_die), 0, "a process held slots and died");
	is_int(in_child(try_request), 0,
	       "its request slot was released when it died");
	faceapi_request_end(l);
	ok(faceapi_inference_begin(l),
	   "its inference slot too: the only one is ours");
	/* A child waits for the slot; it ends once we give it back. */
	if ((pid = fork()) == 0) {
		char detail[256];
		struct faceapi_limits *c =
			faceapi_limits_open(dir, 2, 1, detail, sizeof(detail));

		_exit(c != NULL && faceapi_inference_begin(c) ? 0 : 1);
	}
	faceapi_inference_end(l);
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "a waiting process gets the inference slot once it is free");
}

/* The child above would wait forever if we kept the slot: it is
 * released first, so check the exclusion with a non-waiting peer. */
static int
hold_request_then_report(struct faceapi_limits *l)
{
	return faceapi_request_begin(l) ? 0 : 1;
}

static void
test_exclusion(struct faceapi_limits *l)
{
	ok(faceapi_request_begin(l), "slot 1 of 2 (parent)");
	/* A child takes slot 2 and keeps it while its own child tries. */
	pid_t pid = fork();

	if (pid == 0) {
		char detail[256];
		struct faceapi_limits *c =
			faceapi_limits_open(dir, 2, 1, detail, sizeof(detail));

		if (c == NULL || !faceapi_request_begin(c))
			_exit(2);
		_exit(in_child(hold_request_then_report) == 1 ? 0 : 1);
	}
	int status = -1;

	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "with both slots held, a third process is refused");
	faceapi_request_end(l);
}

static void
test_rates(struct faceapi_limits *l)
{
	struct faceapi_rate r = {3, 60};
	int64_t now = clock_real_us();
	char path[128];
	struct stat st;
	off_t size;
	int retry = 0;

	snprintf(path, sizeof(path), "%s/tables", dir);
	size = stat(path, &st) == 0 ? st.st_size : -1;
	ok(faceapi_rate_allow(l, "detect", "192.0.2.1", &r, now, &retry),
	   "request 1 of 3");
	is_int(in_child(rate_once), 0, "request 2 counted in another process");
	ok(faceapi_rate_allow(l, "detect", "192.0.2.1", &r, now, &retry),
	   "request 3 of 3");
	ok(!faceapi_rate_allow(l, "detect", "192.0.2.1", &r, now, &retry),
	   "request 4 refused");
	is_int(in_child(rate_once), 1, "... in every process");
	ok(retry >= 1 && retry <= 20, "Retry-After %d within 20 s", retry);
	ok(faceapi_rate_allow(l, "detect", "192.0.2.2", &r, now, &retry),
	   "another IP is allowed");
	ok(faceapi_rate_allow(l, "mask", "192.0.2.1", &r, now, &retry),
	   "another endpoint is counted apart");
	ok(faceapi_rate_allow(l, "detect", "192.0.2.1", &r,
			      now + 21 * 1000000LL, &retry),
	   "one more after 20 s (60 s / 3)");
	/* Many addresses: the table stays bounded and keeps working. */
	for (int i = 0; i < 3 * FACEAPI_TABLE_ENTRIES; i++) {
		char ip[32];

		snprintf(ip, sizeof(ip), "10.%d.%d.%d", i >> 16, (i >> 8) & 255,
			 i & 255);
		faceapi_rate_allow(l, "detect", ip, &r, now, &retry);
	}
	snprintf(path, sizeof(path), "%s/tables", dir);
	ok(stat(path, &st) == 0 && st.st_size == size,
	   "the table file keeps its size after 3 x %d addresses",
	   FACEAPI_TABLE_ENTRIES);
	ok(faceapi_rate_allow(l, "detect", "192.0.2.9", &r, now, &retry),
	   "a new address is still allowed");
}

static void
test_lockout(struct faceapi_limits *l)
{
	int64_t now = clock_real_us();
	int retry = 0, i;

	for (i = 1; i < FACEAPI_LOCKOUT_FAILURES; i++)
		if (faceapi_lockout_fail(l, "198.51.100.1", now, &retry))
			break;
	is_int(i, FACEAPI_LOCKOUT_FAILURES, "9 failures do not lock out");
	ok(!faceapi_lockout_blocked(l, "198.51.100.1", now, &retry),
	   "not blocked after 9");
	ok(faceapi_lockout_fail(l, "198.51.100.1", now, &retry),
	   "the 10th failure locks out");
	is_int(retry, FACEAPI_LOCKOUT_SECONDS, "for 15 minutes");
	ok(faceapi_lockout_blocked(l, "198.51.100.1", now + 60000000LL, &retry),
	   "still blocked a minute later");
	is_int(retry, FACEAPI_LOCKOUT_SECONDS - 60, "Retry-After counts down");
	ok(!faceapi_lockout_blocked(l, "198.51.100.2", now, &retry),
	   "another IP is not blocked");
	ok(!faceapi_lockout_blocked(
		   l, "198.51.100.1",
		   now + (FACEAPI_LOCKOUT_SECONDS + 1) * 1000000LL, &retry),
	   "free again after 15 minutes");
	for (i = 0; i < 5; i++)
		faceapi_lockout_fail(l, "198.51.100.3", now, &retry);
	faceapi_lockout_ok(l, "198.51.100.3");
	for (i = 1; i < FACEAPI_LOCKOUT_FAILURES; i++)
		faceapi_lockout_fail(l, "198.51.100.3", now, &retry);
	ok(!faceapi_lockout_blocked(l, "198.51.100.3", now, &retry),
	   "a success resets the count of consecutive failures");
}

static void *
thread_fn(void *arg)
{
	*(int *)arg = 42;
	return NULL;
}

/* What the sandboxed child tries, in order; '1' in its report when it
 * went as the sandbox means. */
static const char *const sandbox_checks[] = {
	"the sandbox is set up",
	"open() of a file fails with EPERM",
	"socket() fails with EPERM (so no connect)",
	"fork() fails",
	"execve() fails",
	"kill() of the parent fails",
	"raising RLIMIT_NOFILE fails",
	"RLIMIT_NOFILE reads back as FACEAPI_WORKER_NOFILE",
	"a thread runs (OpenCV's pool)",
	"64 MiB can be allocated and used",
};
#define NCHECKS (sizeof(sandbox_checks) / sizeof(*sandbox_checks))

/* The child: sandboxes itself, tries each check, writes the report. */
static void
sandbox_child(int out)
{
	char r[NCHECKS], detail[256];
	struct rlimit rl = {64, 64};
	char *const argv[] = {"/bin/true", NULL};
	pthread_t th;
	int v = 0, i = 0;
	char *p;

	memset(r, '0', sizeof(r));
	r[i++] = faceapi_worker_sandbox(1ULL << 30, detail, sizeof(detail))
			 ? '1'
			 : '0';
	r[i++] =
		open("/etc/passwd", O_RDONLY) < 0 && errno == EPERM ? '1' : '0';
	r[i++] = socket(AF_INET, SOCK_STREAM, 0) < 0 && errno == EPERM ? '1'
								       : '0';
	r[i++] = fork() < 0 ? '1' : '0';
	r[i++] = execve(argv[0], argv, argv + 1) < 0 ? '1' : '0';
	r[i++] = kill(getppid(), 0) < 0 ? '1' : '0';
	r[i++] = setrlimit(RLIMIT_NOFILE, &rl) < 0 ? '1' : '0';
	r[i++] = getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
				 rl.rlim_cur == FACEAPI_WORKER_NOFILE
			 ? '1'
			 : '0';
	r[i++] = pthread_create(&th, NULL, thread_fn, &v) == 0 &&
				 pthread_join(th, NULL) == 0 && v == 42
			 ? '1'
			 : '0';
	p = malloc(64 << 20);
	if (p != NULL)
		memset(p, 1, 64 << 20);
	r[i++] = p != NULL && p[(64 << 20) - 1] == 1 ? '1' : '0';
	free(p);
	_exit(write(out, r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
}

static void
test_sandbox(void)
{
	char r[NCHECKS];
	int fds[2], status;
	ssize_t n = 0;
	pid_t pid;

	if (!ok(pipe(fds) == 0, "pipe"))
		return;
	if ((pid = fork()) == 0) {
		close(fds[0]);
		sandbox_child(fds[1]);
	}
	close(fds[1]);
	memset(r, '0', sizeof(r));
	if (pid > 0)
		n = read(fds[0], r, sizeof(r));
	close(fds[0]);
	ok(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		   WEXITSTATUS(status) == 0 && n == (ssize_t)sizeof(r),
	   "the sandboxed child reports and exits");
	for (size_t i = 0; i < NCHECKS; i++)
		ok(r[i] == '1', "sandbox: %s", sandbox_checks[i]);
}

#define PART(name) "--b\r\nContent-Disposition: form-data; name=\"" name "\""
#define IMAGE(data) PART("image") "; filename=\"a.jpg\"\r\n\r\n" data "\r\n"
#define FIELD(name, v) PART(name) "\r\n\r\n" v "\r\n"
#define END "--b--\r\n"

/* faceapi_upload_read() of body (Content-Type ctype) at max_image. */
static enum faceapi_upload_result
upload(const char *ctype, const char *body, size_t max_image,
       struct faceapi_upload *up)
{
	char ct[96], *env[] = {"REQUEST_METHOD=POST", ct, NULL};
	enum faceapi_upload_result res = FACEAPI_UPLOAD_NO_MEMORY;
	struct http_resp resp;
	struct http_req req;
	struct fcgimem m;
	char detail[160];

	snprintf(ct, sizeof(ct), "CONTENT_TYPE=%s", ctype);
	fcgimem_init(&m, env, body, strlen(body), NULL, 0, false);
	http_resp_init(&resp);
	if (http_req_init(&req, &m.req, &resp))
		res = faceapi_upload_read(&req, max_image, up, detail,
					  sizeof(detail));
	http_req_free(&req);
	http_resp_free(&resp);
	fcgimem_free(&m);
	return res;
}

static void
test_upload(void)
{
	static const char form[] = "multipart/form-data; boundary=b";
	struct faceapi_upload up;

	ok(upload(form, IMAGE("abc") FIELD("confidence", "0.5") END, 10, &up) ==
			   FACEAPI_UPLOAD_OK &&
		   up.image.len == 3 && memcmp(up.image.p, "abc", 3) == 0 &&
		   strcmp(up.filename, "a.jpg") == 0 &&
		   up.has_field[FACEAPI_P_CONFIDENCE] &&
		   strcmp(up.fields[FACEAPI_P_CONFIDENCE], "0.5") == 0 &&
		   !up.has_field[FACEAPI_P_NMS],
	   "upload: the image, its name and a field");
	faceapi_upload_free(&up);
	ok(upload("image/jpeg", "abc", 10, &up) == FACEAPI_UPLOAD_NOT_FORM,
	   "upload: not a form: NOT_FORM");
	faceapi_upload_free(&up);
	ok(upload(form, IMAGE("abc") IMAGE("def") END, 10, &up) ==
		   FACEAPI_UPLOAD_SECOND_FILE,
	   "upload: two images: SECOND_FILE");
	faceapi_upload_free(&up);
	ok(upload(form, IMAGE("0123456789A") END, 10, &up) ==
		   FACEAPI_UPLOAD_FILE_TOO_LARGE,
	   "upload: an image of 11 bytes at 10: FILE_TOO_LARGE");
	faceapi_upload_free(&up);
	ok(upload(form,
		  IMAGE("abc") FIELD("nms_threshold",
				     "0.50000000000000000000000000000000000000"
				     "00000000000000000000000000001") END,
		  10, &up) == FACEAPI_UPLOAD_FIELD_TOO_LONG &&
		   up.bad_field != NULL &&
		   strcmp(up.bad_field, "nms_threshold") == 0,
	   "upload: a field over 64 bytes: FIELD_TOO_LONG, named");
	faceapi_upload_free(&up);
	ok(upload(form, FIELD("confidence", "0.5") END, 10, &up) ==
		   FACEAPI_UPLOAD_NO_FILE,
	   "upload: no image: NO_FILE");
	faceapi_upload_free(&up);
	ok(upload(form, IMAGE("") END, 10, &up) == FACEAPI_UPLOAD_EMPTY_FILE,
	   "upload: an empty image: EMPTY_FILE");
	faceapi_upload_free(&up);
	ok(upload(form, IMAGE("abc"), 10, &up) == FACEAPI_UPLOAD_MALFORMED,
	   "upload: no close delimiter: MALFORMED");
	faceapi_upload_free(&up);
}

int
main(void)
{
	struct faceapi_limits *l;
	char detail[256], cmd[96];

	snprintf(dir, sizeof(dir), "/tmp/faceapi-t-%ld", (long)getpid());
	test_parsers();
	test_conf();
	test_upload();
	test_sandbox();
	l = faceapi_limits_open(dir, 2, 1, detail, sizeof(detail));
	if (!ok(l != NULL, "state files made in %s", dir))
		return tap_done();
	test_slots(l);
	test_exclusion(l);
	test_rates(l);
	test_lockout(l);
	faceapi_limits_close(l);
	snprintf(cmd, sizeof(cmd), "%s/tables", dir);
	unlink(cmd);
	snprintf(cmd, sizeof(cmd), "%s/requests.lock", dir);
	unlink(cmd);
	snprintf(cmd, sizeof(cmd), "%s/inference.lock", dir);
	unlink(cmd);
	snprintf(cmd, sizeof(cmd), "%s/queue.lock", dir);
	unlink(cmd);
	rmdir(dir);
	return tap_done();
}
