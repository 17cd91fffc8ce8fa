/* SPDX-License-Identifier: MIT */
/*
 * cgi.t - a FastCGI program started as a plain CGI (lib/web/cgi.c): the
 * request's streams over standard input and output, its parameters the
 * environment, and what tells the two ways of starting apart.
 */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "web/cgi.h"
#include "tap.h"

/* A body over one buffer (64 KiB) and an answer over three. */
#define BODY_LEN 100000
#define ANSWER_LEN 200000
#define HEAD "Status: 200 OK\r\n\r\n"
#define HEAD_LEN (sizeof(HEAD) - 1)

/* cgi_is_cgi() in a child whose standard input is a listening socket,
 * as a FastCGI program's is: its exit status, 0 when it said FastCGI. */
static int
child_on_socket(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0), st = -1;
	pid_t pid;

	snprintf(a.sun_path, sizeof(a.sun_path), "/tmp/cgi-t-%ld.sock",
		 (long)getpid());
	unlink(a.sun_path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    listen(fd, 1) != 0)
		abort();
	fflush(stdout);
	if ((pid = fork()) == 0) {
		dup2(fd, STDIN_FILENO);
		_exit(cgi_is_cgi() ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	close(fd);
	unlink(a.sun_path);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A temporary file holding len bytes of p, open at its start. */
static int
temp_with(const void *p, size_t len)
{
	char path[] = "/tmp/cgi-t-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0 || write(fd, p, len) != (ssize_t)len ||
	    lseek(fd, 0, SEEK_SET) != 0)
		abort();
	unlink(path);
	return fd;
}

int
main(void)
{
	static char body[BODY_LEN], got[BODY_LEN + 1], answer[ANSWER_LEN];
	static char sent[ANSWER_LEN + 64];
	int in, out, saved_in = dup(STDIN_FILENO), saved_out = dup(1), n = 0;
	FCGX_Request r = {0};
	ssize_t len;
	bool finished;

	is_int(child_on_socket(), 0, "a listening socket: FastCGI");
	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = (char)('a' + i % 26);
	memset(answer, 'x', sizeof(answer));
	in = temp_with(body, sizeof(body));
	out = temp_with("", 0);
	setenv("REQUEST_METHOD", "POST", 1);

	/* The request, its standard input and output the files. */
	fflush(stdout);
	dup2(in, STDIN_FILENO);
	dup2(out, 1);
	if (cgi_is_cgi() && cgi_request(&r)) {
		int k;

		while ((k = FCGX_GetStr(got + n, (int)sizeof(got) - n, r.in)) >
		       0)
			n += k;
		FCGX_FPrintF(r.out, HEAD);
		FCGX_PutStr(answer, (int)sizeof(answer), r.out);
	}
	finished =
		r.out != NULL && FCGX_GetError(r.in) == 0 &&
		strcmp(FCGX_GetParam("REQUEST_METHOD", r.envp), "POST") == 0 &&
		cgi_finish(&r);
	dup2(saved_in, STDIN_FILENO);
	dup2(saved_out, 1);

	is_int(n, BODY_LEN, "the whole body read, then its end");
	ok(memcmp(got, body, sizeof(body)) == 0, "byte for byte");
	ok(finished, "parameters from the environment, the streams ended");
	ok(r.in == NULL && r.out == NULL && r.err == NULL, "and freed");
	len = pread(out, sent, sizeof(sent), 0);
	is_int((int)len, (int)(sizeof(answer) + HEAD_LEN),
	       "the answer written whole, past its buffer");
	ok(len > (ssize_t)HEAD_LEN && memcmp(sent, HEAD, HEAD_LEN) == 0 &&
		   memcmp(sent + HEAD_LEN, answer, sizeof(answer)) == 0,
	   "in order");

	/* The client left: the write fails, cgi_finish says so. */
	{
		int p[2];

		signal(SIGPIPE, SIG_IGN);
		if (pipe(p) != 0)
			abort();
		close(p[0]);
		fflush(stdout);
		dup2(p[1], 1);
		if (cgi_request(&r))
			FCGX_PutStr("gone", 4, r.out);
		finished = cgi_finish(&r);
		dup2(saved_out, 1);
		close(p[1]);
		ok(!finished, "a closed standard output: cgi_finish fails");
	}
	close(in);
	close(out);
	return tap_done();
}
