/* SPDX-License-Identifier: MIT */
/*
 * daemon.c - `xmhub daemon NAME` (see daemon.h).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codec/buf.h"
#include "core/conf.h"
#include "daemon.h"
#include "usage.h"

#define GEN XMHUB_LIBEXECDIR "/xmhub/httpd-conf-gen"
#define AUTHORIZER "ingest-authorizer"
#define TABLE_MAX 65536 /* bytes of gen's list of daemons */
#define ARGV_MAX 64	/* words of a daemon's command */

extern char **environ;

/* The port setting name, or -1 after a message. */
static int
port(const char *name)
{
	long long v;

	if (!conf_get_int(name, &v)) {
		fprintf(stderr, "daemon: %s: not a port\n", name);
		return -1;
	}
	return (int)v;
}

/*
 * The FastCGI authorizer for Apache: a socket listening on
 * 127.0.0.1:XMHUB_AUTHZ_PORT as its standard input, where libfcgi looks
 * for it (as a systemd socket or spawn-fcgi would give it).
 */
static int
authorizer(void)
{
	char *const argv[] = {XMHUB_LIBEXECDIR "/xmhub/cgi-bin/" AUTHORIZER,
			      NULL};
	struct sockaddr_in sa = {.sin_family = AF_INET};
	int fd = -1, one = 1, p;

	if ((p = port("XMHUB_AUTHZ_PORT")) < 0)
		return 1;
	sa.sin_port = htons((uint16_t)p);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 128) < 0 || dup2(fd, STDIN_FILENO) < 0) {
		fprintf(stderr, "daemon: 127.0.0.1:%d: %s\n", p,
			strerror(errno));
		goto out;
	}
	close(fd);
	fd = -1;
	execv(argv[0], argv);
	fprintf(stderr, "daemon: %s: %s\n", argv[0], strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	return 1;
}

/* gen's "NAME<tab>COMMAND" lines with the ports of the settings, into
 * out (NUL-terminated); false after a message. */
static bool
daemon_table(struct buf *out)
{
	static char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", NULL};
	char ws[16], wsd[16];
	char *args[] = {GEN,	   "--dir=" XMHUB_PKGDATADIR "/httpd-conf",
			"daemons", XMHUB_LIBEXECDIR "/xmhub",
			ws,	   wsd,
			NULL};
	posix_spawn_file_actions_t fa;
	int pfd[2] = {-1, -1}, st, w, s;
	char chunk[4096];
	ssize_t n;
	pid_t pid = -1;
	bool ok = false;

	if ((w = port("XMHUB_WS_PORT")) < 0 || (s = port("XMHUB_WSD_PORT")) < 0)
		return false;
	snprintf(ws, sizeof(ws), "%d", w);
	snprintf(wsd, sizeof(wsd), "%d", s);
	if (pipe(pfd) < 0 || posix_spawn_file_actions_init(&fa) != 0) {
		fprintf(stderr, "daemon: %s\n", strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&fa, pfd[0]);
	errno = posix_spawn(&pid, GEN, &fa, NULL, args, envp);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	pfd[1] = -1;
	if (errno != 0) {
		fprintf(stderr, "daemon: %s: %s\n", GEN, strerror(errno));
		pid = -1;
		goto out;
	}
	while ((n = read(pfd[0], chunk, sizeof(chunk))) > 0)
		buf_append(out, chunk, (size_t)n);
	buf_append(out, "", 1);
	ok = n == 0 && !out->failed;
out:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (pid > 0) {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			continue;
		ok = ok && WIFEXITED(st) && WEXITSTATUS(st) == 0;
	}
	if (!ok)
		fprintf(stderr,
			"daemon: the list of daemons could not be read "
			"from %s\n",
			GEN);
	return ok;
}

int
daemon_main(int argc, char *argv[])
{
	char detail[512], *argw[ARGV_MAX + 1], *line, *cmd = NULL;
	size_t name_len;
	struct buf table;
	int n = 0, rc = 1;

	if (argc != 1 || argv[0][0] == '-')
		return usage_error("expected one daemon's name (NAME: a daemon "
				   "of httpd-conf/programs, or "
				   "ingest-authorizer)");
	if (!conf_init(detail, sizeof(detail))) {
		fprintf(stderr, "daemon: %s\n", detail);
		return 1;
	}
	if (strcmp(argv[0], AUTHORIZER) == 0)
		return authorizer();
	buf_init(&table, TABLE_MAX);
	if (!daemon_table(&table))
		goto out;
	name_len = strlen(argv[0]);
	for (line = (char *)table.p; line != NULL && cmd == NULL;) {
		char *next = strchr(line, '\n');

		if (next != NULL)
			*next++ = '\0';
		if (strncmp(line, argv[0], name_len) == 0 &&
		    line[name_len] == '\t')
			cmd = line + name_len + 1;
		line = next;
	}
	if (cmd == NULL) {
		rc = usage_error("%s: no such daemon in httpd-conf/programs",
				 argv[0]);
		goto out;
	}
	/* The table's commands are words separated by blanks, no quoting. */
	for (char *w = strtok(cmd, " \t"); w != NULL; w = strtok(NULL, " \t"))
		if (n < ARGV_MAX)
			argw[n++] = w;
		else {
			fprintf(stderr, "daemon: %s: over %d words\n", argv[0],
				ARGV_MAX);
			goto out;
		}
	argw[n] = NULL;
	if (n == 0)
		goto out;
	execvp(argw[0], argw);
	fprintf(stderr, "daemon: %s: %s\n", argw[0], strerror(errno));
out:
	buf_free(&table);
	return rc;
}
