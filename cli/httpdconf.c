/* SPDX-License-Identifier: MIT */
/*
 * httpdconf.c - `xmhub httpd-conf`: the web server configuration is
 * written by httpd-conf/gen (Perl, the one reader of the programs table),
 * installed under $(libexecdir)/xmhub; this only spawns it with the
 * directories this build installs into (Makefile.am defines them) and
 * the ports and HSTS of the settings (doc/deploy.md "Ports"), which the
 * caller's options override.
 */
#include "config.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "core/conf.h"
#include "httpdconf.h"
#include "usage.h"

#define GEN XMHUB_LIBEXECDIR "/xmhub/httpd-conf-gen"

/* The generator's own arguments before the caller's: the directories,
 * then what the settings give (SETTINGS of them). */
#define DIRS 8
#define SETTINGS 6
#define FIXED (DIRS + SETTINGS)
#define ARG_MAX 320 /* bytes of one such option */

int
httpdconf_cli(int argc, char *argv[])
{
	/* gen needs nothing of ours but a PATH to find perl. */
	static char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", NULL};
	static const char *const set[SETTINGS][2] = {
		{"port", "XMHUB_PORT"},
		{"face-port", "FACE_API_PORT"},
		{"ws-port", "XMHUB_WS_PORT"},
		{"authz-port", "XMHUB_AUTHZ_PORT"},
		{"hsts", "XMHUB_HSTS"},
		{"proxies", "XMHUB_TRUSTED_PROXIES"},
	};
	char opts[SETTINGS][ARG_MAX], detail[512];
	char *args[FIXED + 64] = {
		GEN,
		"--dir=" XMHUB_PKGDATADIR "/httpd-conf",
		"site",
		NULL, /* the server, from argv[0] */
		"--libexecdir=" XMHUB_LIBEXECDIR,
		"--bindir=" XMHUB_BINDIR,
		"--pkgdatadir=" XMHUB_PKGDATADIR,
		"--sysconfdir=" XMHUB_SYSCONFDIR,
	};
	pid_t pid;
	int st, rc = 1, k = DIRS;

	if (argc < 1 || argv[0][0] == '-')
		return usage_error(
			"lighttpd, apache or htaccess is required first");
	if (argc > 64)
		return usage_error("more than 64 arguments");
	if (!conf_init(detail, sizeof(detail))) {
		fprintf(stderr, "httpd-conf: %s\n", detail);
		return 1;
	}
	args[3] = argv[0];
	/* The settings' values first, so that the caller's options win. */
	for (int i = 0; i < SETTINGS; i++) {
		const char *v = conf_get(set[i][1]);

		if (v == NULL)
			continue;
		snprintf(opts[i], ARG_MAX, "--%s=%s", set[i][0], v);
		args[k++] = opts[i];
	}
	for (int i = 1; i < argc; i++)
		args[k++] = argv[i];
	args[k] = NULL;
	if ((errno = posix_spawn(&pid, GEN, NULL, NULL, args, envp)) != 0) {
		fprintf(stderr, "httpd-conf: %s: %s\n", GEN, strerror(errno));
		goto out;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "httpd-conf: waitpid: %s\n",
				strerror(errno));
			goto out;
		}
	/* gen says what was wrong with the options and exits 2 (a usage
	 * error: our usage follows), or dies (status 255) on anything else,
	 * after a message. */
	if (WIFEXITED(st))
		rc = WEXITSTATUS(st) <= 2 ? WEXITSTATUS(st) : 1;
out:
	return rc;
}
