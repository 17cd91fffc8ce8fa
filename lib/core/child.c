/*
 * child.c - child programs with bounded captured output.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/child.h"

extern char **environ;

bool
child_start(struct child *sp, char *const argv[], size_t out_max,
	    size_t err_max, char *detail, size_t dlen)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	int out[2] = {-1, -1}, err[2] = {-1, -1}, rc;
	bool ok = false;

	memset(sp, 0, sizeof(*sp));
	sp->out_fd = sp->err_fd = -1;
	buf_init(&sp->out, 0);
	buf_init(&sp->err, 0);
	sp->out_max = out_max;
	sp->err_max = err_max;
	if (pipe(out) != 0 || pipe(err) != 0) {
		snprintf(detail, dlen, "pipe: %s", strerror(errno));
		goto close;
	}
	/* Only the child's dup2'ed copies may outlive exec. */
	for (int i = 0; i < 2; i++) {
		fcntl(out[i], F_SETFD, FD_CLOEXEC);
		fcntl(err[i], F_SETFD, FD_CLOEXEC);
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&attr);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	rc = posix_spawnp(&sp->pid, argv[0], &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		snprintf(detail, dlen, "cannot run %s: %s", argv[0],
			 strerror(rc));
		sp->pid = 0;
		goto close;
	}
	sp->out_fd = out[0];
	sp->err_fd = err[0];
	out[0] = err[0] = -1;
	ok = true;
close:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
	return ok;
}

/* Reads what fd has into b (keeping max bytes); closes it at the end. */
static void
drain(int *fd, struct buf *b, size_t max)
{
	char chunk[8192];
	ssize_t n = read(*fd, chunk, sizeof(chunk));

	if (n > 0) {
		if (b->len < max)
			buf_append(b, chunk,
				   (size_t)n < max - b->len ? (size_t)n
							    : max - b->len);
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		close(*fd);
		*fd = -1;
	}
}

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool
child_wait(struct child *sp, int ms)
{
	long long end = now_ms() + ms;

	while (sp->pid > 0) {
		struct pollfd p[2] = {{sp->out_fd, POLLIN, 0},
				      {sp->err_fd, POLLIN, 0}};
		long long left = end - now_ms();
		pid_t r;

		if (sp->out_fd < 0 && sp->err_fd < 0) {
			/* Both pipes closed: the child is ending; poll its
			 * exit in short steps so the caller's deadline holds.
			 */
			r = waitpid(sp->pid, &sp->status, WNOHANG);
			if (r > 0 || (r < 0 && errno != EINTR)) {
				if (r < 0)
					sp->status = -1; /* not ours to wait */
				sp->pid = 0;
				break;
			}
			if (left <= 0)
				return false;
			nanosleep(&(struct timespec){0, 10000000}, NULL);
			continue;
		}
		/* A failed poll is a timeout: the caller waits again. */
		if (poll(p, 2, left > 0 ? (int)left : 0) < 0)
			return false;
		if (p[0].revents != 0)
			drain(&sp->out_fd, &sp->out, sp->out_max);
		if (p[1].revents != 0)
			drain(&sp->err_fd, &sp->err, sp->err_max);
		if (left <= 0 && p[0].revents == 0 && p[1].revents == 0)
			return false;
	}
	return true;
}

void
child_kill(struct child *sp, int grace_ms)
{
	if (sp->pid <= 0)
		return;
	kill(sp->pid, SIGTERM);
	if (!child_wait(sp, grace_ms)) {
		kill(sp->pid, SIGKILL);
		while (waitpid(sp->pid, &sp->status, 0) < 0 && errno == EINTR)
			;
		sp->pid = 0;
	}
}

void
child_free(struct child *sp)
{
	child_kill(sp, 1000);
	if (sp->out_fd >= 0)
		close(sp->out_fd);
	if (sp->err_fd >= 0)
		close(sp->err_fd);
	sp->out_fd = sp->err_fd = -1;
	buf_free(&sp->out);
	buf_free(&sp->err);
}

bool
child_run(struct child *sp, char *const argv[], size_t out_max, size_t err_max,
	  char *detail, size_t dlen)
{
	size_t n;

	if (!child_start(sp, argv, out_max, err_max, detail, dlen))
		return false;
	while (!child_wait(sp, 60000))
		;
	if (WIFEXITED(sp->status) && WEXITSTATUS(sp->status) == 0)
		return true;
	n = strcspn((const char *)sp->err.p != NULL ? (const char *)sp->err.p
						    : "",
		    "\n");
	if (n > 0)
		snprintf(detail, dlen, "%.*s", (int)n, (const char *)sp->err.p);
	else
		snprintf(detail, dlen, "%s failed (status %d)", argv[0],
			 sp->status);
	return false;
}
